"""v1 ReplicationController: a ReplicaSet whose selector is a label map (equality-based)."""

from __future__ import annotations

from minik8s.apiserver.strategies.base import Cause, Obj
from minik8s.apiserver.strategies.replicaset import ReplicaSetStrategy, validate_workload_spec


class ReplicationControllerStrategy(ReplicaSetStrategy):
    """Kubernetes' ``SetDefaults_ReplicationController``: an empty ``spec.selector`` and empty
    ``metadata.labels`` become the template's labels; then the ReplicaSet's defaults and checks
    (the label map checked as ``matchLabels``)."""

    def default(self, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels")
        if labels:
            if not spec.get("selector"):
                spec["selector"] = dict(labels)
            meta = obj.setdefault("metadata", {})
            if not meta.get("labels"):
                meta["labels"] = dict(labels)
        super().default(obj)

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        spec = dict(obj.get("spec") or {})
        selector = spec.get("selector")
        spec["selector"] = {"matchLabels": selector} if selector else None
        return self.validate_metadata(obj) + validate_workload_spec(spec, template_required=True)
