"""``autoscaling/v2`` HorizontalPodAutoscaler: scale a Deployment or ReplicaSet on CPU and memory use.

Kubernetes' field names and meanings (``k8s.io/api/autoscaling/v2``)::

    apiVersion: autoscaling/v2
    kind: HorizontalPodAutoscaler
    metadata: {name: web}
    spec:
      scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
      minReplicas: 1            # default 1
      maxReplicas: 10           # required, >= minReplicas
      metrics:                  # default: cpu at 80 % of the pods' requests
      - type: Resource
        resource:
          name: cpu             # cpu | memory
          target: {type: Utilization, averageUtilization: 50}   # % of the containers' requests
      - type: Resource
        resource:
          name: memory
          target: {type: AverageValue, averageValue: 100Mi}     # a quantity per pod
      - type: ContainerResource  # one container's use against its own request
        containerResource: {name: cpu, container: app, target: {type: Utilization, averageUtilization: 60}}
      - type: Pods              # also Object, External: stored; they need custom.metrics.k8s.io /
        pods:                   # external.metrics.k8s.io, which minik8s does not serve, so the
          metric: {name: rps}   # controller reports them failed (ScalingActive False FailedGetPodsMetric)
          target: {type: AverageValue, averageValue: "10"}
      behavior:                 # optional; missing parts get Kubernetes' defaults
        scaleUp:   {stabilizationWindowSeconds: 0, selectPolicy: Max,
                    policies: [{type: Pods, value: 4, periodSeconds: 15},
                               {type: Percent, value: 100, periodSeconds: 15}]}
        scaleDown: {selectPolicy: Max, policies: [{type: Percent, value: 100, periodSeconds: 15}]}
                   # stabilizationWindowSeconds unset: the controller's
                   # --horizontal-pod-autoscaler-downscale-stabilization (300 s)

The controller (:mod:`minik8s.controllers.podautoscaler`) writes ``status``:
``currentReplicas``, ``desiredReplicas``, ``currentMetrics`` (one entry per ``spec.metrics``
entry, same order), ``lastScaleTime`` and the conditions ``AbleToScale``,
``ScalingActive`` and ``ScalingLimited``.
"""

from __future__ import annotations

from minik8s.api.meta import TypedObject
from minik8s.api.model import Model

API_VERSION = "autoscaling/v2"
#: A quantity as written (``"100Mi"``, ``"250m"``, ``2``); the apiserver stores it as a string.
Quantity = str | int | float
#: ``spec.metrics`` when none are given (Kubernetes' ``DefaultCPUUtilization``).
DEFAULT_CPU_UTILIZATION = 80
#: Metric source types → the MetricSpec field holding each source.  The controller computes
#: Resource and ContainerResource from metrics.k8s.io; Pods, Object and External need
#: custom.metrics.k8s.io / external.metrics.k8s.io, which minik8s does not serve, so they are
#: stored and fail in the controller as in a Kubernetes cluster without those APIs.
METRIC_SOURCE_FIELDS = {"ContainerResource": "containerResource", "External": "external", "Object": "object",
                        "Pods": "pods", "Resource": "resource"}
METRIC_SOURCE_TYPES = tuple(METRIC_SOURCE_FIELDS)
#: Resources a Resource metric may name.
METRIC_RESOURCES = ("cpu", "memory")
METRIC_TARGET_TYPES = ("Utilization", "Value", "AverageValue")
SCALING_POLICY_TYPES = ("Pods", "Percent")
SELECT_POLICIES = ("Max", "Min", "Disabled")
#: Upper bounds Kubernetes validates (``MaxStabilizationWindowSeconds``, ``MaxPeriodSeconds``).
MAX_STABILIZATION_WINDOW_SECONDS = 3600
MAX_PERIOD_SECONDS = 1800


class CrossVersionObjectReference(Model):
    """What to scale: ``kind`` and ``name`` in the HPA's namespace (``apiVersion`` e.g. ``apps/v1``)."""

    kind: str | None = None
    name: str | None = None
    api_version: str | None = None


class MetricTarget(Model):
    """``type`` Utilization (``averageUtilization``, percent of requests), AverageValue
    (``averageValue``, a quantity per pod) or Value (``value``)."""

    type: str | None = None
    value: Quantity | None = None
    average_value: Quantity | None = None
    average_utilization: int | None = None


class ResourceMetricSource(Model):
    name: str | None = None
    target: MetricTarget | None = None


class ContainerResourceMetricSource(Model):
    """A resource of one named ``container`` of each pod (not the pod's sum)."""

    name: str | None = None
    container: str | None = None
    target: MetricTarget | None = None


class MetricIdentifier(Model):
    """A custom or external metric: ``name`` and an optional label ``selector``."""

    name: str | None = None
    selector: dict[str, object] | None = None


class PodsMetricSource(Model):
    metric: MetricIdentifier | None = None
    target: MetricTarget | None = None


class ObjectMetricSource(Model):
    described_object: CrossVersionObjectReference | None = None
    metric: MetricIdentifier | None = None
    target: MetricTarget | None = None


class ExternalMetricSource(Model):
    metric: MetricIdentifier | None = None
    target: MetricTarget | None = None


class MetricSpec(Model):
    """``type`` names the one source field that is set (:data:`METRIC_SOURCE_FIELDS`)."""

    type: str | None = None
    resource: ResourceMetricSource | None = None
    container_resource: ContainerResourceMetricSource | None = None
    pods: PodsMetricSource | None = None
    object: ObjectMetricSource | None = None
    external: ExternalMetricSource | None = None


class MetricValueStatus(Model):
    """The current value: ``averageUtilization`` (percent) and/or ``averageValue`` (quantity)."""

    value: str | None = None
    average_value: str | None = None
    average_utilization: int | None = None


class ResourceMetricStatus(Model):
    name: str | None = None
    current: MetricValueStatus | None = None


class ContainerResourceMetricStatus(Model):
    name: str | None = None
    container: str | None = None
    current: MetricValueStatus | None = None


class MetricStatus(Model):
    """One ``currentMetrics`` entry; ``{"type": ""}`` for a metric that could not be computed."""

    type: str | None = None
    resource: ResourceMetricStatus | None = None
    container_resource: ContainerResourceMetricStatus | None = None


class HPAScalingPolicy(Model):
    """At most ``value`` pods (type Pods) or ``value`` percent (type Percent) per ``periodSeconds``."""

    type: str | None = None
    value: int | None = None
    period_seconds: int | None = None


class HPAScalingRules(Model):
    stabilization_window_seconds: int | None = None
    select_policy: str | None = None
    policies: list[HPAScalingPolicy] | None = None


class HorizontalPodAutoscalerBehavior(Model):
    scale_up: HPAScalingRules | None = None
    scale_down: HPAScalingRules | None = None


class HorizontalPodAutoscalerSpec(Model):
    scale_target_ref: CrossVersionObjectReference | None = None
    min_replicas: int | None = None
    max_replicas: int | None = None
    metrics: list[MetricSpec] | None = None
    behavior: HorizontalPodAutoscalerBehavior | None = None


class HorizontalPodAutoscalerCondition(Model):
    """``AbleToScale``, ``ScalingActive`` or ``ScalingLimited`` with status True/False/Unknown."""

    type: str
    status: str
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None


class HorizontalPodAutoscalerStatus(Model):
    observed_generation: int | None = None
    last_scale_time: str | None = None
    current_replicas: int | None = None
    desired_replicas: int | None = None
    current_metrics: list[MetricStatus] | None = None
    conditions: list[HorizontalPodAutoscalerCondition] | None = None


class HorizontalPodAutoscaler(TypedObject):
    spec: HorizontalPodAutoscalerSpec | None = None
    status: HorizontalPodAutoscalerStatus | None = None


def default_scale_up_rules() -> dict[str, object]:
    """Kubernetes' ``GenerateHPAScaleUpRules`` defaults: no stabilization, the larger of
    +4 pods and +100 % every 15 s."""
    return {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
            "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                         {"type": "Percent", "value": 100, "periodSeconds": 15}]}


def default_scale_down_rules() -> dict[str, object]:
    """Kubernetes' ``GenerateHPAScaleDownRules`` defaults: −100 % every 15 s; the stabilization
    window stays unset (the controller applies its ``--horizontal-pod-autoscaler-downscale-stabilization``)."""
    return {"selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}
