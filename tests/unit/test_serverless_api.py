"""Serverless kinds (minik8s.io/v1): defaults, validation (Workflow graphs included), JSONPath, columns."""

from __future__ import annotations

import copy
import datetime as dt
from typing import Any

import pytest

from minik8s.api import jsonpath
from minik8s.api.columns import columns_for
from minik8s.api.registry import default_registry
from minik8s.api.serverless import Workflow
from minik8s.apiserver.strategies.serverless import FunctionStrategy, TriggerStrategy, WorkflowStrategy

Obj = dict[str, Any]


def fields(causes: list[tuple[str, Any, str]]) -> list[str]:
    return [c[0] for c in causes]


def function(**spec: Any) -> Obj:
    base: Obj = {"source": "def handler(event, context):\n    return event\n"}
    base.update(spec)
    obj = {"apiVersion": "minik8s.io/v1", "kind": "Function", "metadata": {"name": "hello"}, "spec": base}
    FunctionStrategy().default(obj)
    return obj


def workflow(states: Obj, start: str = "A", **spec: Any) -> Obj:
    obj = {"apiVersion": "minik8s.io/v1", "kind": "Workflow", "metadata": {"name": "wf"},
           "spec": {"startAt": start, "states": states, **spec}}
    obj = {"apiVersion": obj["apiVersion"], "kind": "Workflow", **Workflow.from_dict(obj).to_dict()}
    WorkflowStrategy().default(obj)
    return obj


def trigger(**spec: Any) -> Obj:
    base: Obj = {"subscriber": {"ref": {"kind": "Function", "name": "hello"}}}
    base.update(spec)
    obj = {"apiVersion": "minik8s.io/v1", "kind": "Trigger", "metadata": {"name": "t"}, "spec": base}
    TriggerStrategy().default(obj)
    return obj


# ------------------------------------------------------------------ registry
def test_the_kinds_are_registered_in_minik8s_io() -> None:
    reg = default_registry()
    for kind, plural, short in (("Function", "functions", "fn"), ("Workflow", "workflows", "wf"),
                                ("WorkflowRun", "workflowruns", "wfr"), ("Trigger", "triggers", None)):
        rt = reg.by_kind("minik8s.io/v1", kind)
        assert rt is not None and rt.plural == plural and rt.namespaced and "status" in rt.subresources
        assert rt.storage_key("default", "x") == f"/registry/minik8s.io/{plural}/default/x"
        if short:
            assert reg.resolve(short) is rt


# ------------------------------------------------------------------ Function
def test_function_defaults_and_a_valid_function() -> None:
    obj = function()
    assert obj["spec"]["runtime"] == "python3" and obj["spec"]["handler"] == "main.handler"
    assert obj["spec"]["timeoutSeconds"] == 30 and obj["spec"]["mode"] == "Pooled"
    assert obj["spec"]["scaling"] == {"minScale": 0, "maxScale": 10, "targetConcurrency": 10,
                                      "scaleToZeroAfterSeconds": 30}
    assert FunctionStrategy().validate(obj, None) == []
    multi = function(source=None, files={"app.py": "def run(e, c): pass", "data.json": "{}"}, handler="app.run")
    del multi["spec"]["source"]
    assert FunctionStrategy().validate(multi, None) == []


@pytest.mark.parametrize("spec, field", [
    ({"runtime": "node18"}, "spec.runtime"),
    ({"mode": "Sometimes"}, "spec.mode"),
    ({"source": None}, "spec"),
    ({"files": {"main.py": "x"}}, "spec.files"),
    ({"handler": "handler"}, "spec.handler"),
    ({"handler": "main.handler.x"}, "spec.handler"),
    ({"handler": "other.handler"}, "spec.handler"),
    ({"requirements": ["--index-url=http://evil"]}, "spec.requirements[0]"),
    ({"requirements": ["six\nrequests"]}, "spec.requirements[0]"),
    ({"requirements": [" "]}, "spec.requirements[0]"),
    ({"env": [{"name": "A=B", "value": "x"}]}, "spec.env[0].name"),
    ({"resources": {"limits": {"cpu": "lots"}}}, "spec.resources.limits[cpu]"),
    ({"timeoutSeconds": 0}, "spec.timeoutSeconds"),
    ({"timeoutSeconds": 901}, "spec.timeoutSeconds"),
    ({"scaling": {"minScale": -1}}, "spec.scaling.minScale"),
    ({"scaling": {"minScale": 3, "maxScale": 2}}, "spec.scaling.maxScale"),
    ({"scaling": {"maxScale": 0}}, "spec.scaling.maxScale"),
    ({"scaling": {"targetConcurrency": 0}}, "spec.scaling.targetConcurrency"),
    ({"scaling": {"scaleToZeroAfterSeconds": 0}}, "spec.scaling.scaleToZeroAfterSeconds"),
    ({"source": "x" * (960 * 1024 + 1)}, "spec"),
])
def test_invalid_functions(spec: Obj, field: str) -> None:
    obj = function(**spec)
    if obj["spec"].get("source") is None:
        obj["spec"].pop("source", None)
    assert field in fields(FunctionStrategy().validate(obj, None))


def test_function_files_names_and_handler_module() -> None:
    obj = function(files={"../x.py": "", ".minik8s-runtime.py": "", "main.py": ""})
    del obj["spec"]["source"]
    causes = FunctionStrategy().validate(obj, None)
    assert sorted(fields(causes)) == ["spec.files[../x.py]", "spec.files[.minik8s-runtime.py]"]
    missing = function(files={"app.py": ""})
    del missing["spec"]["source"]
    (cause,) = FunctionStrategy().validate(missing, None)
    assert cause[0] == "spec.handler" and 'module "main" is not in the code (spec.files has app.py)' in cause[2]


def test_function_names_are_dns_1035_labels_of_at_most_50() -> None:
    for bad in ("1fn", "Fn", "a" * 51):
        obj = function()
        obj["metadata"]["name"] = bad
        assert "metadata.name" in fields(FunctionStrategy().validate(obj, None))


# ------------------------------------------------------------------ Workflow graphs
TASK = {"type": "Task", "function": "f"}


def test_valid_workflows_chain_branch_loop_parallel() -> None:
    chain = workflow({"A": {**TASK, "next": "B"}, "B": {**TASK, "next": "C"}, "C": {**TASK, "end": True}})
    branch = workflow({
        "A": {"type": "Choice", "choices": [
            {"variable": "$.n", "numericGreaterThan": 10, "next": "Big"},
            {"and": [{"variable": "$.s", "stringEquals": "x"}, {"not": {"variable": "$.b", "isPresent": True}}],
             "next": "Small"}],
              "default": "Small"},
        "Big": {**TASK, "end": True}, "Small": {"type": "Succeed"}})
    loop = workflow({"A": {**TASK, "next": "Check"},
                     "Check": {"type": "Choice", "choices": [{"variable": "$.done", "booleanEquals": False,
                                                              "next": "A"}], "default": "Done"},
                     "Done": {"type": "Pass", "end": True}})
    parallel = workflow({"A": {"type": "Parallel", "branches": [
        {"startAt": "X", "states": {"X": {**TASK, "end": True}}},
        {"startAt": "Y", "states": {"Y": {"type": "Pass", "result": 1, "end": True}}}], "next": "F"},
        "F": {"type": "Fail", "error": "E", "cause": "c"}})
    for wf in (chain, branch, loop, parallel):
        assert WorkflowStrategy().validate(wf, None) == [], wf
    assert chain["spec"]["maxSteps"] == 100 and chain["spec"]["runHistoryLimit"] == 20


@pytest.mark.parametrize("states, start, field, words", [
    ({"A": {**TASK, "end": True}}, "Z", "spec.startAt", 'Not found: "Z"'),
    ({}, "A", "spec.states", "Required value"),
    ({"A": {**TASK, "next": "Nope"}}, "A", "spec.states[A].next", 'Not found: "Nope"'),
    ({"A": {**TASK}}, "A", "spec.states[A].next", "one of `next` or `end: true`"),
    ({"A": {**TASK, "next": "B", "end": True}, "B": {"type": "Succeed"}}, "A", "spec.states[A].end", "Forbidden"),
    ({"A": {"type": "Wait", "end": True}}, "A", "spec.states[A].type", "Unsupported value"),
    ({"A": {"type": "Task", "end": True}}, "A", "spec.states[A].function", "Required value"),
    ({"A": {"type": "Succeed", "next": "A"}}, "A", "spec.states[A].next", "Forbidden"),
    ({"A": {**TASK, "end": True}, "B": {**TASK, "end": True}}, "A", "spec.states[B]", "not reachable"),
    ({"A": {**TASK, "next": "B"}, "B": {**TASK, "next": "A"}}, "A", "spec.states", "no end"),
    ({"A": {"type": "Choice", "choices": [{"variable": "$.x", "isPresent": True, "next": "B"}], "default": "C"},
      "B": {**TASK, "next": "B2"}, "B2": {**TASK, "next": "B"}, "C": {"type": "Succeed"}},
     "A", "spec.states[B]", "loop forever"),
    ({"A": {"type": "Choice", "choices": []}}, "A", "spec.states[A].choices", "Required value"),
    ({"A": {"type": "Choice", "choices": [{"variable": "$.x", "next": "B"}]}, "B": {"type": "Succeed"}},
     "A", "spec.states[A].choices[0]", "comparison operator"),
    ({"A": {"type": "Choice", "choices": [{"variable": "$.x", "numericEquals": 1, "stringEquals": "1",
                                           "next": "B"}]}, "B": {"type": "Succeed"}},
     "A", "spec.states[A].choices[0].numericEquals", "Forbidden"),
    ({"A": {"type": "Choice", "choices": [{"numericEquals": 1, "next": "B"}]}, "B": {"type": "Succeed"}},
     "A", "spec.states[A].choices[0].variable", "Required value"),
    ({"A": {"type": "Choice", "choices": [{"variable": "x", "numericEquals": 1, "next": "B"}]},
      "B": {"type": "Succeed"}}, "A", "spec.states[A].choices[0].variable", "starts with '$'"),
    ({"A": {"type": "Choice", "choices": [{"variable": "$.x", "isNull": True}]}, "B": {"type": "Succeed"}},
     "A", "spec.states[A].choices[0].next", "Required value"),
    ({"A": {"type": "Choice", "choices": [{"and": [{"variable": "$.x", "isNull": True, "next": "B"}],
                                           "next": "B"}]}, "B": {"type": "Succeed"}},
     "A", "spec.states[A].choices[0].and[0].next", "only the top-level rules"),
    ({"A": {"type": "Choice", "choices": [{"variable": "$.x", "isNull": True, "next": "B"}], "default": "Q"},
      "B": {"type": "Succeed"}}, "A", "spec.states[A].default", 'Not found: "Q"'),
    ({"A": {"type": "Parallel", "branches": [], "end": True}}, "A", "spec.states[A].branches", "Required value"),
    ({"A": {"type": "Parallel", "branches": [{"startAt": "X", "states": {"X": {**TASK, "next": "Out"}}}],
            "next": "Out"}, "Out": {"type": "Succeed"}},
     "A", "spec.states[A].branches[0].states[X].next", 'Not found: "Out"'),
    ({"A": {**TASK, "inputPath": "$.a[*]", "end": True}}, "A", "spec.states[A].inputPath", "JSONPath"),
])
def test_invalid_workflow_graphs(states: Obj, start: str, field: str, words: str) -> None:
    causes = WorkflowStrategy().validate(workflow(states, start), None)
    assert any(c[0] == field and words in c[2] for c in causes), causes


def test_workflow_max_steps_bounds() -> None:
    wf = workflow({"A": {**TASK, "end": True}}, maxSteps=0)
    assert "spec.maxSteps" in fields(WorkflowStrategy().validate(wf, None))


# ------------------------------------------------------------------ Trigger
def test_trigger_defaults_and_valid_triggers() -> None:
    t = trigger(filter={"attributes": {"type": "com.example.order"}})
    assert t["spec"]["delivery"] == {"retry": 3, "backoffPolicy": "exponential", "backoffDelaySeconds": 0.5}
    assert t["spec"]["subscriber"]["ref"]["apiVersion"] == "minik8s.io/v1"
    assert TriggerStrategy().validate(t, None) == []
    assert TriggerStrategy().validate(trigger(schedule="*/5 * * * *", timeZone="Europe/Berlin"), None) == []
    assert TriggerStrategy().validate(trigger(objects={"apiVersion": "v1", "kind": "ConfigMap",
                                                       "labelSelector": "app=x"}), None) == []


@pytest.mark.parametrize("spec, field", [
    ({"subscriber": {"ref": {"kind": "Pod", "name": "p"}}}, "spec.subscriber.ref.kind"),
    ({"subscriber": {"ref": {"kind": "Function", "name": "Bad_Name"}}}, "spec.subscriber.ref.name"),
    ({"filter": {"attributes": {"Type": "x"}}}, "spec.filter.attributes"),
    ({"schedule": "every minute"}, "spec.schedule"),
    ({"schedule": "* * * * *", "timeZone": "Mars/Olympus"}, "spec.timeZone"),
    ({"timeZone": "UTC"}, "spec.timeZone"),
    ({"objects": {"kind": "Pod"}}, "spec.objects.apiVersion"),
    ({"objects": {"apiVersion": "v1", "kind": "Pod", "labelSelector": "a in (b"}}, "spec.objects.labelSelector"),
    ({"objects": {"apiVersion": "v1", "kind": "Pod"}, "schedule": "* * * * *"}, "spec.objects"),
    ({"delivery": {"retry": 11}}, "spec.delivery.retry"),
    ({"delivery": {"backoffPolicy": "random"}}, "spec.delivery.backoffPolicy"),
    ({"delivery": {"backoffDelaySeconds": 0}}, "spec.delivery.backoffDelaySeconds"),
])
def test_invalid_triggers(spec: Obj, field: str) -> None:
    assert field in fields(TriggerStrategy().validate(trigger(**spec), None))


# ------------------------------------------------------------------ JSONPath
def test_jsonpath_parse_get_put() -> None:
    doc = {"a": {"b": [10, {"c": "x"}]}, "odd key": 1}
    assert jsonpath.parse("$.a.b[1]['c']") == ["a", "b", 1, "c"]
    assert jsonpath.get(doc, "$") == doc and jsonpath.get(doc, "$.a.b[1].c") == "x"
    assert jsonpath.get(doc, "$['odd key']") == 1
    assert jsonpath.lookup(doc, "$.a.z") == (False, None) and jsonpath.lookup(doc, "$.a.b[5]") == (False, None)
    with pytest.raises(KeyError):
        jsonpath.get(doc, "$.missing")
    before = copy.deepcopy(doc)
    assert jsonpath.put(doc, "$.r.s", 5)["r"] == {"s": 5} and doc == before
    assert jsonpath.put(doc, "$", 7) == 7 and jsonpath.put(doc, "$.a.b[0]", 1)["a"]["b"][0] == 1
    assert jsonpath.put("scalar", "$.x", 1) == {"x": 1}
    for bad in ("a.b", "$.a[*]", "$..a", "$.", "$[?(@.a)]"):
        assert jsonpath.errors(bad), bad


# ------------------------------------------------------------------ kubectl columns
def test_kubectl_columns() -> None:
    at = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    fn = {"metadata": {"name": "hello", "creationTimestamp": "2026-01-01T00:00:00Z"},
          "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Ready"}], "readyInstances": 2,
                     "instances": 3, "url": "http://127.0.0.1:8081/functions/default/hello"}}
    values = {c.header: c.value(fn, at) for c in columns_for("Function")}
    assert values == {"READY": "True", "INSTANCES": "2/3", "URL": "http://127.0.0.1:8081/functions/default/hello",
                      "AGE": "0s"}
    t = trigger(schedule="*/5 * * * *")
    t["status"] = {"delivered": 4, "failed": 1}
    t["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    values = {c.header: c.value(t, at) for c in columns_for("Trigger")}
    assert values["SOURCE"] == "schedule */5 * * * *" and values["SUBSCRIBER"] == "Function/hello"
    assert (values["DELIVERED"], values["FAILED"]) == ("4", "1")
