"""ImageLocality: prefer nodes that already have the pod's container images.

Kubernetes semantics: sum, over the pod's containers whose image the node reports in
``status.images``, the image size scaled by the share of nodes that have it (so an image
on every node does not pull pods to one of them); clamp between 23 MiB and 1000 MiB per
container and map that range onto 0..100.
"""

from __future__ import annotations

from collections.abc import Sequence

from minik8s.scheduler.framework import MAX_NODE_SCORE, ClusterEvent, CycleState, PreScorePlugin, ScorePlugin, Status
from minik8s.scheduler.nodeinfo import NodeInfo, PodInfo

MIN_THRESHOLD = 23 * 1024 * 1024
MAX_CONTAINER_THRESHOLD = 1000 * 1024 * 1024
_KEY = "ImageLocality/spread"


class ImageLocality(PreScorePlugin, ScorePlugin):
    """Score: bytes of the pod's images already on the node, spread-weighted."""

    name = "ImageLocality"
    events = frozenset({ClusterEvent.NODE_ADD, ClusterEvent.NODE_UPDATE})

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        if not pod.images:
            return Status.skip()
        total = len(state.snapshot.nodes) or 1
        spread = {image: sum(1 for n in state.snapshot.nodes if image in n.images) / total
                  for image in set(pod.images)}
        state.write(_KEY, spread)
        return Status.success()

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        spread: dict[str, float] = state.read(_KEY)
        total = sum(node.images[image] * spread[image] for image in pod.images if image in node.images)
        high = MAX_CONTAINER_THRESHOLD * len(pod.images)
        clamped = min(max(total, MIN_THRESHOLD), high)
        return int(MAX_NODE_SCORE * (clamped - MIN_THRESHOLD) / (high - MIN_THRESHOLD))
