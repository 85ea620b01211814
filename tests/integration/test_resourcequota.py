"""ResourceQuota and LimitRange against the real apiserver and etcd: validation, the ``LimitRanger``
admission (defaults, bounds), the ``ResourceQuota`` admission (charges, refusals, scopes, concurrent
creates) and the quota controller (status, usage released).

Messages and status codes are Kubernetes' (``plugin/pkg/admission/limitranger``,
``apiserver/pkg/admission/plugin/resourcequota``).  The quota controller runs in-process, limited
to the test's namespace; no kubelet: a pod "finishes" by a status write.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest
from kubernetes import client as k8s

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.client.rest import Client
from minik8s.controllers.manager import ControllerManager
from tests.support.controllers import controller_manager
from tests.support.processes import APIServer
from tests.support.waiting import wait_for


def pod(name: str, resources: Obj | None = None, **spec: object) -> Obj:
    container: Obj = {"name": "app", "image": "minik8s/busybox", "command": ["sleep", "3600"]}
    if resources is not None:
        container["resources"] = resources
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"containers": [container], **spec}}


def limit_range(name: str, *limits: Obj) -> Obj:
    return {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": name}, "spec": {"limits": list(limits)}}


def quota(name: str, hard: dict[str, object], **spec: object) -> Obj:
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": name},
            "spec": {"hard": dict(hard), **spec}}


@pytest.fixture
async def quotas(client: Client, namespace: str) -> AsyncIterator[ControllerManager]:
    async with controller_manager(client, namespace, ["resourcequota"]) as manager:
        yield manager


async def _create_quota(client: Client, namespace: str, body: Obj) -> Obj:
    """Create a quota and wait until the controller has counted it (status.hard and used set)."""
    rt = client.kind("v1", "ResourceQuota")
    await client.create(rt, body, namespace)
    name = body["metadata"]["name"]

    async def synced() -> Obj | None:
        got = await client.get(rt, name, namespace)
        status = got.get("status") or {}
        hard = status.get("hard") or {}
        return got if hard and set(status.get("used") or {}) == set(hard) else None
    return await wait_for(synced, timeout=30, what=f"quota {name} counted")


async def _used(client: Client, namespace: str, name: str) -> dict[str, str]:
    got = await client.get(client.kind("v1", "ResourceQuota"), name, namespace)
    return dict((got.get("status") or {}).get("used") or {})


async def _forbidden(client: Client, namespace: str, body: Obj) -> str:
    rt = client.resource(body["kind"])
    with pytest.raises(errors.Forbidden) as info:
        await client.create(rt, body, namespace)
    return info.value.message


# ---------------------------------------------------------------- LimitRange
async def test_limit_range_is_defaulted_and_validated(client: Client, namespace: str) -> None:
    rt = client.kind("v1", "LimitRange")
    made = await client.create(rt, limit_range("lr", {"type": "Container", "max": {"cpu": "2", "memory": "1024Mi"},
                                                      "default": {"cpu": "500m"}}), namespace)
    item = made["spec"]["limits"][0]
    # SetDefaults_LimitRangeItem: default from max, defaultRequest from default; quantities canonical
    assert item["max"] == {"cpu": "2", "memory": "1Gi"}
    assert item["default"] == {"cpu": "500m", "memory": "1Gi"}
    assert item["defaultRequest"] == {"cpu": "500m", "memory": "1Gi"}
    with pytest.raises(errors.Invalid) as info:
        await client.create(rt, limit_range("bad", {"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"}}),
                            namespace)
    assert 'LimitRange "bad" is invalid: ' in info.value.message
    assert "spec.limits[0].min[cpu]" in info.value.message and "min value 2 is greater than max value 1" in \
        info.value.message
    with pytest.raises(errors.Invalid) as info:
        await client.create(rt, limit_range("pvc", {"type": "PersistentVolumeClaim", "max": {"cpu": "1"}}), namespace)
    assert "either minimum or maximum storage value is required, but neither was provided" in info.value.message


async def test_limit_ranger_sets_defaults_and_annotates(client: Client, namespace: str) -> None:
    await client.create(client.kind("v1", "LimitRange"), limit_range(
        "defaults", {"type": "Container", "default": {"cpu": "500m", "memory": "256Mi"},
                     "defaultRequest": {"cpu": "100m"}}), namespace)
    made = await client.create(client.kind("v1", "Pod"), pod("plain"), namespace)
    res = made["spec"]["containers"][0]["resources"]
    assert res == {"limits": {"cpu": "500m", "memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "256Mi"}}
    assert made["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == \
        "LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app"
    # what the pod sets is kept; requests default from its own limits first (pod defaulting)
    made = await client.create(client.kind("v1", "Pod"), pod("own", {"limits": {"cpu": "200m"}}), namespace)
    res = made["spec"]["containers"][0]["resources"]
    assert res == {"limits": {"cpu": "200m", "memory": "256Mi"}, "requests": {"cpu": "200m", "memory": "256Mi"}}
    assert made["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == \
        "LimitRanger plugin set: memory request for container app; memory limit for container app"


async def test_limit_ranger_refuses_with_kubernetes_messages(client: Client, namespace: str) -> None:
    await client.create(client.kind("v1", "LimitRange"), limit_range(
        "bounds",
        {"type": "Container", "max": {"cpu": "500m"}, "min": {"memory": "64Mi"}, "maxLimitRequestRatio": {"cpu": "2"},
         "default": {"cpu": "500m", "memory": "128Mi"}, "defaultRequest": {"cpu": "250m", "memory": "64Mi"}},
        {"type": "Pod", "max": {"memory": "1Gi"}},
        {"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"}, "max": {"storage": "2Gi"}}), namespace)
    message = await _forbidden(client, namespace, pod("big", {"limits": {"cpu": "1"}, "requests": {"cpu": "500m"}}))
    assert message == 'pods "big" is forbidden: maximum cpu usage per Container is 500m, but limit is 1'
    message = await _forbidden(client, namespace, pod("small", {"requests": {"memory": "32Mi"}}))
    assert message == 'pods "small" is forbidden: minimum memory usage per Container is 64Mi, but request is 32Mi'
    message = await _forbidden(client, namespace, pod("ratio", {"limits": {"cpu": "400m"},
                                                               "requests": {"cpu": "100m"}}))
    assert message == ('pods "ratio" is forbidden: cpu max limit to request ratio per Container is 2, '
                       "but provided ratio is 4.000000")
    two = pod("two", {"limits": {"memory": "600Mi"}})
    two["spec"]["containers"].append({"name": "side", "image": "minik8s/busybox", "resources":
                                      {"limits": {"memory": "600Mi"}}})
    message = await _forbidden(client, namespace, two)
    assert message == 'pods "two" is forbidden: maximum memory usage per Pod is 1Gi, but limit is 1200Mi'
    # several violations of one LimitRange: Kubernetes' aggregate
    message = await _forbidden(client, namespace, pod("both", {"limits": {"cpu": "2"}, "requests": {"cpu": "100m"}}))
    assert message == ('pods "both" is forbidden: [maximum cpu usage per Container is 500m, but limit is 2, '
                       "cpu max limit to request ratio per Container is 2, but provided ratio is 20.000000]")
    claim: Obj = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "huge"},
             "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "5Gi"}}}}
    message = await _forbidden(client, namespace, claim)
    assert message == ('persistentvolumeclaims "huge" is forbidden: maximum storage usage per PersistentVolumeClaim '
                       "is 2Gi, but request is 5Gi")
    claim["metadata"]["name"], claim["spec"]["resources"]["requests"]["storage"] = "tiny", "100Mi"
    message = await _forbidden(client, namespace, claim)
    assert message == ('persistentvolumeclaims "tiny" is forbidden: minimum storage usage per PersistentVolumeClaim '
                       "is 1Gi, but request is 100Mi")
    ok = await client.create(client.kind("v1", "Pod"), pod("fits"), namespace)
    assert ok["spec"]["containers"][0]["resources"]["limits"] == {"cpu": "500m", "memory": "128Mi"}


# ---------------------------------------------------------------- ResourceQuota
async def test_quota_validation(client: Client, namespace: str) -> None:
    rt = client.kind("v1", "ResourceQuota")
    with pytest.raises(errors.Invalid) as info:
        await client.create(rt, quota("bad", {"pods": "1.5", "services": "-1", "foo": "1"}), namespace)
    message = info.value.message
    assert 'ResourceQuota "bad" is invalid: ' in message
    assert "spec.hard[pods]: Invalid value: \"1500m\": must be an integer" in message
    assert "spec.hard[services]: Invalid value: \"-1\": must be greater than or equal to 0" in message
    assert "spec.hard[foo]: Invalid value: \"foo\": must be a standard resource for quota" in message
    with pytest.raises(errors.Invalid) as info:
        await client.create(rt, quota("scoped", {"services": "1"}, scopes=["BestEffort", "NotBestEffort"]), namespace)
    assert "unsupported scope applied to resource" in info.value.message
    assert "conflicting scopes" in info.value.message
    made = await client.create(rt, quota("fine", {"memory": "1024Mi", "pods": 4}), namespace)
    assert made["spec"]["hard"] == {"memory": "1Gi", "pods": "4"}
    assert made["status"] == {}


async def test_quota_counts_refuses_and_releases(client: Client, namespace: str, quotas: ControllerManager) -> None:
    pods_rt = client.kind("v1", "Pod")
    await client.create(pods_rt, pod("before"), namespace)
    rq = await _create_quota(client, namespace, quota("compute", {"pods": "2", "count/configmaps": "100"}))
    assert rq["status"]["hard"] == {"pods": "2", "count/configmaps": "100"}
    assert rq["status"]["used"]["pods"] == "1"
    await client.create(pods_rt, pod("second"), namespace)
    assert (await _used(client, namespace, "compute"))["pods"] == "2"  # charged by admission, at once
    message = await _forbidden(client, namespace, pod("third"))
    assert message == ('pods "third" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=2, '
                       "limited: pods=2")
    # a pod that finished no longer counts: the controller releases it
    second = await client.get(pods_rt, "second", namespace)
    await client.update_status(pods_rt, {**second, "status": {"phase": "Succeeded"}})
    await wait_for(lambda: _used_is(client, namespace, "compute", "pods", "1"), timeout=30,
                   what="pods usage released after the pod succeeded")
    await client.create(pods_rt, pod("third"), namespace)
    # a deleted pod is released too
    await client.delete(pods_rt, "before", namespace, grace_period_seconds=0)
    await wait_for(lambda: _used_is(client, namespace, "compute", "pods", "1"), timeout=30,
                   what="pods usage released after the pod was deleted")


async def _used_is(client: Client, namespace: str, name: str, resource: str, value: str) -> bool:
    return (await _used(client, namespace, name)).get(resource) == value


async def test_quota_compute_resources_and_constraints(client: Client, namespace: str,
                                                       quotas: ControllerManager) -> None:
    await _create_quota(client, namespace, quota("cpu", {"requests.cpu": "1", "limits.cpu": "2",
                                                         "limits.memory": "1Gi"}))
    message = await _forbidden(client, namespace, pod("bare"))
    assert message == ('pods "bare" is forbidden: failed quota: cpu: must specify limits.cpu for: app; '
                       "limits.memory for: app; requests.cpu for: app")
    res = {"requests": {"cpu": "600m"}, "limits": {"cpu": "1", "memory": "512Mi"}}
    await client.create(client.kind("v1", "Pod"), pod("one", res), namespace)
    used = await _used(client, namespace, "cpu")
    assert used == {"requests.cpu": "600m", "limits.cpu": "1", "limits.memory": "512Mi"}
    message = await _forbidden(client, namespace, pod("two", res))
    assert message == ('pods "two" is forbidden: exceeded quota: cpu, requested: requests.cpu=600m, '
                       "used: requests.cpu=600m, limited: requests.cpu=1")


async def test_quota_scopes_select_pods(client: Client, namespace: str, quotas: ControllerManager) -> None:
    await _create_quota(client, namespace, quota("besteffort", {"pods": "1"}, scopes=["BestEffort"]))
    await _create_quota(client, namespace, quota("high", {"pods": "1"}, scopeSelector={"matchExpressions": [
        {"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]}))
    pods_rt = client.kind("v1", "Pod")
    await client.create(pods_rt, pod("free"), namespace)
    message = await _forbidden(client, namespace, pod("free2"))
    assert "exceeded quota: besteffort, requested: pods=1, used: pods=1, limited: pods=1" in message
    # pods with resources are not BestEffort: the first quota does not see them
    res = {"requests": {"cpu": "10m"}}
    await client.create(pods_rt, pod("burst1", res), namespace)
    await client.create(pods_rt, pod("burst2", res), namespace)
    assert (await _used(client, namespace, "besteffort"))["pods"] == "1"
    assert (await _used(client, namespace, "high"))["pods"] == "0"


async def test_quota_object_counts(client: Client, namespace: str, quotas: ControllerManager) -> None:
    await _create_quota(client, namespace, quota("objects", {"configmaps": "1", "services.nodeports": "1",
                                                             "count/secrets": "1"}))
    cm_rt = client.kind("v1", "ConfigMap")
    await client.create(cm_rt, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}, namespace)
    message = await _forbidden(client, namespace, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"}})
    assert message == ('configmaps "b" is forbidden: exceeded quota: objects, requested: configmaps=1, '
                       "used: configmaps=1, limited: configmaps=1")
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "np"},
           "spec": {"type": "NodePort", "ports": [{"name": "a", "port": 80}, {"name": "b", "port": 81}]}}
    message = await _forbidden(client, namespace, svc)
    assert message == ('services "np" is forbidden: exceeded quota: objects, requested: services.nodeports=2, '
                       "used: services.nodeports=0, limited: services.nodeports=1")
    await client.delete(cm_rt, "a", namespace)
    await wait_for(lambda: _used_is(client, namespace, "objects", "configmaps", "0"), timeout=30,
                   what="configmaps usage released")
    await client.create(cm_rt, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"}}, namespace)


async def test_concurrent_creates_never_exceed_the_quota(client: Client, namespace: str,
                                                         quotas: ControllerManager) -> None:
    await _create_quota(client, namespace, quota("five", {"pods": "5"}))
    pods_rt = client.kind("v1", "Pod")

    async def create(i: int) -> bool:
        try:
            await client.create(pods_rt, pod(f"p{i}"), namespace)
        except errors.Forbidden:
            return False
        return True
    results = await asyncio.gather(*(create(i) for i in range(12)))
    assert sum(results) == 5
    assert len((await client.list(pods_rt, namespace))["items"]) == 5
    assert (await _used(client, namespace, "five"))["pods"] == "5"


async def test_refusal_status_as_the_official_client_reads_it(apiserver: APIServer, client: Client, namespace: str,
                                                            quotas: ControllerManager) -> None:
    """The official ``kubernetes`` client gets a 403 ``Status`` as kube-apiserver's: reason
    Forbidden, details naming the pod and the ``pods`` resource, the message."""
    await _create_quota(client, namespace, quota("one", {"pods": "1"}))
    await client.create(client.kind("v1", "Pod"), pod("first"), namespace)

    def create() -> k8s.exceptions.ApiException:
        configuration = k8s.Configuration()
        configuration.host = apiserver.url
        with k8s.ApiClient(configuration) as api_client:
            with pytest.raises(k8s.exceptions.ApiException) as info:
                k8s.CoreV1Api(api_client).create_namespaced_pod(namespace, pod("second"))  # type: ignore[arg-type]
        return info.value
    exc = await asyncio.to_thread(create)
    assert exc.status == 403
    status = json.loads(exc.body or "")
    assert status == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                      "message": 'pods "second" is forbidden: exceeded quota: one, requested: pods=1, used: pods=1, '
                                 "limited: pods=1",
                      "reason": "Forbidden", "details": {"name": "second", "kind": "pods"}, "code": 403}
