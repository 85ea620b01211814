"""NodeResourcesBalancedAllocation: prefer nodes whose cpu and memory use stay even.

Kubernetes semantics: the fractions ``requested / allocatable`` of cpu and memory after
placing the pod (capped at 1; resources the node has none of are left out) should be
close; the score is ``(1 - standard deviation of the fractions) * 100``.
"""

from __future__ import annotations

import math

from minik8s.scheduler.framework import MAX_NODE_SCORE, ClusterEvent, CycleState, ScorePlugin
from minik8s.scheduler.nodeinfo import CPU, MEMORY, NodeInfo, PodInfo

RESOURCES = (CPU, MEMORY)


def balance_score(fractions: list[float]) -> int:
    """``(1 - stddev(fractions)) * 100`` truncated; 100 for fewer than two fractions."""
    if len(fractions) < 2:
        return MAX_NODE_SCORE
    mean = sum(fractions) / len(fractions)
    std = math.sqrt(sum((f - mean) ** 2 for f in fractions) / len(fractions))
    return int((1 - std) * MAX_NODE_SCORE)


class NodeResourcesBalancedAllocation(ScorePlugin):
    """Score: even use of cpu and memory (see the module docstring)."""

    name = "NodeResourcesBalancedAllocation"
    events = frozenset({ClusterEvent.NODE_ADD, ClusterEvent.NODE_UPDATE, ClusterEvent.ASSIGNED_POD_DELETE})

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        fractions: list[float] = []
        for resource in RESOURCES:
            allocatable = node.allocatable.get(resource)
            if allocatable <= 0:
                continue
            requested = node.requested.get(resource) + pod.requests.get(resource)
            fractions.append(min(requested / allocatable, 1.0))
        return balance_score(fractions)
