"""Jobs' failure and success policies without a server: index lists, rule matching, the per-index
failure counts, the controller's finish decision, and the apiserver's validation messages."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from minik8s.api.batch import JobView
from minik8s.api.jobindexes import format_indexes, parse_indexes, validate_indexes_format
from minik8s.apiserver.strategies.job import CronJobStrategy, JobStrategy
from minik8s.controllers import job as jobctl
from minik8s.controllers import jobpolicy

NOW = dt.datetime(2026, 1, 1, 12, tzinfo=dt.UTC)


# ------------------------------------------------------------------ index lists
def test_format_and_parse_indexes() -> None:
    assert format_indexes({1, 3, 4, 5}) == "1,3-5"
    assert format_indexes({0, 1}) == "0,1" and format_indexes({7}) == "7" and format_indexes([]) == ""
    assert parse_indexes("1,3-5", 10) == {1, 3, 4, 5}
    assert parse_indexes("0,x,2-9", 5) == {0, 2, 3, 4}  # a bad fragment skipped, the end clipped
    assert parse_indexes("1,6,2", 5) == {1}  # read up to the first index past completions
    assert parse_indexes("", 5) == set() and parse_indexes(None, 5) == set()


@pytest.mark.parametrize(("text", "error"), [
    ("1-2-3", "the fragment \"1-2-3\" violates the requirement that an index interval can have at most two "
              "parts separated by '-'"),
    ("a", 'cannot convert string to integer for index: "a"'),
    ("10", 'too large index: "10"'),
    ("3-1", "non-increasing order, previous: 3, current: 1"),
    ("2,1", "non-increasing order, previous: 2, current: 1"),
])
def test_index_list_format_errors(text: str, error: str) -> None:
    with pytest.raises(ValueError, match="^" + error.replace("(", r"\(").replace(")", r"\)") + "$"):
        validate_indexes_format(text, 10)
    assert validate_indexes_format("0,2-4,9", 10) == 5


# ------------------------------------------------------------------ podFailurePolicy
def failed_pod(code: int = 1, name: str = "p-1", container: str = "main", conditions: list[Any] | None = None,
               init_code: int | None = None, annotations: dict[str, str] | None = None,
               finished: str = "2026-01-01T11:00:00Z") -> dict[str, Any]:
    status: dict[str, Any] = {"phase": "Failed", "conditions": conditions or [], "containerStatuses": [
        {"name": container, "state": {"terminated": {"exitCode": code, "finishedAt": finished}}}]}
    if init_code is not None:
        status["initContainerStatuses"] = [{"name": "setup", "state": {"terminated": {"exitCode": init_code}}}]
    return {"metadata": {"name": name, "namespace": "ns", "annotations": annotations or {}}, "status": status}


def rule(action: str, **match: Any) -> dict[str, Any]:
    return {"action": action, **match}


def test_exit_code_rules() -> None:
    policy = {"rules": [rule("FailJob", onExitCodes={"containerName": "main", "operator": "In", "values": [42]}),
                        rule("Ignore", onExitCodes={"operator": "NotIn", "values": [1, 2]})]}
    assert jobpolicy.match_pod_failure_policy(policy, failed_pod(42)) == (
        "Container main for pod ns/p-1 failed with exit code 42 matching FailJob rule at index 0", True, "FailJob")
    assert jobpolicy.match_pod_failure_policy(policy, failed_pod(42, container="other")) == (None, False, "Ignore")
    assert jobpolicy.match_pod_failure_policy(policy, failed_pod(1)) == (None, True, None)
    assert jobpolicy.match_pod_failure_policy(None, failed_pod(42)) == (None, True, None)
    # exit code 0 never matches; an init container's code is looked at after the containers'
    assert jobpolicy.match_pod_failure_policy(policy, failed_pod(0)) == (None, True, None)
    init_rule = {"rules": [rule("Count", onExitCodes={"operator": "In", "values": [3]})]}
    assert jobpolicy.match_pod_failure_policy(init_rule, failed_pod(1, init_code=3)) == (None, True, "Count")


def test_pod_condition_rules() -> None:
    disrupted = [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]
    policy = {"rules": [rule("Ignore", onPodConditions=[{"type": "DisruptionTarget", "status": "True"}])]}
    assert jobpolicy.match_pod_failure_policy(policy, failed_pod(137, conditions=disrupted)) == (None, False, "Ignore")
    assert not jobpolicy.counts(policy, failed_pod(137, conditions=disrupted))
    fail = {"rules": [rule("FailJob", onPodConditions=[{"type": "DisruptionTarget", "status": "True"}])]}
    assert jobpolicy.fail_job_message(fail, [failed_pod(1), failed_pod(137, "p-2", conditions=disrupted)]) == \
        "Pod ns/p-2 has condition DisruptionTarget matching FailJob rule at index 0"
    false_only = {"rules": [rule("FailJob", onPodConditions=[{"type": "DisruptionTarget", "status": "False"}])]}
    assert jobpolicy.fail_job_message(false_only, [failed_pod(137, conditions=disrupted)]) is None


# ------------------------------------------------------------------ backoffLimitPerIndex
def test_index_failures() -> None:
    fail_index = {"rules": [rule("FailIndex", onExitCodes={"operator": "In", "values": [9]}),
                            rule("Ignore", onExitCodes={"operator": "In", "values": [5]})]}
    counted = {jobpolicy.INDEX_FAILURE_COUNT_ANNOTATION: "1"}
    assert not jobpolicy.is_index_failed(None, 2, failed_pod(annotations=counted))  # 2nd failure, limit 2
    assert jobpolicy.is_index_failed(None, 1, failed_pod(annotations=counted))
    assert jobpolicy.is_index_failed(fail_index, 5, failed_pod(9))
    assert not jobpolicy.is_index_failed(fail_index, 0, failed_pod(5))  # ignored failures never fail it
    assert jobpolicy.next_failure_counts(fail_index, None) == (0, 0)
    assert jobpolicy.next_failure_counts(fail_index, failed_pod(1, annotations=counted)) == (2, 0)
    assert jobpolicy.next_failure_counts(fail_index, failed_pod(5, annotations=counted)) == (1, 1)
    bad = {jobpolicy.INDEX_FAILURE_COUNT_ANNOTATION: "-3"}
    assert jobpolicy.index_failure_count(failed_pod(annotations=bad)) == 0
    first, second = failed_pod(name="a"), failed_pod(name="b", annotations=counted, finished="2026-01-01T10:00:00Z")
    last = jobpolicy.last_failed_per_index([(0, first), (0, second), (1, first)], jobctl.pod_finish_time)
    assert last[0]["metadata"]["name"] == "b" and last[1]["metadata"]["name"] == "a"


# ------------------------------------------------------------------ successPolicy
def test_success_policy_rules() -> None:
    policy = {"rules": [{"succeededIndexes": "0,2-3"}, {"succeededCount": 3}]}
    assert jobpolicy.match_success_policy(policy, 5, {0, 2}) is None
    assert jobpolicy.match_success_policy(policy, 5, {0, 2, 3}) == "Matched rules at index 0"
    assert jobpolicy.match_success_policy(policy, 5, {1, 3, 4}) == "Matched rules at index 1"
    both = {"rules": [{"succeededIndexes": "1-4", "succeededCount": 2}]}
    assert jobpolicy.match_success_policy(both, 5, {0, 4}) is None
    assert jobpolicy.match_success_policy(both, 5, {2, 4}) == "Matched rules at index 0"
    assert jobpolicy.match_success_policy(None, 5, {0, 1, 2}) is None


# ------------------------------------------------------------------ the controller's decision
def indexed(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "j", "namespace": "ns", "uid": "u"},
            "spec": {"completionMode": "Indexed", "completions": 4, "parallelism": 4,
                     "template": {"spec": {"restartPolicy": "Never"}}, **spec}, "status": {}}


def decide(job: dict[str, Any], failed_pods: list[Any], completed: set[int],
           failed_indexes: set[int] | None = None) -> tuple[Any, Any]:
    view = JobView.of(job)
    failed = jobctl.count_failures(view, failed_pods)
    conditions = job["status"].get("conditions") or []
    return jobpolicy.finish_decision(conditions, view, failed, failed_pods, completed, failed_indexes, NOW, NOW)


def test_finish_decision() -> None:
    per_index = indexed(backoffLimitPerIndex=0, maxFailedIndexes=1)
    assert JobView.of(per_index).backoff_limit == 2**31 - 1
    assert decide(per_index, [], {0, 1}, {2}) == (None, None)
    assert decide(per_index, [], {0}, {2, 3}) == (
        ("MaxFailedIndexesExceeded", "Job has exceeded the specified maximal number of failed indexes"), None)
    assert decide(indexed(backoffLimitPerIndex=0), [], {0, 1, 3}, {2}) == (
        ("FailedIndexes", "Job has failed indexes"), None)
    success = indexed(successPolicy={"rules": [{"succeededIndexes": "0"}]})
    assert decide(success, [], {0}) == (None, ("SuccessPolicy", "Matched rules at index 0"))
    fail_job = indexed(backoffLimit=0, podFailurePolicy={"rules": [
        rule("FailJob", onExitCodes={"operator": "In", "values": [42]})]})
    assert decide(fail_job, [failed_pod(42)], set())[0] == (
        "PodFailurePolicy", "Container main for pod ns/p-1 failed with exit code 42 matching FailJob rule at index 0")
    ignore = indexed(backoffLimit=0, podFailurePolicy={"rules": [
        rule("Ignore", onExitCodes={"operator": "In", "values": [7]})]})
    assert decide(ignore, [failed_pod(7)], set()) == (None, None)
    assert decide(ignore, [failed_pod(1)], set())[0] == (
        "BackoffLimitExceeded", "Job has reached the specified backoff limit")
    met = {"type": "SuccessCriteriaMet", "status": "True", "reason": "SuccessPolicy",
           "message": "Matched rules at index 0"}
    written = {**success, "status": {"conditions": [met]}}
    assert decide(written, [failed_pod(42)], set()) == (None, ("SuccessPolicy", "Matched rules at index 0"))


# ------------------------------------------------------------------ validation
def validated(**spec: Any) -> list[Any]:
    body = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pi", "uid": "u-1"},
            "spec": {"template": {"spec": {"restartPolicy": spec.pop("restartPolicy", "Never"), "containers": [
                {"name": "main", "image": "busybox"}]}}, **spec}}
    s = JobStrategy()
    s.prepare_for_create(body)
    s.default(body)
    return s.validate(body, None)


EXIT_42 = {"operator": "In", "values": [42]}


@pytest.mark.parametrize(("spec", "cause"), [
    ({"podFailurePolicy": {"rules": [rule("FailJob", onExitCodes=EXIT_42)]}, "restartPolicy": "OnFailure"},
     ("spec.template.spec.restartPolicy", "OnFailure", 'only "Never" is supported when podFailurePolicy is specified')),
    ({"podFailurePolicy": {"rules": [{"onExitCodes": EXIT_42}]}},
     ("spec.podFailurePolicy.rules[0].action", None,
      'Required value: valid values: ["Count" "FailIndex" "FailJob" "Ignore"]')),
    ({"podFailurePolicy": {"rules": [rule("Retry", onExitCodes=EXIT_42)]}},
     ("spec.podFailurePolicy.rules[0].action", None,
      'Unsupported value: "Retry": supported values: "Count", "FailIndex", "FailJob", "Ignore"')),
    ({"podFailurePolicy": {"rules": [rule("FailIndex", onExitCodes=EXIT_42)]}},
     ("spec.podFailurePolicy.rules[0].action", "FailIndex", "requires the backoffLimitPerIndex to be set")),
    ({"podFailurePolicy": {"rules": [rule("Count")]}},
     ("spec.podFailurePolicy.rules[0]", None,
      "Invalid value: specifying one of OnExitCodes and OnPodConditions is required")),
    ({"podFailurePolicy": {"rules": [rule("Count", onExitCodes={"operator": "In", "values": [0, 3, 3, 1]})]}},
     ("spec.podFailurePolicy.rules[0].onExitCodes.values[0]", 0, "must not be 0 for the In operator")),
    ({"podFailurePolicy": {"rules": [rule("Count", onExitCodes={"operator": "In", "values": [3, 3]})]}},
     ("spec.podFailurePolicy.rules[0].onExitCodes.values[1]", None, "Duplicate value: 3")),
    ({"podFailurePolicy": {"rules": [rule("Count", onExitCodes={"operator": "NotIn", "values": [3, 1]})]}},
     ("spec.podFailurePolicy.rules[0].onExitCodes.values", [3, 1], "must be ordered")),
    ({"podFailurePolicy": {"rules": [rule("Count", onExitCodes={"operator": "In", "values": []})]}},
     ("spec.podFailurePolicy.rules[0].onExitCodes.values", [], "at least one value is required")),
    ({"podFailurePolicy": {"rules": [rule("Count", onExitCodes={**EXIT_42, "containerName": "side"})]}},
     ("spec.podFailurePolicy.rules[0].onExitCodes.containerName", "side",
      "must be one of the container or initContainer names in the pod template")),
    ({"podFailurePolicy": {"rules": [rule("Count", onPodConditions=[{"type": "DisruptionTarget",
                                                                     "status": "Maybe"}])]}},
     ("spec.podFailurePolicy.rules[0].onPodConditions[0].status", None,
      'Unsupported value: "Maybe": supported values: "False", "True", "Unknown"')),
    ({"podFailurePolicy": {"rules": [rule("Count", onExitCodes=EXIT_42)]},
      "podReplacementPolicy": "TerminatingOrFailed"},
     ("spec.podReplacementPolicy", None, 'Unsupported value: "TerminatingOrFailed": supported values: "Failed"')),
    ({"podFailurePolicy": {"rules": [rule("Count", onExitCodes=EXIT_42)] * 21}},
     ("spec.podFailurePolicy.rules", None, "Too many: 21: must have at most 20 items")),
    ({"completionMode": "Indexed", "completions": 200_000, "parallelism": 100_001, "backoffLimitPerIndex": 1},
     ("spec.parallelism", 100_001, "must be less than or equal to 100000 when completion mode is Indexed")),
    ({"completionMode": "Indexed", "completions": 200_000, "parallelism": 10, "backoffLimitPerIndex": 1},
     ("spec.maxFailedIndexes", None, "Required value: must be specified when completions is above 100000")),
    ({"completionMode": "Indexed", "completions": 200_000, "parallelism": 10_001, "backoffLimitPerIndex": 1,
      "maxFailedIndexes": 10},
     ("spec.parallelism", 10_001, "must be less than or equal to 10000 when completions are above 100000 and "
                                  "used with backoff limit per index")),
    ({"backoffLimitPerIndex": 1},
     ("spec.backoffLimitPerIndex", 1, "requires indexed completion mode")),
    ({"completionMode": "Indexed", "completions": 3, "maxFailedIndexes": 1},
     ("spec.backoffLimitPerIndex", None, "Required value: when maxFailedIndexes is specified")),
    ({"completionMode": "Indexed", "completions": 3, "backoffLimitPerIndex": 1, "maxFailedIndexes": 4},
     ("spec.maxFailedIndexes", 4, "must be less than or equal to completions")),
    ({"completionMode": "Indexed", "completions": 3, "backoffLimitPerIndex": -1},
     ("spec.backoffLimitPerIndex", -1, "must be greater than or equal to 0")),
    ({"successPolicy": {"rules": [{"succeededCount": 1}]}},
     ("spec.successPolicy", {"rules": [{"succeededCount": 1}]}, "requires indexed completion mode")),
    ({"completionMode": "Indexed", "completions": 3, "successPolicy": {"rules": []}},
     ("spec.successPolicy.rules", None,
      "Required value: at least one rules must be specified when the successPolicy is specified")),
    ({"completionMode": "Indexed", "completions": 3, "successPolicy": {"rules": [{}]}},
     ("spec.successPolicy.rules[0]", None,
      "Required value: at least one of succeededCount or succeededIndexes must be specified")),
    ({"completionMode": "Indexed", "completions": 3, "successPolicy": {"rules": [{"succeededIndexes": "0-5"}]}},
     ("spec.successPolicy.rules[0].succeededIndexes", "0-5", 'error parsing succeededIndexes: too large index: "5"')),
    ({"completionMode": "Indexed", "completions": 3, "successPolicy": {"rules": [{"succeededCount": 4}]}},
     ("spec.successPolicy.rules[0].succeededCount", 4,
      "must be less than or equal to 3 (the number of specified completions)")),
    ({"completionMode": "Indexed", "completions": 3,
      "successPolicy": {"rules": [{"succeededIndexes": "0", "succeededCount": 2}]}},
     ("spec.successPolicy.rules[0].succeededCount", 2,
      "must be less than or equal to 1 (the number of indexes in the specified succeededIndexes field)")),
])
def test_policy_validation(spec: dict[str, Any], cause: tuple[str, Any, str]) -> None:
    assert cause in validated(**spec)


def test_many_completions_with_a_per_index_limit() -> None:
    assert validated(completionMode="Indexed", completions=200_000, parallelism=100, backoffLimitPerIndex=1,
                     maxFailedIndexes=5) == []


def test_valid_policies_and_defaults() -> None:
    assert validated(completionMode="Indexed", completions=4, backoffLimitPerIndex=1, maxFailedIndexes=2,
                     podFailurePolicy={"rules": [rule("FailIndex", onExitCodes=EXIT_42),
                                                 rule("Ignore", onPodConditions=[{"type": "DisruptionTarget"}])]},
                     successPolicy={"rules": [{"succeededIndexes": "0,2-3", "succeededCount": 2}]}) == []
    s = JobStrategy()
    body: dict[str, Any] = {"metadata": {"name": "pi", "uid": "u"}, "spec": {
        "completionMode": "Indexed", "completions": 2, "backoffLimitPerIndex": 1,
        "podFailurePolicy": {"rules": [rule("Ignore", onPodConditions=[{"type": "DisruptionTarget"}])]},
        "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "x"}]}}}}
    s.default(body)
    assert body["spec"]["backoffLimit"] == 2**31 - 1 and body["spec"]["podReplacementPolicy"] == "Failed"
    assert body["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"] == [
        {"type": "DisruptionTarget", "status": "True"}]
    changed = {**body, "spec": {**body["spec"], "backoffLimitPerIndex": 2, "successPolicy": {"rules": [
        {"succeededCount": 1}]}}}
    causes = s.validate(changed, body)
    assert ("spec.backoffLimitPerIndex", 2, "field is immutable") in causes
    assert ("spec.successPolicy", {"rules": [{"succeededCount": 1}]}, "field is immutable") in causes


def test_cronjob_template_pod_conditions_default_to_true() -> None:
    cronjob: dict[str, Any] = {"metadata": {"name": "tick"}, "spec": {"schedule": "*/5 * * * *",
                                                                       "jobTemplate": {"spec": {
        "podFailurePolicy": {"rules": [rule("Ignore", onPodConditions=[{"type": "DisruptionTarget"}])]},
        "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "x"}]}}}}}}
    s = CronJobStrategy()
    s.default(cronjob)
    assert s.validate(cronjob, None) == []
    rules = cronjob["spec"]["jobTemplate"]["spec"]["podFailurePolicy"]["rules"]
    assert rules[0]["onPodConditions"] == [{"type": "DisruptionTarget", "status": "True"}]
