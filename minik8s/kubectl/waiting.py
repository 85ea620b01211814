"""Waiting for objects to go: kubectl's ``--wait`` after ``delete`` and ``drain`` (polling, with progress)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from rich.console import Console

from minik8s.api import errors
from minik8s.kubectl.resolve import object_ref
from minik8s.kubectl.selection import ObjectRef
from minik8s.kubectl.session import Session


async def gone(s: Session, v: ObjectRef) -> bool:
    """True when the object no longer exists (or was replaced by one with another uid)."""
    try:
        obj = await s.client.get(v.rt, v.name, v.namespace)
    except errors.NotFound:
        return True
    return bool(v.uid) and (obj.get("metadata") or {}).get("uid") != v.uid


async def wait_gone(s: Session, victims: list[ObjectRef], timeout: float,
                    on_gone: Callable[[ObjectRef], None] | None = None) -> list[ObjectRef]:
    """Poll until every victim is gone; returns those still there at the timeout (0 = wait on).

    ``on_gone`` is called once per victim as soon as it is seen gone (``drain`` reports each pod).
    """
    deadline = time.monotonic() + timeout if timeout > 0 else None
    pending = list(victims)
    delay = 0.1
    console = Console(stderr=True, highlight=False, markup=False)
    status: AbstractContextManager[Any] = nullcontext()
    if console.is_terminal:
        status = console.status(f"waiting for {len(pending)} object(s) to be deleted")
    with status as spinner:
        while pending:
            still = []
            for v in pending:
                if not await gone(s, v):
                    still.append(v)
                elif on_gone is not None:
                    on_gone(v)
            pending = still
            if not pending or (deadline is not None and time.monotonic() >= deadline):
                break
            if spinner is not None:
                spinner.update(f"waiting for {object_ref(pending[0].rt, pending[0].name)} to be deleted"
                               + (f" (+{len(pending) - 1} more)" if len(pending) > 1 else ""))
            await asyncio.sleep(delay)
            delay = min(delay * 1.5, 1.0)
    return pending
