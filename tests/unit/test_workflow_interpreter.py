"""The Workflow interpreter: chains, branches, parallel, loops bounded by maxSteps, Fail, paths, records."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from minik8s.gateway.workflow import Interpreter, TaskError, rule_matches

Obj = dict[str, Any]


class Functions:
    """Stand-ins for deployed Functions (the interpreter's only I/O is this callable)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    async def __call__(self, name: str, data: Any, timeout: float | None) -> Any:
        self.calls.append((name, data))
        if name == "inc":
            return {**data, "n": data["n"] + 1}
        if name == "double":
            return data * 2
        if name == "upper":
            return str(data).upper()
        if name == "slow":
            await asyncio.sleep(5)
        if name == "boom":
            raise TaskError("ValueError", "bad input")
        return {"called": name, "with": data}


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        self.now += 0.25
        return self.now


def task(fn: str, **kw: Any) -> Obj:
    return {"type": "Task", "function": fn, **kw}


async def run(spec: Obj, data: Any, fns: Functions | None = None, **kw: Any) -> Any:
    return await Interpreter(spec, fns or Functions(), clock=FakeClock(), wall_clock=lambda: "T", **kw).run(data)


async def test_a_chain_passes_each_output_on() -> None:
    fns = Functions()
    spec = {"startAt": "A", "states": {"A": task("inc", next="B"), "B": task("inc", next="C"),
                                       "C": task("inc", end=True)}}
    result = await run(spec, {"n": 0}, fns)
    assert result.phase == "Succeeded" and result.output == {"n": 3}
    assert [c[1] for c in fns.calls] == [{"n": 0}, {"n": 1}, {"n": 2}]
    steps = [s.to_dict() for s in result.steps]
    assert [(s["state"], s["input"], s["output"], s.get("next")) for s in steps] == [
        ("A", {"n": 0}, {"n": 1}, "B"), ("B", {"n": 1}, {"n": 2}, "C"), ("C", {"n": 2}, {"n": 3}, None)]
    assert all(s["durationSeconds"] == 0.25 and s["startTime"] == "T" for s in steps)
    assert result.duration_seconds > 0


BRANCHY = {"startAt": "Check", "states": {
    "Check": {"type": "Choice", "choices": [
        {"variable": "$.n", "numericGreaterThan": 10, "next": "Big"},
        {"and": [{"variable": "$.kind", "stringEquals": "vip"}, {"not": {"variable": "$.banned", "isPresent": True}}],
         "next": "Vip"}],
        "default": "Small"},
    "Big": task("big", end=True), "Vip": task("vip", end=True), "Small": {"type": "Pass", "result": "small",
                                                                           "end": True}}}


@pytest.mark.parametrize("data, branch", [
    ({"n": 11}, "Big"), ({"n": 10, "kind": "vip"}, "Vip"), ({"n": 1, "kind": "vip", "banned": True}, "Small"),
    ({"n": "11"}, "Small"), ({}, "Small"),
])
async def test_choice_takes_the_matching_branch(data: Obj, branch: str) -> None:
    result = await run(BRANCHY, data)
    assert result.phase == "Succeeded"
    assert [s.state for s in result.steps] == ["Check", branch]
    assert result.steps[0].next == branch


async def test_no_choice_matched_without_default_fails() -> None:
    spec = {"startAt": "C", "states": {"C": {"type": "Choice", "choices": [
        {"variable": "$.x", "booleanEquals": True, "next": "S"}]}, "S": {"type": "Succeed"}}}
    result = await run(spec, {"x": False})
    assert (result.phase, result.error) == ("Failed", "States.NoChoiceMatched")
    assert result.steps[0].error == "States.NoChoiceMatched"


async def test_parallel_joins_branch_outputs_in_order() -> None:
    spec = {"startAt": "P", "states": {"P": {"type": "Parallel", "next": "Done", "branches": [
        {"startAt": "D", "states": {"D": task("double", end=True)}},
        {"startAt": "U", "states": {"U": task("upper", next="U2"), "U2": {"type": "Pass", "end": True}}}]},
        "Done": {"type": "Succeed"}}}
    result = await run(spec, "ab")
    assert result.phase == "Succeeded" and result.output == ["abab", "AB"]
    record = result.steps[0].to_dict()
    assert [[s["state"] for s in b] for b in record["branches"]] == [["D"], ["U", "U2"]]


async def test_parallel_fails_with_a_failing_branch() -> None:
    spec = {"startAt": "P", "states": {"P": {"type": "Parallel", "end": True, "branches": [
        {"startAt": "B", "states": {"B": task("boom", end=True)}},
        {"startAt": "D", "states": {"D": task("double", end=True)}}]}}}
    result = await run(spec, 1)
    assert (result.phase, result.error, result.cause) == ("Failed", "ValueError", "bad input")


async def test_a_loop_runs_until_the_choice_exits() -> None:
    spec = {"startAt": "Inc", "maxSteps": 50, "states": {
        "Inc": task("inc", next="More"),
        "More": {"type": "Choice", "choices": [{"variable": "$.n", "numericLessThan": 5, "next": "Inc"}],
                 "default": "Done"},
        "Done": {"type": "Succeed"}}}
    result = await run(spec, {"n": 0})
    assert result.phase == "Succeeded" and result.output == {"n": 5}
    assert len(result.steps) == 11


async def test_max_steps_bounds_a_loop() -> None:
    spec = {"startAt": "Inc", "maxSteps": 7, "states": {
        "Inc": task("inc", next="More"),
        "More": {"type": "Choice", "choices": [{"variable": "$.n", "numericLessThan": 100, "next": "Inc"}],
                 "default": "Done"},
        "Done": {"type": "Succeed"}}}
    fns = Functions()
    result = await run(spec, {"n": 0}, fns)
    assert (result.phase, result.error) == ("Failed", "States.MaxStepsExceeded")
    assert len(result.steps) == 7 and len(fns.calls) == 4


async def test_fail_state_and_task_errors() -> None:
    fail = {"startAt": "F", "states": {"F": {"type": "Fail", "error": "OrderRejected", "cause": "too big"}}}
    result = await run(fail, {})
    assert (result.phase, result.error, result.cause) == ("Failed", "OrderRejected", "too big")
    boom = {"startAt": "A", "states": {"A": task("boom", next="B"), "B": task("inc", end=True)}}
    fns = Functions()
    result = await run(boom, {"n": 1}, fns)
    assert (result.phase, result.error, result.cause) == ("Failed", "ValueError", "bad input")
    assert [c[0] for c in fns.calls] == ["boom"]
    record = result.steps[0].to_dict()
    assert record["error"] == "ValueError" and "output" not in record


async def test_paths_select_and_place_results() -> None:
    spec = {"startAt": "A", "states": {
        "A": task("double", inputPath="$.x", resultPath="$.doubled", next="B"),
        "B": {"type": "Pass", "result": {"k": 1}, "resultPath": "$.extra", "outputPath": "$.extra", "end": True}}}
    result = await run(spec, {"x": 21})
    assert result.steps[0].output == {"x": 21, "doubled": 42}
    assert result.output == {"k": 1}
    missing = {"startAt": "A", "states": {"A": task("double", inputPath="$.nope", end=True)}}
    result = await run(missing, {"x": 1})
    assert result.error == "States.Runtime" and "$.nope" in str(result.cause)


async def test_timeout_fails_the_run() -> None:
    spec = {"startAt": "S", "timeoutSeconds": 0.05, "states": {"S": task("slow", end=True)}}
    result = await Interpreter(spec, Functions()).run({})
    assert (result.phase, result.error) == ("Failed", "States.Timeout")


async def test_on_step_reports_progress() -> None:
    seen: list[str] = []

    async def on_step(step: Any) -> None:
        seen.append(step.state)

    spec = {"startAt": "A", "states": {"A": task("inc", next="B"), "B": task("inc", end=True)}}
    await run(spec, {"n": 0}, on_step=on_step)
    assert seen == ["A", "B"]


@pytest.mark.parametrize("rule, data, expected", [
    ({"variable": "$.s", "stringMatches": "log-*.txt"}, {"s": "log-2026.txt"}, True),
    ({"variable": "$.s", "stringMatches": "a\\*b"}, {"s": "a*b"}, True),
    ({"variable": "$.s", "stringMatches": "a\\*b"}, {"s": "axxb"}, False),
    ({"variable": "$.n", "numericGreaterThanEquals": 3}, {"n": 3}, True),
    ({"variable": "$.n", "numericEquals": 1}, {"n": True}, False),
    ({"variable": "$.b", "booleanEquals": False}, {"b": False}, True),
    ({"variable": "$.v", "isNull": True}, {"v": None}, True),
    ({"variable": "$.v", "isNull": True}, {}, False),
    ({"variable": "$.v", "isPresent": False}, {}, True),
    ({"variable": "$.v", "isNumeric": True}, {"v": 1.5}, True),
    ({"variable": "$.v", "isString": True}, {"v": 1}, False),
    ({"or": [{"variable": "$.a", "stringLessThan": "b"}, {"variable": "$.a", "isBoolean": True}]}, {"a": "a"}, True),
    ({"variable": "$.items[1].id", "stringEquals": "x"}, {"items": [{}, {"id": "x"}]}, True),
])
def test_choice_rules(rule: Obj, data: Any, expected: bool) -> None:
    assert rule_matches(rule, data) is expected
