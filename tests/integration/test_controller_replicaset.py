"""The ReplicaSet controller against a real apiserver (controller-manager in-process, pods simulated)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from minik8s.client.rest import Client
from minik8s.controllers.replicaset import ReplicaSetController
from tests.support.controllers import controller_manager, events_for, mark_running, owner_uids, pods, replicaset
from tests.support.waiting import wait_for

LABELS = {"app": "web"}


async def _rs_status(client: Client, ns: str, name: str) -> dict[str, Any]:
    return (await client.get(client.kind("apps/v1", "ReplicaSet"), name, ns)).get("status") or {}


async def test_creates_pods_and_replaces_deleted_ones(client: Client, namespace: str) -> None:
    rs_rt, pod_rt = client.kind("apps/v1", "ReplicaSet"), client.kind("v1", "Pod")
    async with controller_manager(client, namespace, ["replicaset"]):
        rs = await client.create(rs_rt, replicaset("web", 3, LABELS), namespace)
        await wait_for(lambda: _count(client, namespace, 3), what="3 pods")
        created = await pods(client, namespace)
        for pod in created:
            name = pod["metadata"]["name"]
            assert name.startswith("web-") and len(name) == len("web-") + 5
            assert pod["metadata"]["generateName"] == "web-"
            assert pod["metadata"]["labels"] == LABELS
            assert pod["metadata"]["ownerReferences"] == [{
                "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": rs["metadata"]["uid"],
                "controller": True, "blockOwnerDeletion": True}]
        victim = created[0]["metadata"]["name"]
        await client.delete(pod_rt, victim, namespace)  # unbound: removed at once
        await wait_for(lambda: _names_without(client, namespace, victim, 3), what="a replacement pod")
        await wait_for(lambda: _has_event(client, namespace, "web", "SuccessfulCreate"), what="events")


async def _count(client: Client, ns: str, n: int) -> bool:
    return len(await pods(client, ns)) == n


async def _names_without(client: Client, ns: str, gone: str, n: int) -> bool:
    names = [p["metadata"]["name"] for p in await pods(client, ns)]
    return gone not in names and len(names) == n


async def _has_event(client: Client, ns: str, name: str, reason: str) -> bool:
    return any(e["reason"] == reason for e in await events_for(client, ns, name))


async def test_adopts_orphans_and_releases_relabelled_pods(client: Client, namespace: str) -> None:
    rs_rt, pod_rt = client.kind("apps/v1", "ReplicaSet"), client.kind("v1", "Pod")
    orphan = await client.create(pod_rt, {"metadata": {"name": "orphan", "labels": LABELS},
                                          "spec": {"containers": [{"name": "main", "image": "minik8s/busybox"}]}},
                                 namespace)
    async with controller_manager(client, namespace, ["replicaset"]):
        rs = await client.create(rs_rt, replicaset("web", 2, LABELS), namespace)
        uid = rs["metadata"]["uid"]
        await wait_for(lambda: _count(client, namespace, 2), what="2 pods")
        adopted = await client.get(pod_rt, "orphan", namespace)
        assert adopted["metadata"]["uid"] == orphan["metadata"]["uid"]
        assert owner_uids(adopted) == [uid]
        assert adopted["metadata"]["ownerReferences"][0]["controller"] is True
        # relabel the adopted pod: the ReplicaSet releases it and makes a replacement
        await client.patch(pod_rt, "orphan", {"metadata": {"labels": {"app": "debug"}}}, namespace)

        async def released() -> bool:
            pod = await client.get(pod_rt, "orphan", namespace)
            owned = [p for p in await pods(client, namespace) if uid in owner_uids(p)]
            return not pod["metadata"].get("ownerReferences") and len(owned) == 2

        await wait_for(released, what="release and replacement")
        assert len(await pods(client, namespace)) == 3


async def test_scale_up_and_down_in_kubernetes_deletion_order(client: Client, namespace: str) -> None:
    rs_rt = client.kind("apps/v1", "ReplicaSet")
    async with controller_manager(client, namespace, ["replicaset"]):
        await client.create(rs_rt, replicaset("web", 5, LABELS), namespace)
        await wait_for(lambda: _count(client, namespace, 5), what="5 pods")
        p = sorted(await pods(client, namespace), key=lambda x: x["metadata"]["name"])
        names = [x["metadata"]["name"] for x in p]
        # p[0] stays unscheduled; p[1] bound but Pending; p[2] Running not ready;
        # p[3] Running ready with restarts; p[4] Running ready, no restarts (the keeper)
        await mark_running(client, p[1], node="node-1", ready=False, phase="Pending")
        await mark_running(client, p[2], node="node-2", ready=False)
        # p[4] becomes ready first: Kubernetes deletes the pod ready for less time first, then
        # the one with more restarts, so p[3] goes before p[4] whichever second each lands in
        await mark_running(client, p[4], node="node-4", ready=True)
        await mark_running(client, p[3], node="node-3", ready=True, restarts=3)

        async def ready_two() -> bool:
            return (await _rs_status(client, namespace, "web")).get("readyReplicas") == 2

        await wait_for(ready_two, what="readyReplicas 2")
        deleted: list[str] = []
        for size in (4, 3, 2, 1):
            before = {x["metadata"]["name"] for x in await pods(client, namespace)}
            await client.patch(rs_rt, "web", {"spec": {"replicas": size}}, namespace, subresource="scale")
            await wait_for(lambda n=size: _count(client, namespace, n), what=f"{size} pods")  # type: ignore[misc]
            after = {x["metadata"]["name"] for x in await pods(client, namespace)}
            deleted += sorted(before - after)
        assert deleted == names[:4]
        assert [x["metadata"]["name"] for x in await pods(client, namespace)] == [names[4]]
        await client.patch(rs_rt, "web", {"spec": {"replicas": 3}}, namespace, subresource="scale")
        await wait_for(lambda: _count(client, namespace, 3), what="scaled back up to 3")
        await wait_for(lambda: _has_event(client, namespace, "web", "SuccessfulDelete"), what="delete events")


class SlowPodWatchClient(Client):
    """A client whose pod watches deliver every event ``lag`` seconds late: a slow watch."""

    lag = 1.0

    async def watch(self, rt: Any, namespace: str | None = None, **kwargs: Any) -> AsyncIterator[dict[str, Any]]:
        upstream = super().watch(rt, namespace, **kwargs)
        if rt.kind != "Pod":
            async for ev in upstream:
                yield ev
            return
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[float, dict[str, Any] | None]] = asyncio.Queue()

        async def pump() -> None:
            try:
                async for ev in upstream:
                    await queue.put((loop.time() + self.lag, ev))
            finally:
                await queue.put((loop.time() + self.lag, None))

        task = loop.create_task(pump())
        try:
            while True:
                due, item = await queue.get()
                await asyncio.sleep(max(0.0, due - loop.time()))
                if item is None:
                    return
                yield item
        finally:
            task.cancel()


async def test_expectations_prevent_extra_pods_under_a_slow_watch(client: Client, namespace: str) -> None:
    rs_rt, pod_rt = client.kind("apps/v1", "ReplicaSet"), client.kind("v1", "Pod")
    created: list[str] = []
    deleted: list[str] = []
    async with SlowPodWatchClient(client.config) as slow:
        async with controller_manager(slow, namespace, ["replicaset"], workers=4) as manager:
            controller = manager.controllers["replicaset"]
            assert isinstance(controller, ReplicaSetController)

            async def observe() -> None:
                async for ev in client.watch(pod_rt, namespace, resource_version="0"):
                    name = ev["object"]["metadata"].get("name")
                    if ev["type"] == "ADDED":
                        created.append(name)
                    elif ev["type"] == "DELETED" or ev["object"]["metadata"].get("deletionTimestamp"):
                        deleted.append(name)

            watcher = asyncio.create_task(observe())
            try:
                await client.create(rs_rt, replicaset("web", 4, LABELS), namespace)
                for _ in range(60):  # resync storm while the creates are still unseen by the slow watch
                    controller.enqueue(f"{namespace}/web")
                    await asyncio.sleep(0.02)
                await wait_for(lambda: controller.expectations.satisfied(f"{namespace}/web"), what="expectations")

                async def settled() -> bool:
                    return (await _rs_status(client, namespace, "web")).get("replicas") == 4

                await wait_for(settled, what="status.replicas 4")
                for _ in range(20):
                    controller.enqueue(f"{namespace}/web")
                await asyncio.sleep(1.5)
            finally:
                watcher.cancel()
    assert len(created) == 4, created
    assert deleted == []


async def test_status_fields(client: Client, namespace: str) -> None:
    rs_rt, pod_rt = client.kind("apps/v1", "ReplicaSet"), client.kind("v1", "Pod")
    await client.create(pod_rt, {"metadata": {"name": "partial", "labels": LABELS},
                                 "spec": {"containers": [{"name": "main", "image": "minik8s/busybox"}]}}, namespace)
    body = replicaset("web", 2, LABELS, minReadySeconds=2)
    body["spec"]["template"]["metadata"]["labels"] = {**LABELS, "tier": "front"}
    async with controller_manager(client, namespace, ["replicaset"]):
        rs = await client.create(rs_rt, body, namespace)
        await wait_for(lambda: _count(client, namespace, 2), what="2 pods")

        async def status_is(**want: Any) -> bool:
            status = await _rs_status(client, namespace, "web")
            return all(status.get(k) == v for k, v in want.items())

        await wait_for(lambda: status_is(replicas=2, fullyLabeledReplicas=1, readyReplicas=0, availableReplicas=0,
                                         observedGeneration=rs["metadata"]["generation"]), what="initial status")
        for pod in await pods(client, namespace):
            await mark_running(client, pod)
        await wait_for(lambda: status_is(readyReplicas=2, availableReplicas=0), what="ready, not yet available")
        await wait_for(lambda: status_is(availableReplicas=2), timeout=8, what="available after minReadySeconds")
        updated = await client.patch(rs_rt, "web", {"spec": {"minReadySeconds": 1}}, namespace)
        await wait_for(lambda: status_is(observedGeneration=updated["metadata"]["generation"]),
                       what="observedGeneration follows")
