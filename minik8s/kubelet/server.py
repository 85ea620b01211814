"""The kubelet's HTTP server (what the apiserver proxies ``pods/log`` and ``pods/exec`` to).

Routes (Kubernetes' kubelet API):

- ``GET /healthz`` → ``ok``.
- ``GET /pods`` → the ``PodList`` of pods bound to this node (from the kubelet's cache).
- ``GET /stats/summary`` → node and pod CPU/memory usage (Kubernetes' Summary API, see
  :mod:`minik8s.kubelet.stats`).
- ``GET /containerLogs/{namespace}/{pod}/{container}`` with ``follow``, ``tailLines``,
  ``timestamps``, ``previous``, ``sinceSeconds``, ``limitBytes``: ``text/plain``, streamed
  while ``follow`` and the container runs.  ``previous`` reads the container's last
  terminated instance (``lastState``).  Errors are plain text with 404 (no such pod) or
  400 (unknown container, nothing to show), worded like the kubelet's.
- WebSocket ``/exec/{namespace}/{pod}/{container}?command=...&stdin=&stdout=&stderr=&tty=``
  with subprotocol ``v5.channel.k8s.io``, ``v4.channel.k8s.io`` or ``channel.k8s.io``.  Binary
  frames start with the channel byte: 0 stdin, 1 stdout, 2 stderr, 3 error, 4 resize
  (``{"Width": w, "Height": h}``); with v5 the client sends ``[255, 0]`` to close stdin.  At
  the end channel 3 carries a ``metav1.Status`` (v4/v5): ``Success``, or ``Failure`` with
  reason ``NonZeroExitCode`` and the exit code as cause ``ExitCode``; then the server closes.
  ``base64.channel.k8s.io`` and ``v4.base64.channel.k8s.io`` send text frames instead: the channel
  as an ASCII digit, then the payload in base64.
  Stdin in text frames counts as in binary ones (the official Python client sends it so).
- WebSocket ``/attach/{namespace}/{pod}/{container}?stdin=&stdout=&stderr=``: the same protocol,
  attached to the container's main process (stdin needs ``stdin: true`` in its spec); at the
  end its exit code if it ended, else Success.
- WebSocket ``/portForward/{namespace}/{pod}?ports=...``: TCP connections to the pod's own
  ``127.0.0.1`` ports (:mod:`minik8s.kubelet.portforward`).  A bad request or an unknown pod is
  refused before the upgrade (HTTP 403 with the reason).

Security (:func:`make_server`, the kubelet's flags): with ``--tls-cert-file`` and
``--tls-private-key-file`` the server speaks HTTPS; with ``--client-ca-file`` as well every
request, WebSocket upgrades included, must present a client certificate signed by that CA
(else 401 ``Unauthorized``) whose user is allowed by
:class:`~minik8s.kubelet.authorization.KubeletAuthorizer` (else 403 ``Forbidden (user=...)``),
plain-text bodies as the kubelet's.  Without these flags: plain HTTP, no authentication.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator
from typing import Protocol

import uvicorn
from fastapi import FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.types import ASGIApp

from minik8s.api.base import Obj
from minik8s.auth import Authenticator, AuthMiddleware
from minik8s.kubelet.authorization import KubeletAuthorizer
from minik8s.kubelet.portforward import parse_ports, run_port_forward
from minik8s.kubelet.runtime import DockerRuntime, ExecSession, RuntimeErrorBase
from minik8s.kubelet.stats import StatsProvider
from minik8s.serving.http import server_config, tls_serving_options

log = logging.getLogger("kubelet.server")

PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io", "channel.k8s.io", "v4.base64.channel.k8s.io",
             "base64.channel.k8s.io")
#: Protocols whose error channel carries a ``metav1.Status`` (the others: plain text).
VERSIONED = ("v5.channel.k8s.io", "v4.channel.k8s.io", "v4.base64.channel.k8s.io")
STDIN, STDOUT, STDERR, ERROR, RESIZE = 0, 1, 2, 3, 4
CLOSE = 255


class PodSource(Protocol):
    """What the server needs from the kubelet: its pods and their freshest status."""

    def pod(self, namespace: str, name: str) -> Obj | None: ...

    def pods(self) -> list[Obj]: ...

    def pod_status(self, pod: Obj) -> Obj: ...


class LookupError_(Exception):
    """A container cannot be resolved: ``code`` is the HTTP status (404 or 400)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _truthy(value: str | None) -> bool:
    return (value or "").lower() in ("1", "true", "yes", "t", "y")


def _strip_id(container_id: str | None) -> str | None:
    if not container_id:
        return None
    return container_id.split("://", 1)[-1]


def find_container(source: PodSource, namespace: str, name: str, container: str,
                   previous: bool = False, running: bool = False) -> str:
    """The Docker id behind ``namespace/name``'s ``container`` — a regular, init or ephemeral one
    (the kubelet's ``validateContainerLogStatus``).

    Raises LookupError_ (404 for an unknown pod, 400 otherwise).
    """
    pod = source.pod(namespace, name)
    if pod is None:
        raise LookupError_(404, f'pods "{name}" not found')
    spec = pod.get("spec") or {}
    names = [c.get("name") for kind in ("containers", "initContainers", "ephemeralContainers")
             for c in spec.get(kind) or []]
    if container not in names:
        raise LookupError_(400, f"container {container} is not valid for pod {name}")
    status = source.pod_status(pod)
    cs = next((s for kind in ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses")
               for s in status.get(kind) or [] if s.get("name") == container), None)
    if cs is None:
        raise LookupError_(400, f'container "{container}" in pod "{name}" is waiting to start: ContainerCreating')
    state, last = cs.get("state") or {}, cs.get("lastState") or {}
    if running:
        if "running" not in state:
            raise LookupError_(400, f'container "{container}" in pod "{name}" is not running')
        cid = _strip_id(cs.get("containerID"))
    elif previous:
        cid = _strip_id((last.get("terminated") or {}).get("containerID"))
        if not cid:
            raise LookupError_(400, f'previous terminated container "{container}" in pod "{name}" not found')
    elif "running" in state:
        cid = _strip_id(cs.get("containerID"))
    elif "terminated" in state:
        cid = _strip_id(state["terminated"].get("containerID") or cs.get("containerID"))
    else:
        cid = _strip_id((last.get("terminated") or {}).get("containerID"))
        if not cid:
            reason = (state.get("waiting") or {}).get("reason") or "ContainerCreating"
            raise LookupError_(400, f'container "{container}" in pod "{name}" is waiting to start: {reason}')
    if not cid:
        raise LookupError_(400, f'container "{container}" in pod "{name}" has no container id yet')
    return cid


def exit_status(code: int | None, command: list[str]) -> Obj:
    """The ``metav1.Status`` sent on channel 3 when an exec ends."""
    if code == 0:
        return {"metadata": {}, "status": "Success"}
    if code is None:
        return {"metadata": {}, "status": "Failure", "reason": "InternalError",
                "message": "the command's exit code is unknown"}
    return {"metadata": {}, "status": "Failure",
            "message": "command terminated with non-zero exit code: error executing command "
                       f"[{' '.join(command)}], exit code {code}",
            "reason": "NonZeroExitCode",
            "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]}}


def create_app(source: PodSource, runtime: DockerRuntime, stats: StatsProvider | None = None) -> FastAPI:
    """The kubelet's FastAPI application (see the module docstring)."""
    app = FastAPI(title="minik8s kubelet", docs_url=None, redoc_url=None, openapi_url=None)

    @app.get("/stats/summary")
    async def summary() -> Response:
        if stats is None:
            return PlainTextResponse("stats are not available", status_code=404)
        return JSONResponse(await stats.summary())

    @app.get("/healthz")
    async def healthz() -> Response:
        return PlainTextResponse("ok")

    @app.get("/pods")
    async def pods() -> Response:
        return JSONResponse({"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": source.pods()})

    @app.get("/containerLogs/{namespace}/{name}/{container}")
    async def container_logs(namespace: str, name: str, container: str, request: Request) -> Response:
        q = request.query_params
        try:
            cid = find_container(source, namespace, name, container, previous=_truthy(q.get("previous")))
            tail = int(q["tailLines"]) if q.get("tailLines") else None
            since_s = int(q["sinceSeconds"]) if q.get("sinceSeconds") else None
            limit = int(q["limitBytes"]) if q.get("limitBytes") else None
        except LookupError_ as exc:
            return PlainTextResponse(exc.message, status_code=exc.code)
        except ValueError as exc:
            return PlainTextResponse(f"invalid log options: {exc}", status_code=400)
        since = time.time() - since_s if since_s is not None else None
        follow = _truthy(q.get("follow"))
        try:
            stream = runtime.logs(cid, follow=follow, timestamps=_truthy(q.get("timestamps")), tail=tail,
                                  since=since)
            first = await anext(stream, None)
        except RuntimeErrorBase as exc:
            return PlainTextResponse(f"failed to get logs of {container}: {exc.message}", status_code=400)

        async def body() -> AsyncIterator[bytes]:
            sent = 0
            try:
                chunk = first
                while chunk is not None:
                    if limit is not None:
                        chunk = chunk[:max(limit - sent, 0)]
                    if chunk:
                        sent += len(chunk)
                        yield chunk
                    if limit is not None and sent >= limit:
                        return
                    chunk = await anext(stream, None)
            finally:
                await stream.aclose()  # type: ignore[attr-defined]

        return StreamingResponse(body(), media_type="text/plain")

    @app.websocket("/exec/{namespace}/{name}/{container}")
    async def exec_ws(websocket: WebSocket, namespace: str, name: str, container: str) -> None:
        await run_exec(websocket, source, runtime, namespace, name, container)

    @app.websocket("/attach/{namespace}/{name}/{container}")
    async def attach_ws(websocket: WebSocket, namespace: str, name: str, container: str) -> None:
        await run_exec(websocket, source, runtime, namespace, name, container, attach=True)

    @app.websocket("/portForward/{namespace}/{name}")
    async def port_forward_ws(websocket: WebSocket, namespace: str, name: str) -> None:
        params = websocket.query_params
        try:
            ports = parse_ports(params.getlist("ports") + params.getlist("port"))
            pod = source.pod(namespace, name)
            if pod is None:
                raise LookupError_(404, f'pods "{name}" not found')
            first = ((pod.get("spec") or {}).get("containers") or [{}])[0].get("name") or ""
            info = await runtime.inspect(find_container(source, namespace, name, first, running=True))
            pid = int((info.raw.get("State") or {}).get("Pid") or 0)
            if pid <= 0:
                raise LookupError_(400, f'pod "{name}" has no running process to forward into')
        except (ValueError, LookupError_, RuntimeErrorBase) as exc:
            await websocket.close(code=1008, reason=str(getattr(exc, "message", exc))[:120])
            return
        binary = tuple(p for p in PROTOCOLS if "base64" not in p)
        await run_port_forward(websocket, binary, ports, pid, f"{namespace}/{name}")

    return app


async def run_exec(ws: WebSocket, source: PodSource, runtime: DockerRuntime, namespace: str, name: str,
                   container: str, attach: bool = False) -> None:
    """Serve one exec WebSocket (Kubernetes' remotecommand channel protocol); ``attach``: the
    container's main process instead of a new command (its exit code once it ended, else Success)."""
    offered = [p.strip() for p in ws.headers.get("sec-websocket-protocol", "").split(",") if p.strip()]
    proto = next((p for p in offered if p in PROTOCOLS), None)
    await ws.accept(subprotocol=proto)
    versioned = proto in VERSIONED
    b64 = proto is not None and "base64" in proto

    async def send(channel: int, data: bytes) -> None:
        if b64:
            await ws.send_text(str(channel) + base64.b64encode(data).decode())
        else:
            await ws.send_bytes(bytes([channel]) + data)

    params = ws.query_params
    command = params.getlist("command")
    want_stdin, want_tty = _truthy(params.get("stdin")), _truthy(params.get("tty"))
    want_stdout, want_stderr = _truthy(params.get("stdout")), _truthy(params.get("stderr"))
    if want_tty:
        want_stderr = False

    async def fail(message: str, reason: str = "InternalError", code: int = 500) -> None:
        if versioned:
            payload = json.dumps({"metadata": {}, "status": "Failure", "message": message, "reason": reason,
                                  "code": code}).encode()
        else:
            payload = message.encode()
        with contextlib.suppress(Exception):
            await send(ERROR, payload)
            await ws.close()

    if not command and not attach:
        await fail("you must specify at least one command for the container", "BadRequest", 400)
        return
    if not (want_stdin or want_stdout or want_stderr):
        await fail("you must specify at least 1 of stdin, stdout, stderr", "BadRequest", 400)
        return
    try:
        cid = find_container(source, namespace, name, container, running=True)
    except LookupError_ as exc:
        await fail(exc.message, "NotFound" if exc.code == 404 else "BadRequest", exc.code)
        return
    session: ExecSession
    try:
        if attach:
            session = await runtime.open_attach(cid, stdin=want_stdin, stdout=want_stdout, stderr=want_stderr)
        else:
            session = await runtime.open_exec(cid, command, stdin=want_stdin, stdout=want_stdout,
                                              stderr=want_stderr, tty=want_tty)
    except RuntimeErrorBase as exc:
        await fail(f"failed to {'attach to' if attach else 'exec in'} container: {exc.message}")
        return
    log.info("kubelet %s pod=%s/%s container=%s command=%s", "attach" if attach else "exec", namespace, name,
             container, command)

    async def pump_out() -> None:
        while True:
            item = await session.read()
            if item is None:
                return
            stream, data = item
            await send(stream, data)

    async def pump_in() -> None:
        while True:
            msg = await ws.receive()
            if msg["type"] == "websocket.disconnect":
                raise WebSocketDisconnect(msg.get("code", 1000))
            data = msg.get("bytes")
            text = msg.get("text")
            if data is None and text and b64:
                try:
                    data = bytes([int(text[0])]) + base64.b64decode(text[1:], validate=True)
                except ValueError:
                    continue  # not a channel digit and base64: ignored
            elif data is None and text is not None:
                # A text frame carries the same channel-prefixed data (the official Python client sends
                # str stdin so; kube-apiserver reads a frame's payload whatever its opcode).
                data = text.encode()
            if not data:
                continue
            channel, payload = data[0], data[1:]
            if channel == STDIN and want_stdin:
                await session.write(payload)
            elif channel == RESIZE:
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    size = json.loads(payload)
                    await session.resize(int(size["Width"]), int(size["Height"]))
            elif channel == CLOSE and payload[:1] == bytes([STDIN]):
                await session.close_stdin()

    out_task = asyncio.create_task(pump_out())
    in_task = asyncio.create_task(pump_in())
    try:
        done, _ = await asyncio.wait({out_task, in_task}, return_when=asyncio.FIRST_COMPLETED)
        if out_task in done and out_task.exception() is None:
            code = await session.exit_code()
            status = exit_status(0 if attach and code is None else code, command or [container])
            if versioned:
                await send(ERROR, json.dumps(status).encode())
            elif status["status"] != "Success":
                await send(ERROR, status["message"].encode())
            await ws.close()
    except (WebSocketDisconnect, RuntimeError, RuntimeErrorBase) as exc:
        log.debug("kubelet exec pod=%s/%s ended: %s", namespace, name, exc)
    finally:
        for task in (out_task, in_task):
            task.cancel()
        session.close()
        for task in (out_task, in_task):
            with contextlib.suppress(BaseException):
                await task


class Server(uvicorn.Server):
    """uvicorn without its own signal handling (the kubelet owns SIGTERM/SIGINT)."""

    def capture_signals(self) -> contextlib.AbstractContextManager[None]:  # type: ignore[override]
        return contextlib.nullcontext()


def make_server(app: FastAPI, host: str, port: int, tls_cert_file: str | None = None,
                tls_private_key_file: str | None = None, client_ca_file: str | None = None) -> Server:
    """A uvicorn server for ``app`` on ``host:port`` (no access log, quick shutdown, request heads
    bounded in size and time: :func:`minik8s.serving.http.server_config`).

    HTTPS with ``tls_cert_file`` and ``tls_private_key_file``; ``client_ca_file`` (needs them)
    adds x509 client-certificate authentication and the kubelet's authorization (see the
    module docstring), as the kubelet with ``--anonymous-auth=false --authorization-mode=Webhook``.
    Raises ValueError naming the flag for an incomplete combination or a file that does not load.
    """
    serving = tls_serving_options(tls_cert_file, tls_private_key_file, client_ca_file)
    asgi: ASGIApp = app
    if client_ca_file:
        asgi = AuthMiddleware(app, Authenticator(client_certs=True), KubeletAuthorizer(), plain_text=True)
    config = server_config(asgi, host, port, serving, lifespan="off", timeout_graceful_shutdown=1)
    return Server(config)
