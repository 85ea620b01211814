"""The garbage collector against a real apiserver: Background, Foreground and Orphan propagation."""

from __future__ import annotations

import asyncio
from typing import Any

from minik8s.api import errors
from minik8s.client.rest import Client
from tests.support.controllers import SimulatedNode, controller_manager, deployment, owner_uids, pods, replicaset
from tests.support.waiting import wait_for

LABELS = {"app": "web"}


def _owned_pod(name: str, *owners: dict[str, Any], block: bool = True) -> dict[str, Any]:
    refs = [{"apiVersion": o["apiVersion"], "kind": o["kind"], "name": o["metadata"]["name"],
             "uid": o["metadata"]["uid"], "blockOwnerDeletion": block} for o in owners]
    return {"metadata": {"name": name, "labels": {"app": "unrelated"}, "ownerReferences": refs},
            "spec": {"containers": [{"name": "main", "image": "minik8s/busybox"}]}}


async def _exists(client: Client, kind: tuple[str, str], ns: str, name: str) -> bool:
    try:
        await client.get(client.kind(*kind), name, ns)
    except errors.NotFound:
        return False
    return True


async def _gone(client: Client, kind: tuple[str, str], ns: str, name: str) -> bool:
    return not await _exists(client, kind, ns, name)


POD = ("v1", "Pod")
RS = ("apps/v1", "ReplicaSet")
DEPLOY = ("apps/v1", "Deployment")


async def test_background_deletes_dependents_by_owner_uid(client: Client, namespace: str) -> None:
    rs_rt, pod_rt = client.kind(*RS), client.kind(*POD)
    async with controller_manager(client, namespace, ["garbagecollector"]):
        owner = await client.create(rs_rt, replicaset("owner", 0, LABELS), namespace)
        other = await client.create(rs_rt, replicaset("other", 0, {"app": "other"}), namespace)
        await client.create(pod_rt, _owned_pod("only-child", owner), namespace)
        await client.create(pod_rt, _owned_pod("shared-child", owner, other), namespace)
        await client.delete(rs_rt, "owner", namespace)  # Background (the default)
        # a new object with the old name is a different owner: it must not save the dependents
        await client.create(rs_rt, replicaset("owner", 0, LABELS), namespace)
        await wait_for(lambda: _gone(client, POD, namespace, "only-child"), what="dependent deleted")

        async def ref_dropped() -> bool:
            pod = await client.get(pod_rt, "shared-child", namespace)
            return owner_uids(pod) == [other["metadata"]["uid"]]

        await wait_for(ref_dropped, what="reference to the deleted owner removed")
        await asyncio.sleep(0.5)
        assert await _exists(client, POD, namespace, "shared-child")  # still has a live owner


async def test_background_cascades_from_deployment_to_pods(client: Client, namespace: str) -> None:
    d_rt = client.kind(*DEPLOY)
    async with controller_manager(client, namespace):
        await client.create(d_rt, deployment("web", 2, LABELS), namespace)
        await wait_for(lambda: _pod_count(client, namespace, 2), what="2 pods")
        await client.delete(d_rt, "web", namespace)
        await wait_for(lambda: _pod_count(client, namespace, 0, live_only=False), what="pods collected")
        assert (await client.list(client.kind(*RS), namespace))["items"] == []


async def _pod_count(client: Client, ns: str, n: int, live_only: bool = True) -> bool:
    return len(await pods(client, ns, live_only=live_only)) == n


async def test_foreground_removes_owner_after_its_dependents(client: Client, namespace: str) -> None:
    d_rt, rs_rt, pod_rt = client.kind(*DEPLOY), client.kind(*RS), client.kind(*POD)
    order: list[str] = []
    async with SimulatedNode(client, namespace, termination_delay=0.5), controller_manager(client, namespace):
        await client.create(d_rt, deployment("web", 2, LABELS), namespace)

        async def running() -> bool:
            phases = [(p.get("status") or {}).get("phase") for p in await pods(client, namespace)]
            return phases.count("Running") == 2

        await wait_for(running, what="2 running pods")

        async def watch(rt: Any) -> None:
            async for ev in client.watch(rt, namespace):
                if ev["type"] == "DELETED":
                    order.append(f'{ev["object"]["kind"]}/{ev["object"]["metadata"]["name"]}')

        watchers = [asyncio.create_task(watch(rt)) for rt in (d_rt, rs_rt, pod_rt)]
        await asyncio.sleep(0.3)
        try:
            await client.delete(d_rt, "web", namespace, propagation_policy="Foreground")
            d = await client.get(d_rt, "web", namespace)
            assert d["metadata"]["deletionTimestamp"] and "foregroundDeletion" in d["metadata"]["finalizers"]
            await wait_for(lambda: _gone(client, DEPLOY, namespace, "web"), timeout=20, what="deployment gone")
            await asyncio.sleep(0.3)
        finally:
            for w in watchers:
                w.cancel()
    kinds = [entry.split("/")[0] for entry in order]
    assert kinds == ["Pod", "Pod", "ReplicaSet", "Deployment"], order  # dependents first, owner last
    assert await pods(client, namespace, live_only=False) == []


async def test_orphan_keeps_dependents_without_the_reference(client: Client, namespace: str) -> None:
    rs_rt = client.kind(*RS)
    async with controller_manager(client, namespace, ["replicaset", "garbagecollector"]):
        rs = await client.create(rs_rt, replicaset("web", 2, LABELS), namespace)
        await wait_for(lambda: _pod_count(client, namespace, 2), what="2 pods")
        names = sorted(p["metadata"]["name"] for p in await pods(client, namespace))
        await client.delete(rs_rt, "web", namespace, propagation_policy="Orphan")
        await wait_for(lambda: _gone(client, RS, namespace, "web"), what="replicaset gone")
        remaining = await pods(client, namespace)
        assert sorted(p["metadata"]["name"] for p in remaining) == names
        assert all(rs["metadata"]["uid"] not in owner_uids(p) for p in remaining)
        assert all(not p["metadata"].get("ownerReferences") for p in remaining)
        await asyncio.sleep(0.5)
        assert len(await pods(client, namespace)) == 2  # nobody collects orphans


def _crd(group: str) -> dict[str, Any]:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"widgets.{group}"},
            "spec": {"group": group, "scope": "Namespaced",
                     "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                         "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}


async def test_custom_resources_own_and_are_owned(client: Client, namespace: str) -> None:
    """A CRD Established while the collector runs: a custom resource's dependents go with it
    (Background and Foreground), and a custom resource whose owner is gone is collected."""
    group = f"gc{namespace.replace('-', '')}.example.com"
    crd_rt = client.kind("apiextensions.k8s.io/v1", "CustomResourceDefinition")
    cm_rt = client.kind("v1", "ConfigMap")
    async with controller_manager(client, namespace, ["garbagecollector"]):
        await client.create(crd_rt, _crd(group))

        async def widget_rt() -> Any:
            try:
                return await client.discover_kind(f"{group}/v1", "Widget")
            except errors.NotFound:
                return None

        w_rt = await wait_for(widget_rt, what="the Widget kind served")
        try:
            def child(name: str, owner: dict[str, Any]) -> dict[str, Any]:
                ref = {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": owner["metadata"]["name"],
                       "uid": owner["metadata"]["uid"], "blockOwnerDeletion": True}
                return {"metadata": {"name": name, "ownerReferences": [ref]}, "data": {}}

            # a custom resource owns a ConfigMap: Background
            owner = await client.create(w_rt, {"apiVersion": f"{group}/v1", "kind": "Widget",
                                               "metadata": {"name": "w1"}}, namespace)
            await client.create(cm_rt, child("of-w1", owner), namespace)
            await client.delete(w_rt, "w1", namespace)
            await wait_for(lambda: _gone(client, ("v1", "ConfigMap"), namespace, "of-w1"),
                           what="the custom resource's dependent collected")

            # Foreground: the custom resource waits for its dependent, then goes
            owner = await client.create(w_rt, {"apiVersion": f"{group}/v1", "kind": "Widget",
                                               "metadata": {"name": "w2"}}, namespace)
            await client.create(cm_rt, child("of-w2", owner), namespace)
            await client.delete(w_rt, "w2", namespace, propagation_policy="Foreground")
            await wait_for(lambda: _gone(client, (f"{group}/v1", "Widget"), namespace, "w2"),
                           what="the Foreground owner removed after its dependent")
            assert await _gone(client, ("v1", "ConfigMap"), namespace, "of-w2")

            # a ConfigMap owns a custom resource
            cm = await client.create(cm_rt, {"metadata": {"name": "parent"}, "data": {}}, namespace)
            await client.create(w_rt, {"apiVersion": f"{group}/v1", "kind": "Widget",
                                       **child("w3", {"apiVersion": "v1", "kind": "ConfigMap", **cm})}, namespace)
            await client.delete(cm_rt, "parent", namespace)
            await wait_for(lambda: _gone(client, (f"{group}/v1", "Widget"), namespace, "w3"),
                           what="the custom resource whose owner is gone collected")
        finally:
            await client.delete(crd_rt, f"widgets.{group}")
