"""NodeName: a pod that names its node (``spec.nodeName``) fits only that node.

The scheduler never schedules such pods (they are bound already; Kubernetes skips them
too), so this only matters when the framework is used to evaluate a bound pod.
"""

from __future__ import annotations

from minik8s.scheduler.framework import ClusterEvent, CycleState, FilterPlugin, Status
from minik8s.scheduler.nodeinfo import NodeInfo, PodInfo

REASON = "node(s) didn't match the requested node name"


class NodeName(FilterPlugin):
    """Filter: ``spec.nodeName``, when set, must be this node."""

    name = "NodeName"
    events = frozenset({ClusterEvent.NODE_ADD})

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        if pod.node_name and pod.node_name != node.name:
            return Status.unschedulable(REASON, unresolvable=True)
        return Status.success()
