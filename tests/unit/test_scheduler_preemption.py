"""DefaultPreemption (pure): victims, reprieves, budgets, the choice of node, eligibility; and the
FitError message with the PostFilter's part."""

from __future__ import annotations

from minik8s.api.base import Obj
from minik8s.scheduler.framework import FitError, Framework
from minik8s.scheduler.nodeinfo import PodInfo, Snapshot
from minik8s.scheduler.plugins import DEFAULT_PLUGINS
from minik8s.scheduler.plugins.default_preemption import pick_node


def node(name: str, cpu: str = "2") -> Obj:
    return {"metadata": {"name": name},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def pod(name: str, priority: int, node_name: str | None = None, cpu: str = "1", labels: dict[str, str] | None = None,
        start: str | None = None, **spec: object) -> Obj:
    body: Obj = {"metadata": {"name": name, "namespace": "ns", "uid": f"u-{name}", "labels": labels or {}},
                 "spec": {"priority": priority, "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
                          **spec},
                 "status": {"startTime": start} if start else {}}
    if node_name:
        body["spec"]["nodeName"] = node_name
    return body


def preempt(snapshot: Snapshot, preemptor: Obj) -> tuple[object, str]:
    framework = Framework(DEFAULT_PLUGINS)
    info = PodInfo(preemptor)
    try:
        framework.schedule(info, snapshot)
    except FitError as exc:
        assert exc.state is not None
        result, _ = framework.run_post_filter(exc.state, info, exc.diagnosis)
        return result, exc.message
    raise AssertionError("the pod fitted")


def test_lowest_priority_victims_and_reprieves() -> None:
    snapshot = Snapshot.build([node("a", cpu="3")], [pod("mid", 500, "a"), pod("low", 10, "a"),
                                                     pod("lowest", 1, "a")])
    result, message = preempt(snapshot, pod("high", 1000))
    assert message == "0/1 nodes are available: 1 Insufficient cpu."
    assert result.nominated_node == "a" and [v.name for v in result.victims] == ["lowest"]  # type: ignore[attr-defined]


def test_node_with_the_lowest_highest_victim_wins() -> None:
    snapshot = Snapshot.build([node("a"), node("b")], [pod("a1", 10, "a"), pod("a2", 5, "a"),
                                                       pod("b1", 20, "b"), pod("b2", 1, "b")])
    result, _ = preempt(snapshot, pod("high", 100))
    assert (result.nominated_node, [v.name for v in result.victims]) == ("b", ["b2"])  # type: ignore[attr-defined]


def test_budget_protected_pods_are_spared_when_possible() -> None:
    snapshot = Snapshot.build([node("a"), node("b")], [pod("a1", 10, "a"), pod("a2", 5, "a"),
                                                       pod("b1", 20, "b"), pod("b2", 1, "b", labels={"app": "x"})])
    snapshot.disruption_budgets = [{"metadata": {"namespace": "ns"},
                                    "spec": {"selector": {"matchLabels": {"app": "x"}}},
                                    "status": {"disruptionsAllowed": 0}}]
    result, _ = preempt(snapshot, pod("high", 100))
    assert (result.nominated_node, [v.name for v in result.victims]) == ("a", ["a2"])  # type: ignore[attr-defined]
    assert result.pdb_violations == 0  # type: ignore[attr-defined]


def test_no_victims_and_never() -> None:
    snapshot = Snapshot.build([node("a", cpu="1")], [pod("busy", 100, "a")])
    result, message = preempt(snapshot, pod("low", 0))
    assert result.nominated_node == ""  # type: ignore[attr-defined]
    assert message == ("0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
                       "1 No preemption victims found for incoming pod..")
    result, message = preempt(snapshot, pod("polite", 1000, preemptionPolicy="Never"))
    assert result is None
    assert message.endswith("preemption: not eligible due to preemptionPolicy=Never..")


def test_unresolvable_nodes_are_not_candidates() -> None:
    tainted = node("a")
    tainted["spec"] = {"taints": [{"key": "k", "effect": "NoSchedule"}]}
    snapshot = Snapshot.build([tainted], [pod("low", 0, "a")])
    result, message = preempt(snapshot, pod("high", 100, cpu="2"))
    assert result.nominated_node == ""  # type: ignore[attr-defined]
    assert message.endswith("preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling..")


def test_pick_node_criteria() -> None:
    def victims(*priorities: int, start: str = "2024-01-01T00:00:00Z") -> list[PodInfo]:
        return [PodInfo(pod(f"v{i}", p, "x", start=start)) for i, p in enumerate(priorities)]

    assert pick_node({"a": (victims(5), 1), "b": (victims(50), 0)}) == "b"  # fewest budget violations
    assert pick_node({"a": (victims(5, 1), 0), "b": (victims(4, 4), 0)}) == "b"  # lowest highest priority
    assert pick_node({"a": (victims(5, 4), 0), "b": (victims(5, 1), 0)}) == "b"  # smallest sum
    assert pick_node({"a": (victims(5, 0, 0), 0), "b": (victims(5, 2), 0)}) == "b"  # the 2^31 offset: fewer pods
    assert pick_node({"a": (victims(5, start="2024-01-01T00:00:00Z"), 0),
                      "b": (victims(5, start="2024-02-01T00:00:00Z"), 0)}) == "b"  # latest start
    assert pick_node({"a": (victims(5), 0), "b": (victims(5), 0)}) == "a"  # then the first
    assert pick_node({"a": (victims(5), 0), "b": ([], 0)}) == "b"  # no victims at all
