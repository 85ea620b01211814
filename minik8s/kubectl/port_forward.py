"""``kubectl port-forward (POD | TYPE/NAME) [LOCAL_PORT:]REMOTE_PORT... [--address ADDR,...]``: local
ports that lead to a pod's ports, until interrupted.

Each local connection gets its own WebSocket to ``/api/v1/namespaces/{ns}/pods/{name}/portforward
?ports=REMOTE`` (subprotocol ``v4.channel.k8s.io``; Kubernetes' WebSocket port forwarding: data on
channel 0, errors on channel 1, each channel's first frame the port, 2 bytes little-endian), and its
bytes go both ways until either side closes.

As kubectl: ``TYPE/NAME`` forwards to a workload's most active pod, and a Service's port is
translated to its pod's (``targetPort``, by number or by the container port's name); ``LOCAL`` may
be left out (the same port) or empty (``:80``, a free port); ``--address`` defaults to
``localhost`` (127.0.0.1 and ::1). It prints ``Forwarding from ADDR:LOCAL -> REMOTE`` for each
listener and ``Handling connection for LOCAL`` for each connection; an error from the pod's side
(nothing listens on the port) is logged and ends the command with ``error: lost connection to
pod`` and exit code 1, as kubectl >= 1.31 does. A pod that is not Running is refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import os
import socket
import sys
from typing import Annotated, Any

import typer

from minik8s.api.base import Obj
from minik8s.client.kubeconfig import ClientConfig
from minik8s.kubectl.attaching import resolve_pod
from minik8s.kubectl.channels import connect_options, parse_frame, ws_base
from minik8s.kubectl.errors import KubectlError
from minik8s.kubectl.options import duration_flag
from minik8s.kubectl.session import GlobalOptions, Session

DATA, ERROR = 0, 1
PROTOCOLS = ["v4.channel.k8s.io"]


def parse_port_spec(spec: str) -> tuple[str, str]:
    """``[LOCAL:]REMOTE`` → ``(local, remote)`` as written (``local`` empty for a free port)."""
    local, colon, remote = spec.partition(":")
    if not colon:
        return spec, spec
    return local, remote


def _port(value: str, what: str) -> int:
    """A port number as kubectl parses it (Go's ``strconv.ParseUint(value, 10, 16)``, in its words)."""
    if not value.isdigit():
        raise KubectlError(f"error parsing {what} port '{value}': strconv.ParseUint: parsing \"{value}\": "
                           "invalid syntax")
    if int(value) > 65535:
        raise KubectlError(f"error parsing {what} port '{value}': strconv.ParseUint: parsing \"{value}\": "
                           "value out of range")
    return int(value)


def container_port(pod: Obj, name: str) -> int | None:
    """The container port named ``name`` in the pod."""
    for c in (pod.get("spec") or {}).get("containers") or []:
        for p in c.get("ports") or []:
            if p.get("name") == name:
                return int(p["containerPort"])
    return None


def service_target(service: Obj, pod: Obj, port: int) -> int:
    """The pod port a Service's ``port`` leads to (its ``targetPort``, a number or a container port's
    name; the port itself without one). Raises KubectlError when the Service has no such port."""
    for p in (service.get("spec") or {}).get("ports") or []:
        if int(p.get("port", -1)) != port:
            continue
        target = p.get("targetPort", port)
        if isinstance(target, int) or str(target).isdigit():
            return int(target)
        found = container_port(pod, str(target))
        if found is None:
            raise KubectlError(f"pod has no container port named {target}")
        return found
    raise KubectlError(f"Service {service['metadata']['name']} does not have a service port {port}")


def _log_error(message: str) -> None:
    """An error from the pod's side, in the shape of kubectl's log line (klog's ``E`` prefix)."""
    now = dt.datetime.now()
    escaped = message.replace("\\", "\\\\").replace('"', '\\"')
    print(f'E{now:%m%d %H:%M:%S.%f} {os.getpid():7d} portforward] "Unhandled Error" err="{escaped}" '
          f'logger="UnhandledError"', file=sys.stderr, flush=True)


class Forwarder:
    """The listeners of one ``port-forward`` and the WebSocket of each connection."""

    def __init__(self, config: ClientConfig, namespace: str, pod: str) -> None:
        self.config = config
        self.namespace = namespace
        self.pod = pod
        self.lost = asyncio.Event()
        self.connections: set[asyncio.Task[Any]] = set()

    def url(self, remote: int) -> str:
        return f"{ws_base(self.config.server)}/api/v1/namespaces/{self.namespace}/pods/{self.pod}/portforward" \
               f"?ports={remote}"

    async def handle(self, local: int, remote: int, reader: asyncio.StreamReader,
                     writer: asyncio.StreamWriter) -> None:
        from websockets.asyncio.client import connect
        from websockets.exceptions import WebSocketException

        task = asyncio.current_task()
        if task is not None:
            self.connections.add(task)
            task.add_done_callback(self.connections.discard)
        print(f"Handling connection for {local}", flush=True)
        options = {**connect_options(self.config), "subprotocols": list(PROTOCOLS)}
        try:
            async with connect(self.url(remote), **options) as ws:
                await self._relay(ws, local, remote, reader, writer)
        except (OSError, WebSocketException) as exc:
            _log_error(f"an error occurred forwarding {local} -> {remote}: {exc}")
            self.lost.set()
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    async def _relay(self, ws: Any, local: int, remote: int, reader: asyncio.StreamReader,
                     writer: asyncio.StreamWriter) -> None:
        prefixed = {DATA: False, ERROR: False}  # each channel's first frame is the port number

        async def upstream() -> None:
            while chunk := await reader.read(65536):
                await ws.send(bytes([DATA]) + chunk)

        sending = asyncio.create_task(upstream())
        try:
            async for message in ws:
                channel, payload = parse_frame(message)
                if channel in prefixed and not prefixed[channel]:
                    prefixed[channel] = True
                    payload = payload[2:]
                if not payload:
                    continue
                if channel == DATA:
                    writer.write(payload)
                    await writer.drain()
                elif channel == ERROR:
                    _log_error(f"an error occurred forwarding {local} -> {remote}: "
                               f"{payload.decode(errors='replace')}")
                    self.lost.set()
                    return
        finally:
            sending.cancel()
            with contextlib.suppress(BaseException):
                await sending


class _Listening:
    """One ``LOCAL:REMOTE`` pair's listeners (the same local port on every address; 0 until bound)."""

    def __init__(self, forwarder: Forwarder, port: int, remote: int) -> None:
        self.forwarder = forwarder
        self.port = port
        self.remote = remote

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await self.forwarder.handle(self.port, self.remote, reader, writer)


def _addresses(address: str) -> list[str]:
    found: list[str] = []
    for a in address.split(","):
        a = a.strip()
        found += ["127.0.0.1", "::1"] if a == "localhost" else [a]
    return found


async def _forward(config: ClientConfig, namespace: str, pod: str, pairs: list[tuple[int, int]],
                   address: str) -> int:
    forwarder = Forwarder(config, namespace, pod)
    servers = []
    for local, remote in pairs:
        listening = _Listening(forwarder, local, remote)
        for addr in _addresses(address):
            family = socket.AF_INET6 if ":" in addr else socket.AF_INET
            try:
                server = await asyncio.start_server(listening.handle, addr, listening.port, family=family)
            except OSError as exc:
                if addr == "::1" and len(_addresses(address)) > 1:
                    continue  # no IPv6 loopback here: 127.0.0.1 is enough, as kubectl finds
                raise KubectlError(f"unable to listen on port {local}: Listeners failed to create with the "
                                   f"following errors: [unable to create listener: Error listen tcp "
                                   f"{addr}:{local}: {exc.strerror or exc}]") from None
            listening.port = server.sockets[0].getsockname()[1]
            shown = f"[{addr}]" if ":" in addr else addr
            print(f"Forwarding from {shown}:{listening.port} -> {remote}", flush=True)
            servers.append(server)
    try:
        await forwarder.lost.wait()
    finally:
        for server in servers:
            server.close()
        for task in list(forwarder.connections):
            task.cancel()
        await asyncio.gather(*forwarder.connections, return_exceptions=True)
    return 1


def port_forward(
    ctx: typer.Context,
    pod: Annotated[str, typer.Argument(metavar="(POD | TYPE/NAME)", help="pod name, pod/NAME or TYPE/NAME")],
    ports: Annotated[list[str] | None, typer.Argument(metavar="[LOCAL_PORT:]REMOTE_PORT...", help="the ports")]
    = None,
    address: Annotated[str, typer.Option("--address", help="addresses to listen on (comma-separated)")]
    = "localhost",
    pod_running_timeout: Annotated[str, typer.Option("--pod-running-timeout",
                                                     help="how long to wait for a workload's pod")] = "1m0s",
) -> None:
    """Forward one or more local ports to a pod."""
    if not ports:  # kubectl's usage error, in its words
        print("error: TYPE/NAME and list of ports are required for port-forward\n"
              "See 'kubectl port-forward -h' for help and examples", file=sys.stderr)
        raise typer.Exit(1)
    opts: GlobalOptions = ctx.obj
    config = opts.config()
    wait = duration_flag(pod_running_timeout, "--pod-running-timeout")
    obj, pairs = asyncio.run(_target(opts, pod, ports, wait))
    meta = obj.get("metadata") or {}
    try:
        code = asyncio.run(_forward(config, str(meta.get("namespace")), str(meta.get("name")), pairs, address))
    except KeyboardInterrupt:
        code = 0
    if code:
        print("error: lost connection to pod", file=sys.stderr)
        raise typer.Exit(code)


async def _target(opts: GlobalOptions, arg: str, specs: list[str], timeout: float) \
        -> tuple[Obj, list[tuple[int, int]]]:
    async with Session(opts) as s:
        pod, _ = await resolve_pod(s, arg, timeout, for_logs=False)
        service = None
        kind, slash, name = arg.partition("/")
        if slash and kind.lower() in ("svc", "service", "services"):
            service = await s.client.get(s.resource("services"), name, s.namespace)
    pairs = []
    for spec in specs:
        local, remote = parse_port_spec(spec)
        if remote.isdigit():
            remote_port = _port(remote, "remote")
        elif service is not None:
            remote_port = next((int(p["port"]) for p in (service.get("spec") or {}).get("ports") or []
                                if p.get("name") == remote), -1)
            if remote_port < 0:
                raise KubectlError(f"Service '{name}' does not have a named port '{remote}'")
        else:
            named = container_port(pod, remote)
            if named is None:
                raise KubectlError(f"Pod '{(pod.get('metadata') or {}).get('name')}' does not have a named "
                                   f"port '{remote}'")
            remote_port = named
        if service is not None:
            remote_port = service_target(service, pod, remote_port)
        pairs.append((_port(local, "local") if local else 0, remote_port))
    phase = (pod.get("status") or {}).get("phase")
    if phase != "Running":
        raise KubectlError(f"unable to forward port because pod is not running. Current status={phase}")
    return pod, pairs
