"""SelectorSpread: spread the pods of one owner across nodes and zones.

Kubernetes' (legacy, default-on until 1.22) ``SelectorSpread`` plugin counts, on each
node, the pods selected by the Services / ReplicaSets / StatefulSets that select the
incoming pod. minik8s reads the same grouping straight off the pods: the *peers* of a pod
are the non-terminating pods of its namespace with the same controller (the
``ownerReferences`` entry with ``controller: true``, by uid) or, for a pod without a
controller, with exactly the same labels. This is what makes a ReplicaSet's pods land on
different nodes.

Score: fewer peers on the node is better, ``100 * (max - count) / max``; when nodes carry
``topology.kubernetes.io/zone`` (or the legacy ``failure-domain.beta.kubernetes.io/zone``)
labels the zone's peer count weighs 2/3 and the node's 1/3, as in Kubernetes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from minik8s.scheduler.framework import (
    MAX_NODE_SCORE,
    ClusterEvent,
    CycleState,
    PreScorePlugin,
    ScorePlugin,
    Status,
)
from minik8s.scheduler.nodeinfo import NodeInfo, PodInfo

ZONE_WEIGHTING = 2.0 / 3.0


def is_peer(pod: PodInfo, other: PodInfo) -> bool:
    """Whether ``other`` belongs to the same group as ``pod`` (see the module docstring)."""
    if other.terminating or other.namespace != pod.namespace or other.key == pod.key:
        return False
    if pod.controller_uid:
        return other.controller_uid == pod.controller_uid
    return bool(pod.labels) and not other.controller_uid and other.labels == pod.labels


class SelectorSpread(PreScorePlugin, ScorePlugin):
    """Score: spread peers (same controller, or same labels) over nodes and zones."""

    name = "SelectorSpread"
    events = frozenset({ClusterEvent.ASSIGNED_POD_ADD, ClusterEvent.ASSIGNED_POD_DELETE})

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        if not pod.controller_uid and not pod.labels:
            return Status.skip()
        return Status.success()

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        return sum(1 for other in node.pods.values() if is_peer(pod, other))

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: dict[str, int]) -> None:
        top_node = max(scores.values(), default=0)
        zones: dict[str, str] = {}
        by_zone: Counter[str] = Counter()
        for name, count in scores.items():
            node = state.snapshot.get(name)
            zone = node.zone if node is not None else ""
            if zone:
                zones[name] = zone
                by_zone[zone] += count
        top_zone = max(by_zone.values(), default=0)
        for name, count in scores.items():
            value = MAX_NODE_SCORE * (top_node - count) / top_node if top_node else float(MAX_NODE_SCORE)
            node_zone = zones.get(name)
            if node_zone:
                zone_value = (MAX_NODE_SCORE * (top_zone - by_zone[node_zone]) / top_zone if top_zone
                              else float(MAX_NODE_SCORE))
                value = value * (1 - ZONE_WEIGHTING) + zone_value * ZONE_WEIGHTING
            scores[name] = int(value)
