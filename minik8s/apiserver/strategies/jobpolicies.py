"""Validation of a JobSpec's failure and success policies (Kubernetes' ``validateJobSpec`` parts in
``pkg/apis/batch/validation/validation.go``, with its messages):

* ``backoffLimitPerIndex`` and ``maxFailedIndexes``: non-negative, only with ``completionMode:
  Indexed``, ``maxFailedIndexes`` only with ``backoffLimitPerIndex`` and at most ``completions``
  and 100000; above 100000 completions ``maxFailedIndexes`` is required and it and
  ``parallelism`` are limited to 10000;
* ``podFailurePolicy``: at most 20 rules; each with an ``action`` (``Count``, ``FailIndex`` (needs
  ``backoffLimitPerIndex``), ``FailJob``, ``Ignore``) and exactly one of ``onExitCodes`` (operator
  ``In``/``NotIn``, 1-255 ordered, distinct ``values``, no 0 with ``In``, a ``containerName`` of the
  template) and ``onPodConditions`` (at most 20 patterns: a qualified-name ``type``, ``status``
  True/False/Unknown); the template's ``restartPolicy`` must be ``Never`` and
  ``podReplacementPolicy`` ``Failed``;
* ``successPolicy``: only for Indexed Jobs; 1-20 rules, each with ``succeededIndexes`` (a valid
  index list below ``completions``, at most 64 KiB) and/or ``succeededCount`` (non-negative, at most
  ``completions`` and the rule's indexes).
"""

from __future__ import annotations

from typing import Any

from minik8s.api import validation as v
from minik8s.api.jobindexes import validate_indexes_format
from minik8s.apiserver.strategies.base import REQUIRED, Cause, Obj, too_many, unsupported

MAX_PARALLELISM_INDEXED = 100_000
MAX_FAILED_INDEXES = 100_000
COMPLETIONS_SOFT_LIMIT = 100_000
PARALLELISM_LIMIT_HIGH_COMPLETIONS = 10_000
MAX_FAILED_INDEXES_HIGH_COMPLETIONS = 10_000
MAX_POD_FAILURE_POLICY_RULES = 20
MAX_EXIT_CODE_VALUES = 255
MAX_POD_CONDITION_PATTERNS = 20
MAX_SUCCEEDED_INDEXES_LENGTH = 64 * 1024
MAX_SUCCESS_POLICY_RULES = 20

POD_FAILURE_POLICY_ACTIONS = ("Count", "FailIndex", "FailJob", "Ignore")
EXIT_CODE_OPERATORS = ("In", "NotIn")
CONDITION_STATUSES = ("False", "True", "Unknown")
#: ``field.Invalid`` with ``OmitValueType``: the message names no value.
INVALID = "Invalid value"


def _valid_values(allowed: tuple[str, ...]) -> str:
    """``Required value: valid values: ["a" "b"]`` (Go's ``%q`` of a string slice)."""
    return f"{REQUIRED}: valid values: [" + " ".join(f'"{a}"' for a in allowed) + "]"


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def default_pod_failure_policy(spec: Obj) -> None:
    """``SetDefaults_Job``: an ``onPodConditions`` pattern's ``status`` defaults to ``True``."""
    policy = spec.get("podFailurePolicy")
    if not isinstance(policy, dict):
        return
    for rule in policy.get("rules") or []:
        if isinstance(rule, dict):
            for pattern in rule.get("onPodConditions") or []:
                if isinstance(pattern, dict) and not pattern.get("status"):
                    pattern["status"] = "True"


def index_limit_errors(spec: Obj, path: str) -> list[Cause]:
    """``backoffLimitPerIndex``, ``maxFailedIndexes`` and the Indexed limits tied to them."""
    causes: list[Cause] = []
    per_index, max_failed = _int(spec.get("backoffLimitPerIndex")), _int(spec.get("maxFailedIndexes"))
    completions, parallelism = _int(spec.get("completions")), _int(spec.get("parallelism"))
    if max_failed is not None and spec.get("backoffLimitPerIndex") is None:
        causes.append((f"{path}.backoffLimitPerIndex", None, f"{REQUIRED}: when maxFailedIndexes is specified"))
    if spec.get("completionMode") == "Indexed":
        if parallelism is not None and parallelism > MAX_PARALLELISM_INDEXED:
            causes.append((f"{path}.parallelism", parallelism, f"must be less than or equal to "
                           f"{MAX_PARALLELISM_INDEXED} when completion mode is Indexed"))
        if completions is not None and max_failed is not None and max_failed > completions:
            causes.append((f"{path}.maxFailedIndexes", max_failed, "must be less than or equal to completions"))
        if max_failed is not None and max_failed > MAX_FAILED_INDEXES:
            causes.append((f"{path}.maxFailedIndexes", max_failed,
                           f"must be less than or equal to {MAX_FAILED_INDEXES}"))
        if completions is not None and completions > COMPLETIONS_SOFT_LIMIT and per_index is not None:
            tail = f"when completions are above {COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index"
            if max_failed is None:
                causes.append((f"{path}.maxFailedIndexes", None,
                               f"{REQUIRED}: must be specified when completions is above {COMPLETIONS_SOFT_LIMIT}"))
            if parallelism is not None and parallelism > PARALLELISM_LIMIT_HIGH_COMPLETIONS:
                causes.append((f"{path}.parallelism", parallelism,
                               f"must be less than or equal to {PARALLELISM_LIMIT_HIGH_COMPLETIONS} {tail}"))
            if max_failed is not None and max_failed > MAX_FAILED_INDEXES_HIGH_COMPLETIONS:
                causes.append((f"{path}.maxFailedIndexes", max_failed,
                               f"must be less than or equal to {MAX_FAILED_INDEXES_HIGH_COMPLETIONS} {tail}"))
    else:
        for fld in ("backoffLimitPerIndex", "maxFailedIndexes"):
            if spec.get(fld) is not None:
                causes.append((f"{path}.{fld}", spec[fld], "requires indexed completion mode"))
    return causes


def _exit_codes_errors(req: Obj, path: str, names: set[str]) -> list[Cause]:
    causes: list[Cause] = []
    operator = req.get("operator")
    if not operator:
        causes.append((f"{path}.operator", None, _valid_values(EXIT_CODE_OPERATORS)))
    elif operator not in EXIT_CODE_OPERATORS:
        causes.append((f"{path}.operator", None, unsupported(operator, EXIT_CODE_OPERATORS)))
    name = req.get("containerName")
    if name is not None and name not in names:
        causes.append((f"{path}.containerName", name,
                       "must be one of the container or initContainer names in the pod template"))
    raw = req.get("values")
    values: list[Any] = raw if isinstance(raw, list) else []
    if not values:
        causes.append((f"{path}.values", values, "at least one value is required"))
    elif len(values) > MAX_EXIT_CODE_VALUES:
        causes.append((f"{path}.values", None, too_many(len(values), MAX_EXIT_CODE_VALUES)))
    seen: set[Any] = set()
    ordered = True
    for j, value in enumerate(values):
        if operator == "In" and value == 0:
            causes.append((f"{path}.values[{j}]", value, "must not be 0 for the In operator"))
        if value in seen:
            causes.append((f"{path}.values[{j}]", None, f"Duplicate value: {value}"))
        seen.add(value)
        if j > 0 and isinstance(value, int) and isinstance(values[j - 1], int) and values[j - 1] > value:
            ordered = False
    if not ordered:
        causes.append((f"{path}.values", values, "must be ordered"))
    return causes


def _pod_conditions_errors(patterns: list[Any], path: str) -> list[Cause]:
    causes: list[Cause] = []
    if len(patterns) > MAX_POD_CONDITION_PATTERNS:
        causes.append((path, None, too_many(len(patterns), MAX_POD_CONDITION_PATTERNS)))
    for j, pattern in enumerate(patterns):
        pattern = pattern if isinstance(pattern, dict) else {}
        where = f"{path}[{j}]"
        type_ = str(pattern.get("type") or "")
        causes += [(f"{where}.type", type_, msg) for msg in v.qualified_name_errors(type_)]
        status = pattern.get("status")
        if not status:
            causes.append((f"{where}.status", None, _valid_values(CONDITION_STATUSES)))
        elif status not in CONDITION_STATUSES:
            causes.append((f"{where}.status", None, unsupported(status, CONDITION_STATUSES)))
    return causes


def pod_failure_policy_errors(spec: Obj, path: str) -> list[Cause]:
    """``validatePodFailurePolicy``, and ``podReplacementPolicy`` must then be ``Failed``."""
    policy = spec.get("podFailurePolicy")
    if policy is None:
        return []
    causes: list[Cause] = []
    replacement = spec.get("podReplacementPolicy")
    if replacement is not None and replacement != "Failed":
        causes.append((f"{path}.podReplacementPolicy", None, unsupported(replacement, ("Failed",))))
    path = f"{path}.podFailurePolicy"
    rules = (policy.get("rules") if isinstance(policy, dict) else None) or []
    if len(rules) > MAX_POD_FAILURE_POLICY_RULES:
        causes.append((f"{path}.rules", None, too_many(len(rules), MAX_POD_FAILURE_POLICY_RULES)))
    pod_spec = (spec.get("template") or {}).get("spec") or {}
    names = {str(c.get("name")) for kind in ("containers", "initContainers") for c in pod_spec.get(kind) or []
             if isinstance(c, dict)}
    for i, rule in enumerate(rules):
        rule = rule if isinstance(rule, dict) else {}
        where = f"{path}.rules[{i}]"
        action = rule.get("action")
        if not action:
            causes.append((f"{where}.action", None, _valid_values(POD_FAILURE_POLICY_ACTIONS)))
        elif action == "FailIndex":
            if spec.get("backoffLimitPerIndex") is None:
                causes.append((f"{where}.action", action, "requires the backoffLimitPerIndex to be set"))
        elif action not in POD_FAILURE_POLICY_ACTIONS:
            causes.append((f"{where}.action", None, unsupported(action, POD_FAILURE_POLICY_ACTIONS)))
        exit_codes, conditions = rule.get("onExitCodes"), rule.get("onPodConditions") or []
        if exit_codes is not None:
            causes += _exit_codes_errors(exit_codes if isinstance(exit_codes, dict) else {},
                                         f"{where}.onExitCodes", names)
        if conditions:
            causes += _pod_conditions_errors(conditions, f"{where}.onPodConditions")
        if exit_codes is not None and conditions:
            causes.append((where, None, f"{INVALID}: specifying both OnExitCodes and OnPodConditions is not supported"))
        if exit_codes is None and not conditions:
            causes.append((where, None, f"{INVALID}: specifying one of OnExitCodes and OnPodConditions is required"))
    return causes


def pod_failure_policy_restart_errors(spec: Obj, path: str) -> list[Cause]:
    """With a pod failure policy the template's ``restartPolicy`` (one a Job allows) must be ``Never``."""
    restart = ((spec.get("template") or {}).get("spec") or {}).get("restartPolicy")
    if spec.get("podFailurePolicy") is None or restart != "OnFailure":
        return []
    return [(f"{path}.template.spec.restartPolicy", restart,
             'only "Never" is supported when podFailurePolicy is specified')]


def success_policy_errors(spec: Obj, path: str) -> list[Cause]:
    """``validateSuccessPolicy`` (and that the Job is Indexed)."""
    policy = spec.get("successPolicy")
    if policy is None:
        return []
    path = f"{path}.successPolicy"
    if spec.get("completionMode") != "Indexed":
        return [(path, policy, "requires indexed completion mode")]
    rules = (policy.get("rules") if isinstance(policy, dict) else None) or []
    causes: list[Cause] = []
    if not rules:
        causes.append((f"{path}.rules", None,
                       f"{REQUIRED}: at least one rules must be specified when the successPolicy is specified"))
    if len(rules) > MAX_SUCCESS_POLICY_RULES:
        causes.append((f"{path}.rules", None, too_many(len(rules), MAX_SUCCESS_POLICY_RULES)))
    completions = _int(spec.get("completions")) or 0
    for i, rule in enumerate(rules):
        rule = rule if isinstance(rule, dict) else {}
        where = f"{path}.rules[{i}]"
        indexes, count = rule.get("succeededIndexes"), _int(rule.get("succeededCount"))
        if indexes is None and rule.get("succeededCount") is None:
            causes.append((where, None, f"{REQUIRED}: at least one of succeededCount or succeededIndexes "
                                        "must be specified"))
        total = 0
        if indexes is not None:
            text = str(indexes)
            if len(text) > MAX_SUCCEEDED_INDEXES_LENGTH:
                causes.append((f"{where}.succeededIndexes", None,
                               f"Too long: may not be more than {MAX_SUCCEEDED_INDEXES_LENGTH} bytes"))
            try:
                total = validate_indexes_format(text, completions)
            except ValueError as exc:
                causes.append((f"{where}.succeededIndexes", text, f"error parsing succeededIndexes: {exc}"))
        if count is not None:
            if count < 0:
                causes.append((f"{where}.succeededCount", count, "must be greater than or equal to 0"))
            if count > completions:
                causes.append((f"{where}.succeededCount", count, f"must be less than or equal to {completions} "
                                                                 "(the number of specified completions)"))
            if indexes is not None and count > total:
                causes.append((f"{where}.succeededCount", count, f"must be less than or equal to {total} "
                                                                 "(the number of indexes in the specified "
                                                                 "succeededIndexes field)"))
    return causes
