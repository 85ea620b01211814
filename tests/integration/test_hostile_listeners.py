"""Every listener bounds request heads in size (431) and time (closed), like Go's net/http.

The apiserver here (plain HTTP; its TLS listener: tests/integration/test_auth.py), the
kubelet's server in tests/integration/test_kubelet_tls.py, the gateway's in
tests/integration/test_gateway.py.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
import uvicorn
from fastapi import FastAPI

from minik8s.apiserver.httpio import InternalErrors
from minik8s.apiserver.inflight import MutatingInflight
from minik8s.cluster.processes import free_port
from minik8s.serving.http import HEADER_TIMEOUT, MAX_HEAD_BYTES, server_config
from tests.support.hostile import oversized_head, trickled_head
from tests.support.processes import APIServer
from tests.support.waiting import wait_for


def _address(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    return parts.hostname or "127.0.0.1", parts.port or 80


async def _response(reader: asyncio.StreamReader) -> bytes:
    """One HTTP/1.1 response with a content-length, head and body."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length"))
    return head + await reader.readexactly(length)


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
    latencies.sort()  # a loaded machine may delay any one request: the bulk must stay fast
    assert latencies[len(latencies) // 2] < 0.25 and latencies[len(latencies) * 9 // 10] < 1.0, latencies[-5:]


async def test_an_internal_error_is_one_log_line_and_keeps_the_connection(
        caplog: pytest.LogCaptureFixture) -> None:
    """The apiserver's last line of defence (:class:`minik8s.apiserver.httpio.InternalErrors`) on a
    real uvicorn server: a handler that fails answers a 500 Status, logs one line without a
    traceback, and the kept-alive connection serves the next request."""
    app = FastAPI()

    @app.get("/boom")
    async def boom() -> None:
        raise KeyError("x" * 10_000)

    @app.get("/ok")
    async def ok() -> dict[str, str]:
        return {"ok": "yes"}

    app.add_middleware(InternalErrors)
    port = free_port()
    server = uvicorn.Server(server_config(app, "127.0.0.1", port, lifespan="off"))
    serving = asyncio.create_task(server.serve())
    try:
        await wait_for(lambda: server.started, 10, what="server started")
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        with caplog.at_level(logging.ERROR):
            writer.write(b"GET /boom HTTP/1.1\r\nHost: x\r\n\r\nGET /ok HTTP/1.1\r\nHost: x\r\n\r\n")
            first = await asyncio.wait_for(_response(reader), 5)
            second = await asyncio.wait_for(_response(reader), 5)
        writer.close()
        assert first.startswith(b"HTTP/1.1 500") and b'"reason":"InternalError"' in first
        assert len(first) < 1000
        assert second.startswith(b"HTTP/1.1 200") and second.endswith(b'{"ok":"yes"}')
        errors_logged = [r for r in caplog.records if r.levelno >= logging.ERROR]
        assert len(errors_logged) == 1 and errors_logged[0].exc_info is None
        assert len(errors_logged[0].getMessage()) < 500
    finally:
        server.should_exit = True
        await serving


async def test_writes_take_turns_and_reads_pass() -> None:
    """:class:`minik8s.apiserver.inflight.MutatingInflight` on a real uvicorn server: one write at a
    time here, one waiting, the next refused 429 with Retry-After; reads pass meanwhile; a body
    that does not arrive in time answers 504."""
    app = FastAPI()
    release = asyncio.Event()
    entered: list[int] = []
    limiters: list[MutatingInflight] = []

    class Probed(MutatingInflight):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            limiters.append(self)

    @app.post("/slow")
    async def slow() -> dict[str, str]:
        entered.append(1)
        await release.wait()
        return {"done": "yes"}

    @app.get("/read")
    async def read() -> dict[str, str]:
        return {"read": "yes"}

    app.add_middleware(Probed, limit=1, queue_length=1, body_timeout=1.0)
    port = free_port()
    server = uvicorn.Server(server_config(app, "127.0.0.1", port, lifespan="off"))
    serving = asyncio.create_task(server.serve())
    try:
        await wait_for(lambda: server.started, 10, what="server started")
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:
            first = asyncio.create_task(http.post("/slow", content=b"{}"))
            await wait_for(lambda: entered, 5, what="the first write in its turn")
            second = asyncio.create_task(http.post("/slow", content=b"{}"))
            await wait_for(lambda: limiters[0].waiting == 1, 5, what="the second write waiting")
            third = await http.post("/slow", content=b"{}")
            assert third.status_code == 429 and third.headers["retry-after"] == "1"
            assert third.json()["reason"] == "TooManyRequests"
            assert (await http.get("/read")).json() == {"read": "yes"}
            release.set()
            assert [(await t).status_code for t in (first, second)] == [200, 200] and len(entered) == 2
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n{")
        answer = await asyncio.wait_for(_response(reader), 5)
        writer.close()
        assert answer.startswith(b"HTTP/1.1 504") and b"was not received within 1 s" in answer
    finally:
        server.should_exit = True
        await serving
