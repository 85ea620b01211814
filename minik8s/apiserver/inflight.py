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

Writes are split into priority levels, as API Priority and Fairness' default configuration
does, so that the writes that keep the cluster alive never wait behind a flood of workload
writes (each level has its own turns and its own queue):

* ``leader-election`` -- Leases in ``kube-system`` (the scheduler's and the controller-manager's
  leader Leases, the apiservers' endpoint Leases): one turn.  A leader that waits too long
  behind pod writes would miss its renew deadline and give up leadership;
* ``node-high`` -- Nodes (and ``nodes/status``) and the node Leases in ``kube-node-lease``:
  half of ``limit`` (at least one).  A heartbeat that waits too long makes a healthy node
  look dead, and the node lifecycle controller would evict its pods;
* ``workload`` -- every other write: ``limit`` turns.

The level is read from the path alone (authorization still decides what a client may write).
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from minik8s.api import errors
from minik8s.apiserver.httpio import MAX_BODY_BYTES, status_response

MUTATING = frozenset({"POST", "PUT", "PATCH", "DELETE"})


_LEADER_ELECTION = re.compile(r"/apis/coordination\.k8s\.io/v1/namespaces/kube-system/leases(/|$)")
_NODE_HIGH = re.compile(r"/api/v1/nodes(/|$)|/apis/coordination\.k8s\.io/v1/namespaces/kube-node-lease/leases(/|$)")


def priority_level(path: str) -> str:
    """The priority level of a write to ``path``: ``leader-election``, ``node-high`` or
    ``workload`` (see the module docstring)."""
    if _LEADER_ELECTION.match(path):
        return "leader-election"
    if _NODE_HIGH.match(path):
        return "node-high"
    return "workload"


@dataclass
class _Level:
    """One priority level's turns (``limit`` at once) and how many requests wait for one."""

    limit: int
    slots: asyncio.Semaphore | None = field(default=None, repr=False)
    waiting: int = 0

    def semaphore(self) -> asyncio.Semaphore:
        if self.slots is None:  # made on first use, inside the server's event loop
            self.slots = asyncio.Semaphore(self.limit)
        return self.slots


class MutatingInflight:
    """ASGI middleware: at most ``limit`` workload writes at once, and a few more turns for the
    higher priority levels (see the module docstring).  ``queue_length`` bounds the requests
    waiting in each level."""

    def __init__(self, app: ASGIApp, limit: int = 4, queue_length: int = 200,
                 queued_bytes: int = 64 * 1024 * 1024, body_timeout: float = 60.0) -> None:
        self.app = app
        self.limit = limit
        self.queue_length = queue_length
        self.queued_bytes = queued_bytes
        self.body_timeout = body_timeout
        self.levels = {"leader-election": _Level(1), "node-high": _Level(max(1, limit // 2)),
                       "workload": _Level(limit)}
        self.waiting_bytes = 0

    @property
    def waiting(self) -> int:
        """Writes waiting for their body or a turn, over every level."""
        return sum(level.waiting for level in self.levels.values())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") not in MUTATING:
            await self.app(scope, receive, send)
            return
        level = self.levels[priority_level(scope.get("path") or "")]
        slots = level.semaphore()
        busy = errors.TooManyRequests("Too many requests, please try again later.", {"retryAfterSeconds": 1})
        if level.waiting >= self.queue_length:
            await status_response(busy)(scope, receive, send)
            return
        level.waiting += 1
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
                await slots.acquire()
            finally:
                self.waiting_bytes -= len(body)
        finally:
            level.waiting -= 1
        try:
            await self.app(scope, _replay(body, receive), send)
        finally:
            slots.release()

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
