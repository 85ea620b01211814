"""autoscaling/v2 HorizontalPodAutoscaler: defaults and validation."""

from __future__ import annotations

from typing import Any

from minik8s.api import autoscaling as a
from minik8s.api.quantity import parse_quantity
from minik8s.api.validation import dns1123_label_errors
from minik8s.apiserver.strategies.base import REQUIRED, Cause, Obj, Strategy, selector_errors, unsupported


def _path_segment_errors(value: str) -> list[str]:
    """Kubernetes' ``IsValidPathSegmentName`` (what a ``scaleTargetRef`` kind or name must be)."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{ch}'" for ch in ("/", "%") if ch in value]


def _reference_errors(ref: Obj, path: str) -> list[Cause]:
    """``ValidateCrossVersionObjectReference``: ``kind`` and ``name`` set, each a valid path segment."""
    causes: list[Cause] = []
    for fld in ("kind", "name"):
        if not ref.get(fld):
            causes.append((f"{path}.{fld}", None, REQUIRED))
        else:
            causes += [(f"{path}.{fld}", ref[fld], msg) for msg in _path_segment_errors(str(ref[fld]))]
    return causes


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


def _target_errors(target: Obj, tp: str) -> list[Cause]:
    """``validateMetricTarget``: a known type, positive quantities, averageUtilization >= 1."""
    causes: list[Cause] = []
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
    return causes


def _identifier_errors(metric: Any, path: str) -> list[Cause]:
    """``validateMetricIdentifier``: a name that is a valid path segment, a valid selector."""
    metric = metric if isinstance(metric, dict) else {}
    name = metric.get("name")
    if not name:
        return [(f"{path}.name", None, "Required value: must specify a metric name")]
    causes: list[Cause] = [(f"{path}.name", name, msg) for msg in _path_segment_errors(str(name))]
    return causes + selector_errors(metric.get("selector"), f"{path}.selector")


def _resource_source_errors(source: Obj, path: str, container: bool) -> list[Cause]:
    """``validateResourceSource`` / ``validateContainerResourceSource``: cpu or memory, a
    container name (a DNS label) for ContainerResource, exactly one of averageUtilization
    and averageValue."""
    causes: list[Cause] = []
    name = source.get("name")
    if not name:
        causes.append((f"{path}.name", None, "Required value: must specify a resource name"))
    elif name not in a.METRIC_RESOURCES:
        causes.append((f"{path}.name", None, unsupported(name, a.METRIC_RESOURCES)))
    if container:
        cname = source.get("container")
        if not cname:
            causes.append((f"{path}.container", None, "Required value: must specify a container"))
        else:
            causes += [(f"{path}.container", cname, msg) for msg in dns1123_label_errors(str(cname))]
    target = source.get("target") or {}
    tp = f"{path}.target"
    causes += _target_errors(target, tp)
    util = target.get("averageUtilization")
    if util is None and target.get("averageValue") is None:
        causes.append((f"{tp}.averageUtilization", None,
                       "Required value: must set either a target raw value or a target utilization"))
    if util is not None and target.get("averageValue") is not None:
        causes.append((f"{tp}.averageValue", None,
                       "Forbidden: may not set both a target raw value and a target utilization"))
    return causes


def _custom_source_errors(mtype: str, source: Obj, path: str) -> list[Cause]:
    """``validatePodsSource`` / ``validateObjectSource`` / ``validateExternalSource``."""
    causes: list[Cause] = []
    if mtype == "Object":
        causes += _reference_errors(source.get("describedObject") or {}, f"{path}.describedObject")
    causes += _identifier_errors(source.get("metric"), f"{path}.metric")
    target = source.get("target") or {}
    tp = f"{path}.target"
    causes += _target_errors(target, tp)
    value, average = target.get("value"), target.get("averageValue")
    if mtype == "Pods" and average is None:
        causes.append((f"{tp}.averageValue", None, "Required value: must specify a positive target averageValue"))
    elif mtype == "Object" and value is None and average is None:
        causes.append((f"{tp}.averageValue", None, "Required value: must set either a target value or averageValue"))
    elif mtype == "External" and value is None and average is None:
        causes.append((f"{tp}.averageValue", None,
                       "Required value: must set either a target value for metric or a per-pod target"))
    elif mtype == "External" and value is not None and average is not None:
        causes.append((f"{tp}.value", None,
                       "Forbidden: may not set both a target value for metric and a per-pod target"))
    return causes


def _metric_errors(metric: Obj, path: str) -> list[Cause]:
    """One ``spec.metrics`` entry (Kubernetes' ``validateMetricSpec``): a known ``type`` whose
    source field (``resource``, ``containerResource``, ``pods``, ``object``, ``external``) is
    set, and no other source field; each source as its ``validate*Source``."""
    mtype = metric.get("type")
    causes: list[Cause] = []
    if not mtype:
        causes.append((f"{path}.type", None, "Required value: must specify a metric source type"))
    if mtype not in a.METRIC_SOURCE_TYPES:
        causes.append((f"{path}.type", None, unsupported(mtype, a.METRIC_SOURCE_TYPES)))
    present = [f for f in a.METRIC_SOURCE_FIELDS.values() if isinstance(metric.get(f), dict)]
    if present:  # only the first source present is validated, as in Kubernetes
        field = present[0]
        kind = next(k for k, f in a.METRIC_SOURCE_FIELDS.items() if f == field)
        if kind in ("Resource", "ContainerResource"):
            causes += _resource_source_errors(metric[field], f"{path}.{field}", kind == "ContainerResource")
        else:
            causes += _custom_source_errors(kind, metric[field], f"{path}.{field}")
    expected = a.METRIC_SOURCE_FIELDS.get(str(mtype))
    if expected is not None and expected not in present:
        causes.append((f"{path}.{expected}", None,
                       "Required value: must populate information for the given metric source"))
    if len(present) != 1:
        causes += [(f"{path}.{f}", None, "Forbidden: must populate the given metric source only")
                   for f in present if f != expected]
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
            sources = [metric[f] for f in a.METRIC_SOURCE_FIELDS.values() if isinstance(metric.get(f), dict)]
            source: Obj = sources[0] if sources else {}
            target = source.get("target") or {}
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
            causes += _reference_errors(ref, "spec.scaleTargetRef")
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
