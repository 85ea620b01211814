"""The CronJob controller: create a Job from each CronJob's ``jobTemplate`` at its schedule times.

Kubernetes' ``pkg/controller/cronjob`` (v2) semantics:

* The schedule (:mod:`minik8s.api.cron`) is read in ``spec.timeZone`` (UTC without one).  At
  each sync the most recent schedule time after ``status.lastScheduleTime`` (or the CronJob's
  creation) and not after now is the one to run; earlier missed times are skipped (more than
  100 missed: a ``TooManyMissedTimes`` warning).  With ``startingDeadlineSeconds`` a time older
  than that is not started at all (``MissSchedule``).
* The Job is named ``<cronjob>-<scheduled time in minutes since the epoch>`` (so a time is never
  run twice), gets the template's labels and annotations plus
  ``batch.kubernetes.io/cronjob-scheduled-timestamp`` (RFC 3339) and a controller
  ownerReference to the CronJob (``SuccessfulCreate``).
* ``concurrencyPolicy``: ``Allow`` runs Jobs side by side; ``Forbid`` skips a time while a Job
  is active (``JobAlreadyActive``); ``Replace`` deletes the active Jobs first (``SuccessfulDelete``).
* ``suspend: true`` creates nothing (times passed while suspended count as missed).
* ``status.active`` lists the unfinished Jobs it owns, ``status.lastScheduleTime`` the last time
  run, ``status.lastSuccessfulTime`` the latest completion; a Job seen finished is reported
  (``SawCompletedJob``).  Finished Jobs beyond ``successfulJobsHistoryLimit`` /
  ``failedJobsHistoryLimit`` are deleted oldest first (propagation Background).
* The next sync is queued for the next schedule time (the work queue's ``add_after``).

``clock`` is injectable so tests can move time instead of waiting for it.
"""

from __future__ import annotations

import copy
import datetime as dt
from collections.abc import Callable

from minik8s.api import cron, errors
from minik8s.api.base import Obj, object_key, parse_time
from minik8s.api.batch import CRONJOB_SCHEDULED_TIMESTAMP_ANNOTATION, CronJobView, JobView
from minik8s.api.meta import MetaView
from minik8s.client.events import EventRecorder
from minik8s.client.factory import SharedInformerFactory
from minik8s.client.informer import NAMESPACE_INDEX, by_namespace
from minik8s.client.rest import Client
from minik8s.controllers.base import CONTROLLER_UID_INDEX, Controller, by_controller_uid
from minik8s.controllers.ownerrefs import controller_ref, meta_of, new_controller_ref, resolve_controller_ref

Clock = Callable[[], dt.datetime]
#: More missed start times than this are reported (``TooManyMissedTimes``), as Kubernetes does.
MAX_MISSED = 100


def _utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def rfc3339(when: dt.datetime) -> str:
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _time(value: object) -> dt.datetime | None:
    try:
        return parse_time(value) if isinstance(value, str) else None
    except ValueError:
        return None


def job_finished(job: Obj) -> str | None:
    """``Complete`` or ``Failed`` when the Job has that condition True, else None."""
    for c in (job.get("status") or {}).get("conditions") or []:
        if c.get("type") in ("Complete", "Failed") and c.get("status") == "True":
            return str(c["type"])
    return None


def job_name(cronjob_name: str, scheduled: dt.datetime) -> str:
    """``<cronjob>-<minutes since the epoch>`` (``getJobName``)."""
    return f"{cronjob_name}-{int(scheduled.timestamp()) // 60}"


def schedule_to_run(schedule: cron.Schedule, tz: dt.tzinfo, earliest: dt.datetime,
                    now: dt.datetime) -> tuple[dt.datetime | None, int]:
    """The most recent schedule time in ``(earliest, now]`` and how many times fall in it (up to
    ``MAX_MISSED + 1``; ``mostRecentScheduleTime``)."""
    latest = schedule.previous(now, tz)
    if latest is None or latest <= earliest:
        return None, 0
    count = 0
    t: dt.datetime | None = earliest
    while t is not None and count <= MAX_MISSED:
        t = schedule.next(t, tz)
        if t is None or t > now:
            break
        count += 1
    return latest, count


class CronJobController(Controller):
    """Reconciles batch/v1 CronJobs against the Jobs they own; ``clock`` gives the current time."""

    name = "cronjob-controller"

    def __init__(self, client: Client, factory: SharedInformerFactory, recorder: EventRecorder | None = None,
                 clock: Clock = _utc_now) -> None:
        super().__init__(client, factory, recorder)
        self.cj_rt = client.kind("batch/v1", "CronJob")
        self.job_rt = client.kind("batch/v1", "Job")
        self.clock = clock
        self.cronjobs = factory.informer(self.cj_rt, {NAMESPACE_INDEX: by_namespace})
        self.jobs = factory.informer(self.job_rt, {NAMESPACE_INDEX: by_namespace,
                                                   CONTROLLER_UID_INDEX: by_controller_uid})
        self.cronjobs.add_handler(lambda c: self.enqueue(object_key(c)),
                                  lambda _old, cur: self.enqueue(object_key(cur)), lambda _c: None)
        self.jobs.add_handler(self._job_changed, lambda _old, cur: self._job_changed(cur), self._job_changed)

    def _job_changed(self, job: Obj) -> None:
        ref = controller_ref(job)
        if ref is None:
            return
        owner = resolve_controller_ref(self.cronjobs, meta_of(job).get("namespace") or "", ref, "CronJob", "batch")
        if owner is not None:
            self.enqueue(object_key(owner))

    # ================================================================== sync
    async def sync(self, key: str) -> None:
        """Reconcile CronJob ``key``: status from its Jobs, history limits, the Job due now."""
        cj = self.cronjobs.get(key)
        if cj is None:
            return
        view = CronJobView.of(cj)
        if view.meta.deletion_timestamp:
            return
        now = self.clock()
        namespace = view.meta.namespace
        jobs = [j for j in self.jobs.by_index(CONTROLLER_UID_INDEX, view.meta.uid)
                if meta_of(j).get("namespace") == namespace]
        status = copy.deepcopy(cj.get("status") or {})
        was_active = {ref.get("uid") for ref in status.get("active") or []}
        active = [j for j in jobs if job_finished(j) is None and not meta_of(j).get("deletionTimestamp")]
        for j in jobs:
            state = job_finished(j)
            if state is not None and meta_of(j).get("uid") in was_active:
                self.event(cj, "Normal", "SawCompletedJob",
                           f"Saw completed job: {meta_of(j).get('name')}, status: {state}")
            if state == "Complete":
                done = _time(JobView.of(j).completion_time)
                last = _time(status.get("lastSuccessfulTime"))
                if done is not None and (last is None or done > last):
                    status["lastSuccessfulTime"] = rfc3339(done)
        await self._clean_history(cj, view, jobs)

        if not view.suspend:
            try:
                schedule = cron.parse(view.schedule)
                tz = cron.zone(view.time_zone)
            except cron.CronError as exc:
                reason = "UnknownTimeZone" if "time zone" in str(exc) else "UnparseableSchedule"
                self.event(cj, "Warning", reason, str(exc))
                schedule = None
            if schedule is not None:
                active = await self._run_due(key, cj, view, schedule, tz, active, status, now)
                upcoming = schedule.next(now, tz)
                if upcoming is not None:
                    self.enqueue_after(key, (upcoming - now).total_seconds() + 0.1)

        refs = [self._reference(j) for j in sorted(active, key=lambda j: str(meta_of(j).get("name")))]
        if refs:
            status["active"] = refs
        else:
            status.pop("active", None)
        if status != (cj.get("status") or {}):
            await self.client.update_status(self.cj_rt, {**cj, "status": status})

    @staticmethod
    def _reference(job: Obj) -> Obj:
        m = meta_of(job)
        return {"apiVersion": "batch/v1", "kind": "Job", "name": m.get("name"), "namespace": m.get("namespace"),
                "uid": m.get("uid"), "resourceVersion": m.get("resourceVersion")}

    async def _run_due(self, key: str, cj: Obj, view: CronJobView, schedule: cron.Schedule, tz: dt.tzinfo,
                       active: list[Obj], status: Obj, now: dt.datetime) -> list[Obj]:
        """Start the Job of the most recent missed schedule time, if any is due; returns active Jobs."""
        earliest = _time(status.get("lastScheduleTime")) or _time(view.meta.creation_timestamp) or now
        deadline = view.starting_deadline_seconds
        if deadline is not None:
            earliest = max(earliest, now - dt.timedelta(seconds=deadline))
        scheduled, missed = schedule_to_run(schedule, tz, earliest, now)
        if scheduled is None:
            return active
        if missed > MAX_MISSED:
            self.event(cj, "Warning", "TooManyMissedTimes",
                       "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check "
                       "clock skew")
        if deadline is not None and scheduled < now - dt.timedelta(seconds=deadline):
            self.event(cj, "Warning", "MissSchedule",
                       f"Missed scheduled time to start a job: {rfc3339(scheduled)}")
            return active
        policy = view.concurrency_policy
        if policy == "Forbid" and active:
            self.event(cj, "Normal", "JobAlreadyActive",
                       "Not starting job because prior execution is running and concurrency policy is Forbid")
            return active
        if policy == "Replace":
            for job in active:
                await self._delete_job(cj, job)
            active = []
        created = await self._create_job(cj, view.meta, scheduled)
        if created is None:
            return active
        job = created
        status["lastScheduleTime"] = rfc3339(scheduled)
        if meta_of(job).get("uid") not in {meta_of(j).get("uid") for j in active} and job_finished(job) is None:
            active = [*active, job]
        return active

    def _job_from_template(self, cj: Obj, meta: MetaView, scheduled: dt.datetime) -> Obj:
        template = copy.deepcopy((cj.get("spec") or {}).get("jobTemplate") or {})
        tmeta = template.get("metadata") or {}
        annotations = dict(tmeta.get("annotations") or {})
        annotations[CRONJOB_SCHEDULED_TIMESTAMP_ANNOTATION] = scheduled.astimezone(dt.UTC).isoformat().replace(
            "+00:00", "Z")
        job_meta: Obj = {"name": job_name(meta.name, scheduled), "namespace": meta.namespace or None,
                         "annotations": annotations,
                         "ownerReferences": [new_controller_ref(cj, "batch/v1", "CronJob")]}
        if tmeta.get("labels"):
            job_meta["labels"] = dict(tmeta["labels"])
        return {"apiVersion": "batch/v1", "kind": "Job", "metadata": job_meta, "spec": template.get("spec") or {}}

    async def _create_job(self, cj: Obj, meta: MetaView, scheduled: dt.datetime) -> Obj | None:
        body = self._job_from_template(cj, meta, scheduled)
        name, namespace = body["metadata"]["name"], body["metadata"]["namespace"]
        try:
            job = await self.client.create(self.job_rt, body, namespace)
        except errors.AlreadyExists:
            try:
                existing = await self.client.get(self.job_rt, name, namespace)
            except errors.NotFound:
                return None
            ref = controller_ref(existing)
            if ref is None or ref.get("uid") != meta.uid:
                self.event(cj, "Warning", "FailedCreate", f"Error creating job: job {name} already exists")
                return None
            return existing  # created by an earlier sync whose status write was lost
        except errors.APIError as exc:
            self.event(cj, "Warning", "FailedCreate", f"Error creating job: {exc.message}")
            raise
        self.event(cj, "Normal", "SuccessfulCreate", f"Created job {name}")
        return job

    async def _delete_job(self, cj: Obj, job: Obj) -> None:
        m = meta_of(job)
        try:
            await self.client.delete(self.job_rt, m["name"], m.get("namespace"), propagation_policy="Background",
                                     preconditions={"uid": str(m.get("uid"))})
        except (errors.NotFound, errors.Conflict):
            return
        self.event(cj, "Normal", "SuccessfulDelete", f"Deleted job {m.get('name')}")

    async def _clean_history(self, cj: Obj, view: CronJobView, jobs: list[Obj]) -> None:
        """Delete the oldest finished Jobs beyond the history limits (``cleanupFinishedJobs``)."""
        for state, limit in (("Complete", view.successful_jobs_history_limit),
                             ("Failed", view.failed_jobs_history_limit)):
            finished = [j for j in jobs if job_finished(j) == state and not meta_of(j).get("deletionTimestamp")]
            if len(finished) <= limit:
                continue
            finished.sort(key=lambda j: (str((j.get("status") or {}).get("startTime") or ""),
                                         str(meta_of(j).get("creationTimestamp") or ""), str(meta_of(j).get("name"))))
            for job in finished[:len(finished) - limit]:
                await self._delete_job(cj, job)
