"""v1 Node: cluster-scoped; taints validated; ``spec.unschedulable`` as a field selector."""

from __future__ import annotations

from minik8s.api import validation as v
from minik8s.api.taints import TAINT_EFFECTS
from minik8s.apiserver.strategies.base import REQUIRED, Cause, Obj, Strategy, unsupported


class NodeStrategy(Strategy):
    has_status = True
    namespace_scoped = False

    def default(self, obj: Obj) -> None:
        """Kubernetes always sends ``status.nodeInfo`` and ``status.daemonEndpoints`` (its fields are
        filled with empty values until the kubelet reports them)."""
        status = obj.setdefault("status", {})
        status.setdefault("nodeInfo", {})
        status.setdefault("daemonEndpoints", {}).setdefault("kubeletEndpoint", {}).setdefault("Port", 0)

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        for i, t in enumerate((obj.get("spec") or {}).get("taints") or []):
            if not t.get("key"):
                causes.append((f"spec.taints[{i}].key", None, REQUIRED))
            else:
                causes += [(f"spec.taints[{i}].key", t["key"], m) for m in v.qualified_name_errors(t["key"])]
            if t.get("effect") not in TAINT_EFFECTS:
                causes.append((f"spec.taints[{i}].effect", None, unsupported(t.get("effect"), TAINT_EFFECTS)))
        return causes

    def fields(self, obj: Obj) -> dict[str, str]:
        f = super().fields(obj)
        f["spec.unschedulable"] = str(bool((obj.get("spec") or {}).get("unschedulable"))).lower()
        return f
