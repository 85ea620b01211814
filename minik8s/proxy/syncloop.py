"""The proxy's sync schedule, shared by the Service rules and the network-policy rules (kube-proxy's
``BoundedFrequencyRunner``)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

#: seconds before the first retry of a failed sync (doubling up to the full-resync period)
FIRST_BACKOFF = 0.5


async def run(dirty: asyncio.Event, sync: Callable[[bool], Awaitable[bool]], sync_period: float,
              min_sync_period: float) -> None:
    """Call ``sync(full)`` when ``dirty`` is set and every ``sync_period`` seconds (``full`` True: a
    whole rewrite), at least ``min_sync_period`` seconds apart (changes arriving meanwhile are
    coalesced into the next call).  The first call is full.  When ``sync`` returns False the next call
    is a full rewrite, after a back-off from :data:`FIRST_BACKOFF` seconds doubling up to
    ``sync_period`` (or sooner, on the next change).  Runs until cancelled."""
    loop = asyncio.get_running_loop()
    next_full = loop.time()
    last_start = -float("inf")
    backoff = FIRST_BACKOFF
    force = True
    while True:
        now = loop.time()
        if now < next_full:
            try:
                await asyncio.wait_for(dirty.wait(), timeout=next_full - now)
            except TimeoutError:
                pass
        wait = last_start + min_sync_period - loop.time()
        if wait > 0:
            await asyncio.sleep(wait)
        last_start = loop.time()
        full = force or last_start >= next_full
        dirty.clear()
        if await sync(full):
            force = False
            backoff = FIRST_BACKOFF
            if full:
                next_full = last_start + sync_period
        else:
            force = True
            next_full = last_start + backoff
            backoff = min(backoff * 2, sync_period)
