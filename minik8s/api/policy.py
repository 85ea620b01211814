"""``policy/v1`` PodDisruptionBudget and Eviction: how many of a group of pods voluntary disruptions
(an eviction, ``kubectl drain``) may take down at once.

Kubernetes' field names and meanings (``k8s.io/api/policy/v1``)::

    apiVersion: policy/v1
    kind: PodDisruptionBudget
    metadata: {name: web}
    spec:
      selector: {matchLabels: {app: web}}   # the pods it covers ({}: every pod of the namespace)
      minAvailable: 2                       # or maxUnavailable; an int or a percentage ("50%")
      unhealthyPodEvictionPolicy: IfHealthyBudget   # or AlwaysAllow
    status:                                 # the disruption controller's
      observedGeneration: 1
      expectedPods: 3                       # the pods' controllers' scale (or the matching pods)
      desiredHealthy: 2
      currentHealthy: 3                     # Ready pods, not being deleted
      disruptionsAllowed: 1                 # currentHealthy - desiredHealthy, never below 0
      disruptedPods: {web-x: "2024-01-01T00:00:00Z"}   # evicted, deletion not yet seen
      conditions: [{type: DisruptionAllowed, status: "True", reason: SufficientPods, ...}]

An Eviction (``POST pods/{name}/eviction``, :mod:`minik8s.apiserver.eviction`) deletes a pod
when its budget allows it.  The rules both the apiserver and the controller apply live here.
"""

from __future__ import annotations

import copy
import math
from typing import Any

from minik8s.api.base import Obj
from minik8s.api.meta import Condition, LabelSelector, TypedObject
from minik8s.api.model import Model
from minik8s.api.selectors import LabelSelector as Selector

IntOrString = int | str

#: ``spec.unhealthyPodEvictionPolicy`` values (``policyv1.UnhealthyPodEvictionPolicyType``).
IF_HEALTHY_BUDGET = "IfHealthyBudget"
ALWAYS_ALLOW = "AlwaysAllow"
UNHEALTHY_POD_EVICTION_POLICIES = (ALWAYS_ALLOW, IF_HEALTHY_BUDGET)
#: The status condition and its reasons (``policyv1.DisruptionAllowedCondition`` ...).
DISRUPTION_ALLOWED = "DisruptionAllowed"
SUFFICIENT_PODS = "SufficientPods"
INSUFFICIENT_PODS = "InsufficientPods"
SYNC_FAILED = "SyncFailed"
#: How long an evicted pod stays in ``disruptedPods`` waiting for its deletion (``DeletionTimeout``, s).
DELETION_TIMEOUT = 120.0
#: ``MaxDisruptedPodSize``: more unconfirmed evictions than this and the apiserver refuses more.
MAX_DISRUPTED_POD_SIZE = 2000


class PodDisruptionBudgetSpec(Model):
    min_available: IntOrString | None = None
    selector: LabelSelector | None = None
    max_unavailable: IntOrString | None = None
    unhealthy_pod_eviction_policy: str | None = None


class PodDisruptionBudgetStatus(Model):
    observed_generation: int | None = None
    disrupted_pods: dict[str, str] | None = None
    disruptions_allowed: int = 0
    current_healthy: int = 0
    desired_healthy: int = 0
    expected_pods: int = 0
    conditions: list[Condition] | None = None


class PodDisruptionBudget(TypedObject):
    spec: PodDisruptionBudgetSpec | None = None
    status: PodDisruptionBudgetStatus | None = None


class DeleteOptions(Model):
    """``metav1.DeleteOptions`` as an Eviction carries it."""

    grace_period_seconds: int | None = None
    preconditions: dict[str, Any] | None = None
    orphan_dependents: bool | None = None
    propagation_policy: str | None = None
    dry_run: list[str] | None = None


class Eviction(TypedObject):
    """``policy/v1`` Eviction: the body of ``POST pods/{name}/eviction`` (never stored)."""

    delete_options: DeleteOptions | None = None


# ---------------------------------------------------------------- rules shared by the apiserver and controller
#: The pod condition a disruption adds before deleting a pod (``v1.DisruptionTarget``), and the
#: reasons and messages of the eviction subresource and of the taint manager.
DISRUPTION_TARGET = "DisruptionTarget"
EVICTION_BY_EVICTION_API = ("EvictionByEvictionAPI", "Eviction API: evicting")
DELETION_BY_TAINT_MANAGER = ("DeletionByTaintManager", "Taint manager: deleting due to NoExecute taint")


def with_disruption_target(pod: Obj, reason: str, message: str, now: str) -> Obj:
    """A copy of ``pod`` whose ``DisruptionTarget`` condition is True with ``reason`` and ``message``
    (``UpdatePodCondition``: the transition time moves only when the status changes)."""
    new = copy.deepcopy(pod)
    conditions = new.setdefault("status", {}).setdefault("conditions", [])
    for c in conditions:
        if c.get("type") == DISRUPTION_TARGET:
            if c.get("status") != "True":
                c["lastTransitionTime"] = now
            c.update(status="True", reason=reason, message=message)
            return new
    conditions.append({"type": DISRUPTION_TARGET, "status": "True", "lastProbeTime": None,
                       "lastTransitionTime": now, "reason": reason, "message": message})
    return new


def pod_is_ready(pod: Obj) -> bool:
    """The pod's ``Ready`` condition is ``True`` (``podutil.IsPodReady``)."""
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def selects(pdb: Obj, pod: Obj) -> bool:
    """Whether the budget covers ``pod``: same namespace and its selector matches the pod's labels.
    A missing selector matches nothing, ``{}`` every pod (policy/v1); an invalid one nothing."""
    pmeta, meta = pod.get("metadata") or {}, pdb.get("metadata") or {}
    if pmeta.get("namespace") != meta.get("namespace"):
        return False
    try:
        selector = Selector.from_dict((pdb.get("spec") or {}).get("selector"))
    except ValueError:
        return False
    return selector.matches(pmeta.get("labels") or {})


def scaled_value(value: IntOrString, total: int, round_up: bool) -> int:
    """An int, or a percentage of ``total`` rounded up or down (``intstr.GetScaledValueFromIntOrPercent``).

    Raises ValueError for a string that is not ``<digits>%``."""
    if isinstance(value, int):
        return value
    if not (isinstance(value, str) and value.endswith("%") and value[:-1].isdigit()):
        raise ValueError(f'invalid value for IntOrString: invalid value "{value}": '
                         "must be an integer or a percentage")
    share = int(value[:-1]) * total / 100
    return math.ceil(share) if round_up else math.floor(share)


def disruption_condition(status: Obj, generation: int | None, now: str) -> None:
    """Set ``status.conditions``' DisruptionAllowed from ``disruptionsAllowed``
    (``pdbhelper.UpdateDisruptionAllowedCondition``, with ``meta.SetStatusCondition``'s rules:
    ``lastTransitionTime`` moves only when the status changes)."""
    allowed = (status.get("disruptionsAllowed") or 0) > 0
    set_condition(status, "True" if allowed else "False", SUFFICIENT_PODS if allowed else INSUFFICIENT_PODS,
                  "", generation, now)


def set_condition(status: Obj, value: str, reason: str, message: str, generation: int | None, now: str) -> None:
    """``meta.SetStatusCondition`` of the DisruptionAllowed condition in ``status``."""
    conditions = status.setdefault("conditions", [])
    for cond in conditions:
        if cond.get("type") == DISRUPTION_ALLOWED:
            if cond.get("status") != value:
                cond["lastTransitionTime"] = now
            cond.update(status=value, reason=reason, message=message)
            if generation is not None:
                cond["observedGeneration"] = generation
            return
    cond = {"type": DISRUPTION_ALLOWED, "status": value}
    if generation is not None:
        cond["observedGeneration"] = generation
    cond.update(lastTransitionTime=now, reason=reason, message=message)
    conditions.append(cond)


def conditions_up_to_date(pdb: Obj) -> bool:
    """``pdbhelper.ConditionsAreUpToDate``: the condition agrees with ``disruptionsAllowed`` for this generation."""
    status = pdb.get("status") or {}
    cond = next((c for c in status.get("conditions") or [] if c.get("type") == DISRUPTION_ALLOWED), None)
    if cond is None or status.get("observedGeneration") != (pdb.get("metadata") or {}).get("generation"):
        return False
    if (status.get("disruptionsAllowed") or 0) > 0:
        return cond.get("status") == "True" and cond.get("reason") == SUFFICIENT_PODS
    return cond.get("status") == "False" and cond.get("reason") == INSUFFICIENT_PODS
