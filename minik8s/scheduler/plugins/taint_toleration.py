"""TaintToleration: taints repel pods that do not tolerate them.

* Filter: every ``NoSchedule`` and ``NoExecute`` taint of the node must be tolerated;
  otherwise "node(s) had untolerated taint {key: value}" (the first such taint).
* Score: fewer untolerated ``PreferNoSchedule`` taints is better (the node with the most
  gets 0, nodes with none 100).
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
from minik8s.scheduler.plugins.helpers import PREFER_NO_SCHEDULE, taint_reason, tolerates, untolerated_taint


class TaintToleration(FilterPlugin, ScorePlugin):
    """Filter on NoSchedule/NoExecute taints; Score on PreferNoSchedule taints."""

    name = "TaintToleration"
    events = frozenset({ClusterEvent.NODE_ADD, ClusterEvent.NODE_UPDATE})

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        taint = untolerated_taint(node.taints, pod.tolerations)
        if taint is None:
            return Status.success()
        return Status.unschedulable(taint_reason(taint), unresolvable=True)

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        tolerations = [t for t in pod.tolerations if (t.get("effect") or PREFER_NO_SCHEDULE) == PREFER_NO_SCHEDULE]
        return sum(1 for taint in node.taints
                   if taint.get("effect") == PREFER_NO_SCHEDULE and not tolerates(tolerations, taint))

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: dict[str, int]) -> None:
        default_normalize(scores, reverse=True)
