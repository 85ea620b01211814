"""PodTopologySpread: ``spec.topologySpreadConstraints``, following Kubernetes' (1.32)
``podtopologyspread`` plugin.

A constraint counts the pods of the incoming pod's namespace that match its selector
(terminating pods excluded) per domain -- per value of the node label ``topologyKey`` -- over
the nodes that carry every constraint's key and that its node inclusion policies let count:

* the selector is ``labelSelector`` ANDed with ``key=value`` for each ``matchLabelKeys`` key the
  incoming pod has a label for (keys it lacks are ignored; an absent ``labelSelector`` still
  matches nothing);
* ``nodeAffinityPolicy: Honor`` (the default) counts only nodes that pass the pod's nodeSelector
  and required node affinity; ``Ignore`` counts every node;
* ``nodeTaintsPolicy: Honor`` leaves out nodes with a ``NoSchedule`` / ``NoExecute`` taint the pod
  does not tolerate; ``Ignore`` (the default) counts them.

* ``whenUnsatisfiable: DoNotSchedule`` (Filter): placing the pod on a node must keep
  ``count(node's domain) + (1 if the pod matches its own selector) - global minimum <= maxSkew``;
  otherwise "node(s) didn't match pod topology spread constraints". The global minimum is the
  lowest count over the counted domains -- or 0 when there are fewer of them than ``minDomains``
  (default 1; only allowed with DoNotSchedule). A node without the key is rejected with
  "node(s) didn't match pod topology spread constraints (missing required label)".
* ``whenUnsatisfiable: ScheduleAnyway`` (Score): fewer matching pods in the node's domain
  is better; each constraint adds ``count * log(domains + 2) + maxSkew - 1`` and the totals
  are inverted into 0..100 (``100 * (max + min - s) / max``); nodes without the keys get 0.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from minik8s.api.selectors import LabelSelector, Requirement
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
from minik8s.scheduler.nodeinfo import NodeInfo, PodInfo
from minik8s.scheduler.plugins.helpers import required_node_affinity_matches, untolerated_taint

REASON = "node(s) didn't match pod topology spread constraints"
MISSING_LABEL_REASON = "node(s) didn't match pod topology spread constraints (missing required label)"
DO_NOT_SCHEDULE, SCHEDULE_ANYWAY = "DoNotSchedule", "ScheduleAnyway"
#: ``nodeAffinityPolicy`` / ``nodeTaintsPolicy`` values (Kubernetes' ``NodeInclusionPolicy``)
HONOR, IGNORE = "Honor", "Ignore"

_FILTER_KEY = "PodTopologySpread/filter"
_SCORE_KEY = "PodTopologySpread/score"


@dataclass(frozen=True)
class Constraint:
    """One parsed topology spread constraint (``selector`` with ``matchLabelKeys`` merged in)."""

    max_skew: int
    topology_key: str
    selector: LabelSelector
    min_domains: int = 1
    node_affinity_policy: str = HONOR
    node_taints_policy: str = IGNORE

    def counts_node(self, pod: PodInfo, node: NodeInfo, affinity_matches: bool) -> bool:
        """Whether ``node``'s pods count for this constraint (its node inclusion policies);
        ``affinity_matches``: whether the node passes the pod's required node affinity."""
        if self.node_affinity_policy == HONOR and not affinity_matches:
            return False
        return not (self.node_taints_policy == HONOR and untolerated_taint(node.taints, pod.tolerations))


def _selector(raw: Mapping[str, Any], pod: PodInfo) -> LabelSelector:
    """``labelSelector`` ANDed with ``key=<the pod's value>`` for each ``matchLabelKeys`` key the pod
    has (Kubernetes' ``mergeLabelSetWithSelector``)."""
    selector = LabelSelector.from_dict(raw.get("labelSelector"))
    keys = raw.get("matchLabelKeys") or []
    extra = [Requirement(str(k), "=", (pod.labels[k],)) for k in keys if k in pod.labels]
    if not extra or selector.matches_nothing():
        return selector
    return LabelSelector([*selector.requirements, *extra])


def constraints(pod: PodInfo, when_unsatisfiable: str) -> list[Constraint]:
    """The pod's constraints with the given ``whenUnsatisfiable``.

    Raises:
        ValueError: for an invalid label selector.
    """
    out: list[Constraint] = []
    for raw in (pod.pod.get("spec") or {}).get("topologySpreadConstraints") or []:
        if (raw.get("whenUnsatisfiable") or DO_NOT_SCHEDULE) != when_unsatisfiable:
            continue
        out.append(Constraint(max(int(raw.get("maxSkew") or 1), 1), raw.get("topologyKey") or "",
                              _selector(raw, pod), max(int(raw.get("minDomains") or 1), 1),
                              raw.get("nodeAffinityPolicy") or HONOR, raw.get("nodeTaintsPolicy") or IGNORE))
    return out


def _count_matching(node: NodeInfo, pod: PodInfo, c: Constraint) -> int:
    return sum(1 for p in node.pods.values()
               if not p.terminating and p.namespace == pod.namespace and c.selector.matches(p.labels))


def _domain_counts(state: CycleState, pod: PodInfo, cs: list[Constraint]) -> list[Counter[str]]:
    """Per constraint: domain -> matching pods, over the nodes with every key that the constraint's
    inclusion policies count (a counted domain without matching pods is there with 0)."""
    counts: list[Counter[str]] = [Counter() for _ in cs]
    for node in state.snapshot.nodes:
        if not all(c.topology_key in node.labels for c in cs):
            continue
        affinity_matches = required_node_affinity_matches(pod, node)
        for i, c in enumerate(cs):
            if c.counts_node(pod, node, affinity_matches):
                counts[i][node.labels[c.topology_key]] += _count_matching(node, pod, c)
    return counts


@dataclass
class _ScoreState:
    constraints: list[Constraint]
    counts: list[Counter[str]]
    weights: list[float]
    ignored: set[str]


class PodTopologySpread(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin):
    """Filter on DoNotSchedule constraints; Score on ScheduleAnyway ones (module docstring)."""

    name = "PodTopologySpread"
    events = frozenset({ClusterEvent.NODE_ADD, ClusterEvent.NODE_UPDATE, ClusterEvent.NODE_DELETE,
                        ClusterEvent.ASSIGNED_POD_ADD, ClusterEvent.ASSIGNED_POD_UPDATE,
                        ClusterEvent.ASSIGNED_POD_DELETE})

    def pre_filter(self, state: CycleState, pod: PodInfo) -> Status:
        try:
            hard = constraints(pod, DO_NOT_SCHEDULE)
        except (ValueError, TypeError) as exc:
            return Status.error(f"invalid topologySpreadConstraints: {exc}")
        if not hard:
            return Status.skip()
        state.write(_FILTER_KEY, (hard, _domain_counts(state, pod, hard)))
        return Status.success()

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        hard, counts = state.read(_FILTER_KEY)
        for c, domain_counts in zip(hard, counts, strict=True):
            value = node.labels.get(c.topology_key)
            if value is None:
                return Status.unschedulable(MISSING_LABEL_REASON, unresolvable=True)
            self_match = 1 if c.selector.matches(pod.labels) else 0
            # fewer eligible domains than minDomains: the global minimum is taken as 0
            lowest = min(domain_counts.values()) if len(domain_counts) >= c.min_domains else 0
            if domain_counts.get(value, 0) + self_match - lowest > c.max_skew:
                return Status.unschedulable(REASON)
        return Status.success()

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        try:
            soft = constraints(pod, SCHEDULE_ANYWAY)
        except (ValueError, TypeError) as exc:
            return Status.error(f"invalid topologySpreadConstraints: {exc}")
        if not soft:
            return Status.skip()
        ignored = {n.name for n in nodes if not all(c.topology_key in n.labels for c in soft)}
        weights = []
        for c in soft:
            domains = {n.labels[c.topology_key] for n in nodes if n.name not in ignored}
            weights.append(math.log(len(domains) + 2))
        state.write(_SCORE_KEY, _ScoreState(soft, _domain_counts(state, pod, soft), weights, ignored))
        return Status.success()

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        ss: _ScoreState = state.read(_SCORE_KEY)
        if node.name in ss.ignored:
            return 0
        total = 0.0
        for c, counts, weight in zip(ss.constraints, ss.counts, ss.weights, strict=True):
            total += counts.get(node.labels[c.topology_key], 0) * weight + (c.max_skew - 1)
        return int(round(total))

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: dict[str, int]) -> None:
        ss: _ScoreState = state.read(_SCORE_KEY)
        considered = [v for name, v in scores.items() if name not in ss.ignored]
        if not considered:
            return
        low, high = min(considered), max(considered)
        for name, value in scores.items():
            if name in ss.ignored:
                scores[name] = 0
            elif high == 0:
                scores[name] = MAX_NODE_SCORE
            else:
                scores[name] = MAX_NODE_SCORE * (high + low - value) // high


