"""Owner references: who controls an object, adoption and release (Kubernetes' ``ControllerRefManager``).

A controller (ReplicaSet, Deployment) *claims* the objects its selector matches: those it
already controls stay claimed, matching orphans (no controller ownerReference) are
*adopted* by adding an ownerReference to the controller, and objects it controls whose
labels no longer match are *released* by removing that ownerReference.  A controller being
deleted adopts and releases nothing.  Writes are compare-and-swap on resourceVersion after
a fresh read, retried a few times on 409 Conflict, so a concurrent status write never
loses an ownerReference change and vice versa.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.api.resourcetypes import ResourceType
from minik8s.api.selectors import LabelSelector, workload_selector
from minik8s.client.informer import NAMESPACE_INDEX, Informer
from minik8s.client.rest import Client

log = logging.getLogger("controller-manager")
RefList = list[Obj]


def meta_of(obj: Obj) -> Obj:
    """``obj["metadata"]`` (an empty dict when missing)."""
    return obj.get("metadata") or {}


def controller_ref(obj: Obj) -> Obj | None:
    """The ownerReference with ``controller: true``, or None (``metav1.GetControllerOf``)."""
    for ref in meta_of(obj).get("ownerReferences") or []:
        if ref.get("controller"):
            return dict(ref)
    return None


def spec_selector(obj: Obj) -> LabelSelector | None:
    """A controller's parsed ``spec.selector``; None when it is invalid or empty (an empty
    selector would select everything, so the controller selects nothing)."""
    try:
        selector = workload_selector(obj)
    except ValueError:
        return None
    return None if selector.is_empty() else selector


def selecting_controllers(cache: Informer, obj: Obj) -> list[Obj]:
    """The cached controllers (indexed by namespace) in ``obj``'s namespace whose selector
    matches its labels — who may adopt it as an orphan.  An object without labels has none
    (Kubernetes' ``GetPodReplicaSets`` / ``getDeploymentsForReplicaSet``)."""
    meta = meta_of(obj)
    labels = meta.get("labels") or {}
    if not labels:
        return []
    found = []
    for owner in cache.by_index(NAMESPACE_INDEX, meta.get("namespace") or ""):
        selector = spec_selector(owner)
        if selector is not None and selector.matches(labels):
            found.append(owner)
    return found


def resolve_controller_ref(cache: Informer, namespace: str, ref: Obj, kind: str, group: str = "apps") -> Obj | None:
    """The cached object a controller ownerReference points at, or None: the reference must
    name ``kind`` of API group ``group`` (``""``: the core group) and the cached object of that
    name in ``namespace`` must have the reference's uid (Kubernetes' ``resolveControllerRef``; a
    recreated object of the same name is not the owner)."""
    ref_group = str(ref.get("apiVersion") or "").rpartition("/")[0]
    if ref.get("kind") != kind or ref_group != group:
        return None
    obj = cache.get(f"{namespace}/{ref.get('name')}")
    if obj is None or meta_of(obj).get("uid") != ref.get("uid"):
        return None
    return obj


def new_controller_ref(owner: Obj, api_version: str, kind: str) -> Obj:
    """An ownerReference making ``owner`` the controller, blocking its foreground deletion."""
    meta = meta_of(owner)
    return {"apiVersion": api_version, "kind": kind, "name": meta.get("name"), "uid": meta.get("uid"),
            "controller": True, "blockOwnerDeletion": True}


async def update_metadata_list(client: Client, rt: ResourceType, namespace: str | None, name: str, uid: str,
                               field: str, mutate: Callable[[RefList], RefList | None],
                               attempts: int = 5) -> Obj | None:
    """Read the live object, apply ``mutate`` to ``metadata.<field>`` (a list) and write it back.

    ``mutate`` gets a copy of the current list and returns the new one, or None to leave the
    object alone.  The write is a merge patch carrying the read resourceVersion (409 on a
    concurrent change, then re-read and retried up to ``attempts`` times).  Returns the
    written (or unchanged) object, or None when the object is gone or was replaced by one
    with another uid.  Raises other API errors, and Conflict after the last attempt.
    """
    for attempt in range(attempts):
        try:
            live = await client.get(rt, name, namespace)
        except errors.NotFound:
            return None
        meta = meta_of(live)
        if meta.get("uid") != uid:
            return None
        current = [dict(x) if isinstance(x, dict) else x for x in meta.get(field) or []]
        wanted = mutate(list(current))
        if wanted is None or wanted == current:
            return live
        patch = {"metadata": {"resourceVersion": meta.get("resourceVersion"), field: wanted or None}}
        try:
            return await client.patch(rt, name, patch, namespace)
        except errors.NotFound:
            return None
        except errors.Conflict:
            if attempt == attempts - 1:
                raise
    return None


async def adopt(client: Client, rt: ResourceType, obj: Obj, ref: Obj) -> Obj | None:
    """Add controller ownerReference ``ref`` to ``obj`` unless it has a controller meanwhile.

    Returns the updated object, or None when ``obj`` is gone.  Raises Conflict when another
    controller adopted it first.
    """
    meta = meta_of(obj)

    def add(refs: RefList) -> RefList | None:
        if any(r.get("uid") == ref["uid"] for r in refs):
            return None
        if any(r.get("controller") for r in refs):
            raise errors.Conflict(f"{rt.kind} {meta.get('name')} already has a controller")
        return refs + [dict(ref)]

    return await update_metadata_list(client, rt, meta.get("namespace"), meta.get("name") or "",
                                      meta.get("uid") or "", "ownerReferences", add)


async def remove_owner_refs(client: Client, rt: ResourceType, obj: Obj, owner_uids: set[str]) -> Obj | None:
    """Remove every ownerReference of ``obj`` that points at one of ``owner_uids`` (release/orphan)."""
    meta = meta_of(obj)
    return await update_metadata_list(
        client, rt, meta.get("namespace"), meta.get("name") or "", meta.get("uid") or "", "ownerReferences",
        lambda refs: [r for r in refs if r.get("uid") not in owner_uids])


async def claim(client: Client, rt: ResourceType, owner: Obj, owner_ref: Obj, selector: LabelSelector,
                candidates: list[Obj], can_adopt: Callable[[], Awaitable[bool]]) -> tuple[list[Obj], list[Exception]]:
    """Claim ``candidates`` (same-namespace objects of kind ``rt``) for ``owner``.

    Kubernetes' ``ClaimObject`` rules, per object:

    * controlled by another owner → ignored;
    * controlled by ``owner`` → claimed if ``selector`` matches its labels, else released
      (unless ``owner`` is being deleted);
    * orphan whose labels match, not being deleted, while ``owner`` is not being deleted →
      adopted if ``can_adopt()`` (a fresh read confirming the owner still exists with its uid;
      asked once) says so.

    Returns the claimed objects and the errors of failed adoptions/releases (the caller
    should retry later when there are any).
    """
    owner_meta = meta_of(owner)
    owner_uid = owner_meta.get("uid")
    owner_deleting = bool(owner_meta.get("deletionTimestamp"))
    claimed: list[Obj] = []
    failures: list[Exception] = []
    adoption_allowed: bool | None = None
    for obj in candidates:
        meta = meta_of(obj)
        ref = controller_ref(obj)
        matches = selector.matches(meta.get("labels") or {})
        if ref is not None:
            if ref.get("uid") != owner_uid:
                continue
            if matches:
                claimed.append(obj)
                continue
            if owner_deleting:
                continue
            try:
                await remove_owner_refs(client, rt, obj, {owner_uid or ""})
                log.info("%s %s/%s released %s %s", owner.get("kind") or "owner", owner_meta.get("namespace"),
                         owner_meta.get("name"), rt.kind, meta.get("name"))
            except errors.APIError as exc:
                failures.append(exc)
            continue
        if owner_deleting or not matches or meta.get("deletionTimestamp"):
            continue
        if meta.get("namespace") != owner_meta.get("namespace"):
            continue
        if adoption_allowed is None:
            adoption_allowed = await can_adopt()
        if not adoption_allowed:
            continue
        try:
            adopted = await adopt(client, rt, obj, owner_ref)
        except errors.APIError as exc:
            failures.append(exc)
            continue
        if adopted is not None:
            log.info("%s %s/%s adopted %s %s", owner.get("kind") or "owner", owner_meta.get("namespace"),
                     owner_meta.get("name"), rt.kind, meta.get("name"))
            claimed.append(adopted)
    return claimed, failures


def recheck_owner(client: Client, rt: ResourceType, owner: Obj) -> Callable[[], Awaitable[bool]]:
    """A ``can_adopt`` callback: a fresh GET of ``owner`` shows the same uid and no deletionTimestamp
    (Kubernetes' ``RecheckDeletionTimestamp``)."""
    meta = meta_of(owner)

    async def check() -> bool:
        try:
            fresh = await client.get(rt, meta.get("name") or "", meta.get("namespace"))
        except errors.NotFound:
            return False
        fmeta = meta_of(fresh)
        return fmeta.get("uid") == meta.get("uid") and not fmeta.get("deletionTimestamp")

    return check
