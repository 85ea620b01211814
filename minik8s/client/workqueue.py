"""A rate-limited work queue of object keys (client-go's ``workqueue`` semantics).

- A key is queued at most once however often it is added (dirty set).
- A key is never handed to two workers at once: added while being processed,
  it is queued again only after :meth:`WorkQueue.done`.
- :meth:`add_after` delays a key; :meth:`add_rate_limited` delays it by a
  per-key exponential back-off (``base`` doubling up to ``max_delay`` seconds)
  that :meth:`forget` resets.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable

log = logging.getLogger("workqueue")


class ShutDown(Exception):
    """The queue was shut down; workers should exit."""


class WorkQueue:
    def __init__(self, name: str = "", base_delay: float = 0.005, max_delay: float = 300.0) -> None:
        self.name = name
        self.base_delay = base_delay
        self.max_delay = max_delay
        self._queue: deque[str] = deque()
        self._dirty: set[str] = set()
        self._processing: set[str] = set()
        self._failures: dict[str, int] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._cond = asyncio.Condition()
        self._shutting_down = False

    def __len__(self) -> int:
        return len(self._queue)

    def add(self, key: str) -> None:
        """Queue ``key`` now (no-op if already queued; re-queued after done() if in process)."""
        if self._shutting_down or key in self._dirty:
            return
        self._dirty.add(key)
        if key not in self._processing:
            self._queue.append(key)
            self._notify()

    def _notify(self) -> None:
        async def wake() -> None:
            async with self._cond:
                self._cond.notify()
        try:
            asyncio.get_running_loop().create_task(wake())
        except RuntimeError:
            pass

    def add_after(self, key: str, delay: float) -> None:
        """Queue ``key`` after ``delay`` seconds (an earlier pending timer for it wins)."""
        if delay <= 0:
            self.add(key)
            return
        loop = asyncio.get_running_loop()
        existing = self._timers.get(key)
        when = loop.time() + delay
        if existing is not None and existing.when() <= when:
            return
        if existing is not None:
            existing.cancel()

        def fire() -> None:
            self._timers.pop(key, None)
            self.add(key)

        self._timers[key] = loop.call_at(when, fire)

    def add_rate_limited(self, key: str) -> float:
        """Queue ``key`` after its back-off (base × 2^failures, capped); returns the delay."""
        n = self._failures.get(key, 0)
        self._failures[key] = n + 1
        delay = min(self.base_delay * (2 ** n), self.max_delay)
        self.add_after(key, delay)
        return delay

    def forget(self, key: str) -> None:
        """Reset ``key``'s back-off (call after a successful sync)."""
        self._failures.pop(key, None)

    def num_requeues(self, key: str) -> int:
        return self._failures.get(key, 0)

    async def get(self) -> str:
        """Wait for the next key and mark it in process; raises ShutDown."""
        async with self._cond:
            while not self._queue:
                if self._shutting_down:
                    raise ShutDown()
                await self._cond.wait()
            key = self._queue.popleft()
            self._dirty.discard(key)
            self._processing.add(key)
            return key

    def done(self, key: str) -> None:
        """Mark ``key`` processed; if it was added meanwhile, queue it again."""
        self._processing.discard(key)
        if key in self._dirty:
            self._queue.append(key)
            self._notify()

    def shutdown(self) -> None:
        self._shutting_down = True
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()

        async def wake_all() -> None:
            async with self._cond:
                self._cond.notify_all()
        try:
            asyncio.get_running_loop().create_task(wake_all())
        except RuntimeError:
            pass


async def run_workers(queue: WorkQueue, sync: Callable[[str], Awaitable[None]], workers: int = 1,
                      component: str = "controller") -> None:
    """Run ``workers`` loops that pop a key, await ``sync(key)`` and requeue with back-off on error."""

    async def worker() -> None:
        while True:
            try:
                key = await queue.get()
            except ShutDown:
                return
            try:
                await sync(key)
                queue.forget(key)
            except Exception as exc:  # noqa: BLE001 - any failure means "try again later"
                delay = queue.add_rate_limited(key)
                log.warning("%s sync of %s failed (retry in %.2fs): %s", component, key, delay, exc,
                            exc_info=log.isEnabledFor(logging.DEBUG))
            finally:
                queue.done(key)

    await asyncio.gather(*(worker() for _ in range(workers)))
