"""v1 ResourceQuota and LimitRange: status reset on create, quantities in canonical form, LimitRange
defaults, and validation (``pkg/registry/core/resourcequota``, ``pkg/registry/core/limitrange``,
``pkg/apis/core/validation``: ``ValidateResourceQuota``, ``ValidateLimitRange``)."""

from __future__ import annotations

from typing import Any

from minik8s.api import quota as q
from minik8s.api import validation as v
from minik8s.apiserver.strategies.base import REQUIRED, Cause, Obj, Strategy

NEGATIVE = "must be greater than or equal to 0"
IMMUTABLE = "field is immutable"


def _go_list(values: list[Any] | None, go_type: str) -> str:
    """A string slice as Go's ``%#v`` prints it in a field error's value."""
    if values is None:
        return f"{go_type}(nil)"
    return go_type + "{" + ", ".join(f'"{x}"' for x in values) + "}"


def _resource_name_errors(name: str, path: str) -> list[Cause]:
    """``validateResourceName``: a qualified name (``cpu``, ``example.com/dongle``)."""
    return [(path, name, msg) for msg in v.qualified_name_errors(name)]


def _quantity_errors(name: str, text: Any, path: str, integer: bool) -> list[Cause]:
    try:
        amount = q.Amount.of(text)
    except ValueError as exc:
        return [(path, text, str(exc))]
    causes: list[Cause] = []
    if amount.value < 0:
        causes.append((path, str(amount), NEGATIVE))
    if integer and amount.milli() % 1000:
        causes.append((path, str(amount), "must be an integer"))
    return causes


def _quota_list_errors(items: dict[str, Any] | None, path: str) -> list[Cause]:
    """``ValidateResourceQuotaResourceName`` and ``ValidateResourceQuantityValue`` of each entry."""
    causes: list[Cause] = []
    for name, text in (items or {}).items():
        key = f"{path}[{name}]"
        causes += _resource_name_errors(name, key)
        if "/" not in name and not q.is_standard_quota_resource(name):
            causes.append((key, name, "must be a standard resource for quota"))
        causes += _quantity_errors(name, text, key, q.is_integer_resource(name))
    return causes


class ResourceQuotaStrategy(Strategy):
    """ResourceQuota: a create starts with an empty status (the quota controller fills it); hard
    limits are standard quota resources (or qualified names) with non-negative quantities, whole for
    object counts; scopes are known, not conflicting, valid for every limited resource, and immutable."""

    has_status = True

    def prepare_for_create(self, obj: Obj) -> None:
        obj["status"] = {}

    def default(self, obj: Obj) -> None:
        spec = obj.get("spec")
        if isinstance(spec, dict) and spec.get("hard") is not None:
            spec["hard"] = q.canonical_list(spec["hard"])
        status = obj.get("status")
        if isinstance(status, dict):
            for fld in ("hard", "used"):
                if status.get(fld) is not None:
                    status[fld] = q.canonical_list(status[fld])

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        spec = obj.get("spec") or {}
        hard = spec.get("hard") or {}
        causes += _quota_list_errors(hard, "spec.hard")
        causes += self._scope_errors(spec, sorted(hard))
        causes += self._selector_errors(spec, sorted(hard))
        status = obj.get("status") or {}
        causes += _quota_list_errors(status.get("hard"), "status.hard")
        causes += _quota_list_errors(status.get("used"), "status.used")
        if old is not None and set(spec.get("scopes") or []) != set((old.get("spec") or {}).get("scopes") or []):
            causes.append(("spec.scopes", _go_list(spec.get("scopes"), "[]core.ResourceQuotaScope"), IMMUTABLE))
        return causes

    @staticmethod
    def _scope_errors(spec: Obj, hard: list[str]) -> list[Cause]:
        scopes = spec.get("scopes") or []
        if not scopes:
            return []
        shown = _go_list(scopes, "[]core.ResourceQuotaScope")
        causes: list[Cause] = []
        for scope in scopes:
            if scope not in q.SCOPES:
                causes.append(("spec.scopes", shown, "unsupported scope"))
            for name in hard:
                if q.is_standard_quota_resource(name) and not q.is_scope_valid_for_resource(scope, name):
                    causes.append(("spec.scopes", shown, "unsupported scope applied to resource"))
        for pair in ((q.BEST_EFFORT, q.NOT_BEST_EFFORT), (q.TERMINATING, q.NOT_TERMINATING)):
            if set(pair) <= set(scopes):
                causes.append(("spec.scopes", shown, "conflicting scopes"))
        return causes

    @staticmethod
    def _selector_errors(spec: Obj, hard: list[str]) -> list[Cause]:
        """``validateScopedResourceSelectorRequirement``."""
        selector = spec.get("scopeSelector")
        if selector is None:
            return []
        path = "spec.scopeSelector.matchExpressions"
        shown = "&core.ScopeSelector{...}"
        causes: list[Cause] = []
        names: set[str] = set()
        for req in selector.get("matchExpressions") or []:
            scope, op, values = req.get("scopeName"), req.get("operator"), req.get("values") or []
            if scope not in q.SCOPES:
                causes.append((f"{path}.scopeName", scope, "unsupported scope"))
            for name in hard:
                if q.is_standard_quota_resource(name) and not q.is_scope_valid_for_resource(str(scope), name):
                    causes.append((path, shown, "unsupported scope applied to resource"))
            if scope in (q.BEST_EFFORT, q.NOT_BEST_EFFORT, q.TERMINATING, q.NOT_TERMINATING,
                         q.CROSS_NAMESPACE_POD_AFFINITY) and op != "Exists":
                causes.append((f"{path}.operator", op,
                               "must be 'Exist' when scope is any of ResourceQuotaScopeTerminating, "
                               "ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, "
                               "ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"))
            if op in ("In", "NotIn"):
                if not values:
                    causes.append((f"{path}.values", None, f"{REQUIRED}: must be at least one value when "
                                                           "`operator` is 'In' or 'NotIn' for scope selector"))
            elif op in ("Exists", "DoesNotExist"):
                if values:
                    causes.append((f"{path}.values", _go_list(values, "[]string"),
                                   "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"))
            else:
                causes.append((f"{path}.operator", op, "not a valid selector operator"))
            names.add(str(scope))
        for pair in ((q.BEST_EFFORT, q.NOT_BEST_EFFORT), (q.TERMINATING, q.NOT_TERMINATING)):
            if set(pair) <= names:
                causes.append((path, shown, "conflicting scopes"))
        return causes


def default_limit_range_item(item: Obj) -> None:
    """``SetDefaults_LimitRangeItem``: for ``Container`` items, ``default`` from ``max``, then
    ``defaultRequest`` from ``default``, then from ``min``."""
    for fld in ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio"):
        if item.get(fld) is not None:
            item[fld] = q.canonical_list(item[fld])
    if item.get("type") != q.LIMIT_TYPE_CONTAINER:
        return
    default = item.setdefault("default", {})
    request = item.setdefault("defaultRequest", {})
    for name, value in (item.get("max") or {}).items():
        default.setdefault(name, value)
    for name, value in default.items():
        request.setdefault(name, value)
    for name, value in (item.get("min") or {}).items():
        request.setdefault(name, value)


def _limit_resource_errors(limit_type: str, name: str, path: str) -> list[Cause]:
    """``validateLimitRangeResourceName``: Pod and Container items name container resources."""
    causes = _resource_name_errors(name, path)
    if limit_type in (q.LIMIT_TYPE_POD, q.LIMIT_TYPE_CONTAINER):
        if "/" not in name:
            if name not in ("cpu", "memory", "ephemeral-storage") and not name.startswith("hugepages-"):
                causes.append((path, name, "must be a standard resource for containers"))
        elif q.is_native_resource(name):
            causes.append((path, name, "must be a standard resource for containers"))
    return causes


def _overcommit_allowed(name: str) -> bool:
    """``helper.IsOvercommitAllowed``: native resources but hugepages."""
    return q.is_native_resource(name) and not name.startswith("hugepages-")


def _item_errors(item: Obj, path: str) -> list[Cause]:
    causes: list[Cause] = []
    limit_type = str(item.get("type") or "")
    type_errors = v.qualified_name_errors(limit_type)
    causes += [(f"{path}.type", limit_type, msg) for msg in type_errors]
    if not type_errors and "/" not in limit_type and limit_type not in q.LIMIT_TYPES:
        causes.append((f"{path}.type", limit_type, "must be a standard limit type or fully qualified"))
    lists: dict[str, dict[str, q.Amount]] = {}
    fields = ["max", "min"]
    if limit_type == q.LIMIT_TYPE_POD:
        for fld in ("default", "defaultRequest"):
            if item.get(fld):
                causes.append((f"{path}.{fld}", None, "Forbidden: may not be specified when `type` is 'Pod'"))
    else:
        fields += ["default", "defaultRequest"]
    fields.append("maxLimitRequestRatio")
    for fld in fields:
        for name, text in (item.get(fld) or {}).items():
            causes += _limit_resource_errors(limit_type, name, f"{path}.{fld}[{name}]")
            try:
                lists.setdefault(fld, {})[name] = q.Amount.of(text)
            except ValueError as exc:
                causes.append((f"{path}.{fld}[{name}]", text, str(exc)))
    if limit_type == q.LIMIT_TYPE_PVC and "storage" not in (item.get("min") or {}) \
            and "storage" not in (item.get("max") or {}):
        causes.append((f"{path}.limits", None,
                       f"{REQUIRED}: either minimum or maximum storage value is required, but neither was provided"))
    keys = sorted({name for values in lists.values() for name in values})
    for k in keys:
        lo, hi = lists.get("min", {}).get(k), lists.get("max", {}).get(k)
        default, request = lists.get("default", {}).get(k), lists.get("defaultRequest", {}).get(k)
        ratio = lists.get("maxLimitRequestRatio", {}).get(k)
        if lo and hi and lo.value > hi.value:
            causes.append((f"{path}.min[{k}]", str(lo), f"min value {lo} is greater than max value {hi}"))
        if request and lo and lo.value > request.value:
            causes.append((f"{path}.defaultRequest[{k}]", str(request),
                           f"min value {lo} is greater than default request value {request}"))
        if request and hi and request.value > hi.value:
            causes.append((f"{path}.defaultRequest[{k}]", str(request),
                           f"default request value {request} is greater than max value {hi}"))
        if request and default and request.value > default.value:
            causes.append((f"{path}.defaultRequest[{k}]", str(request),
                           f"default request value {request} is greater than default limit value {default}"))
        if default and lo and lo.value > default.value:
            causes.append((f"{path}.default[{k}]", str(lo), f"min value {lo} is greater than default value {default}"))
        if default and hi and default.value > hi.value:
            causes.append((f"{path}.default[{k}]", str(hi), f"default value {default} is greater than max value {hi}"))
        if ratio and ratio.value < 1:
            causes.append((f"{path}.maxLimitRequestRatio[{k}]", str(ratio), f"ratio {ratio} is less than 1"))
        if ratio and lo and hi and lo.value > 0:
            limit = float(hi.milli()) / float(lo.milli())
            if float(ratio.milli()) / 1000 > limit:
                causes.append((f"{path}.maxLimitRequestRatio[{k}]", str(ratio),
                               f"ratio {ratio} is greater than max/min = {limit:f}"))
        if not _overcommit_allowed(k) and default and request and default.value != request.value:
            causes.append((f"{path}.defaultRequest[{k}]", str(request),
                           f"default value {default} must equal to defaultRequest value {request} in {k}"))
    return causes


class LimitRangeStrategy(Strategy):
    """LimitRange: Container items defaulted (``SetDefaults_LimitRangeItem``); one item per type;
    min <= defaultRequest <= default <= max; ratios at least 1 and within max/min."""

    def default(self, obj: Obj) -> None:
        for item in (obj.get("spec") or {}).get("limits") or []:
            if isinstance(item, dict):
                default_limit_range_item(item)

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        seen: set[str] = set()
        for i, item in enumerate((obj.get("spec") or {}).get("limits") or []):
            path = f"spec.limits[{i}]"
            causes += _item_errors(item, path)
            limit_type = str(item.get("type") or "")
            if limit_type in seen:
                causes.append((f"{path}.type", None, f'Duplicate value: "{limit_type}"'))
            seen.add(limit_type)
        return causes
