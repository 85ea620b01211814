"""Interactive exec through the apiserver to a real kubelet, driven by the official Python client's
``kubernetes.stream.stream`` (``v4.channel.k8s.io``) and by raw ``v5.channel.k8s.io`` WebSockets:
stdin is streamed as it arrives, stdout flushed as produced, ``exit`` ends the session with the
exit code on the error channel."""

from __future__ import annotations

import asyncio
import base64
import json
import time
from typing import Any
from urllib.parse import urlencode

import pytest
import websockets
from kubernetes import client as k8s
from kubernetes.stream import stream

from minik8s.client.rest import Client
from tests.support.kubelet import BUSYBOX, KubeletProcess, create_pod, pod_body, wait_phase
from tests.support.processes import APIServer

pytestmark = pytest.mark.docker


def _interactive(url: str, namespace: str) -> list[float]:
    cfg = k8s.Configuration()
    cfg.host = url
    api = k8s.CoreV1Api(k8s.ApiClient(cfg))
    resp = stream(api.connect_get_namespaced_pod_exec, "shell", namespace, command=["/bin/sh"], stdin=True,
                  stdout=True, stderr=True, tty=False, _preload_content=False)
    rtts = []
    try:
        resp.write_stdin("echo ready\n")  # the shell's start may take a moment on a busy machine
        assert resp.readline_stdout(timeout=10) == "ready"
        for i in range(20):  # then every line comes back within 1 s
            start = time.monotonic()
            resp.write_stdin(f"echo line-{i}\n")
            line = resp.readline_stdout(timeout=1)
            rtts.append(time.monotonic() - start)
            assert line == f"line-{i}", (i, line)
        resp.write_stdin("exit 7\n")
        deadline = time.monotonic() + 5
        while resp.is_open() and time.monotonic() < deadline:
            resp.update(timeout=0.2)
        assert not resp.is_open()
        assert resp.returncode == 7
    finally:
        resp.close()
    return rtts


async def test_interactive_exec_with_the_official_client(kubelet: KubeletProcess, client: Client, namespace: str,
                                                         apiserver: APIServer) -> None:
    await create_pod(client, namespace, pod_body("shell", kubelet.node, [
        {"name": "main", "image": BUSYBOX, "command": ["sleep", "3600"]}]))
    await wait_phase(client, namespace, "shell", "Running")
    rtts = await asyncio.to_thread(_interactive, apiserver.url, namespace)
    rtts.sort()
    print(f"\ninteractive exec round trip p50 {rtts[len(rtts) // 2] * 1000:.1f} ms, max {rtts[-1] * 1000:.1f} ms")


async def _next_frame(ws: Any, channel: int, timeout: float = 1.0) -> bytes:
    """The payload of the next frame on ``channel`` (others skipped) within ``timeout`` seconds."""
    async def wait() -> bytes:
        async for msg in ws:
            assert isinstance(msg, bytes)
            if msg[0] == channel:
                return bytes(msg[1:])
        raise AssertionError(f"closed before a frame on channel {channel}")
    return await asyncio.wait_for(wait(), timeout)


def _exec_url(apiserver: APIServer, namespace: str, command: list[str], tty: bool = False) -> str:
    params = [("stdin", "true"), ("stdout", "true"), ("stderr", "true"), ("tty", str(tty).lower())]
    params += [("command", c) for c in command]
    return apiserver.url.replace("http://", "ws://") + \
        f"/api/v1/namespaces/{namespace}/pods/shell/exec?{urlencode(params)}"


@pytest.mark.parametrize("protocol", ["v5.channel.k8s.io", "v4.channel.k8s.io"])
async def test_interactive_exec_over_channel_protocols(kubelet: KubeletProcess, client: Client, namespace: str,
                                                       apiserver: APIServer, protocol: str) -> None:
    await create_pod(client, namespace, pod_body("shell", kubelet.node, [
        {"name": "main", "image": BUSYBOX, "command": ["sleep", "3600"]}]))
    await wait_phase(client, namespace, "shell", "Running")
    async with websockets.connect(_exec_url(apiserver, namespace, ["sh"]), subprotocols=[protocol],  # type: ignore[list-item]
                                  open_timeout=10) as ws:
        assert ws.subprotocol == protocol
        await ws.send(b"\x00echo ready\n")  # the shell's start may take a moment on a busy machine
        assert await _next_frame(ws, 1, timeout=10) == b"ready\n"
        for i in range(3):
            await ws.send(b"\x00" + f"echo out-{i}; echo err-{i} >&2\n".encode())
            assert await _next_frame(ws, 1) == f"out-{i}\n".encode()
        await ws.send(b"\x00exit 3\n")
        status = json.loads(await _next_frame(ws, 3, timeout=5))
        assert status["status"] == "Failure" and status["reason"] == "NonZeroExitCode"
        assert status["details"]["causes"] == [{"reason": "ExitCode", "message": "3"}]
        await asyncio.wait_for(ws.wait_closed(), 5)
    if protocol == "v5.channel.k8s.io":  # v5 closes stdin with [255, 0]: cat sees EOF and ends
        async with websockets.connect(_exec_url(apiserver, namespace, ["cat"]), subprotocols=[protocol],  # type: ignore[list-item]
                                      open_timeout=10) as ws:
            await ws.send(b"\x00first\n")
            assert await _next_frame(ws, 1, timeout=10) == b"first\n"
            await ws.send(bytes([255, 0]))
            assert json.loads(await _next_frame(ws, 3, timeout=5))["status"] == "Success"


@pytest.mark.parametrize("protocol", ["base64.channel.k8s.io", "v4.base64.channel.k8s.io"])
async def test_exec_over_base64_channels(kubelet: KubeletProcess, client: Client, namespace: str,
                                         apiserver: APIServer, protocol: str) -> None:
    """Text frames: the channel as an ASCII digit, then base64."""
    await create_pod(client, namespace, pod_body("shell", kubelet.node, [
        {"name": "main", "image": BUSYBOX, "command": ["sleep", "3600"]}]))
    await wait_phase(client, namespace, "shell", "Running")
    async with websockets.connect(_exec_url(apiserver, namespace, ["sh"]), subprotocols=[protocol],  # type: ignore[list-item]
                                  open_timeout=10) as ws:
        assert ws.subprotocol == protocol
        await ws.send("0" + base64.b64encode(b"echo b64-ok; exit 2\n").decode())
        frames: list[tuple[str, bytes]] = []
        async for msg in ws:
            assert isinstance(msg, str)
            frames.append((msg[0], base64.b64decode(msg[1:])))
    assert ("1", b"b64-ok\n") in frames
    error = b"".join(data for channel, data in frames if channel == "3").decode()
    if protocol.startswith("v4."):
        assert json.loads(error)["details"]["causes"] == [{"reason": "ExitCode", "message": "2"}]
    else:
        assert "exit code 2" in error


async def test_tty_resize_on_channel_4(kubelet: KubeletProcess, client: Client, namespace: str,
                                       apiserver: APIServer) -> None:
    await create_pod(client, namespace, pod_body("shell", kubelet.node, [
        {"name": "main", "image": BUSYBOX, "command": ["sleep", "3600"]}]))
    await wait_phase(client, namespace, "shell", "Running")
    async with websockets.connect(_exec_url(apiserver, namespace, ["sh"], tty=True),
                                  subprotocols=["v5.channel.k8s.io"], open_timeout=10) as ws:  # type: ignore[list-item]
        await ws.send(b"\x04" + json.dumps({"Width": 123, "Height": 45}).encode())
        await ws.send(b"\x00stty size; exit\n")
        seen = b""

        async def size_shown() -> None:
            nonlocal seen
            while b"45 123" not in seen:
                seen += await _next_frame(ws, 1, timeout=5)

        await asyncio.wait_for(size_shown(), 5)


def _http_get_through(pf: Any, port: int) -> bytes:
    """One HTTP/1.0 GET over the forwarded port; b"" when the connection ended without an answer."""
    sock = pf.socket(port)
    sock.setblocking(True)
    sock.settimeout(5)
    got = b""
    try:
        sock.sendall(b"GET /index.html HTTP/1.0\r\nHost: pod\r\n\r\n")
        while chunk := sock.recv(65536):
            got += chunk
    except OSError:  # refused in the pod: the server reported it and closed
        return b""
    finally:
        sock.close()
    return got


def _port_forward(url: str, namespace: str) -> tuple[bytes, str | None]:
    from kubernetes.stream import portforward

    cfg = k8s.Configuration()
    cfg.host = url
    api = k8s.CoreV1Api(k8s.ApiClient(cfg))
    deadline = time.monotonic() + 10
    body = b""
    while not body and time.monotonic() < deadline:  # Running is not yet listening: retry until httpd is
        pf = portforward(api.connect_get_namespaced_pod_portforward, "web", namespace, ports="8080")
        body = _http_get_through(pf, 8080)
        pf.close()
        if not body:
            time.sleep(0.1)
    closed = portforward(api.connect_get_namespaced_pod_portforward, "web", namespace, ports="8081")
    deadline = time.monotonic() + 5
    while closed.error(8081) is None and time.monotonic() < deadline:
        time.sleep(0.05)
    error = closed.error(8081)
    closed.close()
    return body, error


async def test_portforward_to_the_pods_loopback(kubelet: KubeletProcess, client: Client, namespace: str,
                                                 apiserver: APIServer) -> None:
    # httpd listens on the pod's 127.0.0.1 only: reachable through the pod's network namespace alone
    await create_pod(client, namespace, pod_body("web", kubelet.node, [
        {"name": "main", "image": BUSYBOX, "command": [
            "sh", "-c", "echo hello-through-portforward > /tmp/index.html; exec httpd -f -p 127.0.0.1:8080 -h /tmp"]}]))
    await wait_phase(client, namespace, "web", "Running")
    body, error = await asyncio.to_thread(_port_forward, apiserver.url, namespace)
    assert body.startswith(b"HTTP/1.") and b"hello-through-portforward" in body
    assert error is not None and "8081" in error and "refused" in error.lower()


def _attach(url: str, namespace: str) -> int | None:
    cfg = k8s.Configuration()
    cfg.host = url
    api = k8s.CoreV1Api(k8s.ApiClient(cfg))
    resp = stream(api.connect_get_namespaced_pod_attach, "attached", namespace, container="main", stdin=True,
                  stdout=True, stderr=True, tty=False, _preload_content=False)
    try:
        resp.write_stdin("echo attached-$((6*7))\n")
        assert resp.readline_stdout(timeout=10) == "attached-42"
        resp.write_stdin("exit 4\n")  # the container's main process ends: the session ends with its code
        deadline = time.monotonic() + 10
        while resp.is_open() and time.monotonic() < deadline:
            resp.update(timeout=0.2)
        assert not resp.is_open()
        return resp.returncode  # type: ignore[no-any-return]
    finally:
        resp.close()


async def test_attach_to_the_main_process(kubelet: KubeletProcess, client: Client, namespace: str,
                                          apiserver: APIServer) -> None:
    await create_pod(client, namespace, pod_body("attached", kubelet.node, [
        {"name": "main", "image": BUSYBOX, "command": ["sh"], "stdin": True}], restartPolicy="Never"))
    await wait_phase(client, namespace, "attached", "Running")
    assert await asyncio.to_thread(_attach, apiserver.url, namespace) == 4
    await wait_phase(client, namespace, "attached", "Failed")
