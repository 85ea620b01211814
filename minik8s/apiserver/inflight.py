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

Without a configuration the level is read from the path alone.  The apiserver passes its API
Priority and Fairness configuration (``flow_control``, :class:`minik8s.apiserver.apf.FlowControl`):
then every request is classified by the FlowSchemas (who sends it, what it asks), the response
carries ``X-Kubernetes-PF-FlowSchema-UID`` and ``X-Kubernetes-PF-PriorityLevel-UID``, and a write
waits in its priority level's queue: an ``Exempt`` level never waits, a ``Limited`` one has
``ceil(total * nominalConcurrencyShares / sum of the Limited levels' shares)`` turns, ``total``
being :data:`TOTAL_PER_MUTATING` times ``limit``.  The default configuration keeps the levels above: leader Leases go to
``leader-election`` and node heartbeats to ``node-high`` whoever writes them.  Until the
configuration is first read, the path decides.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from minik8s.api import errors
from minik8s.apiserver import requestinfo
from minik8s.apiserver.httpio import MAX_BODY_BYTES, status_response
from minik8s.auth import ANONYMOUS

if TYPE_CHECKING:
    from minik8s.apiserver.apf import Classification, FlowControl

MUTATING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
#: The server's total write turns with a flow-control configuration, per turn of ``limit``: 12, so
#: that ``global-default`` (20 of the 245 suggested Limited shares: requests without credentials,
#: users no other FlowSchema names) keeps the ``limit`` turns every write had before the levels
#: (ceil(48 x 20 / 245) = 4 with the default 4).  The other levels get their shares of 48:
#: ``workload-low`` (service accounts) 20, ``workload-high`` (controllers, scheduler) and
#: ``node-high`` 8, ``system`` 6, ``leader-election`` 2, ``catch-all`` 1.  Kubernetes' own total
#: (600) is larger for a server with many cores; this one serves every request on one event loop.
TOTAL_PER_MUTATING = 12


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
                 queued_bytes: int = 64 * 1024 * 1024, body_timeout: float = 60.0,
                 flow_control: FlowControl | None = None) -> None:
        self.app = app
        self.flow_control = flow_control
        self.flow_levels: dict[str, _Level] = {}  # by PriorityLevelConfiguration name
        self._flow_generation = -1
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
        return sum(level.waiting for level in [*self.levels.values(), *self.flow_levels.values()])

    def _classify(self, scope: Scope) -> Classification | None:
        if self.flow_control is None:
            return None
        user = (scope.get("state") or {}).get("user") or ANONYMOUS
        query = scope.get("query_string") or b""
        watch = b"watch=true" in query or b"watch=1" in query
        info = requestinfo.parse(scope.get("method") or "GET", scope.get("path") or "/", watch)
        groups = tuple(user.groups)
        if user is not ANONYMOUS and "system:authenticated" not in groups:  # as kube-apiserver adds it
            groups += ("system:authenticated",)
        return self.flow_control.classify(user.name, groups, info)

    def _flow_level(self, name: str) -> _Level | None:
        """The turns of the Limited level ``name`` (remade when the levels change: requests holding
        a turn of the old one give it back there)."""
        assert self.flow_control is not None
        if self._flow_generation != self.flow_control.generation:
            self._flow_generation = self.flow_control.generation
            limits = self.flow_control.limits(self.limit * TOTAL_PER_MUTATING)
            self.flow_levels = {n: old if (old := self.flow_levels.get(n)) is not None and old.limit == lim
                                else _Level(lim) for n, lim in limits.items()}
        return self.flow_levels.get(name)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        flow = self._classify(scope)
        if flow is not None:
            send = _with_flow_headers(send, flow)
        if scope.get("method") not in MUTATING or (flow is not None and flow.exempt):
            await self.app(scope, receive, send)
            return
        level = self._flow_level(flow.priority_level) if flow is not None else None
        if level is None:
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


def _with_flow_headers(send: Send, flow: Classification) -> Send:
    """A ``send`` that adds kube-apiserver's ``X-Kubernetes-PF-*-UID`` headers to the response."""
    extra = [(b"x-kubernetes-pf-flowschema-uid", flow.flow_schema_uid.encode()),
             (b"x-kubernetes-pf-prioritylevel-uid", flow.priority_level_uid.encode())]

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", []), *extra]}
        await send(message)

    return sending


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
