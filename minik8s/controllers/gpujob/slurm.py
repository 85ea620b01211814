"""Slurm's side, as text: the ``#SBATCH`` script of a GPUJob and the parsing of what
``sbatch``, ``squeue``, ``scontrol show job``, ``sacct`` and ``sinfo`` print.

Pure functions, no I/O: :mod:`.site` runs the commands over SSH and hands their output here.
The formats are those of Slurm 20.11 and later (``scontrol -o`` one-line ``Key=Value``
records, ``squeue``/``sinfo``/``sacct`` with explicit ``--format`` strings separated by
``|``).  Job states are Slurm's base states (``JOB_STATE_BASE``): flags such as
``COMPLETING`` stay visible but are not mistaken for a final state.
"""

from __future__ import annotations

import datetime as dt
import re
import shlex
from dataclasses import dataclass, field

from minik8s.api.base import Obj
from minik8s.api.gpujobs import CANCELLED, FAILED, RUNNING, SUBMITTED, SUCCEEDED
from minik8s.api.quantity import parse_quantity

#: Prefix of ``--comment``: the GPUJob's uid follows, so the job can be found again.
COMMENT_PREFIX = "minik8s-gpujob-uid="
#: Names of the files the batch script writes in the job's directory.
SCRIPT_NAME = "job.sbatch"
JOB_ID_FILE = ".minik8s-jobid"
EXIT_CODE_FILE = ".minik8s-exitcode"
STDOUT_PATTERN = "slurm-%j.out"
STDERR_PATTERN = "slurm-%j.err"

#: Slurm states of a job that is waiting or running (``squeue --states``).
PENDING_STATES = frozenset({"PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_FED", "REQUEUE_HOLD", "RESIZING",
                            "SUSPENDED", "STOPPED", "SIGNALING", "SPECIAL_EXIT"})
RUNNING_STATES = frozenset({"RUNNING", "COMPLETING", "STAGE_OUT"})
#: Final states and the GPUJob phase and reason each gives.
FINAL_STATES: dict[str, tuple[str, str]] = {
    "COMPLETED": (SUCCEEDED, "Completed"),
    "FAILED": (FAILED, "Failed"),
    "TIMEOUT": (FAILED, "Timeout"),
    "OUT_OF_MEMORY": (FAILED, "OutOfMemory"),
    "CANCELLED": (CANCELLED, "Cancelled"),
    "NODE_FAIL": (FAILED, "NodeFail"),
    "BOOT_FAIL": (FAILED, "BootFail"),
    "DEADLINE": (FAILED, "Deadline"),
    "PREEMPTED": (FAILED, "Preempted"),
    "REVOKED": (FAILED, "Revoked"),
}



class ParseError(ValueError):
    """Slurm printed something this module does not understand."""


# ---------------------------------------------------------------- quantities
def memory_megabytes(quantity: str | int) -> int:
    """A Kubernetes memory quantity as Slurm's ``--mem`` value in MiB (rounded up, at least 1)."""
    value = parse_quantity(str(quantity))
    mib = -(-int(value) // (1024 * 1024))
    return max(mib, 1)


# ---------------------------------------------------------------- the batch script
@dataclass(frozen=True)
class JobIdentity:
    """Who the job belongs to: the GPUJob's namespace, name and uid."""

    namespace: str
    name: str
    uid: str

    @property
    def comment(self) -> str:
        """``--comment`` value: :data:`COMMENT_PREFIX` + uid (how a job is found after a restart)."""
        return f"{COMMENT_PREFIX}{self.uid}"

    @property
    def job_name(self) -> str:
        """``--job-name``: ``<namespace>.<name>`` (what ``squeue`` shows)."""
        return f"{self.namespace}.{self.name}"


def sbatch_options(spec: Obj, default_partition: str | None, identity: JobIdentity, work_dir: str) -> list[str]:
    """The ``--option=value`` list of the job, in a stable order (wire-form ``spec``).

    ``--gres=gpu:N`` is left out for ``gpus: 0``; ``--mem`` is in MiB; output and error go
    to ``slurm-<jobid>.out`` / ``.err`` in ``work_dir``.
    """
    slurm = spec.get("slurm") or {}
    opts = [f"--job-name={identity.job_name}", f"--comment={identity.comment}"]
    partition = slurm.get("partition") or default_partition
    if partition:
        opts.append(f"--partition={partition}")
    gpus = slurm.get("gpus", 1)
    if gpus:
        opts.append(f"--gres=gpu:{int(gpus)}")
    opts.append(f"--nodes={int(slurm.get('nodes') or 1)}")
    opts.append(f"--ntasks={int(slurm.get('ntasks') or 1)}")
    opts.append(f"--cpus-per-task={int(slurm.get('cpusPerTask') or 1)}")
    if slurm.get("memory") not in (None, ""):
        opts.append(f"--mem={memory_megabytes(slurm['memory'])}M")
    if slurm.get("timeLimit"):
        opts.append(f"--time={slurm['timeLimit']}")
    if slurm.get("account"):
        opts.append(f"--account={slurm['account']}")
    if slurm.get("qos"):
        opts.append(f"--qos={slurm['qos']}")
    opts.append(f"--chdir={work_dir}")
    opts.append(f"--output={work_dir}/{STDOUT_PATTERN}")
    opts.append(f"--error={work_dir}/{STDERR_PATTERN}")
    return opts


def run_command(spec: Obj) -> list[str]:
    """``spec.run.command`` + ``spec.run.args`` (default command ``./app``)."""
    run = spec.get("run") or {}
    return [str(a) for a in (run.get("command") or ["./app"])] + [str(a) for a in (run.get("args") or [])]


def batch_script(spec: Obj, default_partition: str | None, identity: JobIdentity, work_dir: str) -> str:
    """The whole ``#SBATCH`` script for a GPUJob (wire-form ``spec``), run in ``work_dir``.

    The program's exit status becomes the job's; it is also written to
    :data:`EXIT_CODE_FILE`, so the outcome is known even after Slurm forgot the job (sites
    without accounting keep finished jobs only ``MinJobAge`` seconds).
    """
    lines = ["#!/bin/bash"]
    lines += [f"#SBATCH {opt}" for opt in sbatch_options(spec, default_partition, identity, work_dir)]
    lines += [
        f"# Generated by minik8s for GPUJob {identity.namespace}/{identity.name} (uid {identity.uid}).",
        f"cd {shlex.quote(work_dir)} || exit 1",
        shlex.join(run_command(spec)),
        "rc=$?",
        f"echo \"$rc\" > {EXIT_CODE_FILE}",
        "exit \"$rc\"",
    ]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- sbatch
_SBATCH_ID_RE = re.compile(r"^(\d+)(;\S+)?$")
_SBATCH_TEXT_RE = re.compile(r"Submitted batch job (\d+)")


def parse_sbatch(stdout: str) -> str:
    """The job id from ``sbatch --parsable`` (``123`` or ``123;cluster``) or plain ``sbatch``
    (``Submitted batch job 123``).  Raises ParseError."""
    for line in stdout.splitlines():
        line = line.strip()
        m = _SBATCH_ID_RE.match(line) or _SBATCH_TEXT_RE.search(line)
        if m:
            return m.group(1)
    raise ParseError(f"sbatch printed no job id: {stdout.strip()[:200]!r}")


#: sbatch failures that are worth retrying (the controller was busy or unreachable), unlike
#: a rejected script (invalid partition, too many GPUs, ...).
TRANSIENT_SBATCH_ERRORS = ("Unable to contact slurm controller", "Socket timed out", "temporarily unable",
                           "Resource temporarily unavailable", "Zero Bytes were transmitted",
                           "Slurm backup controller in standby mode")


def sbatch_error_is_transient(stderr: str) -> bool:
    return any(marker.lower() in stderr.lower() for marker in TRANSIENT_SBATCH_ERRORS)


def sbatch_message(stderr: str) -> str:
    """The useful part of sbatch's error output (its ``error:`` lines, joined)."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    errors = [ln for ln in lines if "error" in ln.lower()]
    return "; ".join(errors or lines)[:1000]


# ---------------------------------------------------------------- scontrol show job -o
_KV_RE = re.compile(r"(?:^|\s)([A-Za-z][A-Za-z0-9_:/]*)=")


def parse_key_values(line: str) -> dict[str, str]:
    """``Key=Value Key2=Value with spaces`` (``scontrol -o``) → dict.

    Values run to the next `` Key=``; a value may hold ``=`` (``TRES=cpu=1,mem=1G``) and
    spaces (``Command=/path/a b``).
    """
    matches = list(_KV_RE.finditer(line))
    out: dict[str, str] = {}
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(line)
        out[m.group(1)] = line[m.end():end].strip()
    return out


@dataclass
class JobInfo:
    """What Slurm knows about one job. Times are the site's local time, as printed."""

    job_id: str
    state: str
    reason: str = ""
    exit_code: int | None = None
    signal: int | None = None
    submit_time: str | None = None
    start_time: str | None = None
    end_time: str | None = None
    partition: str | None = None
    name: str | None = None
    comment: str | None = None
    stdout_path: str | None = None
    stderr_path: str | None = None
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def base_state(self) -> str:
        """``CANCELLED by 1000`` → ``CANCELLED``; ``RUNNING+COMPLETING`` → ``RUNNING``."""
        return re.split(r"[\s+]", self.state.strip(), maxsplit=1)[0].upper() if self.state else ""

    @property
    def is_final(self) -> bool:
        return self.base_state in FINAL_STATES

    def phase(self) -> tuple[str, str]:
        """The GPUJob phase and reason of this state (Submitted/Running for active ones).

        A COMPLETED job whose exit code is not 0 (it cannot happen in Slurm, but accounting
        records may say so) is Failed.
        """
        base = self.base_state
        if base in FINAL_STATES:
            phase, reason = FINAL_STATES[base]
            if phase == SUCCEEDED and self.exit_code:
                return FAILED, "Failed"
            return phase, reason
        if base in RUNNING_STATES:
            return RUNNING, "Running"
        return SUBMITTED, "Pending" if base == "PENDING" else base.title()


def _none_if_unknown(value: str | None) -> str | None:
    if value in (None, "", "Unknown", "None", "(null)", "N/A"):
        return None
    return value


def parse_exit_code(value: str | None) -> tuple[int | None, int | None]:
    """Slurm's ``ExitCode=2:0`` (status:signal) → (2, 0)."""
    if not value:
        return None, None
    status, _, sig = value.partition(":")
    try:
        return int(status), int(sig or 0)
    except ValueError:
        return None, None


def parse_scontrol_job(text: str) -> JobInfo:
    """``scontrol -o show job ID`` (one line per job; the first is taken). Raises ParseError."""
    line = next((ln for ln in text.splitlines() if "JobId=" in ln), "")
    kv = parse_key_values(line)
    if "JobId" not in kv or "JobState" not in kv:
        raise ParseError(f"scontrol printed no job record: {text.strip()[:200]!r}")
    code, sig = parse_exit_code(kv.get("ExitCode"))
    reason = kv.get("Reason", "")
    return JobInfo(job_id=kv["JobId"], state=kv["JobState"], reason="" if reason == "None" else reason,
                   exit_code=code, signal=sig, submit_time=_none_if_unknown(kv.get("SubmitTime")),
                   start_time=_none_if_unknown(kv.get("StartTime")), end_time=_none_if_unknown(kv.get("EndTime")),
                   partition=kv.get("Partition"), name=kv.get("JobName"),
                   comment=_none_if_unknown(kv.get("Comment")),
                   stdout_path=kv.get("StdOut"), stderr_path=kv.get("StdErr"), extra=kv)


def job_gone(stderr: str) -> bool:
    """Whether ``scontrol``/``squeue`` said the job id is unknown (purged after ``MinJobAge``)."""
    return "Invalid job id" in stderr


# ---------------------------------------------------------------- squeue
#: ``squeue --format`` of :func:`parse_squeue`: id, state (long), reason, name, comment.
SQUEUE_FORMAT = "%i|%T|%r|%j|%k"


def parse_squeue(text: str) -> list[JobInfo]:
    """Lines of ``squeue --noheader --format='%i|%T|%r|%j|%k'``."""
    jobs: list[JobInfo] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        parts = line.split("|", 4)
        if len(parts) < 5:
            raise ParseError(f"unexpected squeue line: {line!r}")
        job_id, state, reason, name, comment = (p.strip() for p in parts)
        jobs.append(JobInfo(job_id=job_id, state=state, reason="" if reason == "None" else reason, name=name,
                            comment=_none_if_unknown(comment)))
    return jobs


# ---------------------------------------------------------------- sacct
#: ``sacct --format`` of :func:`parse_sacct`.
SACCT_FORMAT = "JobID,State,ExitCode,Submit,Start,End,Partition,JobName"


def parse_sacct(text: str, job_id: str) -> JobInfo | None:
    """``sacct --noheader --parsable2 --format=JobID,State,ExitCode,Submit,Start,End,Partition,JobName``:
    the line of the job allocation itself (not ``ID.batch`` steps); None when absent."""
    for line in text.splitlines():
        parts = line.strip().split("|")
        if len(parts) < 8 or parts[0] != job_id:
            continue
        code, sig = parse_exit_code(parts[2])
        return JobInfo(job_id=job_id, state=parts[1], exit_code=code, signal=sig,
                       submit_time=_none_if_unknown(parts[3]), start_time=_none_if_unknown(parts[4]),
                       end_time=_none_if_unknown(parts[5]), partition=parts[6], name=parts[7])
    return None


# ---------------------------------------------------------------- sinfo
SINFO_FORMAT = "%P|%a|%D|%c|%G"
_GPU_GRES_RE = re.compile(r"gpu(?::[A-Za-z0-9_.\-]+)?:(\d+)")


def gres_gpus(gres: str) -> int:
    """GPUs in a GRES string (``gpu:2``, ``gpu:a100:4(S:0-1)``, ``gpu:2,mps:100``); 0 for ``(null)``."""
    return sum(int(m.group(1)) for m in _GPU_GRES_RE.finditer(gres))


def parse_sinfo(text: str) -> list[Obj]:
    """``sinfo --noheader --format='%P|%a|%D|%c|%G'`` → partitions (wire-form ``SlurmPartition``).

    sinfo prints one line per partition and node configuration: nodes, CPUs and GPUs are
    summed per partition (``cpus`` = nodes × CPUs per node).  The default partition (``*``
    after its name) gets ``default: true``.
    """
    parts: dict[str, Obj] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        fields = [f.strip() for f in line.split("|")]
        if len(fields) < 5:
            raise ParseError(f"unexpected sinfo line: {line!r}")
        raw, avail, nodes_s, cpus_s, gres = fields[:5]
        default = raw.endswith("*")
        name = raw.rstrip("*")
        try:
            nodes = int(nodes_s)
            cpus = int(cpus_s.rstrip("+"))
        except ValueError as exc:
            raise ParseError(f"unexpected sinfo line: {line!r}") from exc
        entry = parts.setdefault(name, {"name": name, "default": default, "state": avail, "nodes": 0, "cpus": 0,
                                        "gpus": 0})
        entry["nodes"] += nodes
        entry["cpus"] += nodes * cpus
        entry["gpus"] += nodes * gres_gpus(gres)
    return list(parts.values())


_VERSION_RE = re.compile(r"slurm(?:-wlm)?\s+(\S+)", re.IGNORECASE)


def parse_version(text: str) -> str:
    """``sinfo --version`` (``slurm 22.05.8``) → ``22.05.8``. Raises ParseError."""
    m = _VERSION_RE.search(text)
    if not m:
        raise ParseError(f"sinfo --version printed no version: {text.strip()[:100]!r}")
    return m.group(1)


def accounting_enabled(config_text: str) -> bool:
    """From ``scontrol show config``: whether ``AccountingStorageType`` is more than
    ``accounting_storage/none`` (without slurmdbd ``sacct`` has no data)."""
    for line in config_text.splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "AccountingStorageType":
            return value.strip() not in ("", "accounting_storage/none", "(null)")
    return False


# ---------------------------------------------------------------- times
def site_time_to_rfc3339(value: str | None, utc_offset: dt.timedelta) -> str | None:
    """A Slurm timestamp (``2026-01-02T03:04:05``, the site's local time) → RFC 3339 UTC."""
    if not value:
        return None
    try:
        local = dt.datetime.strptime(value, "%Y-%m-%dT%H:%M:%S")
    except ValueError:
        return None
    return (local - utc_offset).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_utc_offset(text: str) -> dt.timedelta:
    """``date +%z`` (``+0100``, ``-0530``) → a timedelta; zero when unreadable."""
    m = re.search(r"([+-])(\d{2}):?(\d{2})", text)
    if not m:
        return dt.timedelta(0)
    delta = dt.timedelta(hours=int(m.group(2)), minutes=int(m.group(3)))
    return -delta if m.group(1) == "-" else delta


# ---------------------------------------------------------------- result globs
def glob_regex(pattern: str) -> re.Pattern[str]:
    """A glob over relative ``/`` paths: ``*`` and ``?`` stay within one path segment, ``**``
    crosses segments, ``[...]`` is a character class."""
    out = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            end = pattern.find("]", i + 1)
            if end == -1:
                out.append(re.escape(ch))
            else:
                body = pattern[i + 1:end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end
        else:
            out.append(re.escape(ch))
        i += 1
    return re.compile("".join(out))


def match_results(paths: list[str], globs: list[str]) -> list[str]:
    """The ``paths`` (relative, ``/``-separated) that one of ``globs`` matches, in order."""
    regexes = [glob_regex(g.lstrip("./") if g.startswith("./") else g) for g in globs]
    return [p for p in paths if any(r.fullmatch(p) for r in regexes)]
