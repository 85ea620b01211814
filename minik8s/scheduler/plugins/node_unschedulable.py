"""NodeUnschedulable: keep pods off cordoned nodes (``spec.unschedulable: true``).

Kubernetes: a pod that tolerates ``node.kubernetes.io/unschedulable:NoSchedule`` (DaemonSet
pods do) may still go there.
"""

from __future__ import annotations

from minik8s.scheduler.framework import ClusterEvent, CycleState, FilterPlugin, Status
from minik8s.scheduler.nodeinfo import NodeInfo, PodInfo
from minik8s.scheduler.plugins.helpers import NO_SCHEDULE, TAINT_UNSCHEDULABLE, tolerates

REASON = "node(s) were unschedulable"
_TAINT = {"key": TAINT_UNSCHEDULABLE, "effect": NO_SCHEDULE}


class NodeUnschedulable(FilterPlugin):
    """Filter: rejects ``spec.unschedulable`` nodes ("node(s) were unschedulable")."""

    name = "NodeUnschedulable"
    events = frozenset({ClusterEvent.NODE_ADD, ClusterEvent.NODE_UPDATE})

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        if node.unschedulable and not tolerates(pod.tolerations, _TAINT):
            return Status.unschedulable(REASON, unresolvable=True)
        return Status.success()
