"""The concurrency autoscaler's decider for Functions (Knative's KPA, ``pkg/autoscaler/scaling``).

Every tick (2 s) the function autoscaler feeds one sample — the average number of in-flight
requests of the Function over the last interval, measured by the gateway — into a
:class:`Decider`, then asks it for the desired number of instances:

* **stable** mode: ``ceil(average concurrency over the stable window (60 s) / targetConcurrency)``;
* **panic** mode starts when the panic window's (6 s) average asks for at least
  ``panic_threshold`` (2.0) times the ready instances; while panicking the desired count is
  ``ceil(panic average / target)`` and never goes down; panic ends once the panic window has
  stayed under the threshold for a whole stable window;
* the result is clamped to ``[minScale, maxScale]``;
* **scale to zero**: a desired count of 0 is only applied once ``scaleToZeroAfterSeconds``
  have passed since the last request *and* since the last scale change — an instance that
  was just started from zero (by the gateway's activator) is not scaled straight back to
  zero before its first request was even counted; until then one instance is kept;
* without any sample in the stable window (the gateway is unreachable, or the autoscaler
  just started) the current scale is kept (only clamped to the bounds).

Pure logic; time comes from the injectable ``clock`` (seconds, wall clock in production so
that the gateway's ``lastRequestTime`` and the Function's ``lastScaleTime`` compare).
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

TICK_SECONDS = 2.0
STABLE_WINDOW_SECONDS = 60.0
PANIC_WINDOW_SECONDS = 6.0
PANIC_THRESHOLD = 2.0


@dataclass(frozen=True)
class ScalingParams:
    """One Function's ``spec.scaling`` plus the autoscaler's windows (seconds)."""

    target_concurrency: float = 10.0
    min_scale: int = 0
    max_scale: int = 10
    scale_to_zero_after: float = 30.0
    stable_window: float = STABLE_WINDOW_SECONDS
    panic_window: float = PANIC_WINDOW_SECONDS
    panic_threshold: float = PANIC_THRESHOLD


@dataclass(frozen=True)
class Decision:
    """``desired`` instances, whether the decider is ``panicking``, the window averages
    (in-flight requests) and a one-line ``reason`` for logs and events."""

    desired: int
    panicking: bool
    stable_concurrency: float
    panic_concurrency: float
    reason: str


class Decider:
    """The KPA of one Function; keep one per Function across ticks."""

    def __init__(self, params: ScalingParams, clock: Callable[[], float] = time.time,
                 last_scale_at: float | None = None, last_request_at: float | None = None) -> None:
        self.params = params
        self.clock = clock
        self.samples: deque[tuple[float, float]] = deque()
        started = clock()
        self.last_scale_at = last_scale_at if last_scale_at is not None else started
        self.last_request_at = last_request_at if last_request_at is not None else 0.0
        self.panic_since: float | None = None
        self.panic_last_over: float = 0.0
        self.max_panic = 0

    def observe(self, concurrency: float, last_request_at: float | None = None) -> None:
        """Add one sample: the average in-flight requests over the last interval; a positive value
        (or a newer ``last_request_at``) also counts as a request now."""
        now = self.clock()
        self.samples.append((now, max(0.0, concurrency)))
        if concurrency > 0:
            self.last_request_at = now
        if last_request_at is not None:
            self.last_request_at = max(self.last_request_at, last_request_at)
        self._trim(now)

    def note_scale(self, at: float | None = None) -> None:
        """Record a scale change made by someone else (the activator's scale from zero)."""
        self.last_scale_at = max(self.last_scale_at, at if at is not None else self.clock())

    def _trim(self, now: float) -> None:
        while self.samples and self.samples[0][0] < now - self.params.stable_window:
            self.samples.popleft()

    def _average(self, now: float, window: float) -> float | None:
        values = [c for t, c in self.samples if t >= now - window]
        return sum(values) / len(values) if values else None

    def decide(self, current: int, ready: int) -> Decision:
        """The desired instances given ``current`` (what the Deployment asks for now) and
        ``ready`` (instances that answer).  A result different from ``current`` counts as a
        scale change from now on."""
        p = self.params
        now = self.clock()
        self._trim(now)
        stable = self._average(now, p.stable_window)
        if stable is None:
            desired = min(max(current, p.min_scale), p.max_scale)
            return self._done(current, Decision(desired, self.panic_since is not None, 0.0, 0.0, "no metrics"))
        panic = self._average(now, p.panic_window)
        panic = stable if panic is None else panic
        want_stable = math.ceil(stable / p.target_concurrency - 1e-9)
        want_panic = math.ceil(panic / p.target_concurrency - 1e-9)
        over = panic / p.target_concurrency / max(1, ready) >= p.panic_threshold
        if over:
            if self.panic_since is None:
                self.panic_since = now
            self.panic_last_over = now
        elif self.panic_since is not None and now - self.panic_last_over >= p.stable_window:
            self.panic_since = None
            self.max_panic = 0
        if self.panic_since is not None:
            desired = max(want_panic, self.max_panic, current if current > 0 else 0)
            self.max_panic = desired
            reason = f"panic: {panic:.2f} in flight over {p.panic_window:.0f}s"
        else:
            desired = want_stable
            reason = f"stable: {stable:.2f} in flight over {p.stable_window:.0f}s"
        if desired == 0 and current > 0:
            idle = now - max(self.last_request_at, self.last_scale_at)
            if idle < p.scale_to_zero_after:
                desired = 1
                reason = f"idle {idle:.0f}s of {p.scale_to_zero_after:.0f}s before scaling to zero"
            else:
                reason = f"idle {idle:.0f}s: scaling to zero"
        desired = min(max(desired, p.min_scale), p.max_scale)
        return self._done(current, Decision(desired, self.panic_since is not None, stable, panic, reason))

    def _done(self, current: int, decision: Decision) -> Decision:
        if decision.desired != current:
            self.last_scale_at = self.clock()
        return decision
