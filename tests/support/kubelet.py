"""The kubelet as the integration tests drive it: a ``minik8s kubelet`` process with test-sized
periods on its own node, Docker network and root dir, and the pod helpers the kubelet tests share."""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import signal
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
import httpx
import pytest
import websockets

from minik8s.api.base import Obj
from minik8s.client.kubeconfig import render
from minik8s.client.rest import Client
from tests.support.processes import ROOT, APIServer, free_port, wait_http
from tests.support.waiting import wait_for

BUSYBOX = "minik8s/busybox:latest"


def docker_client() -> docker.DockerClient:
    """The local Docker Engine."""
    return docker.from_env()


def free_subnet() -> str:
    """A 10.244.x.0/24 (x >= 200) no Docker network uses."""
    used = []
    for net in docker_client().networks.list():
        for cfg in (net.attrs.get("IPAM") or {}).get("Config") or []:
            if cfg.get("Subnet"):
                used.append(ipaddress.ip_network(cfg["Subnet"], strict=False))
    for third in range(200, 255):
        cand = ipaddress.ip_network(f"10.244.{third}.0/24")
        if not any(cand.overlaps(u) for u in used):
            return str(cand)
    raise RuntimeError("no free 10.244.x.0/24 subnet for the test kubelet")


LABEL_FLAGS = ["--node-labels", "minik8s.io/test=kubelet,zone=z1",
               "--register-with-taints", "minik8s.io/test=yes:PreferNoSchedule"]


class KubeletProcess:
    """``minik8s kubelet`` as a subprocess with test-sized periods; ``start``/``stop`` keep the same node.

    ``cidr``: its ``--pod-cidr`` (default: a free 10.244.x.0/24; ``""``: no flag, the kubelet
    waits for the Node's podCIDR); ``extra``: more flags.  Its ``--cluster-cidr`` is the /20
    around the pod CIDR unless ``extra`` names one, so its blackhole route and netfilter rules
    stay apart from a real cluster's 10.244.0.0/16; :meth:`cleanup` removes them.
    ``tls``: for a kubelet started with ``--tls-cert-file`` in ``extra``, the client context
    that may call its ``/healthz`` over HTTPS (trusting its CA, with an allowed certificate).
    ``api_ca``: the CA file of an apiserver that serves HTTPS (its kubeconfig's
    ``certificate-authority``).
    """

    def __init__(self, apiserver: APIServer, workdir: Path, cidr: str | None = None,
                 extra: list[str] | None = None, tls: ssl.SSLContext | None = None,
                 api_ca: Path | None = None) -> None:
        self.node = f"kt-{os.urandom(3).hex()}"
        self.network = f"mk8s-{self.node}"
        self.cidr = free_subnet() if cidr is None else cidr
        self.extra = list(extra or [])
        if "--cluster-cidr" in self.extra:
            self.cluster_cidr = self.extra[self.extra.index("--cluster-cidr") + 1]
        else:
            self.cluster_cidr = str(ipaddress.ip_network(self.cidr).supernet(new_prefix=20))
            self.extra += ["--cluster-cidr", self.cluster_cidr]
        self.port = free_port()
        self.tls = tls
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}"
        self.root = workdir / "root"
        self.kubeconfig = workdir / "kubeconfig"
        self.kubeconfig.write_text(render(apiserver.url, ca_file=str(api_ca) if api_ca else None))
        self.api_url = apiserver.url
        self.api_tls = ssl.create_default_context(cafile=str(api_ca)) if api_ca else None
        self.log_path = workdir / "kubelet.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start the process; return once its Node is Ready and its Lease exists."""
        log = open(self.log_path, "ab")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "minik8s", "kubelet", "--kubeconfig", str(self.kubeconfig),
             "--node-name", self.node, "--node-ip", "127.0.0.1", "--port", str(self.port),
             *(["--pod-cidr", self.cidr] if self.cidr else []), "--network-name", self.network,
             "--root-dir", str(self.root), *self.extra,
             "--crashloop-backoff-base", "1", "--crashloop-backoff-max", "4",
             "--node-status-update-frequency", "2", "--node-lease-duration-seconds", "8",
             "--sync-frequency", "2", "-v"],
            stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
        wait_http(f"{self.url}/healthz", 30, **({"verify": self.tls} if self.tls else {}))
        wait_http(f"{self.api_url}/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/{self.node}", 30,
                  **({"verify": self.api_tls} if self.api_tls else {}))

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)

    def containers(self, **labels: str) -> list[Any]:
        filters = [f"minik8s.io/node={self.node}"] + [f"{k}={v}" for k, v in labels.items()]
        return docker_client().containers.list(all=True, filters={"label": filters})

    def cleanup(self) -> None:
        for c in self.containers():
            try:
                c.remove(force=True)
            except docker.errors.NotFound:
                pass
        for net in docker_client().networks.list(names=[self.network]):
            try:
                net.remove()
            except docker.errors.APIError:
                pass
        subprocess.run(["rm", "-rf", str(self.root)], check=False)
        subprocess.run([sys.executable, "-m", "minik8s", "kubelet", "--cleanup-network", "--cluster-cidr",
                        self.cluster_cidr], check=False, cwd=ROOT, capture_output=True, timeout=60)


@contextlib.contextmanager
def running_kubelet(apiserver: APIServer, workdir: Path, **kwargs: Any) -> Iterator[KubeletProcess]:
    """A started :class:`KubeletProcess` (skips without Docker); afterwards its containers,
    Node and Lease are removed."""
    try:
        docker_client().ping()
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"the Docker Engine does not answer: {exc}")
    k = KubeletProcess(apiserver, workdir, **kwargs)
    k.start()
    try:
        yield k
    finally:
        k.stop()
        k.cleanup()
        for path in (f"/api/v1/nodes/{k.node}",
                     f"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/{k.node}"):
            httpx.delete(apiserver.url + path, timeout=5, verify=k.api_tls or True)


# ---------------------------------------------------------------------------- helpers


def pod_body(name: str, node: str, containers: list[Obj], **spec: Any) -> Obj:
    spec.setdefault("terminationGracePeriodSeconds", 1)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"nodeName": node, "containers": containers, **spec}}


async def create_pod(client: Client, ns: str, body: Obj) -> Obj:
    return await client.create(client.kind("v1", "Pod"), body, ns)


async def get_pod(client: Client, ns: str, name: str) -> Obj:
    return await client.get(client.kind("v1", "Pod"), name, ns)


def cstatus(pod: Obj, container: str) -> Obj:
    for cs in (pod.get("status") or {}).get("containerStatuses") or []:
        if cs["name"] == container:
            return cs
    return {}


def conditions(pod: Obj) -> dict[str, str]:
    return {c["type"]: c["status"] for c in (pod.get("status") or {}).get("conditions") or []}


async def wait_phase(client: Client, ns: str, name: str, phase: str, timeout: float = 30.0) -> Obj:
    async def check() -> Obj | None:
        pod = await get_pod(client, ns, name)
        return pod if (pod.get("status") or {}).get("phase") == phase else None
    return await wait_for(check, timeout, what=f"pod {name} {phase}")  # type: ignore[no-any-return]


async def events_of(client: Client, ns: str, name: str) -> list[Obj]:
    listed = await client.list(client.kind("v1", "Event"), ns)
    return [e for e in listed["items"] if e["involvedObject"].get("name") == name]


async def pod_log(apiserver: APIServer, ns: str, name: str, **params: Any) -> str:
    async with httpx.AsyncClient(base_url=apiserver.url, timeout=10) as http:
        resp = await http.get(f"/api/v1/namespaces/{ns}/pods/{name}/log",
                              params={k: str(v).lower() if isinstance(v, bool) else v for k, v in params.items()})
        return f"{resp.status_code} {resp.text}" if resp.status_code != 200 else resp.text


async def exec_ws(apiserver: APIServer, ns: str, name: str, container: str, command: list[str],
                  stdin: bytes | None = None, protocol: str = "v5.channel.k8s.io") -> tuple[bytes, bytes, Obj]:
    """Exec through the apiserver; returns (stdout, stderr, status on channel 3)."""
    params: list[tuple[str, str | int | float | bool | None]] = [
        ("container", container), ("stdout", "true"), ("stderr", "true")]
    params += [("command", c) for c in command]
    if stdin is not None:
        params.append(("stdin", "true"))
    query = str(httpx.QueryParams(params))
    url = apiserver.url.replace("http://", "ws://") + f"/api/v1/namespaces/{ns}/pods/{name}/exec?{query}"
    out, err, status = b"", b"", {}
    async with websockets.connect(url, subprotocols=[protocol], open_timeout=10) as ws:  # type: ignore[list-item]
        assert ws.subprotocol == protocol
        if stdin is not None:
            await ws.send(b"\x00" + stdin)
            await ws.send(bytes([255, 0]))
        async for msg in ws:
            assert isinstance(msg, bytes)
            if msg[0] == 1:
                out += msg[1:]
            elif msg[0] == 2:
                err += msg[1:]
            elif msg[0] == 3:
                status = json.loads(msg[1:])
    return out, err, status

