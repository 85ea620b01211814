"""OpenAPI schemas generated from the models, and the unknown-field check of field validation."""

from __future__ import annotations

from minik8s.api.patch import MERGE_KEYS
from minik8s.api.registry import METRICS_TYPES, default_registry
from minik8s.api.schema import INT_OR_STRING, REF_PREFIX, Schemas, group_package
from minik8s.apiserver.openapi import OpenAPI, document_v3

REGISTRY = default_registry()
SCHEMAS = Schemas(REGISTRY.types + METRICS_TYPES)
DEFS = SCHEMAS.definitions


def prop(definition: str, field: str) -> dict:
    return DEFS[definition]["properties"][field]


def bare(schema: dict) -> dict:
    return {k: v for k, v in schema.items() if k != "description"}


def test_definition_names_follow_kubernetes() -> None:
    assert group_package("", "v1") == "io.k8s.api.core.v1"
    assert group_package("apps", "v1") == "io.k8s.api.apps.v1"
    assert group_package("networking.k8s.io", "v1") == "io.k8s.api.networking.v1"
    assert group_package("minik8s.io", "v1") == "io.minik8s.v1"
    for rt in REGISTRY.types:
        name = SCHEMAS.kind_names[(rt.group, rt.version, rt.kind)]
        assert {"group": rt.group, "version": rt.version, "kind": rt.kind} in \
            DEFS[name]["x-kubernetes-group-version-kind"], rt.kind
    assert SCHEMAS.kind_names[("apps", "v1", "Deployment")] == "io.k8s.api.apps.v1.Deployment"
    assert SCHEMAS.kind_names[("minik8s.io", "v1", "DNS")] == "io.minik8s.v1.DNS"
    # Core models keep their package when an apps kind reaches them first.
    assert prop("io.k8s.api.apps.v1.DeploymentSpec", "template")["$ref"] == \
        REF_PREFIX + "io.k8s.api.core.v1.PodTemplateSpec"
    assert prop("io.k8s.api.core.v1.Pod", "metadata")["$ref"] == \
        REF_PREFIX + "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


def test_types_required_and_free_form_fields() -> None:
    assert DEFS["io.k8s.api.core.v1.Container"]["required"] == ["name"]
    assert bare(prop("io.k8s.api.core.v1.Container", "args")) == {"type": "array", "items": {"type": "string"}}
    assert bare(prop("io.k8s.api.core.v1.ServicePort", "targetPort")) == {"$ref": REF_PREFIX + INT_OR_STRING}
    assert bare(prop("io.k8s.api.core.v1.ResourceRequirements", "limits")) == \
        {"type": "object", "additionalProperties": {"type": "string"}}
    assert bare(prop("io.k8s.api.core.v1.Container", "stdin")) == {"type": "boolean"}
    # dict[str, Any] is kept whole by the model, so the schema lets anything in.
    assert prop("io.k8s.api.core.v1.EnvVarSource", "fieldRef")["x-kubernetes-preserve-unknown-fields"] is True
    assert prop("io.k8s.api.core.v1.PodSpec", "securityContext")["$ref"] == \
        REF_PREFIX + "io.k8s.api.core.v1.PodSecurityContext"
    assert prop("io.k8s.api.core.v1.Pod", "apiVersion")["description"].startswith("APIVersion defines")
    # Kubernetes' documentation of shared fields; minik8s' own docstrings where the models have them
    assert prop("io.k8s.api.core.v1.PodSpec", "containers")["description"].startswith("List of containers")
    assert DEFS["io.k8s.api.core.v1.PodSpec"]["description"] == "PodSpec is a description of a pod."
    assert DEFS["io.minik8s.v1.DNSPath"]["description"].startswith("One forwarded path")


def test_patch_metadata_matches_the_servers_strategic_merge_patch() -> None:
    ports = prop("io.k8s.api.core.v1.Container", "ports")
    assert ports["x-kubernetes-patch-merge-key"] == "containerPort"
    assert ports["x-kubernetes-list-map-keys"] == ["containerPort", "protocol"]
    svc_ports = prop("io.k8s.api.core.v1.ServiceSpec", "ports")
    assert (svc_ports["x-kubernetes-patch-merge-key"], svc_ports["x-kubernetes-patch-strategy"]) == ("port", "merge")
    assert prop("io.k8s.api.core.v1.PodSpec", "volumes")["x-kubernetes-patch-strategy"] == "merge,retainKeys"
    assert prop("io.k8s.api.apps.v1.DeploymentSpec", "strategy")["x-kubernetes-patch-strategy"] == "retainKeys"
    # Every list the schema merges by key is one the server merges by that key, and no other list.
    for name, schema in DEFS.items():
        for field, p in (schema.get("properties") or {}).items():
            key = p.get("x-kubernetes-patch-merge-key")
            if key is None:
                assert p.get("x-kubernetes-patch-strategy") in (None, "retainKeys"), (name, field)
                continue
            assert key == MERGE_KEYS[field] or (field == "ports" and key == "port"), (name, field)
    assert "x-kubernetes-patch-merge-key" not in prop("io.k8s.api.core.v1.PodSpec", "tolerations")


def test_unknown_fields_are_reported_with_kubernetes_paths() -> None:
    pod = REGISTRY.resolve("pods")
    assert pod is not None
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x", "labels": {"a": "b"}, "bogus": 1},
            "spec": {"foo": 1, "restart_policy": "Never", "securityContext": {"anything": {"goes": 1}},
                     "containers": [{"name": "c", "resources": {"limits": {"cpu": "1"}}},
                                    {"name": "d", "env": [{"name": "A", "valueFrom": {"fieldRef": {"x": 1}}, "q": 1}],
                                     "ports": [{"containerPort": 80, "hostIP": "1.2.3.4", "zz": True}]}]},
            "status": {}}
    assert SCHEMAS.unknown_fields(pod, body) == [
        "metadata.bogus", "spec.foo", "spec.restart_policy", "spec.securityContext.anything",
        "spec.containers[1].env[0].q",
        "spec.containers[1].ports[0].zz"]
    assert SCHEMAS.unknown_fields(pod, {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": []}}) == []


def test_openapi_documents() -> None:
    openapi = OpenAPI("v1.32.0")
    openapi.refresh(REGISTRY.types)
    assert set(openapi.index()["paths"]) == {"api/v1", "apis/apps/v1", "apis/coordination.k8s.io/v1",
                                             "apis/discovery.k8s.io/v1", "apis/networking.k8s.io/v1",
                                             "apis/scheduling.k8s.io/v1",
                                             "apis/minik8s.io/v1", "apis/autoscaling/v2",
                                             "apis/batch/v1", "apis/authentication.k8s.io/v1",
                                             "apis/storage.k8s.io/v1", "apis/authorization.k8s.io/v1",
                                             "apis/rbac.authorization.k8s.io/v1", "apis/apiextensions.k8s.io/v1",
                                             "apis/policy/v1"}
    apps = [rt for rt in REGISTRY.types if rt.group == "apps"]
    doc = document_v3(apps, SCHEMAS, "v1.32.0")
    patch = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {"group": "apps", "version": "v1", "kind": "Deployment"}
    assert "fieldValidation" in [p["name"] for p in patch["parameters"]]
    assert "application/strategic-merge-patch+json" in patch["requestBody"]["content"]
    schemas = doc["components"]["schemas"]
    assert "io.k8s.api.core.v1.PodSpec" in schemas and "io.k8s.api.core.v1.Service" not in schemas
    strategy = schemas["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]["strategy"]
    assert strategy["allOf"] == [{"$ref": "#/components/schemas/io.k8s.api.apps.v1.DeploymentStrategy"}]
    own = document_v3([rt for rt in REGISTRY.types if rt.group == "minik8s.io"], SCHEMAS, "v1.32.0")
    dns_patch = own["paths"]["/apis/minik8s.io/v1/namespaces/{namespace}/dnses/{name}"]["patch"]
    assert "application/strategic-merge-patch+json" not in dns_patch["requestBody"]["content"]


def test_kubernetes_required_fields_are_modelled_and_marked_required() -> None:
    """Every field Kubernetes' OpenAPI requires of a definition minik8s serves is a property of
    minik8s' model, and the served schema marks it required (``k8s-required.json`` is generated
    by scripts/k8s-field-docs.py from the client's models)."""
    from minik8s.api.schema import kubernetes_required
    from minik8s.apiserver.versions import SERVED_VERSIONS

    defs = Schemas(REGISTRY.types + METRICS_TYPES + [sv.rt for sv in SERVED_VERSIONS]).definitions
    required = kubernetes_required()
    assert required["io.k8s.api.core.v1.NodeSystemInfo"] == [
        "architecture", "bootID", "containerRuntimeVersion", "kernelVersion", "kubeProxyVersion", "kubeletVersion",
        "machineID", "operatingSystem", "osImage", "systemUUID"]
    for name, fields in required.items():
        assert name in defs, name
        for field in fields:
            assert field in defs[name]["properties"], f"{name}.{field}"
            assert field in defs[name]["required"], f"{name}.{field}"


def test_fill_required_gives_missing_required_fields_their_zero_values() -> None:
    node = REGISTRY.by_kind("v1", "Node")
    pod = REGISTRY.by_kind("v1", "Pod")
    assert node is not None and pod is not None
    obj = {"metadata": {"name": "n"}, "status": {"nodeInfo": {"kubeletVersion": "v1.32.0"},
                                                 "addresses": [{"address": "10.0.0.1"}], "images": [{"x": 1}]}}
    SCHEMAS.fill_required(node, obj)
    info = obj["status"]["nodeInfo"]
    assert info["kubeletVersion"] == "v1.32.0" and info["kubeProxyVersion"] == "" and info["bootID"] == ""
    assert obj["status"]["addresses"] == [{"address": "10.0.0.1", "type": ""}]
    assert obj["status"]["images"] == [{"x": 1}]  # free-form: left alone
    assert "spec" not in obj  # optional parts stay absent
    p = {"spec": {"containers": [{"name": "c"}]},
         "status": {"conditions": [{"type": "Ready"}], "containerStatuses": [{"name": "c", "image": None}]}}
    SCHEMAS.fill_required(pod, p)
    assert p["status"]["containerStatuses"] == [{"name": "c", "image": "", "imageID": "", "ready": False,
                                                 "restartCount": 0}]
    assert p["status"]["conditions"] == [{"type": "Ready", "status": ""}]  # times stay absent (null in Go)


def test_k8s_required_json_is_current() -> None:
    """``k8s-required.json`` is what scripts/k8s-field-docs.py derives now from the official client's
    models (Kubernetes' OpenAPI): a kind or field added without running it again fails here."""
    import importlib.util
    import json
    from pathlib import Path

    from minik8s.api.schema import REQUIRED

    path = Path(__file__).resolve().parents[2] / "scripts" / "k8s-field-docs.py"
    spec = importlib.util.spec_from_file_location("k8s_field_docs", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    _docs, required = module.collect()
    assert required == json.loads(REQUIRED.read_text()), "run scripts/k8s-field-docs.py again"
