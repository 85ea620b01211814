"""A local-path claim end to end in real containers: the scheduler picks the node and marks the
claim, the provisioner makes the volume, the binder binds it, the kubelet mounts the directory;
data written by one pod is read by the next one; deleting the claim deletes the volume and the
kubelet removes the directory.

One real kubelet process on the real Docker Engine (the :mod:`tests.support.kubelet` harness),
the scheduler and the storage controllers in-process, the real apiserver.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from minik8s.api import errors
from minik8s.api import storage as st
from minik8s.api.base import Obj
from minik8s.client.kubeconfig import ClientConfig
from minik8s.client.rest import Client
from minik8s.controllers.manager import ControllerOptions
from minik8s.scheduler.scheduler import Scheduler
from tests.support.controllers import controller_manager
from tests.support.kubelet import BUSYBOX, KubeletProcess, exec_ws, running_kubelet, wait_phase
from tests.support.processes import APIServer
from tests.support.waiting import wait_for

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def local_path_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("local-path")


@pytest.fixture(scope="module")
def kubelet(apiserver: APIServer, tmp_path_factory: pytest.TempPathFactory,
            local_path_root: Path) -> Iterator[KubeletProcess]:
    with running_kubelet(apiserver, tmp_path_factory.mktemp("kubelet-local-path"),
                         extra=["--local-path-root", str(local_path_root)]) as k:
        yield k


def pod(name: str, scheduler: str, command: str, mounts: list[Obj]) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"schedulerName": scheduler, "terminationGracePeriodSeconds": 1,
                     "containers": [{"name": "c", "image": BUSYBOX, "command": ["sh", "-c", command],
                                     "volumeMounts": mounts}],
                     "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]}}


async def gone(client: Client, rt: object, name: str, namespace: str | None = None) -> bool:
    try:
        await client.get(rt, name, namespace)  # type: ignore[arg-type]
    except errors.NotFound:
        return True
    return False


async def test_local_path_claim_keeps_data_across_pods(kubelet: KubeletProcess, client: Client, namespace: str,
                                                       apiserver: APIServer, local_path_root: Path) -> None:
    pod_rt, pvc_rt, pv_rt = (client.kind("v1", k) for k in ("Pod", "PersistentVolumeClaim", "PersistentVolume"))
    name = f"sched-{os.urandom(3).hex()}"
    sched_client = Client(ClientConfig(server=apiserver.url))
    scheduler = Scheduler(sched_client, name, node_label_selector=f"kubernetes.io/hostname={kubelet.node}",
                          initial_backoff=0.2, max_backoff=1.0)
    task = asyncio.get_running_loop().create_task(scheduler.run())
    options = ControllerOptions(local_path_root=str(local_path_root))
    controllers = ["persistentvolume-binder", "pvc-protection", "pv-protection", "local-path-provisioner"]
    try:
        await scheduler.wait_ready(15)
        async with controller_manager(client, namespace, controllers, options=options):
            await wait_for(lambda: client.get(client.kind("storage.k8s.io/v1", "StorageClass"), st.LOCAL_PATH_CLASS),
                           what="the local-path class", not_yet=(errors.NotFound,))
            pvc = await client.create(pvc_rt, {"metadata": {"name": "data"}, "spec": {
                "accessModes": ["ReadWriteOnce"], "storageClassName": st.LOCAL_PATH_CLASS,
                "resources": {"requests": {"storage": "16Mi"}}}}, namespace)
            directory = local_path_root / f"pvc-{pvc['metadata']['uid']}"
            await client.create(pod_rt, pod("writer", name, "echo hello > /data/hello.txt && mkdir -p /data/sub && "
                                            "echo deep > /data/sub/x && sleep 3600",
                                            [{"name": "data", "mountPath": "/data"}]), namespace)
            await wait_phase(client, namespace, "writer", "Running", timeout=45)
            claim = await client.get(pvc_rt, "data", namespace)
            assert claim["metadata"]["annotations"][st.ANN_SELECTED_NODE] == kubelet.node
            assert claim["status"]["phase"] == "Bound"
            await wait_for(lambda: (directory / "sub" / "x").exists(), what="the data on the node")
            assert (directory / "hello.txt").read_text() == "hello\n"

            await client.delete(pod_rt, "writer", namespace)
            await wait_for(lambda: gone(client, pod_rt, "writer", namespace), 30, what="writer gone")
            await client.create(pod_rt, pod("reader", name, "sleep 3600",
                                            [{"name": "data", "mountPath": "/data", "readOnly": True},
                                             {"name": "data", "mountPath": "/sub", "subPath": "sub"}]), namespace)
            await wait_phase(client, namespace, "reader", "Running", timeout=45)
            out, err, status = await exec_ws(apiserver, namespace, "reader", "c",
                                              ["sh", "-c", "cat /data/hello.txt /sub/x; touch /data/ro 2>&1 || true"])
            assert status.get("status") == "Success", (out, err, status)
            text = out.decode()
            assert text.startswith("hello\ndeep\n") and "Read-only file system" in text, text

            await client.delete(pod_rt, "reader", namespace)
            await wait_for(lambda: gone(client, pod_rt, "reader", namespace), 30, what="reader gone")
            await client.delete(pvc_rt, "data", namespace)
            await wait_for(lambda: gone(client, pv_rt, f"pvc-{pvc['metadata']['uid']}"), 20, what="volume deleted")
            await wait_for(lambda: not directory.exists(), 20, what="the directory removed by the kubelet")
    finally:
        for p in ("writer", "reader"):
            try:
                await client.delete(pod_rt, p, namespace, grace_period_seconds=0)
            except errors.NotFound:
                pass
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await sched_client.close()


async def test_pod_waits_for_its_claim_with_failed_mount(kubelet: KubeletProcess, client: Client, namespace: str,
                                                         tmp_path: Path) -> None:
    pod_rt, pvc_rt, pv_rt = (client.kind("v1", k) for k in ("Pod", "PersistentVolumeClaim", "PersistentVolume"))
    body = pod("waiter", "default-scheduler", "cat /data/seed && sleep 3600", [{"name": "data", "mountPath": "/data"}])
    body["spec"]["nodeName"] = kubelet.node
    body["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"] = "later"
    await client.create(pod_rt, body, namespace)
    pv_name = f"pv-{os.urandom(3).hex()}"
    (tmp_path / "seed").write_text("seeded\n")
    try:
        async def failed_mount() -> bool:
            events = (await client.list(client.kind("v1", "Event"), namespace))["items"]
            return any(e.get("reason") == "FailedMount" and 'persistentvolumeclaim "later" not found'
                       in (e.get("message") or "") for e in events)
        await wait_for(failed_mount, 20, what="FailedMount for the missing claim")
        async with controller_manager(client, namespace, ["persistentvolume-binder", "pvc-protection",
                                                          "pv-protection"]):
            await client.create(pv_rt, {"metadata": {"name": pv_name}, "spec": {
                "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "",
                "hostPath": {"path": str(tmp_path)}}})
            await client.create(pvc_rt, {"metadata": {"name": "later"}, "spec": {
                "accessModes": ["ReadWriteOnce"], "storageClassName": "",
                "resources": {"requests": {"storage": "1Gi"}}}}, namespace)
            await wait_phase(client, namespace, "waiter", "Running", timeout=30)
            await client.delete(pod_rt, "waiter", namespace)
            await wait_for(lambda: gone(client, pod_rt, "waiter", namespace), 30, what="waiter gone")
            await client.delete(pvc_rt, "later", namespace)
            await wait_for(lambda: gone(client, pvc_rt, "later", namespace), 20, what="claim gone")
        assert (tmp_path / "seed").read_text() == "seeded\n"  # Retain: a static volume's data stays
    finally:
        try:
            await client.delete(pod_rt, "waiter", namespace, grace_period_seconds=0)
        except errors.NotFound:
            pass
        try:
            await client.patch(pv_rt, pv_name, {"metadata": {"finalizers": []}})
            await client.delete(pv_rt, pv_name)
        except errors.NotFound:
            pass


@contextlib.asynccontextmanager
async def local_path_cluster(kubelet: KubeletProcess, client: Client, namespace: str, apiserver: APIServer,
                             local_path_root: Path) -> AsyncIterator[str]:
    """A scheduler of the kubelet's node and the storage controllers; yields the scheduler's name."""
    name = f"sched-{os.urandom(3).hex()}"
    sched_client = Client(ClientConfig(server=apiserver.url))
    scheduler = Scheduler(sched_client, name, node_label_selector=f"kubernetes.io/hostname={kubelet.node}",
                          initial_backoff=0.2, max_backoff=1.0)
    task = asyncio.get_running_loop().create_task(scheduler.run())
    options = ControllerOptions(local_path_root=str(local_path_root))
    controllers = ["persistentvolume-binder", "pvc-protection", "pv-protection", "local-path-provisioner"]
    try:
        await scheduler.wait_ready(15)
        async with controller_manager(client, namespace, controllers, options=options):
            await wait_for(lambda: client.get(client.kind("storage.k8s.io/v1", "StorageClass"), st.LOCAL_PATH_CLASS),
                           what="the local-path class", not_yet=(errors.NotFound,))
            yield name
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await sched_client.close()


async def test_non_root_pods_write_their_local_path_claims(kubelet: KubeletProcess, client: Client, namespace: str,
                                                           apiserver: APIServer, local_path_root: Path) -> None:
    """Issue 25: a pod running as uid 1000, with or without ``fsGroup``, writes its new local-path
    claim: the directory is made world-writable (0777), as Rancher's local-path-provisioner makes it;
    ``fsGroup`` changes nothing on it (local-path volumes are hostPath, which Kubernetes does not chown)."""
    pod_rt, pvc_rt = client.kind("v1", "Pod"), client.kind("v1", "PersistentVolumeClaim")
    contexts = {"uid-only": {"runAsUser": 1000}, "with-fsgroup": {"runAsUser": 1000, "runAsGroup": 3000,
                                                                   "fsGroup": 2000}}
    async with local_path_cluster(kubelet, client, namespace, apiserver, local_path_root) as scheduler:
        directories = {}
        for name, context in contexts.items():
            pvc = await client.create(pvc_rt, {"metadata": {"name": name}, "spec": {
                "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "16Mi"}}}}, namespace)
            directories[name] = local_path_root / f"pvc-{pvc['metadata']['uid']}"
            await client.create(pod_rt, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {
                "schedulerName": scheduler, "restartPolicy": "Never", "terminationGracePeriodSeconds": 1,
                "securityContext": context,
                "containers": [{"name": "c", "image": BUSYBOX, "command": [
                    "sh", "-c", "echo written > /data/file && mkdir /data/sub && echo deep > /data/sub/file"],
                    "volumeMounts": [{"name": "data", "mountPath": "/data"}]}],
                "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": name}}]}}, namespace)
        for name in contexts:
            async def finished(pod_name: str = name) -> Obj | None:
                pod = await client.get(pod_rt, pod_name, namespace)
                return pod if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed") else None
            pod = await wait_for(finished, 60, what=f"pod {name} finished")
            assert pod["status"]["phase"] == "Succeeded", (name, pod["status"])
            directory = directories[name]
            assert stat.S_IMODE(directory.stat().st_mode) == 0o777, oct(directory.stat().st_mode)
            assert (directory / "file").read_text() == "written\n"
            assert (directory / "sub" / "file").stat().st_uid == 1000
        # not chowned to the fsGroup: the files keep the pod's own uid and gid
        assert (directories["with-fsgroup"] / "file").stat().st_gid == 3000
