"""batch/v1 Job and CronJob: Kubernetes' ``pkg/registry/batch/{job,cronjob}/strategy.go`` rules.

Job: ``completions`` and ``parallelism`` default to 1 (``parallelism`` alone to 1 when only
``completions`` is set), ``backoffLimit`` 6, ``completionMode: NonIndexed``, ``suspend: false``,
``podReplacementPolicy: TerminatingOrFailed``; unless ``spec.manualSelector`` is true the
selector is generated on create (``batch.kubernetes.io/controller-uid: <uid>``) and the
template gets the labels ``batch.kubernetes.io/controller-uid``, ``controller-uid``,
``batch.kubernetes.io/job-name`` and ``job-name``.  The template's ``restartPolicy`` must be
``OnFailure`` or ``Never``; ``backoffLimit`` defaults to the int32 maximum with
``backoffLimitPerIndex``, an ``onPodConditions`` pattern's ``status`` to ``True``; the failure
and success policies are checked by :mod:`minik8s.apiserver.strategies.jobpolicies`.  On update
the selector, ``completionMode``, ``completions`` (except an Indexed Job changing completions and
parallelism together), ``podFailurePolicy``, ``backoffLimitPerIndex``, ``successPolicy``,
``managedBy`` and the pod template are immutable; a suspended Job that never started may still
change its template's labels, annotations, nodeSelector, tolerations and schedulingGates.

CronJob: ``concurrencyPolicy: Allow``, ``suspend: false``, ``successfulJobsHistoryLimit: 3``,
``failedJobsHistoryLimit: 1``, its job template's ``onPodConditions`` statuses ``True``; the
schedule must parse (:mod:`minik8s.api.cron`), ``timeZone`` must be a known IANA zone, the name
at most 52 characters (the Job names add 11).
"""

from __future__ import annotations

from typing import Any

from minik8s.api import cron
from minik8s.api import validation as v
from minik8s.api.batch import (
    CONTROLLER_UID_LABEL,
    JOB_NAME_LABEL,
    LEGACY_CONTROLLER_UID_LABEL,
    LEGACY_JOB_NAME_LABEL,
)
from minik8s.api.selectors import LabelSelector
from minik8s.apiserver.strategies.base import REQUIRED, Cause, Obj, Strategy, selector_errors, unsupported
from minik8s.apiserver.strategies.jobpolicies import (
    default_pod_failure_policy,
    index_limit_errors,
    pod_failure_policy_errors,
    pod_failure_policy_restart_errors,
    success_policy_errors,
)
from minik8s.apiserver.strategies.pod import default_pod_spec, validate_pod_spec

JOB_RESTART_POLICIES = ("OnFailure", "Never")
COMPLETION_MODES = ("NonIndexed", "Indexed")
CONCURRENCY_POLICIES = ("Allow", "Forbid", "Replace")
POD_REPLACEMENT_POLICIES = ("TerminatingOrFailed", "Failed")
IMMUTABLE = "field is immutable"
#: The longest CronJob name: a Job name adds ``-`` and up to 10 digits, a label value holds 63.
CRONJOB_NAME_MAX = 52
#: What a suspended Job that never started may change in its template (``JobMutableSchedulingDirectives``).
SCHEDULING_DIRECTIVES = ("nodeSelector", "tolerations", "schedulingGates")


def default_job_spec(spec: Obj) -> None:
    """``SetDefaults_Job`` on a JobSpec (a Job's, not a CronJob's template: that stays as written)."""
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    if spec.get("parallelism") is None:
        spec["parallelism"] = 1
    spec.setdefault("backoffLimit", 6 if spec.get("backoffLimitPerIndex") is None else 2**31 - 1)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    if not spec.get("podFailurePolicy"):
        spec.setdefault("podReplacementPolicy", "TerminatingOrFailed")
    else:
        spec.setdefault("podReplacementPolicy", "Failed")
    default_pod_failure_policy(spec)


def _non_negative(spec: Obj, fld: str, path: str, causes: list[Cause], positive: bool = False) -> None:
    value = spec.get(fld)
    if value is None:
        return
    if not isinstance(value, int) or isinstance(value, bool):
        causes.append((f"{path}.{fld}", value, "must be an integer"))
    elif positive and value <= 0:
        causes.append((f"{path}.{fld}", value, "must be greater than or equal to 1"))
    elif value < 0:
        causes.append((f"{path}.{fld}", value, "must be greater than or equal to 0"))


def validate_job_spec(spec: Obj, path: str, selector_required: bool) -> list[Cause]:
    """``ValidateJobSpec``: counts, modes, the selector matching the template, the pod template."""
    causes: list[Cause] = []
    for fld in ("parallelism", "completions", "backoffLimit", "ttlSecondsAfterFinished", "backoffLimitPerIndex",
                "maxFailedIndexes"):
        _non_negative(spec, fld, path, causes)
    _non_negative(spec, "activeDeadlineSeconds", path, causes, positive=True)
    mode = spec.get("completionMode")
    if mode is not None and mode not in COMPLETION_MODES:
        causes.append((f"{path}.completionMode", None, unsupported(mode, COMPLETION_MODES)))
    if mode == "Indexed":
        if spec.get("completions") is None:
            causes.append((f"{path}.completions", None, "Required value: when completion mode is Indexed"))
    causes += index_limit_errors(spec, path)
    causes += pod_failure_policy_errors(spec, path)
    causes += success_policy_errors(spec, path)
    replacement = spec.get("podReplacementPolicy")
    if replacement is not None and replacement not in POD_REPLACEMENT_POLICIES and spec.get("podFailurePolicy") is None:
        causes.append((f"{path}.podReplacementPolicy", None, unsupported(replacement, POD_REPLACEMENT_POLICIES)))
    template = spec.get("template")
    if not isinstance(template, dict):
        causes.append((f"{path}.template", None, REQUIRED))
        return causes
    labels = (template.get("metadata") or {}).get("labels") or {}
    causes += v.validate_labels(labels, f"{path}.template.metadata.labels")
    selector = spec.get("selector")
    if selector is None:
        if selector_required:
            causes.append((f"{path}.selector", None, REQUIRED))
    else:
        sel_causes = selector_errors(selector, f"{path}.selector")
        causes += sel_causes
        if not sel_causes:
            if not (selector.get("matchLabels") or selector.get("matchExpressions")):
                causes.append((f"{path}.selector", None, REQUIRED))
            elif not LabelSelector.from_dict(selector).matches(labels):
                causes.append((f"{path}.template.metadata.labels", labels,
                               "`selector` does not match template `labels`"))
    pod_spec = template.get("spec") or {}
    rp = pod_spec.get("restartPolicy")
    if rp not in JOB_RESTART_POLICIES:
        causes.append((f"{path}.template.spec.restartPolicy", None, unsupported(rp, JOB_RESTART_POLICIES)))
    else:
        causes += pod_failure_policy_restart_errors(spec, path)
    causes += [c for c in validate_pod_spec(pod_spec, f"{path}.template.spec")
               if c[0] != f"{path}.template.spec.restartPolicy"]
    return causes


def _without(template: Obj, drop_meta: tuple[str, ...], drop_spec: tuple[str, ...]) -> Obj:
    meta = {k: val for k, val in (template.get("metadata") or {}).items() if k not in drop_meta}
    spec = {k: val for k, val in (template.get("spec") or {}).items() if k not in drop_spec}
    return {"metadata": meta, "spec": spec}


class JobStrategy(Strategy):
    """batch/v1 Job (see the module docstring)."""

    has_status = True

    def prepare_for_create(self, obj: Obj) -> None:
        obj.pop("status", None)
        obj["status"] = {}
        spec = obj.get("spec")
        if not isinstance(spec, dict) or spec.get("manualSelector") is True:
            return
        meta = obj.get("metadata") or {}
        uid, name = str(meta.get("uid") or ""), str(meta.get("name") or "")
        template = spec.get("template")
        if isinstance(template, dict):
            tmeta = template.setdefault("metadata", {})
            if not isinstance(tmeta.get("labels"), dict):
                tmeta["labels"] = {}
            labels = tmeta["labels"]
            for key, value in ((CONTROLLER_UID_LABEL, uid), (LEGACY_CONTROLLER_UID_LABEL, uid),
                               (JOB_NAME_LABEL, name), (LEGACY_JOB_NAME_LABEL, name)):
                labels.setdefault(key, value)
        selector = spec.get("selector")
        if selector is None:
            spec["selector"] = {"matchLabels": {CONTROLLER_UID_LABEL: uid}}
        elif isinstance(selector, dict):
            match = selector.get("matchLabels")
            if isinstance(match, dict):
                match.setdefault(CONTROLLER_UID_LABEL, uid)
            elif not selector.get("matchExpressions"):
                selector["matchLabels"] = {CONTROLLER_UID_LABEL: uid}

    def default(self, obj: Obj) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        obj.setdefault("status", {})
        default_job_spec(spec)
        template = spec.get("template")
        if isinstance(template, dict):
            default_pod_spec(template.setdefault("spec", {}))

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return causes + [("spec", None, REQUIRED)]
        causes += validate_job_spec(spec, "spec", selector_required=True)
        if spec.get("manualSelector") is not True and old is None:
            uid = (obj.get("metadata") or {}).get("uid")
            selector = spec.get("selector") or {}
            if selector != {"matchLabels": {CONTROLLER_UID_LABEL: uid}}:
                causes.append(("spec.selector", selector, "`selector` not auto-generated"))
        if old is not None:
            causes += self._validate_update(spec, old.get("spec") or {}, old.get("status") or {})
        return causes

    @staticmethod
    def _validate_update(spec: Obj, old: Obj, old_status: Obj) -> list[Cause]:
        """``ValidateJobSpecUpdate``: what may not change once the Job exists."""
        causes: list[Cause] = []
        for fld in ("selector", "completionMode", "podFailurePolicy", "backoffLimitPerIndex", "managedBy",
                    "successPolicy", "manualSelector"):
            if spec.get(fld) != old.get(fld):
                causes.append((f"spec.{fld}", spec.get(fld), IMMUTABLE))
        if spec.get("completions") != old.get("completions"):
            elastic = (spec.get("completionMode") == "Indexed" and spec.get("completions") == spec.get("parallelism")
                       and old.get("completions") == old.get("parallelism"))
            if not elastic:
                causes.append(("spec.completions", spec.get("completions"), IMMUTABLE))
        template, old_template = spec.get("template") or {}, old.get("template") or {}
        if template != old_template:
            if old.get("suspend") and not old_status.get("startTime"):
                same = _without(template, ("labels", "annotations"), SCHEDULING_DIRECTIVES) == \
                    _without(old_template, ("labels", "annotations"), SCHEDULING_DIRECTIVES)
            else:
                same = False
            if not same:
                causes.append(("spec.template", None, IMMUTABLE))
        return causes

    def fields(self, obj: Obj) -> dict[str, str]:
        found = super().fields(obj)
        found["status.successful"] = str((obj.get("status") or {}).get("succeeded") or 0)
        return found


class CronJobStrategy(Strategy):
    """batch/v1 CronJob (see the module docstring)."""

    has_status = True

    def prepare_for_create(self, obj: Obj) -> None:
        obj["status"] = {}

    def default(self, obj: Obj) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        obj.setdefault("status", {})
        spec.setdefault("concurrencyPolicy", "Allow")
        spec.setdefault("suspend", False)
        spec.setdefault("successfulJobsHistoryLimit", 3)
        spec.setdefault("failedJobsHistoryLimit", 1)
        job_template = spec.get("jobTemplate")
        if isinstance(job_template, dict) and isinstance(job_template.get("spec"), dict):
            default_pod_failure_policy(job_template["spec"])  # as kubernetes#131525 does
            template = job_template["spec"].get("template")
            if isinstance(template, dict):
                default_pod_spec(template.setdefault("spec", {}))

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        name = (obj.get("metadata") or {}).get("name") or ""
        if len(name) > CRONJOB_NAME_MAX:
            causes.append(("metadata.name", name, f"must be no more than {CRONJOB_NAME_MAX} characters"))
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return causes + [("spec", None, REQUIRED)]
        causes += validate_cronjob_spec(spec)
        return causes


def validate_cronjob_spec(spec: Obj) -> list[Cause]:
    """``ValidateCronJobSpec``: schedule, time zone, policies, limits and the job template."""
    causes: list[Cause] = []
    schedule: Any = spec.get("schedule")
    if not isinstance(schedule, str) or not schedule.strip():
        causes.append(("spec.schedule", None, REQUIRED))
    else:
        try:
            cron.parse(schedule)
        except cron.CronError as exc:
            causes.append(("spec.schedule", schedule, str(exc)))
    tz = spec.get("timeZone")
    if tz is not None:
        if not isinstance(tz, str) or not tz:
            causes.append(("spec.timeZone", tz, "unknown time zone " + str(tz)))
        else:
            try:
                cron.zone(tz)
            except cron.CronError as exc:
                causes.append(("spec.timeZone", tz, str(exc)))
    policy = spec.get("concurrencyPolicy")
    if policy not in CONCURRENCY_POLICIES:
        causes.append(("spec.concurrencyPolicy", None, unsupported(policy, CONCURRENCY_POLICIES)))
    for fld in ("startingDeadlineSeconds", "successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        _non_negative(spec, fld, "spec", causes)
    job_template = spec.get("jobTemplate")
    if not isinstance(job_template, dict) or not isinstance(job_template.get("spec"), dict):
        causes.append(("spec.jobTemplate.spec", None, REQUIRED))
        return causes
    tmeta = job_template.get("metadata") or {}
    causes += v.validate_labels(tmeta.get("labels"), "spec.jobTemplate.metadata.labels")
    causes += v.validate_annotations(tmeta.get("annotations"), "spec.jobTemplate.metadata.annotations")
    causes += validate_job_spec(job_template["spec"], "spec.jobTemplate.spec", selector_required=False)
    return causes

