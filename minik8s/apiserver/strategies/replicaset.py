"""apps/v1 ReplicaSet, and the workload spec checks it shares with Deployment."""

from __future__ import annotations

from minik8s.api import validation as v
from minik8s.api.selectors import LabelSelector
from minik8s.apiserver.strategies.base import Cause, Obj, Strategy, selector_errors
from minik8s.apiserver.strategies.pod import default_pod_spec, validate_pod_spec


class ReplicaSetStrategy(Strategy):
    """apps/v1 ReplicaSet: replicas default 1; the selector must select the template's labels."""

    has_status = True

    def default(self, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        obj.setdefault("status", {})  # Kubernetes sends it from the start (ReplicaSet: replicas 0)
        spec.setdefault("replicas", 1)
        spec.setdefault("minReadySeconds", 0)
        template = spec.get("template")
        if template:
            default_pod_spec(template.setdefault("spec", {}))

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        spec = obj.get("spec") or {}
        causes += validate_workload_spec(spec, template_required=True)
        return causes


def validate_workload_spec(spec: Obj, template_required: bool) -> list[Cause]:
    """replicas >= 0, a non-empty selector that matches ``template.metadata.labels``, a valid pod template."""
    causes: list[Cause] = []
    replicas = spec.get("replicas")
    if replicas is not None and replicas < 0:
        causes.append(("spec.replicas", replicas, "must be greater than or equal to 0"))
    selector = spec.get("selector")
    if not selector or not (selector.get("matchLabels") or selector.get("matchExpressions")):
        causes.append(("spec.selector", None, "Required value"))
    else:
        causes += selector_errors(selector, "spec.selector")
    template = spec.get("template")
    if template is None:
        if template_required:
            causes.append(("spec.template", None, "Required value"))
        return causes
    labels = (template.get("metadata") or {}).get("labels") or {}
    causes += v.validate_labels(labels, "spec.template.metadata.labels")
    if selector and not causes:
        if not LabelSelector.from_dict(selector).matches(labels):
            causes.append(("spec.template.metadata.labels", labels,
                           "`selector` does not match template `labels`"))
    causes += validate_pod_spec(template.get("spec") or {}, "spec.template.spec")
    return causes
