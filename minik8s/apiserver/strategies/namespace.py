"""v1 Namespace: phase Active and the ``kubernetes`` finalizer by default; DNS-1123 label names;
the ``kubernetes.io/metadata.name`` label, always the namespace's name; ``pod-security.kubernetes.io``
labels must name a level (and a version) Pod Security Admission knows."""

from __future__ import annotations

from minik8s.api import validation as v
from minik8s.apiserver import podsecurity
from minik8s.apiserver.strategies.base import Cause, Obj, Strategy

#: The label every namespace carries, set to its name by the apiserver (immutable: a write that
#: changes or drops it gets it back, as kube-apiserver's namespace strategy does).
NAME_LABEL = "kubernetes.io/metadata.name"


class NamespaceStrategy(Strategy):
    has_status = True
    name_check = staticmethod(v.dns1123_label_errors)

    def default(self, obj: Obj) -> None:
        meta = obj.setdefault("metadata", {})
        if meta.get("name"):
            meta["labels"] = {**(meta.get("labels") or {}), NAME_LABEL: meta["name"]}
        obj.setdefault("status", {}).setdefault("phase", "Active")
        obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        """Metadata, and Pod Security Admission's labels (a known level; ``latest`` or ``v1.N``)."""
        return super().validate(obj, old) + podsecurity.label_errors((obj.get("metadata") or {}).get("labels"))

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        super().prepare_for_update(new, old)

    def fields(self, obj: Obj) -> dict[str, str]:
        f = super().fields(obj)
        f["status.phase"] = (obj.get("status") or {}).get("phase") or ""
        return f
