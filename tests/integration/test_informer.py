"""The shared informer against a real apiserver: cache, handlers, indexers, relist on 410, apiserver restarts."""

from __future__ import annotations

import asyncio

import aetcd

from minik8s.client.informer import Informer, pods_by_node
from minik8s.client.rest import Client
from tests.support.processes import APIServer, Etcd


def _pod(name: str, node: str | None = None) -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "minik8s/busybox"}]}
    if node:
        spec["nodeName"] = node
    return {"metadata": {"name": name}, "spec": spec}


async def _until(pred, timeout: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    for _ in range(int(timeout / 0.05)):
        if pred():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("condition not reached")


async def test_cache_handlers_and_index(client: Client, namespace: str) -> None:
    rt = client.kind("v1", "Pod")
    await client.create(rt, _pod("before", "n1"), namespace)
    inf = Informer(client, rt, namespace, indexers={"node": pods_by_node})
    events: list[tuple[str, str]] = []
    inf.add_handler(lambda o: events.append(("add", o["metadata"]["name"])),
                    lambda old, new: events.append(("update", new["metadata"]["name"])),
                    lambda o: events.append(("delete", o["metadata"]["name"])))
    task = asyncio.create_task(inf.run())
    try:
        await inf.wait_synced(10)
        assert inf.get(f"{namespace}/before") is not None
        await client.create(rt, _pod("after", "n2"), namespace)
        await client.patch(rt, "before", {"metadata": {"labels": {"x": "1"}}}, namespace)
        await client.delete(rt, "after", namespace, grace_period_seconds=0)
        await _until(lambda: ("delete", "after") in events)
        assert events[:2] == [("add", "before"), ("add", "after")]
        assert ("update", "before") in events
        assert [p["metadata"]["name"] for p in inf.by_index("node", "n1")] == ["before"]
        assert inf.by_index("node", "n2") == []
    finally:
        task.cancel()


async def test_relist_after_compaction(client: Client, namespace: str, etcd: Etcd) -> None:
    """A watch whose resourceVersion was compacted gets 410; the informer relists and converges."""
    rt = client.kind("v1", "Pod")
    inf = Informer(client, rt, namespace)
    task = asyncio.create_task(inf.run())
    try:
        await inf.wait_synced(10)
        task.cancel()  # stop watching, change the world, compact history, resume from the old rv
        await asyncio.gather(task, return_exceptions=True)
        stale = inf.resource_version
        await client.create(rt, _pod("while-away"), namespace)
        async with aetcd.Client("127.0.0.1", etcd.port) as raw:
            rev = (await raw.get(b"/registry/namespaces/default")).header.revision
            await raw.compact(rev)
        inf.resource_version = stale
        relists = inf.relists
        task = asyncio.create_task(inf.run())
        await _until(lambda: inf.get(f"{namespace}/while-away") is not None)
        assert inf.relists > relists
    finally:
        task.cancel()


async def test_survives_apiserver_restart(client: Client, namespace: str, apiserver: APIServer) -> None:
    rt = client.kind("v1", "Pod")
    inf = Informer(client, rt, namespace)
    task = asyncio.create_task(inf.run())
    try:
        await inf.wait_synced(10)
        apiserver.stop()
        await asyncio.sleep(1.0)
        assert inf.has_synced()  # the cache stays while the apiserver is away
        apiserver.start()
        await client.create(rt, _pod("after-restart"), namespace)
        await _until(lambda: inf.get(f"{namespace}/after-restart") is not None, 20)
    finally:
        task.cancel()
