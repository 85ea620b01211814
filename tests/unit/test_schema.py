"""The served OpenAPI schemas (Kubernetes' own definitions for its kinds, generated ones for minik8s'),
the unknown-field check of field validation, and the fields the models do not read."""

from __future__ import annotations

import pytest

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


def test_kubernetes_kinds_are_served_with_kubernetes_definitions() -> None:
    """Every kind Kubernetes 1.32 defines is served with Kubernetes' definition of it and of all
    it refers to, unchanged: every field, description, ``required`` list and patch marker."""
    from minik8s.api.k8sopenapi import kubernetes_definitions, kubernetes_kinds

    k8s = kubernetes_definitions()
    served = [rt for rt in REGISTRY.types if (rt.group, rt.version, rt.kind) in kubernetes_kinds()]
    assert len(served) >= 30
    for rt in served:
        name = SCHEMAS.kind_names[(rt.group, rt.version, rt.kind)]
        for ref in SCHEMAS.closure([name]):
            assert DEFS[ref] == k8s[ref], ref
    assert DEFS["io.k8s.api.core.v1.Container"]["required"] == ["name"]
    assert bare(prop("io.k8s.api.core.v1.ServicePort", "targetPort")) == {"$ref": REF_PREFIX + INT_OR_STRING}
    assert "automountServiceAccountToken" in DEFS["io.k8s.api.core.v1.PodSpec"]["properties"]
    assert prop("io.k8s.api.core.v1.PodSpec", "containers")["description"].startswith("List of containers")
    # minik8s' own kinds: generated from their models, embedding Kubernetes' types
    assert DEFS["io.minik8s.v1.DNSPath"]["description"].startswith("One forwarded path")
    function_spec = DEFS["io.minik8s.v1.FunctionSpec"]["properties"]
    assert any(p.get("$ref", "").startswith(REF_PREFIX + "io.k8s.") for p in function_spec.values())
    # dict[str, Any] in a model of minik8s' own kinds is free-form
    assert all("$ref" in p or "type" in p or p.get("x-kubernetes-preserve-unknown-fields")
               for d in DEFS.values() for p in (d.get("properties") or {}).values())


def test_strategic_merge_patch_follows_the_served_schema() -> None:
    """The server merges the lists the served schema marks, by the marked key; kubectl, which
    computes patches from the same markers, and the server agree."""
    from minik8s.api.patch import strategic_merge_patch

    pod = REGISTRY.by_kind("v1", "Pod")
    assert pod is not None
    schema = SCHEMAS.patch_schema(pod)
    live = {"metadata": {"name": "p", "finalizers": ["a"]},
            "spec": {"imagePullSecrets": [{"name": "one"}], "tolerations": [{"key": "x"}],
                     "topologySpreadConstraints": [{"topologyKey": "zone", "maxSkew": 1}],
                     "containers": [{"name": "c", "ports": [{"containerPort": 80}]}]}}
    patch = {"metadata": {"finalizers": ["b", "a"]},
             "spec": {"imagePullSecrets": [{"name": "two"}], "tolerations": [{"key": "y"}],
                      "topologySpreadConstraints": [{"topologyKey": "zone", "maxSkew": 2}],
                      "containers": [{"name": "c", "ports": [{"containerPort": 81}]}]}}
    out = strategic_merge_patch(live, patch, schema)
    assert out["metadata"]["finalizers"] == ["a", "b"]  # a set
    assert out["spec"]["imagePullSecrets"] == [{"name": "one"}, {"name": "two"}]  # by name
    assert out["spec"]["tolerations"] == [{"key": "y"}]  # replaced whole
    assert out["spec"]["topologySpreadConstraints"] == [{"topologyKey": "zone", "maxSkew": 2}]
    assert out["spec"]["containers"][0]["ports"] == [{"containerPort": 80}, {"containerPort": 81}]
    svc = REGISTRY.by_kind("v1", "Service")
    assert svc is not None
    merged = strategic_merge_patch({"spec": {"ports": [{"port": 80, "name": "a"}]}},
                                   {"spec": {"ports": [{"port": 80, "name": "b"}]}}, SCHEMAS.patch_schema(svc))
    assert merged["spec"]["ports"] == [{"port": 80, "name": "b"}]
    # kubectl's side: a value removed from a set list travels as $deleteFromPrimitiveList, which the
    # server's set merge applies (a plain list would only add)
    from minik8s.api.patch import strategic_diff

    before = {"metadata": {"finalizers": ["a", "b"]}}
    after = {"metadata": {"finalizers": ["a", "c"]}}
    diff = strategic_diff(before, after, schema)
    assert diff == {"metadata": {"finalizers": ["c"], "$deleteFromPrimitiveList/finalizers": ["b"]}}
    assert strategic_merge_patch(before, diff, schema) == after
    # minik8s' own kinds: the generated markers are MERGE_KEYS', the table used without a schema
    for name, d in DEFS.items():
        if name.startswith("io.minik8s."):
            for field, p in (d.get("properties") or {}).items():
                key = p.get("x-kubernetes-patch-merge-key")
                assert key is None or key == MERGE_KEYS[field], (name, field)


def test_fields_the_model_does_not_read_are_kept_and_checked() -> None:
    from minik8s.api.schema import FieldTypeError

    pod = REGISTRY.by_kind("v1", "Pod")
    assert pod is not None
    body = {"spec": {"automountServiceAccountToken": False, "os": {"name": "linux", "bogus": 1},
                     "containers": [{"name": "c", "resizePolicy": [{"resourceName": "cpu",
                                                                    "restartPolicy": "NotRequired"}]}],
                     "overhead": {"cpu": "100m"}, "enableServiceLinks": None}}
    out = {"spec": {"containers": [{"name": "c"}]}}
    SCHEMAS.keep_unmodelled(pod, body, out)
    assert out == {"spec": {"containers": [{"name": "c", "resizePolicy": [{"resourceName": "cpu",
                                                                          "restartPolicy": "NotRequired"}]}],
                            "automountServiceAccountToken": False, "os": {"name": "linux"},
                            "overhead": {"cpu": "100m"}}}
    with pytest.raises(FieldTypeError, match="^json: cannot unmarshal string into Go struct field "
                                             "PodSpec.spec.hostIPC of type bool$"):
        SCHEMAS.keep_unmodelled(pod, {"spec": {"hostIPC": "yes"}}, {"spec": {}})
    with pytest.raises(FieldTypeError, match="Go struct field ContainerResizePolicy.spec.containers.resizePolicy"
                                             ".resourceName of type string"):
        SCHEMAS.keep_unmodelled(pod, {"spec": {"containers": [{"name": "c", "resizePolicy": [{"resourceName": 3}]}]}},
                                {"spec": {"containers": [{"name": "c"}]}})


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
        "spec.containers[1].env[0].valueFrom.fieldRef.x", "spec.containers[1].env[0].q",
        "spec.containers[1].ports[0].zz"]
    assert SCHEMAS.unknown_fields(pod, {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": []}}) == []


def test_openapi_documents() -> None:
    openapi = OpenAPI("v1.32.0")
    openapi.refresh(REGISTRY.types)
    assert set(openapi.index()["paths"]) == {"api/v1", "apis/apps/v1", "apis/coordination.k8s.io/v1",
                                             "apis/discovery.k8s.io/v1", "apis/networking.k8s.io/v1",
                                             "apis/scheduling.k8s.io/v1", "apis/node.k8s.io/v1",
                                             "apis/flowcontrol.apiserver.k8s.io/v1",
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


def test_k8s_openapi_json_is_what_the_script_writes() -> None:
    """``k8s-openapi.json`` names the release and package scripts/k8s-openapi.py pins, and is in the
    OpenAPI v2 spelling the script writes (its conversion changes nothing in it).  That it is what the
    package publishes is checked by ``.ci/run`` (``k8s-openapi.py --check``): fetching from PyPI is
    not the tests' to do."""
    import importlib.util
    import json
    from pathlib import Path

    from minik8s.api.k8sopenapi import OPENAPI

    path = Path(__file__).resolve().parents[2] / "scripts" / "k8s-openapi.py"
    spec = importlib.util.spec_from_file_location("k8s_openapi", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    stored = json.loads(OPENAPI.read_text())
    assert stored["kubernetes"] == module.KUBERNETES and stored["source"] == module.PACKAGE
    definitions = stored["definitions"]
    assert all(module.swagger(schema) == schema for name, schema in definitions.items()
               if name not in module.WRAPPERS)
    assert {name: definitions[name] for name in module.WRAPPERS} == module.WRAPPERS
    assert "#/$defs/" not in OPENAPI.read_text()
