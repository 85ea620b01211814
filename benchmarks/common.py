"""Shared helpers for benchmarks: percentiles, a throwaway etcd + apiserver, a throwaway local cluster."""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from minik8s.client.kubeconfig import render
from minik8s.cluster.pki import certificates, ensure_pki
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
        with _control_plane(Path(tmp), list(apiserver_args)) as (url, etcd_port):
            yield url, etcd_port


@contextmanager
def tls_control_plane() -> Iterator[Path]:
    """etcd and an apiserver serving HTTPS that wants client certificates, as ``minik8s up``
    makes them (its PKI, :mod:`minik8s.cluster.pki`); yields the admin kubeconfig."""
    with tempfile.TemporaryDirectory(prefix="minik8s-bench-") as tmp:
        d = Path(tmp)
        pki = ensure_pki(d / "pki", certificates("bench", "127.0.0.1", "127.0.0.1"))
        tls = ["--tls-cert-file", str(pki.crt("apiserver")), "--tls-private-key-file", str(pki.key("apiserver")),
               "--client-ca-file", str(pki.ca)]
        with _control_plane(d, tls, verify=str(pki.ca)) as (url, _):
            kubeconfig = d / "kubeconfig"
            kubeconfig.write_text(render(url, name="minik8s", ca_file=str(pki.ca), cert_file=str(pki.crt("admin")),
                                         key_file=str(pki.key("admin"))))
            yield kubeconfig


@contextmanager
def _control_plane(d: Path, apiserver_args: list[str], verify: str | None = None) -> Iterator[tuple[str, int]]:
    etcd_port, peer = free_port(), free_port()
    etcd = Process("etcd", etcd_command(d / "etcd", etcd_port, peer), d / "etcd.log")
    etcd.start()
    wait_http(f"http://127.0.0.1:{etcd_port}/health")
    port = free_port()
    api = Process("apiserver", minik8s_command("apiserver", "--etcd-servers", f"http://127.0.0.1:{etcd_port}",
                                               "--port", str(port), *apiserver_args), d / "apiserver.log")
    api.start()
    url = f"{'https' if verify else 'http'}://127.0.0.1:{port}"
    try:
        # /readyz is public (system:public-info-viewer), so no client certificate is needed to poll it
        if verify:
            wait_http(f"{url}/readyz", verify=verify)
        else:
            wait_http(f"{url}/readyz")
        yield url, etcd_port
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
