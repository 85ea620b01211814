"""v1 Event: ``involvedObject`` required; as field selectors (Kubernetes' set): its ``kind``, ``name``,
``namespace``, ``uid``, ``apiVersion``, ``resourceVersion`` and ``fieldPath``, ``reason``, ``type``,
``source`` (the component) and ``reportingComponent``."""

from __future__ import annotations

from minik8s.apiserver.strategies.base import REQUIRED, Cause, Obj, Strategy


class EventStrategy(Strategy):
    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        if not obj.get("involvedObject"):
            causes.append(("involvedObject", None, REQUIRED))
        return causes

    def fields(self, obj: Obj) -> dict[str, str]:
        f = super().fields(obj)
        inv = obj.get("involvedObject") or {}
        for k in ("kind", "name", "namespace", "uid", "apiVersion", "resourceVersion", "fieldPath"):
            f[f"involvedObject.{k}"] = inv.get(k) or ""
        f["reason"] = obj.get("reason") or ""
        f["type"] = obj.get("type") or ""
        f["source"] = (obj.get("source") or {}).get("component") or ""
        f["reportingComponent"] = obj.get("reportingComponent") or ""
        return f
