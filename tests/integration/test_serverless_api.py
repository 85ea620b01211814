"""The serverless kinds over the real apiserver: defaults, 422 causes, status subresource, watch, kubectl."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml

from minik8s.api import errors
from minik8s.client.rest import Client
from tests.support.kubectl import Kubectl, assert_one_error_line

HELLO = {"apiVersion": "minik8s.io/v1", "kind": "Function", "metadata": {"name": "hello"},
         "spec": {"source": "def handler(event, context):\n    return {'hi': event}\n"}}
WORKFLOW = {"apiVersion": "minik8s.io/v1", "kind": "Workflow", "metadata": {"name": "route"},
            "spec": {"startAt": "Check", "states": {
                "Check": {"type": "Choice", "choices": [{"variable": "$.n", "numericGreaterThan": 10, "next": "Big"}],
                          "default": "Small"},
                "Big": {"type": "Task", "function": "hello", "end": True},
                "Small": {"type": "Pass", "result": "small", "end": True}}}}


async def test_function_defaults_status_and_watch(client: Client, namespace: str) -> None:
    rt = client.kind("minik8s.io/v1", "Function")
    events: list[str] = []

    async def watch() -> None:
        async for ev in client.watch(rt, namespace, resource_version="0", timeout_seconds=10):
            events.append(ev["type"])
            if ev["type"] == "MODIFIED":
                return

    watcher = asyncio.get_running_loop().create_task(watch())
    created = await client.create(rt, HELLO, namespace)
    assert created["spec"]["handler"] == "main.handler" and created["spec"]["scaling"]["scaleToZeroAfterSeconds"] == 30
    assert created["metadata"]["generation"] == 1
    created["status"] = {"readyInstances": 1, "instances": 1, "revision": "hello-abc"}
    written = await client.update_status(rt, created)
    assert written["status"]["readyInstances"] == 1 and written["metadata"]["generation"] == 1
    await asyncio.wait_for(watcher, 10)
    assert events == ["ADDED", "MODIFIED"]
    stored = await client.get(rt, "hello", namespace)
    assert stored["metadata"]["resourceVersion"] == written["metadata"]["resourceVersion"]
    # a spec update bumps the generation and keeps the status
    stored["spec"]["source"] = "def handler(event, context):\n    return 2\n"
    updated = await client.update(rt, stored)
    assert updated["metadata"]["generation"] == 2 and updated["status"]["revision"] == "hello-abc"


async def test_invalid_objects_get_422_with_field_causes(client: Client, namespace: str) -> None:
    fn_rt, wf_rt = client.kind("minik8s.io/v1", "Function"), client.kind("minik8s.io/v1", "Workflow")
    bad_fn = {**HELLO, "spec": {"source": "x = 1", "handler": "app.run", "scaling": {"minScale": 5, "maxScale": 2}}}
    with pytest.raises(errors.Invalid) as exc:
        await client.create(fn_rt, bad_fn, namespace)
    causes = {c["field"] for c in exc.value.details["causes"]}
    assert causes == {"spec.handler", "spec.scaling.maxScale"}
    assert 'module "app" is not in the code (spec.source is main.py)' in exc.value.message
    bad_wf = yaml.safe_load(yaml.safe_dump(WORKFLOW))
    bad_wf["spec"]["states"]["Check"]["default"] = "Nowhere"
    bad_wf["spec"]["states"]["Orphan"] = {"type": "Succeed"}
    with pytest.raises(errors.Invalid) as exc:
        await client.create(wf_rt, bad_wf, namespace)
    causes = {c["field"]: c["message"] for c in exc.value.details["causes"]}
    assert causes == {"spec.states[Check].default": 'Not found: "Nowhere": no such state',
                      "spec.states[Orphan]": "Invalid value: state is not reachable from `startAt`",
                      "spec.states[Small]": "Invalid value: state is not reachable from `startAt`"}
    for kind in (fn_rt, wf_rt):
        assert (await client.list(kind, namespace))["items"] == []
    wrong_type = {**HELLO, "spec": {"source": "x", "timeoutSeconds": "soon"}}
    with pytest.raises(errors.Invalid, match="spec.timeoutSeconds"):
        await client.create(fn_rt, wrong_type, namespace)


async def test_workflow_run_spec_is_immutable(client: Client, namespace: str) -> None:
    await client.create(client.kind("minik8s.io/v1", "Workflow"), WORKFLOW, namespace)
    rt = client.kind("minik8s.io/v1", "WorkflowRun")
    run = await client.create(rt, {"metadata": {"generateName": "route-"},
                                   "spec": {"workflowRef": {"name": "route"}, "input": {"n": 3}},
                                   "status": {"phase": "Running"}}, namespace)
    assert run["metadata"]["name"].startswith("route-") and run["status"]["phase"] == "Running"
    run["spec"]["input"] = {"n": 4}
    with pytest.raises(errors.Invalid, match="field is immutable"):
        await client.update(rt, run)
    listed = await client.list(rt, namespace, field_selector="spec.workflowRef.name=route")
    assert [r["metadata"]["name"] for r in listed["items"]] == [run["metadata"]["name"]]


def test_kubectl_apply_get_and_invalid(kubectl: Kubectl, tmp_path: Path) -> None:  # noqa: F811
    manifest = tmp_path / "all.yaml"
    trigger = {"apiVersion": "minik8s.io/v1", "kind": "Trigger", "metadata": {"name": "orders"},
               "spec": {"filter": {"attributes": {"type": "order.created"}},
                        "subscriber": {"ref": {"kind": "Workflow", "name": "route"}}}}
    manifest.write_text(yaml.safe_dump_all([HELLO, WORKFLOW, trigger]))
    kubectl.ok("apply", "-f", str(manifest))
    table = kubectl.ok("get", "functions").table()
    assert table[0] == ["NAME", "READY", "INSTANCES", "URL", "AGE"]
    assert table[1][:4] == ["hello", "Unknown", "0/0", "<none>"]
    table = kubectl.ok("get", "wf").table()
    assert table[0] == ["NAME", "START", "STATES", "LAST RUN", "AGE"] and table[1][:3] == ["route", "Check", "3"]
    table = kubectl.ok("get", "triggers").table()
    assert table[0] == ["NAME", "SUBSCRIBER", "SOURCE", "DELIVERED", "FAILED", "AGE"]
    assert table[1][:5] == ["orders", "Workflow/route", "events type=order.created", "0", "0"]
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({**WORKFLOW, "metadata": {"name": "loop"},
                                   "spec": {"startAt": "A", "states": {"A": {"type": "Pass", "next": "A"}}}}))
    assert_one_error_line(kubectl("apply", "-f", str(bad)), 'Workflow.minik8s.io "loop" is invalid', "no end")
