"""DefaultPreemption: when no node fits a pod, find a node where evicting lower-priority pods makes
it fit. Kubernetes' ``defaultpreemption`` plugin and ``framework/preemption`` evaluator:

1. **Eligible?** A pod with ``preemptionPolicy: Never`` never preempts ("not eligible due to
   preemptionPolicy=Never."). Nor does a pod whose nominated node still has a lower-priority pod
   terminating because of an earlier preemption: it waits for that room ("not eligible due to a
   terminating pod on the nominated node.").
2. **Candidates.** Only nodes the filters rejected as ``UNSCHEDULABLE`` (not unresolvable: a taint,
   a node selector no eviction cures). On each, a dry run: remove every pod of lower priority; if
   the pod still does not fit, the node is no candidate. Otherwise the potential victims are given
   back one by one, most important first (higher priority, then earlier start), those whose
   eviction would violate a PodDisruptionBudget first; a pod the preemptor still fits beside is
   reprieved, the others are the victims.
3. **The node**, by Kubernetes' ``pickOneNodeForPreemption``: a candidate with no victims at once;
   else the fewest PDB violations, then the lowest highest-victim priority, then the smallest sum of
   victim priorities, then the fewest victims, then the latest start time of the highest-priority
   victims; then the first by name.

The plugin is pure: it answers a :class:`~minik8s.scheduler.framework.PostFilterResult` (the node
and the victims); the scheduler sets the preemptor's ``status.nominatedNodeName`` and evicts the
victims (a ``DisruptionTarget`` condition, a ``Preempted`` event, the deletion).

A budget is violated when a victim is matched by a PodDisruptionBudget of its namespace (a
non-empty selector) that allows no more disruptions (``status.disruptionsAllowed``, minus the
victims already counted against it; pods in ``status.disruptedPods`` do not count again) -- best
effort, as in Kubernetes: such pods are still evicted when nothing else makes room.

Kubernetes looks at no more than ``max(10 % of the nodes, 100)`` candidates per attempt; so does this.
"""

from __future__ import annotations

from collections.abc import Sequence

from minik8s.api.base import Obj
from minik8s.api.selectors import LabelSelector
from minik8s.scheduler.framework import (
    ClusterEvent,
    Code,
    CycleState,
    Diagnosis,
    FrameworkHandle,
    PostFilterPlugin,
    PostFilterResult,
    Status,
)
from minik8s.scheduler.nodeinfo import NodeInfo, PodInfo

PREEMPT_NEVER = "Never"
#: ``v1.DisruptionTarget`` and ``v1.PodReasonPreemptionByScheduler``
DISRUPTION_TARGET = "DisruptionTarget"
REASON_PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"
NO_VICTIMS = "No preemption victims found for incoming pod"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
#: ``MinCandidateNodesPercentage`` / ``MinCandidateNodesAbsolute``
MIN_CANDIDATE_NODES_PERCENTAGE = 10
MIN_CANDIDATE_NODES_ABSOLUTE = 100
#: ``math.MaxInt32 + 1``: what Kubernetes adds to each victim's priority before summing
PRIORITY_OFFSET = 2**31
#: later than any RFC 3339 time: a pod that has not started counts as starting now (``GetPodStartTime``)
_NOT_STARTED = "9999"


def start_time(pod: PodInfo) -> str:
    """``status.startTime`` (RFC 3339, compared as strings), or "now" (later than any) when unset."""
    return str((pod.pod.get("status") or {}).get("startTime") or _NOT_STARTED)


def importance_key(pod: PodInfo) -> tuple[int, str]:
    """Sort key putting the more important pod first (``MoreImportantPod``): higher priority, then
    the earlier start."""
    return (-pod.priority, start_time(pod))


def terminating_by_preemption(pod: PodInfo) -> bool:
    """Being deleted after a scheduler's preemption (``DisruptionTarget`` ``PreemptionByScheduler``)."""
    if not pod.terminating:
        return False
    return any(c.get("type") == DISRUPTION_TARGET and c.get("status") == "True"
               and c.get("reason") == REASON_PREEMPTION_BY_SCHEDULER
               for c in (pod.pod.get("status") or {}).get("conditions") or [])


def eligible(pod: PodInfo, nominated_status: Status | None, nodes: dict[str, NodeInfo]) -> str:
    """Why ``pod`` may not preempt (``PodEligibleToPreemptOthers``); ``""`` when it may."""
    spec, status = pod.pod.get("spec") or {}, pod.pod.get("status") or {}
    if spec.get("preemptionPolicy") == PREEMPT_NEVER:
        return NOT_ELIGIBLE_NEVER
    nominated = status.get("nominatedNodeName") or ""
    if nominated:
        if nominated_status is not None and nominated_status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            return ""
        node = nodes.get(nominated)
        if node is not None and any(p.priority < pod.priority and terminating_by_preemption(p)
                                    for p in node.pods.values()):
            return NOT_ELIGIBLE_TERMINATING
    return ""


# ---------------------------------------------------------------------------- disruption budgets
class _Budgets:
    """The budgets of a cycle, parsed once: per budget its namespace, selector, disrupted pods and the
    disruptions it still allows."""

    def __init__(self, budgets: Sequence[Obj]) -> None:
        self.entries: list[tuple[str, LabelSelector, frozenset[str], int]] = []
        for pdb in budgets:
            selector = (pdb.get("spec") or {}).get("selector")
            if not selector or not (selector.get("matchLabels") or selector.get("matchExpressions")):
                continue  # a nil or empty selector matches no pod here (Kubernetes' filterPodsWithPDBViolation)
            try:
                parsed = LabelSelector.from_dict(selector)
            except ValueError:
                continue
            status = pdb.get("status") or {}
            self.entries.append(((pdb.get("metadata") or {}).get("namespace") or "default", parsed,
                                 frozenset(status.get("disruptedPods") or {}),
                                 int(status.get("disruptionsAllowed") or 0)))

    def split(self, pods: list[PodInfo]) -> tuple[list[PodInfo], list[PodInfo]]:
        """(violating, non-violating): evicting ``pods`` in order, which would exceed a budget
        (``filterPodsWithPDBViolation``). Both keep ``pods``' order."""
        allowed = [entry[3] for entry in self.entries]
        violating: list[PodInfo] = []
        fine: list[PodInfo] = []
        for pod in pods:
            broke = False
            for i, (namespace, selector, disrupted, _) in enumerate(self.entries):
                if namespace != pod.namespace or not selector.matches(pod.labels) or pod.name in disrupted:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    broke = True
            (violating if broke else fine).append(pod)
        return violating, fine


# ---------------------------------------------------------------------------- one node
def _fits(handle: FrameworkHandle, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
    """The filters on a dry-run copy of a node: the PreFilter state is recomputed over the snapshot
    with this node in it (the plugins here have no AddPod/RemovePod extensions)."""
    dry = CycleState(state.snapshot.with_node(node))
    status = handle.run_pre_filter(dry, pod)
    if not status.is_success():
        return status
    return handle.run_filter(dry, pod, node)


def select_victims(handle: FrameworkHandle, state: CycleState, pod: PodInfo, node: NodeInfo,
                   budgets: _Budgets) -> tuple[list[PodInfo], int, Status]:
    """Kubernetes' ``SelectVictimsOnNode``: (victims most important first, how many violate a
    budget, success) or ([], 0, why the node will not do)."""
    potential = [p for p in node.pods.values() if p.priority < pod.priority]
    if not potential:
        return [], 0, Status.unschedulable(NO_VICTIMS, unresolvable=True)
    dry = node.clone()
    for victim in potential:
        dry.remove_pod(victim.key)
    status = _fits(handle, state, pod, dry)
    if not status.is_success():
        return [], 0, status
    potential.sort(key=importance_key)
    violating, fine = budgets.split(potential)
    victims: list[PodInfo] = []
    violations = 0
    for group, counts in ((violating, True), (fine, False)):
        for candidate in group:
            dry.add_pod(candidate)
            if _fits(handle, state, pod, dry).is_success():
                continue  # reprieved
            dry.remove_pod(candidate.key)
            victims.append(candidate)
            violations += counts
    victims.sort(key=importance_key)
    return victims, violations, Status.success()


def num_candidates(num_nodes: int) -> int:
    """``calculateNumCandidates``: 10 % of the nodes, at least 100, at most all of them."""
    return min(max(num_nodes * MIN_CANDIDATE_NODES_PERCENTAGE // 100, MIN_CANDIDATE_NODES_ABSOLUTE), num_nodes)


def pick_node(candidates: dict[str, tuple[list[PodInfo], int]]) -> str:
    """Kubernetes' ``pickOneNodeForPreemption`` over ``{node: (victims most important first, pdb
    violations)}``: a node with no victims; else the fewest violations, the lowest highest-victim
    priority, the smallest sum of priorities (each offset by 2^31, as Kubernetes does to keep them
    positive: more victims weigh more), the fewest victims; then the latest earliest start among the
    highest-priority victims; then the first by name."""
    names = sorted(candidates)
    for name in names:
        if not candidates[name][0]:
            return name

    def key(name: str) -> tuple[int, int, int, int]:
        victims, violations = candidates[name]
        return (violations, victims[0].priority, sum(v.priority + PRIORITY_OFFSET for v in victims), len(victims))

    best = min(key(name) for name in names)
    tied = [name for name in names if key(name) == best]

    def earliest_top_start(name: str) -> str:
        victims = candidates[name][0]
        return min(start_time(v) for v in victims if v.priority == victims[0].priority)

    return max(tied, key=earliest_top_start)  # max keeps the first of equals


# ---------------------------------------------------------------------------- the plugin
class DefaultPreemption(PostFilterPlugin):
    """PostFilter: preempt lower-priority pods (see the module docstring)."""

    name = "DefaultPreemption"
    events = frozenset({ClusterEvent.ASSIGNED_POD_DELETE})

    def post_filter(self, handle: FrameworkHandle, state: CycleState, pod: PodInfo,
                    diagnosis: Diagnosis) -> tuple[PostFilterResult | None, Status]:
        snapshot = state.snapshot
        nominated = (pod.pod.get("status") or {}).get("nominatedNodeName") or ""
        why_not = eligible(pod, diagnosis.node_statuses.get(nominated), snapshot.by_name)
        if why_not:
            return None, Status.unschedulable(f"preemption: {why_not}")
        if diagnosis.pre_filter_msg:  # rejected before any node was looked at: nothing to evict for
            count = len(snapshot.nodes)
            return PostFilterResult(""), Status.unschedulable(
                f"preemption: 0/{count} nodes are available: {count} {NOT_HELPFUL}.")
        budgets = _Budgets(snapshot.disruption_budgets)
        wanted = num_candidates(len(snapshot.nodes))
        candidates: dict[str, tuple[list[PodInfo], int]] = {}
        statuses: dict[str, Status] = {}
        for node in snapshot.nodes:
            status = diagnosis.node_statuses.get(node.name)
            if status is None or status.code != Code.UNSCHEDULABLE:
                statuses[node.name] = Status.unschedulable(NOT_HELPFUL, unresolvable=True)
                continue
            victims, violations, status = select_victims(handle, state, pod, node, budgets)
            if not status.is_success():
                statuses[node.name] = status
                continue
            candidates[node.name] = (victims, violations)
            if len(candidates) >= wanted:
                break
        if not candidates:
            histogram: dict[str, int] = {}
            for status in statuses.values():
                for reason in status.reasons:
                    histogram[reason] = histogram.get(reason, 0) + 1
            parts = ", ".join(sorted(f"{count} {reason}" for reason, count in histogram.items()))
            return PostFilterResult(""), Status.unschedulable(
                f"preemption: 0/{len(snapshot.nodes)} nodes are available: {parts}.")
        chosen = pick_node(candidates)
        victims, violations = candidates[chosen]
        return PostFilterResult(chosen, victims, violations), Status.success()
