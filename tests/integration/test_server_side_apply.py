"""Server-side apply over HTTP against the real apiserver: PATCH ``application/apply-patch+yaml``,
managedFields, conflicts, force, dry run; and the official kubectl's ``apply --server-side`` and ``diff``."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import yaml

from tests.realkubectl import RealKubectl, real_kubectl  # noqa: F401 - the fixture
from tests.support.processes import APIServer

APPLY = "application/apply-patch+yaml"


def deploy(replicas: int = 2, containers: list[dict] | None = None, labels: dict | None = None) -> dict:
    meta: dict = {"name": "web"}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": containers or [{"name": "web", "image": "nginx"}]}}}}


class API:
    def __init__(self, apiserver: APIServer, namespace: str) -> None:
        self.http = httpx.Client(base_url=apiserver.url, timeout=30)
        self.path = f"/apis/apps/v1/namespaces/{namespace}/deployments/web"

    def apply(self, body: dict, manager: str = "mgr", yaml_body: bool = True, **params: str) -> httpx.Response:
        content = yaml.safe_dump(body) if yaml_body else json.dumps(body)
        query = {"fieldManager": manager, **params} if manager else params
        return self.http.patch(self.path, content=content, params=query, headers={"Content-Type": APPLY})

    def get(self) -> dict:
        r = self.http.get(self.path)
        assert r.status_code == 200, r.text
        return r.json()


def managers(obj: dict) -> dict[str, dict]:
    return {f'{e["manager"]}/{e["operation"]}': e for e in obj["metadata"].get("managedFields", [])}


def test_apply_create_change_remove_and_list_maps(apiserver: APIServer, namespace: str) -> None:
    api = API(apiserver, namespace)
    r = api.apply(deploy(labels={"a": "1", "b": "2"}))
    assert r.status_code == 201, r.text
    created = r.json()
    assert created["spec"]["strategy"]["type"] == "RollingUpdate"  # defaulted like a create
    entry = managers(created)["mgr/Apply"]
    assert set(entry) == {"manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1"}
    assert entry["apiVersion"] == "apps/v1" and entry["fieldsType"] == "FieldsV1"
    containers = entry["fieldsV1"]["f:spec"]["f:template"]["f:spec"]["f:containers"]
    assert containers == {'k:{"name":"web"}': {".": {}, "f:image": {}, "f:name": {}}}

    # another writer adds a container (strategic merge patch, manager from ?fieldManager)
    r = api.http.patch(api.path, params={"fieldManager": "kubectl-edit"},
                       json={"spec": {"template": {"spec": {"containers": [{"name": "side", "image": "busybox"}]}}}},
                       headers={"Content-Type": "application/strategic-merge-patch+json"})
    assert r.status_code == 200, r.text
    assert "kubectl-edit/Update" in managers(r.json())

    # re-apply: change the image, drop label b; the other manager's container stays (list-map merge)
    r = api.apply(deploy(labels={"a": "1"}, containers=[{"name": "web", "image": "nginx:2"}]), yaml_body=False)
    assert r.status_code == 200, r.text
    live = api.get()
    assert live["metadata"]["labels"] == {"a": "1"}
    assert [(c["name"], c["image"]) for c in live["spec"]["template"]["spec"]["containers"]] == [
        ("web", "nginx:2"), ("side", "busybox")]
    assert int(live["metadata"]["generation"]) == 3

    # no-op apply: nothing written
    r = api.apply(deploy(labels={"a": "1"}, containers=[{"name": "web", "image": "nginx:2"}]))
    assert r.json()["metadata"]["resourceVersion"] == live["metadata"]["resourceVersion"]


def test_conflicts_force_sharing_and_options(apiserver: APIServer, namespace: str) -> None:
    api = API(apiserver, namespace)
    r = api.http.post(api.path.rsplit("/", 1)[0], json=deploy(), params={"fieldManager": "kubectl-client-side-apply"})
    assert r.status_code == 201, r.text
    assert "kubectl-client-side-apply/Update" in managers(r.json())

    r = api.apply(deploy(replicas=3))
    assert r.status_code == 409, r.text
    status = r.json()
    assert status["reason"] == "Conflict" and status["message"] == (
        'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: .spec.replicas')
    assert status["details"]["causes"] == [{"type": "FieldManagerConflict", "field": ".spec.replicas",
                                            "message": 'conflict with "kubectl-client-side-apply" using apps/v1'}]
    assert api.get()["spec"]["replicas"] == 2

    # same values: shared ownership, no conflict
    r = api.apply(deploy(replicas=2), manager="other")
    assert r.status_code == 200, r.text
    replicas_owners = [m for m, e in managers(r.json()).items() if "f:replicas" in e["fieldsV1"]["f:spec"]]
    assert sorted(replicas_owners) == ["kubectl-client-side-apply/Update", "other/Apply"]

    # dry run changes nothing; force takes the field
    r = api.apply(deploy(replicas=5), force="true", dryRun="All")
    assert r.status_code == 200 and r.json()["spec"]["replicas"] == 5
    assert api.get()["spec"]["replicas"] == 2
    r = api.apply(deploy(replicas=5), force="true")
    assert r.status_code == 200 and r.json()["spec"]["replicas"] == 5
    owned = managers(r.json())
    assert "f:replicas" in owned["mgr/Apply"]["fieldsV1"]["f:spec"]
    assert "f:replicas" not in owned["kubectl-client-side-apply/Update"]["fieldsV1"]["f:spec"]

    # options and bad input
    r = api.apply(deploy(), manager="")
    assert r.status_code == 422 and r.json()["message"] == (
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch')
    r = api.http.patch(api.path, params={"force": "true"}, json={"spec": {"replicas": 1}},
                       headers={"Content-Type": "application/merge-patch+json"})
    assert r.status_code == 422 and "force: Forbidden: may not be specified for non-apply patch" in r.json()["message"]
    stale = deploy(replicas=5)
    stale["metadata"]["resourceVersion"] = "1"
    assert api.apply(stale).status_code == 409
    assert api.apply(deploy(replicas=-1)).status_code == 422
    r = api.apply(deploy(replicas=5), dryRun="All")
    assert r.status_code == 200


def test_status_subresource_apply(apiserver: APIServer, namespace: str) -> None:
    api = API(apiserver, namespace)
    assert api.apply(deploy()).status_code == 201
    status = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
              "spec": {"replicas": 9}, "status": {"observedGeneration": 1, "replicas": 1}}
    r = api.http.patch(api.path + "/status", content=json.dumps(status), params={"fieldManager": "ctrl"},
                       headers={"Content-Type": APPLY})
    assert r.status_code == 200, r.text
    live = api.get()
    assert live["status"]["replicas"] == 1 and live["spec"]["replicas"] == 2  # status only
    entry = managers(live)["ctrl/Apply"]
    assert entry["subresource"] == "status" and list(entry["fieldsV1"]) == ["f:status"]


def test_dry_run_apply_does_not_create(apiserver: APIServer, namespace: str) -> None:
    api = API(apiserver, namespace)
    r = api.apply(deploy(), dryRun="All")
    assert r.status_code == 201 and r.json()["metadata"]["name"] == "web"
    assert api.http.get(api.path).status_code == 404


# ------------------------------------------------------------------ the official kubectl
def test_kubectl_apply_server_side_and_diff(real_kubectl: RealKubectl, apiserver: APIServer,  # noqa: F811
                                            namespace: str, tmp_path: Path) -> None:
    kubectl = real_kubectl
    manifest = tmp_path / "web.yaml"
    manifest.write_text(yaml.safe_dump(deploy()))
    res = kubectl.ok("apply", "--server-side", "-f", str(manifest))
    assert res.out.strip() == "deployment.apps/web serverside-applied"
    assert kubectl("diff", "-f", str(manifest)).code == 0
    assert kubectl("diff", "--server-side", "-f", str(manifest)).code == 0

    manifest.write_text(yaml.safe_dump(deploy(replicas=3)))
    for flags in ([], ["--server-side"]):
        res = kubectl("diff", *flags, "-f", str(manifest))
        assert res.code == 1, res.err
        assert "-  replicas: 2" in res.out and "+  replicas: 3" in res.out and "managedFields" not in res.out
    kubectl.ok("apply", "--server-side", "-f", str(manifest))
    assert json.loads(kubectl.ok("get", "deploy", "web", "-o", "json").out)["spec"]["replicas"] == 3

    kubectl.ok("scale", "deploy", "web", "--replicas=4")
    manifest.write_text(yaml.safe_dump(deploy(replicas=5)))
    res = kubectl("apply", "--server-side", "-f", str(manifest))
    assert res.code != 0
    assert 'Apply failed with 1 conflict: conflict with "kubectl" ' in res.err and ".spec.replicas" in res.err
    kubectl.ok("apply", "--server-side", "--force-conflicts", "-f", str(manifest))
    live = json.loads(kubectl.ok("get", "deploy", "web", "-o", "json", "--show-managed-fields").out)
    assert live["spec"]["replicas"] == 5
    assert "kubectl/Apply" in managers(live)
