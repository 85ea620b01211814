"""InterPodAffinity: pod affinity and anti-affinity (``spec.affinity.podAffinity`` /
``podAntiAffinity``), following Kubernetes' ``interpodaffinity`` plugin.

A term names pods (``labelSelector`` in ``namespaces`` plus the namespaces whose labels match
``namespaceSelector`` -- ``{}``: every namespace; neither set: the owning pod's namespace) and a
``topologyKey``; nodes sharing a value of that label form one domain. Namespace labels come from
the snapshot (the scheduler's namespace informer). ``matchLabelKeys`` / ``mismatchLabelKeys`` were
merged into ``labelSelector`` by the apiserver when the pod was created (``key in (value)`` /
``key notin (value)`` with the pod's own label values), as in Kubernetes 1.32, so every term --
required or preferred, the incoming pod's or an existing pod's -- is matched with them.

Filter (required terms), checked in this order:

1. Affinity: for every term, some pod matching *all* the incoming pod's affinity terms
   runs in the node's domain ("node(s) didn't match pod affinity rules"). The node must
   carry every term's topology key. Exception (the first pod of a group that attracts
   itself): when no pod anywhere matches, a pod matching its own terms may go anywhere
   that has the keys.
2. Anti-affinity: for no term does a matching pod run in the node's domain
   ("node(s) didn't match pod anti-affinity rules").
3. Symmetry: no pod already placed has a required anti-affinity term that matches the
   incoming pod and covers this node's domain
   ("node(s) didn't satisfy existing pods anti-affinity rules").

Score (preferred terms, and existing pods' terms about the incoming pod): for each pair
(incoming, existing) add the weight of each matching preferred affinity term, subtract
it for anti-affinity, add 1 (``hardPodAffinityWeight``) for an existing pod's required
affinity term that matches the incoming pod; the sums are kept per topology domain and
a node scores the sum of its domains, rescaled to 0..100 between the lowest and highest.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from minik8s.scheduler.framework import (
    MAX_NODE_SCORE,
    ClusterEvent,
    CycleState,
    FilterPlugin,
    PreFilterPlugin,
    PreScorePlugin,
    ScorePlugin,
    Status,
)
from minik8s.scheduler.nodeinfo import NamespaceLabels, NodeInfo, PodInfo

AFFINITY_REASON = "node(s) didn't match pod affinity rules"
ANTI_AFFINITY_REASON = "node(s) didn't match pod anti-affinity rules"
EXISTING_ANTI_AFFINITY_REASON = "node(s) didn't satisfy existing pods anti-affinity rules"
HARD_POD_AFFINITY_WEIGHT = 1

_FILTER_KEY = "InterPodAffinity/filter"
_SCORE_KEY = "InterPodAffinity/score"

Pair = tuple[str, str]


@dataclass
class _FilterState:
    affinity_counts: Counter[Pair] = field(default_factory=Counter)
    anti_affinity_counts: Counter[Pair] = field(default_factory=Counter)
    existing_anti_affinity_counts: Counter[Pair] = field(default_factory=Counter)


class InterPodAffinity(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin):
    """Filter on required pod (anti-)affinity; Score on preferred terms (module docstring)."""

    name = "InterPodAffinity"
    events = frozenset({ClusterEvent.NODE_ADD, ClusterEvent.NODE_UPDATE, ClusterEvent.ASSIGNED_POD_ADD,
                        ClusterEvent.ASSIGNED_POD_UPDATE, ClusterEvent.ASSIGNED_POD_DELETE})

    # ------------------------------------------------------------------ filter
    def pre_filter(self, state: CycleState, pod: PodInfo) -> Status:
        with_anti = state.snapshot.with_required_anti_affinity()
        if not pod.required_affinity and not pod.required_anti_affinity and not with_anti:
            return Status.skip()
        fs = _FilterState()
        ns_labels = state.snapshot.namespace_labels
        for node in with_anti:
            for existing in node.pods.values():
                for term in existing.required_anti_affinity:
                    value = node.labels.get(term.topology_key)
                    if value is not None and term.matches(pod, ns_labels):
                        fs.existing_anti_affinity_counts[(term.topology_key, value)] += 1
        if pod.required_affinity or pod.required_anti_affinity:
            for node in state.snapshot.nodes:
                for existing in node.pods.values():
                    if pod.required_affinity and all(t.matches(existing, ns_labels) for t in pod.required_affinity):
                        for term in pod.required_affinity:
                            value = node.labels.get(term.topology_key)
                            if value is not None:
                                fs.affinity_counts[(term.topology_key, value)] += 1
                    for term in pod.required_anti_affinity:
                        value = node.labels.get(term.topology_key)
                        if value is not None and term.matches(existing, ns_labels):
                            fs.anti_affinity_counts[(term.topology_key, value)] += 1
        state.write(_FILTER_KEY, fs)
        return Status.success()

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        fs: _FilterState = state.read(_FILTER_KEY)
        if not self._satisfies_affinity(fs, pod, node, state.snapshot.namespace_labels):
            return Status.unschedulable(AFFINITY_REASON, unresolvable=True)
        for term in pod.required_anti_affinity:
            value = node.labels.get(term.topology_key)
            if value is not None and fs.anti_affinity_counts[(term.topology_key, value)] > 0:
                return Status.unschedulable(ANTI_AFFINITY_REASON)
        for (key, value), count in fs.existing_anti_affinity_counts.items():
            if count > 0 and node.labels.get(key) == value:
                return Status.unschedulable(EXISTING_ANTI_AFFINITY_REASON)
        return Status.success()

    @staticmethod
    def _satisfies_affinity(fs: _FilterState, pod: PodInfo, node: NodeInfo, ns_labels: NamespaceLabels) -> bool:
        pods_exist = True
        for term in pod.required_affinity:
            value = node.labels.get(term.topology_key)
            if value is None:
                return False
            if fs.affinity_counts[(term.topology_key, value)] <= 0:
                pods_exist = False
        if pods_exist:
            return True
        # The first pod of a series with affinity to itself must not wait forever.
        return not fs.affinity_counts and all(t.matches(pod, ns_labels) for t in pod.required_affinity)

    # ------------------------------------------------------------------ score
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        has_constraints = bool(pod.preferred_affinity or pod.preferred_anti_affinity)
        scan = state.snapshot.nodes if has_constraints else state.snapshot.with_affinity()
        if not scan:
            return Status.skip()
        scores: Counter[Pair] = Counter()
        for node in scan:
            for existing in node.pods.values():
                if has_constraints or existing.has_affinity:
                    _add_pair_scores(scores, pod, existing, node, state.snapshot.namespace_labels)
        if not scores:
            return Status.skip()
        state.write(_SCORE_KEY, scores)
        return Status.success()

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        scores: Counter[Pair] = state.read(_SCORE_KEY)
        return sum(value for (key, domain), value in scores.items() if node.labels.get(key) == domain)

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: dict[str, int]) -> None:
        if not scores:
            return
        low, high = min(scores.values()), max(scores.values())
        for name, value in scores.items():
            scores[name] = MAX_NODE_SCORE * (value - low) // (high - low) if high > low else 0


def _add_pair_scores(scores: Counter[Pair], pod: PodInfo, existing: PodInfo, node: NodeInfo,
                     ns_labels: NamespaceLabels) -> None:
    """Add the (incoming, existing) pair's weights to the domains of ``node``."""

    def add(key: str, weight: int) -> None:
        value = node.labels.get(key)
        if value is not None:
            scores[(key, value)] += weight

    for term in pod.preferred_affinity:
        if term.matches(existing, ns_labels):
            add(term.topology_key, term.weight)
    for term in pod.preferred_anti_affinity:
        if term.matches(existing, ns_labels):
            add(term.topology_key, -term.weight)
    for term in existing.required_affinity:
        if term.matches(pod, ns_labels):
            add(term.topology_key, HARD_POD_AFFINITY_WEIGHT)
    for term in existing.preferred_affinity:
        if term.matches(pod, ns_labels):
            add(term.topology_key, term.weight)
    for term in existing.preferred_anti_affinity:
        if term.matches(pod, ns_labels):
            add(term.topology_key, -term.weight)
