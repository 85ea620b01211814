"""``batch/v1`` kinds: Job and CronJob (Kubernetes' ``k8s.io/api/batch/v1`` field names).

A Job runs pods from ``spec.template`` until ``spec.completions`` of them succeeded (or,
failing more than ``spec.backoffLimit`` times or running past ``spec.activeDeadlineSeconds``,
it fails); a CronJob creates Jobs from ``spec.jobTemplate`` at the times of its cron
``spec.schedule``.  Defaults and validation are the apiserver's (``strategies/job.py``), the
work the controllers' (``controllers/job.py``, ``controllers/cronjob.py``).
"""

from __future__ import annotations

from minik8s.api.base import Model
from minik8s.api.core import PodTemplateSpec
from minik8s.api.meta import Condition, LabelSelector, ObjectMeta, ObjectReference, TypedObject

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
    """Kept as written; minik8s' Job controller does not act on it (it counts every failure)."""

    rules: list[PodFailurePolicyRule]


class JobSpec(Model):
    """``batch/v1`` JobSpec: counts are int32, seconds int64."""

    parallelism: int | None = None
    completions: int | None = None
    active_deadline_seconds: int | None = None
    pod_failure_policy: PodFailurePolicy | None = None
    backoff_limit: int | None = None
    backoff_limit_per_index: int | None = None
    max_failed_indexes: int | None = None
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
