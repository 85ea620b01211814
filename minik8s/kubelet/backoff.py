"""Per-key exponential back-off, as Kubernetes' ``flowcontrol.Backoff`` used by the kubelet.

Used for ``CrashLoopBackOff`` (key: pod uid + container name, event time: when the
container finished) and ``ImagePullBackOff`` (key: pod uid + image, event time: when the
pull failed).  The first failure is retried at once and arms a delay of ``initial``
seconds; each further failure inside the delay window doubles it up to ``maximum``.  An
entry whose last update is more than ``2 × maximum`` old (10 min with the defaults, i.e.
a container that ran fine that long) is forgotten, so the next failure starts over.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class _Entry:
    delay: float
    last_update: float


class Backoff:
    """Back-off state per key; times are Unix seconds (wall clock, like container timestamps)."""

    def __init__(self, initial: float, maximum: float, clock: Callable[[], float] = time.time) -> None:
        self.initial = max(float(initial), 0.0)
        self.maximum = max(float(maximum), self.initial)
        self.clock = clock
        self._entries: dict[str, _Entry] = {}

    def _expired(self, entry: _Entry, event_time: float) -> bool:
        return event_time - entry.last_update > 2 * self.maximum

    def next(self, key: str, event_time: float) -> float:
        """Record a failure at ``event_time``; returns the delay now in force for ``key``."""
        entry = self._entries.get(key)
        if entry is None or self._expired(entry, event_time):
            entry = _Entry(self.initial, event_time)
        else:
            entry = _Entry(min(entry.delay * 2, self.maximum), event_time)
        self._entries[key] = entry
        return entry.delay

    def in_backoff_since(self, key: str, event_time: float) -> bool:
        """Whether ``key`` must still wait: less than its delay has passed since ``event_time``."""
        return self.remaining(key, event_time) > 0

    def remaining(self, key: str, event_time: float) -> float:
        """Seconds left to wait after a failure at ``event_time`` (0 when free to retry)."""
        entry = self._entries.get(key)
        if entry is None or self._expired(entry, event_time):
            return 0.0
        return max(entry.delay - (self.clock() - event_time), 0.0)

    def delay(self, key: str) -> float:
        """The delay currently armed for ``key`` (0 when it has none)."""
        entry = self._entries.get(key)
        return entry.delay if entry else 0.0

    def forget(self, key: str) -> None:
        """Drop ``key`` (its next failure starts at ``initial`` again)."""
        self._entries.pop(key, None)

    def forget_prefix(self, prefix: str) -> None:
        """Drop every key starting with ``prefix`` (all containers of a removed pod)."""
        for key in [k for k in self._entries if k.startswith(prefix)]:
            del self._entries[key]

    def gc(self) -> None:
        """Drop entries not updated for ``2 × maximum`` seconds."""
        now = self.clock()
        for key in [k for k, e in self._entries.items() if self._expired(e, now)]:
            del self._entries[key]
