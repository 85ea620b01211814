"""The official ``kubernetes`` Python client's typed models accept what minik8s sends, for every kind.

The client's models (37.x: pydantic) validate responses against Kubernetes' OpenAPI: a field it
marks required that is missing fails the whole call.  Here one object of every Kubernetes kind
minik8s serves is created (with the status its controller or kubelet would write), read and
listed over HTTP, and each answer deserialized into the client's model of that kind; then every
typed ``list_*`` call of CoreV1Api, AppsV1Api, BatchV1Api and AutoscalingV2Api runs, and those of
the kinds minik8s serves must all succeed.
"""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any

import httpx
import pytest
from kubernetes import client as k8s

from minik8s.api.base import Obj, now_rfc3339
from minik8s.api.registry import default_registry
from minik8s.apiserver.versions import SERVED_VERSIONS
from tests.support.processes import APIServer

TYPED_APIS = (k8s.CoreV1Api, k8s.AppsV1Api, k8s.BatchV1Api, k8s.AutoscalingV2Api)

POD_SPEC = {"containers": [{"name": "main", "image": "minik8s/busybox", "command": ["sleep", "3600"]}]}
TEMPLATE = {"metadata": {"labels": {"app": "typed"}}, "spec": POD_SPEC}

#: One object of each Kubernetes kind minik8s serves, and (second) the status its owner writes.
SAMPLES: dict[tuple[str, str], tuple[Obj, Obj | None]] = {
    ("v1", "Namespace"): ({}, None),
    ("v1", "Pod"): ({"metadata": {"labels": {"app": "typed"}}, "spec": POD_SPEC}, {
        "phase": "Running", "podIP": "10.244.0.9", "startTime": now_rfc3339(),
        "conditions": [{"type": "Ready", "status": "True"}],
        "containerStatuses": [{"name": "main", "ready": True, "restartCount": 0,
                               "state": {"running": {"startedAt": now_rfc3339()}}}]}),
    ("v1", "Node"): ({"spec": {"podCIDR": "10.244.7.0/24"}}, {
        "capacity": {"cpu": "2", "memory": "4Gi", "pods": "110"},
        "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
        "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}],
        # What minik8s' kubelet reports: no kubeProxyVersion (Kubernetes' OpenAPI requires it).
        "nodeInfo": {"kernelVersion": "6.1", "kubeletVersion": "v1.32.0", "operatingSystem": "linux",
                     "architecture": "amd64", "containerRuntimeVersion": "docker://25"},
        "images": [{"names": ["minik8s/busybox:latest"], "sizeBytes": 1000}]}),
    ("v1", "Event"): ({"involvedObject": {"kind": "Pod", "name": "x"}, "reason": "Tested", "message": "m",
                       "type": "Normal"}, None),
    ("v1", "Service"): ({"spec": {"selector": {"app": "typed"}, "ports": [{"port": 80}]}}, None),
    ("v1", "Endpoints"): ({"subsets": [{"addresses": [{"ip": "10.244.0.9"}], "ports": [{"port": 80}]}]}, None),
    ("v1", "ConfigMap"): ({"data": {"k": "v"}}, None),
    ("v1", "Secret"): ({"stringData": {"k": "v"}}, None),
    ("v1", "ServiceAccount"): ({"automountServiceAccountToken": False}, None),
    ("v1", "ReplicationController"): ({"spec": {"replicas": 0, "template": TEMPLATE}}, {"observedGeneration": 1}),
    ("coordination.k8s.io/v1", "Lease"): ({"spec": {"holderIdentity": "typed", "leaseDurationSeconds": 40}}, None),
    ("apps/v1", "ReplicaSet"): ({"spec": {"replicas": 0, "selector": {"matchLabels": {"app": "typed"}},
                                          "template": TEMPLATE}}, None),
    ("apps/v1", "Deployment"): ({"spec": {"replicas": 0, "selector": {"matchLabels": {"app": "typed"}},
                                          "template": TEMPLATE}}, {"observedGeneration": 1}),
    ("networking.k8s.io/v1", "Ingress"): ({"spec": {"rules": [{"host": "typed.example", "http": {"paths": [
        {"path": "/", "pathType": "Prefix",
         "backend": {"service": {"name": "typed", "port": {"number": 80}}}}]}}]}}, None),
    ("autoscaling/v2", "HorizontalPodAutoscaler"): ({"spec": {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "typed"},
        "minReplicas": 1, "maxReplicas": 3}}, {"currentReplicas": 1, "desiredReplicas": 1}),
    ("autoscaling/v1", "HorizontalPodAutoscaler"): ({"spec": {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "typed"},
        "maxReplicas": 3}}, None),
}
#: Served kinds the typed client has no model of a stored object for (``Binding`` is a create-only verb).
NO_OBJECT = {("v1", "Binding")}


def served_kubernetes_kinds() -> list[Any]:
    """Every row minik8s serves for a Kubernetes group (its own ``minik8s.io`` kinds have no typed model)."""
    rows = default_registry().types + [sv.rt for sv in SERVED_VERSIONS]
    return [rt for rt in rows if rt.group != "minik8s.io" and (rt.api_version, rt.kind) not in NO_OBJECT]


def model_name(api_version: str, kind: str) -> str:
    """The client's model of a kind: ``apps/v1`` ``Deployment`` → ``V1Deployment`` (core ``Event``:
    ``CoreV1Event``, as ``events.k8s.io`` has one too)."""
    if (api_version, kind) == ("v1", "Event"):
        return "CoreV1Event"
    version = api_version.rsplit("/", 1)[-1]
    return f"{version[:1].upper()}{version[1:]}{kind}"


def collection(rt: Any, namespace: str) -> str:
    base = f"/apis/{rt.group}/{rt.version}" if rt.group else "/api/v1"
    return f"{base}/namespaces/{namespace}/{rt.plural}" if rt.namespaced else f"{base}/{rt.plural}"


def typed_list_calls(api_client: k8s.ApiClient, namespace: str) -> dict[str, str]:
    """Run every typed ``list_*`` call of :data:`TYPED_APIS`; method → ``"ok"`` or the error's first line."""
    out: dict[str, str] = {}
    for api_class in TYPED_APIS:
        api = api_class(api_client)
        for name in sorted(dir(api)):
            if not name.startswith("list_") or name.endswith("_with_http_info"):
                continue
            method = getattr(api, name)
            try:
                method(namespace) if name.startswith("list_namespaced_") else method()
                out[f"{api_class.__name__}.{name}"] = "ok"
            except Exception as exc:  # noqa: BLE001 -- any failure is a failed typed call
                out[f"{api_class.__name__}.{name}"] = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return out


def _create_all(url: str, namespace: str) -> list[tuple[Any, str]]:
    """Create one sample of every served Kubernetes kind (and write its status); (row, name) pairs."""
    made = []
    with httpx.Client(base_url=url, timeout=10) as h:
        for rt in served_kubernetes_kinds():
            body, status = copy.deepcopy(SAMPLES[(rt.api_version, rt.kind)])
            name = f"typed-{rt.version}-{rt.plural}" if rt.namespaced else f"typed-{namespace}-{rt.plural}"
            body = {"apiVersion": rt.api_version, "kind": rt.kind, **body,
                    "metadata": {**body.get("metadata", {}), "name": name}}
            r = h.post(collection(rt, namespace), json=body)
            assert r.status_code == 201, (rt.kind, r.text)
            if status is not None:
                obj = r.json()
                obj["status"] = {**obj.get("status", {}), **status}
                r = h.put(f"{collection(rt, namespace)}/{name}/status", json=obj)
                assert r.status_code == 200, (rt.kind, r.text)
            made.append((rt, name))
    return made


def _check_models(url: str, namespace: str) -> None:
    made = _create_all(url, namespace)
    api_client = k8s.ApiClient()
    with httpx.Client(base_url=url, timeout=10) as h:
        for rt, name in made:
            model = model_name(rt.api_version, rt.kind)
            one = h.get(f"{collection(rt, namespace)}/{name}")
            listed = h.get(collection(rt, namespace))
            assert one.status_code == listed.status_code == 200, (rt.kind, one.text, listed.text)
            obj = api_client.deserialize(one.text, model, "application/json")
            assert obj.metadata.name == name, rt.kind
            items = api_client.deserialize(listed.text, f"{model}List", "application/json").items
            assert name in [i.metadata.name for i in items], rt.kind
        for rt, name in reversed(made):
            h.delete(f"{collection(rt, namespace)}/{name}")


async def test_every_served_kind_deserializes_into_the_official_models(apiserver: APIServer,
                                                                       namespace: str) -> None:
    missing = [(rt.api_version, rt.kind) for rt in served_kubernetes_kinds()
               if (rt.api_version, rt.kind) not in SAMPLES]
    assert not missing, f"add a sample object of {missing} to SAMPLES"
    await asyncio.to_thread(_check_models, apiserver.url, namespace)


#: The typed list calls of kinds minik8s serves: every one must deserialize.
SERVED_LISTS = {
    "CoreV1Api": ["config_map", "endpoints", "event", "namespace", "node", "pod", "replication_controller", "secret",
                  "service", "service_account"],
    "AppsV1Api": ["deployment", "replica_set"],
    "AutoscalingV2Api": ["horizontal_pod_autoscaler"],
}


def _served_list_methods() -> set[str]:
    out = set()
    for api, kinds in SERVED_LISTS.items():
        for kind in kinds:
            if kind in ("namespace", "node"):
                out.add(f"{api}.list_{kind}")
            else:
                out |= {f"{api}.list_namespaced_{kind}", f"{api}.list_{kind}_for_all_namespaces"}
    return out


def _list_flow(url: str, namespace: str) -> dict[str, str]:
    made = _create_all(url, namespace)
    cfg = k8s.Configuration()
    cfg.host = url
    try:
        return typed_list_calls(k8s.ApiClient(cfg), namespace)
    finally:
        with httpx.Client(base_url=url, timeout=10) as h:
            for rt, name in reversed(made):
                h.delete(f"{collection(rt, namespace)}/{name}")


async def test_typed_list_calls_of_served_kinds_succeed(apiserver: APIServer, namespace: str,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    results = await asyncio.to_thread(_list_flow, apiserver.url, namespace)
    ok = sorted(m for m, r in results.items() if r == "ok")
    failed = {m: results[m] for m in sorted(_served_list_methods()) if results.get(m) != "ok"}
    with capsys.disabled():
        print(f"\ntyped list calls: {len(ok)} of {len(results)} succeed "
              f"({len(_served_list_methods()) - len(failed)} of the {len(_served_list_methods())} of served kinds)")
    assert not failed, json.dumps(failed, indent=1)
