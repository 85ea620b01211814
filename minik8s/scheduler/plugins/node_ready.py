"""NodeReady: keep pods off nodes whose ``Ready`` condition is not ``True``.

Kubernetes does this with taints the node lifecycle controller (and the kubelet at
registration) put on such nodes: ``node.kubernetes.io/not-ready:NoSchedule`` while Ready is
False (or not reported yet) and ``node.kubernetes.io/unreachable:NoSchedule`` while it is
Unknown (the node stopped reporting). This plugin reads the condition directly, so the
rule holds even before a controller has tainted the node, and a pod that tolerates the
matching taint may still go there. The rejection reason is the one the taint would
produce: ``node(s) had untolerated taint {node.kubernetes.io/not-ready: }``.
"""

from __future__ import annotations

from minik8s.scheduler.framework import ClusterEvent, CycleState, FilterPlugin, Status
from minik8s.scheduler.nodeinfo import NodeInfo, PodInfo
from minik8s.scheduler.plugins.helpers import (
    NO_SCHEDULE,
    TAINT_NOT_READY,
    TAINT_UNREACHABLE,
    taint_reason,
    tolerates,
)


class NodeReady(FilterPlugin):
    """Filter: the node's Ready condition must be True, unless the pod tolerates the
    not-ready (False / missing) or unreachable (Unknown) ``NoSchedule`` taint."""

    name = "NodeReady"
    events = frozenset({ClusterEvent.NODE_ADD, ClusterEvent.NODE_UPDATE})

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        ready = node.ready
        if ready == "True":
            return Status.success()
        key = TAINT_UNREACHABLE if ready == "Unknown" else TAINT_NOT_READY
        taint = {"key": key, "effect": NO_SCHEDULE}
        if tolerates(pod.tolerations, taint):
            return Status.success()
        return Status.unschedulable(taint_reason(taint), unresolvable=True)
