"""One ``molecule test`` of ``molecule/default``, run in the background beside the tests that share
the session's cluster.

The appliance scenario is the suite's longest test (15-25 minutes on 2 cores) and shares nothing
with the other tests: its own systemd containers, internal Docker network and images.
``tests/molecule/conftest.py`` starts it after lightkube's and kubernetes_asyncio's suites, so it runs
beside kopf's suite and ``tests/e2e`` (the shared cluster's tests, whose waits are a real cluster's),
and waits for it to end
before the first test that does not use that cluster. Tried and given up: beside the integration
tests, their tighter timings (a leader election with 3-second leases, a Job's suspend and resume)
failed; beside the client suites, lightkube's exec met its client's stale-reader TLS race.
``test_molecule_default_scenario`` then checks its outcome. Its controller (molecule, Ansible)
runs at a lower CPU priority (``nice``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

from benchmarks.appliance import molecule_env

ROOT = Path(__file__).resolve().parents[2]
#: Seconds the whole scenario may take (about 15-20 minutes alone on 2 cores, more beside the suite).
TIMEOUT = 45 * 60
#: How much lower the controller's CPU priority is (``nice`` increment).
NICENESS = 10


def docker_unavailable() -> str | None:
    """None when the Docker Engine answers, else why not."""
    if not shutil.which("docker"):
        return "the docker CLI is not installed"
    try:
        proc = subprocess.run(["docker", "info", "--format", "{{.ServerVersion}}"], capture_output=True,
                              text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"docker info failed: {exc}"
    if proc.returncode != 0:
        return f"the Docker Engine does not answer: {proc.stderr.strip()[:200]}"
    return None


def molecule_tool() -> str | None:
    """``molecule`` next to this interpreter (the virtualenv's bin), else on PATH; None if absent."""
    here = Path(sys.executable).parent / "molecule"
    return str(here) if here.exists() else shutil.which("molecule")


class Scenario:
    """A ``molecule test`` run writing its log to ``log_path``: :meth:`start` it, :meth:`wait` for its
    exit status (None: it ran past :data:`TIMEOUT`, was killed and its instances destroyed),
    :meth:`stop` it early (a session that ends first)."""

    def __init__(self, molecule: str, log_path: Path) -> None:
        self.molecule = molecule
        self.log_path = log_path
        self.env = molecule_env()
        self.env["PATH"] = f"{Path(molecule).parent}{os.pathsep}{self.env['PATH']}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.log: IO[str] | None = None
        self.start_time = 0.0
        self.seconds = 0.0
        self.returncode: int | None = None

    @property
    def started(self) -> bool:
        return self.proc is not None

    def elapsed(self) -> float:
        """Seconds since the start."""
        return time.monotonic() - self.start_time

    def start(self) -> None:
        if self.proc is not None:
            return
        self.log = open(self.log_path, "w")  # noqa: SIM115 - closed in _finish
        self.start_time = time.monotonic()
        self.proc = subprocess.Popen(["nice", "-n", str(NICENESS), self.molecule, "test"], cwd=ROOT, env=self.env,
                                     stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def wait(self) -> int | None:
        """The exit status of ``molecule test``, waiting for it until :data:`TIMEOUT` after the start."""
        assert self.proc is not None, "the scenario was not started"
        if self.log is None:  # already finished
            return self.returncode
        try:
            self.returncode = self.proc.wait(timeout=max(1.0, self.start_time + TIMEOUT - time.monotonic()))
        except subprocess.TimeoutExpired:
            self._kill_and_destroy()
            self.returncode = None
        self._finish()
        return self.returncode

    def stop(self) -> None:
        """Ends a run still going (its instances destroyed); nothing when it has finished."""
        if self.proc is not None and self.log is not None:
            if self.proc.poll() is None:
                self._kill_and_destroy()
            self._finish()

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    def _kill_and_destroy(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait()
        subprocess.run([self.molecule, "destroy"], cwd=ROOT, env=self.env, stdout=self.log,
                       stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=300, check=False)

    def _finish(self) -> None:
        self.seconds = time.monotonic() - self.start_time
        if self.log is not None:
            self.log.close()
            self.log = None
