"""A whole local cluster (``minik8s up``) for end-to-end tests, isolated from a user's own cluster:
its own data dir, free ports, node name, pod network and CIDR.

One cluster serves a whole pytest session: the ``cluster`` fixture of ``tests/conftest.py``
starts it with :func:`running_cluster` the first time a test of ``tests/e2e`` or
``tests/conformance`` asks for it, and takes it down at the end of the session.
"""

from __future__ import annotations

import contextlib
import json
import os
import ssl
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from minik8s.client.kubeconfig import load
from minik8s.cluster.processes import free_port, free_port_pair
from tests.support.waiting import wait_for_sync

E2E_POD_CIDR = "10.244.250.0/24"
E2E_NETWORK = "minik8s-e2e"
E2E_NODE = "e2e-node"
#: The function autoscaler's stable window in the e2e cluster (seconds; 60 by default).
E2E_STABLE_WINDOW = 20


def docker_ok() -> bool:
    """Whether the Docker Engine answers ``docker info`` (within 20 s)."""
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@dataclass
class Cluster:
    """A running ``minik8s up`` cluster: its data dir, admin kubeconfig, apiserver URL, node name and
    serverless gateway URL."""

    data_dir: Path
    kubeconfig: Path
    server: str
    node: str
    gateway: str = "http://127.0.0.1:8081"

    def minik8s(self, *args: str, check: bool = True, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        """``minik8s ARGS --data-dir <this cluster's>``; raises CalledProcessError when ``check`` and it fails."""
        return subprocess.run([sys.executable, "-m", "minik8s", *args, "--data-dir", str(self.data_dir)],
                              capture_output=True, text=True, check=check, timeout=timeout)

    def kubectl(self, *args: str, check: bool = True, input: str | None = None,
                timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """Our kubectl (``python -m minik8s.kubectl``) against this cluster."""
        proc = subprocess.run([sys.executable, "-m", "minik8s.kubectl", "--kubeconfig", str(self.kubeconfig),
                               *args], capture_output=True, text=True, input=input, timeout=timeout)
        if check and proc.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}")
        return proc

    def get_json(self, *args: str) -> Any:
        """``kubectl get ARGS -o json``, decoded."""
        return json.loads(self.kubectl("get", *args, "-o", "json").stdout)

    def ssl_context(self) -> ssl.SSLContext:
        """TLS for raw HTTP calls to the apiserver (the admin kubeconfig's CA and certificate)."""
        ctx: ssl.SSLContext = load(str(self.kubeconfig)).ssl_context()  # type: ignore[assignment]
        return ctx

    def component_pid(self, name: str) -> int:
        """The process id of one component (``apiserver``, ``kubelet``, ...) from ``components.json``."""
        return int(json.loads((self.data_dir / "components.json").read_text())[name])

    @contextlib.contextmanager
    def namespace(self, prefix: str, wait: bool = False) -> Iterator[str]:
        """A fresh namespace ``{prefix}-{6 hex digits}``, deleted afterwards (with ``wait``, until it is
        gone: its volumes released and their directories removed)."""
        name = f"{prefix}-{os.urandom(3).hex()}"
        self.kubectl("apply", "-f", "-", input=yaml.safe_dump({"apiVersion": "v1", "kind": "Namespace",
                                                               "metadata": {"name": name}}))
        try:
            yield name
        finally:
            if wait:
                self.kubectl("delete", "namespace", name, check=False, timeout=180)
            else:
                self.kubectl("delete", "namespace", name, "--wait=false", check=False)


# What a poll may meet while the cluster is still changing: a half-built object (a pod not yet
# bound, without podIP or containerStatuses; Endpoints without subsets) makes a lookup fail, and
# kubectl may fail or print nothing for a moment (an object not created yet, the apiserver
# restarting). A wait treats these as "not yet" and reports the last one if it times out.
NOT_YET = (AssertionError, LookupError, TypeError, ValueError, subprocess.CalledProcessError,
           subprocess.TimeoutExpired)


def wait_for(pred: Callable[[], Any], timeout: float = 60.0, interval: float = 0.5, what: str = "condition") -> Any:
    """:func:`tests.support.waiting.wait_for_sync` with the defaults of a whole cluster (60 s,
    every 0.5 s); an exception of :data:`NOT_YET` from ``pred`` counts as "not yet", any other
    propagates."""
    return wait_for_sync(pred, timeout, interval, what, not_yet=NOT_YET)


def _take_down_stale_clusters(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Stop the e2e clusters of earlier runs that were killed before their teardown.

    Such a cluster keeps its node name, pod network and CIDR, and its kubelet would fight this
    run's over them; its data dir is one of pytest's earlier temporary directories."""
    for pid_file in tmp_path_factory.getbasetemp().parent.glob("*/cluster*/supervisor.pid"):
        subprocess.run([sys.executable, "-m", "minik8s", "down", "--purge", "--data-dir", str(pid_file.parent)],
                       capture_output=True, timeout=300, check=False)


@contextlib.contextmanager
def running_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """``minik8s up`` on free ports with the e2e identity (node ``e2e-node``, pod CIDR
    ``10.244.250.0/24``, network ``minik8s-e2e``) and short test timings; ``minik8s down --purge``
    afterwards. Skips the test when the Docker Engine is not running; fails it with the
    components' logs when ``up`` fails."""
    if not docker_ok():
        pytest.skip("the Docker Engine is not running (scripts/start-dockerd.sh)")
    _take_down_stale_clusters(tmp_path_factory)
    data_dir = tmp_path_factory.mktemp("cluster")
    api_port, etcd_port, kubelet_port, gateway_port = free_port(), free_port_pair(), free_port(), free_port()
    c = Cluster(data_dir, data_dir / "kubeconfig", f"https://127.0.0.1:{api_port}", E2E_NODE,
                f"http://127.0.0.1:{gateway_port}")
    up = subprocess.run([sys.executable, "-m", "minik8s", "up", "--data-dir", str(data_dir),
                         "--apiserver-port", str(api_port), "--etcd-port", str(etcd_port),
                         "--kubelet-port", str(kubelet_port), "--gateway-port", str(gateway_port),
                         "--node-name", E2E_NODE,
                         "--pod-cidr", E2E_POD_CIDR, "--network-name", E2E_NETWORK, "--timeout", "120",
                         "--kubelet-arg=--crashloop-backoff-base=2", "--kubelet-arg=--crashloop-backoff-max=20",
                         "--apiserver-arg=--metrics-resolution=5s",
                         "--controller-manager-arg=--horizontal-pod-autoscaler-sync-period=5s",
                         f"--controller-manager-arg=--function-autoscaler-stable-window={E2E_STABLE_WINDOW}s"],
                        capture_output=True, text=True, timeout=300)
    if up.returncode != 0:
        logs = "\n".join(f"--- {p.name}\n{p.read_text()[-3000:]}" for p in sorted((data_dir / "logs").glob("*.log")))
        pytest.fail(f"minik8s up failed: {up.stdout}\n{up.stderr}\n{logs}")
    try:
        yield c
    finally:
        c.minik8s("down", "--purge", check=False)
