"""The HorizontalPodAutoscaler controller: the I/O around :class:`~.autoscaler.Autoscaler` — read
the target's Scale and the pods' PodMetrics, rescale, write status and events (see the package
docstring for the algorithm)."""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from typing import Any

from minik8s.api import errors
from minik8s.api.base import Obj, object_key
from minik8s.api.metrics import API_VERSION as METRICS_API_VERSION
from minik8s.api.registry import METRICS_TYPES
from minik8s.client.events import EventRecorder
from minik8s.client.factory import SharedInformerFactory
from minik8s.client.informer import NAMESPACE_INDEX, by_namespace
from minik8s.client.rest import Client, resource_path
from minik8s.controllers.base import Controller
from minik8s.controllers.podautoscaler.autoscaler import Autoscaler
from minik8s.controllers.podautoscaler.options import AutoscalerOptions


class HorizontalPodAutoscalerController(Controller):
    """Reconciles HorizontalPodAutoscalers (keys ``namespace/name``) every ``options.sync_period``.

    Each HPA is synced at most once per period, as Kubernetes' rate-limited queue does:
    adds and spec changes queue it for the next period (a new HPA right away), every sync
    queues the next one.  Pods come from the shared pod informer; the Scale and the
    PodMetrics are read from the API.
    """

    name = "horizontal-pod-autoscaler"

    def __init__(self, client: Client, factory: SharedInformerFactory, options: AutoscalerOptions | None = None,
                 recorder: EventRecorder | None = None, clock: Callable[[], float] = time.time) -> None:
        super().__init__(client, factory, recorder)
        self.options = options or AutoscalerOptions()
        self.autoscaler = Autoscaler(self.options, clock)
        self.hpa_rt = client.kind("autoscaling/v2", "HorizontalPodAutoscaler")
        self.hpas = factory.informer(self.hpa_rt)
        self.pods = factory.informer(client.kind("v1", "Pod"), {NAMESPACE_INDEX: by_namespace})
        self.hpas.add_handler(lambda hpa: self.enqueue(object_key(hpa)), self._update, self._delete)
        self.pod_metrics_rt = next(rt for rt in METRICS_TYPES if rt.kind == "PodMetrics")

    def _update(self, old: Obj, cur: Obj) -> None:
        self.enqueue_after(object_key(cur), self.options.sync_period)

    def _delete(self, hpa: Obj) -> None:
        self.autoscaler.forget(object_key(hpa))

    async def _scale(self, hpa: Obj) -> tuple[Any, Obj | None, str | None]:
        """(target ResourceType, Scale, error text)."""
        ref = (hpa.get("spec") or {}).get("scaleTargetRef") or {}
        namespace = hpa["metadata"]["namespace"]
        try:
            rt = await self.client.discover_kind(ref.get("apiVersion") or None, str(ref.get("kind") or ""))
        except errors.NotFound as exc:
            return None, None, exc.message
        if "scale" not in rt.subresources:
            return rt, None, f'{rt.plural}.{rt.group or "core"} "{ref.get("name")}" has no scale subresource'
        try:
            return rt, await self.client.get(rt, str(ref.get("name")), namespace, subresource="scale"), None
        except errors.APIError as exc:
            return rt, None, exc.message

    async def _pod_metrics(self, namespace: str, selector: str) -> list[Obj] | str:
        if not selector:
            return []
        try:
            listed = await self.client.request("GET", resource_path(self.pod_metrics_rt, namespace),
                                               params={"labelSelector": selector})
        except errors.APIError as exc:
            return exc.message
        if listed.get("apiVersion") not in (None, METRICS_API_VERSION):
            return f"unexpected answer {listed.get('kind')} from the resource metrics API"
        return list(listed.get("items") or [])

    async def sync(self, key: str) -> None:
        """One HPA sync (see the module docstring); always queues the next one."""
        cached = self.hpas.get(key)
        if cached is None:
            self.autoscaler.forget(key)
            return
        try:
            await self._sync(key, copy.deepcopy(cached))
        finally:
            if self.hpas.get(key) is not None:
                self.enqueue_after(key, self.options.sync_period)

    async def _sync(self, key: str, hpa: Obj) -> None:
        namespace = hpa["metadata"]["namespace"]
        rt, scale, scale_error = await self._scale(hpa)
        selector = str(((scale or {}).get("status") or {}).get("selector") or "")
        pods = self.pods.by_index(NAMESPACE_INDEX, namespace)
        pod_metrics = await self._pod_metrics(namespace, selector) if scale is not None else []
        plan = self.autoscaler.plan(key, hpa, scale, scale_error, pods, pod_metrics)
        if plan.rescale and scale is not None:
            write_error = None
            try:
                await self.client.patch(rt, hpa["spec"]["scaleTargetRef"]["name"],
                                        {"spec": {"replicas": plan.desired_replicas}}, namespace, subresource="scale")
            except errors.APIError as exc:
                write_error = exc.message
            plan = self.autoscaler.finish(key, hpa, plan, write_error)
            if write_error is None:
                self.log.info("horizontal-pod-autoscaler hpa=%s rescaled %s -> %s reason=%s", key,
                              plan.current_replicas, plan.desired_replicas, plan.reason)
        for type_, reason, message in plan.events:
            self.event(hpa, type_, reason, message)
        if plan.error:
            self.log.warning("horizontal-pod-autoscaler hpa=%s %s", key, plan.error)
        await self._write_status(hpa, plan.status)

    async def _write_status(self, hpa: Obj, status: Obj) -> None:
        """Merge-patch the status when it changed (keys that went away are set to null)."""
        old = hpa.get("status") or {}
        if status == old:
            return
        patch: Obj = {k: None for k in old if k not in status}
        patch.update(status)
        meta = hpa["metadata"]
        try:
            await self.client.patch(self.hpa_rt, meta["name"], {"status": patch}, meta["namespace"],
                                    subresource="status")
        except errors.NotFound:
            pass
