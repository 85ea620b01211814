"""Helpers for the controller integration tests.

There is no kubelet and no scheduler in these tests, so pods never run on their own.  The
helpers below do, over the API, exactly what those components would do: bind a pod to a
node through the ``binding`` subresource (the scheduler), report it Running/Ready through
the ``status`` subresource and finish a graceful deletion with a grace-period-0 DELETE
(the kubelet).  Nothing here reaches into the controllers' internals.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
from collections.abc import AsyncIterator, Coroutine
from typing import Any

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.client.informer import Informer
from minik8s.client.rest import Client
from minik8s.controllers.manager import ControllerManager, ControllerOptions


def now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@contextlib.asynccontextmanager
async def controller_manager(client: Client, namespace: str | None, controllers: list[str] | None = None,
                             workers: int = 3, options: ControllerOptions | None = None
                             ) -> AsyncIterator[ControllerManager]:
    """``minik8s controller-manager`` in-process (an asyncio task), its informers limited to
    ``namespace`` (None: every namespace)."""
    manager = ControllerManager(client, controllers, workers=workers, namespace=namespace, resync_period=None,
                                options=options)
    task = asyncio.get_running_loop().create_task(manager.run())
    try:
        await asyncio.wait_for(manager.started.wait(), 20)
        yield manager
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def pod_template(labels: dict[str, str], image: str = "minik8s/busybox") -> Obj:
    return {"metadata": {"labels": dict(labels)},
            "spec": {"containers": [{"name": "main", "image": image, "command": ["sleep", "3600"]}]}}


def replicaset(name: str, replicas: int, labels: dict[str, str], **spec: Any) -> Obj:
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": dict(labels)},
                     "template": pod_template(labels), **spec}}


def deployment(name: str, replicas: int, labels: dict[str, str], image: str = "minik8s/busybox",
               **spec: Any) -> Obj:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": dict(labels)},
                     "template": pod_template(labels, image), **spec}}


def is_ready(pod: Obj) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def is_live(pod: Obj) -> bool:
    """Not terminating and not finished: what counts as a running replica."""
    return not pod["metadata"].get("deletionTimestamp") and \
        (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")


def owner_uids(obj: Obj) -> list[str]:
    return [r["uid"] for r in obj["metadata"].get("ownerReferences") or []]


async def pods(client: Client, namespace: str, live_only: bool = True) -> list[Obj]:
    items = (await client.list(client.kind("v1", "Pod"), namespace))["items"]
    return [p for p in items if is_live(p)] if live_only else items


async def bind(client: Client, pod: Obj, node: str) -> None:
    """What the scheduler does: POST the pod's binding subresource."""
    if not (pod.get("spec") or {}).get("nodeName"):
        await client.bind(pod["metadata"]["namespace"], pod["metadata"]["name"], node)


async def mark_running(client: Client, pod: Obj, node: str | None = "node-1", ready: bool = True,
                       restarts: int = 0, phase: str = "Running") -> Obj:
    """What a kubelet reports: bind if ``node`` (scheduler), then write ``status`` (phase, Ready, restarts)."""
    rt = client.kind("v1", "Pod")
    ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
    if node:
        await bind(client, await client.get(rt, name, ns), node)
    for _ in range(10):
        live = await client.get(rt, name, ns)
        stamp = now()
        flag = "True" if ready else "False"
        live["status"] = {
            "phase": phase,
            "conditions": [{"type": "PodScheduled", "status": "True", "lastTransitionTime": stamp},
                           {"type": "ContainersReady", "status": flag, "lastTransitionTime": stamp},
                           {"type": "Ready", "status": flag, "lastTransitionTime": stamp}],
            "containerStatuses": [{"name": "main", "ready": ready, "restartCount": restarts,
                                   "image": "minik8s/busybox", "state": {"running": {"startedAt": stamp}}}],
            "startTime": stamp,
        }
        try:
            return await client.update_status(rt, live)
        except errors.Conflict:
            continue
    raise AssertionError(f"could not write the status of pod {name}")


async def finish(client: Client, pod: Obj, phase: str = "Succeeded", exit_code: int | None = None,
                 conditions: list[Obj] | None = None) -> None:
    """What a kubelet reports when the pod's container exited (``exit_code``, by default 0 when
    Succeeded and 1 when Failed), with ``conditions`` (e.g. ``DisruptionTarget``) besides Ready."""
    rt = client.kind("v1", "Pod")
    code = exit_code if exit_code is not None else 0 if phase == "Succeeded" else 1
    for _ in range(10):
        live = await client.get(rt, pod["metadata"]["name"], pod["metadata"]["namespace"])
        stamp = now()
        live["status"] = {
            "phase": phase,
            "conditions": [*(conditions or []), {"type": "Ready", "status": "False", "reason": "PodCompleted",
                                                 "lastTransitionTime": stamp}],
            "containerStatuses": [{"name": "main", "ready": False, "restartCount": 0, "image": "minik8s/busybox",
                                   "imageID": "", "state": {"terminated": {
                                       "exitCode": code, "reason": "Completed" if code == 0 else "Error",
                                       "startedAt": stamp, "finishedAt": stamp}}}],
        }
        with contextlib.suppress(errors.Conflict):
            await client.update_status(rt, live)
            return
    raise AssertionError("could not write the pod's status")


async def finish_deletion(client: Client, pod: Obj) -> None:
    """What a kubelet does once a pod's containers stopped: DELETE with grace period 0."""
    meta = pod["metadata"]
    with contextlib.suppress(errors.NotFound, errors.Conflict):
        await client.delete(client.kind("v1", "Pod"), meta["name"], meta["namespace"], grace_period_seconds=0,
                            preconditions={"uid": meta["uid"]})


class SimulatedNode:
    """Scheduler + kubelet stand-in for one namespace, acting only through the API.

    New pods are bound to ``node`` and reported Running and Ready ``ready_delay`` seconds
    later; pods that start terminating are removed ``termination_delay`` seconds later.
    With ``node=None`` it binds nothing and plays only the kubelets: pods a real scheduler bound
    (any node) are reported Running and Ready.  Use as ``async with SimulatedNode(client, ns):``.
    """

    def __init__(self, client: Client, namespace: str, node: str | None = "node-1", ready_delay: float = 0.2,
                 termination_delay: float = 0.2) -> None:
        self.client = client
        self.namespace = namespace
        self.node = node
        self.ready_delay = ready_delay
        self.termination_delay = termination_delay
        self.informer = Informer(client, client.kind("v1", "Pod"), namespace)
        self._seen_start: set[str] = set()
        self._seen_stop: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self.informer.add_handler(self._on_pod, lambda _old, cur: self._on_pod(cur))

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _on_pod(self, pod: Obj) -> None:
        uid = pod["metadata"]["uid"]
        if pod["metadata"].get("deletionTimestamp"):
            if uid not in self._seen_stop:
                self._seen_stop.add(uid)
                self._spawn(self._stop(pod))
        elif self.node is None and not (pod.get("spec") or {}).get("nodeName"):
            return  # waits for the scheduler
        elif uid not in self._seen_start and not (pod.get("status") or {}).get("phase") == "Running":
            self._seen_start.add(uid)
            self._spawn(self._start(pod))

    async def _start(self, pod: Obj) -> None:
        with contextlib.suppress(errors.NotFound, errors.Conflict):
            if self.node is not None:
                await bind(self.client, pod, self.node)
            await asyncio.sleep(self.ready_delay)
            await mark_running(self.client, pod, node=None)

    async def _stop(self, pod: Obj) -> None:
        await asyncio.sleep(self.termination_delay)
        await finish_deletion(self.client, pod)

    async def __aenter__(self) -> SimulatedNode:
        self._runner = asyncio.get_running_loop().create_task(self.informer.run())
        await self.informer.wait_synced(10)
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self._runner.cancel()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(self._runner, *self._tasks, return_exceptions=True)


async def events_for(client: Client, namespace: str, name: str) -> list[Obj]:
    items = (await client.list(client.kind("v1", "Event"), namespace))["items"]
    return [e for e in items if (e.get("involvedObject") or {}).get("name") == name]
