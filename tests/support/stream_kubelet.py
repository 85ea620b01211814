"""A stand-in kubelet for kubectl's streaming verbs: it serves the two kubelet endpoints the apiserver
proxies to (``GET /containerLogs/{ns}/{pod}/{container}``: five lines ``line 1`` .. ``line 5``, honouring
``tailLines`` and ``timestamps``; the ``/exec/{ns}/{pod}/{container}`` WebSocket speaking
``v5.channel.k8s.io``: ``ran CMD`` on stdout, ``to stderr`` on stderr, the exit code of a last numeric
argument, ``cat`` upper-cases stdin) on 127.0.0.1, in its own thread.  A Node whose InternalIP and kubelet
port point at it (:func:`fake_node`), and Pods bound to that Node, make the apiserver route there.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from typing import Any
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import ServerConnection, serve
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from minik8s.client.rest import Client
from tests.support.processes import free_port


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


async def fake_node(client: Client, kubelet: FakeKubelet) -> str:
    """A new Node (``fake-<hex>``) whose kubelet endpoint is ``kubelet``; returns its name."""
    node_rt = client.kind("v1", "Node")
    node_name = f"fake-{os.urandom(3).hex()}"
    node = await client.create(node_rt, {"metadata": {"name": node_name}})
    node["status"] = {"addresses": [{"type": "InternalIP", "address": "127.0.0.1"}],
                      "daemonEndpoints": {"kubeletEndpoint": {"Port": kubelet.port}}}
    await client.update_status(node_rt, node)
    return node_name
