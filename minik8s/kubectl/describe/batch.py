"""``kubectl describe`` for the batch kinds: a Job and a CronJob in kubectl's layouts."""

from __future__ import annotations

import datetime as dt

from minik8s.api import columns as cols
from minik8s.api.base import Obj
from minik8s.api.columns import NONE
from minik8s.api.resourcetypes import ResourceType
from minik8s.kubectl.describe.shared import controlled_by, fetch_events, write_conditions
from minik8s.kubectl.printing import describe_time
from minik8s.kubectl.sections import (
    Writer,
    header,
    meta_of,
    write_annotations,
    write_events,
    write_labels,
    write_pod_template,
)
from minik8s.kubectl.session import Session


def _write_job_spec(w: Writer, spec: Obj) -> None:
    """The JobSpec lines kubectl's Job describer prints (Parallelism ... Backoff Limit)."""
    w.write(0, f"Parallelism:\t{spec.get('parallelism', 1)}")
    w.write(0, f"Completions:\t{spec['completions'] if spec.get('completions') is not None else '<unset>'}")
    w.write(0, f"Completion Mode:\t{spec.get('completionMode') or 'NonIndexed'}")
    w.write(0, f"Suspend:\t{str(bool(spec.get('suspend'))).lower()}")
    w.write(0, f"Backoff Limit:\t{spec.get('backoffLimit', 6)}")
    if spec.get("activeDeadlineSeconds") is not None:
        w.write(0, f"Active Deadline Seconds:\t{spec['activeDeadlineSeconds']}s")
    if spec.get("ttlSecondsAfterFinished") is not None:
        w.write(0, f"TTL Seconds After Finished:\t{spec['ttlSecondsAfterFinished']}")


async def describe_job(s: Session, rt: ResourceType, job: Obj) -> str:
    """A Job in kubectl's layout: selector, counts and modes, times, pod statuses, template, conditions, events."""
    meta, spec, status = meta_of(job), job.get("spec") or {}, job.get("status") or {}
    w = Writer()
    w.write(0, f"Name:\t{meta.get('name', '')}")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}")
    w.write(0, "Selector:\t" + cols.format_selector(spec.get("selector")))
    write_labels(w, "Labels", meta.get("labels"))
    write_annotations(w, "Annotations", meta.get("annotations"))
    if controlled_by(job):
        w.write(0, f"Controlled By:\t{controlled_by(job)}")
    _write_job_spec(w, spec)
    if status.get("startTime"):
        w.write(0, f"Start Time:\t{describe_time(status['startTime'])}")
    if status.get("completionTime"):
        w.write(0, f"Completed At:\t{describe_time(status['completionTime'])}")
    duration = cols.job_duration(job, dt.datetime.now(dt.UTC))
    if duration and status.get("completionTime"):
        w.write(0, f"Duration:\t{duration}")
    w.write(0, f"Pods Statuses:\t{status.get('active') or 0} Active ({status.get('ready') or 0} Ready) / "
               f"{status.get('succeeded') or 0} Succeeded / {status.get('failed') or 0} Failed")
    if spec.get("completionMode") == "Indexed":
        w.write(0, f"Completed Indexes:\t{status.get('completedIndexes') or NONE}")
    write_pod_template(w, spec.get("template"))
    w.flush()
    write_conditions(w, status.get("conditions") or [])
    write_events(w, await fetch_events(s, job, rt))
    return w.text()


async def describe_cronjob(s: Session, rt: ResourceType, cj: Obj) -> str:
    """A CronJob in kubectl's layout: schedule, policies, limits, the job template, active jobs, events."""
    meta, spec, status = meta_of(cj), cj.get("spec") or {}, cj.get("status") or {}
    w = header(meta)
    w.write(0, f"Schedule:\t{spec.get('schedule', '')}")
    if spec.get("timeZone"):
        w.write(0, f"Time Zone:\t{spec['timeZone']}")
    w.write(0, f"Concurrency Policy:\t{spec.get('concurrencyPolicy') or 'Allow'}")
    w.write(0, f"Suspend:\t{str(bool(spec.get('suspend'))).lower()}")
    w.write(0, f"Successful Job History Limit:\t{spec.get('successfulJobsHistoryLimit', 3)}")
    w.write(0, f"Failed Job History Limit:\t{spec.get('failedJobsHistoryLimit', 1)}")
    deadline = spec.get("startingDeadlineSeconds")
    w.write(0, f"Starting Deadline Seconds:\t{f'{deadline}s' if deadline is not None else '<unset>'}")
    job_spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    _write_job_spec(w, job_spec)
    write_pod_template(w, job_spec.get("template"))
    w.flush()
    last = status.get("lastScheduleTime")
    w.write(0, f"Last Schedule Time:\t{describe_time(last) if last else '<unset>'}")
    w.write(0, "Active Jobs:\t" + (", ".join(str(r.get("name")) for r in status.get("active") or []) or NONE))
    write_events(w, await fetch_events(s, cj, rt))
    return w.text()
