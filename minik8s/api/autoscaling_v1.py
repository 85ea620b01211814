"""``autoscaling/v1`` HorizontalPodAutoscaler: the older version of the kind, served by converting
to and from the stored ``autoscaling/v2`` objects (what kubectl 1.32's ``kubectl autoscale`` creates).

v1 knows one target, CPU utilization::

    spec: {scaleTargetRef: {...}, minReplicas: 1, maxReplicas: 5, targetCPUUtilizationPercentage: 50}
    status: {currentReplicas, desiredReplicas, currentCPUUtilizationPercentage, lastScaleTime, observedGeneration}

Conversion follows Kubernetes' (``pkg/apis/autoscaling/v1/conversion.go``): the target is the v2
``Resource`` metric ``cpu`` with a ``Utilization`` target; what v1 cannot express (other metrics,
``behavior``, conditions) is not shown in v1 and is kept from the stored object when a v1 client
writes (Kubernetes keeps it in annotations instead).
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import Field

from minik8s.api.autoscaling import CrossVersionObjectReference
from minik8s.api.base import Obj
from minik8s.api.meta import TypedObject
from minik8s.api.model import Model

API_VERSION = "autoscaling/v1"
V2_API_VERSION = "autoscaling/v2"


class HorizontalPodAutoscalerSpec(Model):
    scale_target_ref: CrossVersionObjectReference
    min_replicas: int | None = None
    max_replicas: int
    target_cpu_utilization_percentage: int | None = Field(default=None, alias="targetCPUUtilizationPercentage")


class HorizontalPodAutoscalerStatus(Model):
    observed_generation: int | None = None
    last_scale_time: str | None = None
    current_replicas: int | None = None
    desired_replicas: int | None = None
    current_cpu_utilization_percentage: int | None = Field(default=None, alias="currentCPUUtilizationPercentage")


class HorizontalPodAutoscaler(TypedObject):
    """autoscaling/v1 HorizontalPodAutoscaler: scale a workload on its pods' CPU utilization."""

    spec: HorizontalPodAutoscalerSpec | None = None
    status: HorizontalPodAutoscalerStatus | None = None


def _is_cpu_utilization(metric: Obj) -> bool:
    resource = metric.get("resource") or {}
    return metric.get("type") == "Resource" and resource.get("name") == "cpu" and \
        (resource.get("target") or {}).get("type") == "Utilization"


def to_v1(obj: Obj) -> Obj:
    """The v1 form of a stored v2 HorizontalPodAutoscaler."""
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    v1_spec = {k: spec[k] for k in ("scaleTargetRef", "minReplicas", "maxReplicas") if k in spec}
    cpu = next((m for m in spec.get("metrics") or [] if _is_cpu_utilization(m)), None)
    if cpu is not None:
        v1_spec["targetCPUUtilizationPercentage"] = cpu["resource"]["target"].get("averageUtilization")
    out: Obj = {"apiVersion": API_VERSION, "kind": "HorizontalPodAutoscaler",
                "metadata": copy.deepcopy(obj.get("metadata") or {}), "spec": copy.deepcopy(v1_spec)}
    if "status" in obj:
        v1_status = {k: status[k] for k in ("observedGeneration", "lastScaleTime", "currentReplicas",
                                            "desiredReplicas") if k in status}
        for required in ("currentReplicas", "desiredReplicas"):  # v1 always sends them (no omitempty)
            v1_status.setdefault(required, 0)
        for current in status.get("currentMetrics") or []:
            resource = current.get("resource") or {}
            if resource.get("name") == "cpu" and (resource.get("current") or {}).get("averageUtilization") is not None:
                v1_status["currentCPUUtilizationPercentage"] = resource["current"]["averageUtilization"]
        out["status"] = v1_status
    return out


def from_v1(obj: Any, stored: Obj | None = None) -> Any:
    """The v2 form of a v1 HorizontalPodAutoscaler (anything but an object is returned as is, for
    the apiserver to reject).  ``stored``: the current v2 object on an update, whose other metrics
    and ``behavior`` (which v1 cannot carry) are kept."""
    if not isinstance(obj, dict):
        return obj
    out = {k: copy.deepcopy(v) for k, v in obj.items() if k not in ("spec", "status")}
    out["apiVersion"] = V2_API_VERSION
    spec = obj.get("spec")
    if isinstance(spec, dict):
        v2_spec = {k: copy.deepcopy(spec[k]) for k in ("scaleTargetRef", "minReplicas", "maxReplicas") if k in spec}
        old_spec = (stored or {}).get("spec") or {}
        others = [m for m in old_spec.get("metrics") or [] if not _is_cpu_utilization(m)]
        target = spec.get("targetCPUUtilizationPercentage")
        cpu = [{"type": "Resource", "resource": {"name": "cpu", "target": {
            "type": "Utilization", "averageUtilization": target}}}] if target is not None else []
        if cpu or others:
            v2_spec["metrics"] = cpu + others
        if old_spec.get("behavior") is not None:
            v2_spec["behavior"] = copy.deepcopy(old_spec["behavior"])
        out["spec"] = v2_spec
    elif spec is not None:
        out["spec"] = spec
    if stored is not None and (isinstance(obj.get("status"), dict) or "status" in stored):
        status = copy.deepcopy(stored.get("status") or {})
        for key in ("observedGeneration", "lastScaleTime", "currentReplicas", "desiredReplicas"):
            if key in (obj.get("status") or {}):
                status[key] = obj["status"][key]
        out["status"] = status
    return out
