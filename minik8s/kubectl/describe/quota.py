"""``kubectl describe quota`` and ``kubectl describe limits``: a ResourceQuota and a LimitRange in
kubectl 1.32's layout (``pkg/describe``'s ``describeQuota`` and ``describeLimitRange``: no labels,
annotations nor events)."""

from __future__ import annotations

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.api.resourcetypes import ResourceType
from minik8s.kubectl.sections import Writer, meta_of
from minik8s.kubectl.session import Session

#: ``helpTextForResourceQuotaScope``
SCOPE_HELP = {
    "Terminating": "Matches all pods that have an active deadline. These pods have a limited lifespan on a node "
                   "before being actively terminated by the system.",
    "NotTerminating": "Matches all pods that do not have an active deadline. These pods usually include long running "
                      "pods whose container command is not expected to terminate.",
    "BestEffort": "Matches all pods that do not have resource requirements set. These pods have a best effort "
                  "quality of service.",
    "NotBestEffort": "Matches all pods that have at least one resource requirement set. These pods have a burstable "
                     "or guaranteed quality of service.",
}


def _scope_lines(w: Writer, level: int, spec: Obj, lead: str) -> None:
    scopes = sorted(spec.get("scopes") or [])
    if scopes:
        w.write(level, f"Scopes:\t{', '.join(scopes)}")
        for scope in scopes:
            if scope in SCOPE_HELP:
                w.write(level, f"{lead}* {SCOPE_HELP[scope]}")


def _limit_rows(lr: Obj, lead: str) -> list[str]:
    """One row per limit type and resource: min, max, default request, default limit, ratio (``-``
    when unset); resources by name (kubectl's order is a Go map's, random)."""
    fields = ("min", "max", "defaultRequest", "default", "maxLimitRequestRatio")
    rows: list[str] = []
    for item in (lr.get("spec") or {}).get("limits") or []:
        for name in sorted({name for fld in fields for name in item.get(fld) or {}}):
            values = [(item.get(fld) or {}).get(name) or "-" for fld in fields]
            rows.append(lead + "\t".join([str(item.get("type") or ""), name, *values]))
    return rows


async def namespace_sections(s: Session, namespace: str) -> tuple[list[Obj] | None, list[Obj] | None]:
    """The namespace's ResourceQuotas and LimitRanges, each None when the server does not serve them
    (kubectl then prints no section)."""
    found: list[list[Obj] | None] = []
    for kind in ("ResourceQuota", "LimitRange"):
        try:
            rt = s.registry.by_kind("v1", kind)
            listed = await s.client.list_all(rt, namespace) if rt is not None else None
        except errors.APIError:
            listed = None
        found.append(list(listed.get("items") or []) if listed is not None else None)
    return found[0], found[1]


def write_namespace_quotas(w: Writer, quotas: list[Obj]) -> None:
    """``DescribeResourceQuotas``: each quota by name, its scopes and ``Resource Used Hard``."""
    if not quotas:
        w.write(0, "No resource quota.")
        return
    w.write(0, "Resource Quotas")
    for rq in sorted(quotas, key=lambda o: str(meta_of(o).get("name") or "")):
        w.write(1, f"Name:\t{meta_of(rq).get('name', '')}")
        _scope_lines(w, 1, rq.get("spec") or {}, "")
        w.write(1, "Resource\tUsed\tHard")
        w.write(1, "--------\t---\t---")
        status = rq.get("status") or {}
        hard, used = status.get("hard") or {}, status.get("used") or {}
        for name in sorted(hard):
            w.write(1, f"{name}\t{used.get(name) or '0'}\t{hard[name]}")


def write_namespace_limits(w: Writer, ranges: list[Obj]) -> None:
    """``DescribeLimitRanges``: every LimitRange's rows in one table."""
    if not ranges:
        w.write(0, "No LimitRange resource.")
        return
    w.write(0, "Resource Limits")
    w.write(0, " Type\tResource\tMin\tMax\tDefault Request\tDefault Limit\tMax Limit/Request Ratio")
    w.write(0, " ----\t--------\t---\t---\t---------------\t-------------\t-----------------------")
    for lr in ranges:
        for row in _limit_rows(lr, " "):
            w.write(0, row)


async def describe_quota(s: Session, rt: ResourceType, rq: Obj) -> str:
    """Name, namespace, the scopes with their help text, then ``Resource Used Hard`` of each
    ``status.hard`` resource by name."""
    meta, spec, status = meta_of(rq), rq.get("spec") or {}, rq.get("status") or {}
    w = Writer()
    w.write(0, f"Name:\t{meta.get('name', '')}")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}")
    _scope_lines(w, 0, spec, " ")
    w.write(0, "Resource\tUsed\tHard")
    w.write(0, "--------\t----\t----")
    hard, used = status.get("hard") or {}, status.get("used") or {}
    for name in sorted(hard):
        w.write(0, f"{name}\t{used.get(name) or '0'}\t{hard[name]}")
    return w.text()


async def describe_limit_range(s: Session, rt: ResourceType, lr: Obj) -> str:
    """Name, namespace, then the limits table (:func:`_limit_rows`)."""
    meta = meta_of(lr)
    w = Writer()
    w.write(0, f"Name:\t{meta.get('name', '')}")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}")
    w.write(0, "Type\tResource\tMin\tMax\tDefault Request\tDefault Limit\tMax Limit/Request Ratio")
    w.write(0, "----\t--------\t---\t---\t---------------\t-------------\t-----------------------")
    for row in _limit_rows(lr, ""):
        w.write(0, row)
    return w.text()
