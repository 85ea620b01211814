"""The garbage collector: delete dependents whose owners are gone, honour Foreground and Orphan deletion.

Kubernetes' ``pkg/controller/garbagecollector`` semantics over shared informers of every
kind the registry serves with list, watch and delete (Events excepted, as in Kubernetes),
each indexed by the uids its ``metadata.ownerReferences`` point at:

* **Background** (the default): the owner is removed at once.  A dependent whose every
  ownerReference points at an owner that no longer exists — checked by uid, so a new
  object with the old name is a different owner — is deleted (with the propagation its
  own GC finalizers ask for, else Background).  References to absent owners of a
  dependent that still has a live owner are removed instead.
* **Foreground**: the apiserver set ``deletionTimestamp`` and the ``foregroundDeletion``
  finalizer on the owner.  Its dependents are deleted (with Foreground themselves when
  they have dependents, so it cascades); once no dependent with
  ``blockOwnerDeletion: true`` remains, the finalizer is removed and the apiserver removes
  the owner.
* **Custom resources** are watched from the moment their CustomResourceDefinition is Established
  until it goes, so they own and are owned like built-in kinds.
* **Orphan**: finalizer ``orphan``: the ownerReference to the owner is removed from every
  dependent (found with live lists as well as the caches, which may lag), then the finalizer.

Owner existence is read from the caches, and confirmed with a live GET before anything is
deleted (uids of owners found absent are remembered: uids are never reused).  Work items
are keys ``<apiVersion>|<kind>|<namespace>/<name>``.
"""

from __future__ import annotations

from typing import Any

from minik8s.api import errors
from minik8s.api.base import Obj, object_key
from minik8s.api.registry import crd_resource
from minik8s.api.resourcetypes import ResourceType
from minik8s.client.events import EventRecorder
from minik8s.client.factory import SharedInformerFactory
from minik8s.client.informer import Informer
from minik8s.client.rest import Client
from minik8s.controllers.base import Controller
from minik8s.controllers.ownerrefs import meta_of, remove_owner_refs, update_metadata_list

OWNER_UID_INDEX = "ownerUID"
FOREGROUND = "foregroundDeletion"
ORPHAN = "orphan"
#: (group, kind) the collector never watches (Kubernetes ignores events too).
IGNORED_KINDS = frozenset({("", "Event")})
_ABSENT_CACHE_SIZE = 10000


def owner_uids(obj: Obj) -> list[str]:
    """Index function: the uids every ownerReference of ``obj`` points at."""
    return [str(r["uid"]) for r in meta_of(obj).get("ownerReferences") or [] if r.get("uid")]


def _gc_finalizers(obj: Obj) -> set[str]:
    return {f for f in meta_of(obj).get("finalizers") or [] if f in (FOREGROUND, ORPHAN)}


def _needs_attention(obj: Obj) -> bool:
    meta = meta_of(obj)
    return bool(meta.get("ownerReferences")) or (bool(meta.get("deletionTimestamp")) and bool(_gc_finalizers(obj)))


def _deleting_dependents(obj: Obj) -> bool:
    return bool(meta_of(obj).get("deletionTimestamp")) and FOREGROUND in (meta_of(obj).get("finalizers") or [])


class GarbageCollector(Controller):
    """Collects dependents by ownerReferences across every watched kind."""

    name = "garbage-collector"

    def __init__(self, client: Client, factory: SharedInformerFactory, recorder: EventRecorder | None = None) -> None:
        super().__init__(client, factory, recorder)
        self.kinds: dict[tuple[str, str], ResourceType] = {}
        self.informers: dict[tuple[str, str], Informer] = {}
        self._absent: set[str] = set()
        #: CRD name → the custom resource row watched for it (Kubernetes' GC follows discovery;
        #: here the CRDs themselves say when a kind comes and goes)
        self.custom: dict[str, ResourceType] = {}
        for rt in client.registry.types:
            if (rt.group, rt.kind) in IGNORED_KINDS or not {"list", "watch", "delete"} <= set(rt.verbs):
                continue
            self._monitor(rt)
        crd_rt = client.registry.by_kind("apiextensions.k8s.io/v1", "CustomResourceDefinition")
        if crd_rt is not None:
            factory.informer(crd_rt).add_handler(self._crd_changed, lambda _old, cur: self._crd_changed(cur),
                                                 self._crd_deleted)

    def _monitor(self, rt: ResourceType) -> None:
        """Watch ``rt``'s objects, indexed by the uids of their owners."""
        ident = (rt.api_version, rt.kind)
        informer = self.factory.informer(rt, {OWNER_UID_INDEX: owner_uids})
        self.kinds[ident] = rt
        self.informers[ident] = informer
        on_add, on_update, on_delete = self._handlers(rt)
        informer.add_handler(on_add, on_update, on_delete)

    def _crd_changed(self, crd: Obj) -> None:
        """An Established CRD's custom resources are watched (as owners and as dependents) from now on."""
        name = str(meta_of(crd).get("name") or "")
        rt = crd_resource(crd)
        if rt is None or self.custom.get(name) == rt:
            return
        self._crd_deleted(crd)
        if (rt.api_version, rt.kind) in self.kinds:
            return  # a built-in kind's names (the apiserver does not establish such a CRD)
        self.custom[name] = rt
        self._monitor(rt)
        self.factory.start()
        self.log.info("garbage-collector watching %s (CustomResourceDefinition %s)", rt.kind, name)

    def _crd_deleted(self, crd: Obj) -> None:
        rt = self.custom.pop(str(meta_of(crd).get("name") or ""), None)
        if rt is not None:
            ident = (rt.api_version, rt.kind)
            self.kinds.pop(ident, None)
            self.informers.pop(ident, None)
            self.factory.stop(rt)

    # ================================================================== keys and lookups
    @staticmethod
    def key_for(rt: ResourceType, obj: Obj) -> str:
        """The work-queue key of ``obj``: ``apiVersion|kind|namespace/name``."""
        return f"{rt.api_version}|{rt.kind}|{object_key(obj)}"

    def _parse(self, key: str) -> tuple[ResourceType, Informer, str] | None:
        api_version, kind, okey = key.split("|", 2)
        ident = (api_version, kind)
        if ident not in self.kinds:
            return None
        return self.kinds[ident], self.informers[ident], okey

    def dependents(self, uid: str) -> list[tuple[ResourceType, Obj]]:
        """Every cached object with an ownerReference to ``uid``."""
        out: list[tuple[ResourceType, Obj]] = []
        for ident, informer in self.informers.items():
            out += [(self.kinds[ident], obj) for obj in informer.by_index(OWNER_UID_INDEX, uid)]
        return out

    def _cached_owner(self, namespace: str, ref: Obj) -> tuple[ResourceType, Obj] | None:
        ident = (str(ref.get("apiVersion") or ""), str(ref.get("kind") or ""))
        rt = self.kinds.get(ident)
        if rt is None:
            return None
        owner = self.informers[ident].get(f"{namespace}/{ref.get('name')}" if rt.namespaced else str(ref.get("name")))
        if owner is None or meta_of(owner).get("uid") != ref.get("uid"):
            return None
        return rt, owner

    # ================================================================== event handlers
    def _handlers(self, rt: ResourceType) -> tuple[Any, Any, Any]:
        def on_add(obj: Obj) -> None:
            if _needs_attention(obj):
                self.enqueue(self.key_for(rt, obj))

        def on_update(old: Obj, cur: Obj) -> None:
            om, cm = meta_of(old), meta_of(cur)
            resync = om.get("resourceVersion") == cm.get("resourceVersion")
            refs_changed = om.get("ownerReferences") != cm.get("ownerReferences")
            changed = resync or refs_changed or om.get("deletionTimestamp") != cm.get("deletionTimestamp") \
                or om.get("finalizers") != cm.get("finalizers")
            if changed and _needs_attention(cur):
                self.enqueue(self.key_for(rt, cur))
            if refs_changed:
                self._enqueue_deleting_owners(old)

        def on_delete(obj: Obj) -> None:
            uid = meta_of(obj).get("uid")
            if uid:
                for drt, dep in self.dependents(str(uid)):
                    self.enqueue(self.key_for(drt, dep))
            self._enqueue_deleting_owners(obj)

        return on_add, on_update, on_delete

    def _enqueue_deleting_owners(self, obj: Obj) -> None:
        """Owners of ``obj`` waiting for their dependents (Foreground) re-check their blockers."""
        namespace = meta_of(obj).get("namespace") or ""
        for ref in meta_of(obj).get("ownerReferences") or []:
            found = self._cached_owner(namespace, ref)
            if found is not None and _deleting_dependents(found[1]):
                self.enqueue(self.key_for(*found))

    # ================================================================== sync
    async def sync(self, key: str) -> None:
        """Process one object: finish its Foreground/Orphan deletion, or collect it if its owners are gone."""
        parsed = self._parse(key)
        if parsed is None:
            return
        rt, informer, okey = parsed
        obj = informer.get(okey)
        if obj is None:
            return
        meta = meta_of(obj)
        if meta.get("deletionTimestamp"):
            finalizers = meta.get("finalizers") or []
            if ORPHAN in finalizers:
                await self._orphan_dependents(rt, obj)
            elif FOREGROUND in finalizers:
                await self._process_deleting_dependents(rt, obj)
            return
        if not meta.get("ownerReferences"):
            return
        solid, dangling, waiting = await self._classify(rt, obj, cached_only=True)
        if not dangling and not waiting:
            return
        try:  # act on the live object, never on a possibly stale cache entry
            latest = await self.client.get(rt, meta.get("name") or "", meta.get("namespace"))
        except errors.NotFound:
            return
        if meta_of(latest).get("uid") != meta.get("uid") or meta_of(latest).get("deletionTimestamp"):
            return
        if not meta_of(latest).get("ownerReferences"):
            return
        solid, dangling, waiting = await self._classify(rt, latest, cached_only=False)
        await self._collect(rt, latest, solid, dangling, waiting)

    async def _collect(self, rt: ResourceType, obj: Obj, solid: list[Obj], dangling: list[Obj],
                       waiting: list[Obj]) -> None:
        """``attemptToDeleteItem``'s decision for a dependent with classified owner references."""
        meta = meta_of(obj)
        uid = str(meta.get("uid") or "")
        if solid:
            if dangling or waiting:
                gone = {str(r.get("uid")) for r in dangling + waiting}
                await remove_owner_refs(self.client, rt, obj, gone)
                self.log.info("garbage-collector %s %s: removed ownerReferences to %s (other owners remain)",
                              rt.kind, object_key(obj), ",".join(sorted(gone)))
            return
        if not dangling and not waiting:
            return
        if waiting and self.dependents(uid):
            for drt, dep in self.dependents(uid):
                if _deleting_dependents(dep):  # a cycle: let that dependent go first
                    await remove_owner_refs(self.client, drt, dep, {uid})
            await self._delete(rt, obj, "Foreground")
            return
        finalizers = _gc_finalizers(obj)
        policy = "Orphan" if ORPHAN in finalizers else "Foreground" if FOREGROUND in finalizers else "Background"
        await self._delete(rt, obj, policy)

    async def _classify(self, rt: ResourceType, obj: Obj, cached_only: bool) -> tuple[list[Obj], list[Obj], list[Obj]]:
        """Split ``obj``'s ownerReferences into (solid, dangling, waitingForDependentsDeletion).

        With ``cached_only`` an owner missing from the cache counts as dangling without a
        live check (only used to decide whether a live check is worth doing).
        """
        solid: list[Obj] = []
        dangling: list[Obj] = []
        waiting: list[Obj] = []
        namespace = meta_of(obj).get("namespace") or ""
        for ref in meta_of(obj).get("ownerReferences") or []:
            state = await self._owner_state(rt, namespace, ref, cached_only)
            {"solid": solid, "dangling": dangling, "waiting": waiting}[state].append(ref)
        return solid, dangling, waiting

    async def _owner_state(self, rt: ResourceType, namespace: str, ref: Obj, cached_only: bool) -> str:
        uid = str(ref.get("uid") or "")
        if uid in self._absent:
            return "dangling"
        ident = (str(ref.get("apiVersion") or ""), str(ref.get("kind") or ""))
        owner_rt = self.kinds.get(ident)
        if owner_rt is None:
            try:  # another served version of a watched kind, or a custom resource not watched yet
                owner_rt = await self.client.discover_kind(ident[0], ident[1])
            except errors.NotFound:
                return "solid"  # a kind this apiserver does not serve: cannot be verified, never collected
        if owner_rt.namespaced and not rt.namespaced:
            return "solid"  # invalid (cluster-scoped dependent, namespaced owner): unresolvable
        found = self._cached_owner(namespace, ref)
        owner: Obj | None = found[1] if found is not None else None
        if owner is None:
            if cached_only:
                return "dangling"
            try:
                owner = await self.client.get(owner_rt, str(ref.get("name") or ""),
                                              namespace if owner_rt.namespaced else None)
            except errors.NotFound:
                owner = None
            if owner is None or meta_of(owner).get("uid") != uid:
                if len(self._absent) >= _ABSENT_CACHE_SIZE:
                    self._absent.clear()
                self._absent.add(uid)
                return "dangling"
        return "waiting" if _deleting_dependents(owner) else "solid"

    async def _delete(self, rt: ResourceType, obj: Obj, policy: str) -> None:
        meta = meta_of(obj)
        self.log.info("garbage-collector deleting %s %s propagationPolicy=%s (owners gone or deleting)",
                      rt.kind, object_key(obj), policy)
        try:
            await self.client.delete(rt, meta.get("name") or "", meta.get("namespace"), propagation_policy=policy,
                                     preconditions={"uid": meta.get("uid") or ""})
        except (errors.NotFound, errors.Conflict):
            pass  # already gone, or replaced by another object of the same name

    async def _process_deleting_dependents(self, rt: ResourceType, owner: Obj) -> None:
        """Foreground: delete the owner's dependents; drop ``foregroundDeletion`` once no blocker is left."""
        uid = str(meta_of(owner).get("uid") or "")
        deps = self.dependents(uid)
        blocking = 0
        for drt, dep in deps:
            ref: Obj = next((r for r in meta_of(dep).get("ownerReferences") or [] if r.get("uid") == uid), {})
            if ref.get("blockOwnerDeletion"):
                blocking += 1
            if not meta_of(dep).get("deletionTimestamp") or _deleting_dependents(dep):
                self.enqueue(self.key_for(drt, dep))
        if blocking:
            return
        await self._remove_finalizer(rt, owner, FOREGROUND)

    async def _live_dependents(self, owner_rt: ResourceType, owner: Obj) -> list[tuple[ResourceType, Obj]]:
        """Every object with an ownerReference to ``owner``, read live from the apiserver.

        The caches may not have seen a dependent created just before the owner's deletion;
        removing the ``orphan`` finalizer before that dependent is released would let it be
        collected as soon as its owner is gone.  A namespaced owner's dependents live in its
        namespace; a cluster-scoped owner's anywhere.
        """
        uid = str(meta_of(owner).get("uid") or "")
        namespace = meta_of(owner).get("namespace") if owner_rt.namespaced else None
        found: dict[tuple[str, str, str], tuple[ResourceType, Obj]] = {}
        for ident, drt in self.kinds.items():
            if namespace is not None and not drt.namespaced:
                continue
            for dep in (await self.client.list_all(drt, namespace)).get("items") or []:
                if uid in owner_uids(dep):
                    found[(ident[0], ident[1], object_key(dep))] = (drt, dep)
        for drt, dep in self.dependents(uid):
            found.setdefault((drt.api_version, drt.kind, object_key(dep)), (drt, dep))
        return list(found.values())

    async def _orphan_dependents(self, rt: ResourceType, owner: Obj) -> None:
        """Orphan: remove the ownerReference to the owner from every dependent (confirmed with
        live lists, not only the caches), then the ``orphan`` finalizer."""
        uid = str(meta_of(owner).get("uid") or "")
        for drt, dep in await self._live_dependents(rt, owner):
            await remove_owner_refs(self.client, drt, dep, {uid})
            self.log.info("garbage-collector orphaned %s %s from %s %s", drt.kind, object_key(dep), rt.kind,
                          object_key(owner))
        await self._remove_finalizer(rt, owner, ORPHAN)

    async def _remove_finalizer(self, rt: ResourceType, obj: Obj, finalizer: str) -> None:
        meta = meta_of(obj)
        await update_metadata_list(self.client, rt, meta.get("namespace"), meta.get("name") or "",
                                   str(meta.get("uid") or ""), "finalizers",
                                   lambda fins: [f for f in fins if f != finalizer])
        self.log.info("garbage-collector removed finalizer %s from %s %s", finalizer, rt.kind, object_key(obj))
