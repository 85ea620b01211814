"""v1 ResourceQuota and LimitRange, and the rules the apiserver's ``ResourceQuota`` and
``LimitRanger`` admission and the quota controller share.

Kubernetes' field names and meanings (``k8s.io/api/core/v1``)::

    apiVersion: v1
    kind: ResourceQuota
    metadata: {name: compute, namespace: team}
    spec:
      hard: {pods: "10", requests.cpu: "2", limits.memory: 4Gi, count/deployments.apps: "5"}
      scopes: [NotTerminating]                 # Terminating, BestEffort, NotBestEffort, PriorityClass,
                                               # CrossNamespacePodAffinity
      scopeSelector: {matchExpressions: [{scopeName: PriorityClass, operator: In, values: [high]}]}
    status:                                    # the quota controller's (and admission's charges)
      hard: {pods: "10", ...}
      used: {pods: "3", ...}
    ---
    apiVersion: v1
    kind: LimitRange
    spec:
      limits:
      - type: Container                        # Pod, PersistentVolumeClaim
        max: {cpu: "1"}
        min: {cpu: 100m}
        default: {cpu: 500m}                   # a container's limit when it sets none
        defaultRequest: {cpu: 200m}            # its request when it sets none
        maxLimitRequestRatio: {cpu: "4"}

Usage (Kubernetes' ``pkg/quota/v1/evaluator/core``): a pod counts ``pods`` (unless terminal, or
past its deletion grace period), ``count/pods`` (always), and its requests and limits
(``requests.cpu``, ``cpu``, ``limits.memory``..., the sum of its containers, or an init container's
when larger); a Service ``services``, ``services.nodeports`` (its node ports) and
``services.loadbalancers``; a claim ``persistentvolumeclaims`` and ``requests.storage`` (also per
StorageClass: ``<class>.storageclass.storage.k8s.io/requests.storage``); every object
``count/<resource>[.<group>]``, and ConfigMaps, Secrets, ReplicationControllers and
ResourceQuotas their legacy names too.  Amounts are :class:`Amount`: exact decimals that print as
``Quantity.String()`` does.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import Annotated, Any

from pydantic import BeforeValidator

from minik8s.api.base import Obj, parse_time
from minik8s.api.meta import TypedObject
from minik8s.api.model import Model
from minik8s.api.quantity import (
    DECIMAL_SI,
    format_quantity,
    milli_value,
    parse_quantity,
    quantity_format,
)


def _number_to_string(value: Any) -> Any:
    """A JSON number in a resource list is a quantity as well (``pods: 10``)."""
    return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


#: A ``resource.Quantity`` on the wire: a string (a number is taken as its string).
QuantityStr = Annotated[str, BeforeValidator(_number_to_string)]
ResourceList = dict[str, QuantityStr]


# ---------------------------------------------------------------- models
class ScopedResourceSelectorRequirement(Model):
    scope_name: str
    operator: str
    values: list[str] | None = None


class ScopeSelector(Model):
    match_expressions: list[ScopedResourceSelectorRequirement] | None = None


class ResourceQuotaSpec(Model):
    hard: ResourceList | None = None
    scopes: list[str] | None = None
    scope_selector: ScopeSelector | None = None


class ResourceQuotaStatus(Model):
    hard: ResourceList | None = None
    used: ResourceList | None = None


class ResourceQuota(TypedObject):
    spec: ResourceQuotaSpec | None = None
    status: ResourceQuotaStatus | None = None


class LimitRangeItem(Model):
    type: str
    max: ResourceList | None = None
    min: ResourceList | None = None
    default: ResourceList | None = None
    default_request: ResourceList | None = None
    max_limit_request_ratio: ResourceList | None = None


class LimitRangeSpec(Model):
    limits: list[LimitRangeItem]


class LimitRange(TypedObject):
    spec: LimitRangeSpec | None = None


# ---------------------------------------------------------------- names
#: ``corev1.LimitType``
LIMIT_TYPE_POD = "Pod"
LIMIT_TYPE_CONTAINER = "Container"
LIMIT_TYPE_PVC = "PersistentVolumeClaim"
LIMIT_TYPES = (LIMIT_TYPE_POD, LIMIT_TYPE_CONTAINER, LIMIT_TYPE_PVC)
#: ``corev1.ResourceQuotaScope``
TERMINATING, NOT_TERMINATING = "Terminating", "NotTerminating"
BEST_EFFORT, NOT_BEST_EFFORT = "BestEffort", "NotBestEffort"
PRIORITY_CLASS, CROSS_NAMESPACE_POD_AFFINITY = "PriorityClass", "CrossNamespacePodAffinity"
SCOPES = (TERMINATING, NOT_TERMINATING, BEST_EFFORT, NOT_BEST_EFFORT, PRIORITY_CLASS, CROSS_NAMESPACE_POD_AFFINITY)
#: ``corev1.ScopeSelectorOperator``
SCOPE_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
#: ``helper.IsStandardQuotaResourceName`` (hugepages aside)
STANDARD_QUOTA_RESOURCES = frozenset({
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.storage",
    "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods",
    "resourcequotas", "services", "replicationcontrollers", "secrets", "persistentvolumeclaims", "configmaps",
    "services.nodeports", "services.loadbalancers"})
#: ``helper.IsIntegerResourceName``: object counts, whose quantities must be whole
INTEGER_RESOURCES = frozenset({"pods", "resourcequotas", "services", "replicationcontrollers", "secrets",
                               "configmaps", "persistentvolumeclaims", "services.nodeports",
                               "services.loadbalancers"})
#: the resources a pod-scoped quota may limit (``IsResourceQuotaScopeValidForResource``)
POD_COMPUTE_RESOURCES = frozenset({"cpu", "memory", "limits.cpu", "limits.memory", "requests.cpu",
                                   "requests.memory"})
#: ``podResources``: what the pod evaluator measures
POD_RESOURCES = frozenset({"count/pods", "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory",
                           "requests.ephemeral-storage", "limits.cpu", "limits.memory",
                           "limits.ephemeral-storage", "pods"})
#: ``validationSet``: a pod must set these in every container when a matching quota limits them
POD_VALIDATION_SET = ("cpu", "limits.cpu", "limits.memory", "memory", "requests.cpu", "requests.memory")
#: the legacy object-count names, by (group, plural)
LEGACY_COUNTS = {("", "pods"): "pods", ("", "services"): "services", ("", "configmaps"): "configmaps",
                 ("", "secrets"): "secrets", ("", "persistentvolumeclaims"): "persistentvolumeclaims",
                 ("", "replicationcontrollers"): "replicationcontrollers",
                 ("", "resourcequotas"): "resourcequotas"}
STORAGE_CLASS_SUFFIX = ".storageclass.storage.k8s.io/"
#: the annotation LimitRanger sets on a pod it gave defaults
LIMIT_RANGER_ANNOTATION = "kubernetes.io/limit-ranger"


def count_name(group: str, plural: str) -> str:
    """``ObjectCountQuotaResourceNameFor``: ``count/pods``, ``count/deployments.apps``."""
    return f"count/{plural}" + (f".{group}" if group else "")


def is_scope_valid_for_resource(scope: str, resource: str) -> bool:
    """``IsResourceQuotaScopeValidForResource``: pod scopes only limit ``pods`` and cpu/memory."""
    if scope in (TERMINATING, NOT_TERMINATING, NOT_BEST_EFFORT, PRIORITY_CLASS, CROSS_NAMESPACE_POD_AFFINITY):
        return resource == "pods" or resource in POD_COMPUTE_RESOURCES
    if scope == BEST_EFFORT:
        return resource == "pods"
    return True


def is_standard_quota_resource(name: str) -> bool:
    return name in STANDARD_QUOTA_RESOURCES or name.startswith(("hugepages-", "requests.hugepages-"))


def is_integer_resource(name: str) -> bool:
    return name in INTEGER_RESOURCES or is_extended_resource(name)


def is_native_resource(name: str) -> bool:
    """``helper.IsNativeResource``: no domain, or a ``kubernetes.io`` one."""
    return "/" not in name or name.split("/")[0].endswith("kubernetes.io")


def is_extended_resource(name: str) -> bool:
    """``helper.IsExtendedResourceName``: a domain-qualified name outside ``kubernetes.io``, not
    ``requests.*`` (quota's prefix)."""
    return not is_native_resource(name) and not name.startswith("requests.")


# ---------------------------------------------------------------- amounts
@dataclass(frozen=True, slots=True)
class Amount:
    """A quantity: its exact value and the format it prints in (``resource.Quantity``)."""

    value: Decimal
    fmt: str = DECIMAL_SI

    @classmethod
    def of(cls, text: str | int) -> Amount:
        """Parse a quantity; ValueError when malformed."""
        return cls(parse_quantity(text), quantity_format(text))

    def __add__(self, other: Amount) -> Amount:
        # Quantity.Add: a zero takes the other's format
        return Amount(self.value + other.value, self.fmt if self.value != 0 else other.fmt)

    def __str__(self) -> str:
        return format_quantity(self.value, self.fmt)

    def milli(self) -> int:
        return milli_value(self.value)


ZERO = Amount(Decimal(0))
ONE = Amount(Decimal(1))
Usage = dict[str, Amount]


def parse_list(items: dict[str, Any] | None) -> Usage:
    """A resource list of quantity strings as amounts (malformed entries left out)."""
    out: Usage = {}
    for name, text in (items or {}).items():
        try:
            out[name] = Amount.of(text)
        except ValueError:
            continue
    return out


def add(a: Usage, b: Usage) -> Usage:
    out = dict(a)
    for name, amount in b.items():
        out[name] = out[name] + amount if name in out else amount
    return out


def mask(usage: Usage, names: set[str] | frozenset[str] | list[str]) -> Usage:
    return {k: v for k, v in usage.items() if k in names}


def pretty(usage: Usage) -> str:
    """``prettyPrint``: ``name=quantity`` sorted by name, comma-separated."""
    return ",".join(f"{k}={usage[k]}" for k in sorted(usage))


def canonical_list(items: dict[str, Any] | None) -> dict[str, str] | None:
    """A resource list with every quantity in its canonical form (how Kubernetes stores them)."""
    if items is None:
        return None
    out: dict[str, str] = {}
    for name, text in items.items():
        try:
            out[name] = str(Amount.of(text))
        except ValueError:
            out[name] = text
    return out


# ---------------------------------------------------------------- pods
def _containers(spec: Obj, key: str) -> list[Obj]:
    return [c for c in spec.get(key) or [] if isinstance(c, dict)]


def _resources(container: Obj, kind: str) -> Usage:
    return parse_list((container.get("resources") or {}).get(kind))


def pod_resources(pod: Obj, kind: str) -> Usage:
    """``resourcehelper.PodRequests``/``PodLimits`` (``kind`` ``requests`` or ``limits``): the sum of
    the containers', each resource raised to an init container's when that is larger, plus the
    pod's ``overhead``."""
    spec = pod.get("spec") or {}
    total: Usage = {}
    for container in _containers(spec, "containers"):
        total = add(total, _resources(container, kind))
    for container in _containers(spec, "initContainers"):
        for name, amount in _resources(container, kind).items():
            if name not in total or amount.value > total[name].value:
                total[name] = amount
    return add(total, parse_list(spec.get("overhead")))


def compute_usage(requests: Usage, limits: Usage) -> Usage:
    """``podComputeUsageHelper``: the quota names a set of requests and limits charges."""
    out: Usage = {"pods": ONE}
    for res in ("cpu", "memory", "ephemeral-storage"):
        if res in requests:
            out[res] = requests[res]
            out[f"requests.{res}"] = requests[res]
        if res in limits:
            out[f"limits.{res}"] = limits[res]
    for name, amount in requests.items():
        if name.startswith("hugepages-"):
            out[name] = amount
            out["requests." + name] = amount
        if is_extended_resource(name):
            out["requests." + name] = amount
    return out


def pod_counts_for_quota(pod: Obj, now: dt.datetime | None = None) -> bool:
    """``QuotaV1Pod``: not terminal (Succeeded, Failed) and not past its deletion grace period."""
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return False
    meta = pod.get("metadata") or {}
    grace = meta.get("deletionGracePeriodSeconds")
    if meta.get("deletionTimestamp") and grace is not None:
        try:
            deleted = parse_time(meta["deletionTimestamp"])
        except ValueError:
            return True
        if deleted is not None and (now or dt.datetime.now(dt.UTC)) > deleted + dt.timedelta(seconds=int(grace)):
            return False
    return True


def pod_usage(pod: Obj, now: dt.datetime | None = None) -> Usage:
    """``PodUsageFunc``: ``count/pods`` always; ``pods`` and compute resources while it counts."""
    out: Usage = {"count/pods": ONE}
    if not pod_counts_for_quota(pod, now):
        return out
    return add(out, compute_usage(pod_resources(pod, "requests"), pod_resources(pod, "limits")))


def is_best_effort(pod: Obj) -> bool:
    """``GetPodQOS == BestEffort``: no cpu or memory request or limit in any container."""
    spec = pod.get("spec") or {}
    for container in _containers(spec, "containers") + _containers(spec, "initContainers"):
        res = container.get("resources") or {}
        for kind in ("requests", "limits"):
            if any(name in ("cpu", "memory") for name in res.get(kind) or {}):
                return False
    return True


def _cross_namespace(terms: list[Obj] | None, weighted: bool) -> bool:
    for term in terms or []:
        term = (term.get("podAffinityTerm") or {}) if weighted else term
        if term.get("namespaces") or term.get("namespaceSelector") is not None:
            return True
    return False


def uses_cross_namespace_affinity(pod: Obj) -> bool:
    affinity = (pod.get("spec") or {}).get("affinity") or {}
    for kind in ("podAffinity", "podAntiAffinity"):
        section = affinity.get(kind) or {}
        if _cross_namespace(section.get("requiredDuringSchedulingIgnoredDuringExecution"), False) or \
                _cross_namespace(section.get("preferredDuringSchedulingIgnoredDuringExecution"), True):
            return True
    return False


def scope_selectors(rq: Obj) -> list[Obj]:
    """``getScopeSelectorsFromQuota``: ``spec.scopes`` as ``Exists`` requirements, then the selector's."""
    spec = rq.get("spec") or {}
    out: list[Obj] = [{"scopeName": s, "operator": "Exists"} for s in spec.get("scopes") or []]
    return out + list((spec.get("scopeSelector") or {}).get("matchExpressions") or [])


def pod_matches_scope(req: Obj, pod: Obj) -> bool:
    """``podMatchesScopeFunc``."""
    spec = pod.get("spec") or {}
    scope = req.get("scopeName")
    if scope in (TERMINATING, NOT_TERMINATING):
        deadline = spec.get("activeDeadlineSeconds")
        terminating = isinstance(deadline, int) and deadline >= 0
        return terminating if scope == TERMINATING else not terminating
    if scope in (BEST_EFFORT, NOT_BEST_EFFORT):
        return is_best_effort(pod) if scope == BEST_EFFORT else not is_best_effort(pod)
    if scope == PRIORITY_CLASS:
        name = spec.get("priorityClassName") or ""
        op, values = req.get("operator"), req.get("values") or []
        if op == "Exists":
            return bool(name)
        if op == "DoesNotExist":
            return not name
        if op == "In":
            return bool(name) and name in values
        if op == "NotIn":
            return not name or name not in values
        return False
    if scope == CROSS_NAMESPACE_POD_AFFINITY:
        return uses_cross_namespace_affinity(pod)
    return False


def pod_constraints(pod: Obj, required: set[str]) -> str | None:
    """``podEvaluator.Constraints``: the containers that do not set a cpu/memory resource a quota
    limits, as ``must specify limits.cpu for: a,b; requests.memory for: a``; None when all do."""
    needed = required & set(POD_VALIDATION_SET)
    missing: dict[str, set[str]] = {}
    spec = pod.get("spec") or {}
    for container in _containers(spec, "containers") + _containers(spec, "initContainers"):
        have = set(compute_usage(_resources(container, "requests"), _resources(container, "limits")))
        for name in needed - have:
            missing.setdefault(name, set()).add(str(container.get("name") or ""))
    if not missing:
        return None
    return "must specify " + "; ".join(f"{r} for: {','.join(sorted(missing[r]))}" for r in sorted(missing))


# ---------------------------------------------------------------- other kinds
def service_usage(svc: Obj) -> Usage:
    """``serviceEvaluator.Usage``: ``services``, ``services.nodeports`` (NodePort and LoadBalancer
    ports), ``services.loadbalancers``."""
    spec = svc.get("spec") or {}
    out: Usage = {"services": ONE, "count/services": ONE}
    kind = spec.get("type") or "ClusterIP"
    ports = len(spec.get("ports") or [])
    if kind == "NodePort":
        out["services.nodeports"] = Amount(Decimal(ports))
    elif kind == "LoadBalancer":
        out["services.loadbalancers"] = ONE
        if spec.get("allocateLoadBalancerNodePorts", True) is not False:
            out["services.nodeports"] = Amount(Decimal(ports))
    return out


def claim_usage(pvc: Obj) -> Usage:
    """``pvcEvaluator.Usage``: ``persistentvolumeclaims``, ``requests.storage`` (the larger of the
    request and ``status.allocatedResources``), and both per StorageClass."""
    spec = pvc.get("spec") or {}
    out: Usage = {"persistentvolumeclaims": ONE, "count/persistentvolumeclaims": ONE}
    cls = spec.get("storageClassName") or ""
    if cls:
        out[cls + STORAGE_CLASS_SUFFIX + "persistentvolumeclaims"] = ONE
    storage = parse_list((spec.get("resources") or {}).get("requests")).get("storage")
    allocated = parse_list((pvc.get("status") or {}).get("allocatedResources")).get("storage")
    if allocated is not None and (storage is None or allocated.value > storage.value):
        storage = allocated
    if storage is not None:
        out["requests.storage"] = storage
        if cls:
            out[cls + STORAGE_CLASS_SUFFIX + "requests.storage"] = storage
    return out


def object_usage(group: str, plural: str, obj: Obj, now: dt.datetime | None = None) -> Usage:
    """What one object of ``group``/``plural`` charges (every kind: its ``count/`` name)."""
    if (group, plural) == ("", "pods"):
        return pod_usage(obj, now)
    if (group, plural) == ("", "services"):
        return service_usage(obj)
    if (group, plural) == ("", "persistentvolumeclaims"):
        return claim_usage(obj)
    out: Usage = {count_name(group, plural): ONE}
    legacy = LEGACY_COUNTS.get((group, plural))
    if legacy:
        out[legacy] = ONE
    return out


def matching_resources(group: str, plural: str, names: list[str] | set[str]) -> set[str]:
    """``Evaluator.MatchingResources``: of ``names`` (a quota's hard), those objects of
    ``group``/``plural`` are charged for."""
    count = count_name(group, plural)
    if (group, plural) == ("", "pods"):
        return {n for n in names if n in POD_RESOURCES or n.startswith(("hugepages-", "requests.hugepages-"))
                or (n.startswith("requests.") and is_extended_resource(n[len("requests."):]))}
    if (group, plural) == ("", "services"):
        return {n for n in names if n in ("services", "services.nodeports", "services.loadbalancers", count)}
    if (group, plural) == ("", "persistentvolumeclaims"):
        return {n for n in names if n in ("persistentvolumeclaims", "requests.storage", count)
                or (STORAGE_CLASS_SUFFIX in n and n.endswith(("/persistentvolumeclaims", "/requests.storage")))}
    legacy = LEGACY_COUNTS.get((group, plural))
    return {n for n in names if n == count or (legacy and n == legacy)}


def quota_matches(rq: Obj, group: str, plural: str, obj: Obj) -> bool:
    """``generic.Matches``: the quota's ``status.hard`` names something the object is charged
    for, and (pods only; other kinds match no scope) every scope selects the object."""
    hard = list(((rq.get("status") or {}).get("hard") or {}).keys())
    if not matching_resources(group, plural, hard):
        return False
    for req in scope_selectors(rq):
        if (group, plural) != ("", "pods") or not pod_matches_scope(req, obj):
            return False
    return True
