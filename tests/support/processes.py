"""A throwaway etcd and a real ``minik8s apiserver`` process, on free ports in temp dirs."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from minik8s.cluster.processes import etcd_command, free_port, wait_http
from minik8s.cluster.signingkey import ensure_signing_key

ROOT = Path(__file__).resolve().parents[2]


def stop_process(proc: subprocess.Popen[Any], grace: float = 10) -> None:
    """Stop ``proc``: SIGTERM, then SIGKILL if it has not exited within ``grace`` seconds."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class Etcd:
    """A throwaway etcd server (Debian's etcd-server) on free ports."""

    def __init__(self, data_dir: Path) -> None:
        if not shutil.which("etcd"):
            pytest.skip("etcd is not installed (apt-get install etcd-server)")
        self.port = free_port()
        peer = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.log = open(data_dir / "etcd.log", "wb")  # noqa: SIM115
        argv = etcd_command(data_dir / "data", self.port, peer, name="test")
        argv.remove("--auto-compaction-retention")
        argv.remove("1")
        self.argv = argv
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT)
        wait_http(f"{self.endpoint}/health")

    def stop(self) -> None:
        stop_process(self.proc)
        self.log.close()

    def restart(self) -> None:
        """Stop etcd and start it again on the same ports and data (what it stored is kept)."""
        self.stop()
        self.log = open(self.log.name, "ab")  # noqa: SIM115
        self.proc = subprocess.Popen(self.argv, stdout=self.log, stderr=subprocess.STDOUT)
        wait_http(f"{self.endpoint}/health")


class APIServer:
    """``minik8s apiserver`` as a real process against ``etcd``."""

    def __init__(self, etcd: Etcd, log_dir: Path, extra: list[str] | None = None,
                 scheme: str = "http") -> None:
        self.port = free_port()
        self.url = f"{scheme}://127.0.0.1:{self.port}"
        self.etcd = etcd
        self.extra = extra or []
        self.log_path = log_dir / f"apiserver-{self.port}.log"
        #: signs the service-account tokens of TokenRequest (kept across restarts, as on a cluster)
        self.signing_key = ensure_signing_key(log_dir / f"sa-{self.port}.key")
        self.proc: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self, wait: bool = True) -> None:
        log = open(self.log_path, "ab")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "minik8s", "apiserver", "--etcd-servers", self.etcd.endpoint,
             "--port", str(self.port), "--service-account-signing-key-file", str(self.signing_key), *self.extra],
            stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
        if wait and not self.extra:
            wait_http(f"{self.url}/readyz")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)



@contextlib.contextmanager
def running_etcd(data_dir: Path) -> Iterator[Etcd]:
    """An :class:`Etcd` with its data and log in ``data_dir``; stopped on exit."""
    server = Etcd(data_dir)
    try:
        yield server
    finally:
        server.stop()


@contextlib.contextmanager
def running_apiserver(etcd: Etcd, log_dir: Path, extra: list[str] | None = None) -> Iterator[APIServer]:
    """An :class:`APIServer` over ``etcd`` with the ``extra`` flags, yielded once ``/readyz`` answers
    200 (within 30 s, else TimeoutError); stopped on exit."""
    server = APIServer(etcd, log_dir, extra=extra)
    try:
        wait_http(f"{server.url}/readyz", 30)
        yield server
    finally:
        server.stop()
