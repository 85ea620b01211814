"""The ``ResourceQuota`` admission plugin (Kubernetes' ``plugin/pkg/admission/resourcequota`` and
``apiserver/pkg/admission/plugin/resourcequota``): a create in a namespace with ResourceQuotas is
charged to them, or refused.

For every quota of the namespace whose ``status.hard`` names a resource the object is charged for
(:func:`minik8s.api.quota.matching_resources`) and whose scopes select it:

- a pod must set every cpu/memory resource the quota limits in each container: 403 ``failed quota:
  <name>: must specify limits.cpu for: a,b``;
- a quota whose ``status.used`` misses a limited resource: 403 ``status unknown for quota: <name>,
  resources: <names>`` (the quota controller has not counted yet);
- the object's usage added to ``status.used`` must stay within ``status.hard``: 403 ``exceeded
  quota: <name>, requested: pods=1, used: pods=2, limited: pods=2``.

When every quota allows it the new ``status.used`` is written before the object is created, each
quota by a compare-and-swap on its resourceVersion; a conflict (another create charged it, or the
quota controller recounted) reads the quotas again and decides again, so concurrent creates never
pass a quota together.  A quota that was never synced (no ``status.hard``) limits nothing, as in
Kubernetes.  A create that fails after the charge leaves it in place until the quota controller
recounts (:mod:`minik8s.controllers.resourcequota`).  Dry runs are checked, never charged.
"""

from __future__ import annotations

import copy
import datetime as dt
from typing import Any

from minik8s.api import errors
from minik8s.api import quota as q
from minik8s.api.base import Obj
from minik8s.api.resourcetypes import ResourceType
from minik8s.apiserver.limitranger import forbidden

PLUGIN_NAME = "ResourceQuota"
#: how many times a conflicting charge is decided again
RETRIES = 10


def check(quotas: list[Obj], rt: ResourceType, obj: Obj, now: dt.datetime | None = None) -> list[Obj]:
    """``CheckRequest`` for a create: the quotas whose ``status.used`` changes, already changed
    (copies).  Raises 403 Forbidden as the module doc says."""
    group, plural = rt.group, rt.plural
    interesting: list[tuple[Obj, set[str]]] = []
    for rq in quotas:
        if not q.quota_matches(rq, group, plural, obj):
            continue
        name = (rq.get("metadata") or {}).get("name", "")
        status = rq.get("status") or {}
        restricted = q.matching_resources(group, plural, list((status.get("hard") or {}).keys()))
        if (group, plural) == ("", "pods"):
            message = q.pod_constraints(obj, restricted)
            if message:
                raise forbidden(rt, obj, [f"failed quota: {name}: {message}"])
        missing = sorted(r for r in restricted if r not in (status.get("used") or {}))
        if missing:
            raise forbidden(rt, obj, [f"status unknown for quota: {name}, resources: {','.join(missing)}"])
        interesting.append((rq, restricted))
    if not interesting:
        return []
    delta = {k: v for k, v in q.object_usage(group, plural, obj, now).items() if v.value != 0}
    negative = sorted(k for k, v in delta.items() if v.value < 0)
    if negative:
        raise forbidden(rt, obj, [f"quota usage is negative for resource(s): {','.join(negative)}"])
    changed: list[Obj] = []
    for rq, _ in interesting:
        status = rq.get("status") or {}
        hard = q.parse_list(status.get("hard"))
        used = q.parse_list(status.get("used"))
        requested = q.mask(delta, set(hard))
        if not requested:
            continue
        new_used = q.add(used, requested)
        exceeded = sorted(k for k in requested if new_used[k].value > hard[k].value)
        if exceeded:
            name = (rq.get("metadata") or {}).get("name", "")
            raise forbidden(rt, obj, [
                f"exceeded quota: {name}, requested: {q.pretty(q.mask(requested, exceeded))}, "
                f"used: {q.pretty(q.mask(used, exceeded))}, limited: {q.pretty(q.mask(hard, exceeded))}"])
        out = copy.deepcopy(rq)
        out.setdefault("status", {})["used"] = dict(status.get("used") or {}) | {k: str(new_used[k]) for k in requested}
        changed.append(out)
    return changed


def handles(rt: ResourceType) -> bool:
    """Namespaced kinds; events are never charged (kube-apiserver's default ignored resources)."""
    return rt.namespaced and not (rt.plural == "events" and rt.group in ("", "events.k8s.io"))


async def admit(api: Any, rt: ResourceType, obj: Obj, dry_run: bool) -> None:
    """Charge ``obj`` (being created) to its namespace's quotas, or raise 403 (``api``: the
    ResourceAPI).  Conflicting charges are decided again up to :data:`RETRIES` times; then the
    conflict is the answer (409), as Kubernetes' quota evaluator gives up."""
    namespace = (obj.get("metadata") or {}).get("namespace")
    if not namespace or not handles(rt):
        return
    quota_rt = api.registry.by_kind("v1", "ResourceQuota")
    last: errors.APIError | None = None
    for _ in range(RETRIES):
        quotas, _, _ = await api.store.list(quota_rt.storage_prefix(namespace))
        changed = check(list(quotas), rt, obj)
        if dry_run or not changed:
            return
        try:
            for rq in changed:
                meta = rq["metadata"]
                await api.store.update(quota_rt.storage_key(namespace, meta["name"]), rq,
                                       int(meta["resourceVersion"]))
            return
        except (errors.Conflict, errors.NotFound) as exc:
            last = exc
            continue
    raise errors.Conflict(
        f'Operation cannot be fulfilled on resourcequotas: {last.message if last else "conflict"}')


__all__ = ["PLUGIN_NAME", "admit", "check", "handles"]
