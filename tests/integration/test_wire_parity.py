"""Wire-level Kubernetes parity of the real apiserver: server-side printing (meta.k8s.io Tables),
metadata-only answers, content negotiation and discovery paths with a trailing slash."""

from __future__ import annotations

import json

import httpx

from minik8s.apiserver import protobuf
from tests.support.processes import APIServer

TABLE_V1 = "application/json;as=Table;v=v1;g=meta.k8s.io"
TABLE_V1BETA1 = "application/json;as=Table;v=v1beta1;g=meta.k8s.io"
KUBECTL_GET_ACCEPT = f"{TABLE_V1},{TABLE_V1BETA1},application/json"  # what kubectl get sends

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "labels": {"app": "web"}},
       "spec": {"containers": [{"name": "c", "image": "minik8s/busybox"}, {"name": "d", "image": "minik8s/busybox"}]}}
DEPLOY = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "front"},
          "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "front"}},
                   "template": {"metadata": {"labels": {"app": "front"}},
                                "spec": {"containers": [{"name": "web", "image": "minik8s/nginx"}]}}}}


def names(table: dict) -> list[str]:
    return [c["name"] for c in table["columnDefinitions"]]


async def test_list_and_get_as_table(apiserver: APIServer, namespace: str) -> None:
    async with httpx.AsyncClient(base_url=apiserver.url) as h:
        pods = f"/api/v1/namespaces/{namespace}/pods"
        assert (await h.post(pods, json=POD)).status_code == 201
        r = await h.get(pods, headers={"Accept": KUBECTL_GET_ACCEPT})
        assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
        table = r.json()
        assert table["kind"] == "Table" and table["apiVersion"] == "meta.k8s.io/v1"
        assert table["metadata"]["resourceVersion"]
        assert names(table) == ["Name", "Ready", "Status", "Restarts", "Age", "IP", "Node", "Nominated Node",
                                "Readiness Gates"]
        assert [c["priority"] for c in table["columnDefinitions"]] == [0, 0, 0, 0, 0, 1, 1, 1, 1]
        assert table["columnDefinitions"][0]["format"] == "name"
        [row] = table["rows"]
        assert row["cells"][:4] == ["web", "0/2", "Pending", "0"] and row["cells"][5:] == ["<none>"] * 4
        # The default includeObject=Metadata: enough for --show-labels and -L.
        assert row["object"]["kind"] == "PartialObjectMetadata"
        assert row["object"]["apiVersion"] == "meta.k8s.io/v1"
        assert row["object"]["metadata"]["labels"] == {"app": "web"} and "spec" not in row["object"]

        full = (await h.get(pods, params={"includeObject": "Object"}, headers={"Accept": TABLE_V1})).json()
        assert full["rows"][0]["object"]["kind"] == "Pod" and full["rows"][0]["object"]["spec"]["containers"]
        bare = (await h.get(pods, params={"includeObject": "None"}, headers={"Accept": TABLE_V1})).json()
        assert bare["rows"][0]["object"] is None
        bad = await h.get(pods, params={"includeObject": "Everything"}, headers={"Accept": TABLE_V1})
        assert bad.status_code == 400 and bad.json()["message"] == 'unrecognized includeObject value: "Everything"'

        beta = (await h.get(f"{pods}/web", headers={"Accept": TABLE_V1BETA1})).json()
        assert beta["apiVersion"] == "meta.k8s.io/v1beta1" and len(beta["rows"]) == 1
        assert beta["metadata"]["resourceVersion"] == beta["rows"][0]["object"]["metadata"]["resourceVersion"]
        assert beta["rows"][0]["object"]["apiVersion"] == "meta.k8s.io/v1beta1"

        deploys = f"/apis/apps/v1/namespaces/{namespace}/deployments"
        assert (await h.post(deploys, json=DEPLOY)).status_code == 201
        table = (await h.get(deploys, headers={"Accept": TABLE_V1})).json()
        assert names(table) == ["Name", "Ready", "Up-to-date", "Available", "Age", "Containers", "Images",
                                "Selector"]
        assert [c["type"] for c in table["columnDefinitions"][1:4]] == ["string", "integer", "integer"]
        cells = table["rows"][0]["cells"]
        assert cells[:4] == ["front", "0/3", 0, 0] and cells[5:] == ["web", "minik8s/nginx", "app=front"]

        # Kinds without printer columns (minik8s' own) answer NAME and AGE, as CRDs do.
        dns = (await h.get(f"/apis/minik8s.io/v1/namespaces/{namespace}/dnses", headers={"Accept": TABLE_V1})).json()
        assert names(dns) == ["Name", "Age"] and dns["rows"] == []
        events = (await h.get(f"/api/v1/namespaces/{namespace}/events", headers={"Accept": TABLE_V1})).json()
        assert names(events)[0] == "Last Seen" and names(events)[-1] == "Name"


async def test_metadata_only_and_negotiation(apiserver: APIServer, namespace: str) -> None:
    async with httpx.AsyncClient(base_url=apiserver.url) as h:
        pods = f"/api/v1/namespaces/{namespace}/pods"
        assert (await h.post(pods, json=POD)).status_code == 201
        meta_list = (await h.get(pods, headers={
            "Accept": "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json"})).json()
        assert meta_list["kind"] == "PartialObjectMetadataList"
        assert [i["metadata"]["name"] for i in meta_list["items"]] == ["web"]
        assert set(meta_list["items"][0]) == {"kind", "apiVersion", "metadata"}
        meta = (await h.get(f"{pods}/web", headers={
            "Accept": "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io"})).json()
        assert meta["kind"] == "PartialObjectMetadata" and meta["metadata"]["labels"] == {"app": "web"}

        # Protobuf is never produced: with a JSON alternative JSON is served, alone it is 406.
        r = await h.get(pods, headers={"Accept": "application/vnd.kubernetes.protobuf,application/json"})
        assert r.status_code == 200 and r.json()["kind"] == "PodList"
        r = await h.get(pods, headers={"Accept": "application/vnd.kubernetes.protobuf"})
        assert r.status_code == 406 and r.json()["reason"] == "NotAcceptable"
        # An unknown conversion is skipped like any clause this server cannot produce.
        r = await h.get(pods, headers={"Accept": "application/json;as=Widget;v=v1;g=meta.k8s.io"})
        assert r.status_code == 406
        r = await h.get(pods, headers={"Accept": "application/yaml"})
        assert r.headers["content-type"].startswith("application/yaml") and "kind: PodList" in r.text
        r = await h.get(pods, headers={"Accept": f"application/json;q=0.5,{TABLE_V1}"})
        assert r.json()["kind"] == "Table"


async def test_watch_as_table(apiserver: APIServer, namespace: str) -> None:
    async with httpx.AsyncClient(base_url=apiserver.url, timeout=30) as h:
        pods = f"/api/v1/namespaces/{namespace}/pods"
        created = (await h.post(pods, json=POD)).json()
        rv = created["metadata"]["resourceVersion"]
        params = {"watch": "true", "resourceVersion": "0", "timeoutSeconds": "5"}
        async with h.stream("GET", pods, params=params, headers={"Accept": KUBECTL_GET_ACCEPT}) as stream:
            lines = stream.aiter_lines()
            first = json.loads(await anext(lines))
            assert first["type"] == "ADDED" and first["object"]["kind"] == "Table"
            assert names(first["object"])[:2] == ["Name", "Ready"]
            assert first["object"]["rows"][0]["cells"][0] == "web"
            assert first["object"]["metadata"]["resourceVersion"] == rv
            patched = await h.patch(f"{pods}/web", json={"metadata": {"labels": {"x": "1"}}},
                                    headers={"Content-Type": "application/merge-patch+json"})
            assert patched.status_code == 200
            second = json.loads(await anext(lines))
            # Later events leave the column definitions out (kubectl keeps the first ones).
            assert second["type"] == "MODIFIED" and second["object"]["columnDefinitions"] == []
            assert second["object"]["rows"][0]["object"]["metadata"]["labels"] == {"app": "web", "x": "1"}
        r = await h.get(pods, params={"watch": "1"}, headers={"Accept": "application/yaml"})
        assert r.status_code == 406


async def test_discovery_with_trailing_slash(apiserver: APIServer) -> None:
    async with httpx.AsyncClient(base_url=apiserver.url) as h:
        for path in ("/api", "/api/v1", "/apis", "/apis/apps", "/apis/apps/v1", "/apis/metrics.k8s.io/v1beta1"):
            plain, slash = await h.get(path), await h.get(path + "/")
            assert slash.status_code == 200, path
            assert slash.json() == plain.json(), path
        assert (await h.get("/apis/nope/v1/")).status_code == 404


def test_python_client_get_api_resources(apiserver: APIServer) -> None:
    """The ``kubernetes`` client asks for ``/api/v1/`` and ``/apis/apps/v1/`` with a trailing slash."""
    from kubernetes import client as k8s

    cfg = k8s.Configuration()
    cfg.host = apiserver.url
    api_client = k8s.ApiClient(cfg)
    core = k8s.CoreV1Api(api_client).get_api_resources()
    assert core.group_version == "v1" and "pods" in [r.name for r in core.resources]
    apps = k8s.AppsV1Api(api_client).get_api_resources()
    assert "deployments" in [r.name for r in apps.resources]


async def test_openapi_documents(apiserver: APIServer) -> None:
    async with httpx.AsyncClient(base_url=apiserver.url) as h:
        index = (await h.get("/openapi/v3")).json()
        url = index["paths"]["apis/apps/v1"]["serverRelativeURL"]
        assert url.startswith("/openapi/v3/apis/apps/v1?hash=")
        r = await h.get(url)
        assert r.status_code == 200 and r.headers["cache-control"] == "public, immutable"
        doc = r.json()
        assert doc["openapi"].startswith("3.") and "io.k8s.api.apps.v1.Deployment" in doc["components"]["schemas"]
        assert (await h.get("/openapi/v3/apis/apps/v1")).json() == doc
        assert (await h.get("/openapi/v3/apis/nope/v1")).status_code == 404
        v2 = (await h.get("/openapi/v2", headers={"Accept": "application/json"})).json()
        assert v2["swagger"] == "2.0" and "io.k8s.api.core.v1.Pod" in v2["definitions"]
        assert "/api/v1/namespaces/{namespace}/pods/{name}" in v2["paths"]
        # client-go reads the v2 document only in protobuf (gnostic's openapi.v2.Document)
        pb = await h.get("/openapi/v2", headers={
            "Accept": "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"})
        assert pb.headers["content-type"] == "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
        document = protobuf.message_class("openapi.v2.Document").FromString(pb.content)
        assert document.swagger == "2.0"
        definitions = {d.name: d.value for d in document.definitions.additional_properties}
        pod = definitions["io.k8s.api.core.v1.Pod"]
        assert [e.value.yaml for e in pod.vendor_extension if e.name == "x-kubernetes-group-version-kind"] == [
            '[{"group": "", "kind": "Pod", "version": "v1"}]']
        assert (await h.get("/openapi/v2", headers={"Accept": "application/vnd.kubernetes.protobuf"})
                ).status_code == 406


async def test_field_validation(apiserver: APIServer, namespace: str) -> None:
    bad = {**POD, "spec": {**POD["spec"], "foo": 1}}
    bad["metadata"] = {"name": "bad", "bar": "x"}
    async with httpx.AsyncClient(base_url=apiserver.url) as h:
        pods = f"/api/v1/namespaces/{namespace}/pods"
        r = await h.post(pods, params={"fieldValidation": "Strict"}, json=bad)
        assert r.status_code == 400 and r.json()["reason"] == "BadRequest"
        assert r.json()["message"] == ('Pod in version "v1" cannot be handled as a Pod: strict decoding error: '
                                       'unknown field "metadata.bar", unknown field "spec.foo"')
        assert (await h.get(f"{pods}/bad")).status_code == 404

        r = await h.post(pods, json=bad)  # Warn is the default
        assert r.status_code == 201
        assert r.headers.get_list("warning") == ['299 - "unknown field \\"metadata.bar\\""',
                                                 '299 - "unknown field \\"spec.foo\\""']
        assert "foo" not in r.json()["spec"] and "bar" not in r.json()["metadata"]  # never stored

        r = await h.put(f"{pods}/bad", params={"fieldValidation": "Ignore"}, json={**r.json(), "extra": 1})
        assert r.status_code == 200 and "warning" not in r.headers
        r = await h.put(f"{pods}/bad", params={"fieldValidation": "Strict"}, json={**r.json(), "extra": 1})
        assert r.status_code == 400 and 'unknown field "extra"' in r.json()["message"]

        merge = {"Content-Type": "application/merge-patch+json"}
        r = await h.patch(f"{pods}/bad", params={"fieldValidation": "Strict"}, headers=merge,
                          json={"spec": {"containers": [{"name": "c", "image": "x", "nope": 1}]}})
        assert r.status_code == 422 and r.json()["reason"] == "Invalid"
        assert r.json()["message"].endswith('strict decoding error: unknown field "spec.containers[0].nope"')
        r = await h.patch(f"{pods}/bad", params={"fieldValidation": "Warn"}, headers=merge,
                          json={"metadata": {"labels": {"a": "b"}, "zz": 1}})
        assert r.status_code == 200 and r.headers["warning"] == '299 - "unknown field \\"metadata.zz\\""'

        r = await h.post(pods, params={"fieldValidation": "Loose"}, json=POD)
        assert r.status_code == 422 and r.json()["message"] == (
            'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loose": '
            'supported values: "Ignore", "Strict", "Warn"')


async def test_watch_list_ends_initial_events_with_a_bookmark(apiserver: APIServer, namespace: str) -> None:
    """client-go's WatchListClient (kubectl 1.37's wait, rollout status) waits for that bookmark."""
    async with httpx.AsyncClient(base_url=apiserver.url, timeout=30) as h:
        pods = f"/api/v1/namespaces/{namespace}/pods"
        created = (await h.post(pods, json=POD)).json()
        params = {"watch": "true", "sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan",
                  "allowWatchBookmarks": "true", "resourceVersion": created["metadata"]["resourceVersion"],
                  "timeoutSeconds": "5"}
        async with h.stream("GET", pods, params=params) as stream:
            lines = stream.aiter_lines()
            added = json.loads(await anext(lines))
            assert added["type"] == "ADDED" and added["object"]["metadata"]["name"] == "web"
            bookmark = json.loads(await anext(lines))
            assert bookmark["type"] == "BOOKMARK"
            assert bookmark["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
            assert int(bookmark["object"]["metadata"]["resourceVersion"]) >= int(created["metadata"]["resourceVersion"])


async def test_autoscaling_v1_is_served_from_the_stored_v2(apiserver: APIServer, namespace: str) -> None:
    ref = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
    async with httpx.AsyncClient(base_url=apiserver.url, timeout=30) as h:
        group = (await h.get("/apis/autoscaling")).json()
        assert [v["version"] for v in group["versions"]] == ["v2", "v1"]
        assert group["preferredVersion"]["version"] == "v2"
        v1 = f"/apis/autoscaling/v1/namespaces/{namespace}/horizontalpodautoscalers"
        v2 = f"/apis/autoscaling/v2/namespaces/{namespace}/horizontalpodautoscalers"
        r = await h.post(v1, json={"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
                                   "metadata": {"name": "web"}, "spec": {"scaleTargetRef": ref, "maxReplicas": 4,
                                                                         "targetCPUUtilizationPercentage": 60}})
        assert r.status_code == 201, r.text
        assert r.json()["apiVersion"] == "autoscaling/v1" and r.json()["spec"]["targetCPUUtilizationPercentage"] == 60
        stored = (await h.get(f"{v2}/web")).json()
        assert stored["spec"]["metrics"][0]["resource"]["target"] == {"type": "Utilization", "averageUtilization": 60}
        # a v2-only metric survives a v1 update
        memory = {"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue",
                                                                                  "averageValue": "1Gi"}}}
        stored["spec"]["metrics"].append(memory)
        assert (await h.put(f"{v2}/web", json=stored)).status_code == 200
        shown = (await h.get(f"{v1}/web")).json()
        shown["spec"]["maxReplicas"] = 6
        r = await h.put(f"{v1}/web", json=shown)
        assert r.status_code == 200 and r.json()["spec"]["maxReplicas"] == 6
        r = await h.patch(f"{v1}/web", json={"spec": {"targetCPUUtilizationPercentage": 75}},
                          headers={"Content-Type": "application/strategic-merge-patch+json"})
        assert r.status_code == 200 and r.json()["spec"]["targetCPUUtilizationPercentage"] == 75
        stored = (await h.get(f"{v2}/web")).json()
        assert stored["spec"]["maxReplicas"] == 6 and stored["spec"]["metrics"][1] == memory
        assert stored["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 75
        listed = (await h.get(v1)).json()
        assert listed["kind"] == "HorizontalPodAutoscalerList" and listed["apiVersion"] == "autoscaling/v1"
        assert listed["items"][0]["spec"]["targetCPUUtilizationPercentage"] == 75
        params = {"watch": "1", "resourceVersion": "0", "timeoutSeconds": "3"}
        async with h.stream("GET", v1, params=params) as stream:
            event = json.loads(await anext(stream.aiter_lines()))
        assert event["type"] == "ADDED" and event["object"]["apiVersion"] == "autoscaling/v1"
        r = await h.delete(f"{v1}/web")
        assert r.status_code == 200 and r.json()["apiVersion"] == "autoscaling/v1"
        assert (await h.get(f"{v2}/web")).status_code == 404


async def test_status_bodies_are_kube_apiservers_bytes(apiserver: APIServer, namespace: str) -> None:
    """A ``Status`` in Go's field order (``details`` before ``code``), an empty ``group`` left out, and
    the newline Go's encoder ends every body with: clients compare these texts."""
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "dup"},
           "spec": {"ports": [{"port": 80}], "selector": {"app": "dup"}}}
    async with httpx.AsyncClient(base_url=apiserver.url) as h:
        services = f"/api/v1/namespaces/{namespace}/services"
        assert (await h.post(services, json=svc)).status_code == 201
        again = await h.post(services, json=svc)
        assert again.status_code == 409
        assert again.content == (
            b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
            b'"message":"services \\"dup\\" already exists","reason":"AlreadyExists",'
            b'"details":{"name":"dup","kind":"services"},"code":409}\n')
        missing = await h.get(f"/apis/apps/v1/namespaces/{namespace}/deployments/nope")
        assert missing.content == (
            b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
            b'"message":"deployments.apps \\"nope\\" not found","reason":"NotFound",'
            b'"details":{"name":"nope","group":"apps","kind":"deployments"},"code":404}\n')
        invalid = await h.post(services, json={**svc, "metadata": {"name": "Bad_Name"}})
        status = invalid.json()
        assert list(status) == ["kind", "apiVersion", "metadata", "status", "message", "reason", "details", "code"]
        assert list(status["details"]) == ["name", "kind", "causes"]
        assert all(list(c) == ["reason", "message", "field"] for c in status["details"]["causes"])


async def test_objects_come_in_kubernetes_field_order(apiserver: APIServer, namespace: str) -> None:
    """kube-apiserver writes an object from its Go struct: ``kind`` and ``apiVersion`` first, then
    ``metadata`` (``name, namespace, uid, resourceVersion, generation?, creationTimestamp, labels``),
    ``spec`` and ``status``, each in its Go type's order; in a create's answer, a get, a list and a
    watch event alike."""
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"labels": {"app": "web"}, "name": "ordered"},
           "spec": {"restartPolicy": "Never", "containers": [
               {"image": "minik8s/busybox", "name": "c", "command": ["sleep", "1"]}],
               "volumes": [{"emptyDir": {}, "name": "scratch"}]}}
    async with httpx.AsyncClient(base_url=apiserver.url, timeout=30) as h:
        pods = f"/api/v1/namespaces/{namespace}/pods"
        created = await h.post(pods, json=pod)
        assert created.status_code == 201 and created.content.endswith(b"}\n")
        fetched = await h.get(f"{pods}/ordered")
        listed = (await h.get(pods)).json()["items"][0]
        params = {"watch": "true", "resourceVersion": "0", "timeoutSeconds": "2"}
        async with h.stream("GET", pods, params=params) as stream:
            watched = json.loads(await anext(stream.aiter_lines()))["object"]
        for obj in (created.json(), fetched.json(), listed, watched):
            assert list(obj)[:3] == ["kind", "apiVersion", "metadata"] and list(obj)[3:] == ["spec", "status"]
            meta = [k for k in obj["metadata"] if k != "generation"]
            assert meta[:6] == ["name", "namespace", "uid", "resourceVersion", "creationTimestamp", "labels"], meta
            spec = list(obj["spec"])
            assert spec.index("volumes") < spec.index("containers") < spec.index("restartPolicy")
            assert list(obj["spec"]["containers"][0])[:3] == ["name", "image", "command"]
            assert list(obj["spec"]["volumes"][0]) == ["name", "emptyDir"]


async def test_protobuf_delete_options_as_helm_sends_them(apiserver: APIServer, namespace: str) -> None:
    """``helm uninstall`` sends its DeleteOptions in protobuf (envelope ``v1``/``DeleteOptions``)."""
    opts = protobuf.message_class("k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions")()
    opts.propagationPolicy = "Background"
    unknown = protobuf.message_class("k8s.io.apimachinery.pkg.runtime.Unknown")()
    unknown.typeMeta.apiVersion, unknown.typeMeta.kind = "v1", "DeleteOptions"
    unknown.raw = opts.SerializeToString()
    body = protobuf.MAGIC + unknown.SerializeToString()
    async with httpx.AsyncClient(base_url=apiserver.url) as h:
        deploys = f"/apis/apps/v1/namespaces/{namespace}/deployments"
        assert (await h.post(deploys, json=DEPLOY)).status_code == 201
        r = await h.request("DELETE", f"{deploys}/front", content=body,
                            headers={"Content-Type": protobuf.MEDIA_TYPE, "Accept": "application/json"})
        assert r.status_code == 200, r.text
        assert (await h.get(f"{deploys}/front")).status_code == 404
