"""The Job controller: run each Job's pods until enough succeed, or the Job fails.

Kubernetes' ``pkg/controller/job`` semantics, as far as minik8s goes:

* **Pods** are the Job's by their controller ownerReference (``controller: true``,
  ``blockOwnerDeletion: true``, so the garbage collector removes them with the Job).  Active
  pods (not finished, not terminating) are kept at ``spec.parallelism``, never more than the
  completions still missing; extra ones are deleted (``SuccessfulDelete``).  Finished pods
  stay (they are what ``status.succeeded``/``status.failed`` count) until the Job goes.
* **Failures**: ``status.failed`` counts Failed pods (with ``restartPolicy: OnFailure`` also the
  restarts of active pods' containers; not those an ``Ignore`` rule of ``podFailurePolicy``
  matched).  After a failure the next pod waits an exponential
  back-off from the last failure: 10 s, doubled per failure since the last success, at most
  6 minutes (the work queue's ``add_after``).  More failures than ``spec.backoffLimit`` fail the
  Job: condition ``FailureTarget``, active pods deleted, then ``Failed`` (reason
  ``BackoffLimitExceeded``, message ``Job has reached the specified backoff limit``).
* **podFailurePolicy** (:mod:`minik8s.controllers.jobpolicy`): a Failed pod matching a ``FailJob``
  rule fails the Job (reason ``PodFailurePolicy``, message ``Container main for pod ns/name failed
  with exit code 42 matching FailJob rule at index 0``); with a policy (or
  ``podReplacementPolicy: Failed``) a terminating pod is replaced only once it is gone.
* **backoffLimitPerIndex** (Indexed): failed indexes get no more pods and are listed in
  ``status.failedIndexes`` (``1,3-5``); ``maxFailedIndexes`` exceeded fails the Job at once
  (``MaxFailedIndexesExceeded``), otherwise it fails (``FailedIndexes``) once every index
  succeeded or failed.  Each index has its own back-off; the global one is not used.
* **activeDeadlineSeconds** past ``status.startTime``: the same with reason ``DeadlineExceeded``
  (``Job was active longer than specified deadline``).
* **Success**: ``status.succeeded`` reaching ``spec.completions`` (without completions: one pod
  succeeded and none active) adds ``SuccessCriteriaMet`` then ``Complete`` (``CompletionsReached``)
  and sets ``status.completionTime``; active leftovers are deleted.  An Indexed Job's
  ``successPolicy`` met does the same with reason ``SuccessPolicy`` (``Matched rules at index 0``).
* **suspend**: active pods are deleted, condition ``Suspended`` True (``JobSuspended``) and
  ``startTime`` cleared; resuming sets it False (``JobResumed``) and starts the clock again.
* **ttlSecondsAfterFinished**: that long after the Job finished it is deleted with
  ``propagationPolicy: Background`` (Kubernetes' TTL-after-finished controller, folded in here).
* **Indexed** completion mode: each pod carries its index in the annotation and label
  ``batch.kubernetes.io/job-completion-index`` and the env var ``JOB_COMPLETION_INDEX`` and is
  named ``<job>-<index>-<suffix>`` with hostname ``<job>-<index>``; ``status.completedIndexes``
  lists the indexes that succeeded (``0-2,4``), the Job succeeds when all ``completions`` did.
* **Events** on the Job: ``SuccessfulCreate``, ``SuccessfulDelete``, ``FailedCreate``,
  ``Completed``, ``BackoffLimitExceeded``, ``DeadlineExceeded``, ``Suspended``, ``Resumed``.

Differences: no ``batch.kubernetes.io/job-tracking`` finalizer (a finished pod deleted by hand
is no longer counted, and a pod evicted or preempted counts, or matches a pod failure policy rule,
only if the controller sees it Failed before it is gone; a FailJob decision, once written as
``FailureTarget``, stays); the terminal condition is written with ``FailureTarget`` at once rather
than after the terminating pods are gone; orphan pods are not adopted.
"""

from __future__ import annotations

import copy
import datetime as dt
from collections.abc import Callable
from typing import Any

from minik8s.api import errors
from minik8s.api.base import Obj, object_key, parse_time
from minik8s.api.batch import COMPLETION_INDEX_ANNOTATION, JobView
from minik8s.api.jobindexes import format_indexes
from minik8s.api.meta import MetaView
from minik8s.client.events import EventRecorder
from minik8s.client.factory import SharedInformerFactory
from minik8s.client.informer import NAMESPACE_INDEX, by_namespace
from minik8s.client.rest import Client
from minik8s.controllers import jobpolicy
from minik8s.controllers.base import CONTROLLER_UID_INDEX, by_controller_uid, slow_start_batch
from minik8s.controllers.expectations import Expectations
from minik8s.controllers.jobpolicy import failed_index_set, finish_decision, pod_index
from minik8s.controllers.ownerrefs import meta_of, new_controller_ref
from minik8s.controllers.podowner import PodOwnerController
from minik8s.controllers.podutil import is_pod_active, is_pod_ready, is_pod_terminal, pod_phase

#: First delay after a pod failure and its cap (Kubernetes' ``DefaultJobPodFailureBackOff`` and
#: the 6-minute ``MaxJobPodFailureBackOff`` of the Job docs).
BACKOFF_BASE = 10.0
BACKOFF_MAX = 360.0
#: Most pods one sync creates (Kubernetes' ``MaxPodCreateDeletePerSync``).
MAX_PER_SYNC = 500

Clock = Callable[[], dt.datetime]


def _utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def rfc3339(when: dt.datetime) -> str:
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _time(value: Any) -> dt.datetime | None:
    try:
        return parse_time(value) if isinstance(value, str) else None
    except ValueError:
        return None


def condition(job: Obj, type_: str) -> Obj | None:
    """The Job's condition of ``type_`` whose status is True, or None."""
    for c in (job.get("status") or {}).get("conditions") or []:
        if c.get("type") == type_ and c.get("status") == "True":
            return dict(c)
    return None


def is_finished(job: Obj) -> bool:
    """Complete or Failed (``IsJobFinished``)."""
    return condition(job, "Complete") is not None or condition(job, "Failed") is not None


def finish_time(job: Obj) -> dt.datetime | None:
    """When the Job finished: the Complete or Failed condition's lastTransitionTime."""
    for type_ in ("Complete", "Failed"):
        c = condition(job, type_)
        if c is not None:
            return _time(c.get("lastTransitionTime")) or _time(JobView.of(job).completion_time)
    return None


def set_condition(conditions: list[Obj], type_: str, status: str, reason: str, message: str,
                  now: dt.datetime) -> list[Obj]:
    """``conditions`` with ``type_`` set; ``lastTransitionTime`` moves only when the status changes
    (``lastProbeTime`` is always now, as the Job controller writes both)."""
    stamp = rfc3339(now)
    out = []
    found = False
    for c in conditions:
        if c.get("type") == type_:
            found = True
            changed = c.get("status") != status
            c = {**c, "status": status, "reason": reason, "message": message, "lastProbeTime": stamp}
            if changed or not c.get("lastTransitionTime"):
                c["lastTransitionTime"] = stamp
        out.append(c)
    if not found:
        out.append({"type": type_, "status": status, "reason": reason, "message": message,
                    "lastProbeTime": stamp, "lastTransitionTime": stamp})
    return out


def pod_finish_time(pod: Obj) -> dt.datetime | None:
    """When a finished pod's last container terminated (else its Ready condition's last change)."""
    latest: dt.datetime | None = None
    for cs in (pod.get("status") or {}).get("containerStatuses") or []:
        finished = _time(((cs.get("state") or {}).get("terminated") or {}).get("finishedAt"))
        if finished is not None and (latest is None or finished > latest):
            latest = finished
    if latest is not None:
        return latest
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready" and _time(c.get("lastTransitionTime")):
            return _time(c.get("lastTransitionTime"))
    return _time(meta_of(pod).get("creationTimestamp"))


def backoff_delay(failures: int, base: float = BACKOFF_BASE, cap: float = BACKOFF_MAX) -> float:
    """Seconds to wait before the next pod after ``failures`` failures since the last success."""
    if failures <= 0:
        return 0.0
    return min(base * 2 ** (failures - 1), cap)


def count_failures(job: Obj | JobView, pods: list[Obj]) -> int:
    """Failed pods (but those an ``Ignore`` rule of the pod failure policy matched), plus container
    restarts of active pods with ``restartPolicy: OnFailure``."""
    view = job if isinstance(job, JobView) else JobView.of(job)
    failed = sum(1 for p in pods if pod_phase(p) == "Failed" and jobpolicy.counts(view.pod_failure_policy, p))
    if view.restart_policy == "OnFailure":
        for p in pods:
            if is_pod_active(p):
                failed += sum(int(cs.get("restartCount") or 0)
                              for cs in (p.get("status") or {}).get("containerStatuses") or [])
    return failed


def failures_since_success(pods: list[Obj]) -> tuple[int, dt.datetime | None]:
    """Failed pods that finished after the last succeeded one, and the last failure's time."""
    last_success = max((t for p in pods if pod_phase(p) == "Succeeded"
                        and (t := pod_finish_time(p)) is not None), default=None)
    failures = [t for p in pods if pod_phase(p) == "Failed"
                and (t := pod_finish_time(p)) is not None and (last_success is None or t >= last_success)]
    return len(failures), max(failures, default=None)


class JobController(PodOwnerController):
    """Reconciles batch/v1 Jobs (keys ``namespace/name``) against the shared pod cache.

    ``clock`` gives the current time (tests move it); ``backoff_base``/``backoff_max`` are the
    pod-failure back-off in seconds (10 and 360 as in Kubernetes).
    """

    name = "job-controller"
    owner_api_version = "batch/v1"
    owner_kind = "Job"

    def __init__(self, client: Client, factory: SharedInformerFactory, recorder: EventRecorder | None = None,
                 clock: Clock = _utc_now, backoff_base: float = BACKOFF_BASE,
                 backoff_max: float = BACKOFF_MAX) -> None:
        super().__init__(client, factory, recorder)
        self.job_rt = client.kind("batch/v1", "Job")
        self.pod_rt = client.kind("v1", "Pod")
        self.clock = clock
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.expectations = Expectations()
        self.jobs = factory.informer(self.job_rt, {NAMESPACE_INDEX: by_namespace})
        self.pods = factory.informer(self.pod_rt, {NAMESPACE_INDEX: by_namespace,
                                                   CONTROLLER_UID_INDEX: by_controller_uid})
        self.watch_pods(self.jobs, self.pods)

    # ================================================================== event handlers
    # The Job keeps the shared deletePod; it finds its pods by controller uid and adopts no orphans, so its
    # addPod and updatePod only count creations and queue the owning Job.
    def _delete_owner(self, job: Obj) -> None:
        self.expectations.forget(object_key(job))

    def _add_pod(self, pod: Obj) -> None:
        job = self._owner_of(pod)
        if job is not None:
            self.expectations.creation_observed(object_key(job))
            self.enqueue(object_key(job))

    def _update_pod(self, old: Obj, cur: Obj) -> None:
        if meta_of(old).get("resourceVersion") == meta_of(cur).get("resourceVersion"):
            return
        job = self._owner_of(cur)
        if job is not None:
            self.enqueue(object_key(job))

    # ================================================================== sync
    async def sync(self, key: str) -> None:
        """Reconcile Job ``key``: pods toward parallelism, counts and conditions into status."""
        job = self.jobs.get(key)
        if job is None:
            self.expectations.forget(key)
            return
        view = JobView.of(job)
        if view.meta.deletion_timestamp:
            return
        now = self.clock()
        if is_finished(job):
            await self._after_finished(key, job, now)
            return
        pods = [p for p in self.pods.by_index(CONTROLLER_UID_INDEX, view.meta.uid)
                if meta_of(p).get("namespace") == view.meta.namespace]
        status = copy.deepcopy(job.get("status") or {})
        conditions: list[Obj] = list(status.get("conditions") or [])
        active = [p for p in pods if is_pod_active(p)]
        succeeded_pods = [p for p in pods if pod_phase(p) == "Succeeded"]
        completions = view.completions
        completed: set[int] = set()
        if view.indexed:
            completed = {i for p in succeeded_pods if (i := pod_index(p)) is not None
                         and completions is not None and 0 <= i < completions}
            succeeded = len(completed)
        else:
            succeeded = len(succeeded_pods)
        failed = count_failures(view, pods)
        failed_pods = [p for p in pods if pod_phase(p) == "Failed"]
        suspended = view.suspend
        if not suspended and not status.get("startTime"):
            status["startTime"] = rfc3339(now)
        start = _time(status.get("startTime"))
        failed_indexes: set[int] | None = None
        if view.indexed and view.backoff_limit_per_index is not None and completions is not None:
            failed_indexes = failed_index_set(view, status, failed_pods)
            status["failedIndexes"] = format_indexes(failed_indexes)

        deadline = view.active_deadline_seconds
        failure, success = finish_decision(conditions, view, failed, failed_pods, completed, failed_indexes, start,
                                           now)
        if success is None and failure is None:
            if completions is not None:
                complete = succeeded >= completions
            else:
                complete = succeeded > 0 and not active
            if complete:
                success = ("CompletionsReached", "Reached expected number of succeeded pods")

        manage_error: Exception | None = None
        if failure is not None:
            reason, message = failure
            conditions = set_condition(conditions, "FailureTarget", "True", reason, message, now)
            await self._delete_pods(key, job, active)
            conditions = set_condition(conditions, "Failed", "True", reason, message, now)
            self.event(job, "Warning", reason, message)
            active = []
        elif success is not None:
            reason, message = success
            await self._delete_pods(key, job, active)
            active = []
            conditions = set_condition(conditions, "SuccessCriteriaMet", "True", reason, message, now)
            conditions = set_condition(conditions, "Complete", "True", reason, message, now)
            status["completionTime"] = rfc3339(now)
            self.event(job, "Normal", "Completed", "Job completed")
        elif suspended:
            if active:
                await self._delete_pods(key, job, active)
                active = []
            if not condition(job, "Suspended"):
                conditions = set_condition(conditions, "Suspended", "True", "JobSuspended", "Job suspended", now)
                self.event(job, "Normal", "Suspended", "Job suspended")
            status.pop("startTime", None)
        else:
            if condition(job, "Suspended"):
                conditions = set_condition(conditions, "Suspended", "False", "JobResumed", "Job resumed", now)
                self.event(job, "Normal", "Resumed", "Job resumed")
            if self.expectations.satisfied(key):
                try:
                    done = completed | (failed_indexes or set())
                    active = await self._manage(key, job, view, active, succeeded, done, pods, now)
                except Exception as exc:  # noqa: BLE001 - status first, then retried
                    manage_error = exc
            if deadline is not None and start is not None:
                self.enqueue_after(key, max(deadline - (now - start).total_seconds(), 0) + 0.05)

        status["active"] = len(active)
        status["ready"] = sum(1 for p in active if is_pod_ready(p))
        status["succeeded"] = succeeded
        status["failed"] = failed
        status["terminating"] = sum(1 for p in pods if meta_of(p).get("deletionTimestamp")
                                    and pod_phase(p) not in ("Succeeded", "Failed"))
        if view.indexed:
            if completed:
                status["completedIndexes"] = format_indexes(completed)
            else:
                status.pop("completedIndexes", None)
        status.setdefault("uncountedTerminatedPods", {})
        if conditions:
            status["conditions"] = conditions
        if status != (job.get("status") or {}):
            updated = await self.client.update_status(self.job_rt, {**job, "status": status})
            if is_finished(updated):
                await self._after_finished(key, updated, now)
        if manage_error is not None:
            raise manage_error

    # ------------------------------------------------------------------ after finishing
    async def _after_finished(self, key: str, job: Obj, now: dt.datetime) -> None:
        """ttlSecondsAfterFinished: delete the Job (Background) once that long has passed."""
        view = JobView.of(job)
        ttl = view.ttl_seconds_after_finished
        if ttl is None:
            return
        finished = finish_time(job) or now
        remaining = (finished + dt.timedelta(seconds=ttl) - now).total_seconds()
        if remaining > 0:
            self.enqueue_after(key, remaining + 0.05)
            return
        meta = view.meta
        self.log.info("Job %s finished %ss ago: deleting it (ttlSecondsAfterFinished)", key, ttl)
        try:
            await self.client.delete(self.job_rt, meta.name, meta.namespace or None,
                                     propagation_policy="Background", preconditions={"uid": meta.uid})
        except (errors.NotFound, errors.Conflict):
            pass

    # ------------------------------------------------------------------ pods
    async def _manage(self, key: str, job: Obj, view: JobView, active: list[Obj], succeeded: int,
                      done: set[int], pods: list[Obj], now: dt.datetime) -> list[Obj]:
        """Create or delete pods toward ``min(parallelism, completions - succeeded)``; returns the
        pods then active.  ``done``: an Indexed Job's succeeded and failed indexes (no new pods)."""
        parallelism, completions = view.parallelism, view.completions
        wanted = parallelism
        if completions is not None:
            wanted = max(min(parallelism, completions - succeeded), 0)
        elif succeeded > 0:
            wanted = min(wanted, len(active))  # work queue Jobs: no new pods once one succeeded
        if len(active) > wanted:
            extra = sorted(active, key=lambda p: str(meta_of(p).get("creationTimestamp") or ""), reverse=True)
            victims = extra[:len(active) - wanted]
            await self._delete_pods(key, job, victims)
            return [p for p in active if p not in victims]
        terminating = [p for p in pods if meta_of(p).get("deletionTimestamp") and not is_pod_terminal(p)] \
            if view.only_replace_failed else []
        missing = min(wanted - len(terminating) - len(active), MAX_PER_SYNC)
        if missing <= 0:
            return active
        per_index = view.indexed and view.backoff_limit_per_index is not None
        if not per_index:
            failures, last_failure = failures_since_success(pods)
            delay = backoff_delay(failures, self.backoff_base, self.backoff_max)
            if last_failure is not None and delay > 0:
                wait = (last_failure + dt.timedelta(seconds=delay) - now).total_seconds()
                if wait > 0:
                    self.enqueue_after(key, wait + 0.05)
                    return active
        indexes: list[int | None] = [None] * missing
        annotations: dict[int, dict[str, str]] = {}
        if view.indexed and completions is not None:
            busy = done | {i for p in active + terminating if (i := pod_index(p)) is not None}
            free = [i for i in range(completions) if i not in busy][:missing]
            if per_index:
                free, annotations, wait = self._index_backoff(view, free, pods, now)
                if not free:
                    self.enqueue_after(key, wait + 0.05)
                    return active
            indexes = list(free)
        await self._create_pods(key, job, view.meta, indexes, annotations)
        return active

    def _index_backoff(self, view: JobView, free: list[int], pods: list[Obj], now: dt.datetime
                       ) -> tuple[list[int], dict[int, dict[str, str]], float]:
        """``backoffLimitPerIndex``: of the ``free`` indexes, those whose own back-off has passed,
        each new pod's failure-count annotations, and the shortest wait (seconds) when none has."""
        last = jobpolicy.last_failed_per_index(
            ((i, p) for p in pods if pod_phase(p) == "Failed" and (i := pod_index(p)) is not None), pod_finish_time)
        ready: list[int] = []
        annotations: dict[int, dict[str, str]] = {}
        shortest: float | None = None
        for index in free:
            replaced = last.get(index)
            if replaced is not None:
                finished = pod_finish_time(replaced) or now
                delay = backoff_delay(jobpolicy.index_absolute_failure_count(replaced) + 1,
                                      self.backoff_base, self.backoff_max)
                wait = (finished + dt.timedelta(seconds=delay) - now).total_seconds()
                if wait > 0:
                    shortest = wait if shortest is None else min(shortest, wait)
                    continue
            ready.append(index)
            failures, ignored = jobpolicy.next_failure_counts(view.pod_failure_policy, replaced)
            annotations[index] = {jobpolicy.INDEX_FAILURE_COUNT_ANNOTATION: str(failures)}
            if ignored:
                annotations[index][jobpolicy.INDEX_IGNORED_FAILURE_COUNT_ANNOTATION] = str(ignored)
        return ready, annotations, shortest or 0.0

    def _pod_from_template(self, job: Obj, meta: MetaView, index: int | None,
                           annotations: dict[str, str] | None = None) -> Obj:
        template = copy.deepcopy((job.get("spec") or {}).get("template") or {})
        tmeta = template.get("metadata") or {}
        spec = template.get("spec") or {}
        name = meta.name
        pod_meta: Obj = {"generateName": f"{name}-", "namespace": meta.namespace or None,
                         "ownerReferences": [new_controller_ref(job, "batch/v1", "Job")]}
        for fld in ("labels", "annotations", "finalizers"):
            if tmeta.get(fld):
                pod_meta[fld] = tmeta[fld]
        if index is not None:
            pod_meta["generateName"] = f"{name}-{index}-"
            pod_meta["annotations"] = {**(pod_meta.get("annotations") or {}), COMPLETION_INDEX_ANNOTATION: str(index),
                                       **(annotations or {})}
            pod_meta["labels"] = {**(pod_meta.get("labels") or {}), COMPLETION_INDEX_ANNOTATION: str(index)}
            spec.setdefault("hostname", f"{name}-{index}"[:63].rstrip("-"))
            for kind in ("initContainers", "containers"):
                for c in spec.get(kind) or []:
                    env = [e for e in c.get("env") or [] if e.get("name") != "JOB_COMPLETION_INDEX"]
                    c["env"] = [{"name": "JOB_COMPLETION_INDEX", "value": str(index)}, *env]
        return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": spec}

    async def _create_pods(self, key: str, job: Obj, meta: MetaView, indexes: list[int | None],
                           annotations: dict[int, dict[str, str]] | None = None) -> None:
        namespace = meta.namespace or None
        self.expectations.expect_creations(key, len(indexes))
        queue = list(indexes)

        async def create_one() -> None:
            index = queue.pop(0)
            try:
                extra = (annotations or {}).get(index) if index is not None else None
                pod = await self.client.create(self.pod_rt, self._pod_from_template(job, meta, index, extra), namespace)
            except errors.APIError as exc:
                self.event(job, "Warning", "FailedCreate", f"Error creating: {exc.message}")
                raise
            self.event(job, "Normal", "SuccessfulCreate", f"Created pod: {meta_of(pod).get('name')}")

        successes, error = await slow_start_batch(len(indexes), 1, create_one)
        for _ in range(len(indexes) - successes):
            self.expectations.creation_observed(key)
        if error is not None:
            raise error

    async def _delete_pods(self, key: str, job: Obj, pods: list[Obj]) -> None:
        if not pods:
            return
        self.expectations.expect_deletions(key, [object_key(p) for p in pods])
        first: Exception | None = None
        for pod in pods:
            pmeta = meta_of(pod)
            try:
                await self.client.delete(self.pod_rt, pmeta["name"], pmeta.get("namespace"),
                                         preconditions={"uid": str(pmeta.get("uid"))})
            except errors.NotFound:
                self.expectations.deletion_observed(key, object_key(pod))
                continue
            except errors.APIError as exc:
                self.expectations.deletion_observed(key, object_key(pod))
                self.event(job, "Warning", "FailedDelete", f"Error deleting: {exc.message}")
                first = first or exc
                continue
            self.event(job, "Normal", "SuccessfulDelete", f"Deleted pod: {pmeta.get('name')}")
        if first is not None:
            raise first
