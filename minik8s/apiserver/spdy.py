"""Port forwarding as kubectl >= 1.31 asks for it: SPDY/3.1 tunnelled through a WebSocket.

kubectl opens ``pods/{name}/portforward`` as a WebSocket with the subprotocol
``SPDY/3.1+portforward.k8s.io`` and then speaks plain SPDY/3.1 inside its binary messages
(the message boundaries mean nothing: it is one byte stream each way), as Kubernetes'
``portforward.k8s.io`` protocol over SPDY does: for each local connection it opens an
``error`` stream and a ``data`` stream carrying the headers ``streamType``, ``port`` and
``requestID``; the data stream carries the TCP bytes both ways, the error stream a message
when the connection to the pod fails.  The apiserver answers each stream (SYN_REPLY), echoes
PINGs and, for each request, opens one WebSocket to the kubelet's ``/portForward`` (the
``v4.channel.k8s.io`` channels of :mod:`minik8s.kubelet.portforward`), whose channel 0 becomes
the data stream and channel 1 the error stream.  When the pod's side ends, both streams are
finished (FIN); a reset stream or a closed WebSocket ends its connections.

Frames (SPDY/3.1, big-endian): control frames ``1 | version(15) | type(16) | flags(8) |
length(24)`` (SYN_STREAM 1, SYN_REPLY 2, RST_STREAM 3, SETTINGS 4, PING 6, GOAWAY 7,
HEADERS 8, WINDOW_UPDATE 9), data frames ``0 | stream id(31) | flags(8) | length(24)``
(flag FIN = 1).  Header blocks are zlib streams (one per direction, sync-flushed per frame)
primed with the dictionary of the SPDY/3 draft.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import struct
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from fastapi import WebSocket

log = logging.getLogger("apiserver.portforward")

SUBPROTOCOL = "SPDY/3.1+portforward.k8s.io"
VERSION = 3
SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS, PING, GOAWAY, HEADERS, WINDOW_UPDATE = 1, 2, 3, 4, 6, 7, 8, 9
FLAG_FIN = 1
MAX_DATA = 16384

_WORDS = ("options head post put delete trace accept accept-charset accept-encoding accept-language "
          "accept-ranges age allow authorization cache-control connection content-base content-encoding "
          "content-language content-length content-location content-md5 content-range content-type date etag "
          "expect expires from host if-match if-modified-since if-none-match if-range if-unmodified-since "
          "last-modified location max-forwards pragma proxy-authenticate proxy-authorization range referer "
          "retry-after server te trailer transfer-encoding upgrade user-agent vary via warning www-authenticate "
          "method get status").split() + ["200 OK", "version", "HTTP/1.1", "url", "public", "set-cookie",
                                          "keep-alive", "origin"]
_TAIL = ("100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505"
         "203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized"
         "403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable"
         "Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT"
         "chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,"
         "text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.")


def _dictionary() -> bytes:
    return b"".join(struct.pack(">I", len(w)) + w.encode() for w in _WORDS) + _TAIL.encode()


#: The zlib dictionary of SPDY/3 header blocks (1423 bytes, from the protocol's draft).
DICTIONARY = _dictionary()


class ProtocolError(Exception):
    """A frame this side cannot make sense of."""


class Framer:
    """SPDY/3 frames of one connection: :meth:`feed` bytes in, get frames out; build frames to send."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.inflater = zlib.decompressobj(zdict=DICTIONARY)
        self.deflater = zlib.compressobj(zdict=DICTIONARY)

    def feed(self, data: bytes) -> list[tuple[bool, int, int, bytes]]:
        """The complete frames in what arrived so far: (control, type or stream id, flags, payload)."""
        self.buffer += data
        frames = []
        while len(self.buffer) >= 8:
            word, flags_len = struct.unpack(">II", self.buffer[:8])
            length = flags_len & 0xFFFFFF
            if len(self.buffer) < 8 + length:
                break
            payload = bytes(self.buffer[8:8 + length])
            del self.buffer[:8 + length]
            control = bool(word & 0x80000000)
            if control and (word >> 16) & 0x7FFF != VERSION:
                raise ProtocolError(f"SPDY version {(word >> 16) & 0x7FFF} is not supported")
            frames.append((control, word & 0xFFFF if control else word & 0x7FFFFFFF, flags_len >> 24, payload))
        return frames

    def headers(self, block: bytes) -> dict[str, str]:
        """A decompressed header block (names lower-cased; repeated values joined by NUL)."""
        raw = self.inflater.decompress(block)
        (count,), pos, out = struct.unpack(">I", raw[:4]), 4, {}
        for _ in range(count):
            (n,) = struct.unpack(">I", raw[pos:pos + 4])
            name = raw[pos + 4:pos + 4 + n].decode().lower()
            pos += 4 + n
            (n,) = struct.unpack(">I", raw[pos:pos + 4])
            out[name] = raw[pos + 4:pos + 4 + n].decode()
            pos += 4 + n
        return out

    def header_block(self, headers: dict[str, str]) -> bytes:
        raw = struct.pack(">I", len(headers)) + b"".join(
            struct.pack(">I", len(k)) + k.encode() + struct.pack(">I", len(v)) + v.encode() for k, v in headers.items())
        return self.deflater.compress(raw) + self.deflater.flush(zlib.Z_SYNC_FLUSH)

    @staticmethod
    def control(kind: int, flags: int, payload: bytes) -> bytes:
        return struct.pack(">HHI", 0x8000 | VERSION, kind, (flags << 24) | len(payload)) + payload

    @staticmethod
    def data(stream_id: int, data: bytes, fin: bool = False) -> bytes:
        return struct.pack(">II", stream_id & 0x7FFFFFFF, ((FLAG_FIN if fin else 0) << 24) | len(data)) + data


@dataclass
class _Request:
    """One forwarded connection: its error and data streams and the bytes waiting for the pod."""

    port: int = 0
    error_id: int = 0
    data_id: int = 0
    inbox: asyncio.Queue[bytes | None] = field(default_factory=asyncio.Queue)
    task: asyncio.Task[None] | None = None


#: Opens the kubelet's port-forward WebSocket for one port (``v4.channel.k8s.io``).
OpenUpstream = Callable[[int], Awaitable[Any]]


async def serve_tunnel(ws: WebSocket, open_upstream: OpenUpstream, pod: str) -> None:
    """Serve an accepted ``SPDY/3.1+portforward.k8s.io`` WebSocket until the client goes."""
    framer = Framer()
    lock = asyncio.Lock()
    requests: dict[str, _Request] = {}
    by_stream: dict[int, _Request] = {}

    async def send(frame: bytes) -> None:
        async with lock:
            await ws.send_bytes(frame)

    async def forward(req: _Request) -> None:
        try:
            upstream = await open_upstream(req.port)
        except Exception as exc:  # noqa: BLE001
            await send(Framer.data(req.error_id, f"error forwarding port {req.port} to pod {pod}: {exc}".encode()))
            await send(Framer.data(req.error_id, b"", fin=True))
            await send(Framer.data(req.data_id, b"", fin=True))
            return

        async def up() -> None:
            while (chunk := await req.inbox.get()) is not None:
                await upstream.send(b"\x00" + chunk)

        async def down() -> None:
            seen: set[int] = set()
            async for msg in upstream:
                if not isinstance(msg, bytes) or not msg:
                    continue
                channel = msg[0]
                if channel not in seen:  # each channel starts with the port number
                    seen.add(channel)
                    continue
                target = req.data_id if channel == 0 else req.error_id
                for start in range(0, len(msg) - 1, MAX_DATA):
                    await send(Framer.data(target, msg[1 + start:1 + start + MAX_DATA]))

        up_task = asyncio.create_task(up())
        try:
            await down()
        except Exception as exc:  # noqa: BLE001 - the kubelet went away: report it on the error stream
            await send(Framer.data(req.error_id, f"error forwarding port {req.port} to pod {pod}: {exc}".encode()))
        finally:
            up_task.cancel()
            with contextlib.suppress(Exception):
                await upstream.close()
        await send(Framer.data(req.data_id, b"", fin=True))
        await send(Framer.data(req.error_id, b"", fin=True))

    async def on_syn(stream_id: int, payload: bytes) -> None:
        headers = framer.headers(payload[10:])
        await send(Framer.control(SYN_REPLY, 0, struct.pack(">I", stream_id) + framer.header_block({})))
        req = requests.setdefault(headers.get("requestid", str(stream_id)), _Request())
        by_stream[stream_id] = req
        port = headers.get("port", "")
        if not port.isdigit() or not 0 < int(port) < 65536:
            await send(Framer.control(RST_STREAM, 0, struct.pack(">II", stream_id, 1)))
            return
        req.port = int(port)
        if headers.get("streamtype") == "error":
            req.error_id = stream_id
        elif headers.get("streamtype") == "data":
            req.data_id = stream_id
        if req.error_id and req.data_id and req.task is None:
            req.task = asyncio.create_task(forward(req))

    try:
        while True:
            msg = await ws.receive()
            if msg["type"] == "websocket.disconnect":
                return
            data = msg.get("bytes") or (msg.get("text") or "").encode()
            for control, kind, flags, payload in framer.feed(data):
                if not control:
                    req = by_stream.get(kind)
                    if req is not None and kind == req.data_id:
                        if payload:
                            req.inbox.put_nowait(payload)
                        if flags & FLAG_FIN:
                            req.inbox.put_nowait(None)
                elif kind == SYN_STREAM:
                    (stream_id,) = struct.unpack(">I", payload[:4])
                    await on_syn(stream_id & 0x7FFFFFFF, payload)
                elif kind == PING:
                    await send(Framer.control(PING, 0, payload))
                elif kind == RST_STREAM:
                    (stream_id,) = struct.unpack(">I", payload[:4])
                    req = by_stream.pop(stream_id & 0x7FFFFFFF, None)
                    if req is not None and req.task is not None:
                        req.task.cancel()
                elif kind == GOAWAY:
                    return
                # SETTINGS, WINDOW_UPDATE, HEADERS: nothing to do for port forwarding
    except ProtocolError as exc:
        log.info("apiserver portforward pod=%s: %s", pod, exc)
    finally:
        for req in requests.values():
            if req.task is not None:
                req.task.cancel()
