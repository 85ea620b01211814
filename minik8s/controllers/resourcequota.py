"""The resource quota controller: keeps every ResourceQuota's ``status`` (Kubernetes'
``pkg/controller/resourcequota``).

A sync sets ``status.hard`` to ``spec.hard`` and ``status.used`` to the usage of the namespace's
live objects, for each hard resource (0 when nothing is charged): pods not terminal (``pods``,
requests, limits) or any (``count/pods``), Services, claims, ConfigMaps, Secrets,
ReplicationControllers, ResourceQuotas, and any other kind a ``count/<resource>.<group>`` names
(:func:`minik8s.api.quota.object_usage`); a scoped quota counts only the pods its scopes select.
The status is written with the quota's resourceVersion, so a charge the apiserver's admission made
meanwhile is never lost: the write conflicts and the sync runs again.

As Kubernetes' controller, a quota is synced when it is created or its ``spec.hard`` changes (not on
the charges admission writes), when an object it may count is deleted, when a pod turns terminal
or a Service's or claim's usage changes (usage is *replenished*), and every ``resync`` seconds
(``--resource-quota-sync-period``, 5 minutes).  Objects are read from shared informers; the kinds
only ``count/`` names reach are watched from the first quota that names them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from minik8s.api import errors
from minik8s.api import quota as q
from minik8s.api.base import Obj, object_key
from minik8s.api.resourcetypes import ResourceType
from minik8s.client.events import EventRecorder
from minik8s.client.factory import SharedInformerFactory
from minik8s.client.informer import Informer
from minik8s.client.rest import Client
from minik8s.controllers.base import Controller
from minik8s.controllers.ownerrefs import meta_of

#: ``--resource-quota-sync-period``: every quota is recounted this often (seconds)
RESYNC_PERIOD = 300.0
#: the kinds watched from the start (the evaluators Kubernetes registers)
WATCHED = (("v1", "Pod"), ("v1", "Service"), ("v1", "PersistentVolumeClaim"), ("v1", "ConfigMap"),
           ("v1", "Secret"), ("v1", "ReplicationController"))


class ResourceQuotaController(Controller):
    """Computes ResourceQuota statuses from the namespace's objects (module doc)."""

    name = "resourcequota-controller"

    def __init__(self, client: Client, factory: SharedInformerFactory, recorder: EventRecorder | None = None,
                 resync: float = RESYNC_PERIOD, clock: Callable[[], dt.datetime] | None = None) -> None:
        super().__init__(client, factory, recorder)
        self.resync = resync
        self.clock = clock or (lambda: dt.datetime.now(dt.UTC))
        self.quota_rt = client.kind("v1", "ResourceQuota")
        self.quotas = factory.informer(self.quota_rt)
        self.quotas.add_handler(self._on_quota, self._on_quota_update, None)
        self.watched: dict[tuple[str, str], Informer] = {(self.quota_rt.group, self.quota_rt.plural): self.quotas}
        self.quotas.add_handler(None, None, self._on_object_deleted)
        for api_version, kind in WATCHED:
            self._watch(client.kind(api_version, kind))

    def _watch(self, rt: ResourceType) -> Informer:
        informer = self.watched.get((rt.group, rt.plural))
        if informer is None:
            informer = self.factory.informer(rt)
            self.watched[(rt.group, rt.plural)] = informer
            informer.add_handler(None, lambda old, cur: self._on_object_update(rt, old, cur),
                                 self._on_object_deleted)
        return informer

    # ------------------------------------------------------------------ events
    def _on_quota(self, rq: Obj) -> None:
        self.enqueue(object_key(rq))

    def _on_quota_update(self, old: Obj, cur: Obj) -> None:
        """Only a change of ``spec.hard`` (or a status that does not show it) needs a recount."""
        hard = (cur.get("spec") or {}).get("hard") or {}
        if hard != ((old.get("spec") or {}).get("hard") or {}) or hard != ((cur.get("status") or {}).get("hard") or {}):
            self.enqueue(object_key(cur))

    def _replenish(self, namespace: str) -> None:
        for rq in self.quotas.list():
            if meta_of(rq).get("namespace") == namespace:
                self.enqueue(object_key(rq))

    def _on_object_deleted(self, obj: Obj) -> None:
        self._replenish(str(meta_of(obj).get("namespace") or ""))

    def _on_object_update(self, rt: ResourceType, old: Obj, cur: Obj) -> None:
        now = self.clock()
        if q.object_usage(rt.group, rt.plural, old, now) != q.object_usage(rt.group, rt.plural, cur, now):
            self._replenish(str(meta_of(cur).get("namespace") or ""))

    # ------------------------------------------------------------------ sync
    async def sync(self, key: str) -> None:
        rq = self.quotas.get(key)
        if rq is None:
            return
        try:
            await self._sync(rq)
        finally:
            self.enqueue_after(key, self.resync)

    def _informer_for(self, group: str, plural: str) -> Informer | None:
        found = self.watched.get((group, plural))
        if found is not None:
            return found
        rt = self.client.registry.resolve(f"{plural}.{group}" if group else plural)
        if rt is None or not rt.namespaced or rt.group != group or rt.plural != plural:
            return None
        informer = self._watch(rt)
        self.factory.start()
        return informer

    async def _sync(self, rq: Obj) -> None:
        namespace = str(meta_of(rq).get("namespace") or "")
        hard = dict((rq.get("spec") or {}).get("hard") or {})
        names = set(hard)
        kinds: set[tuple[str, str]] = {("", "pods"), ("", "services"), ("", "persistentvolumeclaims")}
        kinds |= set(q.LEGACY_COUNTS)
        for name in names:
            if name.startswith("count/"):
                plural, _, group = name[len("count/"):].partition(".")
                kinds.add((group, plural))
        now = self.clock()
        used: q.Usage = {}
        counted: set[str] = set()
        scopes = q.scope_selectors(rq)
        for group, plural in sorted(kinds):
            matched = q.matching_resources(group, plural, names)
            if not matched:
                continue
            informer = self._informer_for(group, plural)
            if informer is None:
                continue
            if not informer.has_synced():
                await informer.wait_synced()
            counted |= matched
            used |= {name: q.ZERO for name in matched if name not in used}
            for obj in informer.list():
                if meta_of(obj).get("namespace") != namespace:
                    continue
                if scopes and ((group, plural) != ("", "pods") or
                               not all(q.pod_matches_scope(req, obj) for req in scopes)):
                    continue
                used = q.add(used, q.mask(q.object_usage(group, plural, obj, now), matched))
        old = rq.get("status") or {}
        # what no kind here is charged for keeps the usage it had (Kubernetes: no evaluator, no count)
        status_used = {name: str(used[name]) if name in counted else (old.get("used") or {}).get(name)
                       for name in sorted(names)}
        status_used = {k: v for k, v in status_used.items() if v is not None}
        new_hard = q.canonical_list(hard) or {}
        if old.get("hard") == new_hard and (old.get("used") or {}) == status_used:
            return
        try:
            await self.client.update_status(self.quota_rt, {**rq, "status": {"hard": new_hard, "used": status_used}})
        except errors.NotFound:
            return
