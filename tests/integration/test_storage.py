"""Storage over a real etcd: CAS, conflicts under concurrent writers, watch order, 410 on compaction."""

from __future__ import annotations

import asyncio

import aetcd
import pytest

from minik8s.api import errors
from minik8s.apiserver.storage import Store
from tests.support.processes import Etcd


@pytest.fixture
async def store(etcd: Etcd) -> Store:
    s = Store("127.0.0.1", etcd.port)
    yield s
    await s.close()


def _obj(name: str, n: int = 0) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"n": n}}


async def test_create_get_update_delete(store: Store) -> None:
    key = f"/registry/test/crud-{id(store)}"
    created = await store.create(key, _obj("a"))
    rv = int(created["metadata"]["resourceVersion"])
    got = await store.get(key)
    assert got["metadata"]["resourceVersion"] == str(rv)
    with pytest.raises(errors.AlreadyExists):
        await store.create(key, _obj("a"))
    updated = await store.update(key, _obj("a", 1), rv)
    assert int(updated["metadata"]["resourceVersion"]) > rv
    with pytest.raises(errors.Conflict):
        await store.update(key, _obj("a", 2), rv)  # stale resourceVersion
    last = await store.delete(key)
    assert last["data"]["n"] == 1
    with pytest.raises(errors.NotFound):
        await store.get(key)


async def test_no_lost_update_under_concurrent_writers(store: Store) -> None:
    """N writers increment one field with read-modify-CAS retries: the total is exact."""
    key = f"/registry/test/counter-{id(store)}"
    await store.create(key, _obj("c", 0))
    writers, increments = 8, 25
    conflicts = 0

    async def writer() -> None:
        nonlocal conflicts
        for _ in range(increments):
            while True:
                cur = await store.get(key)
                cur["data"]["n"] += 1
                try:
                    await store.update(key, cur, int(cur["metadata"]["resourceVersion"]))
                    break
                except errors.Conflict:
                    conflicts += 1

    await asyncio.gather(*(writer() for _ in range(writers)))
    assert (await store.get(key))["data"]["n"] == writers * increments
    assert conflicts > 0  # the writers really raced


async def test_watch_order_and_types(store: Store) -> None:
    prefix = f"/registry/test/w-{id(store)}/"
    start = await store.revision()
    events = await store.watch(prefix, start)
    await store.create(prefix + "a", _obj("a"))
    cur = await store.get(prefix + "a")
    await store.update(prefix + "a", _obj("a", 5), int(cur["metadata"]["resourceVersion"]))
    await store.create(prefix + "b", _obj("b"))
    await store.delete(prefix + "a")
    seen = []
    async for ev in events:
        seen.append((ev.type, ev.object["metadata"]["name"], ev.revision))
        if len(seen) == 4:
            break
    assert [(t, n) for t, n, _ in seen] == [("ADDED", "a"), ("MODIFIED", "a"), ("ADDED", "b"), ("DELETED", "a")]
    revisions = [r for _, _, r in seen]
    assert revisions == sorted(revisions)


async def test_compacted_revision_is_gone(store: Store, etcd: Etcd) -> None:
    prefix = f"/registry/test/g-{id(store)}/"
    await store.create(prefix + "x", _obj("x"))
    old = await store.revision()
    cur = await store.get(prefix + "x")
    for i in range(3):
        cur = await store.update(prefix + "x", _obj("x", i), int(cur["metadata"]["resourceVersion"]))
    async with aetcd.Client("127.0.0.1", etcd.port) as raw:
        await raw.compact(await store.revision())
    with pytest.raises(errors.Gone):
        await store.watch(prefix, old - 1)
    with pytest.raises(errors.Gone):
        await store.list(prefix, revision=old)
