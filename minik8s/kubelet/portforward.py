"""Port forwarding over a WebSocket (Kubernetes' ``portforward`` subresource, kubelet side).

``/portForward/{namespace}/{pod}?ports=8080,9090`` (``ports`` may repeat; the kubelet's ``port`` is
read too) with subprotocol ``v4.channel.k8s.io`` (or ``v5``/``channel.k8s.io``): the i-th port has
data channel ``2i`` and error channel ``2i+1``.  As kube's WebSocket port forwarding does, the
server first sends on both channels of every port a frame holding the port number (2 bytes,
little-endian); then each data channel carries the bytes of one TCP connection to
``127.0.0.1:<port>`` inside the pod's network namespace (see :mod:`minik8s.host.netns`), both ways.
A connection that cannot be made, or that fails, is reported as text on its error channel.  The
WebSocket closes when every port's connection has ended, or when the client goes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable

from fastapi import WebSocket

from minik8s.host.netns import connect_in_netns

log = logging.getLogger("kubelet.portforward")

READ_CHUNK = 65536
CONNECT_TIMEOUT = 5.0


def parse_ports(values: list[str]) -> list[int]:
    """``["8080,9090", "7000"]`` → ``[8080, 9090, 7000]``; raises ValueError for a bad, repeated
    or missing port (1-65535)."""
    ports: list[int] = []
    for value in values:
        for item in value.split(","):
            item = item.strip()
            if not item.isdigit() or not 0 < int(item) < 65536:
                raise ValueError(f"invalid port {item!r}: must be a number in 1-65535")
            if int(item) in ports:
                raise ValueError(f"port {item} is given twice")
            ports.append(int(item))
    if not ports:
        raise ValueError("at least one port is required (ports=...)")
    return ports


async def run_port_forward(ws: WebSocket, protocols: tuple[str, ...], ports: list[int], pid: int,
                           pod: str) -> None:
    """Serve one accepted-to-be port-forward WebSocket to the pod whose process ``pid`` owns the
    pod's network namespace (``pod``: ``namespace/name``, for messages)."""
    offered = [p.strip() for p in ws.headers.get("sec-websocket-protocol", "").split(",") if p.strip()]
    await ws.accept(subprotocol=next((p for p in offered if p in protocols), None))
    for index, port in enumerate(ports):
        prefix = port.to_bytes(2, "little")
        await ws.send_bytes(bytes([2 * index]) + prefix)
        await ws.send_bytes(bytes([2 * index + 1]) + prefix)
    writers: dict[int, asyncio.StreamWriter] = {}
    readers: list[asyncio.Task[None]] = []
    send_lock = asyncio.Lock()

    async def send(channel: int, data: bytes) -> None:
        async with send_lock:
            await ws.send_bytes(bytes([channel]) + data)

    async def pump(index: int, reader: asyncio.StreamReader) -> None:
        try:
            while chunk := await reader.read(READ_CHUNK):
                await send(2 * index, chunk)
        except OSError as exc:
            await send(2 * index + 1, f"error forwarding port {ports[index]} to pod {pod}: {exc}".encode())

    for index, port in enumerate(ports):
        try:
            sock = await asyncio.to_thread(connect_in_netns, pid, "127.0.0.1", port, CONNECT_TIMEOUT)
            reader, writer = await asyncio.open_connection(sock=sock)
        except OSError as exc:
            # Kubernetes' kubelet wording; kubectl puts "an error occurred forwarding L -> R: " before it.
            await send(2 * index + 1, f"error forwarding port {port} to pod {pod}: failed to connect to "
                                      f"localhost:{port}: "
                                      f"{exc.strerror or exc}".encode())
            continue
        writers[index] = writer
        readers.append(asyncio.create_task(pump(index, reader)))
    log.info("kubelet portforward pod=%s ports=%s", pod, ports)

    async def from_client() -> None:
        while True:
            msg = await ws.receive()
            if msg["type"] == "websocket.disconnect":
                return
            data = msg.get("bytes")
            if data is None and msg.get("text") is not None:
                data = msg["text"].encode()
            if not data or data[0] % 2 or data[0] // 2 not in writers:
                continue  # nothing, an error channel (read-only), or a port without a connection
            writer = writers[data[0] // 2]
            with contextlib.suppress(OSError):
                writer.write(data[1:])
                await writer.drain()

    client_task = asyncio.create_task(from_client())
    all_done: Awaitable[object] = asyncio.gather(*readers) if readers else asyncio.sleep(0)
    done_task = asyncio.ensure_future(all_done)
    try:
        await asyncio.wait({client_task, done_task}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (client_task, done_task, *readers):
            task.cancel()
        for writer in writers.values():
            writer.close()
        # Collect what the cancelled tasks ended with: a gather whose readers were cancelled holds a
        # CancelledError that nobody would read ("_GatheringFuture exception was never retrieved").
        await asyncio.gather(client_task, done_task, *readers, return_exceptions=True)
        with contextlib.suppress(Exception):
            await ws.close()

