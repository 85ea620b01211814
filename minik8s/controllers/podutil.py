"""Pure pod helpers the workload controllers share: active, ready, available, deletion order.

Kubernetes behaviour followed: ``controller.IsPodActive``, ``podutil.IsPodReady`` /
``IsPodAvailable`` and ``controller.ActivePodsWithRanks`` (the order in which a ReplicaSet
picks pods to delete when it scales down).  Pods are wire-form dicts; times are RFC 3339
strings as the API serves them.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from minik8s.api.base import Obj, parse_time

#: ``controller.kubernetes.io/pod-deletion-cost``: lower cost is deleted first (int32, default 0).
DELETION_COST_ANNOTATION = "controller.kubernetes.io/pod-deletion-cost"

_PHASE_ORDINAL = {"Pending": 0, "Unknown": 1, "Running": 2}
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def pod_phase(pod: Obj) -> str | None:
    """``status.phase`` (None when unset): the per-pod read of loops over many pods, where a
    typed view per pod would cost more than it reads."""
    return (pod.get("status") or {}).get("phase")


def is_pod_active(pod: Obj) -> bool:
    """Counts toward a ReplicaSet's replicas: not Succeeded/Failed and not terminating."""
    return pod_phase(pod) not in ("Succeeded", "Failed") and not (pod.get("metadata") or {}).get("deletionTimestamp")


def is_pod_terminal(pod: Obj) -> bool:
    """Phase Succeeded or Failed: its containers will not run again."""
    return pod_phase(pod) in ("Succeeded", "Failed")


def ready_condition(pod: Obj) -> Obj | None:
    """The pod's ``Ready`` condition dict, or None."""
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            return dict(cond)
    return None


def is_pod_ready(pod: Obj) -> bool:
    """The ``Ready`` condition is ``True``."""
    cond = ready_condition(pod)
    return cond is not None and cond.get("status") == "True"


def ready_since(pod: Obj) -> dt.datetime | None:
    """When the pod last became Ready (the Ready condition's lastTransitionTime), or None."""
    cond = ready_condition(pod)
    if cond is None or cond.get("status") != "True":
        return None
    return parse_time(cond.get("lastTransitionTime"))


def is_pod_available(pod: Obj, min_ready_seconds: int, now: dt.datetime | None = None) -> bool:
    """Ready, and (with ``min_ready_seconds`` > 0) Ready for longer than that many seconds.

    Kubernetes' ``IsPodAvailable``: a Ready condition without lastTransitionTime is not
    available while minReadySeconds > 0.
    """
    if not is_pod_ready(pod):
        return False
    if min_ready_seconds <= 0:
        return True
    since = ready_since(pod)
    if since is None:
        return False
    now = now or dt.datetime.now(dt.UTC)
    return since + dt.timedelta(seconds=min_ready_seconds) < now


def seconds_until_available(pod: Obj, min_ready_seconds: int, now: dt.datetime | None = None) -> float | None:
    """Seconds until a Ready pod becomes available (0 if it is), None if it is not Ready."""
    if not is_pod_ready(pod):
        return None
    since = ready_since(pod)
    if min_ready_seconds <= 0:
        return 0.0
    if since is None:
        return None
    now = now or dt.datetime.now(dt.UTC)
    return max(0.0, (since + dt.timedelta(seconds=min_ready_seconds) - now).total_seconds())


def max_container_restarts(pod: Obj) -> int:
    """The highest ``restartCount`` of the pod's containers (init containers included)."""
    status = pod.get("status") or {}
    counts = [int(cs.get("restartCount") or 0)
              for cs in (status.get("containerStatuses") or []) + (status.get("initContainerStatuses") or [])]
    return max(counts, default=0)


def deletion_cost(pod: Obj) -> int:
    """The pod-deletion-cost annotation as an int (0 when absent or not an int32)."""
    raw = ((pod.get("metadata") or {}).get("annotations") or {}).get(DELETION_COST_ANNOTATION)
    try:
        value = int(str(raw))
    except (TypeError, ValueError):
        return 0
    return value if -(2 ** 31) <= value < 2 ** 31 else 0


def _time_key(value: dt.datetime | None) -> tuple[int, float]:
    """Sort key for "empty time < later time < earlier time" (Kubernetes' ``afterOrZero``)."""
    if value is None:
        return (0, 0.0)
    return (1, -(value - _EPOCH).total_seconds())


def deletion_order_key(pod: Obj, rank: int = 0) -> tuple[Any, ...]:
    """Sort key: pods that sort first are deleted first when a ReplicaSet scales down.

    Kubernetes' ``ActivePodsWithRanks.Less``, with linear (not logarithmic) time buckets:

    1. unassigned (no ``spec.nodeName``) before assigned;
    2. phase Pending before Unknown before Running;
    3. not Ready before Ready;
    4. lower ``controller.kubernetes.io/pod-deletion-cost`` first;
    5. higher ``rank`` first (rank = related active pods on the same node: doubled-up pods go first);
    6. of two Ready pods, the one Ready for the shorter time first;
    7. more container restarts first;
    8. newer (later creationTimestamp) first.
    """
    spec, meta = pod.get("spec") or {}, pod.get("metadata") or {}
    phase = (pod.get("status") or {}).get("phase") or ""
    ready = is_pod_ready(pod)
    return (
        1 if spec.get("nodeName") else 0,
        _PHASE_ORDINAL.get(phase, 0),
        1 if ready else 0,
        deletion_cost(pod),
        -rank,
        _time_key(ready_since(pod)) if ready else (0, 0.0),
        -max_container_restarts(pod),
        _time_key(parse_time(meta.get("creationTimestamp"))),
    )


def pods_to_delete(pods: list[Obj], related: list[Obj], count: int) -> list[Obj]:
    """The ``count`` pods a ReplicaSet deletes first (``getPodsToDelete``).

    ``related`` are the active pods of every ReplicaSet with the same controlling owner
    (a Deployment's old and new ReplicaSets), used to rank pods by how many related pods
    share their node.
    """
    if count <= 0:
        return []
    if count >= len(pods):
        return list(pods)
    per_node: dict[str, int] = {}
    for pod in related:
        if is_pod_active(pod):
            node = (pod.get("spec") or {}).get("nodeName") or ""
            per_node[node] = per_node.get(node, 0) + 1
    ranked = sorted(pods, key=lambda p: deletion_order_key(p, per_node.get((p.get("spec") or {}).get("nodeName") or "",
                                                                             0)))
    return ranked[:count]
