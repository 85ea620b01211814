"""GPU jobs on Slurm (``minik8s.io/v1``): the ``SlurmCluster`` and ``GPUJob`` kinds.

A **SlurmCluster** (cluster-scoped) names an HPC login node reached over SSH::

    apiVersion: minik8s.io/v1
    kind: SlurmCluster
    metadata: {name: dgx}
    spec:
      host: login.hpc.example.edu
      port: 22                                   # default 22
      user: alice
      secretRef: {name: hpc-ssh, namespace: default}   # a kubernetes.io/ssh-auth Secret:
                                                 # ssh-privatekey + known_hosts
      workDir: minik8s-jobs                      # default; relative to the user's home
      defaultPartition: dgx2                     # used by GPUJobs that name no partition

Its controller checks it periodically (SSH login + ``sinfo``) and writes ``status``: the
``Reachable`` condition, ``slurmVersion``, ``accounting`` (whether ``sacct`` has a database
behind it) and ``partitions`` with their node, CPU and GPU counts.

A **GPUJob** (namespaced) is a CUDA program plus Slurm settings::

    apiVersion: minik8s.io/v1
    kind: GPUJob
    metadata: {name: matmul}
    spec:
      cluster: dgx
      sources:
        files: {matmul.cu: "..."}                # inline files (relative paths), or
        configMapRef: {name: matmul-src}         # the keys of a ConfigMap as file names
      build: nvcc -O2 -o app *.cu                # default; run on the login node ("" = none)
      run: {command: [./app], args: ["1024"]}    # default command ./app
      slurm:
        partition: dgx2                          # default: the cluster's defaultPartition
        gpus: 1                                  # --gres=gpu:N (default 1)
        cpusPerTask: 1                           # --cpus-per-task (default 1)
        ntasks: 1                                # --ntasks (default 1)
        nodes: 1                                 # --nodes (default 1)
        memory: 2Gi                              # --mem, a quantity (optional)
        timeLimit: "00:10:00"                    # --time, Slurm's format (optional)
        account: proj42                          # --account (optional)
        qos: normal                              # --qos (optional)
      resultFiles: ["*.txt", "out/*.csv"]        # globs (relative to the job's directory)

``status.phase`` goes Pending → Submitted → Running → Succeeded / Failed / Cancelled;
``jobID``, ``slurmState`` and ``slurmReason`` are Slurm's (e.g. ``PENDING`` with
``Resources``), times are RFC 3339, ``exitCode`` is the batch script's exit status, and
``stdoutTail`` / ``stderrTail`` hold the last lines of the job's output.  The whole output
and the result files are kept in a ConfigMap named by ``status.resultsConfigMap`` (owned
by the GPUJob, so it goes away with it); ``status.results`` lists what was brought back.
"""

from __future__ import annotations

import base64
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from minik8s.api.meta import Condition, MetaView, TypedObject
from minik8s.api.model import Model

GROUP = "minik8s.io"
API_VERSION = f"{GROUP}/v1"

# ---------------------------------------------------------------- phases, reasons, names
PENDING = "Pending"
SUBMITTED = "Submitted"
RUNNING = "Running"
SUCCEEDED = "Succeeded"
FAILED = "Failed"
CANCELLED = "Cancelled"
PHASES = (PENDING, SUBMITTED, RUNNING, SUCCEEDED, FAILED, CANCELLED)
TERMINAL_PHASES = frozenset({SUCCEEDED, FAILED, CANCELLED})

#: Finalizer the controller puts on every GPUJob: deleting a submitted job runs ``scancel``
#: (and cleans the remote work directory) before the object goes away.
FINALIZER = "minik8s.io/slurm-job"
#: The Secret type a SlurmCluster's ``secretRef`` names (Kubernetes' ``SecretTypeSSHAuth``).
SSH_AUTH_SECRET_TYPE = "kubernetes.io/ssh-auth"
SSH_PRIVATE_KEY = "ssh-privatekey"
KNOWN_HOSTS = "known_hosts"
#: The build command when ``spec.build`` is not given.
DEFAULT_BUILD = "nvcc -O2 -o app *.cu"
DEFAULT_RUN_COMMAND = ("./app",)
DEFAULT_WORK_DIR = "minik8s-jobs"
#: The results ConfigMap (``status.resultsConfigMap``): its label (the GPUJob's name) and the keys
#: of the job's stdout and stderr; result files are under the keys ``status.results`` names.
GPUJOB_LABEL = "minik8s.io/gpujob"
STDOUT_KEY = "stdout"
STDERR_KEY = "stderr"
#: Condition types.
REACHABLE = "Reachable"          # SlurmCluster: SSH login + sinfo work
CLUSTER_REACHABLE = "ClusterReachable"  # GPUJob: its cluster could be reached for this job


# ---------------------------------------------------------------- SlurmCluster
class SecretReference(Model):
    """``corev1.SecretReference``: a Secret by name and namespace (cluster-scoped objects need both)."""

    name: str | None = None
    namespace: str | None = None


class SlurmClusterSpec(Model):
    host: str
    port: int | None = None
    user: str
    secret_ref: SecretReference
    work_dir: str | None = None
    default_partition: str | None = None


class SlurmPartition(Model):
    """One partition as ``sinfo`` reports it: ``gpus`` is the sum of the nodes' ``gpu`` GRES."""

    name: str
    default: bool | None = None
    state: str | None = None
    nodes: int | None = None
    cpus: int | None = None
    gpus: int | None = None


class SlurmClusterStatus(Model):
    conditions: list[Condition] | None = None
    slurm_version: str | None = None
    accounting: bool | None = None
    partitions: list[SlurmPartition] | None = None
    last_check_time: str | None = None


class SlurmCluster(TypedObject):
    spec: SlurmClusterSpec
    status: SlurmClusterStatus | None = None


# ---------------------------------------------------------------- GPUJob
class LocalObjectReference(Model):
    name: str | None = None


class GPUJobSources(Model):
    """``files`` (relative path → text) or ``configMapRef`` (each key of the ConfigMap a file)."""

    files: dict[str, str] | None = None
    config_map_ref: LocalObjectReference | None = None


class GPUJobRun(Model):
    command: list[str] | None = None
    args: list[str] | None = None


class SlurmSettings(Model):
    """The ``#SBATCH`` options: ``memory`` is a Kubernetes quantity (bytes), ``timeLimit`` Slurm's
    ``[days-]hours:minutes:seconds`` / ``minutes`` format."""

    partition: str | None = None
    gpus: int | None = None
    cpus_per_task: int | None = None
    ntasks: int | None = None
    nodes: int | None = None
    memory: str | None = None
    time_limit: str | None = None
    account: str | None = None
    qos: str | None = None


class GPUJobSpec(Model):
    cluster: str
    sources: GPUJobSources | None = None
    build: str | None = None
    run: GPUJobRun | None = None
    slurm: SlurmSettings | None = None
    result_files: list[str] | None = None


class ResultFile(Model):
    """One file brought back: its ``path`` in the job's directory, ``size`` in bytes, and the
    ``key`` of the results ConfigMap that holds it (absent when it was too large to keep)."""

    path: str
    size: int
    key: str | None = None
    message: str | None = None


class GPUJobStatus(Model):
    phase: str | None = None
    reason: str | None = None
    message: str | None = None
    conditions: list[Condition] | None = None
    job_id: str | None = Field(default=None, alias="jobID")
    slurm_state: str | None = None
    slurm_reason: str | None = None
    partition: str | None = None
    work_dir: str | None = None
    submit_time: str | None = None
    start_time: str | None = None
    completion_time: str | None = None
    exit_code: int | None = None
    stdout_tail: str | None = None
    stderr_tail: str | None = None
    build_log: str | None = None
    batch_script: str | None = None
    results: list[ResultFile] | None = None
    results_config_map: str | None = None
    cleaned_up: bool | None = None


class GPUJob(TypedObject):
    spec: GPUJobSpec
    status: GPUJobStatus | None = None


@dataclass(frozen=True, slots=True)
class GPUJobView:
    """What the GPUJob controller reads of a wire-form GPUJob's spec, read once at the top of a sync
    (its status changes with every patch of the sync, so it is read where used).

    ``cluster`` and ``build`` are ``""`` when unset; ``partition`` is ``spec.slurm.partition`` (None:
    the cluster's default); ``source_files`` the inline files (None when the sources are a
    ConfigMap, ``source_config_map`` its name); ``result_files`` the globs of ``resultFiles``.
    """

    meta: MetaView
    cluster: str
    build: str
    partition: str | None
    source_files: Mapping[str, str] | None
    source_config_map: str
    result_files: tuple[str, ...]

    @classmethod
    def of(cls, job: Mapping[str, Any]) -> GPUJobView:
        spec = job.get("spec") or {}
        sources = spec.get("sources") or {}
        return cls(MetaView.of(job), str(spec.get("cluster") or ""), str(spec.get("build") or ""),
                   (spec.get("slurm") or {}).get("partition") or None, sources.get("files") or None,
                   str((sources.get("configMapRef") or {}).get("name") or ""),
                   tuple(str(g) for g in spec.get("resultFiles") or ()))


def is_terminal(phase: str | None) -> bool:
    """Whether ``phase`` is Succeeded, Failed or Cancelled."""
    return phase in TERMINAL_PHASES


# ---------------------------------------------------------------- rules the apiserver validates
_TIME_LIMIT_RE = re.compile(r"\d+|\d+:\d{1,2}|\d+:\d{1,2}:\d{1,2}|\d+-\d+(:\d{1,2}(:\d{1,2})?)?")
_SLURM_NAME_RE = re.compile(r"[A-Za-z0-9_.\-]+")
_USER_RE = re.compile(r"[a-z_][a-z0-9_.\-]*\$?", re.IGNORECASE)


def time_limit_errors(value: str) -> list[str]:
    """Slurm's ``--time`` formats: ``minutes``, ``minutes:seconds``, ``hours:minutes:seconds``,
    ``days-hours``, ``days-hours:minutes``, ``days-hours:minutes:seconds``, or ``UNLIMITED``."""
    if value.upper() in ("UNLIMITED", "INFINITE") or _TIME_LIMIT_RE.fullmatch(value):
        return []
    return ["must be a Slurm time limit: minutes, minutes:seconds, hours:minutes:seconds, days-hours, "
            "days-hours:minutes or days-hours:minutes:seconds (e.g. '30', '01:00:00', '2-00:00:00')"]


def slurm_name_errors(value: str) -> list[str]:
    """Partition, account and QOS names: letters, digits, ``_``, ``.`` and ``-``."""
    return [] if _SLURM_NAME_RE.fullmatch(value) else ["must consist of letters, digits, '_', '.' or '-'"]


def user_name_errors(value: str) -> list[str]:
    """A POSIX login name (at most 32 characters of letters, digits, ``_``, ``.``, ``-``)."""
    if len(value) > 32:
        return ["must be no more than 32 characters"]
    return [] if _USER_RE.fullmatch(value) else ["must be a login name: letters, digits, '_', '.' or '-', "
                                                 "not starting with a digit or '-'"]


def relative_path_errors(value: str, glob: bool = False) -> list[str]:
    """A path inside the job's directory: relative, ``/``-separated, without ``..`` or empty
    segments, no control characters; ``glob`` allows ``*``, ``?`` and ``[...]``."""
    if not value:
        return ["must be non-empty"]
    if value.startswith("/"):
        return ["must be a relative path"]
    if any(ord(ch) < 32 or ch == "\x7f" for ch in value):
        return ["must not contain control characters"]
    parts = value.split("/")
    if ".." in parts:
        return ["must not contain '..'"]
    if any(p == "" for p in parts[:-1]) or parts[-1] in ("", "."):
        return ["must name a file (no empty segments, no trailing '/')"]
    if not glob and any(ch in value for ch in "*?["):
        return ["must not contain glob characters (* ? [)"]
    if posixpath.normpath(value).startswith(".."):
        return ["must stay inside the job's directory"]
    return []


def config_map_files(config_map: dict[str, Any]) -> dict[str, bytes]:
    """Every key of a wire-form ConfigMap as bytes (``data`` UTF-8 encoded, ``binaryData``
    base64-decoded). Raises ValueError for bad base64."""
    files = {str(k): str(v).encode() for k, v in (config_map.get("data") or {}).items()}
    for key, value in (config_map.get("binaryData") or {}).items():
        files[str(key)] = base64.b64decode(str(value), validate=True)
    return files
