"""``batch/v1`` kinds: Job and CronJob (Kubernetes' ``k8s.io/api/batch/v1`` field names).

A Job runs pods from ``spec.template`` until ``spec.completions`` of them succeeded (or,
failing more than ``spec.backoffLimit`` times or running past ``spec.activeDeadlineSeconds``,
it fails); a CronJob creates Jobs from ``spec.jobTemplate`` at the times of its cron
``spec.schedule``.  Defaults and validation are the apiserver's (``strategies/job.py``), the
work the controllers' (``controllers/job.py``, ``controllers/cronjob.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from minik8s.api.core import PodTemplateSpec
from minik8s.api.meta import Condition, LabelSelector, MetaView, ObjectMeta, ObjectReference, TypedObject
from minik8s.api.model import Model

#: Kubernetes' defaults of ``spec.parallelism``, ``spec.backoffLimit`` (the int32 maximum when
#: ``spec.backoffLimitPerIndex`` is set) and of a CronJob's history limits.
DEFAULT_PARALLELISM = 1
DEFAULT_BACKOFF_LIMIT = 6
DEFAULT_BACKOFF_LIMIT_PER_INDEX_JOB = 2**31 - 1
DEFAULT_SUCCESSFUL_JOBS_HISTORY_LIMIT = 3
DEFAULT_FAILED_JOBS_HISTORY_LIMIT = 1

#: Label and annotation keys the Job controller and the apiserver use (Kubernetes' names).
CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"
LEGACY_CONTROLLER_UID_LABEL = "controller-uid"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
LEGACY_JOB_NAME_LABEL = "job-name"
COMPLETION_INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"
JOB_TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
CRONJOB_SCHEDULED_TIMESTAMP_ANNOTATION = "batch.kubernetes.io/cronjob-scheduled-timestamp"


class PodFailurePolicyOnExitCodesRequirement(Model):
    container_name: str | None = None
    operator: str
    values: list[int]


class PodFailurePolicyOnPodConditionsPattern(Model):
    type: str
    status: str | None = None


class PodFailurePolicyRule(Model):
    action: str
    on_exit_codes: PodFailurePolicyOnExitCodesRequirement | None = None
    on_pod_conditions: list[PodFailurePolicyOnPodConditionsPattern] | None = None


class PodFailurePolicy(Model):
    """How the Job controller treats failed pods (``controllers/jobpolicy.py``)."""

    rules: list[PodFailurePolicyRule]


class SuccessPolicyRule(Model):
    succeeded_indexes: str | None = None
    succeeded_count: int | None = None


class SuccessPolicy(Model):
    """When an Indexed Job succeeds before all its indexes did (``controllers/jobpolicy.py``)."""

    rules: list[SuccessPolicyRule]


class JobSpec(Model):
    """``batch/v1`` JobSpec: counts are int32, seconds int64."""

    parallelism: int | None = None
    completions: int | None = None
    active_deadline_seconds: int | None = None
    pod_failure_policy: PodFailurePolicy | None = None
    backoff_limit: int | None = None
    backoff_limit_per_index: int | None = None
    max_failed_indexes: int | None = None
    success_policy: SuccessPolicy | None = None
    selector: LabelSelector | None = None
    manual_selector: bool | None = None
    template: PodTemplateSpec
    ttl_seconds_after_finished: int | None = None
    completion_mode: str | None = None  # NonIndexed, Indexed
    suspend: bool | None = None
    pod_replacement_policy: str | None = None  # TerminatingOrFailed, Failed
    managed_by: str | None = None


class UncountedTerminatedPods(Model):
    succeeded: list[str] | None = None
    failed: list[str] | None = None


class JobStatus(Model):
    """``batch/v1`` JobStatus: conditions Suspended, FailureTarget, SuccessCriteriaMet, Complete, Failed."""

    conditions: list[Condition] | None = None
    start_time: str | None = None
    completion_time: str | None = None
    active: int | None = None
    succeeded: int | None = None
    failed: int | None = None
    terminating: int | None = None
    completed_indexes: str | None = None
    failed_indexes: str | None = None
    uncounted_terminated_pods: UncountedTerminatedPods | None = None
    ready: int | None = None


class Job(TypedObject):
    spec: JobSpec
    status: JobStatus | None = None


class JobTemplateSpec(Model):
    metadata: ObjectMeta | None = None
    spec: JobSpec


class CronJobSpec(Model):
    """``batch/v1`` CronJobSpec: ``schedule`` in cron syntax, optionally in ``timeZone`` (IANA)."""

    schedule: str
    time_zone: str | None = None
    starting_deadline_seconds: int | None = None
    concurrency_policy: str | None = None  # Allow, Forbid, Replace
    suspend: bool | None = None
    job_template: JobTemplateSpec
    successful_jobs_history_limit: int | None = None
    failed_jobs_history_limit: int | None = None


class CronJobStatus(Model):
    active: list[ObjectReference] | None = None
    last_schedule_time: str | None = None
    last_successful_time: str | None = None


class CronJob(TypedObject):
    spec: CronJobSpec
    status: CronJobStatus | None = None


# ---------------------------------------------------------------- typed views (read side)
def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)


@dataclass(frozen=True, slots=True)
class JobView:
    """What the Job controller reads of a wire-form Job, read once at the top of a sync.

    Kubernetes' defaults are applied here (``parallelism`` 1, ``backoffLimit`` 6 or, with
    ``backoffLimitPerIndex``, the int32 maximum); fields with no default stay None.
    ``completions``, ``active_deadline_seconds``, ``ttl_seconds_after_finished``,
    ``backoff_limit_per_index`` and ``max_failed_indexes`` are None when unset; the policies
    (``pod_failure_policy``, ``success_policy``) are their wire form or None; ``restart_policy``
    is the pod template's; ``only_replace_failed`` is true when terminating pods are not replaced
    before they finish (``podReplacementPolicy: Failed``, or a pod failure policy);
    ``completion_time`` is ``status.completionTime``.
    """

    meta: MetaView
    parallelism: int
    completions: int | None
    backoff_limit: int
    active_deadline_seconds: int | None
    ttl_seconds_after_finished: int | None
    indexed: bool
    suspend: bool
    restart_policy: str | None
    completion_time: str | None
    backoff_limit_per_index: int | None
    max_failed_indexes: int | None
    pod_failure_policy: dict[str, Any] | None
    success_policy: dict[str, Any] | None
    only_replace_failed: bool

    @classmethod
    def of(cls, job: Mapping[str, Any]) -> JobView:
        spec = job.get("spec") or {}
        status = job.get("status") or {}
        template = (spec.get("template") or {}).get("spec") or {}
        parallelism, backoff = spec.get("parallelism"), spec.get("backoffLimit")
        per_index = _int_or_none(spec.get("backoffLimitPerIndex"))
        if backoff is None:
            backoff = DEFAULT_BACKOFF_LIMIT if per_index is None else DEFAULT_BACKOFF_LIMIT_PER_INDEX_JOB
        failure_policy = spec.get("podFailurePolicy") or None
        return cls(MetaView.of(job),
                   DEFAULT_PARALLELISM if parallelism is None else int(parallelism),
                   _int_or_none(spec.get("completions")), int(backoff),
                   _int_or_none(spec.get("activeDeadlineSeconds")),
                   _int_or_none(spec.get("ttlSecondsAfterFinished")),
                   spec.get("completionMode") == "Indexed", bool(spec.get("suspend")),
                   template.get("restartPolicy"), status.get("completionTime"),
                   per_index, _int_or_none(spec.get("maxFailedIndexes")), failure_policy,
                   spec.get("successPolicy") or None,
                   failure_policy is not None or spec.get("podReplacementPolicy") == "Failed")


@dataclass(frozen=True, slots=True)
class CronJobView:
    """What the CronJob controller reads of a wire-form CronJob, read once at the top of a sync.

    ``concurrency_policy`` defaults to ``Allow`` and the history limits to 3 (successful) and 1
    (failed), as in Kubernetes; ``schedule`` is ``""`` and ``time_zone`` None when unset.
    """

    meta: MetaView
    schedule: str
    time_zone: str | None
    starting_deadline_seconds: int | None
    concurrency_policy: str
    suspend: bool
    successful_jobs_history_limit: int
    failed_jobs_history_limit: int

    @classmethod
    def of(cls, cronjob: Mapping[str, Any]) -> CronJobView:
        spec = cronjob.get("spec") or {}
        successful, failed = spec.get("successfulJobsHistoryLimit"), spec.get("failedJobsHistoryLimit")
        return cls(MetaView.of(cronjob), str(spec.get("schedule") or ""), spec.get("timeZone"),
                   _int_or_none(spec.get("startingDeadlineSeconds")), spec.get("concurrencyPolicy") or "Allow",
                   bool(spec.get("suspend")),
                   DEFAULT_SUCCESSFUL_JOBS_HISTORY_LIMIT if successful is None else int(successful),
                   DEFAULT_FAILED_JOBS_HISTORY_LIMIT if failed is None else int(failed))
