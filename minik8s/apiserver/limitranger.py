"""The ``LimitRanger`` admission plugin (Kubernetes' ``plugin/pkg/admission/limitranger``): the
LimitRanges of a namespace give its pods default resources and bound pods' and claims' resources.

- Mutating, pods being created: each container and init container gets, for every resource a
  ``Container`` item names, the item's ``default`` as its limit and ``defaultRequest`` as its
  request when it sets none (a stored LimitRange already has ``defaultRequest`` filled from
  ``default``, and ``default`` from ``max``:
  :func:`~minik8s.apiserver.strategies.resourcequota.default_limit_range_item`);
  the pod is annotated ``kubernetes.io/limit-ranger: LimitRanger plugin set: cpu, memory request
  for container app; cpu limit for container app``.
- Validating, pods being created and claims being created or updated: ``Container`` items bound
  each container's requests and limits (``min``, ``max``, ``maxLimitRequestRatio``), ``Pod`` items
  the pod's totals, ``PersistentVolumeClaim`` items a claim's ``storage`` request.  A violation
  is 403 Forbidden with Kubernetes' messages: ``pods "x" is forbidden: maximum cpu usage per
  Container is 500m, but limit is 1``, several as ``[a, b]``.
"""

from __future__ import annotations

from typing import Any

from minik8s.api import errors
from minik8s.api import quota as q
from minik8s.api.base import Obj
from minik8s.api.resourcetypes import ResourceType

PLUGIN_NAME = "LimitRanger"
#: ``resource.MaxMilliValue``: beyond it Kubernetes compares whole units instead of thousandths
MAX_MILLI_VALUE = (2**63 - 1) // 1000


def handles(rt: ResourceType, creating: bool) -> bool:
    """``SupportsAttributes``: pods on create, claims on create and update (built-in kinds)."""
    if rt.group or rt.custom is not None:
        return False
    return rt.plural == "pods" and creating or rt.plural == "persistentvolumeclaims"


async def limit_ranges(api: Any, namespace: str) -> list[Obj]:
    """The namespace's LimitRanges, from storage (``api``: the ResourceAPI)."""
    rt = api.registry.by_kind("v1", "LimitRange")
    items, _, _ = await api.store.list(rt.storage_prefix(namespace))
    return list(items)


# ---------------------------------------------------------------- mutating
def _merge_container(container: Obj, limits: dict[str, str], requests: dict[str, str], prefix: str,
                     notes: list[str]) -> None:
    """``mergeContainerResources``: the defaults a container lacks, noted for the annotation."""
    res = container.setdefault("resources", {})
    set_limits = [k for k in limits if k not in (res.get("limits") or {})]
    set_requests = [k for k in requests if k not in (res.get("requests") or {})]
    for k in set_limits:
        res.setdefault("limits", {})[k] = limits[k]
    for k in set_requests:
        res.setdefault("requests", {})[k] = requests[k]
    name = container.get("name") or ""
    if set_requests:
        notes.append(", ".join(sorted(set_requests)) + f" request for {prefix} {name}")
    if set_limits:
        notes.append(", ".join(sorted(set_limits)) + f" limit for {prefix} {name}")


def default_pod(pod: Obj, limit_range: Obj) -> None:
    """``PodMutateLimitFunc``: one LimitRange's container defaults applied to ``pod`` (in place)."""
    limits: dict[str, str] = {}
    requests: dict[str, str] = {}
    for item in (limit_range.get("spec") or {}).get("limits") or []:
        if item.get("type") == q.LIMIT_TYPE_CONTAINER:
            requests.update(item.get("defaultRequest") or {})
            limits.update(item.get("default") or {})
    notes: list[str] = []
    spec = pod.get("spec") or {}
    for container in spec.get("containers") or []:
        _merge_container(container, limits, requests, "container", notes)
    for container in spec.get("initContainers") or []:
        _merge_container(container, limits, requests, "init container", notes)
    if notes:
        pod["metadata"].setdefault("annotations", {})[q.LIMIT_RANGER_ANNOTATION] = \
            "LimitRanger plugin set: " + "; ".join(notes)


# ---------------------------------------------------------------- validating
def _values(req: q.Amount | None, lim: q.Amount | None, enforced: q.Amount) -> tuple[int, int, int]:
    """``requestLimitEnforcedValues``: thousandths when nothing overflows, else whole units."""
    amounts = [a.value if a else 0 for a in (req, lim)] + [enforced.value]
    if all(a <= MAX_MILLI_VALUE for a in amounts):
        return req.milli() if req else 0, lim.milli() if lim else 0, enforced.milli()
    return int(amounts[0]), int(amounts[1]), int(amounts[2])


def min_constraint(limit_type: str, name: str, enforced: q.Amount, requests: q.Usage, limits: q.Usage) -> str | None:
    req, lim = requests.get(name), limits.get(name)
    observed_req, observed_lim, value = _values(req, lim, enforced)
    if req is None:
        return f"minimum {name} usage per {limit_type} is {enforced}.  No request is specified"
    if observed_req < value:
        return f"minimum {name} usage per {limit_type} is {enforced}, but request is {req}"
    if lim is not None and observed_lim < value:
        return f"minimum {name} usage per {limit_type} is {enforced}, but limit is {lim}"
    return None


def max_constraint(limit_type: str, name: str, enforced: q.Amount, requests: q.Usage, limits: q.Usage) -> str | None:
    req, lim = requests.get(name), limits.get(name)
    observed_req, observed_lim, value = _values(req, lim, enforced)
    if lim is None:
        return f"maximum {name} usage per {limit_type} is {enforced}.  No limit is specified"
    if observed_lim > value:
        return f"maximum {name} usage per {limit_type} is {enforced}, but limit is {lim}"
    if req is not None and observed_req > value:
        return f"maximum {name} usage per {limit_type} is {enforced}, but request is {req}"
    return None


def max_request_constraint(limit_type: str, name: str, enforced: q.Amount, requests: q.Usage) -> str | None:
    req = requests.get(name)
    observed_req, _, value = _values(req, None, enforced)
    if req is None:
        return f"maximum {name} usage per {limit_type} is {enforced}.  No request is specified"
    if observed_req > value:
        return f"maximum {name} usage per {limit_type} is {enforced}, but request is {req}"
    return None


def ratio_constraint(limit_type: str, name: str, enforced: q.Amount, requests: q.Usage,
                     limits: q.Usage) -> str | None:
    req, lim = requests.get(name), limits.get(name)
    observed_req, observed_lim, _ = _values(req, lim, enforced)
    if req is None or observed_req == 0:
        return (f"{name} max limit to request ratio per {limit_type} is {enforced}, "
                "but no request is specified or request is 0")
    if lim is None or observed_lim == 0:
        return (f"{name} max limit to request ratio per {limit_type} is {enforced}, "
                "but no limit is specified or limit is 0")
    observed = observed_lim / observed_req
    shown = observed
    maximum = float(int(enforced.value))
    if int(enforced.value) <= MAX_MILLI_VALUE:
        observed *= 1000
        maximum = float(enforced.milli())
    if observed > maximum:
        return f"{name} max limit to request ratio per {limit_type} is {enforced}, but provided ratio is {shown:f}"
    return None


def _bounds(item: Obj, limit_type: str, requests: q.Usage, limits: q.Usage) -> list[str]:
    out: list[str] = []
    for name, enforced in q.parse_list(item.get("min")).items():
        out.append(min_constraint(limit_type, name, enforced, requests, limits) or "")
    for name, enforced in q.parse_list(item.get("max")).items():
        out.append(max_constraint(limit_type, name, enforced, requests, limits) or "")
    for name, enforced in q.parse_list(item.get("maxLimitRequestRatio")).items():
        out.append(ratio_constraint(limit_type, name, enforced, requests, limits) or "")
    return [m for m in out if m]


def pod_violations(limit_range: Obj, pod: Obj) -> list[str]:
    """``PodValidateLimitFunc``: what of ``pod`` one LimitRange refuses."""
    out: list[str] = []
    spec = pod.get("spec") or {}
    for item in (limit_range.get("spec") or {}).get("limits") or []:
        limit_type = item.get("type")
        if limit_type == q.LIMIT_TYPE_CONTAINER:
            for container in (spec.get("containers") or []) + (spec.get("initContainers") or []):
                res = container.get("resources") or {}
                out += _bounds(item, limit_type, q.parse_list(res.get("requests")), q.parse_list(res.get("limits")))
        elif limit_type == q.LIMIT_TYPE_POD:
            out += _bounds(item, limit_type, q.pod_resources(pod, "requests"), q.pod_resources(pod, "limits"))
    return out


def claim_violations(limit_range: Obj, pvc: Obj) -> list[str]:
    """``PersistentVolumeClaimValidateLimitFunc``: a claim's requests against min and max."""
    out: list[str] = []
    requests = q.parse_list(((pvc.get("spec") or {}).get("resources") or {}).get("requests"))
    for item in (limit_range.get("spec") or {}).get("limits") or []:
        if item.get("type") != q.LIMIT_TYPE_PVC:
            continue
        for name, enforced in q.parse_list(item.get("min")).items():
            out.append(min_constraint(q.LIMIT_TYPE_PVC, name, enforced, requests, {}) or "")
        for name, enforced in q.parse_list(item.get("max")).items():
            out.append(max_request_constraint(q.LIMIT_TYPE_PVC, name, enforced, requests) or "")
    return [m for m in out if m]


def forbidden(rt: ResourceType, obj: Obj, messages: list[str]) -> errors.Forbidden:
    """``admission.NewForbidden`` of an aggregate: one message as is, several as ``[a, b]``."""
    unique = list(dict.fromkeys(messages))
    text = unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"
    meta = obj.get("metadata") or {}
    name = meta.get("name") or meta.get("generateName") or "Unknown"
    details = {"name": name, "kind": rt.plural} | ({"group": rt.group} if rt.group else {})
    return errors.Forbidden(f'{rt.plural}{"." + rt.group if rt.group else ""} "{name}" is forbidden: {text}', details)


async def admit(api: Any, rt: ResourceType, obj: Obj, ranges: list[Obj]) -> None:
    """The mutating half: pod defaults from ``ranges`` (the namespace's LimitRanges)."""
    if rt.plural == "pods":
        for limit_range in ranges:
            default_pod(obj, limit_range)


def validate(rt: ResourceType, obj: Obj, ranges: list[Obj]) -> None:
    """The validating half: 403 Forbidden at the first LimitRange ``obj`` violates."""
    for limit_range in ranges:
        found = pod_violations(limit_range, obj) if rt.plural == "pods" else claim_violations(limit_range, obj)
        if found:
            raise forbidden(rt, obj, found)


__all__ = ["PLUGIN_NAME", "admit", "claim_violations", "default_pod", "handles", "limit_ranges", "pod_violations",
           "validate"]
