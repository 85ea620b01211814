"""A bound on mutating requests in flight, so that writes cannot starve reads.

One apiserver process serves every request on one event loop: clients that send writes as
fast as they are answered (or bodies that cost CPU to refuse) would otherwise take every
turn of the loop, and a plain GET would wait behind all of them.  Like kube-apiserver's
``--max-mutating-requests-inflight`` (with API Priority and Fairness' queueing instead of an
immediate 429), :class:`MutatingInflight` lets at most ``limit`` POST/PUT/PATCH/DELETE
requests be processed at once; the next ones wait their turn in arrival order without using
the CPU, and reads pass at once.

A request's body is received before it takes a turn, so a client that sends its body slowly
holds no turn: the body must arrive within ``body_timeout`` seconds (504 Timeout otherwise)
and be at most :data:`~minik8s.apiserver.httpio.MAX_BODY_BYTES` (413).  More than
``queue_length`` waiting, or more than ``queued_bytes`` of their bodies held: 429
TooManyRequests with ``Retry-After: 1``.
"""

from __future__ import annotations

import asyncio

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from minik8s.api import errors
from minik8s.apiserver.httpio import MAX_BODY_BYTES, status_response

MUTATING = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class MutatingInflight:
    """ASGI middleware: at most ``limit`` mutating requests at once (see the module docstring)."""

    def __init__(self, app: ASGIApp, limit: int = 4, queue_length: int = 200,
                 queued_bytes: int = 64 * 1024 * 1024, body_timeout: float = 60.0) -> None:
        self.app = app
        self.limit = limit
        self.queue_length = queue_length
        self.queued_bytes = queued_bytes
        self.body_timeout = body_timeout
        self._slots: asyncio.Semaphore | None = None
        self.waiting = 0
        self.waiting_bytes = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") not in MUTATING:
            await self.app(scope, receive, send)
            return
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.limit)
        busy = errors.TooManyRequests("Too many requests, please try again later.", {"retryAfterSeconds": 1})
        if self.waiting >= self.queue_length:
            await status_response(busy)(scope, receive, send)
            return
        self.waiting += 1
        body = b""
        try:
            try:
                body, disconnected = await asyncio.wait_for(self._receive_body(receive), self.body_timeout)
            except TimeoutError:
                err = errors.Timeout(f"the request body was not received within {self.body_timeout:g} s")
                await status_response(err)(scope, receive, send)
                return
            except errors.APIError as err:
                await status_response(err)(scope, receive, send)
                return
            if disconnected:
                return
            if self.waiting_bytes + len(body) > self.queued_bytes:
                await status_response(busy)(scope, receive, send)
                return
            self.waiting_bytes += len(body)
            try:
                await self._slots.acquire()
            finally:
                self.waiting_bytes -= len(body)
        finally:
            self.waiting -= 1
        try:
            await self.app(scope, _replay(body, receive), send)
        finally:
            self._slots.release()

    @staticmethod
    async def _receive_body(receive: Receive) -> tuple[bytes, bool]:
        """The whole body (413 beyond MAX_BODY_BYTES), and whether the client went away."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return b"", True
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise errors.RequestEntityTooLarge(f"Request entity too large: limit is {MAX_BODY_BYTES}")
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks), False


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives ``body`` first, then what ``receive`` gives (a disconnect)."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed
