"""Server-side apply's merge, ownership and FieldsV1 encoding (minik8s.apiserver.fieldmanager)."""

from __future__ import annotations

import pytest

from minik8s.api import errors
from minik8s.api.registry import default_registry
from minik8s.api.schema import Schemas
from minik8s.apiserver import fieldmanager as fm

REGISTRY = default_registry()
SCHEMAS = Schemas(REGISTRY.types)
DEPLOY = fm.FieldPaths(SCHEMAS, "apps", "v1", "Deployment")
WEB = 'k:{"name":"web"}'
CONTAINERS = ("f:spec", "f:template", "f:spec", "f:containers")


def deploy(replicas: int = 2, containers: list[dict] | None = None, labels: dict | None = None) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d", "namespace": "ns", **({"labels": labels} if labels else {})},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "d"}},
                     "template": {"metadata": {"labels": {"app": "d"}},
                                  "spec": {"containers": containers or [{"name": "web", "image": "nginx"}]}}}}


def owners(obj: dict) -> dict[tuple[str, str], set]:
    return {(e.manager, e.operation): e.fields for e in fm.entries(obj)}


def test_fields_v1_round_trip_and_paths() -> None:
    paths = set(DEPLOY.leaves(deploy(containers=[{"name": "web", "image": "nginx",
                                                  "ports": [{"containerPort": 80}]}])))
    tree = fm.to_fields_v1(paths)
    item = tree["f:spec"]["f:template"]["f:spec"]["f:containers"][WEB]
    assert list(item)[0] == "." and item["f:image"] == {}
    assert item["f:ports"] == {'k:{"containerPort":80,"protocol":"TCP"}': {".": {}, "f:containerPort": {}}}
    assert tree["f:spec"]["f:selector"] == {"f:matchLabels": {"f:app": {}}}
    assert "f:name" not in tree.get("f:metadata", {}) and "f:apiVersion" not in tree
    assert fm.from_fields_v1(tree) == paths
    assert fm.path_string(CONTAINERS + (WEB, "f:image")) == '.spec.template.spec.containers[name="web"].image'


def test_merge_list_maps_by_key_and_replace_atomic_lists() -> None:
    live = deploy(containers=[{"name": "web", "image": "nginx", "args": ["a", "b"]},
                              {"name": "side", "image": "busybox"}])
    config = deploy(containers=[{"name": "web", "image": "nginx:2", "args": ["c"]}])
    merged = DEPLOY.merge(live, config)
    assert merged["spec"]["template"]["spec"]["containers"] == [
        {"name": "web", "image": "nginx:2", "args": ["c"]}, {"name": "side", "image": "busybox"}]


def test_apply_records_owner_and_removes_dropped_fields() -> None:
    first = fm.apply(DEPLOY, None, deploy(labels={"a": "1", "b": "2"}), "mgr", "apps/v1")
    entry = first["metadata"]["managedFields"][0]
    assert {k: entry[k] for k in ("manager", "operation", "apiVersion", "fieldsType")} == {
        "manager": "mgr", "operation": "Apply", "apiVersion": "apps/v1", "fieldsType": "FieldsV1"}
    assert entry["fieldsV1"]["f:metadata"] == {"f:labels": {"f:a": {}, "f:b": {}}}
    second = fm.apply(DEPLOY, first, deploy(labels={"a": "1"}), "mgr", "apps/v1")
    assert second["metadata"]["labels"] == {"a": "1"}


def test_conflict_force_and_shared_ownership() -> None:
    live = deploy()
    fm.record_update(DEPLOY, None, live, "kubectl-client-side-apply", "apps/v1")
    with pytest.raises(errors.Conflict) as info:
        fm.apply(DEPLOY, live, deploy(replicas=3), "mgr", "apps/v1")
    assert info.value.message == ('Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" '
                                  'using apps/v1: .spec.replicas')
    assert info.value.details["causes"] == [{"type": "FieldManagerConflict", "field": ".spec.replicas",
                                             "message": 'conflict with "kubectl-client-side-apply" using apps/v1'}]
    shared = fm.apply(DEPLOY, live, deploy(replicas=2), "mgr", "apps/v1")  # same value: no conflict
    by = owners(shared)
    assert ("f:spec", "f:replicas") in by[("mgr", "Apply")] & by[("kubectl-client-side-apply", "Update")]
    forced = fm.apply(DEPLOY, live, deploy(replicas=3), "mgr", "apps/v1", force=True)
    assert forced["spec"]["replicas"] == 3
    assert ("f:spec", "f:replicas") not in owners(forced)[("kubectl-client-side-apply", "Update")]
    # a field another manager still owns is kept when this manager stops applying it
    dropped = deploy()
    del dropped["spec"]["replicas"]
    kept = fm.apply(DEPLOY, shared, dropped, "mgr", "apps/v1")
    assert kept["spec"]["replicas"] == 2


def test_two_conflicts_message_lists_paths() -> None:
    live = fm.apply(DEPLOY, None, deploy(), "a", "apps/v1")
    with pytest.raises(errors.Conflict) as info:
        fm.apply(DEPLOY, live, deploy(replicas=5, containers=[{"name": "web", "image": "x"}]), "b", "apps/v1")
    assert info.value.message == ('Apply failed with 2 conflicts: conflicts with "a":\n- .spec.replicas\n'
                                  '- .spec.template.spec.containers[name="web"].image')


def test_update_takes_changed_fields_and_keeps_time_when_unchanged() -> None:
    old = fm.apply(DEPLOY, None, deploy(), "mgr", "apps/v1")
    new = deploy(replicas=4)
    new["metadata"]["managedFields"] = old["metadata"]["managedFields"]
    fm.record_update(DEPLOY, old, new, "kubectl-edit", "apps/v1")
    by = owners(new)
    assert by[("kubectl-edit", "Update")] == {("f:spec", "f:replicas")}
    assert ("f:spec", "f:replicas") not in by[("mgr", "Apply")]
    same = dict(old)
    fm.record_update(DEPLOY, old, same, "kubectl-edit", "apps/v1")
    assert same["metadata"]["managedFields"] == old["metadata"]["managedFields"]


def test_removed_container_item() -> None:
    two = deploy(containers=[{"name": "web", "image": "nginx"}, {"name": "side", "image": "busybox"}])
    live = fm.apply(DEPLOY, None, two, "mgr", "apps/v1")
    one = fm.apply(DEPLOY, live, deploy(), "mgr", "apps/v1")
    assert [c["name"] for c in one["spec"]["template"]["spec"]["containers"]] == ["web"]


def test_kubectl_output_hides_managed_fields() -> None:
    from minik8s.kubectl.structured import structured

    obj = fm.apply(DEPLOY, None, deploy(), "mgr", "apps/v1")
    assert "managedFields" not in structured("json", obj)
    assert "managedFields" not in structured("yaml", {"kind": "List", "items": [obj]})
    assert "managedFields" in obj["metadata"]


def test_manager_from_user_agent() -> None:
    assert fm.manager_from_user_agent("kubectl/v1.32.0 (linux/amd64) kubernetes/abc") == "kubectl"
