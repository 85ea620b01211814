"""batch/v1 without a server: cron parsing and schedule times, Job/CronJob defaults and validation,
table columns, and the Job controller's pure helpers."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from minik8s.api import columns, cron
from minik8s.apiserver.strategies.job import CronJobStrategy, JobStrategy
from minik8s.controllers import job as jobctl
from minik8s.controllers.cronjob import job_name, schedule_to_run

UTC = dt.UTC


def at(*args: int) -> dt.datetime:
    return dt.datetime(*args, tzinfo=UTC)


# ------------------------------------------------------------------ cron
@pytest.mark.parametrize(("spec", "after", "expected"), [
    ("*/1 * * * *", at(2026, 1, 1, 10, 0, 30), at(2026, 1, 1, 10, 1)),
    ("*/15 * * * *", at(2026, 1, 1, 10, 0), at(2026, 1, 1, 10, 15)),
    ("0 9-17 * * MON-FRI", at(2026, 1, 2, 18, 0), at(2026, 1, 5, 9, 0)),  # Fri evening → Mon 9:00
    ("30 2 1 * *", at(2026, 1, 15), at(2026, 2, 1, 2, 30)),
    ("0 0 29 2 *", at(2026, 3, 1), at(2028, 2, 29)),
    ("@hourly", at(2026, 1, 1, 10, 5), at(2026, 1, 1, 11, 0)),
    ("@daily", at(2026, 1, 1, 10, 5), at(2026, 1, 2)),
    ("@midnight", at(2026, 1, 1, 10, 5), at(2026, 1, 2)),
    ("@weekly", at(2026, 1, 1), at(2026, 1, 4)),  # a Sunday
    ("@monthly", at(2026, 1, 1), at(2026, 2, 1)),
    ("@yearly", at(2026, 1, 1), at(2027, 1, 1)),
    ("0 0 1 jan,jul ?", at(2026, 2, 1), at(2026, 7, 1)),
    ("0 12 13 * 5", at(2026, 1, 1), at(2026, 1, 2, 12)),  # day 13 OR Friday (both restricted)
    ("0 12 */10 * *", at(2026, 1, 1, 13), at(2026, 1, 11, 12)),
])
def test_next_schedule_times(spec: str, after: dt.datetime, expected: dt.datetime) -> None:
    assert cron.parse(spec).next(after) == expected


def test_day_fields_with_a_star_must_both_match() -> None:
    s = cron.parse("0 0 * * 1")  # Mondays only
    assert s.next(at(2026, 1, 1)) == at(2026, 1, 5)
    s = cron.parse("0 0 1 * *")
    assert s.next(at(2026, 1, 1)) == at(2026, 2, 1)


def test_time_zones() -> None:
    s = cron.parse("0 9 * * *")
    tokyo = cron.zone("Asia/Tokyo")  # UTC+9, no daylight saving time
    assert s.next(at(2026, 6, 1, 0, 0), tokyo) == at(2026, 6, 2, 0, 0)
    assert s.next(at(2026, 5, 31, 23, 0), tokyo) == at(2026, 6, 1, 0, 0)
    kolkata = cron.zone("Asia/Kolkata")  # UTC+5:30
    assert s.next(at(2026, 1, 1), kolkata) == at(2026, 1, 1, 3, 30)
    assert s.previous(at(2026, 1, 1, 3, 29), kolkata) == at(2025, 12, 31, 3, 30)
    ny = cron.zone("America/New_York")
    assert s.next(at(2026, 1, 1), ny) == at(2026, 1, 1, 14)  # EST
    assert s.next(at(2026, 7, 1), ny) == at(2026, 7, 1, 13)  # EDT


def test_daylight_saving_gaps_and_repeats() -> None:
    ny = cron.zone("America/New_York")
    skipped = cron.parse("30 2 * * *")  # 2026-03-08 02:30 does not exist in New York
    assert skipped.next(at(2026, 3, 8), ny) == at(2026, 3, 9, 6, 30)
    repeated = cron.parse("30 1 * * *")  # 2026-11-01 01:30 happens twice: runs once
    first = repeated.next(at(2026, 11, 1), ny)
    assert first == at(2026, 11, 1, 5, 30)
    assert repeated.next(first, ny) == at(2026, 11, 2, 6, 30)


def test_previous() -> None:
    s = cron.parse("*/5 * * * *")
    assert s.previous(at(2026, 1, 1, 10, 7)) == at(2026, 1, 1, 10, 5)
    assert s.previous(at(2026, 1, 1, 10, 5)) == at(2026, 1, 1, 10, 5)


@pytest.mark.parametrize(("spec", "fragment"), [
    ("", "empty"), ("* * * *", "exactly 5 fields"), ("* * * * * *", "exactly 5 fields"),
    ("60 * * * *", "out of range"), ("* 24 * * *", "out of range"), ("* * 0 * *", "out of range"),
    ("* * * 13 *", "out of range"), ("* * * * 7", "out of range"), ("*/0 * * * *", "step"),
    ("5-1 * * * *", "beyond end"), ("x * * * *", "failed to parse"), ("@every 5m", "@every"),
    ("@often", "unrecognized descriptor"), ("TZ=UTC * * * * *", "timeZone"), ("1,,2 * * * *", "empty"),
])
def test_invalid_schedules(spec: str, fragment: str) -> None:
    with pytest.raises(cron.CronError, match=fragment):
        cron.parse(spec)


def test_zones() -> None:
    assert cron.zone(None) is UTC and cron.zone("") is UTC
    with pytest.raises(cron.CronError):
        cron.zone("Mars/Olympus")
    with pytest.raises(cron.CronError):
        cron.zone("../etc/passwd")


def test_schedule_to_run_picks_the_most_recent_missed_time() -> None:
    s = cron.parse("*/1 * * * *")
    created = at(2026, 1, 1, 10, 0, 10)
    assert schedule_to_run(s, UTC, created, at(2026, 1, 1, 10, 0, 50)) == (None, 0)
    assert schedule_to_run(s, UTC, created, at(2026, 1, 1, 10, 3, 5)) == (at(2026, 1, 1, 10, 3), 3)
    latest, count = schedule_to_run(s, UTC, created, at(2026, 1, 2))
    assert latest == at(2026, 1, 2) and count == 101  # capped: too many missed
    assert job_name("tick", at(2026, 1, 1, 10, 3)) == f"tick-{int(at(2026, 1, 1, 10, 3).timestamp()) // 60}"


# ------------------------------------------------------------------ strategies
def job(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pi", "uid": "u-1"},
            "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
                {"name": "c", "image": "busybox"}]}}, **spec}}


def created(obj: dict[str, Any]) -> tuple[dict[str, Any], list[Any]]:
    s = JobStrategy()
    s.prepare_for_create(obj)
    s.default(obj)
    return obj, s.validate(obj, None)


def test_job_defaults_and_generated_selector() -> None:
    obj, causes = created(job())
    assert causes == []
    spec = obj["spec"]
    assert (spec["completions"], spec["parallelism"], spec["backoffLimit"]) == (1, 1, 6)
    assert spec["completionMode"] == "NonIndexed" and spec["suspend"] is False
    assert spec["podReplacementPolicy"] == "TerminatingOrFailed"
    assert spec["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": "u-1"}}
    assert spec["template"]["metadata"]["labels"] == {
        "batch.kubernetes.io/controller-uid": "u-1", "controller-uid": "u-1",
        "batch.kubernetes.io/job-name": "pi", "job-name": "pi"}
    obj, _ = created(job(parallelism=3))
    assert obj["spec"]["parallelism"] == 3 and "completions" not in obj["spec"]  # a work queue
    obj, _ = created(job(completions=5))
    assert (obj["spec"]["completions"], obj["spec"]["parallelism"]) == (5, 1)


def test_manual_selector() -> None:
    body = job(manualSelector=True, selector={"matchLabels": {"app": "x"}})
    body["spec"]["template"]["metadata"] = {"labels": {"app": "x"}}
    obj, causes = created(body)
    assert causes == [] and obj["spec"]["template"]["metadata"]["labels"] == {"app": "x"}
    _, causes = created(job(selector={"matchLabels": {"app": "x"}}))
    assert any("not auto-generated" in c[2] for c in causes)
    body = job(manualSelector=True, selector={"matchLabels": {"app": "y"}})
    _, causes = created(body)
    assert any("does not match" in c[2] for c in causes)


@pytest.mark.parametrize(("spec", "template_patch", "field"), [
    ({}, {"restartPolicy": "Always"}, "spec.template.spec.restartPolicy"),
    ({"parallelism": -1}, {}, "spec.parallelism"),
    ({"completions": -1}, {}, "spec.completions"),
    ({"backoffLimit": -1}, {}, "spec.backoffLimit"),
    ({"activeDeadlineSeconds": 0}, {}, "spec.activeDeadlineSeconds"),
    ({"ttlSecondsAfterFinished": -1}, {}, "spec.ttlSecondsAfterFinished"),
    ({"completionMode": "Sometimes"}, {}, "spec.completionMode"),
    ({"completionMode": "Indexed", "completions": None, "parallelism": 2}, {}, "spec.completions"),
])
def test_job_validation(spec: dict[str, Any], template_patch: dict[str, Any], field: str) -> None:
    body = job(**spec)
    body["spec"]["template"]["spec"].update(template_patch)
    if spec.get("completions", 0) is None:
        del body["spec"]["completions"]
    _, causes = created(body)
    assert field in [c[0] for c in causes], causes


def test_job_update_rules() -> None:
    old, _ = created(job())
    s = JobStrategy()
    new = {**old, "spec": {**old["spec"], "parallelism": 4, "backoffLimit": 2, "suspend": True}}
    assert s.validate(new, old) == []
    changed = {**old, "spec": {**old["spec"], "completions": 3}}
    assert ("spec.completions", 3, "field is immutable") in s.validate(changed, old)
    template = {**old["spec"]["template"], "spec": {**old["spec"]["template"]["spec"], "nodeSelector": {"a": "b"}}}
    changed = {**old, "spec": {**old["spec"], "template": template}}
    assert ("spec.template", None, "field is immutable") in s.validate(changed, old)
    suspended = {**old, "spec": {**old["spec"], "suspend": True}, "status": {}}
    assert s.validate({**changed, "spec": {**changed["spec"], "suspend": True}}, suspended) == []


def cronjob(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "tick", "uid": "u-2"},
            "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": {"spec": {
                "restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "busybox"}]}}}}, **spec}}


def test_cronjob_defaults_and_validation() -> None:
    s = CronJobStrategy()
    obj = cronjob()
    s.prepare_for_create(obj)
    s.default(obj)
    assert s.validate(obj, None) == []
    spec = obj["spec"]
    assert (spec["concurrencyPolicy"], spec["suspend"], spec["successfulJobsHistoryLimit"],
            spec["failedJobsHistoryLimit"]) == ("Allow", False, 3, 1)
    assert "completions" not in spec["jobTemplate"]["spec"]  # the Job gets its defaults when created
    for bad, field in (({"schedule": "@every 1m"}, "spec.schedule"), ({"timeZone": "Nowhere/Land"}, "spec.timeZone"),
                       ({"concurrencyPolicy": "Never"}, "spec.concurrencyPolicy"),
                       ({"startingDeadlineSeconds": -1}, "spec.startingDeadlineSeconds"),
                       ({"successfulJobsHistoryLimit": -1}, "spec.successfulJobsHistoryLimit")):
        obj = cronjob(**bad)
        s.default(obj)
        assert field in [c[0] for c in s.validate(obj, None)], bad
    obj = cronjob()
    obj["metadata"]["name"] = "x" * 53
    s.default(obj)
    assert any("52 characters" in c[2] for c in s.validate(obj, None))
    obj = cronjob()
    obj["spec"]["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"] = "Always"
    s.default(obj)
    assert "spec.jobTemplate.spec.template.spec.restartPolicy" in [c[0] for c in s.validate(obj, None)]


# ------------------------------------------------------------------ columns
def test_job_columns() -> None:
    now = at(2026, 1, 1, 10, 5)
    obj = {"metadata": {"creationTimestamp": "2026-01-01T10:00:00Z"},
           "spec": {"completions": 3, "parallelism": 2, "selector": {"matchLabels": {"a": "b"}},
                    "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}},
           "status": {"succeeded": 1, "startTime": "2026-01-01T10:00:00Z"}}
    cells = columns.cells(columns.columns_for("Job", wide=True), obj, now)
    assert cells == ["Running", "1/3", "5m", "5m", "c", "busybox", "a=b"]
    obj["status"].update(completionTime="2026-01-01T10:00:42Z", conditions=[{"type": "Complete", "status": "True"}])
    assert columns.cells(columns.columns_for("Job"), obj, now)[:3] == ["Complete", "1/3", "42s"]
    assert columns.job_status({"status": {"conditions": [{"type": "Failed", "status": "True"}]}}) == "Failed"
    assert columns.job_status({"status": {"conditions": [{"type": "Suspended", "status": "True"}]}}) == "Suspended"
    assert columns.job_completions({"spec": {"parallelism": 3}, "status": {}}, now) == "0/1 of 3"
    assert columns.job_duration({"status": {}}, now) == ""


def test_cronjob_columns() -> None:
    now = at(2026, 1, 1, 10, 5)
    obj = {"metadata": {"creationTimestamp": "2026-01-01T09:00:00Z"},
           "spec": {"schedule": "*/1 * * * *", "suspend": False, "jobTemplate": {"spec": {"template": {"spec": {
               "containers": [{"name": "c", "image": "busybox"}]}}}}},
           "status": {"active": [{"name": "x"}], "lastScheduleTime": "2026-01-01T10:04:00Z"}}
    assert columns.cells(columns.columns_for("CronJob", wide=True), obj, now) == [
        "*/1 * * * *", "<none>", "False", 1, "60s", "65m", "c", "busybox", "<none>"]


# ------------------------------------------------------------------ Job controller helpers
def test_backoff_delay() -> None:
    assert [jobctl.backoff_delay(n) for n in range(7)] == [0, 10, 20, 40, 80, 160, 320]
    assert jobctl.backoff_delay(7) == 360 and jobctl.backoff_delay(30) == 360


def test_format_indexes() -> None:
    assert jobctl.format_indexes({0, 1, 2, 4, 6, 7}) == "0-2,4,6,7"  # a pair is two indexes, as Kubernetes
    assert jobctl.format_indexes(set()) == ""


def pod(phase: str, finished: str | None = None, restarts: int = 0) -> dict[str, Any]:
    state = {"terminated": {"finishedAt": finished}} if finished else {"running": {}}
    return {"metadata": {}, "status": {"phase": phase, "containerStatuses": [
        {"restartCount": restarts, "state": state}]}}


def test_failure_counting() -> None:
    never = {"spec": {"template": {"spec": {"restartPolicy": "Never"}}}}
    on_failure = {"spec": {"template": {"spec": {"restartPolicy": "OnFailure"}}}}
    pods = [pod("Failed", "2026-01-01T10:00:00Z"), pod("Succeeded", "2026-01-01T10:01:00Z"),
            pod("Failed", "2026-01-01T10:02:00Z"), pod("Running", restarts=2)]
    assert jobctl.count_failures(never, pods) == 2
    assert jobctl.count_failures(on_failure, pods) == 4
    assert jobctl.failures_since_success(pods) == (1, at(2026, 1, 1, 10, 2))


def test_set_condition_keeps_transition_time() -> None:
    t0, t1 = at(2026, 1, 1), at(2026, 1, 2)
    conds = jobctl.set_condition([], "Suspended", "True", "JobSuspended", "Job suspended", t0)
    again = jobctl.set_condition(conds, "Suspended", "True", "JobSuspended", "Job suspended", t1)
    assert again[0]["lastTransitionTime"] == "2026-01-01T00:00:00Z"
    assert again[0]["lastProbeTime"] == "2026-01-02T00:00:00Z"
    flipped = jobctl.set_condition(again, "Suspended", "False", "JobResumed", "Job resumed", t1)
    assert flipped[0]["lastTransitionTime"] == "2026-01-02T00:00:00Z" and flipped[0]["reason"] == "JobResumed"
