"""Strategies of the serverless kinds (``minik8s.io/v1`` Function, Workflow, WorkflowRun, Trigger).

Defaults and validation in Kubernetes' style (field paths, ``Required value``,
``Unsupported value``, ``Not found`` ...), so a bad object is refused with a 422 whose
causes name the field.  The Workflow graph is checked as a whole: ``startAt`` and every
``next``/``default`` name a state of the same machine (a Parallel branch is a machine of its
own), every state is reachable from ``startAt``, every reachable state can reach an end
(``end: true``, Succeed or Fail), and Choice rules are well formed.
"""

from __future__ import annotations

import re
import zoneinfo
from typing import Any

from minik8s.api import jsonpath
from minik8s.api import serverless as s
from minik8s.api import validation as v
from minik8s.api.selectors import LabelSelector
from minik8s.apiserver.strategies.base import REQUIRED, Cause, Obj, Strategy
from minik8s.apiserver.strategies.pod import validate_container

_HANDLER_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*")
_FILE_RE = re.compile(r"[-._a-zA-Z0-9]+")
#: ConfigMap keys the function controller writes beside the user's files.
RESERVED_FILE_PREFIX = ".minik8s"
_CE_ATTRIBUTE_RE = re.compile(r"[a-z0-9]{1,20}")
#: Longest Function name: its Deployment, Service and ConfigMaps are named after it (``<name>-<hash>``)
#: and must stay DNS-1035 labels.
MAX_FUNCTION_NAME = 50
MAX_STATE_NAME = 80


def _supported(value: Any, allowed: tuple[str, ...]) -> str:
    return f'Unsupported value: "{value}": supported values: ' + ", ".join(f'"{a}"' for a in allowed)


def _function_name_errors(name: str) -> list[str]:
    errs = v.dns1035_label_errors(name)
    if len(name) > MAX_FUNCTION_NAME:
        errs.append(v.max_len_error(MAX_FUNCTION_NAME))
    return errs


def _int_range(value: Any, path: str, low: int, high: int | None = None) -> list[Cause]:
    if value is None:
        return []
    if value < low:
        return [(path, value, f"must be greater than or equal to {low}")]
    if high is not None and value > high:
        return [(path, value, f"must be less than or equal to {high}")]
    return []


# ============================================================== Function
class FunctionStrategy(Strategy):
    """minik8s.io/v1 Function.

    Defaults: ``runtime`` python3, ``handler`` main.handler, ``timeoutSeconds`` 30, ``mode``
    Pooled, ``scaling`` minScale 0, maxScale 10, targetConcurrency 10, scaleToZeroAfterSeconds 30.
    Validation: the name is a DNS-1035 label of at most 50 characters; exactly one of ``source``
    (becomes main.py) or ``files`` (flat names of ``[-._a-zA-Z0-9]``, not starting with
    ``.minik8s``); the handler is ``module.function`` and its module is one of the files; code
    and requirements at most 960 KiB; requirement lines without pip options; env names and
    resources as for containers; 1 <= timeoutSeconds <= 900; 0 <= minScale <= maxScale,
    maxScale >= 1, targetConcurrency >= 1, scaleToZeroAfterSeconds >= 1.
    """

    has_status = True
    name_check = staticmethod(_function_name_errors)

    def default(self, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        spec.setdefault("runtime", "python3")
        spec.setdefault("handler", s.DEFAULT_HANDLER)
        spec.setdefault("timeoutSeconds", s.DEFAULT_TIMEOUT_SECONDS)
        spec.setdefault("mode", "Pooled")
        scaling = spec.setdefault("scaling", {})
        scaling.setdefault("minScale", s.DEFAULT_MIN_SCALE)
        scaling.setdefault("maxScale", max(s.DEFAULT_MAX_SCALE, scaling["minScale"] or 0))
        scaling.setdefault("targetConcurrency", s.DEFAULT_TARGET_CONCURRENCY)
        scaling.setdefault("scaleToZeroAfterSeconds", s.DEFAULT_SCALE_TO_ZERO_AFTER_SECONDS)

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        spec = obj.get("spec") or {}
        runtime = spec.get("runtime")
        if runtime not in s.RUNTIMES:
            causes.append(("spec.runtime", None, _supported(runtime, s.RUNTIMES)))
        mode = spec.get("mode")
        if mode not in s.FUNCTION_MODES:
            causes.append(("spec.mode", None, _supported(mode, s.FUNCTION_MODES)))
        causes += self._code_errors(spec)
        for i, line in enumerate(spec.get("requirements") or []):
            stripped = line.strip()
            if not stripped or "\n" in line or "\r" in line or stripped.startswith("-"):
                causes.append((f"spec.requirements[{i}]", line, "must be one requirement specifier "
                               "(e.g. 'requests==2.32.3'); pip options and line breaks are not allowed"))
        container = {"name": "function", "image": "function", "env": spec.get("env"),
                     "resources": spec.get("resources")}
        causes += validate_container(container, "spec", set())
        timeout = spec.get("timeoutSeconds")
        causes += _int_range(timeout, "spec.timeoutSeconds", 1, s.MAX_TIMEOUT_SECONDS)
        scaling = spec.get("scaling") or {}
        low, high = scaling.get("minScale"), scaling.get("maxScale")
        causes += _int_range(low, "spec.scaling.minScale", 0)
        causes += _int_range(high, "spec.scaling.maxScale", 1)
        if low is not None and high is not None and high >= 1 and low > high:
            causes.append(("spec.scaling.maxScale", high, "must be greater than or equal to `minScale`"))
        causes += _int_range(scaling.get("targetConcurrency"), "spec.scaling.targetConcurrency", 1)
        causes += _int_range(scaling.get("scaleToZeroAfterSeconds"), "spec.scaling.scaleToZeroAfterSeconds", 1)
        return causes

    @staticmethod
    def _code_errors(spec: Obj) -> list[Cause]:
        causes: list[Cause] = []
        source, files = spec.get("source"), spec.get("files")
        if source is None and not files:
            return [("spec", None, "Required value: one of `source` or `files` must be specified")]
        if source is not None and files:
            return [("spec.files", None, "Forbidden: may not be specified together with `source`")]
        names = [s.SOURCE_FILE] if source is not None else list(files or {})
        for name in [] if source is not None else names:
            if not _FILE_RE.fullmatch(name) or name in (".", "..") or name.startswith(RESERVED_FILE_PREFIX):
                causes.append((f"spec.files[{name}]", name,
                               "a file name must consist of alphanumeric characters, '-', '_' or '.' "
                               f"and must not start with '{RESERVED_FILE_PREFIX}'"))
        size = sum(len(str(t).encode()) for t in ([source] if source is not None else list((files or {}).values())))
        size += sum(len(line.encode()) + 1 for line in spec.get("requirements") or [])
        if size > s.MAX_CODE_BYTES:
            causes.append(("spec", None, f"Too long: code and requirements must have at most {s.MAX_CODE_BYTES} "
                                         "bytes"))
        handler = spec.get("handler") or ""
        if not _HANDLER_RE.fullmatch(handler):
            causes.append(("spec.handler", handler, "must be module.function, two Python identifiers "
                                                    "(e.g. main.handler)"))
        else:
            module = handler.split(".")[0]
            if f"{module}.py" not in names:
                py_files = ", ".join(sorted(n for n in names if n.endswith(".py"))) or "no .py file"
                where = "spec.source is main.py" if source is not None else f"spec.files has {py_files}"
                causes.append(("spec.handler", handler, f'module "{module}" is not in the code '
                                                        f"({where})"))
        return causes


# ============================================================== Workflow
_STATES_WITH_NEXT = ("Task", "Pass", "Parallel")


def _rule_errors(rule: Obj, path: str, top: bool, names: set[str]) -> list[Cause]:
    """A Choice rule: exactly one operator (a comparison with ``variable``, or and/or/not);
    ``next`` on top-level rules only, naming a state."""
    causes: list[Cause] = []
    comparisons = [op for op in s.CHOICE_OPERATORS if rule.get(op) is not None]
    combinators = [op for op in ("and", "or", "not") if rule.get(op) is not None]
    used = comparisons + combinators
    if not used:
        causes.append((path, None, "Required value: a rule needs one comparison operator (numericEquals, "
                                   "stringEquals, booleanEquals, isPresent, ...) or one of and, or, not"))
    elif len(used) > 1:
        causes.append((f"{path}.{used[1]}", None, f"Forbidden: may not be specified together with `{used[0]}`"))
    if comparisons:
        variable = rule.get("variable")
        if not variable:
            causes.append((f"{path}.variable", None, REQUIRED))
        else:
            causes += [(f"{path}.variable", variable, m) for m in jsonpath.errors(variable)]
        pattern = rule.get("stringMatches")
        if pattern is not None and not isinstance(pattern, str):
            causes.append((f"{path}.stringMatches", pattern, "must be a string"))
    elif rule.get("variable") is not None and combinators:
        causes.append((f"{path}.variable", None, f"Forbidden: may not be specified with `{combinators[0]}`"))
    for op in ("and", "or"):
        subs = rule.get(op)
        if subs is None:
            continue
        if not subs:
            causes.append((f"{path}.{op}", None, "Required value: must list at least one rule"))
        for i, sub in enumerate(subs):
            causes += _rule_errors(sub, f"{path}.{op}[{i}]", False, names)
    if rule.get("not") is not None:
        causes += _rule_errors(rule["not"], f"{path}.not", False, names)
    nxt = rule.get("next")
    if top:
        if not nxt:
            causes.append((f"{path}.next", None, REQUIRED))
        elif nxt not in names:
            causes.append((f"{path}.next", None, f'Not found: "{nxt}": no such state'))
    elif nxt is not None:
        causes.append((f"{path}.next", nxt, "Forbidden: only the top-level rules of a Choice state have `next`"))
    return causes


def _successors(state: Obj) -> list[str]:
    out = [state["next"]] if state.get("next") else []
    if state.get("type") == "Choice":
        out += [r["next"] for r in state.get("choices") or [] if r.get("next")]
        if state.get("default"):
            out.append(state["default"])
    return out


def _is_terminal(state: Obj) -> bool:
    return state.get("type") in ("Succeed", "Fail") or bool(state.get("end"))


def _state_errors(name: str, state: Obj, path: str, names: set[str]) -> list[Cause]:
    causes: list[Cause] = []
    stype = state.get("type")
    if not stype:
        return [(f"{path}.type", None, REQUIRED)]
    if stype not in s.STATE_TYPES:
        return [(f"{path}.type", None, _supported(stype, s.STATE_TYPES))]
    nxt, end = state.get("next"), state.get("end")
    if stype in _STATES_WITH_NEXT:
        if nxt and end:
            causes.append((f"{path}.end", None, "Forbidden: may not be specified together with `next`"))
        elif not nxt and not end:
            causes.append((f"{path}.next", None, "Required value: one of `next` or `end: true` must be specified"))
    else:
        for fld in ("next", "end"):
            if state.get(fld) is not None:
                causes.append((f"{path}.{fld}", None, f"Forbidden: a {stype} state has no `{fld}`"))
    if nxt and nxt not in names:
        causes.append((f"{path}.next", None, f'Not found: "{nxt}": no such state'))
    for fld in ("inputPath", "resultPath", "outputPath"):
        if state.get(fld) is not None:
            causes += [(f"{path}.{fld}", state[fld], m) for m in jsonpath.errors(state[fld])]
    if stype == "Task":
        fn = state.get("function")
        if not fn:
            causes.append((f"{path}.function", None, REQUIRED))
        else:
            causes += [(f"{path}.function", fn, m) for m in _function_name_errors(fn)]
        causes += _int_range(state.get("timeoutSeconds"), f"{path}.timeoutSeconds", 1, s.MAX_TIMEOUT_SECONDS)
    elif stype == "Choice":
        choices = state.get("choices") or []
        if not choices:
            causes.append((f"{path}.choices", None, "Required value: a Choice state needs at least one rule"))
        for i, rule in enumerate(choices):
            causes += _rule_errors(rule, f"{path}.choices[{i}]", True, names)
        default = state.get("default")
        if default and default not in names:
            causes.append((f"{path}.default", None, f'Not found: "{default}": no such state'))
    elif stype == "Parallel":
        branches = state.get("branches") or []
        if not branches:
            causes.append((f"{path}.branches", None, "Required value: a Parallel state needs at least one branch"))
        for i, branch in enumerate(branches):
            causes += machine_errors(branch, f"{path}.branches[{i}]")
    return causes


def machine_errors(machine: Obj, path: str) -> list[Cause]:
    """Causes why the state machine ``machine`` (``startAt`` + ``states``) at ``path`` is invalid."""
    causes: list[Cause] = []
    states: dict[str, Obj] = machine.get("states") or {}
    names = set(states)
    if not states:
        causes.append((f"{path}.states", None, "Required value: must have at least one state"))
    start = machine.get("startAt")
    if not start:
        causes.append((f"{path}.startAt", None, REQUIRED))
    elif states and start not in names:
        causes.append((f"{path}.startAt", None, f'Not found: "{start}": no such state'))
    for name, state in states.items():
        sp = f"{path}.states[{name}]"
        if not name or len(name) > MAX_STATE_NAME:
            causes.append((sp, name, f"a state name must have 1 to {MAX_STATE_NAME} characters"))
        causes += _state_errors(name, state, sp, names)
    if start not in names:
        return causes
    reachable: list[str] = []
    todo = [start]
    while todo:
        name = todo.pop()
        if name in reachable:
            continue
        reachable.append(name)
        todo += [n for n in _successors(states[name]) if n in names and n not in reachable]
    for name in states:
        if name not in reachable:
            causes.append((f"{path}.states[{name}]", None, "Invalid value: state is not reachable from `startAt`"))
    if causes:
        return causes  # "never ends" is only meaningful for a machine whose transitions are all valid
    ending = {n for n in reachable if _is_terminal(states[n])}
    if not ending:
        causes.append((f"{path}.states", None, "Invalid value: no end: no state reachable from `startAt` ends "
                                               "the workflow (`end: true`, Succeed or Fail)"))
        return causes
    changed = True
    while changed:  # states from which some path reaches an end
        changed = False
        for name in reachable:
            if name not in ending and any(n in ending for n in _successors(states[name])):
                ending.add(name)
                changed = True
    for name in reachable:
        if name not in ending:
            causes.append((f"{path}.states[{name}]", None, "Invalid value: no path from this state reaches an end "
                                                           "(`end: true`, Succeed or Fail); it would loop forever"))
    return causes


class WorkflowStrategy(Strategy):
    """minik8s.io/v1 Workflow: ``maxSteps`` defaults to 100 (1..10000), ``runHistoryLimit`` to 20
    (WorkflowRuns kept per Workflow, 0..1000); the graph is validated by :func:`machine_errors`."""

    has_status = True

    def default(self, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        spec.setdefault("maxSteps", s.DEFAULT_MAX_STEPS)
        spec.setdefault("runHistoryLimit", s.DEFAULT_RUN_HISTORY_LIMIT)

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        spec = obj.get("spec") or {}
        causes += machine_errors(spec, "spec")
        causes += _int_range(spec.get("maxSteps"), "spec.maxSteps", 1, s.MAX_MAX_STEPS)
        causes += _int_range(spec.get("timeoutSeconds"), "spec.timeoutSeconds", 1)
        causes += _int_range(spec.get("runHistoryLimit"), "spec.runHistoryLimit", 0, 1000)
        return causes


class WorkflowRunStrategy(Strategy):
    """minik8s.io/v1 WorkflowRun (written by the gateway): ``spec.workflowRef.name`` is a Workflow
    name; ``status.phase`` one of Running, Succeeded, Failed."""

    has_status = True

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        ref = ((obj.get("spec") or {}).get("workflowRef") or {}).get("name")
        if not ref:
            causes.append(("spec.workflowRef.name", None, REQUIRED))
        else:
            causes += [("spec.workflowRef.name", ref, m) for m in v.dns1123_subdomain_errors(ref)]
        phase = (obj.get("status") or {}).get("phase")
        if phase is not None and phase not in s.RUN_PHASES:
            causes.append(("status.phase", None, _supported(phase, s.RUN_PHASES)))
        if old is not None and (old.get("spec") or {}) != (obj.get("spec") or {}):
            causes.append(("spec", None, "Forbidden: field is immutable"))
        return causes

    def fields(self, obj: Obj) -> dict[str, str]:
        f = super().fields(obj)
        f["spec.workflowRef.name"] = ((obj.get("spec") or {}).get("workflowRef") or {}).get("name") or ""
        f["status.phase"] = (obj.get("status") or {}).get("phase") or ""
        return f


# ============================================================== Trigger
def schedule_errors(schedule: Any) -> list[str]:
    """Why ``schedule`` is not a cron expression (five fields, or a ``@hourly``-style macro)."""
    from croniter import croniter

    if not isinstance(schedule, str) or not croniter.is_valid(schedule):
        return ["must be a cron expression of five fields (minute hour day-of-month month day-of-week, "
                "e.g. '*/5 * * * *') or @hourly, @daily, @weekly, @monthly, @yearly"]
    return []


class TriggerStrategy(Strategy):
    """minik8s.io/v1 Trigger.

    Defaults: ``subscriber.ref.apiVersion`` minik8s.io/v1; ``delivery`` retry 3, backoffPolicy
    exponential, backoffDelaySeconds 0.5.  Validation: the subscriber is a Function or Workflow
    named by a valid name; filter attribute names are CloudEvents attribute names (lower-case
    letters and digits, at most 20); ``schedule`` is a cron expression and ``timeZone`` an IANA
    zone; ``objects`` has apiVersion, kind and a parsable ``labelSelector``; ``schedule`` and
    ``objects`` exclude each other; retry 0..10, backoffDelaySeconds > 0.
    """

    has_status = True

    def default(self, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        ref = (spec.get("subscriber") or {}).get("ref")
        if isinstance(ref, dict):
            ref.setdefault("apiVersion", s.API_VERSION)
        delivery = spec.setdefault("delivery", {})
        delivery.setdefault("retry", s.DEFAULT_RETRY)
        delivery.setdefault("backoffPolicy", "exponential")
        delivery.setdefault("backoffDelaySeconds", s.DEFAULT_BACKOFF_DELAY_SECONDS)

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        spec = obj.get("spec") or {}
        ref = (spec.get("subscriber") or {}).get("ref") or {}
        kind, name = ref.get("kind"), ref.get("name")
        if kind not in s.SUBSCRIBER_KINDS:
            causes.append(("spec.subscriber.ref.kind", None, _supported(kind, s.SUBSCRIBER_KINDS)))
        if not name:
            causes.append(("spec.subscriber.ref.name", None, REQUIRED))
        else:
            check = _function_name_errors if kind == "Function" else v.dns1123_subdomain_errors
            causes += [("spec.subscriber.ref.name", name, m) for m in check(name)]
        if ref.get("apiVersion") not in (None, s.API_VERSION):
            causes.append(("spec.subscriber.ref.apiVersion", None, _supported(ref["apiVersion"], (s.API_VERSION,))))
        for key in ((spec.get("filter") or {}).get("attributes") or {}):
            if not _CE_ATTRIBUTE_RE.fullmatch(key):
                causes.append(("spec.filter.attributes", key, "must be a CloudEvents attribute name: 1 to 20 "
                                                              "lower-case letters or digits (e.g. type, source)"))
        schedule = spec.get("schedule")
        if schedule is not None:
            causes += [("spec.schedule", schedule, m) for m in schedule_errors(schedule)]
        tz = spec.get("timeZone")
        if tz is not None:
            if schedule is None:
                causes.append(("spec.timeZone", None, "Forbidden: only a `schedule` has a time zone"))
            try:
                zoneinfo.ZoneInfo(tz)
            except (zoneinfo.ZoneInfoNotFoundError, ValueError):
                causes.append(("spec.timeZone", tz, "unknown time zone (an IANA name such as "
                                                    "Europe/Berlin or UTC)"))
        objects = spec.get("objects")
        if objects is not None:
            if schedule is not None:
                causes.append(("spec.objects", None, "Forbidden: may not be specified together with `schedule`"))
            for fld in ("apiVersion", "kind"):
                if not objects.get(fld):
                    causes.append((f"spec.objects.{fld}", None, REQUIRED))
            selector = objects.get("labelSelector")
            if selector:
                try:
                    LabelSelector.parse(selector)
                except ValueError as exc:
                    causes.append(("spec.objects.labelSelector", selector, str(exc)))
        delivery = spec.get("delivery") or {}
        causes += _int_range(delivery.get("retry"), "spec.delivery.retry", 0, 10)
        policy = delivery.get("backoffPolicy")
        if policy is not None and policy not in s.BACKOFF_POLICIES:
            causes.append(("spec.delivery.backoffPolicy", None, _supported(policy, s.BACKOFF_POLICIES)))
        delay = delivery.get("backoffDelaySeconds")
        if delay is not None and not 0 < delay <= 300:
            causes.append(("spec.delivery.backoffDelaySeconds", delay, "must be greater than 0 and at most 300"))
        return causes


def serverless_strategies() -> dict[str, Strategy]:
    """Kind → strategy for the serverless kinds (merged into the apiserver's table)."""
    return {"Function": FunctionStrategy(), "Workflow": WorkflowStrategy(), "WorkflowRun": WorkflowRunStrategy(),
            "Trigger": TriggerStrategy()}
