"""Starting and supervising local component processes (used by ``minik8s up``, tests and benchmarks)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx


def free_port() -> int:
    """An unused TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def free_port_pair() -> int:
    """An unused TCP port on 127.0.0.1 whose successor is unused too (etcd's client and peer ports)."""
    while True:
        port = free_port()
        if port < 65535 and not port_in_use(port + 1):
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", port + 1))
                except OSError:
                    continue
            return port


def port_in_use(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex((host, port)) == 0


def etcd_command(data_dir: Path, client_port: int, peer_port: int, name: str = "minik8s") -> list[str]:
    """Debian's ``etcd`` serving one member on loopback only."""
    client = f"http://127.0.0.1:{client_port}"
    peer = f"http://127.0.0.1:{peer_port}"
    return ["etcd", "--name", name, "--data-dir", str(data_dir), "--listen-client-urls", client,
            "--advertise-client-urls", client, "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
            "--initial-cluster", f"{name}={peer}", "--auto-compaction-retention", "1"]


def minik8s_command(*args: str) -> list[str]:
    """``python -m minik8s ARGS`` with this interpreter."""
    return [sys.executable, "-m", "minik8s", *args]


def wait_http(url: str, timeout: float = 30.0, **kwargs: object) -> None:
    """Poll ``url`` until it answers 200; raises TimeoutError with the last failure."""
    deadline = time.monotonic() + timeout
    last: object = None
    while time.monotonic() < deadline:
        try:
            r = httpx.get(url, timeout=1.0, **kwargs)  # type: ignore[arg-type]
            if r.status_code == 200:
                return
            last = f"HTTP {r.status_code}"
        except httpx.HTTPError as exc:
            last = exc
        time.sleep(0.1)
    raise TimeoutError(f"{url} did not become ready in {timeout:.0f}s: {last}")


@dataclass
class Process:
    """One supervised child process with its log file."""

    name: str
    argv: list[str]
    log_path: Path
    env: dict[str, str] = field(default_factory=dict)
    popen: subprocess.Popen[bytes] | None = None
    restarts: int = 0

    def start(self) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "ab")  # noqa: SIM115 - owned by the child
        self.popen = subprocess.Popen(self.argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                      env={**os.environ, **self.env}, start_new_session=True)
        log.close()

    @property
    def pid(self) -> int | None:
        return self.popen.pid if self.popen else None

    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def stop(self, grace: float = 10.0) -> None:
        """SIGTERM, then SIGKILL after ``grace`` seconds."""
        if not self.alive():
            return
        assert self.popen is not None
        self.popen.send_signal(signal.SIGTERM)
        try:
            self.popen.wait(grace)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait(5)
