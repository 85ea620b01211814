"""Hostile HTTP clients for the listeners' tests: oversized and trickled request heads."""

from __future__ import annotations

import asyncio
import ssl
import time


async def oversized_head(host: str, port: int, size: int, ssl_context: ssl.SSLContext | None = None) -> bytes:
    """Send a request head with one ``size``-byte header in 4 KiB pieces; the status line answered
    (b"" when the server closed without one)."""
    reader, writer = await asyncio.open_connection(host, port, ssl=ssl_context)
    try:
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ")
        try:
            for _ in range(size // 4096):
                writer.write(b"a" * 4096)
                await writer.drain()
            writer.write(b"\r\n\r\n")
            await writer.drain()
        except (ConnectionError, ssl.SSLError):
            pass
        try:
            return (await asyncio.wait_for(reader.readline(), 10)).rstrip()
        except (ConnectionError, ssl.SSLError):
            return b""
    finally:
        writer.close()


async def trickled_head(host: str, port: int, limit: float, interval: float = 0.5,
                        ssl_context: ssl.SSLContext | None = None) -> float | None:
    """Send a request head one header line every ``interval`` seconds, never finishing it; the
    seconds until the server closed the connection, or None when it was still open after ``limit``."""
    reader, writer = await asyncio.open_connection(host, port, ssl=ssl_context)
    started = time.monotonic()
    try:
        writer.write(b"POST /api/v1/namespaces HTTP/1.1\r\nHost: x\r\n")
        while time.monotonic() - started < limit:
            try:
                writer.write(b"X-A: b\r\n")
                await writer.drain()
                if await asyncio.wait_for(reader.read(1024), interval) == b"":
                    return time.monotonic() - started
            except TimeoutError:
                continue
            except (ConnectionError, ssl.SSLError):
                return time.monotonic() - started
        return None
    finally:
        writer.close()
