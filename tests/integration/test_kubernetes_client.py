"""The official ``kubernetes`` Python client works against minik8s for the kinds Kubernetes has."""

from __future__ import annotations

import asyncio

import pytest
from kubernetes import client as k8s
from kubernetes import watch
from kubernetes.client.rest import ApiException

from tests.support.processes import APIServer


def _api(apiserver: APIServer) -> k8s.CoreV1Api:
    cfg = k8s.Configuration()
    cfg.host = apiserver.url
    return k8s.CoreV1Api(k8s.ApiClient(cfg))


def _flow(apiserver: APIServer, namespace: str) -> None:
    api = _api(apiserver)
    body = k8s.V1Pod(
        metadata=k8s.V1ObjectMeta(name="official", labels={"app": "official"}),
        spec=k8s.V1PodSpec(containers=[k8s.V1Container(
            name="c", image="minik8s/busybox", command=["sleep", "3600"],
            resources=k8s.V1ResourceRequirements(limits={"cpu": "100m", "memory": "64Mi"}))]))
    created = api.create_namespaced_pod(namespace, body)
    assert created.metadata.uid and created.status.phase == "Pending"
    assert created.spec.containers[0].resources.requests == {"cpu": "100m", "memory": "64Mi"}
    read = api.read_namespaced_pod("official", namespace)
    assert read.metadata.resource_version == created.metadata.resource_version
    listed = api.list_namespaced_pod(namespace, label_selector="app=official")
    assert [p.metadata.name for p in listed.items] == ["official"]

    api.patch_namespaced_pod("official", namespace, {"metadata": {"labels": {"patched": "yes"}}})
    w = watch.Watch()
    seen = []
    for ev in w.stream(api.list_namespaced_pod, namespace, resource_version=listed.metadata.resource_version,
                       timeout_seconds=5):
        seen.append((ev["type"], ev["object"].metadata.labels.get("patched")))
        w.stop()
    assert seen == [("MODIFIED", "yes")]

    patched = api.patch_namespaced_pod("official", namespace, {"metadata": {"annotations": {"k": "v"}}})
    assert patched.metadata.annotations == {"k": "v"}
    api.delete_namespaced_pod("official", namespace)
    with pytest.raises(ApiException) as exc:
        api.read_namespaced_pod("official", namespace)
    assert exc.value.status == 404
    with pytest.raises(ApiException) as exc:
        api.create_namespaced_pod(namespace, {"metadata": {"name": "BAD"}, "spec": {"containers": []}})
    assert exc.value.status == 422
    assert k8s.VersionApi(api.api_client).get_code().major == "1"


async def test_official_client_crud_and_watch(apiserver: APIServer, namespace: str) -> None:
    # The official client is synchronous; run it off the event loop.
    await asyncio.to_thread(_flow, apiserver, namespace)


def _config_flow(apiserver: APIServer, namespace: str) -> None:
    api = _api(apiserver)
    cm = api.create_namespaced_config_map(namespace, k8s.V1ConfigMap(
        metadata=k8s.V1ObjectMeta(name="settings"), data={"mode": "fast"}, binary_data={"blob": "AAE="}))
    assert cm.data == {"mode": "fast"} and cm.binary_data == {"blob": "AAE="}
    read = api.read_namespaced_config_map("settings", namespace)
    assert read.metadata.resource_version == cm.metadata.resource_version
    patched = api.patch_namespaced_config_map("settings", namespace, {"data": {"mode": "slow"}})
    assert patched.data == {"mode": "slow"}
    assert [c.metadata.name for c in api.list_namespaced_config_map(namespace).items] == ["settings"]

    secret = api.create_namespaced_secret(namespace, k8s.V1Secret(
        metadata=k8s.V1ObjectMeta(name="ssh"), type="kubernetes.io/ssh-auth",
        string_data={"ssh-privatekey": "KEY"}))
    assert secret.type == "kubernetes.io/ssh-auth" and secret.data == {"ssh-privatekey": "S0VZ"}
    assert secret.string_data is None
    listed = api.list_namespaced_secret(namespace, field_selector="type=kubernetes.io/ssh-auth")
    assert [s.metadata.name for s in listed.items] == ["ssh"]
    with pytest.raises(ApiException) as exc:
        api.create_namespaced_secret(namespace, k8s.V1Secret(metadata=k8s.V1ObjectMeta(name="tls"),
                                                             type="kubernetes.io/tls"))
    assert exc.value.status == 422 and "data[tls.crt]: Required value" in exc.value.body
    api.delete_namespaced_secret("ssh", namespace)
    api.delete_namespaced_config_map("settings", namespace)
    assert api.list_namespaced_secret(namespace).items == []


async def test_official_client_config_maps_and_secrets(apiserver: APIServer, namespace: str) -> None:
    await asyncio.to_thread(_config_flow, apiserver, namespace)
