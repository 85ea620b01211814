"""Kind by kind: every kind Kubernetes 1.32 defines in a stable version is in the paths of the
served ``/openapi/v2`` and ``/openapi/v3`` (as the ``x-kubernetes-group-version-kind`` of an
operation), with Kubernetes' definition of it, field for field; and every subresource a served
kind names has its path, saying the kind discovery says."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from minik8s.api.k8sopenapi import REF_PREFIX, kubernetes_definitions, kubernetes_kinds
from minik8s.api.registry import default_registry
from minik8s.apiserver.app import served_registry
from minik8s.apiserver.discovery import resource_list
from minik8s.apiserver.openapi import OpenAPI

GVK = tuple[str, str, str]

#: stable kinds that are not served, each with the reason
NOT_SERVED: dict[GVK, str] = {
    ("", "v1", "Status"): "a response body (metav1.Status), not a resource",
    ("admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration"): "issue 'extension points'",
    ("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration"): "issue 'extension points'",
    ("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicy"): "issue 'extension points'",
    ("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicyBinding"): "issue 'extension points'",
    ("apiregistration.k8s.io", "v1", "APIService"): "issue 'extension points' (the aggregation layer)",
}

METHODS = ("get", "put", "post", "delete", "patch", "head", "options")


def stable_kinds() -> dict[GVK, str]:
    """Kubernetes 1.32's kinds of a stable version (no alpha/beta), not lists, with ``metadata``:
    GVK → definition name."""
    defs = kubernetes_definitions()
    return {gvk: name for gvk, name in kubernetes_kinds().items()
            if not re.search(r"v\d+(alpha|beta)\d*$", gvk[1]) and not gvk[2].endswith("List")
            and "metadata" in (defs[name].get("properties") or {})}


@pytest.fixture(scope="module")
def served() -> dict[str, Any]:
    types = served_registry(default_registry()).types
    openapi = OpenAPI("v1.32.0")
    openapi.refresh(types)
    return {"types": types, "v2": json.loads(openapi.v2),
            "v3": {gv: json.loads(doc) for gv, doc in openapi.v3.items()}}


def operations(doc: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(path, method, op) for path, item in doc["paths"].items() for method, op in item.items()
            if method in METHODS]


def path_kinds(doc: dict[str, Any]) -> set[GVK]:
    out = set()
    for _, _, op in operations(doc):
        g = op["x-kubernetes-group-version-kind"]
        out.add((g["group"], g["version"], g["kind"]))
    return out


def refs(value: Any) -> list[str]:
    if isinstance(value, dict):
        return ([value["$ref"]] if isinstance(value.get("$ref"), str) else []) + \
            [r for v in value.values() for r in refs(v)]
    if isinstance(value, list):
        return [r for v in value for r in refs(v)]
    return []


def test_the_lists_name_stable_kubernetes_kinds_only() -> None:
    stable = stable_kinds()
    assert len(stable) > 60
    assert set(NOT_SERVED) <= set(stable)


def test_every_stable_kind_is_in_the_served_paths(served: dict[str, Any]) -> None:
    wanted = set(stable_kinds()) - set(NOT_SERVED)
    v2 = path_kinds(served["v2"])
    assert sorted(wanted - v2) == []
    v3 = set().union(*(path_kinds(doc) for doc in served["v3"].values()))
    assert sorted(wanted - v3) == []
    # one that is served now leaves the list
    assert sorted(set(NOT_SERVED) & v2) == []


def test_each_kind_is_served_with_kubernetes_definition(served: dict[str, Any]) -> None:
    """Field for field: the definition of each stable kind in the paths, and everything it refers
    to, is Kubernetes' (v2 ``definitions``; v3 ``components.schemas`` of the documents whose
    paths name it, with the same fields)."""
    k8s = kubernetes_definitions()
    stable = stable_kinds()
    v2_defs = served["v2"]["definitions"]
    for gvk in path_kinds(served["v2"]) & set(stable):
        todo, seen = [stable[gvk]], set()
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            assert v2_defs[name] == k8s[name], (gvk, name)
            todo += [r[len(REF_PREFIX):] for r in refs(k8s[name])]
    for gv, doc in served["v3"].items():
        schemas = doc["components"]["schemas"]
        for gvk in path_kinds(doc) & set(stable):
            name = stable[gvk]
            assert set(schemas[name].get("properties") or {}) == set(k8s[name].get("properties") or {}), (gv, gvk)
            assert schemas[name].get("required") == k8s[name].get("required"), (gv, gvk)


def test_references_resolve(served: dict[str, Any]) -> None:
    v2 = served["v2"]
    assert {r[len(REF_PREFIX):] for r in refs(v2["paths"])} <= set(v2["definitions"])
    prefix = "#/components/schemas/"
    for gv, doc in served["v3"].items():
        assert {r[len(prefix):] for r in refs(doc)} <= set(doc["components"]["schemas"]), gv


def test_every_subresource_has_its_path_with_discovery_kind(served: dict[str, Any]) -> None:
    """A row's ``subresources`` give paths in both documents, whose operations carry the kind
    discovery names (Scale of ``autoscaling/v1``, Eviction of ``policy/v1``, ...)."""
    v2_paths = served["v2"]["paths"]
    registry = served_registry(default_registry())
    checked = 0
    for rt in served["types"]:
        listing = resource_list(registry, rt.group, rt.version) or {}
        entries = {e["name"]: e for e in listing["resources"]}
        prefix = f"/apis/{rt.group}/{rt.version}" if rt.group else f"/api/{rt.version}"
        base = f"{prefix}/namespaces/{{namespace}}/{rt.plural}" if rt.namespaced else f"{prefix}/{rt.plural}"
        for sub in rt.subresources:
            entry = entries[f"{rt.plural}/{sub}"]
            want = {"group": entry.get("group", rt.group), "version": entry.get("version", rt.version),
                    "kind": entry["kind"]}
            path = f"{base}/{{name}}/{sub}"
            gv = f"apis/{rt.group}/{rt.version}" if rt.group else f"api/{rt.version}"
            for doc in (served["v2"], served["v3"][gv]):
                ops = {m: op for m, op in doc["paths"][path].items() if m in METHODS}
                assert ops, path
                for op in ops.values():
                    if op["x-kubernetes-action"] != "connect" and sub != "log":
                        assert op["x-kubernetes-group-version-kind"] == want, (path, op["operationId"])
            checked += 1
    assert checked > 40
    pods = "/api/v1/namespaces/{namespace}/pods/{name}"
    assert v2_paths[f"{pods}/eviction"]["post"]["operationId"] == "createCoreV1NamespacedPodEviction"
    assert v2_paths[f"{pods}/eviction"]["post"]["parameters"][0]["schema"] == \
        {"$ref": REF_PREFIX + "io.k8s.api.policy.v1.Eviction"}
    scale = v2_paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"]
    assert [scale[m]["operationId"] for m in ("get", "put", "patch")] == [
        "readAppsV1NamespacedDeploymentScale", "replaceAppsV1NamespacedDeploymentScale",
        "patchAppsV1NamespacedDeploymentScale"]
    assert scale["get"]["x-kubernetes-group-version-kind"] == {"group": "autoscaling", "kind": "Scale",
                                                               "version": "v1"}
    token = v2_paths["/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token"]["post"]
    assert token["operationId"] == "createCoreV1NamespacedServiceAccountToken"
    assert sorted(token["responses"]) == ["200", "201", "202", "401"]
    log = v2_paths[f"{pods}/log"]["get"]
    assert log["operationId"] == "readCoreV1NamespacedPodLog" and log["responses"]["200"]["schema"] == \
        {"type": "string"} and log["produces"][0] == "text/plain"
    assert {p["name"]: p["type"] for p in log["parameters"]}["tailLines"] == "integer"
    execute = v2_paths[f"{pods}/exec"]
    assert {m: op["operationId"] for m, op in execute.items() if m in METHODS} == {
        "get": "connectCoreV1GetNamespacedPodExec", "post": "connectCoreV1PostNamespacedPodExec"}
    assert execute["get"]["x-kubernetes-action"] == "connect"
    assert execute["get"]["x-kubernetes-group-version-kind"] == {"group": "", "kind": "PodExecOptions",
                                                                 "version": "v1"}
    assert [p["name"] for p in execute["post"]["parameters"]] == ["command", "container", "stderr", "stdin",
                                                                  "stdout", "tty"]
    assert "post" in v2_paths[f"{pods}/binding"] and "patch" in v2_paths[f"{pods}/ephemeralcontainers"]
    # a version served by conversion: autoscaling/v1 HorizontalPodAutoscaler, in its own v3 document
    hpa = served["v3"]["apis/autoscaling/v1"]
    assert "/apis/autoscaling/v1/namespaces/{namespace}/horizontalpodautoscalers/{name}" in hpa["paths"]
    assert "io.k8s.api.autoscaling.v1.HorizontalPodAutoscaler" in hpa["components"]["schemas"]


def test_a_custom_resource_scale_subresource_has_its_path() -> None:
    from minik8s.api.meta import TypedObject
    from minik8s.api.resourcetypes import CustomResource, ResourceType

    crontab = ResourceType("stable.example.com", "v1", "CronTab", "crontabs", "crontab", True, TypedObject,
                           subresources=frozenset({"status", "scale"}),
                           custom=CustomResource("crontabs.stable.example.com", "v1",
                                                 spec_replicas_path=".spec.replicas",
                                                 status_replicas_path=".status.replicas"))
    openapi = OpenAPI("v1.32.0")
    openapi.refresh([*default_registry().types, crontab])
    doc = json.loads(openapi.v3["apis/stable.example.com/v1"])
    scale = doc["paths"]["/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}/scale"]
    assert scale["put"]["operationId"] == "replaceStableV1NamespacedCronTabScale"
    assert scale["put"]["x-kubernetes-group-version-kind"] == {"group": "autoscaling", "kind": "Scale",
                                                               "version": "v1"}
    assert "io.k8s.api.autoscaling.v1.Scale" in doc["components"]["schemas"]
    assert "application/strategic-merge-patch+json" not in scale["patch"]["requestBody"]["content"]
