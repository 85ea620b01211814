"""The scheduling queue (back-off, event-driven moves) and the scheduler cache (assume/confirm)."""

from __future__ import annotations

import asyncio

import pytest

from minik8s.api.base import Obj
from minik8s.scheduler.cache import SchedulerCache
from minik8s.scheduler.framework import ClusterEvent, Framework
from minik8s.scheduler.nodeinfo import PodInfo
from minik8s.scheduler.plugins import DEFAULT_PLUGINS
from minik8s.scheduler.queue import QueueClosed, SchedulingQueue, pod_updated


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def pod(name: str, priority: int = 0, labels: dict[str, str] | None = None, node: str | None = None,
        cpu: str | None = None, rv: str = "1") -> Obj:
    spec: Obj = {"containers": [{"name": "c", "image": "busybox",
                                 "resources": {"requests": {"cpu": cpu}} if cpu else {}}],
                 "priority": priority}
    if node:
        spec["nodeName"] = node
    return {"metadata": {"name": name, "namespace": "ns", "labels": labels or {}, "resourceVersion": rv},
            "spec": spec, "status": {"phase": "Pending"}}


def node(name: str, cpu: str = "4") -> Obj:
    return {"metadata": {"name": name, "labels": {}},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def queue(clock: Clock) -> SchedulingQueue:
    return SchedulingQueue(Framework(DEFAULT_PLUGINS).plugin_events(), clock=clock)


async def test_pop_order_priority_then_fifo(queue: SchedulingQueue) -> None:
    queue.add(pod("low-1"))
    queue.add(pod("high", priority=100))
    queue.add(pod("low-2"))
    keys = [(await queue.pop()).key for _ in range(3)]
    assert keys == ["ns/high", "ns/low-1", "ns/low-2"]
    assert queue.counts()["in_flight"] == 3


async def test_requeued_pod_goes_after_equal_priority_pods_queued_before(queue: SchedulingQueue,
                                                                         clock: Clock) -> None:
    """PrioritySort: priority, then the queueing timestamp, which a retry refreshes."""
    queue.add(pod("first"))
    first = await queue.pop()
    clock.now += 1
    queue.add(pod("second"))
    clock.now += 1
    queue.add_backoff(first)
    clock.now += 60  # its back-off is over
    queue.flush()
    queue.add(pod("urgent", priority=10))
    assert [(await queue.pop()).key for _ in range(3)] == ["ns/urgent", "ns/second", "ns/first"]


async def test_pop_waits_and_close_wakes(queue: SchedulingQueue) -> None:
    waiter = asyncio.get_running_loop().create_task(queue.pop())
    await asyncio.sleep(0.01)
    assert not waiter.done()
    queue.add(pod("p"))
    assert (await asyncio.wait_for(waiter, 1)).key == "ns/p"
    waiter = asyncio.get_running_loop().create_task(queue.pop())
    await asyncio.sleep(0.01)
    queue.close()
    with pytest.raises(QueueClosed):
        await asyncio.wait_for(waiter, 1)


def test_backoff_durations(queue: SchedulingQueue) -> None:
    assert [queue.backoff_duration(n) for n in range(1, 7)] == [1, 2, 4, 8, 10, 10]


async def test_unschedulable_moves_only_on_relevant_events(queue: SchedulingQueue, clock: Clock) -> None:
    queue.add(pod("p"))
    qpi = await queue.pop()
    assert queue.add_unschedulable(qpi, {"NodeResourcesFit"}) == "unschedulable"
    # a bound pod appearing cannot free cpu
    assert queue.move_all(ClusterEvent.ASSIGNED_POD_ADD) == 0
    assert queue.where("ns/p") == "unschedulable"
    # a new node can; the pod still waits out its 1 s back-off
    assert queue.move_all(ClusterEvent.NODE_ADD) == 1
    assert queue.where("ns/p") == "backoff"
    clock.now += 1.0
    queue.flush()
    assert queue.where("ns/p") == "active"


async def test_unknown_cause_moves_on_any_event(queue: SchedulingQueue, clock: Clock) -> None:
    queue.add(pod("p"))
    qpi = await queue.pop()
    queue.add_unschedulable(qpi, set())  # e.g. "0/0 nodes are available"
    clock.now += 5
    assert queue.move_all(ClusterEvent.ASSIGNED_POD_DELETE) == 1
    assert queue.where("ns/p") == "active"


async def test_unschedulable_timeout_flushes(queue: SchedulingQueue, clock: Clock) -> None:
    queue.add(pod("p"))
    qpi = await queue.pop()
    queue.add_unschedulable(qpi, {"NodeAffinity"})
    clock.now += 29
    queue.flush()
    assert queue.where("ns/p") == "unschedulable"
    clock.now += 1
    queue.flush()
    assert queue.where("ns/p") == "active"


async def test_event_while_in_flight_sends_pod_to_backoff(queue: SchedulingQueue) -> None:
    queue.add(pod("p"))
    qpi = await queue.pop()
    queue.move_all(ClusterEvent.NODE_ADD)  # arrives during the cycle
    assert queue.add_unschedulable(qpi, {"NodeResourcesFit"}) == "backoff"
    queue.add(pod("q"))
    qpi = await queue.pop()
    queue.move_all(ClusterEvent.ASSIGNED_POD_ADD)  # irrelevant to cpu
    assert queue.add_unschedulable(qpi, {"NodeResourcesFit"}) == "unschedulable"


async def test_updates(queue: SchedulingQueue, clock: Clock) -> None:
    old = pod("p")
    queue.add(old)
    qpi = await queue.pop()
    queue.add_unschedulable(qpi, {"NodeAffinity"})
    # a status-only change (our own condition write) does not move it
    status_only = {**old, "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled"}]},
                   "metadata": {**old["metadata"], "resourceVersion": "2"}}
    assert not pod_updated(old, status_only)
    queue.update(old, status_only)
    assert queue.where("ns/p") == "unschedulable"
    relabeled = pod("p", labels={"x": "y"}, rv="3")
    assert pod_updated(status_only, relabeled)
    clock.now += 2
    queue.update(status_only, relabeled)
    assert queue.where("ns/p") == "active"
    assert (await queue.pop()).pod is relabeled


async def test_delete_and_in_flight_delete(queue: SchedulingQueue) -> None:
    queue.add(pod("p"))
    queue.delete(pod("p"))
    assert queue.where("ns/p") is None
    queue.add(pod("q"))
    qpi = await queue.pop()
    queue.delete(pod("q"))
    assert queue.add_unschedulable(qpi, {"NodeResourcesFit"}) == ""
    assert queue.where("ns/q") is None


async def test_add_backoff_after_error(queue: SchedulingQueue, clock: Clock) -> None:
    queue.add(pod("p"))
    qpi = await queue.pop()
    assert queue.add_backoff(qpi) == "backoff"
    clock.now += 0.5
    queue.flush()
    assert queue.where("ns/p") == "backoff"
    clock.now += 0.5
    queue.flush()
    qpi = await queue.pop()
    assert qpi.attempts == 2
    assert queue.add_backoff(qpi) == "backoff"
    clock.now += 1.5
    queue.flush()
    assert queue.where("ns/p") == "backoff"  # second failure: 2 s


# ---------------------------------------------------------------------------- cache
def test_cache_assume_confirm_forget(clock: Clock) -> None:
    cache = SchedulerCache(assumed_ttl=30, clock=clock)
    cache.add_node(node("n1", cpu="2"))
    info = PodInfo(pod("p", cpu="1500m"))
    cache.assume_pod(info, "n1")
    n1 = cache.node_info("n1")
    assert n1 is not None and n1.requested.milli_cpu == 1500 and cache.is_assumed("ns/p")
    with pytest.raises(ValueError):
        cache.assume_pod(info, "n1")
    # the binding's watch event confirms it
    cache.add_pod(pod("p", cpu="1500m", node="n1"))
    assert not cache.is_assumed("ns/p") and n1.requested.milli_cpu == 1500
    cache.forget_pod("ns/p")  # a confirmed pod is not forgotten
    assert n1.requested.milli_cpu == 1500
    cache.remove_pod(pod("p", node="n1"))
    assert n1.requested.milli_cpu == 0 and not cache.has_pod("ns/p")
    cache.assume_pod(PodInfo(pod("q", cpu="1")), "n1")
    cache.forget_pod("ns/q")
    assert n1.requested.milli_cpu == 0


def test_cache_expires_unconfirmed_assumed_pods(clock: Clock) -> None:
    cache = SchedulerCache(assumed_ttl=30, clock=clock)
    cache.add_node(node("n1"))
    cache.assume_pod(PodInfo(pod("p", cpu="1")), "n1")
    clock.now += 100
    assert cache.cleanup_expired() == []  # binding not finished: never expires
    cache.finish_binding("ns/p")
    clock.now += 29
    assert cache.cleanup_expired() == []
    clock.now += 1
    assert cache.cleanup_expired() == ["ns/p"]


def test_cache_terminal_pods_and_unknown_nodes() -> None:
    cache = SchedulerCache()
    cache.add_pod(pod("early", cpu="1", node="later"))
    assert cache.snapshot().get("later") is None  # no node object yet
    cache.add_node(node("later"))
    later = cache.snapshot().get("later")
    assert later is not None and later.requested.milli_cpu == 1000
    done = pod("early", cpu="1", node="later")
    done["status"]["phase"] = "Succeeded"
    cache.update_pod(done)
    assert later.requested.milli_cpu == 0
    cache.add_pod(pod("x", node="later"))
    cache.remove_node(node("later"))
    assert cache.snapshot().get("later") is None and cache.has_pod("ns/x")
