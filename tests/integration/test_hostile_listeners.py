"""Every listener bounds request heads in size (431) and time (closed), like Go's net/http.

The apiserver here (plain HTTP; its TLS listener: tests/integration/test_auth.py), the
kubelet's server in tests/integration/test_kubelet_tls.py, the gateway's in
tests/integration/test_gateway.py.
"""

from __future__ import annotations

import asyncio
import time
from urllib.parse import urlsplit

import httpx

from minik8s.serving.http import HEADER_TIMEOUT, MAX_HEAD_BYTES
from tests.support.hostile import oversized_head, trickled_head
from tests.support.processes import APIServer


def _address(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    return parts.hostname or "127.0.0.1", parts.port or 80


async def test_oversized_request_head_gets_431(apiserver: APIServer) -> None:
    host, port = _address(apiserver.url)
    assert await oversized_head(host, port, 4 * MAX_HEAD_BYTES) == b"HTTP/1.1 431 Request Header Fields Too Large"
    assert await oversized_head(host, port, 1024 * 1024) == b"HTTP/1.1 431 Request Header Fields Too Large"
    # a head within the limit is served
    assert await oversized_head(host, port, MAX_HEAD_BYTES // 2) == b"HTTP/1.1 200 OK"


async def test_slow_request_heads_are_closed_and_healthz_stays_fast(apiserver: APIServer) -> None:
    host, port = _address(apiserver.url)
    slow = [asyncio.create_task(trickled_head(host, port, HEADER_TIMEOUT + 5)) for _ in range(20)]
    idle_reader, idle_writer = await asyncio.open_connection(host, port)  # sends nothing at all
    started = time.monotonic()
    latencies = []
    async with httpx.AsyncClient(base_url=apiserver.url, timeout=5) as http:
        while not all(t.done() for t in slow) and time.monotonic() - started < HEADER_TIMEOUT + 6:
            t0 = time.monotonic()
            assert (await http.get("/healthz")).text == "ok"
            latencies.append(time.monotonic() - t0)
            await asyncio.sleep(0.1)
    closed_after = await asyncio.gather(*slow)
    assert all(c is not None and HEADER_TIMEOUT - 1 < c < HEADER_TIMEOUT + 3 for c in closed_after), closed_after
    assert await asyncio.wait_for(idle_reader.read(), 3) == b""  # closed by the same deadline
    idle_writer.close()
    latencies.sort()
    assert latencies[len(latencies) * 99 // 100] < 0.5, latencies[-5:]
