"""Which function pods the gateway may send calls to, and how busy each Function is.

:class:`Backends` follows the function pods (label ``minik8s.io/function``) through a pod
informer and sends a call to a pod only once **it answered** the runtime's ``/healthz`` — a
pod is Running with an IP before its server listens, and waiting for the kubelet's readiness
probe or kube-proxy would add their periods to every cold start.  A pod that is being
deleted, stops running, or refuses a connection leaves the set at once (a refused pod is
probed again).  Calls go to the answering pod with the fewest calls in flight.

:class:`ConcurrencyMeter` counts the calls in flight per Function — the autoscaler's metric
— as a gauge plus its integral over time (concurrency-seconds), like a Prometheus counter.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import aiohttp

from minik8s.api import serverless as s
from minik8s.api.base import Obj
from minik8s.fnruntime import PORT

log = logging.getLogger("gateway")
PROBE_INTERVAL = 0.02
PROBE_TIMEOUT = 0.5
#: How long a pod that does not answer is probed before it is left to its readiness probe.
PROBE_GIVE_UP = 300.0


@dataclass
class Backend:
    """One answering function pod."""

    uid: str
    name: str
    ip: str
    revision: str
    in_flight: int = 0

    @property
    def url(self) -> str:
        return f"http://{self.ip}:{PORT}"


def function_key(pod: Obj) -> str | None:
    meta = pod.get("metadata") or {}
    fn = (meta.get("labels") or {}).get(s.FUNCTION_LABEL)
    return f"{meta.get('namespace')}/{fn}" if fn else None


def routable(pod: Obj) -> bool:
    """Running, with an IP, not being deleted."""
    status = pod.get("status") or {}
    return bool(status.get("podIP")) and status.get("phase") == "Running" and \
        not (pod.get("metadata") or {}).get("deletionTimestamp")


class Backends:
    """The answering pods of every Function, kept from pod events (:meth:`on_pod`, :meth:`on_pod_deleted`)."""

    def __init__(self, http: aiohttp.ClientSession | None = None) -> None:
        self.http = http  # set before the first pod event is handled (Gateway.start)
        self.by_function: dict[str, dict[str, Backend]] = {}
        self.pods: dict[str, Obj] = {}
        self.probes: dict[str, asyncio.Task[None]] = {}
        self.changed: dict[str, asyncio.Event] = {}

    # ------------------------------------------------------------------ pod events
    def on_pod(self, pod: Obj) -> None:
        key = function_key(pod)
        meta = pod.get("metadata") or {}
        uid = str(meta.get("uid") or "")
        if key is None or not uid:
            return
        self.pods[uid] = pod
        if not routable(pod):
            self._drop(key, uid)
            return
        backend = self.by_function.get(key, {}).get(uid)
        if backend is not None and backend.ip == pod["status"]["podIP"]:
            return
        if uid not in self.probes:
            self.probes[uid] = asyncio.get_running_loop().create_task(self._probe(key, uid))

    def on_pod_deleted(self, pod: Obj) -> None:
        key = function_key(pod)
        uid = str((pod.get("metadata") or {}).get("uid") or "")
        self.pods.pop(uid, None)
        if key:
            self._drop(key, uid)

    def _drop(self, key: str, uid: str) -> None:
        task = self.probes.pop(uid, None)
        if task is not None:
            task.cancel()
        if self.by_function.get(key, {}).pop(uid, None) is not None:
            self._notify(key)

    def _notify(self, key: str) -> None:
        event = self.changed.pop(key, None)
        if event is not None:
            event.set()

    async def _probe(self, key: str, uid: str) -> None:
        """Poll the pod's ``/healthz`` until it answers 200, then route to it."""
        deadline = time.monotonic() + PROBE_GIVE_UP
        try:
            while time.monotonic() < deadline:
                pod = self.pods.get(uid)
                if pod is None or not routable(pod):
                    return
                ip = pod["status"]["podIP"]
                assert self.http is not None
                try:
                    async with self.http.get(f"http://{ip}:{PORT}/healthz",
                                             timeout=aiohttp.ClientTimeout(total=PROBE_TIMEOUT)) as resp:
                        await resp.read()
                        answered = resp.status == 200
                    if answered:
                        meta = pod.get("metadata") or {}
                        self.by_function.setdefault(key, {})[uid] = Backend(
                            uid, str(meta.get("name")), ip, str((meta.get("labels") or {}).get(s.REVISION_LABEL)))
                        log.info("gateway function=%s pod=%s ip=%s answers", key, meta.get("name"), ip)
                        self._notify(key)
                        return
                except (aiohttp.ClientError, TimeoutError):
                    pass
                await asyncio.sleep(PROBE_INTERVAL)
        finally:
            if self.probes.get(uid) is asyncio.current_task():
                self.probes.pop(uid, None)

    def refused(self, key: str, backend: Backend) -> None:
        """A connection to ``backend`` failed: stop routing to it and probe it again."""
        self._drop(key, backend.uid)
        pod = self.pods.get(backend.uid)
        if pod is not None:
            self.on_pod(pod)

    # ------------------------------------------------------------------ choosing
    def count(self, key: str) -> int:
        return len(self.by_function.get(key) or {})

    def pick(self, key: str) -> Backend | None:
        """The answering pod of ``key`` with the fewest calls in flight (ties at random)."""
        backends = list((self.by_function.get(key) or {}).values())
        if not backends:
            return None
        low = min(b.in_flight for b in backends)
        return random.choice([b for b in backends if b.in_flight == low])

    async def wait(self, key: str, timeout: float) -> bool:
        """Wait until ``key`` has an answering pod or its set changes; False on timeout."""
        if self.count(key):
            return True
        event = self.changed.setdefault(key, asyncio.Event())
        try:
            await asyncio.wait_for(event.wait(), timeout)
        except TimeoutError:
            return False
        return self.count(key) > 0

    def shutdown(self) -> None:
        for task in self.probes.values():
            task.cancel()


@dataclass
class Meter:
    in_flight: int = 0
    concurrency_seconds: float = 0.0
    requests: int = 0
    last_change: float = 0.0
    last_request_time: float | None = None


@dataclass
class ConcurrencyMeter:
    """In-flight calls per Function with their time integral (see the module docstring)."""

    clock: Callable[[], float] = time.monotonic
    wall: Callable[[], float] = time.time
    meters: dict[str, Meter] = field(default_factory=dict)
    start_time: float = field(default_factory=time.time)

    def _advance(self, m: Meter) -> None:
        now = self.clock()
        if m.last_change:
            m.concurrency_seconds += m.in_flight * (now - m.last_change)
        m.last_change = now

    def begin(self, key: str) -> None:
        m = self.meters.setdefault(key, Meter())
        self._advance(m)
        m.in_flight += 1
        m.requests += 1
        m.last_request_time = self.wall()

    def end(self, key: str) -> None:
        m = self.meters.setdefault(key, Meter())
        self._advance(m)
        m.in_flight = max(0, m.in_flight - 1)
        m.last_request_time = self.wall()

    def snapshot(self) -> Obj:
        """The ``/metrics`` document the function autoscaler reads."""
        out: Obj = {}
        for key, m in self.meters.items():
            self._advance(m)
            out[key] = {"inFlight": m.in_flight, "concurrencySeconds": round(m.concurrency_seconds, 6),
                        "requests": m.requests, "lastRequestTime": m.last_request_time}
        return {"startTime": self.start_time, "time": self.wall(), "functions": out}

    def forget(self, key: str) -> None:
        self.meters.pop(key, None)
