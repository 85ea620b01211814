"""The test Slurm site: a ``minik8s/slurm`` container standing in for a remote HPC login node.

Built by ``scripts/build-slurm-image.sh`` (real slurmctld, slurmd, munge and sshd from Debian
12; FAKE GPUs: ``gres.conf`` points at placeholder files, since this machine has no GPU).  The
container runs on a Docker network of its own (``--internal``: nothing leaves it) and is
reached over real SSH at its address on that network.  The host's CUDA toolkit is mounted
read-only at ``/usr/local/cuda`` when the image was built to use it.

:func:`start_site` returns a :class:`SlurmSiteContainer` with the login key (generated per run), the
site's ``known_hosts`` line and helpers to run commands in it as the HPC user; tests that
need no site skip with the reason when the image or Docker is missing.
"""

from __future__ import annotations

import base64
import io
import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from typing import Any

import paramiko
import pytest

IMAGE = "minik8s/slurm:latest"
HOST_CUDA = "/usr/local/cuda"
USER = "hpc"


def docker(*args: str, timeout: float = 60, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"docker {' '.join(args[:3])} failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc


def new_key() -> tuple[str, str]:
    """A fresh ECDSA login key: (private key in PEM, public key line)."""
    key = paramiko.ECDSAKey.generate(bits=256)
    out = io.StringIO()
    key.write_private_key(out)
    return out.getvalue(), f"{key.get_name()} {key.get_base64()} minik8s-test"


@dataclass
class SlurmSiteContainer:
    """A running test site: ``host`` (container address), ``port`` 22, ``user``, the login key
    and ``known_hosts``; ``name`` is the container's."""

    name: str
    network: str
    host: str
    private_key: str
    public_key: str
    known_hosts: str
    port: int = 22
    user: str = USER
    started: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def exec(self, command: str, user: str = USER, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """Run ``command`` in the site (bash, as ``user``), like a person on the login node."""
        home = "/root" if user == "root" else f"/home/{user}"
        return docker("exec", "-u", user, "-w", home, self.name, "bash", "-lc", command, timeout=timeout, check=False)

    def secret(self, name: str, namespace: str, private_key: str | None = None,
               known_hosts: str | None = None) -> dict[str, Any]:
        """A ``kubernetes.io/ssh-auth`` Secret (wire form) to log in to this site."""
        def b64(text: str) -> str:
            return base64.b64encode(text.encode()).decode()
        return {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/ssh-auth",
                "metadata": {"name": name, "namespace": namespace},
                "data": {"ssh-privatekey": b64(private_key or self.private_key),
                         "known_hosts": b64(known_hosts if known_hosts is not None else self.known_hosts)}}

    def cluster(self, name: str, secret: str, namespace: str, **spec: Any) -> dict[str, Any]:
        """A SlurmCluster (wire form) for this site."""
        return {"apiVersion": "minik8s.io/v1", "kind": "SlurmCluster", "metadata": {"name": name},
                "spec": {"host": self.host, "port": self.port, "user": self.user,
                         "secretRef": {"name": secret, "namespace": namespace}, "workDir": "minik8s-jobs",
                         "defaultPartition": "dgx2", **spec}}

    def pause(self) -> None:
        """Make the login node unreachable: the container is frozen (``docker pause``), so TCP
        connects but SSH never answers, like a hung host."""
        docker("pause", self.name)

    def unpause(self) -> None:
        """Undo :meth:`pause` (no-op when not paused)."""
        docker("unpause", self.name, check=False)

    def cancel_all(self) -> None:
        self.exec("scancel -u hpc || true")

    def stop(self) -> None:
        docker("rm", "-f", self.name, check=False)
        docker("network", "rm", self.network, check=False)


def _wait(pred: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(0.1)
    raise AssertionError(f"the Slurm site did not get {what} within {timeout}s")


def start_site(gpus: int = 2) -> SlurmSiteContainer:
    """Start a test site (skips when Docker or the image is missing)."""
    if not shutil.which("docker") or docker("info", check=False, timeout=30).returncode != 0:
        pytest.skip("the Docker Engine is not available")
    inspect = docker("image", "inspect", "-f", '{{ index .Config.Labels "org.minik8s.cuda" }}', IMAGE, check=False)
    if inspect.returncode != 0:
        pytest.skip(f"the test Slurm site image {IMAGE} is missing: run scripts/build-slurm-image.sh")
    cuda_mode = inspect.stdout.strip()
    suffix = os.urandom(3).hex()
    name, network = f"minik8s-slurm-{suffix}", f"minik8s-slurm-{suffix}"
    docker("network", "create", "--internal", network)
    private_key, public_key = new_key()
    args = ["run", "-d", "--name", name, "--hostname", "slurm-login", "--network", network,
            "-e", f"SSH_AUTHORIZED_KEYS={public_key}", "-e", f"SLURM_GPUS={gpus}"]
    if cuda_mode == "host":
        if not os.path.exists(os.path.join(HOST_CUDA, "bin", "nvcc")):
            docker("network", "rm", network, check=False)
            pytest.skip(f"{IMAGE} expects the host's CUDA toolkit at {HOST_CUDA}; rebuild it with "
                        f"MINIK8S_SLURM_CUDA=wheels scripts/build-slurm-image.sh --force")
        args += ["-v", f"{os.path.realpath(HOST_CUDA)}:/usr/local/cuda:ro"]
    started = time.monotonic()
    docker(*args, IMAGE)
    site = SlurmSiteContainer(name, network, "", private_key, public_key, "", started=started)
    try:
        ip = docker("inspect", "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}", name).stdout.strip()
        site.host = ip
        _wait(lambda: "idle" in site.exec("sinfo --noheader --format=%t").stdout, 60, "an idle node")
        _wait(lambda: _port_open(ip, 22), 30, "sshd listening")
        host_key = docker("exec", name, "cat", "/etc/ssh/ssh_host_ed25519_key.pub").stdout.split()
        site.known_hosts = f"{ip} {host_key[0]} {host_key[1]}\n"
        site.extra["start_seconds"] = time.monotonic() - started
    except BaseException:
        logs = docker("logs", name, check=False)
        site.stop()
        raise AssertionError(f"the Slurm site did not start: {logs.stdout[-2000:]} {logs.stderr[-2000:]}") from None
    return site


def _port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False
