"""The scheduling framework: plugin interfaces, Status, CycleState and one scheduling cycle.

Follows Kubernetes' scheduler framework (``pkg/scheduler/framework``):

* A plugin implements one or more extension points -- :class:`PreFilterPlugin`,
  :class:`FilterPlugin`, :class:`PreScorePlugin`, :class:`ScorePlugin` (with an optional
  ``normalize_score``) -- and names the :class:`ClusterEvent` kinds that can make a pod it
  rejected schedulable (``events``; Kubernetes' ``EnqueueExtensions``).
* Plugins answer with a :class:`Status`: ``SUCCESS``, ``UNSCHEDULABLE`` (may fit after the
  cluster changes), ``UNSCHEDULABLE_AND_UNRESOLVABLE`` (this node will not do, whatever
  happens to its pods), ``ERROR`` (the cycle fails) or ``SKIP`` (a PreFilter/PreScore
  plugin telling the framework not to call its Filter/Score for this pod).
* :class:`CycleState` carries one cycle's scratch data between extension points.
* :class:`Framework` runs the plugins of a profile (a list of :class:`PluginRow`) in
  order: PreFilter, Filter on every node (stopping at a node's first failing plugin),
  PreScore and Score on the feasible nodes, then the highest weighted total wins; ties
  are broken round-robin. When no node fits, :class:`FitError` carries Kubernetes'
  ``0/3 nodes are available: ...`` message.
* A :class:`PostFilterPlugin` runs when no node fits (:meth:`Framework.run_post_filter`): it may
  find a node where the pod would fit once some pods go (preemption) and answer a
  :class:`PostFilterResult` -- the node to nominate and the victims. Plugins stay pure: the
  scheduler does the evictions.
* Pods nominated to a node by a preemption (``Snapshot.nominated``) count there when a pod of no
  higher priority is filtered (Kubernetes' ``RunFilterPluginsWithNominatedPods``), so the room
  they wait for is not taken from them.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from minik8s.scheduler.nodeinfo import NodeInfo, PodInfo, Snapshot

#: The range of one plugin's (normalized) node score.
MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
#: kube-scheduler's ``minFeasibleNodesToFind``: clusters smaller than this are always searched whole
MIN_FEASIBLE_NODES_TO_FIND = 100
#: kube-scheduler's ``minFeasibleNodesPercentageToFind``: the adaptive percentage never goes below it
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
#: kube-scheduler's ``DefaultPercentageOfNodesToScore`` base (50 % at 0 nodes, minus 1 % per 125 nodes)
BASE_PERCENTAGE_OF_NODES_TO_SCORE = 50


def num_feasible_nodes_to_find(num_all_nodes: int, percentage: int = 0) -> int:
    """How many feasible nodes one cycle looks for before it stops filtering (kube-scheduler's
    ``numFeasibleNodesToFind``): every node below 100 nodes or at ``percentage`` >= 100; else
    ``percentage`` % of them (0: adaptive, 50 % minus one per 125 nodes, at least 5 %), at least 100."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND or percentage >= 100:
        return num_all_nodes
    if percentage <= 0:
        percentage = max(BASE_PERCENTAGE_OF_NODES_TO_SCORE - num_all_nodes // 125,
                         MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    return max(num_all_nodes * percentage // 100, MIN_FEASIBLE_NODES_TO_FIND)


class Code(enum.IntEnum):
    """A plugin's verdict (Kubernetes ``framework.Code``)."""

    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    SKIP = 4


@dataclass(frozen=True)
class Status:
    """A verdict with human-readable ``reasons`` (each counted separately in the
    "0/N nodes are available" message) and the ``plugin`` that gave it."""

    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    @classmethod
    def success(cls) -> Status:
        return _SUCCESS

    @classmethod
    def skip(cls) -> Status:
        return _SKIP

    @classmethod
    def unschedulable(cls, *reasons: str, unresolvable: bool = False) -> Status:
        """A rejection; ``unresolvable`` marks reasons no pod eviction could cure."""
        code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE
        return cls(code, tuple(reasons))

    @classmethod
    def error(cls, message: str) -> Status:
        return cls(Code.ERROR, (message,))

    def is_success(self) -> bool:
        return self.code == Code.SUCCESS

    def is_skip(self) -> bool:
        return self.code == Code.SKIP

    def is_rejected(self) -> bool:
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        return Status(self.code, self.reasons, plugin)


_SUCCESS = Status()
_SKIP = Status(Code.SKIP)


class ClusterEvent(enum.StrEnum):
    """A change in the cluster that may make an unschedulable pod schedulable."""

    NODE_ADD = "NodeAdd"
    NODE_UPDATE = "NodeUpdate"
    NODE_DELETE = "NodeDelete"
    ASSIGNED_POD_ADD = "AssignedPodAdd"
    ASSIGNED_POD_UPDATE = "AssignedPodUpdate"
    ASSIGNED_POD_DELETE = "AssignedPodDelete"
    PVC_CHANGE = "PersistentVolumeClaimChange"
    PV_CHANGE = "PersistentVolumeChange"
    STORAGE_CLASS_CHANGE = "StorageClassChange"
    #: a pod sat in the unschedulable pool too long; retry it whatever its plugins say
    UNSCHEDULABLE_TIMEOUT = "UnschedulableTimeout"


ALL_EVENTS: frozenset[ClusterEvent] = frozenset(ClusterEvent)


class CycleState:
    """Scratch data of one scheduling cycle, keyed by plugin-chosen strings.

    ``snapshot`` is the node view the cycle works on; ``skip_filter`` / ``skip_score`` name
    plugins whose PreFilter / PreScore returned ``SKIP``.
    """

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self._data: dict[str, Any] = {}
        self.skip_filter: set[str] = set()
        self.skip_score: set[str] = set()

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def read(self, key: str) -> Any:
        """The value stored under ``key``; raises KeyError when there is none."""
        return self._data[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)


# ---------------------------------------------------------------------------- plugin interfaces
class Plugin:
    """Base of every plugin: a Kubernetes-style ``name`` and the cluster events after which a
    pod this plugin rejected is worth retrying."""

    name: ClassVar[str] = ""
    events: ClassVar[frozenset[ClusterEvent]] = ALL_EVENTS


class PreFilterPlugin(Plugin):
    def pre_filter(self, state: CycleState, pod: PodInfo) -> Status:
        """Pre-compute for Filter (write to ``state``); ``SKIP`` to skip this plugin's Filter,
        a rejection to make the pod unschedulable on every node."""
        raise NotImplementedError


class FilterPlugin(Plugin):
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        """Whether ``pod`` may run on ``node``: success, or a rejection with reasons."""
        raise NotImplementedError


@dataclass
class PostFilterResult:
    """What a PostFilter plugin proposes: nominate ``nominated_node`` (``""``: clear the pod's
    nomination) after evicting ``victims``; ``pdb_violations`` of them break a disruption budget."""

    nominated_node: str
    victims: list[PodInfo] = field(default_factory=list)
    pdb_violations: int = 0


class FrameworkHandle:
    """What a PostFilter plugin may run of the framework (Kubernetes' ``framework.Handle``)."""

    def run_pre_filter(self, state: CycleState, pod: PodInfo) -> Status:
        raise NotImplementedError

    def run_filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        raise NotImplementedError


class PostFilterPlugin(Plugin):
    def post_filter(self, handle: FrameworkHandle, state: CycleState, pod: PodInfo,
                    diagnosis: Diagnosis) -> tuple[PostFilterResult | None, Status]:
        """Called when no node fits ``pod`` (``diagnosis``: why, per node): success with a result to
        act on, or a rejection whose message is added to the pod's FitError; a None result leaves
        the pod's nomination as it is."""
        raise NotImplementedError


class PreScorePlugin(Plugin):
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        """Pre-compute for Score over the feasible ``nodes``; ``SKIP`` to skip Score."""
        raise NotImplementedError


class ScorePlugin(Plugin):
    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        """The node's raw score for ``pod`` (normalized afterwards by :meth:`normalize_score`)."""
        raise NotImplementedError

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: dict[str, int]) -> None:
        """Rescale ``scores`` (node name -> raw score) in place into 0..100. Default: none."""


def default_normalize(scores: dict[str, int], reverse: bool = False) -> None:
    """Kubernetes' ``DefaultNormalizeScore``: scale so the highest is 100 (``reverse``: the
    highest becomes 0 and 0 becomes 100). All zero stays 0 (``reverse``: 100)."""
    top = max(scores.values(), default=0)
    if top == 0:
        if reverse:
            for name in scores:
                scores[name] = MAX_NODE_SCORE
        return
    for name, value in scores.items():
        scaled = MAX_NODE_SCORE * value // top
        scores[name] = MAX_NODE_SCORE - scaled if reverse else scaled


# ---------------------------------------------------------------------------- profile
@dataclass(frozen=True)
class PluginRow:
    """One row of a scheduling profile: the plugin (a class or factory) and its score weight.

    Filters run in row order; ``weight`` multiplies a Score plugin's 0..100 score (0 disables
    the plugin's Score while keeping its Filter).
    """

    factory: Callable[[], Plugin]
    weight: int = 1


# ---------------------------------------------------------------------------- results and errors
@dataclass
class Diagnosis:
    """Why a pod fits nowhere: each rejected node's status, the plugins that rejected it,
    and a PreFilter message when a PreFilter plugin rejected it for every node."""

    node_statuses: dict[str, Status] = field(default_factory=dict)
    unschedulable_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    #: what the PostFilter plugins said (``preemption: ...``), appended to the FitError message
    post_filter_msg: str = ""


def fit_error_message(num_nodes: int, diagnosis: Diagnosis) -> str:
    """Kubernetes' ``FitError`` text.

    ``0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node
    affinity/selector.`` -- each reason counted over the nodes that gave it, the
    ``"<count> <reason>"`` strings sorted as strings (as Kubernetes' ``sort.Strings``),
    joined by ``", "``, with a trailing period. With no nodes: ``0/0 nodes are available.``;
    with a PreFilter rejection: ``0/N nodes are available: <message>.``; a PostFilter message is
    appended the same way (`` preemption: <message>.``, Kubernetes' ``SeparatorFormat``).
    """
    head = f"0/{num_nodes} nodes are available"
    if num_nodes == 0:
        return head + "."
    post = f" {diagnosis.post_filter_msg}." if diagnosis.post_filter_msg else ""
    if diagnosis.pre_filter_msg:
        return f"{head}: {diagnosis.pre_filter_msg}.{post}"
    histogram: Counter[str] = Counter()
    for status in diagnosis.node_statuses.values():
        for reason in status.reasons:
            histogram[reason] += 1
    parts = sorted(f"{count} {reason}" for reason, count in histogram.items())
    return (f"{head}: {', '.join(parts)}." if parts else head + ":" if post else head + ".") + post


class FitError(Exception):
    """No node fits the pod; ``str()`` is the Kubernetes message (see :func:`fit_error_message`)."""

    def __init__(self, pod: PodInfo, num_nodes: int, diagnosis: Diagnosis, state: CycleState | None = None) -> None:
        self.pod = pod
        self.num_nodes = num_nodes
        self.diagnosis = diagnosis
        #: the cycle's state, for the PostFilter plugins (:meth:`Framework.run_post_filter`)
        self.state = state
        super().__init__(fit_error_message(num_nodes, diagnosis))

    @property
    def message(self) -> str:
        """The message, with what the PostFilter plugins said once they ran."""
        return fit_error_message(self.num_nodes, self.diagnosis)


class SchedulingError(Exception):
    """A plugin failed (``Code.ERROR``), e.g. the pod has an invalid selector; retry later."""

    def __init__(self, message: str, plugin: str = "") -> None:
        super().__init__(message)
        self.plugin = plugin


@dataclass
class ScheduleResult:
    """The chosen ``node``, how many nodes were ``evaluated`` and how many were ``feasible``,
    and the weighted totals per feasible node (empty when only one node fitted)."""

    node: str
    evaluated: int
    feasible: int
    scores: dict[str, int] = field(default_factory=dict)


# ---------------------------------------------------------------------------- the framework
class Framework(FrameworkHandle):
    """Runs one profile's plugins; :meth:`schedule` is one scheduling cycle (pure, no I/O)."""

    def __init__(self, rows: Iterable[PluginRow], percentage_of_nodes_to_score: int = 0) -> None:
        #: kube-scheduler's ``percentageOfNodesToScore`` (0: adaptive, see :func:`num_feasible_nodes_to_find`)
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        #: where the next cycle starts filtering (``nextStartNodeIndex``), so that stopping early
        #: still spreads the search over every node in turn
        self.next_start_node_index = 0
        self.plugins: list[Plugin] = []
        self.weights: dict[str, int] = {}
        for row in rows:
            plugin = row.factory()
            if not plugin.name:
                raise ValueError(f"plugin {plugin!r} has no name")
            if plugin.name in self.weights:
                raise ValueError(f"plugin {plugin.name} appears twice in the profile")
            self.plugins.append(plugin)
            self.weights[plugin.name] = row.weight
        self.pre_filter_plugins = [p for p in self.plugins if isinstance(p, PreFilterPlugin)]
        self.filter_plugins = [p for p in self.plugins if isinstance(p, FilterPlugin)]
        self.pre_score_plugins = [p for p in self.plugins if isinstance(p, PreScorePlugin)
                                  and self.weights[p.name] > 0]
        self.score_plugins = [p for p in self.plugins if isinstance(p, ScorePlugin) and self.weights[p.name] > 0]
        self.post_filter_plugins = [p for p in self.plugins if isinstance(p, PostFilterPlugin)]
        self._tie_breaker = 0

    def plugin_events(self) -> dict[str, frozenset[ClusterEvent]]:
        """Plugin name -> the cluster events that may make a pod it rejected fit."""
        return {p.name: p.events for p in self.plugins}

    # ------------------------------------------------------------------ extension points
    def run_pre_filter(self, state: CycleState, pod: PodInfo) -> Status:
        """Every PreFilter plugin in order; the first rejection or error is returned."""
        for plugin in self.pre_filter_plugins:
            status = plugin.pre_filter(state, pod)
            if status.is_skip():
                state.skip_filter.add(plugin.name)
            elif not status.is_success():
                return status.with_plugin(plugin.name)
        return Status.success()

    def run_filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        """Filter plugins in order on one node; stops at the first that does not succeed."""
        return self._filter(self._active_filters(state), state, pod, node)

    def _active_filters(self, state: CycleState) -> list[FilterPlugin]:
        return [p for p in self.filter_plugins if p.name not in state.skip_filter]

    @staticmethod
    def _filter(plugins: list[FilterPlugin], state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        for plugin in plugins:
            status = plugin.filter(state, pod, node)
            if status.code is not Code.SUCCESS:
                return status.with_plugin(plugin.name)
        return _SUCCESS

    def _filter_with_nominated(self, plugins: list[FilterPlugin], state: CycleState, pod: PodInfo,
                               node: NodeInfo, nominated: list[PodInfo]) -> Status:
        """Kubernetes' ``RunFilterPluginsWithNominatedPods``: the filters on the node with the pods
        nominated there of at least ``pod``'s priority added, and (if they pass) without them."""
        added = [p for p in nominated if p.priority >= pod.priority and p.key != pod.key]
        if not added:
            return self._filter(plugins, state, pod, node)
        crowded = node.clone()
        for other in added:
            crowded.add_pod(other)
        status = self._filter(plugins, state, pod, crowded)
        if status.code is not Code.SUCCESS:
            return status
        return self._filter(plugins, state, pod, node)

    def run_post_filter(self, state: CycleState, pod: PodInfo,
                        diagnosis: Diagnosis) -> tuple[PostFilterResult | None, Status]:
        """The PostFilter plugins in order until one succeeds (Kubernetes' ``RunPostFilterPlugins``);
        the rejections' reasons are joined into ``diagnosis.post_filter_msg``.

        Raises:
            SchedulingError: when a plugin returns ``ERROR``.
        """
        result: PostFilterResult | None = None
        reasons: list[str] = []
        for plugin in self.post_filter_plugins:
            found, status = plugin.post_filter(self, state, pod, diagnosis)
            if status.is_success():
                return found, status.with_plugin(plugin.name)
            if status.code == Code.ERROR:
                raise SchedulingError(status.message(), plugin.name)
            if found is not None:
                result = found
            reasons += status.reasons
            if status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                break
        diagnosis.post_filter_msg = ", ".join(reasons)
        return result, Status.unschedulable(*reasons)

    def run_pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        for plugin in self.pre_score_plugins:
            status = plugin.pre_score(state, pod, nodes)
            if status.is_skip():
                state.skip_score.add(plugin.name)
            elif not status.is_success():
                return status.with_plugin(plugin.name)
        return Status.success()

    def run_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> dict[str, dict[str, int]]:
        """Each Score plugin's normalized (0..100, unweighted) scores: plugin -> node -> score.

        Raises:
            SchedulingError: when a plugin normalizes outside 0..100.
        """
        result: dict[str, dict[str, int]] = {}
        for plugin in self.score_plugins:
            if plugin.name in state.skip_score:
                continue
            scores = {n.name: plugin.score(state, pod, n) for n in nodes}
            plugin.normalize_score(state, pod, scores)
            for node_name, value in scores.items():
                if not MIN_NODE_SCORE <= value <= MAX_NODE_SCORE:
                    raise SchedulingError(f"plugin {plugin.name} scored node {node_name} {value}, "
                                          f"outside [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}]", plugin.name)
            result[plugin.name] = scores
        return result

    # ------------------------------------------------------------------ one cycle
    def find_feasible(self, state: CycleState, pod: PodInfo) -> tuple[list[NodeInfo], Diagnosis]:
        """PreFilter, then Filter on the snapshot's nodes, from :attr:`next_start_node_index` round
        the list, until :func:`num_feasible_nodes_to_find` nodes fit (kube-scheduler's
        ``findNodesThatPassFilters``: in a large cluster a cycle need not look at every node).

        Raises:
            SchedulingError: when a plugin returns ``ERROR``.
        """
        diagnosis = Diagnosis()
        status = self.run_pre_filter(state, pod)
        if status.code == Code.ERROR:
            raise SchedulingError(status.message(), status.plugin)
        if not status.is_success():
            diagnosis.pre_filter_msg = status.message()
            diagnosis.unschedulable_plugins.add(status.plugin)
            return [], diagnosis
        feasible: list[NodeInfo] = []
        nodes = state.snapshot.nodes
        wanted = num_feasible_nodes_to_find(len(nodes), self.percentage_of_nodes_to_score)
        start = self.next_start_node_index % len(nodes) if wanted < len(nodes) else 0
        processed = 0
        filters = self._active_filters(state)
        nominated = state.snapshot.nominated
        for i in range(len(nodes)):
            if len(feasible) >= wanted:
                break
            node = nodes[(start + i) % len(nodes)]
            processed += 1
            if nominated and node.name in nominated:
                status = self._filter_with_nominated(filters, state, pod, node, nominated[node.name])
            else:
                status = self._filter(filters, state, pod, node)
            if status.code is Code.SUCCESS:
                feasible.append(node)
            elif status.code == Code.ERROR:
                raise SchedulingError(status.message(), status.plugin)
            else:
                diagnosis.node_statuses[node.name] = status
                diagnosis.unschedulable_plugins.add(status.plugin)
        if wanted < len(nodes):
            self.next_start_node_index = (start + processed) % len(nodes)
        return feasible, diagnosis

    def prioritize(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> dict[str, int]:
        """PreScore and Score on ``nodes``; returns the weighted total per node name.

        Raises:
            SchedulingError: when a plugin returns ``ERROR`` or scores out of range.
        """
        status = self.run_pre_score(state, pod, nodes)
        if not status.is_success():
            raise SchedulingError(status.message(), status.plugin)
        totals = {n.name: 0 for n in nodes}
        for plugin_name, scores in self.run_score(state, pod, nodes).items():
            weight = self.weights[plugin_name]
            for node_name, value in scores.items():
                totals[node_name] += value * weight
        return totals

    def select_host(self, totals: dict[str, int]) -> str:
        """The node with the highest total; among equals, round-robin over their sorted names."""
        best = max(totals.values())
        tied = sorted(name for name, value in totals.items() if value == best)
        if len(tied) == 1:
            return tied[0]
        choice = tied[self._tie_breaker % len(tied)]
        self._tie_breaker += 1
        return choice

    def schedule(self, pod: PodInfo, snapshot: Snapshot) -> ScheduleResult:
        """One scheduling cycle for ``pod`` over ``snapshot`` (Kubernetes ``schedulePod``).

        Raises:
            FitError: when no node fits (the message is Kubernetes' "0/N nodes are available").
            SchedulingError: when the pod cannot be evaluated (a plugin error, a broken spec).
        """
        if pod.errors:
            raise SchedulingError("; ".join(pod.errors))
        state = CycleState(snapshot)
        if not snapshot.nodes:
            raise FitError(pod, 0, Diagnosis(), state)
        feasible, diagnosis = self.find_feasible(state, pod)
        if not feasible:
            raise FitError(pod, len(snapshot.nodes), diagnosis, state)
        if len(feasible) == 1:
            return ScheduleResult(feasible[0].name, len(snapshot.nodes), 1)
        totals = self.prioritize(state, pod, feasible)
        return ScheduleResult(self.select_host(totals), len(snapshot.nodes), len(feasible), totals)
