"""Waiting for a condition: poll it with a deadline (tests never sleep a fixed time).

:func:`wait_for` (for async tests) and :func:`wait_for_sync` (for plain ones) share one
behaviour: call ``pred`` every ``interval`` seconds until it returns something truthy and
return that value; an exception of ``not_yet`` (by default any Exception) from ``pred``
counts as "not yet" (an object not created yet, a server restarting) and any other
propagates; after ``timeout`` seconds raise AssertionError naming ``what`` and the last
value or exception seen.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

Predicate = Callable[[], Any] | Callable[[], Awaitable[Any]]


def _timed_out(what: str, timeout: float, last: Any) -> AssertionError:
    return AssertionError(f"timed out after {timeout:g}s waiting for {what} (last: {last!r})")


NotYet = tuple[type[BaseException], ...]


async def wait_for(pred: Predicate, timeout: float = 15.0, interval: float = 0.05, what: str = "condition",
                   not_yet: NotYet = (Exception,)) -> Any:
    """Poll ``pred`` (sync or async) until it returns a truthy value; returns that value.

    Raises AssertionError after ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    last: Any = None
    while True:
        try:
            last = pred()
            if asyncio.iscoroutine(last):
                last = await last
            if last:
                return last
        except not_yet as exc:  # not yet; reported if it lasts
            last = exc
        if loop.time() > deadline:
            raise _timed_out(what, timeout, last)
        await asyncio.sleep(interval)


def wait_for_sync(pred: Callable[[], Any], timeout: float = 15.0, interval: float = 0.05,
                  what: str = "condition", not_yet: NotYet = (Exception,)) -> Any:
    """:func:`wait_for` for code that is not async (blocks the calling thread)."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        try:
            last = pred()
            if last:
                return last
        except not_yet as exc:  # not yet; reported if it lasts
            last = exc
        if time.monotonic() > deadline:
            raise _timed_out(what, timeout, last)
        time.sleep(interval)
