"""CustomResourceDefinitions against a real etcd and apiserver, over real HTTP: the CRD's lifecycle
and conditions, custom resources (CRUD, watch, selectors, finalizers, status and scale
subresources, printer columns, versions), bad input, deletion; real clients (both official
kubectls, lightkube's generic resources, minik8s' kubectl)."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from minik8s.api import errors
from minik8s.client.rest import Client
from tests.realkubectl import RealKubectl, real_kubectl  # noqa: F401 - the fixture
from tests.support.kubectl import Kubectl
from tests.support.waiting import wait_for

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
MERGE = "application/merge-patch+json"


def crd_manifest(group: str, plural: str = "crontabs", kind: str = "CronTab", scope: str = "Namespaced",
                 short: tuple[str, ...] = ("ct",)) -> dict[str, Any]:
    """A CronTab CRD as in Kubernetes' documentation: v1 (storage) and v1beta1, status and scale."""
    schema = {
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {
                "cronSpec": {"type": "string"},
                "image": {"type": "string"},
                "replicas": {"type": "integer", "default": 1},
            }, "required": ["cronSpec"]},
            "status": {"type": "object", "properties": {
                "replicas": {"type": "integer"}, "selector": {"type": "string"},
                "phase": {"type": "string"},
            }},
        },
    }
    columns = [
        {"name": "Spec", "type": "string", "jsonPath": ".spec.cronSpec"},
        {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
        {"name": "Phase", "type": "string", "jsonPath": ".status.phase"},
        {"name": "Image", "type": "string", "jsonPath": ".spec.image", "priority": 1},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
    ]
    subresources = {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                            "statusReplicasPath": ".status.replicas",
                                            "labelSelectorPath": ".status.selector"}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group, "scope": scope,
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind, "shortNames": list(short),
                      "categories": ["all"]},
            "versions": [
                {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema},
                 "subresources": subresources, "additionalPrinterColumns": columns},
                {"name": "v1beta1", "served": True, "storage": False, "schema": {"openAPIV3Schema": schema},
                 "subresources": subresources},
            ],
        },
    }


def fresh_group() -> str:
    return f"t{os.urandom(3).hex()}.example.com"


async def established(client: Client, name: str, timeout: float = 10.0) -> dict[str, Any]:
    async def ready() -> dict[str, Any] | None:
        crd = await client.request("GET", f"{CRDS}/{name}")
        conds = {c["type"]: c for c in (crd.get("status") or {}).get("conditions") or []}
        return crd if conds.get("Established", {}).get("status") == "True" else None
    return await wait_for(ready, timeout, what=f"CRD {name} Established")


async def delete_crd(client: Client, name: str) -> None:
    try:
        await client.request("DELETE", f"{CRDS}/{name}")
    except errors.NotFound:
        return

    async def gone() -> bool:
        try:
            await client.request("GET", f"{CRDS}/{name}")
        except errors.NotFound:
            return True
        return False
    await wait_for(gone, 20, what=f"CRD {name} deleted")


@pytest.fixture
async def crontabs(client: Client) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """An Established CronTab CRD in a group of its own: (group, the CRD)."""
    group = fresh_group()
    manifest = crd_manifest(group)
    await client.request("POST", CRDS, body=manifest)
    crd = await established(client, manifest["metadata"]["name"])
    yield group, crd
    await delete_crd(client, manifest["metadata"]["name"])


def cr(name: str, cron: str = "* * * * */5", **spec: Any) -> dict[str, Any]:
    return {"kind": "CronTab", "metadata": {"name": name, "labels": {"app": name}},
            "spec": {"cronSpec": cron, **spec}}


async def test_crd_established_and_discovered(client: Client) -> None:
    group = fresh_group()
    manifest = crd_manifest(group)
    name = manifest["metadata"]["name"]
    start = time.monotonic()
    created = await client.request("POST", CRDS, body=manifest)
    assert created["metadata"]["finalizers"] == ["customresourcecleanup.apiextensions.k8s.io"]
    assert created["spec"]["names"]["listKind"] == "CronTabList"
    crd = await established(client, name)
    took = time.monotonic() - start
    assert took < 5, took
    conds = {c["type"]: c for c in crd["status"]["conditions"]}
    assert (conds["NamesAccepted"]["status"], conds["NamesAccepted"]["reason"]) == ("True", "NoConflicts")
    assert conds["Established"]["reason"] == "InitialNamesAccepted"
    assert crd["status"]["acceptedNames"]["shortNames"] == ["ct"]
    assert crd["status"]["storedVersions"] == ["v1"]
    try:
        groups = {g["name"]: g for g in (await client.request("GET", "/apis"))["groups"]}
        assert groups[group]["preferredVersion"]["version"] == "v1"
        assert [v["version"] for v in groups[group]["versions"]] == ["v1", "v1beta1"]
        doc = await client.request("GET", f"/apis/{group}/v1")
        by_name = {r["name"]: r for r in doc["resources"]}
        assert by_name["crontabs"]["shortNames"] == ["ct"]
        assert by_name["crontabs"]["categories"] == ["all"]
        assert by_name["crontabs"]["kind"] == "CronTab" and by_name["crontabs"]["namespaced"] is True
        assert {"crontabs/status", "crontabs/scale"} <= set(by_name)
        v3 = await client.request("GET", f"/openapi/v3/apis/{group}/v1")
        schemas = v3["components"]["schemas"]
        definition = schemas[f"com.example.{group.split('.')[0]}.v1.CronTab"]
        assert "cronSpec" in definition["properties"]["spec"]["properties"]
    finally:
        await delete_crd(client, name)
    with pytest.raises(errors.NotFound):
        await client.request("GET", f"/apis/{group}/v1")


async def test_custom_resource_verbs(client: Client, namespace: str,
                                     crontabs: tuple[str, dict[str, Any]]) -> None:
    group, _ = crontabs
    base = f"/apis/{group}/v1/namespaces/{namespace}/crontabs"
    a = await client.request("POST", base, body=cr("a", image="nginx"))
    assert a["apiVersion"] == f"{group}/v1" and a["metadata"]["generation"] == 1
    assert a["spec"]["replicas"] == 1  # defaulted
    gen = await client.request("POST", base, body={**cr(""), "metadata": {"generateName": "gen-"}})
    assert gen["metadata"]["name"].startswith("gen-")
    # every served version sees the same objects; only apiVersion differs
    beta = await client.request("GET", f"/apis/{group}/v1beta1/namespaces/{namespace}/crontabs/a")
    assert beta["apiVersion"] == f"{group}/v1beta1" and beta["metadata"]["uid"] == a["metadata"]["uid"]
    await client.request("PUT", f"/apis/{group}/v1beta1/namespaces/{namespace}/crontabs/a",
                         body={**beta, "metadata": {**beta["metadata"], "labels": {"app": "a", "v": "beta"}}})
    stored = await client.request("GET", f"{base}/a")
    assert stored["apiVersion"] == f"{group}/v1" and stored["metadata"]["labels"]["v"] == "beta"
    # selectors
    listed = await client.request("GET", base, params={"labelSelector": "app=a"})
    assert [o["metadata"]["name"] for o in listed["items"]] == ["a"]
    listed = await client.request("GET", base, params={"fieldSelector": "metadata.name=a"})
    assert [o["metadata"]["name"] for o in listed["items"]] == ["a"]
    all_ns = await client.request("GET", f"/apis/{group}/v1/crontabs",
                                  params={"fieldSelector": f"metadata.namespace={namespace}"})
    assert len(all_ns["items"]) == 2
    with pytest.raises(errors.BadRequest):
        await client.request("GET", base, params={"fieldSelector": "spec.cronSpec=x"})
    # patches: merge and JSON; strategic merge patch is not for custom resources
    patched = await client.request("PATCH", f"{base}/a", body={"spec": {"image": "busybox"}}, content_type=MERGE)
    assert patched["spec"]["image"] == "busybox" and patched["metadata"]["generation"] == 2
    patched = await client.request("PATCH", f"{base}/a", body=[{"op": "replace", "path": "/spec/cronSpec",
                                                                "value": "0 * * * *"}],
                                   content_type="application/json-patch+json")
    assert patched["spec"]["cronSpec"] == "0 * * * *" and patched["metadata"]["generation"] == 3
    with pytest.raises(errors.APIError) as exc:
        await client.request("PATCH", f"{base}/a", body={"spec": {}},
                             content_type="application/strategic-merge-patch+json")
    assert exc.value.code == 415
    # a label change is no spec change: generation stays
    labelled = await client.request("PATCH", f"{base}/a", body={"metadata": {"labels": {"x": "y"}}},
                                    content_type=MERGE)
    assert labelled["metadata"]["generation"] == 3
    # stale resourceVersion: 409
    with pytest.raises(errors.Conflict):
        await client.request("PUT", f"{base}/a", body={**a, "spec": {"cronSpec": "x"}})
    # status subresource: the main resource ignores status, /status ignores the rest
    current = await client.request("GET", f"{base}/a")
    ignored = await client.request("PUT", f"{base}/a", body={**current, "status": {"phase": "Running"}})
    assert "status" not in ignored
    status = await client.request("PATCH", f"{base}/a/status",
                                  body={"status": {"phase": "Running", "replicas": 1, "selector": "app=a"},
                                        "spec": {"cronSpec": "ignored"}}, content_type=MERGE)
    assert status["status"]["phase"] == "Running" and status["spec"]["cronSpec"] == "0 * * * *"
    assert status["metadata"]["generation"] == 3
    # scale subresource from the CRD's paths
    scale = await client.request("GET", f"{base}/a/scale")
    assert (scale["kind"], scale["spec"]["replicas"], scale["status"]) == \
        ("Scale", 1, {"replicas": 1, "selector": "app=a"})
    scaled = await client.request("PATCH", f"{base}/a/scale", body={"spec": {"replicas": 4}}, content_type=MERGE)
    assert scaled["spec"]["replicas"] == 4
    assert (await client.request("GET", f"{base}/a"))["spec"]["replicas"] == 4
    # printer columns in the Table
    table = await client.request("GET", base, params={"labelSelector": "app=a"})
    async with httpx.AsyncClient(base_url=client.server) as raw:
        resp = await raw.get(base, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    table = resp.json()
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Spec", "Replicas", "Phase", "Image", "Age"]
    assert [c["priority"] for c in table["columnDefinitions"]][4] == 1
    row = next(r for r in table["rows"] if r["cells"][0] == "a")
    assert row["cells"][1:4] == ["0 * * * *", 4, "Running"]
    # server-side apply: created, then a field owned by another manager conflicts
    applied = await client.request("PATCH", f"{base}/ssa", params={"fieldManager": "tool"},
                                   body={"apiVersion": f"{group}/v1", "kind": "CronTab", "metadata": {"name": "ssa"},
                                         "spec": {"cronSpec": "1 * * * *", "image": "a"}},
                                   content_type="application/apply-patch+yaml")
    assert applied["spec"] == {"cronSpec": "1 * * * *", "image": "a", "replicas": 1}
    assert [m["manager"] for m in applied["metadata"]["managedFields"]] == ["tool"]
    with pytest.raises(errors.Conflict):
        await client.request("PATCH", f"{base}/ssa", params={"fieldManager": "other"},
                             body={"apiVersion": f"{group}/v1", "kind": "CronTab", "metadata": {"name": "ssa"},
                                   "spec": {"cronSpec": "2 * * * *"}},
                             content_type="application/apply-patch+yaml")
    await client.request("DELETE", f"{base}/ssa")
    # deletecollection with a selector, then delete
    await client.request("DELETE", base, params={"labelSelector": "app=a"})
    names = [o["metadata"]["name"] for o in (await client.request("GET", base))["items"]]
    assert names == [gen["metadata"]["name"]]


async def test_custom_resource_watch_and_finalizers(client: Client, namespace: str,
                                                    crontabs: tuple[str, dict[str, Any]]) -> None:
    group, _ = crontabs
    base = f"/apis/{group}/v1/namespaces/{namespace}/crontabs"
    listed = await client.request("GET", base)
    rv = listed["metadata"]["resourceVersion"]
    obj = cr("w")
    obj["metadata"]["finalizers"] = ["example.com/keep"]
    await client.request("POST", base, body=obj)
    await client.request("DELETE", f"{base}/w")
    kept = await client.request("GET", f"{base}/w")
    assert kept["metadata"]["deletionTimestamp"]
    await client.request("PATCH", f"{base}/w", body={"metadata": {"finalizers": None}}, content_type=MERGE)
    with pytest.raises(errors.NotFound):
        await client.request("GET", f"{base}/w")
    async with httpx.AsyncClient(base_url=client.server, timeout=10) as raw:
        async with raw.stream("GET", base, params={"watch": "true", "resourceVersion": rv,
                                                   "timeoutSeconds": "5"}) as resp:
            events = []
            async for line in resp.aiter_lines():
                if line:
                    events.append(json.loads(line))
                if len(events) == 3:
                    break
    assert [e["type"] for e in events] == ["ADDED", "MODIFIED", "DELETED"]
    assert events[0]["object"]["apiVersion"] == f"{group}/v1"


async def test_kopf_deletion_flow_answers_and_events(client: Client, namespace: str,
                                                    crontabs: tuple[str, dict[str, Any]]) -> None:
    """kopf's writes while it runs delete handlers, in its order: progress annotations (merge patch),
    their purge (merge patch), then the finalizer's removal (JSON patch testing resourceVersion). The
    last answer is the released object at the purge's resourceVersion (Kubernetes'
    deleteWithoutFinalizers), so kopf does not await that version, whose MODIFIED event lacks the
    progress; answering the stored state (finalizer present) had kopf take that event for
    consistent and run its first delete handler a second time (kopf's examples/05-handlers)."""
    group, _ = crontabs
    base = f"/apis/{group}/v1/namespaces/{namespace}/crontabs"
    rv0 = (await client.request("GET", base))["metadata"]["resourceVersion"]
    obj = cr("k")
    obj["metadata"]["finalizers"] = ["kopf.zalando.org/KopfFinalizerMarker"]
    await client.request("POST", base, body=obj)
    deleting = await client.request("DELETE", f"{base}/k")
    progress = await client.request("PATCH", f"{base}/k", content_type=MERGE, body={"metadata": {"annotations": {
        "kopf.zalando.org/delete_fn_1": '{"success":true}', "kopf.zalando.org/delete_fn_2": '{"success":false}'}}})
    purged = await client.request("PATCH", f"{base}/k", content_type=MERGE, body={"metadata": {"annotations": {
        "kopf.zalando.org/delete_fn_1": None, "kopf.zalando.org/delete_fn_2": None}}})
    assert "annotations" not in purged["metadata"] and purged["metadata"]["finalizers"]
    released = await client.request(
        "PATCH", f"{base}/k", content_type="application/json-patch+json",
        body=[{"op": "test", "path": "/metadata/resourceVersion", "value": purged["metadata"]["resourceVersion"]},
              {"op": "remove", "path": "/metadata/finalizers"}])
    assert released["metadata"]["deletionTimestamp"] and "finalizers" not in released["metadata"]
    assert released["metadata"]["resourceVersion"] == purged["metadata"]["resourceVersion"]
    events: list[tuple[str, str, bool, bool]] = []
    async with httpx.AsyncClient(base_url=client.server, timeout=10) as raw:
        async with raw.stream("GET", base, params={"watch": "true", "resourceVersion": rv0,
                                                   "timeoutSeconds": "5"}) as resp:
            async for line in resp.aiter_lines():
                if line:
                    meta = json.loads(line)["object"]["metadata"]
                    events.append((json.loads(line)["type"], meta["resourceVersion"],
                                   bool(meta.get("finalizers")), "kopf.zalando.org/delete_fn_1"
                                   in (meta.get("annotations") or {})))
                if len(events) == 5:
                    break
    rvs = [deleting, progress, purged]
    assert events[:4] == [("ADDED", events[0][1], True, False)] + [
        ("MODIFIED", o["metadata"]["resourceVersion"], True, o is progress) for o in rvs]
    assert events[4][0] == "DELETED" and int(events[4][1]) > int(purged["metadata"]["resourceVersion"])


async def test_invalid_crds_are_refused_and_nothing_stored(client: Client) -> None:
    group = fresh_group()
    bad = crd_manifest(group)
    bad["metadata"]["name"] = "wrong.example.com"
    with pytest.raises(errors.Invalid) as exc:
        await client.request("POST", CRDS, body=bad)
    assert 'metadata.name: Invalid value: "wrong.example.com": must be spec.names.plural+"."+spec.group' \
        in exc.value.message
    webhook = crd_manifest(group)
    webhook["spec"]["conversion"] = {"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"]}}
    with pytest.raises(errors.Invalid) as exc:
        await client.request("POST", CRDS, body=webhook)
    assert "spec.conversion.strategy" in exc.value.message and "Webhook" in exc.value.message
    two_storage = crd_manifest(group)
    two_storage["spec"]["versions"][1]["storage"] = True
    with pytest.raises(errors.Invalid) as exc:
        await client.request("POST", CRDS, body=two_storage)
    assert "must have exactly one version marked as storage version" in exc.value.message
    no_schema = crd_manifest(group)
    del no_schema["spec"]["versions"][0]["schema"]
    with pytest.raises(errors.Invalid) as exc:
        await client.request("POST", CRDS, body=no_schema)
    assert "spec.versions[0].schema.openAPIV3Schema: Required value" in exc.value.message
    bad_names = crd_manifest(group, plural="Cron_Tabs")
    with pytest.raises(errors.Invalid):
        await client.request("POST", CRDS, body=bad_names)
    bad_column = crd_manifest(group)
    bad_column["spec"]["versions"][0]["additionalPrinterColumns"] = [{"name": "X", "type": "float",
                                                                       "jsonPath": "spec"}]
    with pytest.raises(errors.Invalid) as exc:
        await client.request("POST", CRDS, body=bad_column)
    assert "additionalPrinterColumns[0].type" in exc.value.message
    assert "additionalPrinterColumns[0].jsonPath" in exc.value.message
    listed = await client.request("GET", CRDS)
    assert not [c for c in listed["items"] if c["spec"]["group"] == group]
    groups = [g["name"] for g in (await client.request("GET", "/apis"))["groups"]]
    assert group not in groups


async def test_schema_violations_and_pruning(client: Client, namespace: str,
                                             crontabs: tuple[str, dict[str, Any]]) -> None:
    group, _ = crontabs
    base = f"/apis/{group}/v1/namespaces/{namespace}/crontabs"
    with pytest.raises(errors.Invalid) as exc:
        await client.request("POST", base, body={"kind": "CronTab", "metadata": {"name": "bad"}, "spec": {}})
    assert exc.value.message.startswith(f'CronTab.{group} "bad" is invalid: spec.cronSpec: Required value')
    with pytest.raises(errors.Invalid) as exc:
        await client.request("POST", base, body=cr("bad", replicas="three"))
    assert "spec.replicas" in exc.value.message
    with pytest.raises(errors.NotFound):
        await client.request("GET", f"{base}/bad")
    # unknown fields: pruned with a warning (default), refused with Strict
    async with httpx.AsyncClient(base_url=client.server) as raw:
        resp = await raw.post(base, json=cr("p", extra="x"))
        assert resp.status_code == 201, resp.text
        assert 'unknown field \\"spec.extra' in resp.headers.get("warning", "")
        assert "extra" not in resp.json()["spec"]
        resp = await raw.post(base, params={"fieldValidation": "Strict"}, json=cr("q", extra="x"))
        assert resp.status_code == 400 and 'unknown field "spec.extra"' in resp.json()["message"]


async def test_conflicting_names_are_not_established(client: Client) -> None:
    group = fresh_group()
    first = crd_manifest(group, short=("ct",))
    second = crd_manifest(group, plural="crontabz", kind="CronTabZ", short=("ct",))
    third = crd_manifest(group, plural="othertabs", kind="CronTab", short=())
    third["spec"]["names"]["singular"] = "othertab"
    await client.request("POST", CRDS, body=first)
    try:
        await established(client, first["metadata"]["name"])
        await client.request("POST", CRDS, body=second)
        await client.request("POST", CRDS, body=third)

        async def refused(name: str) -> dict[str, Any] | None:
            crd = await client.request("GET", f"{CRDS}/{name}")
            conds = {c["type"]: c for c in (crd.get("status") or {}).get("conditions") or []}
            return conds if conds.get("NamesAccepted", {}).get("status") == "False" else None
        conds = await wait_for(lambda: refused(second["metadata"]["name"]), 10)
        assert (conds["NamesAccepted"]["reason"], conds["NamesAccepted"]["message"]) == \
            ("ShortNamesConflict", '"ct" is already in use')
        assert (conds["Established"]["status"], conds["Established"]["reason"]) == ("False", "NotAccepted")
        conds = await wait_for(lambda: refused(third["metadata"]["name"]), 10)
        assert conds["NamesAccepted"]["reason"] == "KindConflict"
        with pytest.raises(errors.NotFound):
            await client.request("GET", f"/apis/{group}/v1/crontabz")
        # a kind of minik8s' own group is taken by the built-in one
        builtin = crd_manifest("minik8s.io", plural="functionz", kind="Function", short=())
        builtin["spec"]["names"]["singular"] = "functionz"
        await client.request("POST", CRDS, body=builtin)
        conds = await wait_for(lambda: refused("functionz.minik8s.io"), 10)
        assert conds["NamesAccepted"]["reason"] == "KindConflict"
    finally:
        for manifest in (first, second, third):
            await delete_crd(client, manifest["metadata"]["name"])
        await delete_crd(client, "functionz.minik8s.io")


async def test_deleting_a_crd_deletes_its_resources(client: Client, namespace: str) -> None:
    group = fresh_group()
    manifest = crd_manifest(group)
    name = manifest["metadata"]["name"]
    await client.request("POST", CRDS, body=manifest)
    await established(client, name)
    base = f"/apis/{group}/v1/namespaces/{namespace}/crontabs"
    for i in range(3):
        await client.request("POST", base, body=cr(f"c{i}"))
    held = cr("held")
    held["metadata"]["finalizers"] = ["example.com/keep"]
    await client.request("POST", base, body=held)
    await client.request("DELETE", f"{CRDS}/{name}")

    async def terminating() -> bool:
        crd = await client.request("GET", f"{CRDS}/{name}")
        conds = {c["type"]: c for c in crd["status"]["conditions"]}
        return conds.get("Terminating", {}).get("reason") == "InstanceDeletionInProgress"
    await wait_for(terminating, 10)
    with pytest.raises(errors.MethodNotAllowed):
        await client.request("POST", base, body=cr("late"))

    async def only_held() -> bool:
        return [o["metadata"]["name"] for o in (await client.request("GET", base))["items"]] == ["held"]
    await wait_for(only_held, 10)
    await client.request("PATCH", f"{base}/held", body={"metadata": {"finalizers": None}}, content_type=MERGE)
    await delete_crd(client, name)
    with pytest.raises(errors.NotFound):
        await client.request("GET", base)


def test_real_kubectl_drives_custom_resources(real_kubectl: RealKubectl, tmp_path: Path) -> None:  # noqa: F811
    k = real_kubectl
    group = fresh_group()
    manifest = crd_manifest(group)
    name = manifest["metadata"]["name"]
    (tmp_path / "crd.yaml").write_text(yaml.safe_dump(manifest))
    assert "created" in k.ok("apply", "-f", str(tmp_path / "crd.yaml"), ns=False).out
    try:
        k.ok("wait", "--for=condition=Established", f"crd/{name}", "--timeout=20s", ns=False)
        obj = {**cr("web", image="nginx"), "apiVersion": f"{group}/v1"}
        (tmp_path / "cr.yaml").write_text(yaml.safe_dump(obj))
        assert "crontab" in k.ok("apply", "-f", str(tmp_path / "cr.yaml")).out
        out = k.ok("get", f"crontabs.{group}").out.splitlines()
        assert out[0].split() == ["NAME", "SPEC", "REPLICAS", "PHASE", "AGE"]
        assert out[1].split()[:7] == ["web", "*", "*", "*", "*", "*/5", "1"]
        wide = k.ok("get", f"ct.{group}", "-o", "wide").out.splitlines()
        assert "IMAGE" in wide[0].split() and "nginx" in wide[1].split()
        assert f"crontab.{group}/web" in k.ok("get", "all").out
        explained = k.ok("explain", f"crontabs.{group}.spec").out
        assert "cronSpec" in explained and "replicas" in explained
        k.ok("patch", f"crontab.{group}", "web", "--subresource=status", "--type=merge",
             "-p", json.dumps({"status": {"phase": "Running", "replicas": 1, "selector": "app=web"}}))
        assert "Running" in k.ok("get", f"crontab.{group}", "web").out
        assert "scaled" in k.ok("scale", f"crontab.{group}/web", "--replicas=3").out
        got = json.loads(k.ok("get", f"crontab.{group}", "web", "-o", "json").out)
        assert got["spec"]["replicas"] == 3 and got["status"]["phase"] == "Running"
        assert "deleted" in k.ok("delete", f"crontab.{group}", "web").out
        assert "No resources found" in k.ok("get", f"crontabs.{group}").err
    finally:
        k("delete", "-f", str(tmp_path / "crd.yaml"), "--wait=true", ns=False)


async def test_lightkube_generic_resources(client: Client, namespace: str, kubeconfig: Path,
                                           crontabs: tuple[str, dict[str, Any]]) -> None:
    from lightkube import AsyncClient, KubeConfig
    from lightkube.generic_resource import create_namespaced_resource
    from lightkube.types import PatchType

    group, _ = crontabs
    CronTab = create_namespaced_resource(group, "v1", "CronTab", "crontabs")  # noqa: N806
    lk = AsyncClient(config=KubeConfig.from_file(str(kubeconfig)), namespace=namespace)
    try:
        seen: list[tuple[str, str]] = []

        async def watch() -> None:
            async for etype, obj in lk.watch(CronTab, namespace=namespace):
                seen.append((etype, obj.metadata.name))
                if etype == "DELETED":
                    return
        watcher = asyncio.ensure_future(watch())
        created = await lk.create(CronTab(metadata={"name": "lk"}, spec={"cronSpec": "*/1 * * * *"}))
        assert created.spec["replicas"] == 1 and created.apiVersion == f"{group}/v1"
        got = await lk.get(CronTab, "lk")
        assert got.spec["cronSpec"] == "*/1 * * * *"
        patched = await lk.patch(CronTab, "lk", {"spec": {"image": "redis"}}, patch_type=PatchType.MERGE)
        assert patched.spec["image"] == "redis"
        status = await lk.patch(CronTab.Status, "lk", {"status": {"phase": "Done"}}, patch_type=PatchType.MERGE)
        assert status.status["phase"] == "Done"
        names = [o.metadata.name async for o in lk.list(CronTab, namespace=namespace)]
        assert names == ["lk"]
        await lk.delete(CronTab, "lk")
        await asyncio.wait_for(watcher, 10)
        assert seen[0] == ("ADDED", "lk") and seen[-1] == ("DELETED", "lk")
        assert ("MODIFIED", "lk") in seen
    finally:
        await lk.close()


def test_minik8s_kubectl_custom_resources(kubeconfig: Path, namespace: str, tmp_path: Path) -> None:
    k = Kubectl(kubeconfig, namespace)
    group = fresh_group()
    manifest = crd_manifest(group)
    (tmp_path / "crd.yaml").write_text(yaml.safe_dump(manifest))
    k.ok("apply", "-f", str(tmp_path / "crd.yaml"), ns=False)
    try:
        crds = k.ok("get", "crd", ns=False)
        assert any(row[0] == manifest["metadata"]["name"] for row in crds.table())

        def applied() -> bool:
            obj = {**cr("mine", image="nginx"), "apiVersion": f"{group}/v1"}
            (tmp_path / "cr.yaml").write_text(yaml.safe_dump(obj))
            return k("apply", "-f", str(tmp_path / "cr.yaml")).code == 0
        from tests.support.waiting import wait_for_sync
        wait_for_sync(applied, 15, what="custom resource applied")
        table = k.ok("get", f"crontabs.{group}").table()
        assert table[0] == ["NAME", "SPEC", "REPLICAS", "PHASE", "AGE"]
        assert table[1][:3] == ["mine", "* * * * */5", "1"]
        assert "IMAGE" in k.ok("get", f"ct.{group}", "-o", "wide").table()[0]
        described = k.ok("describe", f"crontab.{group}", "mine").out
        assert "mine" in described and "nginx" in described
        assert f"crontab.{group}/mine" in k.ok("get", "all").out
        k.ok("delete", f"crontab.{group}", "mine")
        assert "No resources found" in k.ok("get", f"crontabs.{group}").err
    finally:
        k("delete", "-f", str(tmp_path / "crd.yaml"), ns=False)


async def test_hpa_scales_a_custom_resource_through_its_scale_subresource(
        client: Client, namespace: str, crontabs: tuple[str, dict[str, Any]]) -> None:
    from minik8s.client.factory import SharedInformerFactory
    from minik8s.controllers.podautoscaler import AutoscalerOptions, HorizontalPodAutoscalerController

    group, _ = crontabs
    base = f"/apis/{group}/v1/namespaces/{namespace}/crontabs"
    await client.request("POST", base, body=cr("scaled"))
    await client.request("PATCH", f"{base}/scaled/status", body={"status": {"replicas": 1, "selector": "app=scaled"}},
                         content_type=MERGE)
    await client.request("POST", f"/apis/autoscaling/v2/namespaces/{namespace}/horizontalpodautoscalers", body={
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "scaled"},
        "spec": {"scaleTargetRef": {"apiVersion": f"{group}/v1", "kind": "CronTab", "name": "scaled"},
                 "minReplicas": 3, "maxReplicas": 5,
                 "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                     "type": "Utilization", "averageUtilization": 50}}}]}})
    factory = SharedInformerFactory(client, namespace=namespace)
    controller = HorizontalPodAutoscalerController(client, factory, AutoscalerOptions(sync_period=1.0))
    factory.start()
    task = asyncio.get_running_loop().create_task(controller.run(1))
    try:
        async def raised() -> bool:
            return (await client.request("GET", f"{base}/scaled"))["spec"]["replicas"] == 3
        await wait_for(raised, 15, what="the HPA scaled the CronTab to minReplicas")
    finally:
        controller.shutdown()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await factory.shutdown()


async def test_a_second_apiserver_converges_from_the_watch(client: Client, etcd: Any, namespace: str,
                                                           tmp_path: Path) -> None:
    from minik8s.client.kubeconfig import ClientConfig
    from tests.support.processes import APIServer

    other = APIServer(etcd, tmp_path)
    try:
        async with Client(ClientConfig(server=other.url)) as second:
            group = fresh_group()
            manifest = crd_manifest(group)
            await client.request("POST", CRDS, body=manifest)
            try:
                await established(client, manifest["metadata"]["name"])

                async def served() -> bool:
                    doc = await second.request("GET", f"/apis/{group}/v1")
                    return any(r["name"] == "crontabs" for r in doc["resources"])
                await wait_for(served, 10, what="the second apiserver serves the CRD")
                made = await second.request("POST", f"/apis/{group}/v1/namespaces/{namespace}/crontabs",
                                            body=cr("both"))
                got = await client.request("GET", f"/apis/{group}/v1/namespaces/{namespace}/crontabs/both")
                assert got["metadata"]["uid"] == made["metadata"]["uid"]
            finally:
                await delete_crd(client, manifest["metadata"]["name"])

            async def unserved() -> bool:
                try:
                    await second.request("GET", f"/apis/{group}/v1")
                except errors.NotFound:
                    return True
                return False
            await wait_for(unserved, 10, what="the second apiserver dropped the CRD")
    finally:
        other.stop()


async def test_validation_rules_defaults_and_transition_rules(client: Client, namespace: str) -> None:
    """``x-kubernetes-validations`` (CEL) through the apiserver: a rule across fields answers 422 with
    its message and field, a transition rule (``oldSelf``) guards an update, defaults fill what is
    missing; a rule that does not compile makes the CRD itself a 422."""
    group = fresh_group()
    schema = {"type": "object", "properties": {"spec": {
        "type": "object",
        "x-kubernetes-validations": [
            {"rule": "self.minReplicas <= self.maxReplicas", "message": "minReplicas must not exceed maxReplicas"}],
        "properties": {
            "minReplicas": {"type": "integer", "default": 1},
            "maxReplicas": {"type": "integer", "default": 5},
            "storageClass": {"type": "string",
                             "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "is immutable"}]},
        }}}}
    manifest = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                "metadata": {"name": f"scalers.{group}"},
                "spec": {"group": group, "scope": "Namespaced",
                         "names": {"plural": "scalers", "singular": "scaler", "kind": "Scaler"},
                         "versions": [{"name": "v1", "served": True, "storage": True,
                                       "schema": {"openAPIV3Schema": schema}}]}}
    broken = json.loads(json.dumps(manifest))
    broken["metadata"]["name"] = f"brokens.{group}"
    broken["spec"]["names"] = {"plural": "brokens", "singular": "broken", "kind": "Broken"}
    broken["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
        "x-kubernetes-validations"] = [{"rule": "self.minReplicas <="}]
    with pytest.raises(errors.Invalid) as exc:
        await client.request("POST", CRDS, body=broken)
    assert "x-kubernetes-validations[0].rule" in exc.value.message and "compilation failed" in exc.value.message
    await client.request("POST", CRDS, body=manifest)
    try:
        await established(client, f"scalers.{group}")
        base = f"/apis/{group}/v1/namespaces/{namespace}/scalers"

        def scaler(name: str, **spec: Any) -> dict[str, Any]:
            return {"apiVersion": f"{group}/v1", "kind": "Scaler", "metadata": {"name": name}, "spec": spec}

        with pytest.raises(errors.Invalid) as exc:
            await client.request("POST", base, body=scaler("bad", minReplicas=9))  # max defaults to 5
        assert "spec: Invalid value" in exc.value.message and "minReplicas must not exceed maxReplicas" in \
            exc.value.message, exc.value.message
        created = await client.request("POST", base, body=scaler("ok", storageClass="fast"))
        assert created["spec"] == {"minReplicas": 1, "maxReplicas": 5, "storageClass": "fast"}
        with pytest.raises(errors.Invalid) as exc:
            await client.request("PATCH", f"{base}/ok", body={"spec": {"storageClass": "slow"}},
                                 content_type=MERGE)
        assert "spec.storageClass: Invalid value" in exc.value.message and "is immutable" in exc.value.message
        patched = await client.request("PATCH", f"{base}/ok", body={"spec": {"maxReplicas": 7}}, content_type=MERGE)
        assert patched["spec"]["maxReplicas"] == 7
    finally:
        await delete_crd(client, f"scalers.{group}")
