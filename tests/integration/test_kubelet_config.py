"""ConfigMaps and Secrets reach real containers: volumes (atomic updates, modes, read-only,
subPath), env ``valueFrom``/``envFrom``, and a missing object that blocks and then recovers.

One real kubelet process on the real Docker Engine against the real apiserver (the
:mod:`tests.integration.test_kubelet` harness); commands run in the containers through the
apiserver's exec subresource.
"""

from __future__ import annotations

import base64
import stat

import pytest

from minik8s.client.rest import Client
from tests.support.kubelet import (
    BUSYBOX,
    KubeletProcess,
    create_pod,
    cstatus,
    events_of,
    exec_ws,
    get_pod,
    pod_body,
    wait_phase,
)
from tests.support.processes import APIServer
from tests.support.waiting import wait_for

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def kubelet_flags() -> list[str]:
    """This module's kubelet runs without the node labels and taint of the conftest's default."""
    return []


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


async def sh(apiserver: APIServer, ns: str, pod: str, script: str, container: str = "c") -> str:
    out, err, status = await exec_ws(apiserver, ns, pod, container, ["sh", "-c", script])
    assert status.get("status") == "Success", (script, out, err, status)
    return out.decode()


async def test_volumes_and_env_from_config_maps_and_secrets(kubelet: KubeletProcess, client: Client,
                                                            namespace: str, apiserver: APIServer) -> None:
    cm_rt, secret_rt = client.resource("configmaps"), client.resource("secrets")
    await client.create(cm_rt, {"metadata": {"name": "app"}, "data": {"app.conf": "version=1\n", "MODE": "fast"},
                                "binaryData": {"blob": base64.b64encode(b"\x00\x01\x02").decode()}}, namespace)
    await client.create(secret_rt, {"metadata": {"name": "creds"}, "stringData": {"user": "admin", "pass": "s3cr3t"}},
                        namespace)
    body = pod_body("consumer", kubelet.node, [{
        "name": "c", "image": BUSYBOX, "command": ["sleep", "3600"],
        "env": [{"name": "APP_MODE", "valueFrom": {"configMapKeyRef": {"name": "app", "key": "MODE"}}},
                {"name": "DB_PASS", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "pass"}}},
                {"name": "MISSING_OK", "valueFrom": {"configMapKeyRef": {"name": "nope", "key": "k",
                                                                         "optional": True}}}],
        "envFrom": [{"secretRef": {"name": "creds"}, "prefix": "CREDS_"}],
        "volumeMounts": [{"name": "cfg", "mountPath": "/etc/app"},
                         {"name": "sec", "mountPath": "/etc/creds", "readOnly": False},
                         {"name": "cfg", "mountPath": "/etc/pinned.conf", "subPath": "app.conf"}]}],
        volumes=[{"name": "cfg", "configMap": {"name": "app"}},
                 {"name": "sec", "secret": {"secretName": "creds", "defaultMode": 0o400,
                                            "items": [{"key": "pass", "path": "db/password"}]}}])
    created = await create_pod(client, namespace, body)
    assert created["spec"]["volumes"][0]["configMap"]["defaultMode"] == 0o644
    await wait_phase(client, namespace, "consumer", "Running", 60)

    env = await sh(apiserver, namespace, "consumer", "env")
    assert "APP_MODE=fast" in env and "DB_PASS=s3cr3t" in env
    assert "CREDS_user=admin" in env and "CREDS_pass=s3cr3t" in env and "MISSING_OK" not in env
    files = await sh(apiserver, namespace, "consumer",
                     "cat /etc/app/app.conf; ls /etc/app; od -An -tx1 /etc/app/blob; cat /etc/creds/db/password; "
                     "echo; stat -L -c %a /etc/app/MODE /etc/creds/db/password; cat /etc/pinned.conf")
    assert files.split() == ["version=1", "MODE", "app.conf", "blob", "00", "01", "02", "s3cr3t", "644", "400",
                             "version=1"]
    ro = await exec_ws(apiserver, namespace, "consumer", "c", ["sh", "-c", "touch /etc/creds/x"])
    assert ro[2].get("status") == "Failure" and b"Read-only file system" in ro[1]

    uid = created["metadata"]["uid"]
    secret_plugin = kubelet.root / "pods" / uid / "volumes" / "kubernetes.io~secret"
    assert stat.S_IMODE(secret_plugin.stat().st_mode) == 0o700

    # an update reaches the mounted files (all at once), but not the subPath mount nor env
    await client.patch(cm_rt, "app", {"data": {"app.conf": "version=2\n", "MODE": "slow"}}, namespace)

    async def updated() -> bool:
        return (await sh(apiserver, namespace, "consumer", "cat /etc/app/app.conf /etc/app/MODE")) == \
            "version=2\nslow"
    await wait_for(updated, 20, what="the ConfigMap update in the volume")
    assert (await sh(apiserver, namespace, "consumer", "cat /etc/pinned.conf")) == "version=1\n"
    assert "APP_MODE=fast" in await sh(apiserver, namespace, "consumer", "env")

    await client.delete(client.kind("v1", "Pod"), "consumer", namespace)

    async def cleaned() -> bool:
        return not (kubelet.root / "pods" / uid).exists()
    await wait_for(cleaned, 30, what="the pod directory removed")


async def test_missing_config_map_blocks_until_it_exists(kubelet: KubeletProcess, client: Client,
                                                        namespace: str, apiserver: APIServer) -> None:
    await create_pod(client, namespace, pod_body("env-late", kubelet.node, [
        {"name": "c", "image": BUSYBOX, "command": ["sleep", "3600"],
         "env": [{"name": "LATE", "valueFrom": {"configMapKeyRef": {"name": "late", "key": "value"}}}]}]))
    await create_pod(client, namespace, pod_body("vol-late", kubelet.node, [
        {"name": "c", "image": BUSYBOX, "command": ["sleep", "3600"],
         "volumeMounts": [{"name": "v", "mountPath": "/etc/late"}]}],
        volumes=[{"name": "v", "configMap": {"name": "late"}}]))

    async def config_error() -> bool:
        waiting = (cstatus(await get_pod(client, namespace, "env-late"), "c").get("state") or {}).get("waiting")
        return bool(waiting) and waiting["reason"] == "CreateContainerConfigError" and \
            waiting["message"] == 'configmap "late" not found'
    await wait_for(config_error, 30, what="CreateContainerConfigError")
    events = await events_of(client, namespace, "env-late")
    assert any(e["reason"] == "Failed" and e["message"] == 'Error: configmap "late" not found' for e in events)

    async def failed_mount() -> bool:
        pod = await get_pod(client, namespace, "vol-late")
        waiting = (cstatus(pod, "c").get("state") or {}).get("waiting") or {}
        events = await events_of(client, namespace, "vol-late")
        return waiting.get("reason") == "ContainerCreating" and \
            any(e["reason"] == "FailedMount" and 'configmap "late" not found' in e["message"] for e in events)
    await wait_for(failed_mount, 30, what="FailedMount")
    assert (await get_pod(client, namespace, "env-late"))["status"]["phase"] == "Pending"

    await client.create(client.resource("cm"), {"metadata": {"name": "late"}, "data": {"value": "here"}}, namespace)
    await wait_phase(client, namespace, "env-late", "Running", 30)
    await wait_phase(client, namespace, "vol-late", "Running", 30)
    assert "LATE=here" in await sh(apiserver, namespace, "env-late", "env")
    assert await sh(apiserver, namespace, "vol-late", "cat /etc/late/value") == "here"


async def test_secret_env_is_not_in_the_pod_or_docker_labels(kubelet: KubeletProcess, client: Client,
                                                            namespace: str) -> None:
    await client.create(client.resource("secrets"), {"metadata": {"name": "tok"}, "data": {"token": b64("t0k3n")}},
                        namespace)
    await create_pod(client, namespace, pod_body("tok", kubelet.node, [
        {"name": "c", "image": BUSYBOX, "command": ["sleep", "3600"],
         "env": [{"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "tok", "key": "token"}}}]}]))
    pod = await wait_phase(client, namespace, "tok", "Running", 30)
    assert "t0k3n" not in str(pod)
    (container,) = kubelet.containers(**{"io.kubernetes.pod.name": "tok", "io.kubernetes.container.name": "c"})
    assert "t0k3n" not in str(container.labels)
    assert "TOKEN=t0k3n" in container.attrs["Config"]["Env"]
