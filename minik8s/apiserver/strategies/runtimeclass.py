"""node.k8s.io/v1 RuntimeClass (``pkg/registry/node/runtimeclass``, ``ValidateRuntimeClass``).

- ``handler`` is a DNS-1123 label and never changes;
- ``overhead.podFixed`` holds non-negative quantities (``ValidateResourceRequirements`` of limits);
- ``scheduling.nodeSelector`` is a label map, ``scheduling.tolerations`` valid tolerations.

What a RuntimeClass does to the pods naming it is the RuntimeClass admission plugin's
(:mod:`minik8s.apiserver.runtimeclass`).
"""

from __future__ import annotations

from minik8s.api import validation as v
from minik8s.api.taints import TAINT_EFFECTS
from minik8s.apiserver.strategies.base import Cause, Obj, Strategy, non_negative_quantity_errors, unsupported

TOLERATION_OPERATORS = ("Exists", "Equal")


def toleration_errors(tolerations: list[Obj], path: str) -> list[Cause]:
    """``ValidateTolerations`` (operator, value, key and effect rules)."""
    causes: list[Cause] = []
    for i, t in enumerate(tolerations):
        tp = f"{path}[{i}]"
        if t.get("key"):
            causes += [(f"{tp}.key", t["key"], m) for m in v.qualified_name_errors(t["key"])]
        op = t.get("operator") or "Equal"
        if op not in TOLERATION_OPERATORS:
            causes.append((f"{tp}.operator", None, unsupported(op, TOLERATION_OPERATORS)))
        if op == "Exists" and t.get("value"):
            causes.append((f"{tp}.operator", t["value"], "value must be empty when `operator` is 'Exists'"))
        if not t.get("key") and op != "Exists":
            causes.append((f"{tp}.operator", op, "operator must be Exists when `key` is empty, "
                                                 "which means \"match all values and all keys\""))
        if t.get("effect") and t["effect"] not in TAINT_EFFECTS:
            causes.append((f"{tp}.effect", None, unsupported(t["effect"], TAINT_EFFECTS)))
    return causes


class RuntimeClassStrategy(Strategy):
    """RuntimeClass: as in the module docstring."""

    namespace_scoped = False

    def generation_changed(self, new: Obj, old: Obj) -> bool:
        return False  # no spec: the generation stays 1 (Kubernetes' strategy never bumps it)

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        handler = obj.get("handler")
        causes += [("handler", handler, m) for m in v.dns1123_label_errors(str(handler or ""))]
        for rname, qty in ((obj.get("overhead") or {}).get("podFixed") or {}).items():
            causes += non_negative_quantity_errors(qty, f"overhead.podFixed[{rname}]")
        scheduling = obj.get("scheduling") or {}
        causes += v.validate_labels(scheduling.get("nodeSelector"), "scheduling.nodeSelector")
        causes += toleration_errors(scheduling.get("tolerations") or [], "scheduling.tolerations")
        if old is not None and handler != old.get("handler"):
            causes.append(("handler", handler, "field is immutable"))
        return causes
