"""kube-proxy as the integration tests drive it: a ``minik8s proxy`` process with its own chain
prefix and service-CIDR slice, the netfilter views to check it, and a bridge network of our own
for backends.  Network safety: traffic only to our containers, our ClusterIPs and this machine."""

from __future__ import annotations

import ipaddress
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import docker
import pytest
from docker.types import IPAMConfig, IPAMPool

from minik8s.client.kubeconfig import render
from minik8s.proxy.config import ProxyConfig
from minik8s.proxy.iptables import programmed_endpoints
from tests.support.processes import ROOT
from tests.support.waiting import wait_for_sync

IMAGE = "minik8s/busybox:latest"
#: The marks of every module that runs a proxy (Docker, root, iptables, iproute2).
PROXY_MARKS = [
    pytest.mark.docker,
    pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("iptables-restore") or not shutil.which("ip"),
                       reason="needs root, iptables and iproute2"),
]


# ---------------------------------------------------------------------------- helpers
def http_get(host: str, port: int, timeout: float = 5.0) -> str:
    """One HTTP/1.0 GET / on a new connection; returns the body (stripped).  Raises OSError."""
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.sendall(b"GET / HTTP/1.0\r\nHost: test\r\n\r\n")
        data = b""
        while chunk := s.recv(4096):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1."), head[:40]
    return body.decode().strip()


def iptables_save(table: str) -> str:
    return subprocess.run(["iptables-save", "-t", table], capture_output=True, text=True, check=True).stdout


def chains_with_prefix(prefix: str) -> list[str]:
    out = []
    for table in ("nat", "filter"):
        out += [line for line in iptables_save(table).splitlines() if f"{prefix}-" in line]
    return out


def link_exists(name: str) -> bool:
    return subprocess.run(["ip", "link", "show", "dev", name], capture_output=True).returncode == 0


def free_slice() -> int:
    """A third octet X such that 10.96.X.0/24 has no route on this machine yet."""
    routes = subprocess.run(["ip", "-4", "route", "show"], capture_output=True, text=True).stdout
    used = {line.split()[0] for line in routes.splitlines()}
    candidates = [x for x in range(100, 255) if f"10.96.{x}.0/24" not in used]
    return random.choice(candidates)


def create_network(engine: docker.DockerClient, name: str, labels: dict[str, str]) -> tuple[Any, str]:
    """A Docker bridge network ``name`` on a free 10.244.x.0/24 (x >= 230); returns it and its gateway."""
    used = [ipaddress.ip_network(c["Subnet"], strict=False) for n in engine.networks.list()
            for c in ((n.attrs.get("IPAM") or {}).get("Config") or []) if c.get("Subnet")]
    thirds = list(range(230, 255))
    random.shuffle(thirds)
    for third in thirds:
        subnet = ipaddress.ip_network(f"10.244.{third}.0/24")
        if any(subnet.overlaps(u) for u in used):
            continue
        gateway = str(subnet.network_address + 1)
        try:
            net = engine.networks.create(name, driver="bridge", labels=labels,
                                         ipam=IPAMConfig(pool_configs=[IPAMPool(subnet=str(subnet), gateway=gateway)]),
                                         options={"com.docker.network.bridge.name": name})
        except docker.errors.APIError as exc:  # raced with another test for the subnet
            if "overlap" in str(exc).lower():
                continue
            raise
        return net, gateway
    raise RuntimeError("no free 10.244.x.0/24 subnet for the proxy test backends")


# ---------------------------------------------------------------------------- proxy process
class ProxyProcess:
    """``minik8s proxy`` as a subprocess with a test prefix and service CIDR slice."""

    def __init__(self, server: str, workdir: Path, extra: list[str] | None = None) -> None:
        self.prefix = "KT" + os.urandom(3).hex()[:5]
        self.third = free_slice()
        self.cidr = f"10.96.{self.third}.0/24"
        self.cfg = ProxyConfig(chain_prefix=self.prefix, service_cidr=self.cidr).validate()
        self.kubeconfig = workdir / f"kubeconfig-{self.prefix}"
        self.kubeconfig.write_text(render(server))
        self.log_path = workdir / f"proxy-{self.prefix}.log"
        self.extra = extra or []
        self.proc: subprocess.Popen[bytes] | None = None

    def args(self) -> list[str]:
        return ["--chain-prefix", self.prefix, "--service-cluster-ip-range", self.cidr,
                "--cluster-cidr", "10.244.0.0/16"]

    def start(self, wait: bool = True) -> int:
        """Start; with ``wait``, return once the first sync has written rules (the log says
        ``synced mode=``).  Returns the log offset where this run's lines begin."""
        offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        log = open(self.log_path, "ab")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "minik8s", "proxy", "--kubeconfig", str(self.kubeconfig), *self.args(),
             *self.extra, "-v"], stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
        log.close()
        if not wait:
            return offset
        try:
            wait_for_sync(lambda: " synced mode=" in self.log()[offset:] or self.proc is None
                     or self.proc.poll() is not None, timeout=30, interval=0.05)
        except AssertionError:
            raise AssertionError(f"proxy did not sync:\n{self.log()[-3000:]}") from None
        assert self.proc.poll() is None, self.log()[-3000:]
        return offset

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None

    def cleanup(self) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "minik8s", "proxy", "--cleanup", *self.args()],
                              capture_output=True, text=True, cwd=ROOT, timeout=60)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def programmed(self) -> dict[str, list[str]]:
        return programmed_endpoints(iptables_save("nat"), self.cfg)

    def wait_programmed(self, cluster_ip: str, port: int, want: list[str] | None, timeout: float = 10) -> float:
        """Seconds until the nat table shows exactly ``want`` endpoints (None: no DNAT rules at all)."""
        key = f"{cluster_ip}:{port}/tcp"
        want_sorted = sorted(want) if want is not None else None
        started = time.perf_counter()
        try:
            wait_for_sync(lambda: self.programmed().get(key) == want_sorted, timeout=timeout, interval=0.01)
            return time.perf_counter() - started
        except AssertionError:
            raise AssertionError(f"{key} not programmed as {want_sorted}: {self.programmed().get(key)}\n"
                                 f"{self.log()[-2000:]}") from None

