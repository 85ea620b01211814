"""Shared fixtures: a real etcd and a real apiserver process, on free ports in temp dirs."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from minik8s.client import Client, ClientConfig
from minik8s.client.kubeconfig import render
from minik8s.cluster.processes import etcd_command, free_port, wait_http

ROOT = Path(__file__).resolve().parent.parent


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
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT)
        wait_http(f"{self.endpoint}/health")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)
        self.log.close()


class APIServer:
    """``minik8s apiserver`` as a real process against ``etcd``."""

    def __init__(self, etcd: Etcd, log_dir: Path, extra: list[str] | None = None,
                 scheme: str = "http") -> None:
        self.port = free_port()
        self.url = f"{scheme}://127.0.0.1:{self.port}"
        self.etcd = etcd
        self.extra = extra or []
        self.log_path = log_dir / f"apiserver-{self.port}.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self, wait: bool = True) -> None:
        log = open(self.log_path, "ab")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "minik8s", "apiserver", "--etcd-servers", self.etcd.endpoint,
             "--port", str(self.port), *self.extra],
            stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
        if wait and not self.extra:
            wait_http(f"{self.url}/readyz")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


@pytest.fixture(scope="session")
def etcd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Etcd]:
    server = Etcd(tmp_path_factory.mktemp("etcd"))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def apiserver(etcd: Etcd, tmp_path_factory: pytest.TempPathFactory) -> Iterator[APIServer]:
    server = APIServer(etcd, tmp_path_factory.mktemp("apiserver"))
    yield server
    server.stop()


@pytest.fixture
async def client(apiserver: APIServer) -> AsyncIterator[Client]:
    async with Client(ClientConfig(server=apiserver.url)) as c:
        yield c


@pytest.fixture
async def namespace(client: Client) -> AsyncIterator[str]:
    """A fresh namespace per test, deleted afterwards."""
    name = f"t-{os.urandom(4).hex()}"
    ns_rt = client.kind("v1", "Namespace")
    await client.create(ns_rt, {"metadata": {"name": name}})
    yield name
    try:
        await client.delete(ns_rt, name)
    except Exception:  # noqa: BLE001
        pass


@pytest.fixture
def kubeconfig(apiserver: APIServer, tmp_path: Path) -> Path:
    """A kubeconfig file for the test apiserver (plain HTTP, no credentials)."""
    path = tmp_path / "kubeconfig"
    path.write_text(render(apiserver.url))
    return path


@dataclass
class Result:
    """What one CLI run (a kubectl) printed and returned."""

    code: int
    out: str
    err: str

    @property
    def lines(self) -> list[str]:
        return self.out.splitlines()

    def table(self) -> list[list[str]]:
        """Rows of a kubectl table (header first), cells split on the 2+ space column gaps."""
        return [re.split(r"\s{2,}", line.strip()) for line in self.lines if line.strip()]
