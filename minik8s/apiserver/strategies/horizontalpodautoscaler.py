"""autoscaling/v2 HorizontalPodAutoscaler: defaults and validation."""

from __future__ import annotations

from typing import Any

from minik8s.api import autoscaling as a
from minik8s.api.quantity import parse_quantity
from minik8s.apiserver.strategies.base import REQUIRED, Cause, Obj, Strategy, unsupported


def _path_segment_errors(value: str) -> list[str]:
    """Kubernetes' ``IsValidPathSegmentName`` (what a ``scaleTargetRef`` kind or name must be)."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{ch}'" for ch in ("/", "%") if ch in value]


def _scaling_rules_errors(rules: Any, path: str) -> list[Cause]:
    """``HPAScalingRules``: window 0..3600 s, selectPolicy Max/Min/Disabled, at least one policy,
    each policy Pods/Percent with value > 0 and 0 < periodSeconds <= 1800 (``validateScalingRules``)."""
    if not isinstance(rules, dict):
        return []
    causes: list[Cause] = []
    window = rules.get("stabilizationWindowSeconds")
    if isinstance(window, int) and window < 0:
        causes.append((f"{path}.stabilizationWindowSeconds", window, "must be greater than or equal to zero"))
    elif isinstance(window, int) and window > a.MAX_STABILIZATION_WINDOW_SECONDS:
        causes.append((f"{path}.stabilizationWindowSeconds", window,
                       f"must be less than or equal to {a.MAX_STABILIZATION_WINDOW_SECONDS}"))
    select = rules.get("selectPolicy")
    if select is not None and select not in a.SELECT_POLICIES:
        causes.append((f"{path}.selectPolicy", None, unsupported(select, a.SELECT_POLICIES)))
    policies = rules.get("policies") or []
    if not policies:
        causes.append((f"{path}.policies", None, "Required value: must specify at least one Policy"))
    for i, policy in enumerate(policies):
        pp = f"{path}.policies[{i}]"
        if policy.get("type") not in a.SCALING_POLICY_TYPES:
            causes.append((f"{pp}.type", None, unsupported(policy.get("type"), a.SCALING_POLICY_TYPES)))
        if (policy.get("value") or 0) <= 0:
            causes.append((f"{pp}.value", policy.get("value"), "must be greater than zero"))
        period = policy.get("periodSeconds") or 0
        if period <= 0:
            causes.append((f"{pp}.periodSeconds", policy.get("periodSeconds"), "must be greater than zero"))
        elif period > a.MAX_PERIOD_SECONDS:
            causes.append((f"{pp}.periodSeconds", period, f"must be less than or equal to {a.MAX_PERIOD_SECONDS}"))
    return causes


def _metric_errors(metric: Obj, path: str) -> list[Cause]:
    """One ``spec.metrics`` entry: a Resource metric (cpu or memory) with a Utilization
    (``averageUtilization`` > 0) or AverageValue (``averageValue`` > 0) target
    (Kubernetes' ``validateMetricSpec`` / ``validateResourceSource`` / ``validateMetricTarget``)."""
    mtype = metric.get("type")
    if not mtype:
        return [(f"{path}.type", None, "Required value: must specify a metric source type")]
    if mtype not in a.METRIC_SOURCE_TYPES:
        return [(f"{path}.type", None, unsupported(mtype, a.METRIC_SOURCE_TYPES))]
    source = metric.get("resource")
    if not isinstance(source, dict):
        return [(f"{path}.resource", None, "Required value: must populate information for the given metric source")]
    causes: list[Cause] = []
    rp = f"{path}.resource"
    name = source.get("name")
    if not name:
        causes.append((f"{rp}.name", None, "Required value: must specify a resource name"))
    elif name not in a.METRIC_RESOURCES:
        causes.append((f"{rp}.name", None, unsupported(name, a.METRIC_RESOURCES)))
    target = source.get("target") or {}
    tp = f"{rp}.target"
    ttype = target.get("type")
    if not ttype:
        causes.append((f"{tp}.type", None, "Required value: must specify a metric target type"))
    elif ttype not in a.METRIC_TARGET_TYPES:
        causes.append((f"{tp}.type", ttype, "must be either Utilization, Value, or AverageValue"))
    for fld in ("value", "averageValue"):
        if target.get(fld) is None:
            continue
        try:
            positive = parse_quantity(target[fld]) > 0
        except ValueError as exc:
            causes.append((f"{tp}.{fld}", target[fld], str(exc)))
            continue
        if not positive:
            causes.append((f"{tp}.{fld}", target[fld], "must be positive"))
    util = target.get("averageUtilization")
    if util is not None and util < 1:
        causes.append((f"{tp}.averageUtilization", util, "must be greater than 0"))
    if util is None and target.get("averageValue") is None:
        causes.append((f"{tp}.averageUtilization", None,
                       "Required value: must set either a target raw value or a target utilization"))
    if util is not None and target.get("averageValue") is not None:
        causes.append((f"{tp}.averageValue", None,
                       "Forbidden: may not set both a target raw value and a target utilization"))
    return causes


class HorizontalPodAutoscalerStrategy(Strategy):
    """autoscaling/v2 HorizontalPodAutoscaler (Kubernetes' ``SetDefaults_HorizontalPodAutoscaler`` and
    ``ValidateHorizontalPodAutoscaler``).

    Defaults: ``minReplicas`` 1; no ``metrics`` → cpu Utilization 80 %; a ``behavior`` that is
    given gets the missing parts of ``scaleUp`` (window 0, Max of +4 pods / +100 % per 15 s) and
    ``scaleDown`` (Max of −100 % per 15 s; the window stays unset and the controller applies
    its downscale-stabilization flag, 300 s); an absent ``behavior`` stays absent, as in
    Kubernetes (the controller then uses its flag-driven defaults).  Quantities are stored as
    strings.  Validation: ``scaleTargetRef.kind``/``name`` required, ``minReplicas`` >= 1,
    ``maxReplicas`` >= 1 and >= ``minReplicas``, metrics and behavior as in
    :func:`_metric_errors` and :func:`_scaling_rules_errors`.
    """

    has_status = True

    def default(self, obj: Obj) -> None:
        obj.setdefault("status", {})  # Kubernetes sends it from the start (desiredReplicas 0)
        spec = obj.setdefault("spec", {})
        spec.setdefault("minReplicas", 1)
        if not spec.get("metrics"):
            spec["metrics"] = [{"type": "Resource", "resource": {"name": "cpu", "target": {
                "type": "Utilization", "averageUtilization": a.DEFAULT_CPU_UTILIZATION}}}]
        for metric in spec["metrics"]:
            target = (metric.get("resource") or {}).get("target") or {}
            for fld in ("value", "averageValue"):
                if isinstance(target.get(fld), int | float):
                    target[fld] = str(target[fld])
        behavior = spec.get("behavior")
        if isinstance(behavior, dict):
            for key, defaults in (("scaleUp", a.default_scale_up_rules()), ("scaleDown", a.default_scale_down_rules())):
                given = behavior.get(key) or {}
                behavior[key] = {**defaults, **{k: v for k, v in given.items() if v is not None}}

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        spec = obj.get("spec") or {}
        ref = spec.get("scaleTargetRef")
        if not isinstance(ref, dict):
            causes.append(("spec.scaleTargetRef", None, REQUIRED))
        else:
            for fld in ("kind", "name"):
                if not ref.get(fld):
                    causes.append((f"spec.scaleTargetRef.{fld}", None, REQUIRED))
                else:
                    causes += [(f"spec.scaleTargetRef.{fld}", ref[fld], m) for m in _path_segment_errors(ref[fld])]
        low, high = spec.get("minReplicas"), spec.get("maxReplicas")
        if low is not None and low < 1:
            causes.append(("spec.minReplicas", low, "must be greater than or equal to 1"))
        if high is None or high < 1:
            causes.append(("spec.maxReplicas", high, "must be greater than 0"))
        elif low is not None and high < low:
            causes.append(("spec.maxReplicas", high, "must be greater than or equal to `minReplicas`"))
        for i, metric in enumerate(spec.get("metrics") or []):
            causes += _metric_errors(metric, f"spec.metrics[{i}]")
        behavior = spec.get("behavior") or {}
        for key in ("scaleUp", "scaleDown"):
            causes += _scaling_rules_errors(behavior.get(key), f"spec.behavior.{key}")
        return causes
