"""NodePorts: a ``hostPort`` can be taken once per node (per IP and protocol).

Kubernetes semantics: two host ports conflict when protocol and port are equal and the
host IPs are equal or either is ``0.0.0.0`` (unset).
"""

from __future__ import annotations

from minik8s.scheduler.framework import ClusterEvent, CycleState, FilterPlugin, Status
from minik8s.scheduler.nodeinfo import NodeInfo, PodInfo

REASON = "node(s) didn't have free ports for the requested pod ports"


class NodePorts(FilterPlugin):
    """Filter: none of the pod's host ports may be in use on the node."""

    name = "NodePorts"
    events = frozenset({ClusterEvent.NODE_ADD, ClusterEvent.ASSIGNED_POD_DELETE})

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        if pod.host_ports and node.port_conflicts(pod.host_ports):
            return Status.unschedulable(REASON)
        return Status.success()
