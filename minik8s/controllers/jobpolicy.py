"""The Job controller's policies, as pure functions of a Job's spec and its pods.

Kubernetes' ``pkg/controller/job`` (``pod_failure_policy.go``, ``success_policy.go``,
``indexed_job_utils.go``, ``backoff_utils.go``):

* **podFailurePolicy**: a Failed pod is matched against the rules in order; the first that
  matches decides.  ``onExitCodes`` matches a terminated container (regular containers first,
  then init containers; ``containerName`` narrows it) whose non-zero exit code is ``In`` (or
  ``NotIn``) ``values``; ``onPodConditions`` matches a pod condition of that ``type`` and
  ``status``.  Actions: ``FailJob`` (the Job fails, reason ``PodFailurePolicy``, with the rule's
  message), ``Ignore`` (the failure is not counted against ``backoffLimit``), ``Count`` (counted,
  the default), ``FailIndex`` (the pod's index fails at once; needs ``backoffLimitPerIndex``).
* **backoffLimitPerIndex** (Indexed Jobs): each pod carries the failures of its index before it in
  the ``batch.kubernetes.io/job-index-failure-count`` annotation (ignored failures in
  ``batch.kubernetes.io/job-index-ignored-failure-count``); an index whose counted failure comes
  with ``backoffLimitPerIndex`` earlier failures is failed and gets no more pods.  Each index waits
  its own back-off (10 s doubled per failure of the index, at most 6 minutes).
* **The decision** (``finish_decision``): whether a sync fails or completes the Job, and why.
* **successPolicy** (Indexed Jobs): the first rule whose ``succeededIndexes`` all succeeded (or, with
  ``succeededCount``, at least that many of them; or, with only ``succeededCount``, that many
  indexes in all) makes the Job succeed (``Matched rules at index N``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from typing import Any

from minik8s.api.base import Obj
from minik8s.api.batch import COMPLETION_INDEX_ANNOTATION, JobView
from minik8s.api.jobindexes import parse_indexes
from minik8s.controllers.ownerrefs import meta_of

INDEX_FAILURE_COUNT_ANNOTATION = "batch.kubernetes.io/job-index-failure-count"
INDEX_IGNORED_FAILURE_COUNT_ANNOTATION = "batch.kubernetes.io/job-index-ignored-failure-count"
INT32_MAX = 2**31 - 1

FAIL_JOB, IGNORE, COUNT, FAIL_INDEX = "FailJob", "Ignore", "Count", "FailIndex"


def pod_index(pod: Obj) -> int | None:
    """An Indexed Job pod's completion index (annotation), or None."""
    value = (meta_of(pod).get("annotations") or {}).get(COMPLETION_INDEX_ANNOTATION)
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


# ------------------------------------------------------------------ podFailurePolicy
def _exit_code_matches(code: int, requirement: Obj) -> bool:
    values = requirement.get("values") or []
    operator = requirement.get("operator")
    if operator == "In":
        return code in values
    if operator == "NotIn":
        return code not in values
    return False


def _matching_container(pod: Obj, requirement: Obj) -> tuple[str, int] | None:
    """The first terminated container (then init container) whose non-zero exit code matches:
    ``(name, exit code)``."""
    status = pod.get("status") or {}
    name = requirement.get("containerName")
    for kind in ("containerStatuses", "initContainerStatuses"):
        for cs in status.get(kind) or []:
            terminated = (cs.get("state") or {}).get("terminated")
            if not terminated or (name is not None and cs.get("name") != name):
                continue
            code = int(terminated.get("exitCode") or 0)
            if code != 0 and _exit_code_matches(code, requirement):
                return str(cs.get("name")), code
    return None


def _matching_condition(pod: Obj, patterns: list[Obj]) -> str | None:
    for c in (pod.get("status") or {}).get("conditions") or []:
        for pattern in patterns:
            if c.get("type") == pattern.get("type") and c.get("status") == pattern.get("status", "True"):
                return str(c.get("type"))
    return None


def match_pod_failure_policy(policy: Obj | None, pod: Obj) -> tuple[str | None, bool, str | None]:
    """Match a failed pod against ``spec.podFailurePolicy`` (``matchPodFailurePolicy``).

    Returns ``(FailJob message or None, whether the failure counts, the matched action or None)``;
    without a policy or a matching rule: ``(None, True, None)``.
    """
    if not policy:
        return None, True, None
    meta = meta_of(pod)
    where = f"{meta.get('namespace')}/{meta.get('name')}"
    for index, rule in enumerate(policy.get("rules") or []):
        action = rule.get("action")
        message: str | None = None
        if rule.get("onExitCodes") is not None:
            matched = _matching_container(pod, rule["onExitCodes"])
            if matched is None:
                continue
            message = (f"Container {matched[0]} for pod {where} failed with exit code {matched[1]} "
                       f"matching {action} rule at index {index}")
        elif rule.get("onPodConditions") is not None:
            condition = _matching_condition(pod, rule["onPodConditions"])
            if condition is None:
                continue
            message = f"Pod {where} has condition {condition} matching {action} rule at index {index}"
        else:
            continue
        if action == IGNORE:
            return None, False, IGNORE
        if action == FAIL_JOB:
            return message, True, FAIL_JOB
        if action in (COUNT, FAIL_INDEX):
            return None, True, action
    return None, True, None


def fail_job_message(policy: Obj | None, failed_pods: Iterable[Obj]) -> str | None:
    """The message of the first failed pod that matches a ``FailJob`` rule (``getFailJobMessage``)."""
    if not policy:
        return None
    for pod in failed_pods:
        message, _, _ = match_pod_failure_policy(policy, pod)
        if message is not None:
            return message
    return None


def counts(policy: Obj | None, pod: Obj) -> bool:
    """Whether a failed pod counts against the back-off limits (not matched by an ``Ignore`` rule)."""
    return match_pod_failure_policy(policy, pod)[1]


# ------------------------------------------------------------------ backoffLimitPerIndex
def _annotation_count(pod: Obj, key: str) -> int:
    """An int32 annotation, 0 when absent, unparsable, negative or too large (as Kubernetes)."""
    value = (meta_of(pod).get("annotations") or {}).get(key)
    try:
        number = int(value) if value is not None else 0
    except ValueError:
        return 0
    return number if 0 <= number <= INT32_MAX else 0


def index_failure_count(pod: Obj) -> int:
    """The counted failures of the pod's index before this pod."""
    return _annotation_count(pod, INDEX_FAILURE_COUNT_ANNOTATION)


def index_absolute_failure_count(pod: Obj) -> int:
    """The counted and the ignored failures of the pod's index before this pod."""
    return index_failure_count(pod) + _annotation_count(pod, INDEX_IGNORED_FAILURE_COUNT_ANNOTATION)


def is_index_failed(policy: Obj | None, backoff_limit_per_index: int, pod: Obj) -> bool:
    """Whether this failed pod fails its index (``isIndexFailed``): a ``FailIndex`` rule matched, or
    a counted failure after ``backoff_limit_per_index`` earlier ones."""
    _, counted, action = match_pod_failure_policy(policy, pod)
    if action == FAIL_INDEX:
        return True
    return counted and index_failure_count(pod) >= backoff_limit_per_index


def next_failure_counts(policy: Obj | None, replaced: Obj | None) -> tuple[int, int]:
    """``(failure count, ignored failure count)`` of the pod that replaces ``replaced``, the last
    failed pod of its index (``getNewIndexFailureCounts``); ``(0, 0)`` for an index's first pod."""
    if replaced is None:
        return 0, 0
    failures = index_failure_count(replaced)
    ignored = _annotation_count(replaced, INDEX_IGNORED_FAILURE_COUNT_ANNOTATION)
    if counts(policy, replaced):
        failures += 1
    else:
        ignored += 1
    return failures, ignored


def last_failed_per_index(failed_pods: Iterable[tuple[int, Obj]],
                          finish_time: Callable[[Obj], dt.datetime | None]) -> dict[int, Obj]:
    """Each index's last failed pod, from ``(index, pod)`` pairs: the one with the most failures
    before it, the latest to finish among equals (what a replacement pod continues from)."""
    last: dict[int, Obj] = {}
    floor = dt.datetime.min.replace(tzinfo=dt.UTC)
    for index, pod in failed_pods:
        seen = last.get(index)
        if seen is None or (index_absolute_failure_count(seen), finish_time(seen) or floor) <= \
                (index_absolute_failure_count(pod), finish_time(pod) or floor):
            last[index] = pod
    return last


# ------------------------------------------------------------------ successPolicy
def _matches_indexes(required: set[int], succeeded: set[int], succeeded_count: Any) -> bool:
    done = len(required & succeeded)
    return done == len(required) or (succeeded_count is not None and done >= int(succeeded_count))


def match_success_policy(policy: Obj | None, completions: int, succeeded: set[int]) -> str | None:
    """The ``SuccessCriteriaMet`` message (``Matched rules at index N``) of the first rule of
    ``spec.successPolicy`` the succeeded indexes satisfy, or None (``matchSuccessPolicy``)."""
    if not policy or not succeeded:
        return None
    for index, rule in enumerate(policy.get("rules") or []):
        count = rule.get("succeededCount")
        if rule.get("succeededIndexes") is not None:
            required = parse_indexes(rule["succeededIndexes"], completions)
            if required and _matches_indexes(required, succeeded, count):
                return f"Matched rules at index {index}"
        elif count is not None and len(succeeded) >= int(count):
            return f"Matched rules at index {index}"
    return None


# ------------------------------------------------------------------ the decision
def failed_index_set(view: JobView, status: Obj, failed_pods: list[Obj]) -> set[int]:
    """An Indexed Job's failed indexes (``backoffLimitPerIndex``): those already in
    ``status.failedIndexes`` and those a failed pod fails (``calculateFailedIndexes``)."""
    completions = view.completions or 0
    found = parse_indexes(status.get("failedIndexes"), completions)
    for pod in failed_pods:
        index = pod_index(pod)
        if index is not None and 0 <= index < completions and \
                is_index_failed(view.pod_failure_policy, view.backoff_limit_per_index or 0, pod):
            found.add(index)
    return found


def finish_decision(conditions: list[Obj], view: JobView, failed: int, failed_pods: list[Obj], completed: set[int],
                    failed_indexes: set[int] | None, start: dt.datetime | None, now: dt.datetime
                    ) -> tuple[tuple[str, str] | None, tuple[str, str] | None]:
    """Whether the Job fails or succeeds now, as ``(failure, success)`` ``(reason, message)`` pairs
    (at most one set), in Kubernetes' order: a ``SuccessCriteriaMet`` or ``FailureTarget`` already
    among the Job's ``conditions``, a ``FailJob`` rule, ``backoffLimit`` (``failed``: the counted
    failures), ``activeDeadlineSeconds`` (from ``start``), the failed indexes,
    the success policy.  Reaching ``completions`` is the caller's last check."""
    for type_, is_success in (("SuccessCriteriaMet", True), ("FailureTarget", False)):
        written = next((c for c in conditions if c.get("type") == type_ and c.get("status") == "True"), None)
        if written is not None:
            pair = (str(written.get("reason") or ""), str(written.get("message") or ""))
            return (None, pair) if is_success else (pair, None)
    message = fail_job_message(view.pod_failure_policy, failed_pods)
    if message is not None:
        return ("PodFailurePolicy", message), None
    deadline = view.active_deadline_seconds
    if failed > view.backoff_limit:
        return ("BackoffLimitExceeded", "Job has reached the specified backoff limit"), None
    if deadline is not None and start is not None and not view.suspend and (now - start).total_seconds() >= deadline:
        return ("DeadlineExceeded", "Job was active longer than specified deadline"), None
    completions = view.completions
    if not view.indexed or completions is None:
        return None, None
    if failed_indexes is not None:
        if view.max_failed_indexes is not None and len(failed_indexes) > view.max_failed_indexes:
            return ("MaxFailedIndexesExceeded", "Job has exceeded the specified maximal number of failed indexes"), None
        if failed_indexes and len(failed_indexes) + len(completed) >= completions:
            return ("FailedIndexes", "Job has failed indexes"), None
    matched = match_success_policy(view.success_policy, completions, completed)
    return (None, ("SuccessPolicy", matched)) if matched is not None else (None, None)
