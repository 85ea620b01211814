"""The GPUJob controller: CUDA programs run as Slurm batch jobs on a login node over SSH.

Level-triggered like every controller here: informer handlers queue ``namespace/name`` keys
and :meth:`GPUJobController.sync` looks at the GPUJob and at Slurm, then moves the job on:

1. **Pending** — no Slurm job yet.  First the site is asked whether a job of this GPUJob
   already exists (the id file in the job's directory, else ``squeue`` by ``--comment``
   carrying the GPUJob's uid): a job submitted before a controller restart is **adopted**,
   never submitted twice.  Otherwise the sources (inline ``files`` or a ConfigMap) and the
   generated ``#SBATCH`` script are uploaded over SFTP into ``<workDir>/gpujob-<uid>``, the
   build command (default ``nvcc -O2 -o app *.cu``) runs **on the login node** — so a
   compile error fails the GPUJob with the compiler's message and nothing is submitted —
   and ``sbatch`` submits it.  A script Slurm rejects (unknown partition, more GPUs than
   a node has) fails the GPUJob with sbatch's message.
2. **Submitted / Running** — ``scontrol show job`` (``sacct`` when Slurm forgot the job and
   the site has accounting) is polled with back-off (``poll_interval`` growing ×1.5 up to
   ``max_poll_interval`` while nothing changes); ``slurmState``/``slurmReason`` follow Slurm
   (``PENDING``/``Resources``).
3. **Succeeded / Failed / Cancelled** — once Slurm's state is final, stdout, stderr and the
   ``resultFiles`` are fetched into the results ConfigMap (:mod:`.results`), the status gets
   the exit code, times and output tails, and the remote directory is removed.  TIMEOUT,
   OUT_OF_MEMORY, NODE_FAIL, ... fail the GPUJob with that reason.

An unreachable site (connection refused, key refused, unknown host key) leaves the phase as
it is, sets the ``ClusterReachable`` condition to False with the reason and retries with
back-off.  Deleting a GPUJob whose Slurm job is still queued or running runs ``scancel``
first (finalizer ``minik8s.io/slurm-job``); the remote directory is removed in any case.
Every transition is an Event.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import time
from dataclasses import dataclass
from typing import Any

from minik8s.api import errors
from minik8s.api.base import Obj, now_rfc3339
from minik8s.api.gpujobs import (
    API_VERSION,
    CLUSTER_REACHABLE,
    FAILED,
    FINALIZER,
    PENDING,
    RUNNING,
    SUBMITTED,
    SUCCEEDED,
    GPUJobView,
    config_map_files,
    is_terminal,
)
from minik8s.client.factory import SharedInformerFactory
from minik8s.client.rest import Client
from minik8s.controllers.base import Controller
from minik8s.controllers.gpujob import slurm
from minik8s.controllers.gpujob.clusters import SlurmClusterController, set_condition, site_config
from minik8s.controllers.gpujob.results import build_results, owned_by, results_config_map_name
from minik8s.controllers.gpujob.site import SlurmSite, SlurmSites, connection_lost
from minik8s.controllers.gpujob.ssh import REJECTED, SiteError

log = logging.getLogger("gpujob-controller")
CLUSTER_INDEX = "cluster"


@dataclass(frozen=True)
class GPUJobOptions:
    """Timing and size settings (seconds, bytes).

    ``cluster_check_period``: SlurmCluster checks; ``poll_interval``/``max_poll_interval``:
    Slurm polling of an active job; ``connect_backoff``/``max_connect_backoff``: retries of an
    unreachable site; ``build_timeout``: the build command on the login node;
    ``output_limit``: bytes of stdout and of stderr kept; ``results_budget``: bytes of the
    results ConfigMap (under Kubernetes' 1 MiB); ``tail_bytes``: the status' output tails.
    """

    cluster_check_period: float = 30.0
    poll_interval: float = 1.0
    max_poll_interval: float = 30.0
    connect_backoff: float = 2.0
    max_connect_backoff: float = 120.0
    connect_timeout: float = 10.0
    command_timeout: float = 60.0
    build_timeout: float = 600.0
    output_limit: int = 256 * 1024
    results_budget: int = 768 * 1024
    tail_bytes: int = 2048


def by_cluster(obj: Obj) -> list[str]:
    """Index function: the SlurmCluster a GPUJob names."""
    cluster = (obj.get("spec") or {}).get("cluster")
    return [str(cluster)] if cluster else []


def tail(data: bytes | str, limit: int, lines: int = 20) -> str:
    """The last ``lines`` lines of ``data`` within ``limit`` bytes (UTF-8, bad bytes replaced)."""
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
    text = text[-limit:]
    return "\n".join(text.rstrip("\n").splitlines()[-lines:])


class SourcesNotReady(Exception):
    """The ConfigMap of ``spec.sources.configMapRef`` does not exist (yet)."""


class GPUJobController(Controller):
    """Runs GPUJobs on Slurm sites (see the module doc) and, with them, the SlurmCluster checks."""

    name = "gpujob-controller"

    def __init__(self, client: Client, factory: SharedInformerFactory, options: GPUJobOptions | None = None) -> None:
        super().__init__(client, factory)
        self.options = o = options or GPUJobOptions()
        self.sites = SlurmSites(connect_timeout=o.connect_timeout, command_timeout=o.command_timeout,
                                backoff=o.connect_backoff, max_backoff=o.max_connect_backoff)
        self.rt = client.kind(API_VERSION, "GPUJob")
        self.jobs = factory.informer(self.rt, {CLUSTER_INDEX: by_cluster})
        self.jobs.add_handler(self._enqueue_obj, lambda _old, new: self._enqueue_obj(new), self._on_delete)
        self.clusters = SlurmClusterController(client, factory, self.sites, o.cluster_check_period,
                                               o.connect_backoff, on_reachable=self.enqueue_cluster_jobs)
        self.clusters.informer.add_handler(lambda c: self.enqueue_cluster_jobs(_name(c)), None,
                                           lambda c: self.enqueue_cluster_jobs(_name(c)))
        self._next_poll: dict[str, float] = {}
        self._poll_delay: dict[str, float] = {}
        self._unreachable: dict[str, int] = {}

    # ------------------------------------------------------------------ queueing
    def _enqueue_obj(self, obj: Obj) -> None:
        self.enqueue(_key(obj))

    def _on_delete(self, obj: Obj) -> None:
        key = _key(obj)
        self._forget(key)

    def enqueue_cluster_jobs(self, cluster: str) -> None:
        """Queue every GPUJob of SlurmCluster ``cluster`` (it appeared, went or became reachable)."""
        for job in self.jobs.by_index(CLUSTER_INDEX, cluster):
            key = _key(job)
            self._next_poll.pop(key, None)
            self.enqueue(key)

    def _forget(self, key: str) -> None:
        self._next_poll.pop(key, None)
        self._poll_delay.pop(key, None)
        self._unreachable.pop(key, None)

    def _schedule_poll(self, key: str, changed: bool) -> None:
        """Poll again after ``poll_interval`` (after a change) or ×1.5 the last delay (up to the max)."""
        o = self.options
        last = self._poll_delay.get(key)
        delay = o.poll_interval if changed or last is None else min(last * 1.5, o.max_poll_interval)
        self._poll_delay[key] = delay
        self._next_poll[key] = asyncio.get_running_loop().time() + delay
        self.enqueue_after(key, delay)

    # ------------------------------------------------------------------ running
    async def run(self, workers: int = 1) -> None:
        """Run the GPUJob workers and the SlurmCluster checks until shut down."""
        try:
            await asyncio.gather(super().run(workers), self.clusters.run(max(1, workers // 2)))
        finally:
            await self.sites.close()

    def shutdown(self) -> None:
        super().shutdown()
        self.clusters.shutdown()

    # ------------------------------------------------------------------ sync
    async def sync(self, key: str) -> None:
        cached = self.jobs.get(key)
        if cached is None:
            self._forget(key)
            return
        job = copy.deepcopy(cached)
        view = GPUJobView.of(job)
        meta = job.get("metadata") or {}
        if view.meta.deletion_timestamp:
            await self._finalize(key, job, view)
            return
        status = job.get("status") or {}
        phase = status.get("phase") or PENDING
        if is_terminal(phase):
            await self._clean_finished(job, view)
            return
        if FINALIZER not in (meta.get("finalizers") or []):
            job = await self._add_finalizer(job)
        if not status.get("phase"):
            await self._patch_status(job, {"phase": PENDING})
        if status.get("jobID"):
            wait = self._next_poll.get(key, 0.0) - asyncio.get_running_loop().time()
            if wait > 0.001:
                self.enqueue_after(key, wait)
                return
        cluster_name = view.cluster
        cluster = self.clusters.informer.get(cluster_name)
        if cluster is None:
            message = f'SlurmCluster "{cluster_name}" not found'
            await self._set_reachable(job, "False", "ClusterNotFound", message)
            return
        try:
            site = await self._site(cluster_name, cluster)
            if not status.get("jobID"):
                await self._start(key, job, view, cluster, site)
            else:
                await self._follow(key, job, view, site)
        except SiteError as exc:
            if not exc.is_connection_error:
                raise
            await self.sites.drop(cluster_name)
            await self._on_unreachable(key, job, cluster_name, exc)
            return
        self._unreachable.pop(key, None)

    async def _site(self, name: str, cluster: Obj) -> SlurmSite:
        return await self.sites.get(name, await site_config(self.client, cluster))

    async def _on_unreachable(self, key: str, job: Obj, cluster: str, exc: SiteError) -> None:
        """The site of SlurmCluster ``cluster`` cannot be used: say so in the condition, retry with back-off."""
        await self._set_reachable(job, "False", exc.reason, exc.message)
        n = self._unreachable.get(key, 0)
        self._unreachable[key] = n + 1
        o = self.options
        delay = max(min(o.connect_backoff * 2 ** n, o.max_connect_backoff), self.sites.retry_after(cluster))
        self.log.info("%s %s: site %s unusable (%s), retry in %.1fs", self.name, key, cluster, exc.reason, delay)
        self.enqueue_after(key, delay)

    async def _set_reachable(self, job: Obj, value: str, reason: str, message: str) -> None:
        status = job.get("status") or {}
        old = next((c for c in status.get("conditions") or [] if c.get("type") == CLUSTER_REACHABLE), None)
        if old and old.get("status") == value and old.get("reason") == reason and old.get("message") == message:
            return
        patch: Obj = {"conditions": set_condition(status.get("conditions"), CLUSTER_REACHABLE, value, reason, message,
                                                  now_rfc3339())}
        if not status.get("phase"):
            patch["phase"] = PENDING
        await self._patch_status(job, patch)
        if value == "False":
            self.event(job, "Warning", reason, message)

    # ------------------------------------------------------------------ Pending → Submitted
    async def _start(self, key: str, job: Obj, view: GPUJobView, cluster: Obj, site: SlurmSite) -> None:
        spec = job.get("spec") or {}
        identity = slurm.JobIdentity(view.meta.namespace, view.meta.name, view.meta.uid)
        work_dir = site.job_dir(identity.uid)
        reachable = set_condition((job.get("status") or {}).get("conditions"), CLUSTER_REACHABLE, "True",
                                  "SSHLoginWorks", f"logged in to {site.conn.target}", now_rfc3339())
        existing = await site.find_job(work_dir, identity)
        if existing:
            await self._patch_status(job, {"phase": SUBMITTED, "jobID": existing, "workDir": work_dir,
                                           "conditions": reachable, "reason": None, "message": None})
            self.event(job, "Normal", "Adopted", f"Found Slurm job {existing} submitted earlier for this GPUJob; "
                                                 f"not submitting again")
            self._schedule_poll(key, changed=True)
            return
        try:
            files = await self._sources(view)
        except SourcesNotReady as exc:
            await self._patch_status(job, {"phase": PENDING, "reason": "SourcesNotFound", "message": str(exc)})
            self.event(job, "Warning", "SourcesNotFound", str(exc))
            self.enqueue_after(key, 10.0)
            return
        default_partition = (cluster.get("spec") or {}).get("defaultPartition")
        script = slurm.batch_script(spec, default_partition, identity, work_dir)
        partition = view.partition or default_partition
        await site.upload(work_dir, files, script)
        await self._patch_status(job, {"phase": PENDING, "workDir": work_dir, "batchScript": script,
                                       "partition": partition, "conditions": reachable, "reason": "Building",
                                       "message": None})
        build = view.build
        build_log = None
        if build.strip():
            started = time.monotonic()
            result = await site.build(work_dir, build, self.options.build_timeout)
            build_log = tail(result.stdout + result.stderr, self.options.tail_bytes, 40)
            if not result.ok:
                why = f"exited {result.exit_status}" if result.exit_status >= 0 else "timed out"
                detail = tail(result.stderr or result.stdout, 1500, 12)
                message = f"build command `{build}` {why}: {detail}".strip()
                await self._finish(job, view, {"phase": FAILED, "reason": "BuildFailed", "message": message,
                                               "buildLog": build_log, "completionTime": now_rfc3339()})
                self.event(job, "Warning", "BuildFailed", message[:1024])
                return
            self.event(job, "Normal", "Built", f"`{build}` succeeded on the login node in "
                                               f"{time.monotonic() - started:.1f}s")
        try:
            job_id = await site.submit(work_dir)
        except SiteError as exc:
            if exc.reason != REJECTED:
                raise
            message = f"sbatch rejected the job: {exc.message}"
            await self._finish(job, view, {"phase": FAILED, "reason": "SubmitRejected", "message": message,
                                           "buildLog": build_log, "completionTime": now_rfc3339()})
            self.event(job, "Warning", "SubmitRejected", message)
            return
        await self._patch_status(job, {"phase": SUBMITTED, "jobID": job_id, "submitTime": now_rfc3339(),
                                       "slurmState": "PENDING", "buildLog": build_log, "reason": None,
                                       "message": None})
        self.event(job, "Normal", "Submitted", f"Submitted batch job {job_id}"
                                               + (f" to partition {partition}" if partition else ""))
        self._schedule_poll(key, changed=True)

    async def _sources(self, view: GPUJobView) -> dict[str, bytes]:
        """The job's source files: inline ``files`` or the keys of its ConfigMap."""
        if view.source_files:
            return {str(k): str(v).encode() for k, v in view.source_files.items()}
        name, namespace = view.source_config_map, view.meta.namespace
        try:
            config_map = await self.client.get(self.client.kind("v1", "ConfigMap"), name, namespace)
        except errors.NotFound as exc:
            raise SourcesNotReady(f'ConfigMap "{name}" of spec.sources.configMapRef not found') from exc
        try:
            return config_map_files(config_map)
        except ValueError as exc:
            raise SourcesNotReady(f'ConfigMap "{name}" has bad binaryData: {exc}') from exc

    # ------------------------------------------------------------------ Submitted → Running → final
    async def _follow(self, key: str, job: Obj, view: GPUJobView, site: SlurmSite) -> None:
        status = job.get("status") or {}
        job_id = str(status["jobID"])
        work_dir = status.get("workDir") or site.job_dir(view.meta.uid)
        info = await site.job_info(job_id)
        if info is None:
            code = await site.exit_code(work_dir)
            if code is None:
                info = slurm.JobInfo(job_id, "FAILED", reason="JobLost")
            else:
                info = slurm.JobInfo(job_id, "COMPLETED" if code == 0 else "FAILED", exit_code=code)
        phase, reason = info.phase()
        patch: Obj = {"slurmState": info.base_state, "slurmReason": info.reason or None}
        off = site.utc_offset
        for field, value in (("submitTime", info.submit_time), ("startTime", info.start_time)):
            converted = slurm.site_time_to_rfc3339(value, off)
            if converted:
                patch[field] = converted
        if info.partition:
            patch["partition"] = info.partition
        if not info.is_final:
            patch["phase"] = phase
            changed = any(status.get(k) != v for k, v in patch.items())
            if changed:
                await self._patch_status(job, patch)
                if phase == RUNNING and status.get("phase") != RUNNING:
                    self.event(job, "Normal", "Started", f"Slurm job {job_id} is {info.base_state}")
                elif status.get("slurmReason") != patch["slurmReason"] and info.reason:
                    self.event(job, "Normal", "Waiting", f"Slurm job {job_id} is {info.base_state} ({info.reason})")
            self._schedule_poll(key, changed)
            return
        await self._complete(job, view, info, phase, reason, work_dir, site, patch)
        self._forget(key)

    async def _complete(self, job: Obj, view: GPUJobView, info: slurm.JobInfo, phase: str, reason: str,
                        work_dir: str, site: SlurmSite, patch: Obj) -> None:
        """Fetch the outputs of a finished job, keep them, write the final status, clean up."""
        o = self.options
        job_id = info.job_id
        globs = list(view.result_files)
        outputs = await site.fetch(work_dir, job_id, globs, o.output_limit, o.results_budget)
        patch.update({"phase": phase, "reason": reason, "exitCode": info.exit_code,
                      "stdoutTail": tail(outputs.stdout, o.tail_bytes),
                      "stderrTail": tail(outputs.stderr, o.tail_bytes),
                      "completionTime": slurm.site_time_to_rfc3339(info.end_time, site.utc_offset) or now_rfc3339()})
        stored = await self._store_results(job, outputs)
        patch.update(stored)
        if phase == SUCCEEDED:
            patch["message"] = f"Slurm job {job_id} COMPLETED"
        else:
            last = tail(outputs.stderr, 500, 3) or tail(outputs.stdout, 500, 3)
            code = f" (exit code {info.exit_code})" if info.exit_code else ""
            why = f"Slurm job {job_id} {info.base_state}{code}"
            if info.reason == "JobLost":
                why = f"Slurm has no record of job {job_id} (finished longer than MinJobAge ago, no accounting) " \
                      f"and it left no exit code"
            patch["message"] = f"{why}: {last}" if last else why
        await self._finish(job, view, patch)
        self.event(job, "Normal" if phase == SUCCEEDED else "Warning", reason, str(patch["message"])[:1024])
        kept = [r for r in stored.get("results") or [] if r.get("key")]
        if stored.get("resultsConfigMap"):
            self.event(job, "Normal", "ResultsFetched",
                       f"Fetched stdout, stderr and {len(kept)} result file(s) into ConfigMap "
                       f"{stored['resultsConfigMap']}")

    async def _store_results(self, job: Obj, outputs: Any) -> Obj:
        """Create or replace the results ConfigMap; returns the status fields that describe it."""
        config_map, entries = build_results(job, outputs, self.options.results_budget)
        meta = job["metadata"]
        name = results_config_map_name(str(meta.get("name")))
        try:
            cm_rt = self.client.kind("v1", "ConfigMap")
        except errors.NotFound:
            for entry in entries:
                entry.pop("key", None)
                entry["message"] = "not kept: this apiserver serves no ConfigMaps"
            return {"results": entries}
        try:
            await self.client.create(cm_rt, config_map, meta.get("namespace"))
        except errors.AlreadyExists:
            current = await self.client.get(cm_rt, name, meta.get("namespace"))
            if not owned_by(current, str(meta.get("uid"))):
                for entry in entries:
                    entry.pop("key", None)
                    entry["message"] = f'not kept: ConfigMap "{name}" exists and belongs to something else'
                return {"results": entries}
            config_map["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
            await self.client.update(cm_rt, config_map)
        return {"results": entries, "resultsConfigMap": name}

    async def _finish(self, job: Obj, view: GPUJobView, patch: Obj) -> None:
        """Write a final status, then remove the remote directory (best effort; retried later)."""
        await self._patch_status(job, patch)
        await self._clean_finished(job, view, force=True)

    async def _clean_finished(self, job: Obj, view: GPUJobView, force: bool = False) -> None:
        """Remove a finished job's remote directory once (``status.cleanedUp``)."""
        status = job.get("status") or {}
        if status.get("cleanedUp") and not force:
            return
        cluster_name = view.cluster
        cluster = self.clusters.informer.get(cluster_name)
        if cluster is None:
            return
        try:
            site = await self._site(cluster_name, cluster)
            await site.cleanup(status.get("workDir") or site.job_dir(view.meta.uid))
        except SiteError as exc:
            self.log.info("%s: cleanup of %s postponed: %s", self.name, _key(job), exc)
            if connection_lost(exc):
                await self.sites.drop(cluster_name)
            return
        await self._patch_status(job, {"cleanedUp": True})

    # ------------------------------------------------------------------ deletion
    async def _finalize(self, key: str, job: Obj, view: GPUJobView) -> None:
        """A deleted GPUJob: scancel its queued or running Slurm job, clean up, drop the finalizer.

        While the Slurm job may still run and the site cannot be reached, the finalizer stays
        (retried with back-off): a job must not be left running unseen.  Without its
        SlurmCluster object there is nothing to reach and the finalizer goes at once.
        """
        meta = job["metadata"]
        if FINALIZER not in (meta.get("finalizers") or []):
            return
        status = job.get("status") or {}
        cluster_name = view.cluster
        cluster = self.clusters.informer.get(cluster_name)
        active = not is_terminal(status.get("phase"))
        if cluster is not None and (active or not status.get("cleanedUp")):
            try:
                site = await self._site(cluster_name, cluster)
                uid = view.meta.uid
                work_dir = status.get("workDir") or site.job_dir(uid)
                job_id = status.get("jobID")
                if active and not job_id:
                    identity = slurm.JobIdentity(view.meta.namespace, view.meta.name, uid)
                    job_id = await site.find_job(work_dir, identity)
                if active and job_id:
                    await site.cancel(str(job_id))
                    self.event(job, "Normal", "Cancelled", f"scancel {job_id}: the GPUJob was deleted")
                if not status.get("cleanedUp"):
                    await site.cleanup(work_dir)
            except SiteError as exc:
                if active and (status.get("jobID") or exc.is_connection_error):
                    if connection_lost(exc):
                        await self.sites.drop(cluster_name)
                    self.event(job, "Warning", "CancelFailed", f"cannot cancel the Slurm job yet: {exc.message}")
                    raise
                self.log.info("%s: cleanup of deleted %s skipped: %s", self.name, key, exc)
        await self._remove_finalizer(job)
        self._forget(key)

    # ------------------------------------------------------------------ writes
    async def _patch_status(self, job: Obj, status: Obj) -> None:
        meta = job["metadata"]
        try:
            updated = await self.client.patch(self.rt, meta["name"], {"status": status}, meta.get("namespace"),
                                              subresource="status")
        except errors.NotFound:
            return
        job["status"] = updated.get("status") or {}
        job["metadata"] = updated.get("metadata") or meta

    async def _add_finalizer(self, job: Obj) -> Obj:
        meta = job["metadata"]
        finalizers = [*(meta.get("finalizers") or []), FINALIZER]
        patch = {"metadata": {"finalizers": finalizers, "resourceVersion": meta.get("resourceVersion")}}
        updated: Obj = await self.client.patch(self.rt, meta["name"], patch, meta.get("namespace"))
        return updated

    async def _remove_finalizer(self, job: Obj) -> None:
        meta = job["metadata"]
        finalizers = [f for f in meta.get("finalizers") or [] if f != FINALIZER]
        patch = {"metadata": {"finalizers": finalizers or None, "resourceVersion": meta.get("resourceVersion")}}
        try:
            await self.client.patch(self.rt, meta["name"], patch, meta.get("namespace"))
        except errors.NotFound:
            pass


def _key(obj: Obj) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace')}/{meta.get('name')}"


def _name(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")
