"""``kubectl logs`` and ``kubectl exec`` through the real apiserver to a stand-in kubelet.

The stand-in serves the two kubelet endpoints the apiserver proxies to (``GET
/containerLogs/{ns}/{pod}/{container}`` and the ``/exec/{ns}/{pod}/{container}``
WebSocket speaking ``v5.channel.k8s.io``) on 127.0.0.1, in its own thread. A Node
whose InternalIP and kubelet port point at it, and a Pod bound to that Node, make the
apiserver route there. The real kubelet is tested elsewhere; this checks kubectl's side.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from websockets.asyncio.server import ServerConnection, serve
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from minik8s.client import Client
from minik8s.client.kubeconfig import render
from tests.support.processes import ROOT, APIServer, free_port


class FakeKubelet:
    """Serves containerLogs and exec on 127.0.0.1:port from a background event loop."""

    def __init__(self) -> None:
        self.port = free_port()
        self.requests: list[str] = []
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        assert self.ready.wait(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self._serve())

    async def _serve(self) -> None:
        self.stop_event = asyncio.Event()
        async with serve(self._exec, "127.0.0.1", self.port, process_request=self._http,
                         subprotocols=["v5.channel.k8s.io", "v4.channel.k8s.io"]):  # type: ignore[list-item]
            self.ready.set()
            await self.stop_event.wait()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.stop_event.set)
        self.thread.join(10)

    def _http(self, connection: ServerConnection, request: Request) -> Response | None:
        self.requests.append(request.path)
        if not request.path.startswith("/containerLogs/"):
            return None  # go on with the WebSocket handshake
        query = parse_qs(urlsplit(request.path).query)
        lines = [f"line {i}" for i in range(1, 6)]
        if "tailLines" in query:
            lines = lines[-int(query["tailLines"][0]):]
        if query.get("timestamps") == ["true"]:
            lines = [f"2026-01-01T00:00:00Z {line}" for line in lines]
        body = ("\n".join(lines) + "\n").encode()
        return Response(200, "OK", Headers({"Content-Type": "text/plain", "Content-Length": str(len(body))}), body)

    async def _exec(self, ws: ServerConnection) -> None:
        query = parse_qs(urlsplit(ws.request.path if ws.request else "").query)
        command = query.get("command", [])
        status: dict[str, Any] = {"metadata": {}, "status": "Success"}
        if command[:1] == ["cat"]:
            data = b""
            async for message in ws:
                assert isinstance(message, bytes)
                if message[:1] == b"\xff":  # v5: the client closed stdin
                    break
                if message[:1] == b"\x00":
                    data += message[1:]
            await ws.send(b"\x01" + data.upper())
        else:
            await ws.send(b"\x01" + f"ran {' '.join(command)}\n".encode())
            await ws.send(b"\x02" + b"to stderr\n")
            code = int(command[-1]) if command and command[-1].isdigit() else 0
            if code:
                status = {"metadata": {}, "status": "Failure", "reason": "NonZeroExitCode",
                          "message": f"command terminated with non-zero exit code: {code}",
                          "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]}}
        await ws.send(b"\x03" + json.dumps(status).encode())
        await ws.close()


@pytest.fixture
def kubelet() -> Iterator[FakeKubelet]:
    fake = FakeKubelet()
    yield fake
    fake.stop()


@pytest.fixture
async def bound_pod(client: Client, namespace: str, kubelet: FakeKubelet) -> AsyncIterator[str]:
    node_rt = client.kind("v1", "Node")
    node_name = f"fake-{os.urandom(3).hex()}"
    node = await client.create(node_rt, {"metadata": {"name": node_name}})
    node["status"] = {"addresses": [{"type": "InternalIP", "address": "127.0.0.1"}],
                      "daemonEndpoints": {"kubeletEndpoint": {"Port": kubelet.port}}}
    await client.update_status(node_rt, node)
    pod_rt = client.kind("v1", "Pod")
    await client.create(pod_rt, {"metadata": {"name": "web"},
                                 "spec": {"containers": [{"name": "main", "image": "busybox"},
                                                         {"name": "side", "image": "busybox"}]}}, namespace)
    await client.bind(namespace, "web", node_name)
    yield node_name
    await client.delete(pod_rt, "web", namespace, grace_period_seconds=0)
    await client.delete(node_rt, node_name)  # other tests on this apiserver count nodes


def run(apiserver: APIServer, tmp_path: Path, namespace: str, *args: str,
        stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "kubeconfig"
    config.write_text(render(apiserver.url))
    return subprocess.run([sys.executable, "-m", "minik8s.kubectl", "--kubeconfig", str(config), "-n", namespace,
                           *args], input=stdin, capture_output=True, text=True, cwd=ROOT, timeout=60)


async def test_logs(apiserver: APIServer, tmp_path: Path, namespace: str, bound_pod: str,
                    kubelet: FakeKubelet) -> None:
    res = await asyncio.to_thread(run, apiserver, tmp_path, namespace, "logs", "web", "-c", "main")
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == [f"line {i}" for i in range(1, 6)]
    res = await asyncio.to_thread(run, apiserver, tmp_path, namespace, "logs", "pod/web", "-c", "side",
                                  "--tail", "2", "--timestamps")
    assert res.stdout.splitlines() == ["2026-01-01T00:00:00Z line 4", "2026-01-01T00:00:00Z line 5"]
    assert any(p.startswith(f"/containerLogs/{namespace}/web/side?") and "tailLines=2" in p
               for p in kubelet.requests)
    res = await asyncio.to_thread(run, apiserver, tmp_path, namespace, "logs", "web")
    assert res.returncode == 1 and res.stderr.count("\n") == 1
    assert res.stderr.startswith("Error from server (BadRequest): a container name must be specified")
    res = await asyncio.to_thread(run, apiserver, tmp_path, namespace, "logs", "nope", "-c", "main")
    assert res.returncode == 1 and res.stderr.strip() == 'Error from server (NotFound): pods "nope" not found'


async def test_exec(apiserver: APIServer, tmp_path: Path, namespace: str, bound_pod: str,
                    kubelet: FakeKubelet) -> None:
    res = await asyncio.to_thread(run, apiserver, tmp_path, namespace, "exec", "web", "-c", "main", "--",
                                  "ls", "-l", "/")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "ran ls -l /\n" and res.stderr == "to stderr\n"
    assert any(p.startswith(f"/exec/{namespace}/web/main?command=ls&command=-l&command=%2F")
               for p in kubelet.requests)

    res = await asyncio.to_thread(run, apiserver, tmp_path, namespace, "exec", "web", "-c", "main", "--",
                                  "sh", "-c", "exit", "7")
    assert res.returncode == 7
    assert res.stderr.splitlines()[-1] == "command terminated with exit code 7"

    res = await asyncio.to_thread(run, apiserver, tmp_path, namespace, "exec", "-i", "web", "-c", "side", "--",
                                  "cat", stdin="hello\nworld\n")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "HELLO\nWORLD\n"

    res = await asyncio.to_thread(run, apiserver, tmp_path, namespace, "exec", "nope", "--", "ls")
    assert res.returncode == 1 and res.stderr.strip() == 'Error from server (NotFound): pods "nope" not found'
    res = await asyncio.to_thread(run, apiserver, tmp_path, namespace, "exec", "web", "--", "ls")
    assert res.returncode == 1
    assert res.stderr.startswith("Error from server (BadRequest): a container name must be specified")
    res = await asyncio.to_thread(run, apiserver, tmp_path, namespace, "exec", "web")
    assert res.returncode == 1 and "you must specify at least one command" in res.stderr
