"""What every controller shares: a work queue of keys, workers, event recording, slow-start batches.

The shape is Kubernetes' controller pattern (docs/architecture.md, "The rules that hold it
together"): informer event handlers only enqueue ``namespace/name`` keys; :meth:`Controller.run` starts
``workers`` loops that pop a key and call :meth:`Controller.sync`, which reconciles the
object's desired and actual state from the shared informer caches.  A sync that raises is
retried with per-key exponential back-off (:func:`minik8s.client.workqueue.run_workers`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

from minik8s.api import errors
from minik8s.api.base import Obj, now_rfc3339
from minik8s.client.events import EventRecorder
from minik8s.client.factory import SharedInformerFactory
from minik8s.client.rest import Client
from minik8s.client.workqueue import WorkQueue, run_workers


def by_controller_uid(obj: Obj) -> list[str]:
    """Index function: the uid of the object's controller ownerReference, if any."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller") and ref.get("uid"):
            return [str(ref["uid"])]
    return []


CONTROLLER_UID_INDEX = "controllerUID"


async def slow_start_batch(count: int, initial_batch: int,
                           fn: Callable[[], Awaitable[Any]]) -> tuple[int, BaseException | None]:
    """Call ``fn`` ``count`` times in batches of 1, 2, 4, ... (starting at ``initial_batch``).

    Kubernetes' ``slowStartBatch``: each batch runs concurrently; after a batch with any
    failure no further batch starts, so a create that is bound to fail (quota, invalid
    template) is tried a handful of times instead of ``count`` times.  Returns the number of
    successful calls and the first error (None when all succeeded).
    """
    remaining = count
    successes = 0
    batch = min(remaining, max(initial_batch, 1))
    while batch > 0:
        results = await asyncio.gather(*(fn() for _ in range(batch)), return_exceptions=True)
        failures = [r for r in results if isinstance(r, BaseException)]
        successes += batch - len(failures)
        if failures:
            return successes, failures[0]
        remaining -= batch
        batch = min(2 * batch, remaining)
    return successes, None


class Controller:
    """Base class: a named work queue, ``workers`` sync loops and an event recorder.

    Subclasses set :attr:`name` (also the Event ``source.component``, e.g.
    ``replicaset-controller``), register informer handlers in ``__init__`` through
    ``factory`` and implement :meth:`sync`.
    """

    name: ClassVar[str] = "controller"

    def __init__(self, client: Client, factory: SharedInformerFactory, recorder: EventRecorder | None = None) -> None:
        self.client = client
        self.factory = factory
        self.queue = WorkQueue(self.name)
        self.recorder = recorder or EventRecorder(client, self.name)
        self.log = logging.getLogger(self.name)
        self._event_tasks: set[asyncio.Task[None]] = set()
        self._conflicts: dict[str, int] = {}

    # ------------------------------------------------------------------ queueing
    def enqueue(self, key: str) -> None:
        """Queue ``key`` for a sync (deduplicated by the work queue)."""
        self.queue.add(key)

    def enqueue_after(self, key: str, delay: float) -> None:
        """Queue ``key`` after ``delay`` seconds."""
        self.queue.add_after(key, delay)

    # ------------------------------------------------------------------ events
    def event(self, obj: Obj, type_: str, reason: str, message: str) -> None:
        """Record an Event about ``obj`` in the background (never blocks nor fails a sync)."""
        try:
            task = asyncio.get_running_loop().create_task(self.recorder.record(obj, type_, reason, message))
        except RuntimeError:
            return
        self._event_tasks.add(task)
        task.add_done_callback(self._event_tasks.discard)

    # ------------------------------------------------------------------ running
    async def run(self, workers: int = 1) -> None:
        """Wait for the shared caches, then run ``workers`` sync loops until :meth:`shutdown`."""
        await self.factory.wait_for_cache_sync()
        self.log.info("%s started workers=%d", self.name, workers)
        await run_workers(self.queue, self._sync_handling_conflicts, workers, component=self.name)

    async def _sync_handling_conflicts(self, key: str) -> None:
        """:meth:`sync`, with 409 Conflicts retried quietly.

        A Conflict means a write raced with another writer, or the cache was behind this
        controller's own last write: expected, and settled by syncing again from a fresher
        cache.  Retries back off from 50 ms, doubling up to 5 s; only a key that keeps
        conflicting (5 times in a row) is logged as a warning.  Other errors go to the work
        queue's rate-limited retry.
        """
        try:
            await self.sync(key)
        except errors.Conflict as exc:
            n = self._conflicts.get(key, 0)
            self._conflicts[key] = n + 1
            level = logging.WARNING if n >= 4 else logging.DEBUG
            self.log.log(level, "%s sync of %s conflicted (%d in a row), retrying: %s", self.name, key, n + 1,
                         exc.message)
            self.enqueue_after(key, min(0.05 * 2 ** n, 5.0))
        else:
            self._conflicts.pop(key, None)

    def shutdown(self) -> None:
        """Stop the work queue; workers exit after their current sync."""
        self.queue.shutdown()
        for task in list(self._event_tasks):
            task.cancel()

    async def sync(self, key: str) -> None:
        """Reconcile the object ``key`` names; raise to be retried with back-off."""
        raise NotImplementedError


#: The annotation holding the hash of what a controller wants a child object to be.
HASH_ANNOTATION = "minik8s.io/spec-hash"


def spec_hash(value: Any) -> str:
    """A short stable hash of a JSON-able value (what the controller wants a child to be)."""
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]


def ready_condition(old: Obj | None, status: str, reason: str, message: str) -> Obj:
    """A ``Ready`` condition; ``lastTransitionTime`` kept from ``old`` when the status did not change."""
    stamp = old.get("lastTransitionTime") if old and old.get("status") == status else None
    return {"type": "Ready", "status": status, "reason": reason, "message": message,
            "lastTransitionTime": stamp or now_rfc3339()}
