"""``events.k8s.io/v1`` Event against a real apiserver: one stored resource seen through two groups.

An Event created through either group is read, listed, watched, patched and deleted through both;
writes through events.k8s.io/v1 get kube-apiserver's stricter validation (its exact messages);
minik8s' kubectl and the official kubectl 1.32 print ``get events.v1.events.k8s.io`` alike.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from minik8s.api.base import now_rfc3339_micro
from tests.realkubectl import find
from tests.support.kubectl import Kubectl
from tests.support.kubectl_parity import run_process
from tests.support.processes import APIServer

EVENTS = "/apis/events.k8s.io/v1"
MERGE = {"content-type": "application/merge-patch+json"}


def v1_event(name: str, namespace: str, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": name},
            "eventTime": now_rfc3339_micro(), "reportingController": "example.com/tester",
            "reportingInstance": "tester-1", "action": "Testing", "reason": "Tested", "type": "Normal",
            "regarding": {"kind": "Pod", "name": "web", "namespace": namespace}, "note": "it works", **extra}


async def test_one_resource_through_both_groups(apiserver: APIServer, namespace: str) -> None:
    core = f"/api/v1/namespaces/{namespace}/events"
    new = f"{EVENTS}/namespaces/{namespace}/events"
    async with httpx.AsyncClient(base_url=apiserver.url, timeout=20) as h:
        listed = (await h.get(new)).json()
        assert listed["kind"] == "EventList" and listed["apiVersion"] == "events.k8s.io/v1"
        watch = asyncio.create_task(_watch_names(h, new, listed["metadata"]["resourceVersion"], 3))

        r = await h.post(new, json=v1_event("made-v1", namespace))
        assert r.status_code == 201, r.text
        made = r.json()
        assert made["apiVersion"] == "events.k8s.io/v1" and made["note"] == "it works"
        assert made["regarding"]["name"] == "web" and "message" not in made
        as_core = (await h.get(f"{core}/made-v1")).json()
        assert as_core["apiVersion"] == "v1" and as_core["message"] == "it works"
        assert as_core["involvedObject"] == made["regarding"]
        assert as_core["reportingComponent"] == "example.com/tester"
        assert as_core["metadata"]["uid"] == made["metadata"]["uid"]

        r = await h.post(core, json={"metadata": {"name": "made-core"}, "reason": "Old", "message": "legacy",
                                     "involvedObject": {"kind": "Pod", "name": "web", "namespace": namespace},
                                     "source": {"component": "kubelet", "host": "n1"}, "count": 3,
                                     "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:01:00Z",
                                     "type": "Warning"})
        assert r.status_code == 201, r.text
        seen = (await h.get(f"{new}/made-core")).json()
        assert (seen["note"], seen["deprecatedCount"], seen["deprecatedSource"]) == \
            ("legacy", 3, {"component": "kubelet", "host": "n1"})
        assert seen["deprecatedFirstTimestamp"] == "2026-01-01T00:00:00Z"
        assert {i["metadata"]["name"] for i in (await h.get(new)).json()["items"]} == {"made-v1", "made-core"}

        r = await h.patch(f"{new}/made-v1", json={"metadata": {"labels": {"patched": "yes"}},
                                                    "series": {"count": 2, "lastObservedTime": now_rfc3339_micro()}},
                          headers=MERGE)
        assert r.status_code == 200, r.text
        assert (await h.get(f"{core}/made-v1")).json()["series"]["count"] == 2
        assert await asyncio.wait_for(watch, 20) == [("ADDED", "made-v1", "events.k8s.io/v1"),
                                                     ("ADDED", "made-core", "events.k8s.io/v1"),
                                                     ("MODIFIED", "made-v1", "events.k8s.io/v1")]
        # a v1 update may change the series only
        r = await h.patch(f"{new}/made-v1", json={"note": "changed"}, headers=MERGE)
        assert r.status_code == 422 and r.json()["message"] == \
            'Event "made-v1" is invalid: message: Invalid value: "changed": field is immutable'
        assert (await h.delete(f"{new}/made-core")).status_code == 200
        assert (await h.get(f"{core}/made-core")).status_code == 404


async def _watch_names(h: httpx.AsyncClient, path: str, rv: str, count: int) -> list[tuple[str, str, str]]:
    out = []
    async with h.stream("GET", path, params={"watch": "1", "resourceVersion": rv}) as r:
        async for line in r.aiter_lines():
            if line.strip():
                ev = json.loads(line)
                out.append((ev["type"], ev["object"]["metadata"]["name"], ev["object"]["apiVersion"]))
                if len(out) == count:
                    return out
    return out


@pytest.mark.parametrize(("change", "message"), [
    # without eventTime the legacy checks skip the v1 fields: only the v1 create's own remain
    ({"eventTime": None}, '[eventTime: Required value, type: Invalid value: "": has invalid value: ]'),
    ({"reportingController": ""}, '[reportingController: Required value, '  # (then IsQualifiedName's two)
                                   'reportingController: Invalid value: "": name part must be non-empty, '),
    ({"note": "x" * 1025}, 'message: Invalid value: "": can have at most 1024 characters'),
    ({"series": {"count": 1}}, '[series.count: Invalid value: "": should be at least 2, '
                               'series.lastObservedTime: Required value]'),
    ({"type": "Odd"}, 'type: Invalid value: "": has invalid value: Odd'),
    ({"deprecatedCount": 2}, 'count: Invalid value: "": needs to be unset'),
    ({"regarding": {"kind": "Node", "name": "n1"}},
     'involvedObject.namespace: Invalid value: "": does not match event.namespace'),
])
async def test_v1_writes_are_validated_as_kube_apiserver(apiserver: APIServer, namespace: str,
                                                         change: dict[str, Any], message: str) -> None:
    body = v1_event("bad", namespace, **change)
    if change.get("eventTime", "") is None:
        body = {k: v for k, v in body.items() if k not in ("eventTime", "reportingController", "reportingInstance",
                                                           "action", "reason", "type")}
    async with httpx.AsyncClient(base_url=apiserver.url, timeout=20) as h:
        r = await h.post(f"{EVENTS}/namespaces/{namespace}/events", json=body)
    assert r.status_code == 422, r.text
    assert r.json()["message"].startswith(f'Event "bad" is invalid: {message}'), r.text


def test_kubectl_get_events_v1_as_the_official(apiserver: APIServer, kubeconfig: Path, kubectl: Kubectl) -> None:
    official, why = find("1.32")
    with httpx.Client(base_url=apiserver.url, timeout=20) as h:
        r = h.post(f"{EVENTS}/namespaces/{kubectl.namespace}/events", json=v1_event("shown", kubectl.namespace))
        assert r.status_code == 201, r.text
    for args in (["get", "events.v1.events.k8s.io"], ["get", "events.v1.events.k8s.io", "shown", "-o", "wide"],
                 ["get", "ev"], ["events"]):
        ours = kubectl.ok(*args)
        assert "Tested" in ours.out and "it works" in ours.out, (args, ours.out)
        if official is None:
            continue
        theirs = run_process([str(official), "--kubeconfig", str(kubeconfig), *args, "-n", kubectl.namespace],
                             {"KUBECONFIG": "/nonexistent", "COLUMNS": "200", "HOME": str(kubeconfig.parent)})
        assert theirs.code == 0, theirs.err
        assert _no_ages(ours.out) == _no_ages(theirs.out), (args, ours.out, theirs.out)
    if official is None:
        pytest.skip(why)


def _no_ages(text: str) -> str:
    import re
    return re.sub(r"\b\d+(?:d\d*h?|h\d*m?|m\d*s?|s)\b *|<unknown> *", "<age> ", text)


def test_official_python_client_events_v1(apiserver: APIServer, namespace: str) -> None:
    from kubernetes import client as k8s

    cfg = k8s.Configuration()
    cfg.host = apiserver.url
    api = k8s.EventsV1Api(k8s.ApiClient(cfg))
    body = v1_event("typed", namespace)
    created = api.create_namespaced_event(namespace, body)
    assert isinstance(created, k8s.EventsV1Event) and created.note == "it works"
    read = api.read_namespaced_event("typed", namespace)
    assert read.regarding.name == "web" and read.reporting_controller == "example.com/tester"
    assert "typed" in [e.metadata.name for e in api.list_namespaced_event(namespace).items]
    assert k8s.CoreV1Api(k8s.ApiClient(cfg)).read_namespaced_event("typed", namespace).message == "it works"


@pytest.mark.parametrize(("group_version", "kind", "plural", "namespaced", "verbs"), [
    ("events.k8s.io/v1", "Event", "events", True,
     ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]),
    ("v1", "ComponentStatus", "componentstatuses", False, ["get", "list"]),
    ("authorization.k8s.io/v1", "LocalSubjectAccessReview", "localsubjectaccessreviews", True, ["create"]),
])
def test_discovery_and_openapi(apiserver: APIServer, group_version: str, kind: str, plural: str, namespaced: bool,
                               verbs: list[str]) -> None:
    base = f"/apis/{group_version}" if "/" in group_version else f"/api/{group_version}"
    with httpx.Client(base_url=apiserver.url, timeout=20) as h:
        row = next(r for r in h.get(base).json()["resources"] if r["name"] == plural)
        assert (row["kind"], row["namespaced"], sorted(row["verbs"])) == (kind, namespaced, verbs)
        group, _, version = group_version.rpartition("/")
        v2 = h.get("/openapi/v2").json()["definitions"]
        gvks = [d for d in v2.values() if {"group": group, "version": version, "kind": kind}
                in d.get("x-kubernetes-group-version-kind", [])]
        assert len(gvks) == 1 and gvks[0]["properties"], kind
        doc = "api/v1" if not group else f"apis/{group_version}"
        v3 = h.get(f"/openapi/v3/{doc}").json()["components"]["schemas"]
        assert any({"group": group, "version": version, "kind": kind} in d.get("x-kubernetes-group-version-kind", [])
                   for d in v3.values()), kind
