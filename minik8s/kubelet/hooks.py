"""Container lifecycle hooks: ``postStart`` and ``preStop`` (``exec``, ``httpGet``, ``tcpSocket``,
``sleep``).

Kubernetes semantics:

- ``postStart`` runs right after the container started; the container counts as started
  only when it returns.  A failing hook records ``FailedPostStartHook`` and the container
  is killed (then restarted per the restart policy).
- ``preStop`` runs before the stop signal when the kubelet stops a container (deletion,
  liveness failure, ...).  It may use the whole grace period; the signal then gets what is
  left (at least 2 s).  A failing hook records ``FailedPreStopHook`` and the stop goes on.

The handlers are run like probes (see :func:`minik8s.kubelet.probes.run_probe`); ``sleep``
(``{seconds}``) makes the kubelet wait that long (Kubernetes' ``runSleepHandler``): a ``preStop``
sleep is cut short by the end of the grace period, and then fails with Kubernetes' "container
terminated before sleep hook finished"; a ``postStart`` sleep is not bounded.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

import httpx

from minik8s.api.base import Obj
from minik8s.kubelet.probes import ProbeTarget, run_probe
from minik8s.kubelet.runtime import DockerRuntime

log = logging.getLogger("kubelet.hooks")

EventFn = Callable[[Obj, str, str, str, str | None], None]
MIN_GRACE_SECONDS = 2
POST_START_TIMEOUT = 30.0


def _handler(container: Obj, kind: str) -> Obj | None:
    return ((container.get("lifecycle") or {}).get(kind)) or None


class LifecycleHooks:
    """Runs a container's ``postStart`` / ``preStop`` handlers."""

    def __init__(self, runtime: DockerRuntime, http: httpx.AsyncClient, event: EventFn) -> None:
        self.runtime = runtime
        self.http = http
        self.event = event

    async def _run(self, pod: Obj, container: Obj, container_id: str, pod_ip: str, handler: Obj,
                   timeout: float | None) -> tuple[bool, str]:
        """Run one handler within ``timeout`` seconds (None: a sleep as long as it asks)."""
        if handler.get("sleep") is not None:
            seconds = max(float((handler["sleep"] or {}).get("seconds") or 0), 0.0)
            if timeout is not None and seconds > timeout:
                await asyncio.sleep(timeout)
                return False, "container terminated before sleep hook finished"
            await asyncio.sleep(seconds)
            return True, ""
        timeout = POST_START_TIMEOUT if timeout is None else timeout
        probe = {**handler, "timeoutSeconds": max(timeout, 1.0)}
        target = ProbeTarget(pod=pod, container=container, container_id=container_id, started_at=time.time(),
                             pod_ip=pod_ip)
        return await run_probe(self.runtime, self.http, probe, target)

    async def post_start(self, pod: Obj, container: Obj, container_id: str, pod_ip: str) -> str | None:
        """Run ``postStart``; returns the failure message (None when it passed or there is none)."""
        handler = _handler(container, "postStart")
        if handler is None:
            return None
        ok, message = await self._run(pod, container, container_id, pod_ip, handler, None)
        if ok:
            return None
        text = f"PostStartHook failed: {message}"[:1024]
        self.event(pod, "Warning", "FailedPostStartHook", text, container["name"])
        return text

    async def pre_stop(self, pod: Obj, container: Obj, container_id: str, pod_ip: str, grace: float) -> float:
        """Run ``preStop`` within ``grace`` seconds; returns the grace left for the stop signal."""
        handler = _handler(container, "preStop")
        if handler is None:
            return grace
        started = time.monotonic()
        ok, message = await self._run(pod, container, container_id, pod_ip, handler, grace)
        if not ok:
            log.info("kubelet preStop hook of %s failed: %s", container.get("name"), message)
            self.event(pod, "Warning", "FailedPreStopHook", f"PreStopHook failed: {message}"[:1024],
                       container["name"])
        return max(grace - (time.monotonic() - started), MIN_GRACE_SECONDS)
