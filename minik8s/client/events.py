"""Event recording (``corev1.Event``), so ``kubectl describe`` tells an object's story.

Like client-go's recorder, repeats of the same (object, type, reason, message)
are aggregated into one Event whose ``count`` and ``lastTimestamp`` grow.
Recording never raises: a lost event must not break a controller.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from minik8s.api import errors
from minik8s.api.base import now_rfc3339
from minik8s.client.rest import Client

log = logging.getLogger("events")


class EventRecorder:
    """Records Events as ``component`` (e.g. ``kubelet``, ``default-scheduler``) on ``host``."""

    def __init__(self, client: Client, component: str, host: str | None = None) -> None:
        self.client = client
        self.component = component
        self.host = host
        self.rt = client.kind("v1", "Event")
        self._seen: dict[tuple[str, str, str, str, str], tuple[str, int, float]] = {}

    async def record(self, obj: dict[str, Any], type_: str, reason: str, message: str,
                     field_path: str | None = None) -> None:
        """Record a Normal or Warning event about ``obj`` (a wire-form object dict)."""
        meta = obj.get("metadata") or {}
        namespace = meta.get("namespace") or "default"
        ref: dict[str, Any] = {"kind": obj.get("kind"), "namespace": meta.get("namespace"),
                               "name": meta.get("name"), "uid": meta.get("uid"),
                               "apiVersion": obj.get("apiVersion"), "resourceVersion": meta.get("resourceVersion")}
        if field_path:
            ref["fieldPath"] = field_path
        ref = {k: v for k, v in ref.items() if v}
        key = (meta.get("uid") or meta.get("name") or "", field_path or "", type_, reason, message)
        now = now_rfc3339()
        try:
            seen = self._seen.get(key)
            if seen is not None:
                name, count, _ = seen
                try:
                    patched = {"count": count + 1, "lastTimestamp": now}
                    await self.client.patch(self.rt, name, patched, namespace)
                    self._seen[key] = (name, count + 1, time.monotonic())
                    return
                except errors.NotFound:
                    pass
            name = f"{meta.get('name')}.{time.time_ns():x}"
            body = {
                "apiVersion": "v1", "kind": "Event",
                "metadata": {"name": name, "namespace": namespace},
                "involvedObject": ref, "reason": reason, "message": message, "type": type_,
                "source": {"component": self.component, **({"host": self.host} if self.host else {})},
                "firstTimestamp": now, "lastTimestamp": now, "count": 1,
                "reportingComponent": self.component, "reportingInstance": self.host or "",
            }
            await self.client.create(self.rt, body, namespace)
            self._seen[key] = (name, 1, time.monotonic())
            if len(self._seen) > 4096:
                oldest = sorted(self._seen.items(), key=lambda kv: kv[1][2])[:1024]
                for k, _ in oldest:
                    self._seen.pop(k, None)
        except Exception as exc:  # noqa: BLE001
            log.warning("%s could not record event %s on %s: %s", self.component, reason, meta.get("name"), exc)
