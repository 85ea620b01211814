"""percentageOfNodesToScore: in a large cluster a scheduling cycle stops filtering once it has
found enough feasible nodes, starting where the previous cycle stopped (kube-scheduler's
``numFeasibleNodesToFind`` and ``nextStartNodeIndex``)."""

from __future__ import annotations

import pytest

from minik8s.scheduler.framework import CycleState, Framework, num_feasible_nodes_to_find
from minik8s.scheduler.nodeinfo import PodInfo, Snapshot
from minik8s.scheduler.plugins import DEFAULT_PLUGINS
from tests.unit.test_scheduler_plugins import node, pod


@pytest.mark.parametrize(("nodes", "percentage", "wanted"), [
    (0, 0, 0), (99, 0, 99), (100, 0, 100), (300, 0, 144), (1000, 0, 420), (5000, 0, 500), (20000, 0, 1000),
    (1000, 10, 100), (1000, 30, 300), (1000, 100, 1000), (150, 10, 100),
])
def test_num_feasible_nodes_to_find(nodes: int, percentage: int, wanted: int) -> None:
    assert num_feasible_nodes_to_find(nodes, percentage) == wanted


def test_a_cycle_filters_only_enough_nodes_and_the_next_one_goes_on_from_there() -> None:
    snapshot = Snapshot.build([node(f"n{i:04d}") for i in range(1000)])
    framework = Framework(DEFAULT_PLUGINS)
    incoming = PodInfo(pod("web"))
    first, _ = framework.find_feasible(CycleState(snapshot), incoming)
    assert [n.name for n in first] == [f"n{i:04d}" for i in range(420)]
    second, _ = framework.find_feasible(CycleState(snapshot), incoming)
    assert [n.name for n in second][:2] == ["n0420", "n0421"] and len(second) == 420
    third, _ = framework.find_feasible(CycleState(snapshot), incoming)
    assert third[0].name == "n0840" and third[-1].name == "n0259"  # round the list
    assert framework.schedule(incoming, snapshot).feasible == 420


def test_small_clusters_are_searched_whole_from_the_start() -> None:
    snapshot = Snapshot.build([node(f"n{i}") for i in range(5)])
    framework = Framework(DEFAULT_PLUGINS)
    for _ in range(3):
        found, _ = framework.find_feasible(CycleState(snapshot), PodInfo(pod("web")))
        assert [n.name for n in found] == [f"n{i}" for i in range(5)]
