"""The Workflow interpreter: runs a ``minik8s.io/v1`` Workflow's state machine on one input.

Semantics follow the Amazon States Language (keys in camelCase):

* every state's *effective input* is ``inputPath`` (default ``$``) of its input;
* **Task** calls the Function named by ``function`` with the effective input (through the
  ``invoke`` callable given to :class:`Interpreter`); **Pass** yields ``result`` (or its
  effective input); **Parallel** runs its ``branches`` concurrently on the effective input
  and yields their outputs as a list, in branch order;
* the result goes to ``resultPath`` (default ``$``, replacing the input) of the *state's
  input*, then ``outputPath`` (default ``$``) selects the output, which is the next
  state's input;
* **Choice** evaluates its rules in order on its effective input and goes to the first
  rule's ``next`` that matches, else ``default``, else fails with ``States.NoChoiceMatched``;
  comparisons on a missing ``variable`` are false (``isPresent`` tells missing apart);
* **Succeed** ends the run with its input; **Fail** ends it with ``error`` and ``cause``;
  a state with ``end: true`` ends it with its output.

Loops are Choice back-edges; every visited state (branch states included) counts against
``maxSteps`` and going past it fails the run with ``States.MaxStepsExceeded``.  A run that
takes longer than ``timeoutSeconds`` fails with ``States.Timeout``.  A Task whose function
fails fails the run with the function's error name (its exception type) and message, and
a Parallel state fails with the first failing branch's error.  Each visited state is
recorded (:class:`Step`: input, output, start time, duration, next state, error; for a
Parallel state the steps of each branch), which is what a WorkflowRun's status shows.

Pure logic: no I/O but through ``invoke``; the clocks are injectable.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from minik8s.api import jsonpath
from minik8s.api.base import Obj

#: ``invoke(function_name, input, timeout_seconds)`` → the function's output; raises
#: :class:`TaskError` when the function failed.
Invoke = Callable[[str, Any, float | None], Awaitable[Any]]

MAX_STEPS_EXCEEDED = "States.MaxStepsExceeded"
NO_CHOICE_MATCHED = "States.NoChoiceMatched"
TIMEOUT = "States.Timeout"
RUNTIME = "States.Runtime"
TASK_FAILED = "States.TaskFailed"


class TaskError(Exception):
    """A state failed: ``error`` is a short name (an exception type or ``States.*``), ``cause`` text."""

    def __init__(self, error: str, cause: str = "") -> None:
        super().__init__(f"{error}: {cause}" if cause else error)
        self.error = error
        self.cause = cause


@dataclass
class Step:
    """One visited state (the wire form is :meth:`to_dict`, a WorkflowRun ``status.steps`` item)."""

    state: str
    type: str
    input: Any
    start_time: str
    output: Any = None
    duration_seconds: float = 0.0
    next: str | None = None
    error: str | None = None
    cause: str | None = None
    branches: list[list[Step]] | None = None

    def to_dict(self) -> Obj:
        out: Obj = {"state": self.state, "type": self.type, "input": self.input, "startTime": self.start_time,
                    "durationSeconds": round(self.duration_seconds, 6)}
        if self.error is None:
            out["output"] = self.output
        for key, value in (("next", self.next), ("error", self.error), ("cause", self.cause)):
            if value is not None:
                out[key] = value
        if self.branches is not None:
            out["branches"] = [[s.to_dict() for s in branch] for branch in self.branches]
        return out


@dataclass
class RunResult:
    """The outcome: ``phase`` Succeeded or Failed, ``output`` (Succeeded), ``error``/``cause``
    (Failed), the visited ``steps`` and the run's duration in seconds."""

    phase: str
    output: Any = None
    error: str | None = None
    cause: str | None = None
    steps: list[Step] = field(default_factory=list)
    duration_seconds: float = 0.0


def _wall_clock() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _wildcard(pattern: str) -> re.Pattern[str]:
    """ASL ``stringMatches``: ``*`` matches any run of characters, ``\\*`` a literal star."""
    parts = re.split(r"(\\\\|\\\*|\*)", pattern)
    regex = "".join(".*" if p == "*" else re.escape(p[1:] if p in ("\\*", "\\\\") else p) for p in parts)
    return re.compile(regex, re.DOTALL)


_COMPARISONS: dict[str, Callable[[Any, Any], bool]] = {
    "stringEquals": lambda v, x: isinstance(v, str) and v == x,
    "stringLessThan": lambda v, x: isinstance(v, str) and v < x,
    "stringGreaterThan": lambda v, x: isinstance(v, str) and v > x,
    "stringLessThanEquals": lambda v, x: isinstance(v, str) and v <= x,
    "stringGreaterThanEquals": lambda v, x: isinstance(v, str) and v >= x,
    "stringMatches": lambda v, x: isinstance(v, str) and _wildcard(x).fullmatch(v) is not None,
    "numericEquals": lambda v, x: _is_number(v) and v == x,
    "numericLessThan": lambda v, x: _is_number(v) and v < x,
    "numericGreaterThan": lambda v, x: _is_number(v) and v > x,
    "numericLessThanEquals": lambda v, x: _is_number(v) and v <= x,
    "numericGreaterThanEquals": lambda v, x: _is_number(v) and v >= x,
    "booleanEquals": lambda v, x: isinstance(v, bool) and v == x,
    "isNull": lambda v, x: (v is None) == x,
    "isNumeric": lambda v, x: _is_number(v) == x,
    "isString": lambda v, x: isinstance(v, str) == x,
    "isBoolean": lambda v, x: isinstance(v, bool) == x,
}


def rule_matches(rule: Obj, data: Any) -> bool:
    """Whether a Choice rule (wire form) matches ``data``."""
    if rule.get("and") is not None:
        return all(rule_matches(r, data) for r in rule["and"])
    if rule.get("or") is not None:
        return any(rule_matches(r, data) for r in rule["or"])
    if rule.get("not") is not None:
        return not rule_matches(rule["not"], data)
    found, value = jsonpath.lookup(data, rule.get("variable") or "$")
    if rule.get("isPresent") is not None:
        return found == bool(rule["isPresent"])
    for op, compare in _COMPARISONS.items():
        if rule.get(op) is not None:
            return found and compare(value, rule[op])
    return False


class Interpreter:
    """Runs one Workflow spec (wire form: ``startAt``, ``states``, ``maxSteps``, ``timeoutSeconds``).

    ``invoke`` calls a Function; ``clock`` (monotonic seconds) measures durations and
    ``wall_clock`` stamps ``startTime``; ``on_step`` is called with each finished top-level
    :class:`Step` (for progress reporting).
    """

    def __init__(self, spec: Obj, invoke: Invoke, *, clock: Callable[[], float] = time.monotonic,
                 wall_clock: Callable[[], str] = _wall_clock,
                 on_step: Callable[[Step], Awaitable[None]] | None = None) -> None:
        self.spec = spec
        self.invoke = invoke
        self.clock = clock
        self.wall_clock = wall_clock
        self.on_step = on_step
        self.max_steps = int(spec.get("maxSteps") or 100)
        self.steps_taken = 0

    async def run(self, data: Any) -> RunResult:
        """Run the machine on ``data``; never raises for a failing workflow (see ``phase``)."""
        self.steps_taken = 0
        steps: list[Step] = []
        start = self.clock()
        timeout = self.spec.get("timeoutSeconds")
        try:
            output = await asyncio.wait_for(self._machine(self.spec, data, steps, top=True), timeout)
            result = RunResult("Succeeded", output=output, steps=steps)
        except TaskError as exc:
            result = RunResult("Failed", error=exc.error, cause=exc.cause, steps=steps)
        except TimeoutError:
            result = RunResult("Failed", error=TIMEOUT, cause=f"the workflow ran longer than {timeout}s", steps=steps)
        result.duration_seconds = self.clock() - start
        return result

    async def _machine(self, machine: Obj, data: Any, steps: list[Step], top: bool = False) -> Any:
        states: Obj = machine.get("states") or {}
        name: str | None = machine.get("startAt")
        while name is not None:
            state = states.get(name)
            if state is None:
                raise TaskError(RUNTIME, f'no state "{name}"')
            self.steps_taken += 1
            if self.steps_taken > self.max_steps:
                raise TaskError(MAX_STEPS_EXCEEDED, f"the workflow visited more than maxSteps={self.max_steps} "
                                                    f"states (next was {name})")
            step = Step(name, str(state.get("type")), data, self.wall_clock())
            steps.append(step)
            began = self.clock()
            try:
                data, name = await self._state(state, data, step)
            except TaskError as exc:
                step.error, step.cause = exc.error, exc.cause
                raise
            finally:
                step.duration_seconds = self.clock() - began
                if top and self.on_step is not None:
                    await self.on_step(step)
            step.output, step.next = data, name
        return data

    async def _state(self, state: Obj, data: Any, step: Step) -> tuple[Any, str | None]:
        """Execute one state on its input ``data``; returns (output, next state or None at the end)."""
        stype = state.get("type")
        if stype == "Fail":
            raise TaskError(str(state.get("error") or "States.Fail"), str(state.get("cause") or ""))
        effective = self._path(data, state.get("inputPath"), "inputPath")
        if stype == "Choice":
            for rule in state.get("choices") or []:
                if rule_matches(rule, effective):
                    return self._path(effective, state.get("outputPath"), "outputPath"), rule["next"]
            if state.get("default"):
                return self._path(effective, state.get("outputPath"), "outputPath"), state["default"]
            raise TaskError(NO_CHOICE_MATCHED, "no Choice rule matched and there is no default")
        if stype == "Succeed":
            return self._path(effective, state.get("outputPath"), "outputPath"), None
        if stype == "Task":
            timeout = state.get("timeoutSeconds")
            result = await self.invoke(str(state["function"]), effective, float(timeout) if timeout else None)
        elif stype == "Parallel":
            branches = state.get("branches") or []
            step.branches = [[] for _ in branches]
            outcomes = await asyncio.gather(*(self._machine(b, effective, step.branches[i])
                                              for i, b in enumerate(branches)), return_exceptions=True)
            for outcome in outcomes:
                if isinstance(outcome, BaseException):
                    raise outcome
            result = list(outcomes)
        elif stype == "Pass":
            result = state["result"] if "result" in state else effective
        else:
            raise TaskError(RUNTIME, f"unsupported state type {stype!r}")
        result_path = state.get("resultPath") or "$"
        try:
            combined = jsonpath.put(data, result_path, result)
        except KeyError as exc:
            raise TaskError(RUNTIME, f"resultPath: {exc.args[0]}") from None
        output = self._path(combined, state.get("outputPath"), "outputPath")
        return output, None if state.get("end") else state.get("next")

    @staticmethod
    def _path(data: Any, path: str | None, what: str) -> Any:
        if not path or path == "$":
            return data
        try:
            return jsonpath.get(data, path)
        except KeyError as exc:
            raise TaskError(RUNTIME, f"{what}: {exc.args[0]}") from None
