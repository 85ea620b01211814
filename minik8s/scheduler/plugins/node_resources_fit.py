"""NodeResourcesFit: the pod's requests must fit in what the node has left.

Kubernetes semantics (``fitsRequest``): the node's ``status.allocatable`` minus the requests
of the pods already on it (assumed pods included) must cover each resource the pod
requests (cpu in millicores, memory and ephemeral-storage in bytes, extended resources in
units); resources the pod does not request are not checked. The pod's request is the sum
of its containers' requests, raised to any init container's (init containers count as
``max``). The node's ``pods`` allocatable caps the number of pods. Reasons:
"Too many pods", "Insufficient cpu", "Insufficient memory", "Insufficient <resource>".
"""

from __future__ import annotations

from minik8s.scheduler.framework import ClusterEvent, CycleState, FilterPlugin, Status
from minik8s.scheduler.nodeinfo import NodeInfo, PodInfo

TOO_MANY_PODS = "Too many pods"


def insufficient(pod: PodInfo, node: NodeInfo) -> list[str]:
    """The reasons ``pod`` does not fit on ``node`` (empty list: it fits)."""
    reasons: list[str] = []
    if node.allowed_pods is not None and len(node.pods) + 1 > node.allowed_pods:
        reasons.append(TOO_MANY_PODS)
    for name, amount in pod.requests.items():
        if amount > node.allocatable.get(name) - node.requested.get(name):
            reasons.append(f"Insufficient {name}")
    return reasons


class NodeResourcesFit(FilterPlugin):
    """Filter: requests vs allocatable minus requested (see the module docstring)."""

    name = "NodeResourcesFit"
    events = frozenset({ClusterEvent.NODE_ADD, ClusterEvent.NODE_UPDATE, ClusterEvent.ASSIGNED_POD_DELETE,
                        ClusterEvent.ASSIGNED_POD_UPDATE})

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        if node.alloc_errors:
            return Status.error(f"node {node.name}: {'; '.join(node.alloc_errors)}")
        reasons = insufficient(pod, node)
        return Status.unschedulable(*reasons) if reasons else Status.success()
