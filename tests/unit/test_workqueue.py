"""The rate-limited work queue: dedupe, one worker per key, delays and back-off."""

from __future__ import annotations

import asyncio

import pytest

from minik8s.client.workqueue import ShutDown, WorkQueue, run_workers


async def test_dedupe_and_order() -> None:
    q = WorkQueue()
    for k in ("a", "b", "a", "c", "b"):
        q.add(k)
    assert len(q) == 3
    assert [await q.get() for _ in range(3)] == ["a", "b", "c"]


async def test_key_added_while_processing_is_requeued_after_done() -> None:
    q = WorkQueue()
    q.add("a")
    key = await q.get()
    q.add("a")  # dirty while in process: must not be handed out now
    assert len(q) == 0
    q.done(key)
    assert len(q) == 1 and await q.get() == "a"


async def test_never_two_workers_on_one_key() -> None:
    q = WorkQueue()
    active: set[str] = set()
    overlaps = 0
    processed = 0

    async def sync(key: str) -> None:
        nonlocal overlaps, processed
        if key in active:
            overlaps += 1
        active.add(key)
        await asyncio.sleep(0.005)
        active.discard(key)
        processed += 1

    workers = asyncio.create_task(run_workers(q, sync, workers=4))
    for _ in range(50):
        for k in ("x", "y"):
            q.add(k)
        await asyncio.sleep(0.001)
    await asyncio.sleep(0.1)
    q.shutdown()
    await asyncio.wait_for(workers, 2)
    assert overlaps == 0 and processed >= 2


async def test_add_after_and_rate_limit_backoff() -> None:
    q = WorkQueue(base_delay=0.02, max_delay=0.1)
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    q.add_after("k", 0.05)
    assert await q.get() == "k"
    assert loop.time() - t0 >= 0.045
    q.done("k")
    delays = [q.add_rate_limited("k") for _ in range(5)]
    assert delays == [0.02, 0.04, 0.08, 0.1, 0.1]
    q.forget("k")
    assert q.num_requeues("k") == 0


async def test_failed_sync_is_retried_with_backoff() -> None:
    q = WorkQueue(base_delay=0.01)
    calls = 0

    async def sync(key: str) -> None:
        nonlocal calls
        calls += 1
        if calls < 3:
            raise RuntimeError("transient")

    task = asyncio.create_task(run_workers(q, sync))
    q.add("k")
    for _ in range(100):
        if calls >= 3:
            break
        await asyncio.sleep(0.01)
    q.shutdown()
    await asyncio.wait_for(task, 2)
    assert calls == 3 and q.num_requeues("k") == 0


async def test_shutdown_wakes_getters() -> None:
    q = WorkQueue()
    getter = asyncio.create_task(q.get())
    await asyncio.sleep(0.01)
    q.shutdown()
    with pytest.raises(ShutDown):
        await asyncio.wait_for(getter, 1)
