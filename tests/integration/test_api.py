"""The HTTP API end to end against a real apiserver process over a real etcd."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import httpx
import pytest

from minik8s.api import errors
from minik8s.client.rest import Client
from tests.support.processes import APIServer

POD = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "web", "labels": {"app": "web", "tier": "front"}},
    "spec": {"containers": [{"name": "c", "image": "minik8s/busybox", "ports": [{"containerPort": 80}],
                             "env": [{"name": "A", "value": "1"}]}]},
}


def pod(name: str, **labels: str) -> dict:
    body = json.loads(json.dumps(POD))
    body["metadata"]["name"] = name
    if labels:
        body["metadata"]["labels"] = labels
    return body


async def test_discovery_and_health(apiserver: APIServer) -> None:
    async with httpx.AsyncClient(base_url=apiserver.url) as h:
        assert (await h.get("/healthz")).text == "ok"
        assert (await h.get("/readyz")).status_code == 200
        assert (await h.get("/version")).json()["major"] == "1"
        assert (await h.get("/api")).json()["versions"] == ["v1"]
        core = (await h.get("/api/v1")).json()
        names = {r["name"] for r in core["resources"]}
        assert {"pods", "pods/status", "pods/binding", "pods/log", "pods/exec", "nodes", "namespaces",
                "events"} <= names
        groups = (await h.get("/apis")).json()
        assert "coordination.k8s.io" in [g["name"] for g in groups["groups"]]
        assert (await h.get("/apis/coordination.k8s.io/v1")).json()["resources"][0]["name"] == "leases"
        assert (await h.get("/openapi/v2")).json()["swagger"] == "2.0"
        assert (await h.get("/openapi.json")).status_code == 404  # FastAPI's own schema is not served
        missing = await h.get("/api/v1/namespaces/default/widgets")
        assert missing.status_code == 404 and missing.json()["kind"] == "Status"


#: what client-go (kubectl >= 1.30) sends to ``/api`` and ``/apis``
CLIENT_GO_DISCOVERY = ("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
                       "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json")
AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


def split_aggregated(doc: dict) -> dict[str, list[dict]]:
    """The per-version resource lists an aggregated document stands for, converted as client-go's
    ``SplitGroupsAndResources`` converts them (subresources become ``plural/sub`` rows)."""
    lists: dict[str, list[dict]] = {}
    for item in doc["items"]:
        group = item["metadata"].get("name", "")
        for ver in item["versions"]:
            rows = lists.setdefault(f"{group}/{ver['version']}" if group else ver["version"], [])
            for res in ver["resources"]:
                row = {"name": res["resource"], "singularName": res["singularResource"],
                       "namespaced": res["scope"] == "Namespaced", "kind": res["responseKind"]["kind"],
                       "verbs": res["verbs"]}
                row.update({k: res[k] for k in ("shortNames", "categories") if k in res})
                rows.append(row)
                for sub in res.get("subresources", []):
                    sub_row = {"name": f"{res['resource']}/{sub['subresource']}", "singularName": "",
                               "namespaced": row["namespaced"], "kind": sub["responseKind"]["kind"],
                               "verbs": sub["verbs"]}
                    if sub["responseKind"]["group"]:
                        sub_row.update(group=sub["responseKind"]["group"], version=sub["responseKind"]["version"])
                    rows.append(sub_row)
    return lists


async def test_aggregated_discovery_says_what_the_per_version_documents_say(apiserver: APIServer) -> None:
    async with httpx.AsyncClient(base_url=apiserver.url) as h:
        core, named = [await h.get(path, headers={"Accept": CLIENT_GO_DISCOVERY}) for path in ("/api", "/apis")]
        for resp in (core, named):
            assert resp.headers["content-type"] == AGGREGATED and resp.headers["vary"] == "Accept"
            doc = resp.json()
            assert (doc["kind"], doc["apiVersion"]) == ("APIGroupDiscoveryList", "apidiscovery.k8s.io/v2")
        assert core.json()["items"][0]["metadata"] == {"creationTimestamp": None}
        lists = {**split_aggregated(core.json()), **split_aggregated(named.json())}
        legacy_groups = (await h.get("/apis")).json()["groups"]
        expected = ["v1"] + [v["groupVersion"] for g in legacy_groups for v in g["versions"]]
        assert list(lists) == expected  # the same group versions, the preferred version of each first
        for gv, rows in lists.items():
            legacy = (await h.get("/api/v1" if gv == "v1" else f"/apis/{gv}")).json()
            assert rows == legacy["resources"], gv
        named_preferred = [item["versions"][0]["version"] for item in named.json()["items"]]
        assert named_preferred == [g["preferredVersion"]["version"] for g in legacy_groups]
        # a client that asks for another version of it, or for nothing, gets the plain documents
        for accept in ("application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json",
                       "application/json", None):
            plain = await h.get("/apis", headers={"Accept": accept} if accept else {})
            assert plain.headers["content-type"] == "application/json" and plain.json()["kind"] == "APIGroupList"


async def test_create_defaults_and_get(client: Client, namespace: str) -> None:
    rt = client.kind("v1", "Pod")
    created = await client.create(rt, pod("web"), namespace)
    meta = created["metadata"]
    assert meta["uid"] and meta["creationTimestamp"] and meta["resourceVersion"] and meta["generation"] == 1
    spec = created["spec"]
    assert spec["restartPolicy"] == "Always" and spec["terminationGracePeriodSeconds"] == 30
    c = spec["containers"][0]
    assert c["imagePullPolicy"] == "IfNotPresent" and c["ports"][0]["protocol"] == "TCP"
    assert created["status"]["phase"] == "Pending"
    got = await client.get(rt, "web", namespace)
    assert got == created
    with pytest.raises(errors.AlreadyExists, match='pods "web" already exists'):
        await client.create(rt, pod("web"), namespace)
    with pytest.raises(errors.NotFound, match='pods "nope" not found'):
        await client.get(rt, "nope", namespace)


async def test_generate_name(client: Client, namespace: str) -> None:
    rt = client.kind("v1", "Pod")
    body = pod("x")
    body["metadata"] = {"generateName": "gen-"}
    created = await client.create(rt, body, namespace)
    assert created["metadata"]["name"].startswith("gen-") and len(created["metadata"]["name"]) == 9


async def test_update_cas_and_status_subresource(client: Client, namespace: str) -> None:
    rt = client.kind("v1", "Pod")
    created = await client.create(rt, pod("p"), namespace)
    stale = json.loads(json.dumps(created))
    created["metadata"]["labels"]["new"] = "yes"
    updated = await client.update(rt, created)
    assert updated["metadata"]["labels"]["new"] == "yes"
    stale["metadata"]["labels"]["other"] = "x"
    with pytest.raises(errors.Conflict, match="the object has been modified"):
        await client.update(rt, stale)
    # main-resource updates ignore status; /status ignores spec
    updated["status"] = {"phase": "Running"}
    after = await client.update(rt, updated)
    assert after["status"]["phase"] == "Pending"
    after["status"] = {"phase": "Running", "podIP": "10.244.0.9"}
    after["spec"]["containers"][0]["image"] = "changed-through-status"
    st = await client.update_status(rt, after)
    assert st["status"]["phase"] == "Running" and st["status"]["podIP"] == "10.244.0.9"
    assert st["spec"]["containers"][0]["image"] == "minik8s/busybox"
    # no-op update keeps the resourceVersion
    same = await client.update(rt, st)
    assert same["metadata"]["resourceVersion"] == st["metadata"]["resourceVersion"]
    # pod spec is immutable except images
    st["spec"]["restartPolicy"] = "Never"
    with pytest.raises(errors.Invalid, match="pod updates may not change fields"):
        await client.update(rt, st)


async def test_patches(client: Client, namespace: str) -> None:
    rt = client.kind("v1", "Pod")
    await client.create(rt, pod("p"), namespace)
    merged = await client.patch(rt, "p", {"metadata": {"labels": {"tier": None, "x": "1"}}}, namespace)
    assert merged["metadata"]["labels"] == {"app": "web", "x": "1"}
    jp = await client.patch(rt, "p", [{"op": "add", "path": "/metadata/annotations", "value": {"a": "b"}}],
                            namespace, patch_type="json")
    assert jp["metadata"]["annotations"] == {"a": "b"}
    smp = await client.patch(rt, "p", {"spec": {"containers": [{"name": "c", "image": "minik8s/busybox:v2"}]}},
                             namespace, patch_type="strategic")
    c = smp["spec"]["containers"][0]
    assert c["image"] == "minik8s/busybox:v2" and c["env"] == [{"name": "A", "value": "1"}]
    with pytest.raises(errors.Invalid):
        await client.patch(rt, "p", [{"op": "remove", "path": "/nope/x"}], namespace, patch_type="json")
    async with httpx.AsyncClient(base_url=client.config.server) as h:
        r = await h.patch(f"/api/v1/namespaces/{namespace}/pods/p", content=b"{}",
                          headers={"Content-Type": "application/apply-patch+yaml"})
        assert r.status_code == 422 and "fieldManager: Required value" in r.json()["message"]  # apply needs one
        r = await h.patch(f"/api/v1/namespaces/{namespace}/pods/p", content=b"{}",
                          headers={"Content-Type": "application/cbor-patch"})
        assert r.status_code == 415


async def test_selectors_and_paging(client: Client, namespace: str) -> None:
    rt = client.kind("v1", "Pod")
    for i in range(7):
        await client.create(rt, pod(f"p{i}", app="a" if i % 2 else "b", idx=str(i)), namespace)
    lst = await client.list(rt, namespace, label_selector="app=a")
    assert sorted(p["metadata"]["name"] for p in lst["items"]) == ["p1", "p3", "p5"]
    lst = await client.list(rt, namespace, label_selector="app in (a,b),idx notin (0,1,2)")
    assert len(lst["items"]) == 4
    lst = await client.list(rt, namespace, label_selector="!nothere")
    assert len(lst["items"]) == 7
    lst = await client.list(rt, namespace, field_selector="metadata.name=p2")
    assert [p["metadata"]["name"] for p in lst["items"]] == ["p2"]
    lst = await client.list(rt, namespace, field_selector="status.phase!=Pending")
    assert lst["items"] == []
    names, token, pages = [], None, 0
    while True:
        page = await client.list(rt, namespace, limit=3, continue_=token)
        pages += 1
        names += [p["metadata"]["name"] for p in page["items"]]
        token = page["metadata"].get("continue")
        if not token:
            break
    assert pages == 3 and names == [f"p{i}" for i in range(7)]
    with pytest.raises(errors.BadRequest):
        await client.list(rt, namespace, label_selector="a in (b")
    with pytest.raises(errors.BadRequest):
        await client.list(rt, namespace, continue_="garbage!!")
    # deletecollection by label
    await client.delete_collection(rt, namespace, label_selector="app=b")
    left = await client.list(rt, namespace)
    assert sorted(p["metadata"]["name"] for p in left["items"]) == ["p1", "p3", "p5"]


async def test_watch_stream(client: Client, namespace: str) -> None:
    rt = client.kind("v1", "Pod")
    start = (await client.list(rt, namespace))["metadata"]["resourceVersion"]
    events: list[tuple[str, str]] = []

    async def consume() -> None:
        async for ev in client.watch(rt, namespace, resource_version=start, label_selector="app=w",
                                     allow_bookmarks=False):
            events.append((ev["type"], ev["object"]["metadata"]["name"]))
            if len(events) == 4:
                return

    task = asyncio.create_task(consume())
    await asyncio.sleep(0.3)
    await client.create(rt, pod("w1", app="w"), namespace)
    await client.create(rt, pod("other", app="x"), namespace)
    await client.patch(rt, "w1", {"metadata": {"labels": {"more": "1"}}}, namespace)
    await client.patch(rt, "other", {"metadata": {"labels": {"app": "w"}}}, namespace)  # enters selector
    await client.patch(rt, "w1", {"metadata": {"labels": {"app": "gone"}}}, namespace)  # leaves selector
    await asyncio.wait_for(task, 10)
    assert events == [("ADDED", "w1"), ("MODIFIED", "w1"), ("ADDED", "other"), ("DELETED", "w1")]


async def test_watch_without_resource_version_sends_current_state(client: Client, namespace: str) -> None:
    rt = client.kind("v1", "Pod")
    await client.create(rt, pod("now"), namespace)
    async for ev in client.watch(rt, namespace):
        assert ev == {"type": "ADDED", "object": ev["object"]} and ev["object"]["metadata"]["name"] == "now"
        break


async def test_graceful_pod_deletion(client: Client, namespace: str) -> None:
    rt = client.kind("v1", "Pod")
    await client.create(rt, pod("unbound"), namespace)
    await client.delete(rt, "unbound", namespace)
    with pytest.raises(errors.NotFound):
        await client.get(rt, "unbound", namespace)
    await client.create(rt, pod("bound"), namespace)
    await client.bind(namespace, "bound", "node-a")
    bound = await client.get(rt, "bound", namespace)
    assert bound["spec"]["nodeName"] == "node-a"
    assert {"type": "PodScheduled", "status": "True"}.items() <= bound["status"]["conditions"][0].items()
    with pytest.raises(errors.Conflict, match="already assigned"):
        await client.bind(namespace, "bound", "node-b")
    deleting = await client.delete(rt, "bound", namespace)
    assert deleting["metadata"]["deletionTimestamp"] and deleting["metadata"]["deletionGracePeriodSeconds"] == 30
    assert (await client.get(rt, "bound", namespace))["metadata"]["deletionTimestamp"]
    with pytest.raises(errors.Conflict, match="Precondition failed"):
        await client.delete(rt, "bound", namespace, grace_period_seconds=0, preconditions={"uid": "wrong"})
    await client.delete(rt, "bound", namespace, grace_period_seconds=0,
                        preconditions={"uid": bound["metadata"]["uid"]})
    with pytest.raises(errors.NotFound):
        await client.get(rt, "bound", namespace)


@pytest.mark.parametrize("verb", ["put", "merge-patch", "json-patch"])
async def test_write_removing_the_last_finalizer_answers_the_released_object(
        client: Client, namespace: str, verb: str) -> None:
    """A write that takes the last finalizer off a deleting object deletes it, and answers what the
    write made of the object (no finalizers, deletionTimestamp kept) at the resourceVersion it was
    written over, as genericregistry.Store.Update's deleteWithoutFinalizers does; the DELETED event
    carries the stored state at the deletion's revision. kopf tells "released" from "still blocked"
    by the answer's finalizers: answering the stored state (finalizer present) made it take the
    progress-purging MODIFIED event before it for the awaited state and run delete handlers again."""
    rt = client.kind("v1", "ConfigMap")
    path = f"/api/v1/namespaces/{namespace}/configmaps/held"
    await client.create(rt, {"metadata": {"name": "held", "finalizers": ["example.com/keep"]},
                             "data": {"a": "1"}}, namespace)
    deleting = await client.delete(rt, "held", namespace)
    rv = deleting["metadata"]["resourceVersion"]
    if verb == "put":
        body = dict(deleting, metadata={k: v for k, v in deleting["metadata"].items() if k != "finalizers"})
        released = await client.request("PUT", path, body=body)
    elif verb == "merge-patch":
        released = await client.request("PATCH", path, body={"metadata": {"finalizers": None}},
                                        content_type="application/merge-patch+json")
    else:
        released = await client.request("PATCH", path, content_type="application/json-patch+json", body=[
            {"op": "test", "path": "/metadata/resourceVersion", "value": rv},
            {"op": "remove", "path": "/metadata/finalizers"}])
    meta = released["metadata"]
    assert released["kind"] == "ConfigMap" and released["data"] == {"a": "1"}
    assert "finalizers" not in meta and meta["deletionTimestamp"] == deleting["metadata"]["deletionTimestamp"]
    assert meta["resourceVersion"] == rv
    assert list(released) == list(deleting)  # in Kubernetes' field order, as stored objects are
    assert list(meta) == [k for k in deleting["metadata"] if k != "finalizers"]
    with pytest.raises(errors.NotFound):
        await client.get(rt, "held", namespace)
    async for ev in client.watch(rt, namespace, resource_version=rv, timeout_seconds=10):
        if ev["type"] == "BOOKMARK":
            continue
        assert ev["type"] == "DELETED"
        assert ev["object"]["metadata"]["finalizers"] == ["example.com/keep"]  # the stored state
        assert int(ev["object"]["metadata"]["resourceVersion"]) > int(rv)
        break


async def test_cluster_scoped_and_leases(client: Client) -> None:
    node_rt = client.kind("v1", "Node")
    node = await client.create(node_rt, {"metadata": {"name": "api-test-node", "labels": {"a": "b"}},
                                         "spec": {"podCIDR": "10.244.9.0/24"}})
    assert "namespace" not in node["metadata"] and node["spec"]["podCIDR"] == "10.244.9.0/24"
    node["status"] = {"conditions": [{"type": "Ready", "status": "True"}]}
    st = await client.update_status(node_rt, node)
    assert st["status"]["conditions"][0]["type"] == "Ready"
    lease_rt = client.kind("coordination.k8s.io/v1", "Lease")
    lease = await client.create(lease_rt, {"metadata": {"name": "api-test-node"},
                                           "spec": {"holderIdentity": "api-test-node", "leaseDurationSeconds": 40}},
                                "kube-node-lease")
    assert lease["apiVersion"] == "coordination.k8s.io/v1"
    await client.delete(lease_rt, "api-test-node", "kube-node-lease")
    await client.delete(node_rt, "api-test-node")


async def test_namespace_lifecycle(client: Client) -> None:
    ns_rt, rt = client.kind("v1", "Namespace"), client.kind("v1", "Pod")
    await client.create(ns_rt, {"metadata": {"name": "doomed"}})
    await client.create(rt, pod("inside"), "doomed")
    with pytest.raises(errors.Forbidden):
        await client.delete(ns_rt, "default")
    await client.delete(ns_rt, "doomed")
    with pytest.raises(errors.Forbidden, match="being terminated"):
        await client.create(rt, pod("late"), "doomed")
    for _ in range(50):
        try:
            await client.get(ns_rt, "doomed")
        except errors.NotFound:
            break
        await asyncio.sleep(0.2)
    else:
        pytest.fail("namespace was not removed")


# ------------------------------------------------------------------ bad input: clear 4xx, nothing stored
async def _raw(apiserver: APIServer, method: str, path: str, content: bytes,
               ctype: str = "application/json") -> httpx.Response:
    async with httpx.AsyncClient(base_url=apiserver.url) as h:
        return await h.request(method, path, content=content, headers={"Content-Type": ctype})


@pytest.mark.parametrize(("body", "code", "reason", "fragment"), [
    (b"{not json", 400, "BadRequest", "could not be decoded"),
    (b"[1, 2]", 400, "BadRequest", "must be a JSON object"),
    (json.dumps({"apiVersion": "v1", "kind": "Widget", "metadata": {"name": "x"}}).encode(), 400, "BadRequest",
     "does not match the expected kind"),
    (json.dumps({"apiVersion": "v9", "kind": "Pod", "metadata": {"name": "x"}}).encode(), 400, "BadRequest",
     "does not match the expected API version"),
    (json.dumps({"metadata": {"name": "x"}}).encode(), 422, "Invalid", "spec: Required value"),
    (json.dumps({"metadata": {"name": "Bad_Name"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}).encode(),
     422, "Invalid", "metadata.name: Invalid value"),
    (json.dumps({"metadata": {"name": "q"}, "spec": {"containers": [
        {"name": "c", "image": "i", "resources": {"limits": {"cpu": "lots"}}}]}}).encode(),
     422, "Invalid", "quantities must match"),
    (json.dumps({"metadata": {"name": "q", "labels": {"bad key!": "v"}},
                 "spec": {"containers": [{"name": "c", "image": "i"}]}}).encode(), 422, "Invalid", "metadata.labels"),
    (json.dumps({"metadata": {"name": "q", "namespace": "other"},
                 "spec": {"containers": [{"name": "c", "image": "i"}]}}).encode(), 400, "BadRequest",
     "does not match the namespace"),
])
async def test_bad_input_is_rejected_and_nothing_stored(apiserver: APIServer, client: Client, namespace: str,
                                                        body: bytes, code: int, reason: str, fragment: str) -> None:
    before = await client.list(client.kind("v1", "Pod"), namespace)
    r = await _raw(apiserver, "POST", f"/api/v1/namespaces/{namespace}/pods", body)
    assert r.status_code == code, r.text
    status = r.json()
    assert status["kind"] == "Status" and status["reason"] == reason and fragment in status["message"]
    after = await client.list(client.kind("v1", "Pod"), namespace)
    assert after["items"] == before["items"]


async def test_oversized_body_and_missing_namespace(apiserver: APIServer, client: Client) -> None:
    big = json.dumps({"metadata": {"name": "big", "annotations": {"a": "x" * (3 * 1024 * 1024)}},
                      "spec": {"containers": [{"name": "c", "image": "i"}]}}).encode()
    r = await _raw(apiserver, "POST", "/api/v1/namespaces/default/pods", big)
    assert r.status_code == 413 and r.json()["reason"] == "RequestEntityTooLarge"
    with pytest.raises(errors.NotFound):
        await client.get(client.kind("v1", "Pod"), "big", "default")
    r = await _raw(apiserver, "POST", "/api/v1/namespaces/missing-ns/pods",
                   json.dumps(POD).encode())
    assert r.status_code == 404 and 'namespaces "missing-ns" not found' in r.json()["message"]
    r = await _raw(apiserver, "POST", "/api/v1/namespaces/default/pods", b"metadata: {name: y}\n  bad: [",
                   "application/yaml")
    assert r.status_code == 400


async def test_stale_resource_version_via_http(apiserver: APIServer, client: Client, namespace: str) -> None:
    rt = client.kind("v1", "Pod")
    created = await client.create(rt, pod("s"), namespace)
    await client.patch(rt, "s", {"metadata": {"labels": {"bump": "1"}}}, namespace)
    created["metadata"]["labels"]["x"] = "y"
    r = await _raw(apiserver, "PUT", f"/api/v1/namespaces/{namespace}/pods/s", json.dumps(created).encode())
    assert r.status_code == 409 and r.json()["reason"] == "Conflict"
    assert "x" not in (await client.get(rt, "s", namespace))["metadata"]["labels"]


RS = {
    "apiVersion": "apps/v1", "kind": "ReplicaSet",
    "metadata": {"name": "frontend", "labels": {"app": "guestbook"}},
    "spec": {"replicas": 3, "selector": {"matchLabels": {"tier": "frontend"}},
             "template": {"metadata": {"labels": {"tier": "frontend"}},
                          "spec": {"containers": [{"name": "php", "image": "minik8s/busybox"}]}}},
}


async def test_apps_kinds_and_scale_subresource(apiserver: APIServer, client: Client, namespace: str) -> None:
    rs_rt = client.kind("apps/v1", "ReplicaSet")
    created = await client.create(rs_rt, RS, namespace)
    assert created["spec"]["template"]["spec"]["restartPolicy"] == "Always"
    async with httpx.AsyncClient(base_url=apiserver.url) as h:
        path = f"/apis/apps/v1/namespaces/{namespace}/replicasets/frontend/scale"
        scale = (await h.get(path)).json()
        assert scale["kind"] == "Scale" and scale["spec"]["replicas"] == 3
        assert scale["status"]["selector"] == "tier=frontend"
        merge = {"Content-Type": "application/merge-patch+json"}
        r = await h.patch(path, json={"spec": {"replicas": 5}}, headers=merge)
        assert r.status_code == 200 and r.json()["spec"]["replicas"] == 5
        stale = dict(scale, spec={"replicas": 1})
        assert (await h.put(path, json=stale)).status_code == 409
        bad = await h.patch(path, json={"spec": {"replicas": -1}}, headers=merge)
        assert bad.status_code == 422
    got = await client.get(rs_rt, "frontend", namespace)
    assert got["spec"]["replicas"] == 5 and got["metadata"]["generation"] == 2
    mismatched = json.loads(json.dumps(RS))
    mismatched["metadata"]["name"] = "mismatch"
    mismatched["spec"]["selector"] = {"matchLabels": {"tier": "backend"}}
    with pytest.raises(errors.Invalid, match="`selector` does not match template `labels`"):
        await client.create(rs_rt, mismatched, namespace)
    dep_rt = client.kind("apps/v1", "Deployment")
    dep = json.loads(json.dumps(RS))
    dep["kind"] = "Deployment"
    created = await client.create(dep_rt, dep, namespace)
    assert created["spec"]["strategy"] == {"type": "RollingUpdate",
                                           "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}
    assert created["spec"]["revisionHistoryLimit"] == 10


async def test_services_allocate_cluster_ip_and_node_port(client: Client, namespace: str) -> None:
    svc_rt = client.kind("v1", "Service")
    svc = {"metadata": {"name": "web"}, "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}
    created = await client.create(svc_rt, svc, namespace)
    spec = created["spec"]
    assert spec["type"] == "ClusterIP" and spec["clusterIP"].startswith("10.96.")
    assert spec["ports"][0]["targetPort"] == 80
    # updates keep the ClusterIP; changing it is refused
    again = dict(created, spec=dict(spec, clusterIP=""))
    assert (await client.update(svc_rt, again))["spec"]["clusterIP"] == spec["clusterIP"]
    with pytest.raises(errors.Invalid, match="field is immutable"):
        await client.patch(svc_rt, "web", {"spec": {"clusterIP": "10.96.0.99"}}, namespace)
    np = {"metadata": {"name": "np"}, "spec": {"type": "NodePort", "selector": {"app": "web"},
                                               "ports": [{"port": 80, "targetPort": "http", "nodePort": 30080}]}}
    np_created = await client.create(svc_rt, np, namespace)
    assert np_created["spec"]["ports"][0]["nodePort"] == 30080
    clash = json.loads(json.dumps(np))
    clash["metadata"]["name"] = "np2"
    with pytest.raises(errors.Invalid, match="provided port is already allocated"):
        await client.create(svc_rt, clash, namespace)
    clash["spec"]["ports"][0].pop("nodePort")
    auto = await client.create(svc_rt, clash, namespace)
    assert 30000 <= auto["spec"]["ports"][0]["nodePort"] <= 32767
    taken_ip = {"metadata": {"name": "same-ip"}, "spec": {"clusterIP": spec["clusterIP"], "ports": [{"port": 1}]}}
    with pytest.raises(errors.Invalid, match="already allocated"):
        await client.create(svc_rt, taken_ip, namespace)
    with pytest.raises(errors.Invalid, match="not in the valid range"):
        await client.create(svc_rt, {"metadata": {"name": "out"}, "spec": {"clusterIP": "192.0.2.1",
                                                                          "ports": [{"port": 1}]}}, namespace)
    # deleting releases: the same nodePort and IP can be taken again
    await client.delete(svc_rt, "np", namespace)
    await client.delete(svc_rt, "web", namespace)
    await client.create(svc_rt, np, namespace)
    await client.create(svc_rt, taken_ip, namespace)
    with pytest.raises(errors.Invalid, match="metadata.name"):
        await client.create(svc_rt, {"metadata": {"name": "1abc"}, "spec": {"ports": [{"port": 1}]}}, namespace)
    # a LoadBalancer without node ports (KEP-1864), then one that allocates them, turned into a ClusterIP
    lb: dict[str, Any] = {"metadata": {"name": "lb"}, "spec": {"type": "LoadBalancer",
                                                               "allocateLoadBalancerNodePorts": False,
                                               "ports": [{"port": 80}]}}
    assert "nodePort" not in (await client.create(svc_rt, lb, namespace))["spec"]["ports"][0]
    lb["metadata"]["name"] = "lb2"
    del lb["spec"]["allocateLoadBalancerNodePorts"]
    lb2 = await client.create(svc_rt, lb, namespace)
    assert lb2["spec"]["allocateLoadBalancerNodePorts"] is True and lb2["spec"]["ports"][0]["nodePort"]
    plain = await client.patch(svc_rt, "lb2", {"spec": {"type": "ClusterIP"}}, namespace)
    assert "nodePort" not in plain["spec"]["ports"][0] and "allocateLoadBalancerNodePorts" not in plain["spec"]


async def test_health_check_node_port_of_local_load_balancers(client: Client, namespace: str) -> None:
    """kube-apiserver's healthCheckNodePort: allocated for a LoadBalancer with externalTrafficPolicy Local
    (or the one asked for), kept on updates, refused elsewhere or when changed, released when no longer
    needed and on delete."""
    svc_rt = client.kind("v1", "Service")
    lb: dict[str, Any] = {"metadata": {"name": "local-lb"},
                          "spec": {"type": "LoadBalancer", "externalTrafficPolicy": "Local",
                                   "internalTrafficPolicy": "Local", "ports": [{"port": 80}]}}
    created = await client.create(svc_rt, lb, namespace)
    port = created["spec"]["healthCheckNodePort"]
    assert 30000 <= port <= 32767 and port != created["spec"]["ports"][0]["nodePort"]
    assert created["spec"]["internalTrafficPolicy"] == "Local"
    kept = await client.patch(svc_rt, "local-lb", {"metadata": {"labels": {"a": "b"}}}, namespace)
    assert kept["spec"]["healthCheckNodePort"] == port
    with pytest.raises(errors.Invalid, match=r"spec.healthCheckNodePort: Invalid value: \d+: cannot change "
                       "healthCheckNodePort on loadBalancer service with externalTraffic=Local during update"):
        await client.patch(svc_rt, "local-lb", {"spec": {"healthCheckNodePort": port % 32767 + 1}}, namespace)
    # taken by this Service: another may not ask for it
    clash = {"metadata": {"name": "clash"}, "spec": {**lb["spec"], "healthCheckNodePort": port}}
    with pytest.raises(errors.APIError, match=f"failed to allocate requested HealthCheck NodePort {port}: "
                       "provided port is already allocated"):
        await client.create(svc_rt, clash, namespace)
    with pytest.raises(errors.APIError, match="provided port is not in the valid range"):
        await client.create(svc_rt, dict(clash, spec={**lb["spec"], "healthCheckNodePort": 8080}), namespace)
    bad: dict[str, Any]
    for bad, message in (({"type": "NodePort"}, "may only be set when `type` is 'LoadBalancer' and "
                                                "`externalTrafficPolicy` is 'Local'"),
                         ({"type": "ClusterIP", "externalTrafficPolicy": "Local", "healthCheckNodePort": None},
                          "spec.externalTrafficPolicy: Invalid value: \"Local\": may only be set for "
                          "externally-accessible services"),
                         ({"internalTrafficPolicy": "Nearby"}, 'spec.internalTrafficPolicy: Unsupported value: '
                                                               '"Nearby"')):
        body = {"metadata": {"name": "bad"}, "spec": {**lb["spec"], "healthCheckNodePort": 31999, **bad}}
        body["spec"] = {k: val for k, val in body["spec"].items() if val is not None}
        with pytest.raises(errors.Invalid, match=re.escape(message)):
            await client.create(svc_rt, body, namespace)
    # policy Cluster: the port is dropped and released, so another Service may ask for it
    cluster = await client.patch(svc_rt, "local-lb", {"spec": {"externalTrafficPolicy": "Cluster"}}, namespace)
    assert "healthCheckNodePort" not in cluster["spec"]
    other = await client.create(svc_rt, clash, namespace)
    assert other["spec"]["healthCheckNodePort"] == port
    await client.delete(svc_rt, "clash", namespace)
    again = await client.create(svc_rt, clash, namespace)  # released on delete
    assert again["spec"]["healthCheckNodePort"] == port
    await client.delete(svc_rt, "clash", namespace)  # (no proxy of a later module serves its port)
