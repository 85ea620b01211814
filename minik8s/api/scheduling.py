"""``scheduling.k8s.io/v1`` PriorityClass: a name for a pod priority, and the values Kubernetes reserves.

Kubernetes' field names and meanings (``k8s.io/api/scheduling/v1``)::

    apiVersion: scheduling.k8s.io/v1
    kind: PriorityClass
    metadata: {name: high}          # cluster-scoped
    value: 1000000                  # the pods' spec.priority; at most 1e9 for user classes
    globalDefault: false            # the priority of pods that name no class (one class at most)
    description: for the important ones
    preemptionPolicy: PreemptLowerPriority   # or Never: wait for room, never evict others

The Priority admission plugin (:mod:`minik8s.apiserver.priority`) resolves a pod's
``priorityClassName`` into ``spec.priority`` and ``spec.preemptionPolicy``; the scheduler orders
its queue by priority and preempts lower-priority pods (:mod:`minik8s.scheduler.preemption`).
"""

from __future__ import annotations

from minik8s.api.meta import TypedObject

#: ``scheduling.HighestUserDefinablePriority``: values above it are the system classes'.
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
#: ``scheduling.SystemCriticalPriority``
SYSTEM_CRITICAL_PRIORITY = 2 * HIGHEST_USER_DEFINABLE_PRIORITY
#: ``scheduling.SystemPriorityClassPrefix``: names reserved for the system classes.
SYSTEM_PRIORITY_CLASS_PREFIX = "system-"
SYSTEM_CLUSTER_CRITICAL = "system-cluster-critical"
SYSTEM_NODE_CRITICAL = "system-node-critical"
#: ``scheduling.DefaultPriorityWhenNoDefaultClassExists``
DEFAULT_PRIORITY = 0

#: ``PreemptionPolicy`` values (``k8s.io/api/core/v1``).
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
PREEMPT_NEVER = "Never"
PREEMPTION_POLICIES = (PREEMPT_LOWER_PRIORITY, PREEMPT_NEVER)

#: The classes kube-apiserver creates at start-up (``schedulingapiv1.SystemPriorityClasses()``).
SYSTEM_PRIORITY_CLASSES: tuple[dict[str, object], ...] = (
    {"metadata": {"name": SYSTEM_NODE_CRITICAL}, "value": SYSTEM_CRITICAL_PRIORITY + 1000,
     "description": "Used for system critical pods that must not be moved from their current node."},
    {"metadata": {"name": SYSTEM_CLUSTER_CRITICAL}, "value": SYSTEM_CRITICAL_PRIORITY,
     "description": "Used for system critical pods that must run in the cluster, but can be moved to "
                    "another node if necessary."},
)


def known_system_class_error(name: str, value: object, global_default: bool) -> str:
    """Why ``name`` is not one of :data:`SYSTEM_PRIORITY_CLASSES` with its value and globalDefault
    (``IsKnownSystemPriorityClass``'s error); ``""`` when it is."""
    for spc in SYSTEM_PRIORITY_CLASSES:
        if spc["metadata"]["name"] == name:  # type: ignore[index]
            if spc["value"] != value:
                return f"value of {name} PriorityClass must be {spc['value']}"
            if global_default:
                return f"globalDefault of {name} PriorityClass must be false"
            return ""
    return f"{name} is not a known system priority class"


class PriorityClass(TypedObject):
    """``scheduling.k8s.io/v1`` PriorityClass (cluster-scoped, no spec): ``value`` is required;
    ``preemptionPolicy`` defaults to ``PreemptLowerPriority``."""

    value: int
    global_default: bool | None = None
    description: str | None = None
    preemption_policy: str | None = None
