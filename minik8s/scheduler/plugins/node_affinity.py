"""NodeAffinity: ``spec.nodeSelector`` and node affinity.

* Filter: every ``nodeSelector`` pair must equal the node's label, and one of the
  ``requiredDuringSchedulingIgnoredDuringExecution`` terms must match (operators In,
  NotIn, Exists, DoesNotExist, Gt, Lt on labels; ``matchFields`` on ``metadata.name``).
  Reason: "node(s) didn't match Pod's node affinity/selector".
* Score: the sum of the weights of the ``preferredDuringSchedulingIgnoredDuringExecution``
  terms the node matches, scaled so the best node gets 100.
"""

from __future__ import annotations

from minik8s.scheduler.framework import (
    ClusterEvent,
    CycleState,
    FilterPlugin,
    ScorePlugin,
    Status,
    default_normalize,
)
from minik8s.scheduler.nodeinfo import NodeInfo, PodInfo
from minik8s.scheduler.plugins.helpers import required_node_affinity_matches, term_matches

REASON = "node(s) didn't match Pod's node affinity/selector"


class NodeAffinity(FilterPlugin, ScorePlugin):
    """Filter on nodeSelector + required node affinity; Score on preferred terms."""

    name = "NodeAffinity"
    events = frozenset({ClusterEvent.NODE_ADD, ClusterEvent.NODE_UPDATE})

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        if required_node_affinity_matches(pod, node):
            return Status.success()
        return Status.unschedulable(REASON, unresolvable=True)

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        affinity = ((pod.pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}
        total = 0
        for pref in affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or []:
            weight = int(pref.get("weight") or 0)
            if weight and term_matches(pref.get("preference") or {}, node):
                total += weight
        return total

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: dict[str, int]) -> None:
        default_normalize(scores)
