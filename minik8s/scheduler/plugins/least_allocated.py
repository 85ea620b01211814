"""NodeResourcesLeastAllocated: prefer nodes with more cpu and memory left.

Kubernetes' ``LeastAllocated`` scoring strategy: for cpu and memory (weight 1 each),
``(allocatable - requested) * 100 / allocatable`` where ``requested`` counts the pods on
the node and the incoming pod with their *non-zero* requests (a container without a
request counts as 100m cpu / 200Mi memory, so best-effort pods spread too); 0 when the
node has none of the resource or is over-committed. The result is the weighted mean.
"""

from __future__ import annotations

from minik8s.scheduler.framework import MAX_NODE_SCORE, ClusterEvent, CycleState, ScorePlugin
from minik8s.scheduler.nodeinfo import CPU, MEMORY, NodeInfo, PodInfo

#: resource -> weight in the mean
RESOURCES = {CPU: 1, MEMORY: 1}


def least_requested(requested: int, allocatable: int) -> int:
    """``(allocatable - requested) * 100 // allocatable``; 0 if nothing is allocatable or it
    is over-committed."""
    if allocatable <= 0 or requested > allocatable:
        return 0
    return (allocatable - requested) * MAX_NODE_SCORE // allocatable


class NodeResourcesLeastAllocated(ScorePlugin):
    """Score: the share of cpu and memory still free after placing the pod."""

    name = "NodeResourcesLeastAllocated"
    events = frozenset({ClusterEvent.NODE_ADD, ClusterEvent.NODE_UPDATE, ClusterEvent.ASSIGNED_POD_DELETE})

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        total = weights = 0
        for resource, weight in RESOURCES.items():
            requested = node.non_zero_requested.get(resource) + pod.non_zero_requests.get(resource)
            total += least_requested(requested, node.allocatable.get(resource)) * weight
            weights += weight
        return total // weights if weights else 0
