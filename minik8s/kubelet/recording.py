"""Fire-and-forget pod events through the shared :class:`~minik8s.client.events.EventRecorder`.

The pod worker must not wait on the apiserver to record an event (it may be away), so
each event is sent by its own task.  Container events carry Kubernetes' field path
``spec.containers{<name>}``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from minik8s.client.events import EventRecorder


class PodEvents:
    """``emit(pod, type, reason, message, container)`` → one Event about the pod, sent in the background."""

    def __init__(self, recorder: EventRecorder, max_pending: int = 500) -> None:
        self.recorder = recorder
        self.max_pending = max_pending
        self._tasks: set[asyncio.Task[None]] = set()

    def emit(self, pod: dict[str, Any], type_: str, reason: str, message: str,
             container: str | None = None) -> None:
        """Queue one Event (``type_`` Normal/Warning); dropped when 500 are already pending."""
        if len(self._tasks) >= self.max_pending:
            return  # the apiserver is away and events pile up: drop, as client-go's broadcaster does
        ref = {"kind": "Pod", "apiVersion": "v1", "metadata": pod.get("metadata") or {}}
        field_path = f"spec.containers{{{container}}}" if container else None
        task = asyncio.get_running_loop().create_task(
            self.recorder.record(ref, type_, reason, message, field_path=field_path))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def drain(self, timeout: float = 2.0) -> None:
        """Wait (a little) for the events still being sent."""
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=timeout)
