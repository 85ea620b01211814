"""downwardAPI and projected volumes in real containers: file contents and modes, a label change
and a ConfigMap change reaching the files, subPath, the apiserver refusing conflicting paths,
and a serviceAccountToken source: a token of the pod's service account, bound to the pod.

One real kubelet process on the real Docker Engine against the real apiserver (the
:mod:`tests.support.kubelet` harness); commands run in the containers through the apiserver's
exec subresource.
"""

from __future__ import annotations

import base64
import json

import pytest

from minik8s.api import errors
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


async def sh(apiserver: APIServer, ns: str, pod: str, script: str) -> str:
    out, err, status = await exec_ws(apiserver, ns, pod, "c", ["sh", "-c", script])
    assert status.get("status") == "Success", (script, out, err, status)
    return out.decode()


def field(path: str, fp: str, **extra: object) -> dict:
    return {"path": path, "fieldRef": {"fieldPath": fp}, **extra}


async def test_downward_api_and_projected_volumes(kubelet: KubeletProcess, client: Client, namespace: str,
                                                  apiserver: APIServer) -> None:
    cm_rt = client.resource("configmaps")
    await client.create(cm_rt, {"metadata": {"name": "app"}, "data": {"app.conf": "v=1"}}, namespace)
    await client.create(client.resource("secrets"), {"metadata": {"name": "creds"},
                                                     "data": {"pass": base64.b64encode(b"s3cr3t").decode()}},
                        namespace)
    body = pod_body("info", kubelet.node, [{
        "name": "c", "image": BUSYBOX, "command": ["sleep", "3600"],
        "resources": {"limits": {"cpu": "250m"}, "requests": {"memory": "32Mi"}},
        "volumeMounts": [{"name": "podinfo", "mountPath": "/etc/podinfo"},
                         {"name": "all", "mountPath": "/etc/all"},
                         {"name": "all", "mountPath": "/etc/pass", "subPath": "creds/pass"}]}],
        volumes=[
            {"name": "podinfo", "downwardAPI": {"defaultMode": 0o640, "items": [
                field("labels", "metadata.labels"), field("annotations", "metadata.annotations"),
                field("name", "metadata.name", mode=0o400), field("ns", "metadata.namespace"),
                field("uid", "metadata.uid"), field("tier", "metadata.labels['tier']"),
                {"path": "cpu_limit", "resourceFieldRef": {"containerName": "c", "resource": "limits.cpu",
                                                           "divisor": "1m"}},
                {"path": "mem_request", "resourceFieldRef": {"containerName": "c", "resource": "requests.memory",
                                                             "divisor": "1Mi"}},
                {"path": "mem_limit", "resourceFieldRef": {"containerName": "c", "resource": "limits.memory"}}]}},
            {"name": "all", "projected": {"defaultMode": 0o440, "sources": [
                {"configMap": {"name": "app"}},
                {"secret": {"name": "creds", "items": [{"key": "pass", "path": "creds/pass", "mode": 0o400}]}},
                {"secret": {"name": "nope", "optional": True}},
                {"downwardAPI": {"items": [field("labels", "metadata.labels")]}}]}}])
    body["metadata"]["labels"] = {"app": "web", "tier": "front"}
    body["metadata"]["annotations"] = {"note": 'a "quoted" value'}
    created = await create_pod(client, namespace, body)
    assert created["spec"]["volumes"][1]["projected"]["defaultMode"] == 0o440
    await wait_phase(client, namespace, "info", "Running", 60)

    out = await sh(apiserver, namespace, "info", "cd /etc/podinfo; for f in labels annotations name ns uid tier "
                   "cpu_limit mem_request; do cat $f; echo; done; stat -L -c %a labels name")
    uid = created["metadata"]["uid"]
    assert out.split("\n") == ['app="web"', 'tier="front"', 'note="a \\"quoted\\" value"', "info", namespace, uid,
                               "front", "250", "32", "640", "400", ""]
    mem_limit = await sh(apiserver, namespace, "info", "cat /etc/podinfo/mem_limit")
    assert int(mem_limit) > 32 * 2**20, "a missing limit is the node's allocatable memory"

    out = await sh(apiserver, namespace, "info", "cd /etc/all; ls; cat app.conf; echo; cat creds/pass; echo; "
                   "cat labels; echo; stat -L -c %a app.conf creds/pass labels; cat /etc/pass")
    assert out.split("\n") == ["app.conf", "creds", "labels", "v=1", "s3cr3t", 'app="web"', 'tier="front"',
                               "440", "400", "440", "s3cr3t"]
    ro = await exec_ws(apiserver, namespace, "info", "c", ["sh", "-c", "touch /etc/podinfo/x"])
    assert ro[2].get("status") == "Failure" and b"Read-only file system" in ro[1]

    # a label change reaches both volumes; a ConfigMap change reaches the projected one
    await client.patch(client.kind("v1", "Pod"), "info", {"metadata": {"labels": {"tier": "back", "new": "1"}}},
                       namespace)
    await client.patch(cm_rt, "app", {"data": {"app.conf": "v=2"}}, namespace)
    want = 'app="web"\nnew="1"\ntier="back"'

    async def updated() -> bool:
        return await sh(apiserver, namespace, "info", "cat /etc/podinfo/labels /etc/podinfo/tier; echo; "
                        "cat /etc/all/labels; echo; cat /etc/all/app.conf") == f"{want}back\n{want}\nv=2"
    await wait_for(updated, 20, what="the label and ConfigMap changes in the volumes")

    await client.delete(client.kind("v1", "Pod"), "info", namespace)

    async def cleaned() -> bool:  # the projected volume's tmpfs is unmounted and removed
        return not (kubelet.root / "pods" / uid).exists()
    await wait_for(cleaned, 30, what="the pod directory removed")


async def test_conflicting_projected_paths_are_refused(client: Client, namespace: str) -> None:
    body = pod_body("dup", "nowhere", [{"name": "c", "image": BUSYBOX}], volumes=[
        {"name": "all", "projected": {"sources": [
            {"configMap": {"name": "app", "items": [{"key": "a", "path": "same"}]}},
            {"downwardAPI": {"items": [field("same", "metadata.name")]}},
            {"secret": {"name": "s", "items": [{"key": "k", "path": "../up"}]}}]}}])
    with pytest.raises(errors.APIError) as refused:
        await create_pod(client, namespace, body)
    assert refused.value.code == 422
    message = str(refused.value)
    assert 'spec.volumes[0].projected: Invalid value: "same": conflicting duplicate paths' in message
    assert "spec.volumes[0].projected.sources[2].secret.items[0].path" in message
    with pytest.raises(errors.NotFound):
        await get_pod(client, namespace, "dup")


async def test_service_account_token_source(kubelet: KubeletProcess, client: Client, namespace: str,
                                            apiserver: APIServer) -> None:
    body = pod_body("token", kubelet.node, [
        {"name": "c", "image": BUSYBOX, "command": ["sleep", "3600"],
         "volumeMounts": [{"name": "t", "mountPath": "/var/run/secrets/tokens"}]}],
        volumes=[{"name": "t", "projected": {"sources": [
            {"serviceAccountToken": {"path": "vault-token", "audience": "vault", "expirationSeconds": 600}},
            {"downwardAPI": {"items": [field("namespace", "metadata.namespace")]}}]}}])
    body["spec"]["serviceAccountName"] = "robot"
    await create_pod(client, namespace, body)

    # the account does not exist yet: the kubelet says so and the pod waits
    async def failed_mount() -> bool:
        waiting = (cstatus(await get_pod(client, namespace, "token"), "c").get("state") or {}).get("waiting") or {}
        events = await events_of(client, namespace, "token")
        return waiting.get("reason") == "ContainerCreating" and any(
            e["reason"] == "FailedMount" and 'serviceaccounts "robot"' in e["message"] for e in events)
    await wait_for(failed_mount, 30, what="FailedMount while the ServiceAccount is missing")

    await client.create(client.resource("serviceaccounts"), {"metadata": {"name": "robot"}}, namespace)
    await wait_phase(client, namespace, "token", "Running", 60)
    token = (await sh(apiserver, namespace, "token", "cat /var/run/secrets/tokens/vault-token")).strip()
    assert (await sh(apiserver, namespace, "token", "cat /var/run/secrets/tokens/namespace")) == namespace
    pod = await get_pod(client, namespace, "token")
    payload = token.split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    assert claims["aud"] == ["vault"] and claims["exp"] - claims["iat"] == 600
    assert claims["sub"] == f"system:serviceaccount:{namespace}:robot"
    assert claims["kubernetes.io"]["pod"] == {"name": "token", "uid": pod["metadata"]["uid"]}
    assert claims["kubernetes.io"]["node"] == {"name": kubelet.node}
    review = await client.create(client.kind("authentication.k8s.io/v1", "TokenReview"),
                                 {"spec": {"token": token, "audiences": ["vault"]}})
    assert review["status"]["authenticated"] is True, review
    assert review["status"]["user"]["extra"]["authentication.kubernetes.io/pod-name"] == ["token"]

    await client.delete(client.kind("v1", "Pod"), "token", namespace)

    async def cleaned() -> bool:  # the projected volume's tmpfs is unmounted and removed
        return not (kubelet.root / "pods" / pod["metadata"]["uid"]).exists()
    await wait_for(cleaned, 30, what="the pod directory removed")
