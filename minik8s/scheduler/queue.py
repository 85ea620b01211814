"""The scheduling queue: which pending pod to try next, and when to try a failed one again.

Kubernetes' ``PriorityQueue`` (``pkg/scheduler/internal/queue``), three pools:

* **active** -- pods ready to be tried, highest ``spec.priority`` first, then the one queued
  earliest (Kubernetes' ``PrioritySort``: the timestamp is refreshed when a pod is queued again);
* **backoff** -- pods that failed and wait out a per-pod back-off (``initial_backoff``
  seconds doubling per attempt up to ``max_backoff``) before going back to active;
* **unschedulable** -- pods no node fitted. They stay until a cluster event that may
  help arrives -- a node is added or changed, a bound pod is added, changed or deleted --
  and only events one of the plugins that rejected the pod registered for (a pod rejected
  for "Insufficient cpu" is not retried because a node got a new label it does not
  select on); or until they have waited ``unschedulable_timeout`` seconds (30 s, so every
  pending pod is retried at least that often). Moved pods still wait out their back-off.

A pod popped for scheduling is *in flight* until :meth:`SchedulingQueue.done` or
:meth:`SchedulingQueue.add_unschedulable`; events that arrive meanwhile are remembered so
that a pod failing because of a state that has just changed is retried rather than parked.

The queue keeps the latest pod object per ``namespace/name`` key; it is single-threaded
(asyncio) and :meth:`pop` is the only coroutine.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from minik8s.api.base import Obj
from minik8s.scheduler.framework import ClusterEvent

DEFAULT_INITIAL_BACKOFF = 1.0
DEFAULT_MAX_BACKOFF = 10.0
DEFAULT_UNSCHEDULABLE_TIMEOUT = 30.0


class QueueClosed(Exception):
    """:meth:`SchedulingQueue.pop` on a closed queue."""


def pod_key(pod: Obj) -> str:
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name')}"


def _scheduling_view(pod: Obj) -> Obj:
    """The pod without what changes on every write and never affects scheduling
    (resourceVersion, generation, managedFields, status) -- Kubernetes' ``isPodUpdated``."""
    meta = {k: v for k, v in (pod.get("metadata") or {}).items()
            if k not in ("resourceVersion", "generation", "managedFields")}
    return {**{k: v for k, v in pod.items() if k != "status"}, "metadata": meta}


def pod_updated(old: Obj, new: Obj) -> bool:
    """Whether ``new`` differs from ``old`` in a way that may change a scheduling decision."""
    return _scheduling_view(old) != _scheduling_view(new)


@dataclass
class QueuedPodInfo:
    """A pod in the queue: ``attempts`` so far, when it was last queued or tried
    (``timestamp``, monotonic seconds), the plugins that rejected it last time, and the
    events seen while it was in flight."""

    pod: Obj
    key: str
    timestamp: float
    attempts: int = 0
    unschedulable_plugins: set[str] = field(default_factory=set)
    cycle: int = 0
    events_in_flight: set[ClusterEvent] = field(default_factory=set)
    updated_in_flight: bool = False
    deleted_in_flight: bool = False

    @property
    def priority(self) -> int:
        return int((self.pod.get("spec") or {}).get("priority") or 0)


class SchedulingQueue:
    """Active / backoff / unschedulable pools with event-driven moves (module docstring).

    ``plugin_events`` maps plugin name to the events that may make a pod it rejected fit
    (:meth:`~minik8s.scheduler.framework.Framework.plugin_events`); a pod rejected by an
    unknown plugin, or for no recorded plugin, is moved on every event. ``clock`` returns
    seconds (monotonic); tests pass a fake one.
    """

    def __init__(self, plugin_events: Mapping[str, frozenset[ClusterEvent]] | None = None, *,
                 initial_backoff: float = DEFAULT_INITIAL_BACKOFF, max_backoff: float = DEFAULT_MAX_BACKOFF,
                 unschedulable_timeout: float = DEFAULT_UNSCHEDULABLE_TIMEOUT,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.plugin_events = dict(plugin_events or {})
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.unschedulable_timeout = unschedulable_timeout
        self.clock = clock
        #: (-priority, timestamp, sequence, key): Kubernetes' PrioritySort (higher priority, then earlier)
        self._heap: list[tuple[int, float, int, str]] = []
        self._seq = itertools.count()
        self._active: dict[str, tuple[int, QueuedPodInfo]] = {}
        self._backoff: dict[str, QueuedPodInfo] = {}
        self._unschedulable: dict[str, QueuedPodInfo] = {}
        self._in_flight: dict[str, QueuedPodInfo] = {}
        self.scheduling_cycle = 0
        self._wake = asyncio.Event()
        self._closed = False

    # ------------------------------------------------------------------ inspection
    def __contains__(self, key: object) -> bool:
        return key in self._active or key in self._backoff or key in self._unschedulable

    def where(self, key: str) -> str | None:
        """``active``, ``backoff``, ``unschedulable``, ``in-flight`` or None."""
        for name, pool in (("active", self._active), ("backoff", self._backoff),
                           ("unschedulable", self._unschedulable), ("in-flight", self._in_flight)):
            if key in pool:
                return name
        return None

    def counts(self) -> dict[str, int]:
        """Pool sizes: ``{"active": n, "backoff": n, "unschedulable": n, "in_flight": n}``."""
        return {"active": len(self._active), "backoff": len(self._backoff),
                "unschedulable": len(self._unschedulable), "in_flight": len(self._in_flight)}

    def backoff_duration(self, attempts: int) -> float:
        """Seconds a pod waits after its ``attempts``-th failed try: initial × 2^(attempts-1), capped."""
        if attempts <= 0:
            return 0.0
        return min(self.initial_backoff * (2 ** (attempts - 1)), self.max_backoff)

    def backoff_until(self, qpi: QueuedPodInfo) -> float:
        return qpi.timestamp + self.backoff_duration(qpi.attempts)

    def _backing_off(self, qpi: QueuedPodInfo) -> bool:
        return self.backoff_until(qpi) > self.clock()

    # ------------------------------------------------------------------ pool moves
    def _push_active(self, qpi: QueuedPodInfo) -> None:
        seq = next(self._seq)
        self._active[qpi.key] = (seq, qpi)
        heapq.heappush(self._heap, (-qpi.priority, qpi.timestamp, seq, qpi.key))
        self._wake.set()

    def _requeue(self, qpi: QueuedPodInfo) -> None:
        """To backoff if it is still backing off, else to active."""
        if self._backing_off(qpi):
            self._backoff[qpi.key] = qpi
        else:
            self._push_active(qpi)

    def _remove(self, key: str) -> QueuedPodInfo | None:
        entry = self._active.pop(key, None)
        if entry is not None:
            return entry[1]
        return self._backoff.pop(key, None) or self._unschedulable.pop(key, None)

    # ------------------------------------------------------------------ informer side
    def add(self, pod: Obj) -> None:
        """A new pending pod (or one seen again on a relist): queue it as active."""
        key = pod_key(pod)
        if key in self or key in self._in_flight:
            self.update(pod, pod)
            return
        self._push_active(QueuedPodInfo(pod, key, self.clock()))

    def update(self, old: Obj, new: Obj) -> None:
        """A pending pod changed. Kept where it is, with the new object; a pod parked as
        unschedulable moves on when the change may matter (:func:`pod_updated`)."""
        key = pod_key(new)
        if key in self._active:
            self._active[key][1].pod = new
            return
        if key in self._backoff:
            self._backoff[key].pod = new
            return
        qpi = self._unschedulable.get(key)
        if qpi is not None:
            qpi.pod = new
            if pod_updated(old, new):
                del self._unschedulable[key]
                self._requeue(qpi)
            return
        flying = self._in_flight.get(key)
        if flying is not None:
            flying.pod = new
            if pod_updated(old, new):
                flying.updated_in_flight = True
            return
        self._push_active(QueuedPodInfo(new, key, self.clock()))

    def delete(self, pod: Obj) -> None:
        """The pod is gone, bound or no longer ours: forget it."""
        key = pod_key(pod)
        self._remove(key)
        flying = self._in_flight.get(key)
        if flying is not None:
            flying.deleted_in_flight = True

    def move_all(self, event: ClusterEvent) -> int:
        """A cluster event: move the unschedulable pods it may help (per the plugins that
        rejected them) to backoff or active; returns how many moved."""
        for flying in self._in_flight.values():
            flying.events_in_flight.add(event)
        moved = 0
        for key, qpi in list(self._unschedulable.items()):
            if self._relevant(qpi, {event}):
                del self._unschedulable[key]
                self._requeue(qpi)
                moved += 1
        return moved

    def _relevant(self, qpi: QueuedPodInfo, events: set[ClusterEvent]) -> bool:
        if not events:
            return False
        if ClusterEvent.UNSCHEDULABLE_TIMEOUT in events or not qpi.unschedulable_plugins:
            return True
        for plugin in qpi.unschedulable_plugins:
            registered = self.plugin_events.get(plugin)
            if registered is None or registered & events:
                return True
        return False

    # ------------------------------------------------------------------ scheduler side
    async def pop(self) -> QueuedPodInfo:
        """Wait for the next active pod; it is in flight until :meth:`done` or
        :meth:`add_unschedulable` / :meth:`add_backoff`. Raises QueueClosed."""
        while True:
            if self._closed:
                raise QueueClosed()
            while self._heap:
                _, _, seq, key = heapq.heappop(self._heap)
                entry = self._active.get(key)
                if entry is None or entry[0] != seq:
                    continue  # stale heap entry (moved or deleted since)
                del self._active[key]
                qpi = entry[1]
                self.scheduling_cycle += 1
                qpi.cycle = self.scheduling_cycle
                qpi.attempts += 1
                qpi.events_in_flight = set()
                qpi.updated_in_flight = qpi.deleted_in_flight = False
                self._in_flight[key] = qpi
                return qpi
            self._wake.clear()
            await self._wake.wait()

    def done(self, key: str) -> None:
        """The pod's attempt ended (bound, or dropped)."""
        self._in_flight.pop(key, None)

    def add_unschedulable(self, qpi: QueuedPodInfo, plugins: set[str] | None = None) -> str:
        """The attempt found no node. Parks the pod as unschedulable, unless it was updated
        or an event that may help arrived while it was in flight (then it goes to backoff).
        Returns the pool it went to (``""`` if it was deleted or is queued already)."""
        self._in_flight.pop(qpi.key, None)
        if qpi.deleted_in_flight or qpi.key in self:
            return ""
        qpi.unschedulable_plugins = set(plugins or ())
        qpi.timestamp = self.clock()
        if qpi.updated_in_flight or self._relevant(qpi, qpi.events_in_flight):
            self._requeue(qpi)
            return "backoff" if qpi.key in self._backoff else "active"
        self._unschedulable[qpi.key] = qpi
        return "unschedulable"

    def add_backoff(self, qpi: QueuedPodInfo) -> str:
        """The attempt failed for a reason other than fit (an API or plugin error): retry
        after the back-off. Returns the pool it went to (``""`` if deleted or queued)."""
        self._in_flight.pop(qpi.key, None)
        if qpi.deleted_in_flight or qpi.key in self:
            return ""
        qpi.unschedulable_plugins = set()
        qpi.timestamp = self.clock()
        self._requeue(qpi)
        return "backoff" if qpi.key in self._backoff else "active"

    # ------------------------------------------------------------------ time
    def flush(self) -> None:
        """Move backed-off pods whose back-off is over to active, and pods unschedulable for
        ``unschedulable_timeout`` seconds onwards (call about once a second)."""
        now = self.clock()
        for key, qpi in list(self._backoff.items()):
            if self.backoff_until(qpi) <= now:
                del self._backoff[key]
                self._push_active(qpi)
        for key, qpi in list(self._unschedulable.items()):
            if now - qpi.timestamp >= self.unschedulable_timeout:
                del self._unschedulable[key]
                self._requeue(qpi)

    async def run_flush(self, interval: float = 1.0) -> None:
        """Call :meth:`flush` every ``interval`` seconds until the queue closes."""
        while not self._closed:
            await asyncio.sleep(interval)
            self.flush()

    def close(self) -> None:
        """Wake :meth:`pop` with QueueClosed."""
        self._closed = True
        self._wake.set()
