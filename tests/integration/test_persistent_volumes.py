"""PersistentVolumes and claims against a real etcd + apiserver: the binder, protection
finalizers, reclaim, the local-path provisioner and the scheduler's VolumeBinding step
(controllers and scheduler in-process; pods are simulated over the API, no kubelet)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from minik8s.api import errors
from minik8s.api import storage as st
from minik8s.api.base import Obj
from minik8s.client.kubeconfig import ClientConfig
from minik8s.client.rest import Client
from minik8s.controllers.manager import ControllerOptions
from minik8s.scheduler.scheduler import Scheduler
from tests.support.controllers import controller_manager, events_for, mark_running
from tests.support.kubectl import Kubectl
from tests.support.processes import APIServer
from tests.support.waiting import wait_for

STORAGE = ["persistentvolume-binder", "pvc-protection", "pv-protection"]


def volume(name: str, size: str, cls: str = "", policy: str = "Retain", **spec: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
            "spec": {"capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"], "storageClassName": cls,
                     "persistentVolumeReclaimPolicy": policy, "hostPath": {"path": f"/tmp/minik8s-test/{name}"},
                     **spec}}


def claim(name: str, size: str = "1Gi", cls: str | None = "", **spec: Any) -> Obj:
    body: Obj = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}, **spec}
    if cls is not None:
        body["storageClassName"] = cls
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name}, "spec": body}


def pod_using(name: str, claim_name: str, scheduler: str | None = None) -> Obj:
    spec: Obj = {"containers": [{"name": "main", "image": "minik8s/busybox", "command": ["sleep", "3600"]}],
                 "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim_name}}]}
    if scheduler:
        spec["schedulerName"] = scheduler
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


class Kinds:
    def __init__(self, client: Client) -> None:
        self.pv = client.kind("v1", "PersistentVolume")
        self.pvc = client.kind("v1", "PersistentVolumeClaim")
        self.sc = client.kind("storage.k8s.io/v1", "StorageClass")
        self.pod = client.kind("v1", "Pod")
        self.node = client.kind("v1", "Node")


async def gone(client: Client, rt: Any, name: str, namespace: str | None = None) -> bool:
    try:
        await client.get(rt, name, namespace)
    except errors.NotFound:
        return True
    return False


async def phase(client: Client, rt: Any, name: str, namespace: str | None = None) -> str:
    return str(((await client.get(rt, name, namespace)).get("status") or {}).get("phase") or "")


@pytest.fixture
def uid() -> str:
    return os.urandom(3).hex()


async def test_binding_phases_retain_and_lost(client: Client, namespace: str, uid: str) -> None:
    k = Kinds(client)
    names = [f"pv-{uid}-{s}" for s in ("big", "small", "other")]
    created = await client.create(k.pv, volume(names[0], "10Gi", "manual-" + uid))
    assert created["status"] == {"phase": "Pending"}
    assert created["metadata"]["finalizers"] == [st.PV_PROTECTION_FINALIZER]
    assert created["spec"]["volumeMode"] == "Filesystem"
    await client.create(k.pv, volume(names[1], "2Gi", "manual-" + uid))
    await client.create(k.pv, volume(names[2], "1Gi", "other-" + uid))
    try:
        async with controller_manager(client, namespace, STORAGE):
            await wait_for(lambda: _is(phase(client, k.pv, names[1]), "Available"), what="volume Available")
            pvc = await client.create(k.pvc, claim("data", "1Gi", "manual-" + uid), namespace)
            assert pvc["metadata"]["finalizers"] == [st.PVC_PROTECTION_FINALIZER]
            await wait_for(lambda: _is(phase(client, k.pvc, "data", namespace), "Bound"), what="claim Bound")
            bound = await client.get(k.pvc, "data", namespace)
            assert bound["spec"]["volumeName"] == names[1]  # the smallest that fits
            assert bound["status"]["capacity"] == {"storage": "2Gi"}
            assert bound["status"]["accessModes"] == ["ReadWriteOnce"]
            assert bound["metadata"]["annotations"][st.ANN_BIND_COMPLETED] == "yes"
            pv = await client.get(k.pv, names[1])
            assert pv["status"]["phase"] == "Bound"
            assert pv["spec"]["claimRef"]["name"] == "data" and pv["spec"]["claimRef"]["uid"] == pvc["metadata"]["uid"]
            # a claim nothing fits stays Pending; its class is no StorageClass object, so (as in
            # Kubernetes) provisioning fails
            await client.create(k.pvc, claim("huge", "50Gi", "manual-" + uid), namespace)
            await wait_for(lambda: _has_event(client, namespace, "huge", "ProvisioningFailed",
                                              f'storageclass.storage.k8s.io "manual-{uid}" not found'),
                           what="ProvisioningFailed")
            assert await phase(client, k.pvc, "huge", namespace) == "Pending"
            # Retain: the claim goes, the volume stays Released with its claimRef
            await client.delete(k.pvc, "data", namespace)
            await wait_for(lambda: gone(client, k.pvc, "data", namespace), what="claim gone")
            await wait_for(lambda: _is(phase(client, k.pv, names[1]), "Released"), what="volume Released")
            assert (await client.get(k.pv, names[1]))["spec"]["claimRef"]["name"] == "data"
            # Lost: a bound claim whose volume disappears
            await client.create(k.pvc, claim("lost", "1Gi", "other-" + uid), namespace)
            await wait_for(lambda: _is(phase(client, k.pvc, "lost", namespace), "Bound"), what="claim Bound")
            await client.delete(k.pv, names[2])
            live = await client.get(k.pv, names[2])  # Bound: pv-protection holds it
            assert live["metadata"]["deletionTimestamp"] and live["status"]["phase"] == "Bound"
            await client.patch(k.pv, names[2], {"metadata": {"finalizers": []}})
            await wait_for(lambda: _is(phase(client, k.pvc, "lost", namespace), "Lost"), what="claim Lost")
            await wait_for(lambda: _has_event(client, namespace, "lost", "ClaimLost"), what="ClaimLost")
    finally:
        await _drop_claims(client, namespace)
        for name in names:
            await _force_delete(client, k.pv, name)


async def test_protection_and_delete_reclaim(client: Client, namespace: str, uid: str) -> None:
    k = Kinds(client)
    name = f"pv-{uid}"
    await client.create(k.pv, volume(name, "1Gi", "del-" + uid, policy="Delete"))
    try:
        async with controller_manager(client, namespace, STORAGE):
            await client.create(k.pvc, claim("used", "1Gi", "del-" + uid), namespace)
            await wait_for(lambda: _is(phase(client, k.pvc, "used", namespace), "Bound"), what="claim Bound")
            pod = await client.create(k.pod, pod_using("user", "used"), namespace)
            await mark_running(client, pod)
            await client.delete(k.pvc, "used", namespace)
            await client.delete(k.pv, name)
            # A probe claim deleted after them, used by nobody, goes: the controllers have seen
            # the deletions, and the used claim and its Bound volume are still there.
            await client.create(k.pvc, claim("probe", "1Gi", "none-" + uid), namespace)
            await client.delete(k.pvc, "probe", namespace)
            await wait_for(lambda: gone(client, k.pvc, "probe", namespace), what="probe gone")
            used = await client.get(k.pvc, "used", namespace)
            assert used["metadata"]["deletionTimestamp"] and used["metadata"]["finalizers"] == \
                [st.PVC_PROTECTION_FINALIZER]
            assert (await client.get(k.pv, name))["status"]["phase"] == "Bound"
            # the pod goes: the claim goes, the volume is Released and, reclaim policy Delete, deleted
            await client.delete(k.pod, "user", namespace, grace_period_seconds=0)
            await wait_for(lambda: gone(client, k.pvc, "used", namespace), what="claim gone")
            await wait_for(lambda: gone(client, k.pv, name), what="volume deleted")
    finally:
        await _drop_claims(client, namespace)
        await _force_delete(client, k.pv, name)


async def test_local_path_provisioning_and_default_class(client: Client, namespace: str, uid: str,
                                                         tmp_path: Path) -> None:
    k = Kinds(client)
    options = ControllerOptions(local_path_root=str(tmp_path))
    async with controller_manager(client, namespace, [*STORAGE, "local-path-provisioner"], options=options):
        sc = await wait_for(lambda: client.get(k.sc, st.LOCAL_PATH_CLASS), what="the local-path class",
                            not_yet=(errors.NotFound,))
        assert sc["provisioner"] == st.LOCAL_PATH_PROVISIONER and sc["reclaimPolicy"] == "Delete"
        assert sc["volumeBindingMode"] == "WaitForFirstConsumer"
        assert sc["metadata"]["annotations"][st.ANN_DEFAULT_CLASS] == "true"
        pvc = await client.create(k.pvc, claim("lp", "64Mi", cls=None), namespace)
        assert pvc["spec"]["storageClassName"] == st.LOCAL_PATH_CLASS  # DefaultStorageClass admission
        await wait_for(lambda: _has_event(client, namespace, "lp", "WaitForFirstConsumer"), what="waiting event")
        assert await phase(client, k.pvc, "lp", namespace) == "Pending"
        # what the scheduler does when it places the claim's first pod
        await client.patch(k.pvc, "lp", {"metadata": {"annotations": {st.ANN_SELECTED_NODE: f"node-{uid}"}}},
                           namespace)
        await wait_for(lambda: _is(phase(client, k.pvc, "lp", namespace), "Bound"), what="claim Bound")
        pv_name = f"pvc-{pvc['metadata']['uid']}"
        pv = await client.get(k.pv, pv_name)
        assert pv["spec"]["hostPath"] == {"path": f"{tmp_path}/{pv_name}", "type": "DirectoryOrCreate"}
        assert pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == \
            [f"node-{uid}"]
        assert pv["spec"]["persistentVolumeReclaimPolicy"] == "Delete" and pv["spec"]["capacity"] == \
            {"storage": "64Mi"}
        assert pv["metadata"]["annotations"][st.ANN_PROVISIONED_BY] == st.LOCAL_PATH_PROVISIONER
        assert await _has_event(client, namespace, "lp", "ProvisioningSucceeded")
        await client.delete(k.pvc, "lp", namespace)
        await wait_for(lambda: gone(client, k.pv, pv_name), what="the provisioned volume deleted")


async def test_scheduler_waits_for_immediate_claims_and_selects_nodes(apiserver: APIServer, client: Client,
                                                                      namespace: str, uid: str) -> None:
    k = Kinds(client)
    group = f"vb-{uid}"
    nodes = [f"n-{uid}-a", f"n-{uid}-b"]
    for n in nodes:
        await client.create(k.node, {"apiVersion": "v1", "kind": "Node", "metadata": {
            "name": n, "labels": {"kubernetes.io/hostname": n, "vb-test": group}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}})
    await client.create(k.sc, {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                               "metadata": {"name": f"wffc-{uid}"}, "provisioner": st.NO_PROVISIONER,
                               "volumeBindingMode": "WaitForFirstConsumer"})
    sched_client = Client(ClientConfig(server=apiserver.url))
    scheduler = Scheduler(sched_client, f"sched-{uid}", node_label_selector=f"vb-test={group}",
                          initial_backoff=0.2, max_backoff=1.0)
    task = asyncio.get_running_loop().create_task(scheduler.run())
    pv_names = [f"pv-{uid}-imm", f"pv-{uid}-local"]
    try:
        await scheduler.wait_ready(15)
        async with controller_manager(client, namespace, STORAGE):
            # an unbound claim of no class (Immediate): the pod waits with Kubernetes' message
            await client.create(k.pvc, claim("imm", "1Gi", f"imm-{uid}"), namespace)
            await client.create(k.pod, pod_using("p1", "imm", f"sched-{uid}"), namespace)
            await wait_for(lambda: _has_event(client, namespace, "p1", "FailedScheduling",
                                              "pod has unbound immediate PersistentVolumeClaims"),
                           what="FailedScheduling")
            # a volume pinned to node b appears: the claim binds and the pod goes to b
            await client.create(k.pv, volume(pv_names[0], "1Gi", f"imm-{uid}", nodeAffinity=_on(nodes[1])))
            await wait_for(lambda: _node_of(client, k, namespace, "p1"), timeout=20, what="p1 scheduled")
            assert await _node_of(client, k, namespace, "p1") == nodes[1]
            # WaitForFirstConsumer: the node with a fitting local volume is chosen and written on the claim
            await client.create(k.pv, volume(pv_names[1], "1Gi", f"wffc-{uid}", nodeAffinity=_on(nodes[0])))
            await client.create(k.pvc, claim("late", "1Gi", f"wffc-{uid}"), namespace)
            await client.create(k.pod, pod_using("p2", "late", f"sched-{uid}"), namespace)
            await wait_for(lambda: _node_of(client, k, namespace, "p2"), what="p2 scheduled")
            assert await _node_of(client, k, namespace, "p2") == nodes[0]
            late = await client.get(k.pvc, "late", namespace)
            assert late["metadata"]["annotations"][st.ANN_SELECTED_NODE] == nodes[0]
            await wait_for(lambda: _is(phase(client, k.pvc, "late", namespace), "Bound"), what="late Bound")
            assert (await client.get(k.pvc, "late", namespace))["spec"]["volumeName"] == pv_names[1]
            for p in ("p1", "p2"):
                await client.delete(k.pod, p, namespace, grace_period_seconds=0)
    finally:
        await _drop_claims(client, namespace)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await sched_client.close()
        for n in nodes:
            await _force_delete(client, k.node, n)
        await _force_delete(client, k.sc, f"wffc-{uid}")
        for name in pv_names:
            await _force_delete(client, k.pv, name)


# ---------------------------------------------------------------------------- helpers
async def _is(value: Any, expected: str) -> bool:
    return bool(await value == expected)


def _on(node: str) -> Obj:
    return {"required": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}}


async def _node_of(client: Client, k: Kinds, namespace: str, name: str) -> str:
    return str(((await client.get(k.pod, name, namespace)).get("spec") or {}).get("nodeName") or "")


async def _has_event(client: Client, namespace: str, name: str, reason: str, text: str = "") -> bool:
    return any(e.get("reason") == reason and text in (e.get("message") or "")
               for e in await events_for(client, namespace, name))


async def _drop_claims(client: Client, namespace: str) -> None:
    """Remove the test's claims whatever their finalizers (the namespace is deleted next)."""
    rt = client.kind("v1", "PersistentVolumeClaim")
    for item in (await client.list(rt, namespace))["items"]:
        try:
            await client.patch(rt, item["metadata"]["name"], {"metadata": {"finalizers": []}}, namespace)
            await client.delete(rt, item["metadata"]["name"], namespace)
        except errors.NotFound:
            pass


async def _force_delete(client: Client, rt: Any, name: str) -> None:
    """Remove a cluster-scoped test object whatever its finalizers."""
    try:
        await client.patch(rt, name, {"metadata": {"finalizers": []}})
        await client.delete(rt, name)
    except errors.NotFound:
        pass


async def test_kubectl_get_and_describe(client: Client, namespace: str, uid: str, kubectl: Kubectl) -> None:
    k = Kinds(client)
    name = f"pv-{uid}"
    await client.create(k.pv, volume(name, "3Gi", f"k-{uid}"))
    try:
        await client.create(k.pvc, claim("shown", "1Gi", f"k-{uid}"), namespace)
        out = kubectl.ok("get", "pv,pvc,sc").out
        heads = [line for line in out.splitlines() if line.startswith("NAME")]
        assert heads[0].split() == ["NAME", "CAPACITY", "ACCESS", "MODES", "RECLAIM", "POLICY", "STATUS", "CLAIM",
                                    "STORAGECLASS", "VOLUMEATTRIBUTESCLASS", "REASON", "AGE"]
        assert heads[1].split() == ["NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS", "MODES", "STORAGECLASS",
                                    "VOLUMEATTRIBUTESCLASS", "AGE"]
        row = next(line for line in out.splitlines() if line.startswith(f"persistentvolume/{name}"))
        assert row.split()[1:6] == ["3Gi", "RWO", "Retain", "Pending", f"k-{uid}"]
        assert "persistentvolumeclaim/shown   Pending" in out
        bad = kubectl("create", "-f", "-", stdin=json.dumps(claim("bad", "0", "x")))
        assert bad.code == 1 and "spec.resources[storage]: Invalid value: \"0\": must be greater than zero" in bad.err
        assert "Name:" in kubectl.ok("describe", "pvc", "shown").out
    finally:
        await _drop_claims(client, namespace)
        await _force_delete(client, k.pv, name)


def _official_client_flow(url: str, namespace: str, uid: str) -> None:
    from kubernetes import client as k8s

    cfg = k8s.Configuration()
    cfg.host = url
    api_client = k8s.ApiClient(cfg)
    core, storage = k8s.CoreV1Api(api_client), k8s.StorageV1Api(api_client)
    sc = storage.create_storage_class(k8s.V1StorageClass(metadata=k8s.V1ObjectMeta(name=f"official-{uid}"),
                                                         provisioner="example.com/official"))
    assert sc.reclaim_policy == "Delete" and sc.volume_binding_mode == "Immediate"
    pv = core.create_persistent_volume(k8s.V1PersistentVolume(
        metadata=k8s.V1ObjectMeta(name=f"official-{uid}"),
        spec=k8s.V1PersistentVolumeSpec(capacity={"storage": "1Gi"}, access_modes=["ReadWriteOnce"],
                                        host_path=k8s.V1HostPathVolumeSource(path="/tmp/official"))))
    assert pv.status.phase == "Pending" and pv.spec.persistent_volume_reclaim_policy == "Retain"
    pvc = core.create_namespaced_persistent_volume_claim(namespace, k8s.V1PersistentVolumeClaim(
        metadata=k8s.V1ObjectMeta(name="official"),
        spec=k8s.V1PersistentVolumeClaimSpec(access_modes=["ReadWriteOnce"], storage_class_name="",
                                             resources=k8s.V1VolumeResourceRequirements(
                                                 requests={"storage": "1Gi"}))))
    assert pvc.status.phase == "Pending" and pvc.metadata.finalizers == [st.PVC_PROTECTION_FINALIZER]
    assert f"official-{uid}" in [v.metadata.name for v in core.list_persistent_volume().items]
    assert [c.metadata.name for c in core.list_namespaced_persistent_volume_claim(namespace).items] == ["official"]
    assert f"official-{uid}" in [c.metadata.name for c in storage.list_storage_class().items]
    storage.delete_storage_class(f"official-{uid}")


async def test_official_client_reads_storage_kinds(apiserver: APIServer, client: Client, namespace: str,
                                                   uid: str) -> None:
    try:
        await asyncio.to_thread(_official_client_flow, apiserver.url, namespace, uid)
    finally:
        await _drop_claims(client, namespace)
        await _force_delete(client, client.kind("v1", "PersistentVolume"), f"official-{uid}")
