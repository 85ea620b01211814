"""Pod fields the kubelet honours, in real containers: ``hostPID``/``hostIPC`` (the host's
namespaces), ``readinessGates`` (Ready waits for the gates' conditions), ``grpc`` probes (the
gRPC health checking protocol against a grpcio health server in a pod, and on loopback),
``subPathExpr`` (expanded from the container's environment), ``mountPropagation`` (Docker's bind
propagation), ``postStart``/``preStop`` ``sleep`` and ``imagePullSecrets`` (the Secret's
credentials in Docker's pull).

One real kubelet process on the real Docker Engine against the real apiserver. No registry
exists here: a small HTTP stand-in on loopback answers ``/v2/`` with a Basic challenge and
records the ``Authorization`` the Docker Engine sends (then 404s the manifest).
"""

from __future__ import annotations

import asyncio
import base64
import http.server
import json
import os
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from minik8s.api.base import parse_time
from minik8s.client.rest import Client
from minik8s.kubelet.probes import grpc_check
from tests.support.kubelet import (
    BUSYBOX,
    KubeletProcess,
    create_pod,
    cstatus,
    events_of,
    exec_ws,
    get_pod,
    pod_body,
    wait_phase,
)
from tests.support.processes import APIServer
from tests.support.waiting import wait_for

pytestmark = pytest.mark.docker

PYTHON = "minik8s/python"
HEALTH_SERVER = """
import asyncio, grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
async def main():
    server = grpc.aio.server()
    servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    server.add_insecure_port("0.0.0.0:50051")
    await servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    await servicer.set("down", health_pb2.HealthCheckResponse.NOT_SERVING)
    await server.start()
    await server.wait_for_termination()
asyncio.run(main())
"""


@pytest.fixture(scope="module")
def kubelet_flags() -> list[str]:
    return []


def grpc_site_packages() -> str:
    """The site-packages holding grpcio, grpcio-health-checking and protobuf (this virtualenv's,
    mounted into the health server's pod: minik8s/python has the same Python minor version)."""
    import grpc
    return str(Path(grpc.__file__).resolve().parent.parent)


async def sh(apiserver: APIServer, ns: str, pod: str, container: str, script: str) -> str:
    out, err, status = await exec_ws(apiserver, ns, pod, container, ["sh", "-c", script])
    assert status.get("status") == "Success", (script, out, err, status)
    return out.decode()


def condition(pod: dict, ctype: str) -> dict:
    return next((c for c in (pod.get("status") or {}).get("conditions") or [] if c.get("type") == ctype), {})


async def wait_pod(client: Client, ns: str, name: str, check, what: str, timeout: float = 60.0) -> dict:  # type: ignore[no-untyped-def]
    async def probe() -> dict | None:
        pod = await get_pod(client, ns, name)
        return pod if check(pod) else None
    return await wait_for(probe, timeout, what=what)  # type: ignore[no-any-return]


async def test_host_pid_and_ipc(kubelet: KubeletProcess, client: Client, namespace: str,
                                apiserver: APIServer) -> None:
    await create_pod(client, namespace, pod_body("host-ns", kubelet.node, [
        {"name": "c", "image": BUSYBOX, "command": ["sleep", "3600"]}], hostPID=True, hostIPC=True))
    await create_pod(client, namespace, pod_body("own-ns", kubelet.node, [
        {"name": "c", "image": BUSYBOX, "command": ["sleep", "3600"]}]))
    await wait_phase(client, namespace, "host-ns", "Running", 60)
    await wait_phase(client, namespace, "own-ns", "Running", 60)
    host = [os.readlink(f"/proc/self/ns/{ns}") for ns in ("pid", "ipc")]
    script = "readlink /proc/self/ns/pid; readlink /proc/self/ns/ipc"
    assert (await sh(apiserver, namespace, "host-ns", "c", script)).split() == host
    own = (await sh(apiserver, namespace, "own-ns", "c", script)).split()
    assert own[0] != host[0] and own[1] != host[1]


async def test_readiness_gates(kubelet: KubeletProcess, client: Client, namespace: str) -> None:
    await create_pod(client, namespace, pod_body("gated", kubelet.node, [
        {"name": "c", "image": BUSYBOX, "command": ["sleep", "3600"]}],
        readinessGates=[{"conditionType": "example.com/load-balancer"}]))
    pod = await wait_pod(client, namespace, "gated", lambda p: condition(p, "ContainersReady").get("status") == "True"
                         and condition(p, "Ready").get("reason") == "ReadinessGatesNotReady", "containers ready, gated")
    assert condition(pod, "Ready")["message"] == \
        'corresponding condition of pod readiness gate "example.com/load-balancer" does not exist.'
    # the gate's owner sets its condition through the status subresource; the kubelet reacts
    await client.patch(client.kind("v1", "Pod"), "gated", {"status": {"conditions": [
        {"type": "example.com/load-balancer", "status": "True"}]}}, namespace, patch_type="strategic",
        subresource="status")
    pod = await wait_pod(client, namespace, "gated", lambda p: condition(p, "Ready").get("status") == "True",
                         "Ready after the gate")
    assert condition(pod, "example.com/load-balancer")["status"] == "True"


async def test_grpc_probes_in_a_pod(kubelet: KubeletProcess, client: Client, namespace: str) -> None:
    """A grpcio health server in a pod: the container probed for service ``""`` turns ready, the one
    probed for ``down`` (NOT_SERVING) does not and gets Unhealthy events with Kubernetes' message."""
    probe = {"grpc": {"port": 50051}, "periodSeconds": 1, "failureThreshold": 1}
    await create_pod(client, namespace, pod_body("grpc", kubelet.node, [
        {"name": "server", "image": PYTHON, "command": ["python3", "-c", HEALTH_SERVER],
         "env": [{"name": "PYTHONPATH", "value": "/grpc-site"}],
         "volumeMounts": [{"name": "site", "mountPath": "/grpc-site", "readOnly": True}],
         "readinessProbe": probe},
        {"name": "down", "image": BUSYBOX, "command": ["sleep", "3600"],
         "readinessProbe": {**probe, "grpc": {"port": 50051, "service": "down"}}}],
        volumes=[{"name": "site", "hostPath": {"path": grpc_site_packages(), "type": "Directory"}}]))
    await wait_pod(client, namespace, "grpc", lambda p: cstatus(p, "server").get("ready") is True,
                   "the gRPC-probed container ready", 90)

    # (before the server listened, its probes failed to connect; now it answers NOT_SERVING)
    async def unhealthy() -> dict | None:
        return next((e for e in await events_of(client, namespace, "grpc") if e["reason"] == "Unhealthy"
                     and "down" in e["involvedObject"].get("fieldPath", "") and "NOT_SERVING" in e["message"]), None)
    event = await wait_for(unhealthy, 30, what="an Unhealthy NOT_SERVING event")
    assert event["message"] == 'Readiness probe failed: service unhealthy (responded with "NOT_SERVING")'
    assert cstatus(await get_pod(client, namespace, "grpc"), "down")["ready"] is False


@pytest.fixture
async def health_server() -> AsyncIterator[int]:
    """A grpcio health server on loopback: ``""`` SERVING, ``down`` NOT_SERVING."""
    import grpc
    from grpc_health.v1 import health, health_pb2, health_pb2_grpc
    server = grpc.aio.server()
    servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    await servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    await servicer.set("down", health_pb2.HealthCheckResponse.NOT_SERVING)
    yield port
    await server.stop(None)


async def test_grpc_check_messages(health_server: int) -> None:
    port = health_server
    assert await grpc_check("127.0.0.1", port, "", 5) == (True, "service healthy")
    assert await grpc_check("127.0.0.1", port, "down", 5) == (False, 'service unhealthy (responded with "NOT_SERVING")')
    assert await grpc_check("127.0.0.1", port, "unknown", 5) == (
        False, "error: this server does not implement the grpc health protocol (grpc.health.v1.Health): "
               "rpc error: code = NotFound desc = ")
    import socket
    with socket.socket() as s:  # bound, never listening: nobody answers
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
        started = time.monotonic()
        assert await asyncio.wait_for(grpc_check("127.0.0.1", closed, "", 0.5), 10) == (
            False, f'timeout: failed to connect service "127.0.0.1:{closed}" within 0.5s: context deadline exceeded')
    assert time.monotonic() - started < 5


async def test_sub_path_expr_and_mount_propagation(kubelet: KubeletProcess, client: Client, namespace: str,
                                                   apiserver: APIServer) -> None:
    pod_name_env = {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}
    await create_pod(client, namespace, pod_body("subpath", kubelet.node, [
        {"name": "c", "image": BUSYBOX, "command": ["sh", "-c", "echo hi > /logs/out; sleep 3600"],
         "env": [pod_name_env],
         "volumeMounts": [{"name": "data", "mountPath": "/logs", "subPathExpr": "app/$(POD_NAME)"},
                          {"name": "data", "mountPath": "/all"}]},
        {"name": "missing", "image": BUSYBOX, "command": ["sleep", "3600"],
         "volumeMounts": [{"name": "data", "mountPath": "/x", "subPathExpr": "$(NOPE)"}]},
        {"name": "slave", "image": BUSYBOX, "command": ["sleep", "3600"],
         "volumeMounts": [{"name": "data", "mountPath": "/x", "mountPropagation": "HostToContainer"}]}],
        volumes=[{"name": "data", "emptyDir": {}}]))
    def settled(p: dict) -> bool:
        slave = cstatus(p, "slave").get("state") or {}
        return (cstatus(p, "c").get("ready") is True
                and ((cstatus(p, "missing").get("state") or {}).get("waiting") or {}).get("reason")
                == "CreateContainerConfigError"
                and ("running" in slave or "not a shared or slave mount" in str(slave)))
    pod = await wait_pod(client, namespace, "subpath", settled, "the subPathExpr container running", 60)
    assert cstatus(pod, "missing")["state"]["waiting"]["message"] == "missing value for NOPE"
    out = await sh(apiserver, namespace, "subpath", "c", "cat /all/app/subpath/out")
    assert out == "hi\n"
    # rslave: Docker mounts it, or refuses a source that is not on a shared or slave mount (the
    # kubelet's root here is on a private mount: CreateContainerError or RunContainerError with
    # Docker's message); either way the option reached Docker
    if "running" in cstatus(pod, "slave")["state"]:
        binds = kubelet.containers(**{"io.kubernetes.container.name": "slave"})[0].attrs["HostConfig"]["Binds"]
        assert any(b.endswith(":/x:rw,rslave") for b in binds)


async def test_sleep_hooks(kubelet: KubeletProcess, client: Client, namespace: str) -> None:
    """postStart sleep: the container counts as started (Ready) only after it; preStop sleep: the
    deletion waits for it, well inside the grace period."""
    await create_pod(client, namespace, pod_body("sleepy", kubelet.node, [
        {"name": "c", "image": BUSYBOX, "command": ["sh", "-c", "trap 'exit 0' TERM; while :; do sleep 0.1; done"],
         "lifecycle": {"postStart": {"sleep": {"seconds": 2}}, "preStop": {"sleep": {"seconds": 2}}}}],
        terminationGracePeriodSeconds=30))
    pod = await wait_pod(client, namespace, "sleepy", lambda p: condition(p, "Ready").get("status") == "True",
                         "sleepy Ready", 60)
    started = cstatus(pod, "c")["state"]["running"]["startedAt"]
    ready_at, started_at = parse_time(condition(pod, "Ready")["lastTransitionTime"]), parse_time(started)
    assert ready_at is not None and started_at is not None
    assert (ready_at - started_at).total_seconds() >= 1
    began = time.monotonic()
    await client.delete(client.kind("v1", "Pod"), "sleepy", namespace)

    async def gone() -> bool:
        try:
            await get_pod(client, namespace, "sleepy")
        except Exception:  # noqa: BLE001 - NotFound: deleted
            return True
        return False
    await wait_for(gone, 60, what="sleepy deleted")
    assert 2 <= time.monotonic() - began < 25


class RegistryStandIn(http.server.BaseHTTPRequestHandler):
    """``/v2/`` with a Basic challenge; every request's ``Authorization`` recorded on the server."""

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.server.seen.append((self.path, self.headers.get("Authorization")))  # type: ignore[attr-defined]
        if not self.headers.get("Authorization"):
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="stand-in"')
        else:
            self.send_response(404)
        self.send_header("Docker-Distribution-API-Version", "registry/2.0")
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_HEAD = do_GET

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def registry() -> Iterator[http.server.ThreadingHTTPServer]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), RegistryStandIn)
    server.seen = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


async def test_image_pull_secrets_reach_the_registry(kubelet: KubeletProcess, client: Client, namespace: str,
                                                     registry: http.server.ThreadingHTTPServer) -> None:
    address = f"127.0.0.1:{registry.server_address[1]}"
    config = {"auths": {address: {"username": "puller", "password": "s3cret",
                                  "auth": base64.b64encode(b"puller:s3cret").decode()}}}
    await client.create(client.kind("v1", "Secret"), {
        "metadata": {"name": "regcred"}, "type": "kubernetes.io/dockerconfigjson",
        "data": {".dockerconfigjson": base64.b64encode(json.dumps(config).encode()).decode()}}, namespace)
    await create_pod(client, namespace, pod_body("pulled", kubelet.node, [
        {"name": "c", "image": f"{address}/team/app:1.0", "imagePullPolicy": "Always"}],
        imagePullSecrets=[{"name": "regcred"}]))
    expected = "Basic " + base64.b64encode(b"puller:s3cret").decode()

    async def authorised() -> bool:
        return any(auth == expected and path.startswith("/v2/team/app/manifests/")
                   for path, auth in list(registry.seen))  # type: ignore[attr-defined]
    await wait_for(authorised, 60, what="an authorised manifest request")
    pod = await wait_pod(client, namespace, "pulled", lambda p: ((cstatus(p, "c").get("state") or {})
                         .get("waiting") or {}).get("reason") in ("ErrImagePull", "ImagePullBackOff"),
                         "the pull failed (no such image)", 60)
    assert cstatus(pod, "c")["state"]["waiting"]["reason"] in ("ErrImagePull", "ImagePullBackOff")
