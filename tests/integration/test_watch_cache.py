"""The apiserver's watch cache against a real etcd and apiserver: one etcd watch for many client
watches, the window (older resourceVersions served, 410 beyond), bookmarks, lists from the cache
with selectors, slow watchers closed, and an etcd restart that loses nothing."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from minik8s.api import errors
from minik8s.apiserver import apf
from minik8s.apiserver.cacher import Cacher
from minik8s.apiserver.storage import Store
from minik8s.client.kubeconfig import ClientConfig
from minik8s.client.rest import Client
from tests.support.processes import APIServer, Etcd, running_apiserver
from tests.support.waiting import wait_for

WINDOW = 20  # --default-watch-cache-size of this module's apiserver


@pytest.fixture(scope="module")
def server(own_etcd: Etcd, tmp_path_factory: pytest.TempPathFactory) -> Iterator[APIServer]:
    """This module's apiserver, over its own etcd (one test restarts etcd), with a small window."""
    with running_apiserver(own_etcd, tmp_path_factory.mktemp("wc-api"),
                           extra=["--default-watch-cache-size", str(WINDOW)]) as api:
        yield api


@pytest.fixture
async def c(server: APIServer) -> AsyncIterator[Client]:
    async with Client(ClientConfig(server=server.url)) as client:
        yield client


@pytest.fixture
async def ns(c: Client) -> AsyncIterator[str]:
    name = f"wc-{os.urandom(4).hex()}"
    await c.create(c.kind("v1", "Namespace"), {"metadata": {"name": name}})
    yield name


def _cm(name: str, labels: dict[str, str] | None = None, data: str = "") -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels or {}}, "data": {"v": data}}


async def _metrics(server: APIServer) -> dict[str, float]:
    async with httpx.AsyncClient() as h:
        text = (await h.get(f"{server.url}/metrics")).text
    out = {}
    for line in text.splitlines():
        m = re.match(r"^(\S+) (\S+)$", line)
        if m and not line.startswith("#"):
            out[m.group(1)] = float(m.group(2))
    return out


async def _collect(stream: AsyncIterator[dict[str, Any]], sink: list[dict[str, Any]]) -> None:
    async for ev in stream:
        sink.append(ev)


async def test_many_watchers_share_one_etcd_watch(c: Client, ns: str, server: APIServer) -> None:
    cms = c.kind("v1", "ConfigMap")
    rv = (await c.list(cms, ns))["metadata"]["resourceVersion"]
    sinks: list[list[dict[str, Any]]] = [[] for _ in range(30)]
    tasks = [asyncio.create_task(_collect(c.watch(cms, ns, resource_version=rv, allow_bookmarks=False), s))
             for s in sinks]
    try:
        await wait_for(lambda: _metrics(server), what="metrics")
        m = await wait_for(_registered_at_least(server, 30), what="30 registered watchers")
        assert m['apiserver_watch_cache_etcd_watches_total{resource="configmaps"}'] == 1
        # the apiserver's own etcd watches: one per cached resource (the RBAC cache is off here), and
        # one per kind of API Priority and Fairness' configuration (FlowSchemas, priority levels)
        assert m["apiserver_storage_etcd_watches"] <= len(apf.KINDS) + sum(
            v for k, v in m.items() if k.startswith("apiserver_watch_cache_initializations_total"))
        await c.create(cms, _cm("shared"), ns)
        await wait_for(lambda: all(any(e["object"]["metadata"]["name"] == "shared" for e in s) for s in sinks),
                       what="every watcher sees the ADDED event")
        assert all(s[0]["type"] == "ADDED" for s in sinks)
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _registered_at_least(server: APIServer, n: int) -> Any:
    async def check() -> dict[str, float] | None:
        m = await _metrics(server)
        return m if m.get('apiserver_registered_watchers{resource="configmaps"}', 0) >= n else None
    return check


async def test_watch_from_older_rv_in_window_and_410_beyond(c: Client, ns: str) -> None:
    cms = c.kind("v1", "ConfigMap")
    first = await c.create(cms, _cm("a"), ns)
    await c.create(cms, _cm("b"), ns)
    await c.patch(cms, "a", {"data": {"v": "2"}}, ns)
    seen: list[tuple[str, str]] = []
    stream = c.watch(cms, ns, resource_version=first["metadata"]["resourceVersion"], allow_bookmarks=False)
    async for ev in stream:
        seen.append((ev["type"], ev["object"]["metadata"]["name"]))
        if len(seen) == 2:
            break
    await stream.aclose()  # type: ignore[attr-defined]
    assert seen == [("ADDED", "b"), ("MODIFIED", "a")]
    for i in range(WINDOW + 5):  # push the first write out of the window
        await c.patch(cms, "b", {"data": {"v": str(i)}}, ns)
    with pytest.raises(errors.Gone, match="too old resource version"):
        async for _ in c.watch(cms, ns, resource_version=first["metadata"]["resourceVersion"]):
            pass


async def test_bookmarks_and_watch_list(c: Client, ns: str, server: APIServer) -> None:
    cms = c.kind("v1", "ConfigMap")
    made = await c.create(cms, _cm("bm"), ns)
    rv = made["metadata"]["resourceVersion"]
    events = [ev async for ev in c.watch(cms, ns, resource_version=rv, timeout_seconds=3, allow_bookmarks=True)]
    bookmarks = [e for e in events if e["type"] == "BOOKMARK"]
    assert bookmarks, events  # 2 s before the deadline, as kube-apiserver
    assert int(bookmarks[0]["object"]["metadata"]["resourceVersion"]) >= int(rv)
    assert bookmarks[0]["object"]["kind"] == "ConfigMap"
    # a watch-list: initial ADDED events from the cache, then the initial-events-end bookmark
    params = {"watch": "true", "sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan",
              "resourceVersion": rv, "allowWatchBookmarks": "true", "timeoutSeconds": "1"}
    async with httpx.AsyncClient() as h:
        resp = await h.get(f"{server.url}/api/v1/namespaces/{ns}/configmaps", params=params, timeout=10)
    lines = [httpx.Response(200, content=line).json() for line in resp.content.splitlines() if line]
    assert lines[0]["type"] == "ADDED" and lines[0]["object"]["metadata"]["name"] == "bm"
    end = lines[1]
    assert end["type"] == "BOOKMARK"
    assert end["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert int(end["object"]["metadata"]["resourceVersion"]) >= int(rv)


async def test_rv0_list_from_cache_with_selectors(c: Client, ns: str, server: APIServer) -> None:
    cms = c.kind("v1", "ConfigMap")
    for i in range(4):
        last = await c.create(cms, _cm(f"l{i}", {"tier": "web" if i % 2 else "db"}), ns)
    before = await _metrics(server)
    async def listed(**kw: Any) -> list[str]:
        out = await c.list(cms, ns, resource_version="0", **kw)
        assert int(out["metadata"]["resourceVersion"]) >= 1
        return [o["metadata"]["name"] for o in out["items"]]
    # the cache may lag the write by an event: wait until it has it (RV=0 is "any version")
    await wait_for(lambda: _has(listed, "l3"), what="the cache has l3")
    assert await listed(label_selector="tier=web") == ["l1", "l3"]
    assert await listed(field_selector="metadata.name=l2") == ["l2"]
    assert await listed(limit=1) == ["l0", "l1", "l2", "l3"]  # RV=0 from the cache ignores limit
    after = await _metrics(server)
    key = 'apiserver_watch_cache_lists_total{resource="configmaps"}'
    assert after[key] >= before[key] + 3
    # NotOlderThan a version the cache has reached: from the cache too, at least that recent
    async with httpx.AsyncClient() as h:
        resp = await h.get(f"{server.url}/api/v1/namespaces/{ns}/configmaps",
                           params={"resourceVersion": last["metadata"]["resourceVersion"],
                                   "resourceVersionMatch": "NotOlderThan"})
    body = resp.json()
    assert int(body["metadata"]["resourceVersion"]) >= int(last["metadata"]["resourceVersion"])
    assert len(body["items"]) == 4
    # bad selectors are still 400s
    with pytest.raises(errors.BadRequest):
        await c.list(cms, ns, resource_version="0", field_selector="spec.nope=1")


async def _has(listed: Any, name: str) -> bool:
    return name in await listed()


async def test_consistent_lists_from_the_cache_read_every_write(c: Client, ns: str, server: APIServer) -> None:
    """A list without a resourceVersion is served from the cache (ConsistentListFromCache) and still
    shows every write answered before it: creates, updates and deletes, listed at once."""
    cms = c.kind("v1", "ConfigMap")
    key = 'apiserver_watch_cache_consistent_read_total{{resource="configmaps",outcome="{}"}}'
    before = await _metrics(server)
    for round_ in range(10):
        created = await asyncio.gather(*(c.create(cms, _cm(f"r{round_}-{i}"), ns) for i in range(5)))
        await c.patch(cms, f"r{round_}-0", {"data": {"v": "changed"}}, ns)
        await c.delete(cms, f"r{round_}-1", ns)
        listed = await c.list(cms, ns)  # no resourceVersion, no limit: consistent
        by_name = {o["metadata"]["name"]: o for o in listed["items"]}
        assert {f"r{round_}-{i}" for i in (0, 2, 3, 4)} <= set(by_name) and f"r{round_}-1" not in by_name
        assert by_name[f"r{round_}-0"]["data"] == {"v": "changed"}
        assert int(listed["metadata"]["resourceVersion"]) >= max(int(o["metadata"]["resourceVersion"])
                                                                 for o in created)
    after = await _metrics(server)
    served = sum(after[key.format(o)] - before.get(key.format(o), 0) for o in ("fresh", "waited"))
    fallback = after[key.format("fallback")] - before.get(key.format("fallback"), 0)
    assert served + fallback == 10 and served >= 1  # (a fallback only after 3 s without the cache's events)
    # an idle resource: served at once, at etcd's current revision (past every write elsewhere)
    secret = await c.create(c.kind("v1", "Secret"), {"metadata": {"name": "s"}, "stringData": {"a": "b"}}, ns)
    idle = await c.list(c.kind("v1", "PersistentVolumeClaim"), ns)
    assert idle["items"] == [] and int(idle["metadata"]["resourceVersion"]) >= int(
        secret["metadata"]["resourceVersion"])
    # with a limit it still pages through etcd (as Kubernetes 1.32): same objects
    paged = await c.list(cms, ns, limit=3)
    assert paged["metadata"].get("continue")


async def test_a_consistent_list_falls_back_to_etcd_when_the_cache_lags(own_etcd: Etcd) -> None:
    """In-process cache over the real etcd: a consistent read is answered at etcd's revision when
    only other resources were written, once the cache has seen this resource's writes and
    deletions; and when the feed stops (the watch stalled) it waits its bound and gives up (the
    apiserver then reads etcd)."""
    store = Store("127.0.0.1", own_etcd.port)
    cacher = Cacher(store, capacity=100)
    try:
        cache = cacher.get("/registry/lagtest/", "lagtest")
        assert await cache.wait_ready()
        await store.create("/registry/lagtest/a", {"metadata": {"name": "a"}})
        await wait_for(lambda: len(cache.objects) == 1, what="the cache has a")
        assert (await cache.fresh_revision(timeout=1) or 0) >= cache.rv  # nothing new: at once
        assert cache.consistent_reads["fresh"] == 1
        await store.create("/registry/elsewhere/x", {"metadata": {"name": "x"}})
        before = await store.revision()
        assert (await cache.fresh_revision(timeout=1) or 0) >= before  # writes elsewhere only: still fresh
        # a write here, then writes elsewhere: once the cache has the write it is at etcd's revision
        await store.create("/registry/lagtest/c", {"metadata": {"name": "c"}})
        await store.create("/registry/elsewhere/y", {"metadata": {"name": "y"}})
        before = await store.revision()
        assert (await cache.fresh_revision(timeout=10) or 0) >= before
        assert "c" in {o["metadata"]["name"] for o in cache.objects.values()}
        # a deletion here: counted until the cache has seen it
        await store.delete("/registry/lagtest/c")
        await store.create("/registry/elsewhere/z", {"metadata": {"name": "z"}})
        before = await store.revision()
        assert (await cache.fresh_revision(timeout=10) or 0) >= before
        assert "c" not in {o["metadata"]["name"] for o in cache.objects.values()}
        assert cache.consistent_reads["fallback"] == 0
        assert cache._task is not None
        cache._task.cancel()  # the feed stalls: etcd moves on without the cache
        await asyncio.gather(cache._task, return_exceptions=True)
        await store.create("/registry/lagtest/b", {"metadata": {"name": "b"}})
        assert await cache.fresh_revision(timeout=0.3) is None
        assert cache.consistent_reads["fallback"] == 1
    finally:
        await cacher.close()
        await store.close()


async def test_slow_watcher_is_closed_without_affecting_others(own_etcd: Etcd) -> None:
    """In-process cache (a small per-watcher buffer) over the real etcd: a watcher nobody reads is
    closed once it is more than its buffer behind; the one that reads gets every event."""
    store = Store("127.0.0.1", own_etcd.port)
    cacher = Cacher(store, capacity=100, buffer=5)
    try:
        cache = cacher.get("/registry/slowtest/", "slowtest")
        assert await cache.wait_ready()
        slow = cache.watch(None, lambda o: True, cache.rv)
        fast = cache.watch(None, lambda o: o["metadata"]["name"].startswith("k"), cache.rv)
        fast.buffer = 1000  # etcd may hand over several events at once: only the slow one is small
        got: list[str] = []

        async def read() -> None:
            while (ev := await fast.next(None)) is not None:
                got.append(ev["object"]["metadata"]["name"])
        reader = asyncio.create_task(read())
        for i in range(20):
            await store.create(f"/registry/slowtest/k{i}", {"metadata": {"name": f"k{i}"}})
        await wait_for(lambda: len(got) == 20, what="the fast watcher sees all 20")
        assert got == [f"k{i}" for i in range(20)]
        assert slow.closed and slow not in cache.watchers and cache.terminated == 1
        assert list(slow.queue)[-1] is None  # its stream ends after what it had
        assert not fast.closed
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)
    finally:
        await cacher.close()
        await store.close()


async def test_etcd_restart_loses_nothing(c: Client, ns: str, server: APIServer, own_etcd: Etcd) -> None:
    cms = c.kind("v1", "ConfigMap")
    rv = (await c.list(cms, ns))["metadata"]["resourceVersion"]
    seen: list[dict[str, Any]] = []
    task = asyncio.create_task(_collect(c.watch(cms, ns, resource_version=rv, allow_bookmarks=False), seen))
    try:
        await wait_for(_registered_at_least(server, 1), what="the watch is registered")
        inits = (await _metrics(server))['apiserver_watch_cache_initializations_total{resource="configmaps"}']
        own_etcd.restart()
        made = await wait_for(lambda: _create(c, ns, "after-restart"), timeout=30, what="a write after the restart")
        await wait_for(lambda: any(e["object"]["metadata"]["name"] == "after-restart" for e in seen),
                       timeout=30, what="the open watch sees the write")
        assert not task.done()
        listed = await c.list(cms, ns, resource_version="0")
        assert "after-restart" in [o["metadata"]["name"] for o in listed["items"]]
        m = await _metrics(server)
        # rewatched from the last revision: no relist was needed, the window was kept
        assert m['apiserver_watch_cache_initializations_total{resource="configmaps"}'] == inits
        assert m['apiserver_watch_cache_etcd_watches_total{resource="configmaps"}'] >= 2
        assert int(m['apiserver_watch_cache_resource_version{resource="configmaps"}']) >= \
            int(made["metadata"]["resourceVersion"])
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def _create(c: Client, ns: str, name: str) -> dict[str, Any] | None:
    with contextlib.suppress(errors.APIError):
        return await c.create(c.kind("v1", "ConfigMap"), _cm(name), ns)
    return None


async def test_watch_cache_off(own_etcd: Etcd, tmp_path: Path) -> None:
    """--no-watch-cache: every watch is served from its own etcd watch, as before the cache."""
    with running_apiserver(own_etcd, tmp_path, extra=["--no-watch-cache"]) as api:
        async with Client(ClientConfig(server=api.url)) as client:
            cms = client.kind("v1", "ConfigMap")
            stream = client.watch(cms, "default", resource_version="0", allow_bookmarks=False)
            task = asyncio.create_task(_collect(stream, []))
            async def opened() -> bool:
                return (await _metrics(api)).get("apiserver_storage_etcd_watches", 0) >= 1
            await wait_for(opened, what="one etcd watch for the client's watch")
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
