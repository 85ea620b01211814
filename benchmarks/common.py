"""Shared helpers for benchmarks: percentiles, a throwaway etcd + apiserver, a throwaway local cluster."""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from minik8s.cluster.processes import Process, etcd_command, free_port, minik8s_command, wait_http


def percentiles(samples: list[float]) -> dict[str, float]:
    """p50/p99/mean/max of ``samples`` in milliseconds (input in seconds)."""
    ms = sorted(s * 1000 for s in samples)
    if not ms:
        return {}

    def pct(p: float) -> float:
        return round(ms[min(len(ms) - 1, int(round(p / 100 * (len(ms) - 1))))], 2)

    return {"p50_ms": pct(50), "p99_ms": pct(99), "mean_ms": round(statistics.fmean(ms), 2),
            "max_ms": round(ms[-1], 2), "n": len(ms)}


@contextmanager
def control_plane(*apiserver_args: str) -> Iterator[tuple[str, int]]:
    """Start etcd and the apiserver (with ``apiserver_args`` added) in a temp dir; yields
    (apiserver URL, etcd port)."""
    with tempfile.TemporaryDirectory(prefix="minik8s-bench-") as tmp:
        d = Path(tmp)
        etcd_port, peer = free_port(), free_port()
        etcd = Process("etcd", etcd_command(d / "etcd", etcd_port, peer), d / "etcd.log")
        etcd.start()
        wait_http(f"http://127.0.0.1:{etcd_port}/health")
        port = free_port()
        api = Process("apiserver", minik8s_command("apiserver", "--etcd-servers", f"http://127.0.0.1:{etcd_port}",
                                                   "--port", str(port), *apiserver_args), d / "apiserver.log")
        api.start()
        try:
            wait_http(f"http://127.0.0.1:{port}/readyz")
            yield f"http://127.0.0.1:{port}", etcd_port
        finally:
            api.stop()
            etcd.stop()


@contextmanager
def local_cluster(node_name: str, pod_cidr: str, network: str, *up_args: str) -> Iterator[Path]:
    """A whole local cluster (``minik8s up``) in a temp dir on free ports, with its own node name,
    pod CIDR and Docker network; yields the data dir (``kubeconfig`` inside) and runs
    ``minik8s down --purge`` afterwards.  ``up_args`` are extra ``minik8s up`` flags.

    Raises subprocess.CalledProcessError when ``up`` fails.
    """
    with tempfile.TemporaryDirectory(prefix="minik8s-bench-") as tmp:
        up = [sys.executable, "-m", "minik8s", "up", "--data-dir", tmp, "--apiserver-port", str(free_port()),
              "--etcd-port", str(free_port()), "--kubelet-port", str(free_port()), "--node-name", node_name,
              "--pod-cidr", pod_cidr, "--network-name", network, *up_args]
        try:
            subprocess.run(up, check=True, capture_output=True, text=True)
            yield Path(tmp)
        finally:
            subprocess.run([sys.executable, "-m", "minik8s", "down", "--purge", "--data-dir", tmp],
                           capture_output=True)
