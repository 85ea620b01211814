"""``kubectl describe`` for the batch kinds: a Job and a CronJob in kubectl's layouts."""

from __future__ import annotations

import datetime as dt

from minik8s.api import columns as cols
from minik8s.api.base import Obj
from minik8s.api.columns import NONE
from minik8s.api.resourcetypes import ResourceType
from minik8s.kubectl.describe.shared import controlled_by, fetch_events
from minik8s.kubectl.printing import describe_time
from minik8s.kubectl.sections import (
    Writer,
    header,
    meta_of,
    text_of,
    write_annotations,
    write_events,
    write_labels,
    write_pod_template,
)
from minik8s.kubectl.session import Session


def _write_job_template_spec(w: Writer, spec: Obj) -> None:
    """A CronJob's job template lines (kubectl's ``describeJobTemplate``): Selector, Parallelism,
    Completions (``<unset>`` when absent), Active Deadline Seconds, then the pod template."""
    w.write(0, "Selector:\t" + (cols.format_selector(spec["selector"]) if spec.get("selector") else "<unset>"))
    w.write(0, f"Parallelism:\t{spec['parallelism'] if spec.get('parallelism') is not None else '<unset>'}")
    w.write(0, f"Completions:\t{spec['completions'] if spec.get('completions') is not None else '<unset>'}")
    if spec.get("activeDeadlineSeconds") is not None:
        w.write(0, f"Active Deadline Seconds:\t{spec['activeDeadlineSeconds']}s")
    write_pod_template(w, spec.get("template"))


def _cap_indexes(indexes: str, soft_limit: int = 50) -> str:
    """Completed indexes cut after the first comma past ``soft_limit`` characters (``...``), or ``<none>``."""
    if not indexes:
        return NONE
    cut = indexes.find(",", soft_limit)
    return indexes if cut == -1 else indexes[:cut + 1] + "..."


async def describe_job(s: Session, rt: ResourceType, job: Obj) -> str:
    """A Job in kubectl's layout: selector, counts and modes (each only when set), times, pod statuses, template,
    events (no conditions, as kubectl)."""
    meta, spec, status = meta_of(job), job.get("spec") or {}, job.get("status") or {}
    w = Writer()
    w.write(0, f"Name:\t{meta.get('name', '')}")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}")
    w.write(0, "Selector:\t" + cols.format_selector(spec.get("selector")))
    write_labels(w, "Labels", meta.get("labels"))
    write_annotations(w, "Annotations", meta.get("annotations"))
    if controlled_by(job):
        w.write(0, f"Controlled By:\t{controlled_by(job)}")
    if spec.get("parallelism") is not None:
        w.write(0, f"Parallelism:\t{spec['parallelism']}")
    w.write(0, f"Completions:\t{spec['completions'] if spec.get('completions') is not None else '<unset>'}")
    if spec.get("completionMode"):
        w.write(0, f"Completion Mode:\t{spec['completionMode']}")
    if spec.get("suspend") is not None:
        w.write(0, f"Suspend:\t{text_of(spec['suspend'])}")
    if spec.get("backoffLimit") is not None:
        w.write(0, f"Backoff Limit:\t{spec['backoffLimit']}")
    if spec.get("ttlSecondsAfterFinished") is not None:
        w.write(0, f"TTL Seconds After Finished:\t{spec['ttlSecondsAfterFinished']}")
    if status.get("startTime"):
        w.write(0, f"Start Time:\t{describe_time(status['startTime'])}")
    if status.get("completionTime"):
        w.write(0, f"Completed At:\t{describe_time(status['completionTime'])}")
    if status.get("startTime") and status.get("completionTime"):
        w.write(0, f"Duration:\t{cols.job_duration(job, dt.datetime.now(dt.UTC))}")
    if spec.get("activeDeadlineSeconds") is not None:
        w.write(0, f"Active Deadline Seconds:\t{spec['activeDeadlineSeconds']}s")
    ready = f" ({status['ready']} Ready)" if status.get("ready") is not None else ""
    w.write(0, f"Pods Statuses:\t{status.get('active') or 0} Active{ready} / "
               f"{status.get('succeeded') or 0} Succeeded / {status.get('failed') or 0} Failed")
    if spec.get("completionMode") == "Indexed":
        w.write(0, f"Completed Indexes:\t{_cap_indexes(status.get('completedIndexes') or '')}")
    write_pod_template(w, spec.get("template"))
    write_events(w, await fetch_events(s, job, rt))
    return w.text()


async def describe_cronjob(s: Session, rt: ResourceType, cj: Obj) -> str:
    """A CronJob in kubectl's layout: schedule, policies, limits, the job template, active jobs, events."""
    meta, spec, status = meta_of(cj), cj.get("spec") or {}, cj.get("status") or {}
    w = header(meta)
    w.write(0, f"Schedule:\t{spec.get('schedule', '')}")
    w.write(0, f"Concurrency Policy:\t{spec.get('concurrencyPolicy') or ''}")
    suspend = spec.get("suspend")
    w.write(0, f"Suspend:\t{'<unset>' if suspend is None else ('True' if suspend else 'False')}")
    for key, label in (("successfulJobsHistoryLimit", "Successful Job History Limit"),
                       ("failedJobsHistoryLimit", "Failed Job History Limit")):
        w.write(0, f"{label}:\t{spec[key] if spec.get(key) is not None else '<unset>'}")
    deadline = spec.get("startingDeadlineSeconds")
    w.write(0, f"Starting Deadline Seconds:\t{f'{deadline}s' if deadline is not None else '<unset>'}")
    _write_job_template_spec(w, (spec.get("jobTemplate") or {}).get("spec") or {})
    last = status.get("lastScheduleTime")
    w.write(0, f"Last Schedule Time:\t{describe_time(last) if last else '<unset>'}")
    w.write(0, "Active Jobs:\t" + (", ".join(str(r.get("name")) for r in status.get("active") or []) or NONE))
    write_events(w, await fetch_events(s, cj, rt))
    return w.text()
