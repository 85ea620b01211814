"""``kubectl describe gpujob``: a GPUJob's spec, Slurm state, results, batch script, build log and output tails."""

from __future__ import annotations

from minik8s.api.base import Obj
from minik8s.api.columns import NONE
from minik8s.api.resourcetypes import ResourceType
from minik8s.kubectl.describe.shared import fetch_events, write_conditions
from minik8s.kubectl.printing import describe_time
from minik8s.kubectl.sections import Writer, header, meta_of, write_events
from minik8s.kubectl.session import Session


def _write_block(w: Writer, title: str, text: str | None) -> None:
    """``Title:`` then the text's lines indented verbatim (``<none>`` when empty)."""
    if not text:
        w.write(0, f"{title}:\t{NONE}")
        return
    w.write(0, f"{title}:")
    w.verbatim("\n".join("  " + line for line in text.rstrip("\n").splitlines()))


async def describe_gpujob(s: Session, rt: ResourceType, job: Obj) -> str:
    """A GPUJob: cluster, phase, Slurm job (id, state, reason), times, exit code, results, the
    generated batch script, the build log, the output tails, conditions and events."""
    meta, spec, status = meta_of(job), job.get("spec") or {}, job.get("status") or {}
    slurm = spec.get("slurm") or {}
    w = header(meta)
    w.write(0, f"Cluster:\t{spec.get('cluster', '')}")
    sources = spec.get("sources") or {}
    if sources.get("configMapRef"):
        w.write(0, f"Sources:\tConfigMap {sources['configMapRef'].get('name')}")
    else:
        w.write(0, "Sources:\t" + (", ".join(sorted(sources.get("files") or {})) or NONE))
    w.write(0, f"Build:\t{spec.get('build') or NONE}")
    run = spec.get("run") or {}
    w.write(0, "Run:\t" + " ".join([*(run.get("command") or []), *(run.get("args") or [])]))
    w.write(0, "Slurm:\t" + (", ".join(f"{k}={slurm[k]}" for k in sorted(slurm)) or NONE))
    w.write(0, "Result Files:\t" + (", ".join(spec.get("resultFiles") or []) or NONE))
    w.write(0, f"Phase:\t{status.get('phase') or 'Pending'}")
    for key, title in (("reason", "Reason"), ("message", "Message")):
        if status.get(key):
            w.write(0, f"{title}:\t{status[key]}")
    w.write(0, f"Slurm Job ID:\t{status.get('jobID') or NONE}")
    state = status.get("slurmState") or NONE
    w.write(0, f"Slurm State:\t{state}" + (f" ({status['slurmReason']})" if status.get("slurmReason") else ""))
    w.write(0, f"Partition:\t{status.get('partition') or slurm.get('partition') or NONE}")
    w.write(0, f"Work Dir:\t{status.get('workDir') or NONE}")
    for key, title in (("submitTime", "Submit Time"), ("startTime", "Start Time"),
                       ("completionTime", "Completion Time")):
        w.write(0, f"{title}:\t{describe_time(status[key]) if status.get(key) else NONE}")
    w.write(0, f"Exit Code:\t{status['exitCode'] if status.get('exitCode') is not None else NONE}")
    if status.get("results") is not None:
        w.write(0, f"Results:\tConfigMap {status.get('resultsConfigMap') or NONE}")
        for r in status.get("results") or []:
            kept = f"key {r['key']}" if r.get("key") else r.get("message", "not kept")
            w.write(1, f"{r.get('path')}\t{r.get('size')} bytes\t{kept}")
    if status.get("conditions"):
        w.flush()
        write_conditions(w, status["conditions"])
    _write_block(w, "Batch Script", status.get("batchScript"))
    _write_block(w, "Build Log", status.get("buildLog"))
    _write_block(w, "Stdout (tail)", status.get("stdoutTail"))
    _write_block(w, "Stderr (tail)", status.get("stderrTail"))
    write_events(w, await fetch_events(s, job, rt))
    return w.text()
