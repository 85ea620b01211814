"""Controller expectations and slow-start batches (pure logic, fake clock)."""

from __future__ import annotations

import asyncio

from minik8s.controllers.base import slow_start_batch
from minik8s.controllers.expectations import Expectations
from minik8s.controllers.manager import select_controllers


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_creations_are_satisfied_by_observations_or_timeout() -> None:
    clock = Clock()
    exp = Expectations(timeout=300, clock=clock)
    assert exp.satisfied("ns/rs")  # never set: a new controller may act
    exp.expect_creations("ns/rs", 3)
    assert not exp.satisfied("ns/rs")
    exp.creation_observed("ns/rs")
    exp.creation_observed("ns/rs")
    assert not exp.satisfied("ns/rs")
    exp.creation_observed("ns/rs")
    assert exp.satisfied("ns/rs")
    exp.creation_observed("ns/rs")  # extra observations never go negative in a harmful way
    assert exp.satisfied("ns/rs")
    exp.expect_creations("ns/rs", 2)
    clock.now += 299
    assert not exp.satisfied("ns/rs")
    clock.now += 2  # a lost event does not wedge the controller for ever
    assert exp.satisfied("ns/rs")


def test_deletions_count_each_pod_once() -> None:
    exp = Expectations(clock=Clock())
    exp.expect_deletions("ns/rs", ["ns/a", "ns/b"])
    exp.deletion_observed("ns/rs", "ns/a")  # seen terminating
    exp.deletion_observed("ns/rs", "ns/a")  # then gone: must not count twice
    assert not exp.satisfied("ns/rs")
    exp.deletion_observed("ns/rs", "ns/unrelated")
    assert not exp.satisfied("ns/rs")
    exp.deletion_observed("ns/rs", "ns/b")
    assert exp.satisfied("ns/rs")
    exp.expect_creations("ns/other", 1)
    exp.forget("ns/other")
    assert exp.satisfied("ns/other")


async def test_slow_start_batches_grow_and_stop_on_failure() -> None:
    batches: list[int] = []
    running = 0

    async def ok() -> None:
        nonlocal running
        running += 1
        batches.append(running)
        await asyncio.sleep(0)
        running -= 1

    assert await slow_start_batch(10, 1, ok) == (10, None)
    assert max(batches) == 4  # batches 1, 2, 4, 3

    calls = 0

    async def fails_from_fourth() -> None:
        nonlocal calls
        calls += 1
        if calls >= 4:
            raise RuntimeError("quota")

    successes, err = await slow_start_batch(20, 1, fails_from_fourth)
    assert isinstance(err, RuntimeError)
    assert calls == 7 and successes == 3  # batches 1, 2, 4: the 4-batch fails, nothing more is tried


def test_select_controllers() -> None:
    everything = ["replicaset", "deployment", "daemonset", "statefulset", "garbagecollector", "endpoint",
                  "endpointslice", "endpointslicemirroring",
                  "nodeipam", "dns", "horizontalpodautoscaling", "nodelifecycle", "gpujob", "function",
                  "functionautoscaler", "serviceaccount", "root-ca-cert-publisher", "replicationcontroller", "job",
                  "cronjob", "persistentvolume-binder", "pvc-protection", "pv-protection", "local-path-provisioner",
                  "disruption", "resourcequota", "csrsigning", "csrapproving", "csrcleaner"]
    assert select_controllers("*") == everything
    assert select_controllers("*,-deployment") == [n for n in everything if n != "deployment"]
    assert select_controllers("deployment,replicaset") == ["deployment", "replicaset"]
    try:
        select_controllers("nope")
    except ValueError as exc:
        assert "unknown controller" in str(exc)
    else:
        raise AssertionError("expected ValueError")
