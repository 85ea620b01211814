"""A Slurm site as the controllers use it: asyncio methods over one SSH connection.

:class:`SlurmSite` wraps a blocking :class:`~.ssh.SSHConnection` and runs every call in a
thread of its pool's executor (paramiko blocks; the event loop never does); calls of many
GPUJobs run side by side, each on an SSH channel of its own (see :mod:`.ssh`).  It knows the
commands and file layout of a GPUJob on the login node::

    <workDir>/gpujob-<uid>/          the job's directory (sources, build products, outputs)
        job.sbatch                   the generated batch script
        .minik8s-jobid               written right after sbatch returns (found after a restart)
        .minik8s-exitcode            written by the batch script when the program ends
        slurm-<jobid>.out / .err     the job's stdout and stderr

:class:`SlurmSites` keeps one site per SlurmCluster, reconnecting when the cluster's spec
or Secret changes and holding back new attempts after a failure (exponential back-off), so
a dead login node is not hammered by every GPUJob that waits for it.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import posixpath
import shlex
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from minik8s.controllers.gpujob import slurm
from minik8s.controllers.gpujob.ssh import (
    COMMAND_FAILED,
    REJECTED,
    UNREACHABLE,
    CommandResult,
    Credentials,
    SiteError,
    SSHConnection,
)

log = logging.getLogger("gpujob-controller")
T = TypeVar("T")

#: Prefix of a job's directory under the cluster's work directory (cleanup refuses other paths).
JOB_DIR_PREFIX = "gpujob-"


@dataclass(frozen=True)
class SiteConfig:
    """Where and how to log in: from a SlurmCluster's spec and its Secret."""

    host: str
    port: int
    user: str
    work_dir: str
    credentials: Credentials
    secret_version: str = ""


@dataclass
class SiteInfo:
    """The result of a check: Slurm version, partitions (wire-form ``SlurmPartition``), and whether
    the site has accounting (``sacct`` with a database behind it)."""

    version: str
    partitions: list[dict[str, Any]]
    accounting: bool


@dataclass
class JobOutputs:
    """What was brought back: stdout/stderr (at most the last ``output_limit`` bytes each) and
    result files ``path → bytes`` (``skipped``: ``path → (size, why)`` for the ones not kept)."""

    stdout: bytes = b""
    stderr: bytes = b""
    files: dict[str, bytes] = field(default_factory=dict)
    skipped: dict[str, tuple[int, str]] = field(default_factory=dict)


class SlurmSite:
    """One logged-in Slurm login node (see the module doc). Methods raise :class:`SiteError`."""

    def __init__(self, config: SiteConfig, executor: ThreadPoolExecutor, connect_timeout: float = 10.0,
                 command_timeout: float = 60.0) -> None:
        self.config = config
        self.executor = executor
        self.command_timeout = command_timeout
        self.conn = SSHConnection(config.host, config.port, config.user, config.credentials, connect_timeout,
                                  io_timeout=command_timeout)
        self.utc_offset = dt.timedelta(0)
        self.accounting: bool | None = None

    async def _call(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self.executor, fn, *args)

    # ------------------------------------------------------------------ connection
    async def connect(self) -> None:
        """Log in and read the site's clock offset (``date +%z``)."""
        await self._call(self.conn.connect)
        result = await self._call(self.conn.run, "date +%z", self.command_timeout)
        self.utc_offset = slurm.parse_utc_offset(result.stdout)

    @property
    def connected(self) -> bool:
        return self.conn.connected

    async def close(self) -> None:
        """Close the connection, in a thread of its own rather than the pool's: the pool's
        threads may all be waiting on this very connection, and closing it releases them."""
        await asyncio.to_thread(self.conn.close)

    async def run(self, command: str, timeout: float | None = None) -> CommandResult:
        """Run one shell command on the login node (the benchmark's baseline uses this too)."""
        return await self._call(self.conn.run, command, timeout or self.command_timeout)

    # ------------------------------------------------------------------ the cluster
    async def check(self) -> SiteInfo:
        """``sinfo --version``, ``sinfo`` partitions and ``scontrol show config`` (accounting)."""
        version = slurm.parse_version(await self._check("sinfo --version"))
        sinfo = await self._check(f"sinfo --noheader --format={shlex.quote(slurm.SINFO_FORMAT)}")
        partitions = slurm.parse_sinfo(sinfo)
        config = await self._check("scontrol show config")
        self.accounting = slurm.accounting_enabled(config)
        return SiteInfo(version, partitions, self.accounting)

    async def _check(self, command: str) -> str:
        return await self._call(self.conn.check, command, self.command_timeout)

    # ------------------------------------------------------------------ a job's directory
    def job_dir(self, uid: str) -> str:
        """Absolute path of the job's directory (``workDir`` relative to the home directory)."""
        base = self.config.work_dir or "."
        if not base.startswith("/"):
            base = posixpath.join(self.conn.home or ".", base)
        return posixpath.normpath(posixpath.join(base, f"{JOB_DIR_PREFIX}{uid}"))

    async def upload(self, work_dir: str, files: dict[str, bytes], script: str) -> None:
        """Write the sources (``relative path → bytes``) and the batch script into ``work_dir``
        (created), in one SFTP session."""
        def put_all() -> None:
            with self.conn.sftp() as sftp:
                sftp.makedirs(work_dir)
                for rel, data in files.items():
                    path = posixpath.join(work_dir, rel)
                    if posixpath.dirname(path) != work_dir:
                        sftp.makedirs(posixpath.dirname(path))
                    sftp.put(path, data)
                sftp.put(posixpath.join(work_dir, slurm.SCRIPT_NAME), script.encode(), 0o755)
        await self._call(put_all)

    async def build(self, work_dir: str, command: str, timeout: float) -> CommandResult:
        """Run the build command in ``work_dir`` on the login node (stdout and stderr apart)."""
        return await self.run(f"cd {shlex.quote(work_dir)} && {command}", timeout)

    async def submit(self, work_dir: str) -> str:
        """``sbatch --parsable`` the job's script; the id is also kept in :data:`slurm.JOB_ID_FILE`.

        Raises SiteError(REJECTED, sbatch's message) when Slurm refuses the script, and
        SiteError(COMMAND_FAILED) for failures worth retrying (controller busy or down).
        """
        d = shlex.quote(work_dir)
        tmp = f"{slurm.JOB_ID_FILE}.tmp"
        # SIGHUP ignored: if the SSH connection drops, the id still reaches the file.
        command = (f"trap '' HUP; cd {d} && sbatch --parsable {slurm.SCRIPT_NAME} > {tmp} "
                   f"&& mv {tmp} {slurm.JOB_ID_FILE} && cat {slurm.JOB_ID_FILE}")
        result = await self.run(command)
        if not result.ok:
            message = slurm.sbatch_message(result.stderr) or f"sbatch exited {result.exit_status}"
            if result.exit_status == -1 or slurm.sbatch_error_is_transient(result.stderr):
                raise SiteError(COMMAND_FAILED, message)
            raise SiteError(REJECTED, message)
        try:
            return slurm.parse_sbatch(result.stdout)
        except slurm.ParseError as exc:
            raise SiteError(COMMAND_FAILED, str(exc)) from exc

    async def find_job(self, work_dir: str, identity: slurm.JobIdentity) -> str | None:
        """The id of a job already submitted for this GPUJob: from the job directory's id file,
        else from ``squeue`` (the comment carries the uid); None when there is none."""
        data = await self._call(self.conn.read, posixpath.join(work_dir, slurm.JOB_ID_FILE), 256)
        if data:
            try:
                return slurm.parse_sbatch(data.decode(errors="replace"))
            except slurm.ParseError:
                pass
        out = await self._check(f"squeue --me --states=all --noheader --format={shlex.quote(slurm.SQUEUE_FORMAT)}")
        for job in slurm.parse_squeue(out):
            if job.comment == identity.comment:
                return job.job_id
        return None

    async def job_info(self, job_id: str) -> slurm.JobInfo | None:
        """What Slurm knows about the job: ``scontrol show job``, else ``sacct`` where accounting
        exists; None when the site has forgotten it."""
        result = await self.run(f"scontrol -o show job {shlex.quote(job_id)}")
        if result.ok:
            try:
                return slurm.parse_scontrol_job(result.stdout)
            except slurm.ParseError as exc:
                raise SiteError(COMMAND_FAILED, str(exc)) from exc
        if not slurm.job_gone(result.stderr):
            raise SiteError(COMMAND_FAILED, f"scontrol show job {job_id}: {result.stderr.strip()[:500]}")
        if self.accounting:
            out = await self._check(f"sacct --noheader --parsable2 --jobs={shlex.quote(job_id)} "
                                    f"--format={slurm.SACCT_FORMAT}")
            return slurm.parse_sacct(out, job_id)
        return None

    async def exit_code(self, work_dir: str) -> int | None:
        """The program's exit status from :data:`slurm.EXIT_CODE_FILE` (None when it did not end)."""
        data = await self._call(self.conn.read, posixpath.join(work_dir, slurm.EXIT_CODE_FILE), 64)
        try:
            return int(data.decode().strip()) if data else None
        except ValueError:
            return None

    async def fetch(self, work_dir: str, job_id: str, globs: list[str], output_limit: int,
                    budget: int) -> JobOutputs:
        """Bring back stdout/stderr (the last ``output_limit`` bytes of each) and the files the
        ``globs`` match, until ``budget`` bytes in all are used (larger files are skipped); one
        SFTP session."""
        def fetch_all() -> JobOutputs:
            with self.conn.sftp() as sftp:
                outputs = JobOutputs()
                out_name = slurm.STDOUT_PATTERN.replace("%j", job_id)
                err_name = slurm.STDERR_PATTERN.replace("%j", job_id)
                outputs.stdout = sftp.read(posixpath.join(work_dir, out_name), output_limit, tail=True) or b""
                outputs.stderr = sftp.read(posixpath.join(work_dir, err_name), output_limit, tail=True) or b""
                left = budget - len(outputs.stdout) - len(outputs.stderr)
                if not globs:
                    return outputs
                listing = dict(sftp.walk(work_dir))
                for rel in slurm.match_results(sorted(listing), globs):
                    size = listing[rel]
                    if size > left:
                        outputs.skipped[rel] = (size, f"not kept: {size} bytes exceed the {budget} bytes kept "
                                                      f"per job")
                        continue
                    data = sftp.read(posixpath.join(work_dir, rel))
                    if data is None:
                        continue
                    outputs.files[rel] = data
                    left -= len(data)
                return outputs
        return await self._call(fetch_all)

    async def cancel(self, job_id: str) -> None:
        """``scancel`` the job (a finished or unknown job is no error)."""
        result = await self.run(f"scancel {shlex.quote(job_id)}")
        if not result.ok and not slurm.job_gone(result.stderr) and "already completing or completed" not in \
                result.stderr:
            raise SiteError(COMMAND_FAILED, f"scancel {job_id}: {result.stderr.strip()[:500]}")

    async def cleanup(self, work_dir: str) -> None:
        """Remove the job's directory (only a ``gpujob-<uid>`` directory, never anything else)."""
        if not posixpath.basename(work_dir).startswith(JOB_DIR_PREFIX):
            raise SiteError(COMMAND_FAILED, f"refusing to remove {work_dir}: not a GPUJob directory")
        await self._check(f"rm -rf -- {shlex.quote(work_dir)}")


class SlurmSites:
    """One :class:`SlurmSite` per SlurmCluster name, connected on demand.

    :meth:`get` returns the connected site, reconnecting when the connection broke or the
    config (spec or Secret) changed.  After a failed login, further :meth:`get` calls fail
    at once with the same error until the back-off (``backoff`` seconds doubling up to
    ``max_backoff``) has passed, unless the config changed.
    """

    def __init__(self, executor: ThreadPoolExecutor | None = None, connect_timeout: float = 10.0,
                 command_timeout: float = 60.0, backoff: float = 1.0, max_backoff: float = 60.0) -> None:
        self.executor = executor or ThreadPoolExecutor(max_workers=8, thread_name_prefix="slurm-ssh")
        self.connect_timeout = connect_timeout
        self.command_timeout = command_timeout
        self.backoff = backoff
        self.max_backoff = max_backoff
        self._sites: dict[str, SlurmSite] = {}
        self._failures: dict[str, tuple[SiteConfig, SiteError, float, int]] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    async def get(self, name: str, config: SiteConfig, force: bool = False) -> SlurmSite:
        """The connected site of cluster ``name`` with ``config``. Raises SiteError.

        ``force`` tries to log in even during the back-off (the periodic cluster check).
        """
        lock = self._locks.setdefault(name, asyncio.Lock())
        async with lock:
            site = self._sites.get(name)
            if site is not None and site.config == config and site.connected:
                return site
            if site is not None:
                self._sites.pop(name, None)
                await site.close()
            loop = asyncio.get_running_loop()
            failure = self._failures.get(name)
            if failure is not None and failure[0] == config and loop.time() < failure[2] and not force:
                raise failure[1]
            site = SlurmSite(config, self.executor, self.connect_timeout, self.command_timeout)
            try:
                await site.connect()
            except SiteError as exc:
                await site.close()
                attempts = failure[3] + 1 if failure is not None and failure[0] == config else 1
                delay = min(self.backoff * 2 ** (attempts - 1), self.max_backoff)
                self._failures[name] = (config, exc, loop.time() + delay, attempts)
                raise
            self._failures.pop(name, None)
            self._sites[name] = site
            log.info("gpujob-controller connected to Slurm site %s (%s)", name, site.conn.target)
            return site

    def retry_after(self, name: str) -> float:
        """Seconds until the next login attempt for ``name`` is allowed (0 when not backing off)."""
        failure = self._failures.get(name)
        if failure is None:
            return 0.0
        return max(0.0, failure[2] - asyncio.get_running_loop().time())

    async def drop(self, name: str, broken: SlurmSite | None = None) -> None:
        """Forget the site of ``name`` (after its connection broke), closing it."""
        site = self._sites.get(name)
        if site is not None and (broken is None or site is broken):
            self._sites.pop(name, None)
            await site.close()

    async def close(self) -> None:
        """Close every connection and stop the threads."""
        for site in list(self._sites.values()):
            await site.close()
        self._sites.clear()
        self.executor.shutdown(wait=False, cancel_futures=True)


def connection_lost(exc: SiteError) -> bool:
    """Whether ``exc`` means the connection itself failed (the site should be dropped)."""
    return exc.reason == UNREACHABLE
