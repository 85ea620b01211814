"""v1 PodTemplate: a stored pod template (Kubernetes' ``pkg/registry/core/podtemplate``): its pod
spec defaulted and validated as every workload's template is, its labels checked."""

from __future__ import annotations

from minik8s.api import validation as v
from minik8s.apiserver.strategies.base import Cause, Obj, Strategy
from minik8s.apiserver.strategies.pod import default_pod_spec, validate_pod_spec


class PodTemplateStrategy(Strategy):
    """``SetDefaults_PodSpec`` on ``template.spec``; ``ValidatePodTemplate``: the template's labels
    and pod spec (``template`` is required)."""

    def default(self, obj: Obj) -> None:
        template = obj.get("template")
        if isinstance(template, dict):
            default_pod_spec(template.setdefault("spec", {}))

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        template = obj.get("template")
        if not isinstance(template, dict):
            return [*causes, ("template", None, "Required value")]
        causes += v.validate_labels((template.get("metadata") or {}).get("labels") or {}, "template.metadata.labels")
        return causes + validate_pod_spec(template.get("spec") or {}, "template.spec")
