"""policy/v1 PodDisruptionBudget: status reset on create, validation (``pkg/registry/policy/poddisruptionbudget``
and ``pkg/apis/policy/validation``)."""

from __future__ import annotations

from typing import Any

from minik8s.api import policy as p
from minik8s.apiserver.strategies.base import Cause, Obj, Strategy, int_or_percent_errors, selector_errors, unsupported


def _go_pointer(value: Any, go_type: str) -> str:
    """How Go's ``%#v`` shows a pointer field of a struct (nil, or an address)."""
    return f"({go_type})(nil)" if value is None else f"({go_type})(0xc000000000)"


def _spec_value(spec: Obj) -> str:
    """The spec as kube-apiserver's ``field.Invalid(spec, spec, ...)`` prints it (Go's ``%#v``)."""
    return ("policy.PodDisruptionBudgetSpec{"
            f"MinAvailable:{_go_pointer(spec.get('minAvailable'), '*intstr.IntOrString')}, "
            f"Selector:{_go_pointer(spec.get('selector'), '*v1.LabelSelector')}, "
            f"MaxUnavailable:{_go_pointer(spec.get('maxUnavailable'), '*intstr.IntOrString')}, "
            "UnhealthyPodEvictionPolicy:"
            f"{_go_pointer(spec.get('unhealthyPodEvictionPolicy'), '*policy.UnhealthyPodEvictionPolicyType')}}}")


def _nonnegative(status: Obj, fld: str) -> list[Cause]:
    value = status.get(fld)
    if isinstance(value, int) and value < 0:
        return [(f"status.{fld}", value, "must be greater than or equal to 0")]
    return []


class PodDisruptionBudgetStrategy(Strategy):
    """PodDisruptionBudget: a create starts with an empty status (the disruption controller fills it);
    ``minAvailable`` and ``maxUnavailable`` are exclusive, each a non-negative int or a percentage up
    to 100 %; ``unhealthyPodEvictionPolicy`` IfHealthyBudget or AlwaysAllow; a status update keeps
    its counts non-negative (``ValidatePodDisruptionBudgetStatusUpdate``)."""

    has_status = True

    def prepare_for_create(self, obj: Obj) -> None:
        obj["status"] = {}

    def default(self, obj: Obj) -> None:
        status = obj.setdefault("status", {})
        for fld in ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"):
            status.setdefault(fld, 0)

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        spec = obj.get("spec") or {}
        if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
            causes.append(("spec", None, f"Invalid value: {_spec_value(spec)}: "
                                         "minAvailable and maxUnavailable cannot be both set"))
        for fld in ("minAvailable", "maxUnavailable"):
            causes += int_or_percent_errors(spec.get(fld), f"spec.{fld}")
        causes += selector_errors(spec.get("selector"), "spec.selector")
        policy = spec.get("unhealthyPodEvictionPolicy")
        if policy is not None and policy not in p.UNHEALTHY_POD_EVICTION_POLICIES:
            causes.append(("spec.unhealthyPodEvictionPolicy", None,
                           unsupported(policy, p.UNHEALTHY_POD_EVICTION_POLICIES)))
        if old is not None:
            status = obj.get("status") or {}
            for fld in ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"):
                causes += _nonnegative(status, fld)
        return causes
