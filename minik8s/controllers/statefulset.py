"""The StatefulSet controller: pods with stable names, network identities and claims, in order.

Kubernetes' ``pkg/controller/statefulset`` semantics:

* **Identity**: replica ``i`` (ordinals ``ordinals.start`` .. ``start + replicas - 1``) is the pod
  ``<sts>-<i>`` with ``spec.hostname`` its name and ``spec.subdomain`` the ``serviceName`` (so the
  headless Service's Endpoints carry its hostname and DNS answers ``<sts>-<i>.<svc>.<ns>.svc``), and
  the labels ``statefulset.kubernetes.io/pod-name``, ``apps.kubernetes.io/pod-index`` and
  ``controller-revision-hash``.  A missing, Failed or Succeeded pod is deleted if present and made
  again under the same name.
* **Storage** (:func:`claim_name`, :func:`add_claim_volumes`, :meth:`StatefulSetController._ensure_claims`):
  each of ``volumeClaimTemplates`` becomes the claim ``<template>-<sts>-<i>``, created before the
  pod when missing and kept when the set scales down; the pod's volume of the template's name
  refers to it.  Claims are skipped, with a warning, when the apiserver serves no
  PersistentVolumeClaim kind.  ``whenDeleted: Delete`` gives the claims an ownerReference to the
  StatefulSet (the garbage collector deletes them with it).
* **OrderedReady** (the default ``podManagementPolicy``): ordinal ``i`` is created only when
  ``0 .. i-1`` are Running and Ready (and available, with ``minReadySeconds``); scaling down deletes
  the highest ordinal first, one at a time, waiting for each to go.  **Parallel** creates and
  deletes them all at once.
* **History** (``getStatefulSetRevisions``, ``truncateHistory``): one ControllerRevision per
  distinct template, ``<sts>-<hash of its data and collisionCount>`` with ``data`` the patch that
  restores the template (:mod:`~minik8s.controllers.history`).  The update revision is the
  newest revision when it matches the template, an older matching one renumbered above the rest
  (a rollback), or a new one; the current revision is the one ``status.currentRevision`` names
  (the update revision when none does).  Pods are labelled ``controller-revision-hash`` with
  their revision's name.  Revisions beyond ``revisionHistoryLimit`` (default 10) that are neither
  current, update, nor any pod's are deleted, oldest first.
* **Rolling update** (``updateStrategy.type: RollingUpdate``): from the highest ordinal down to
  ``rollingUpdate.partition``, one pod at a time, a pod of another revision is deleted (and made again at the update
  revision), waiting for each to be Running and Ready.  Pods below the partition are made at the
  current revision.  When every pod is updated and Ready, ``currentRevision`` becomes the update
  revision.  ``OnDelete`` replaces only pods the user deletes.  Pods below the partition are
  made from the current revision's data.
* **Status** through the ``status`` subresource: ``replicas``, ``readyReplicas``,
  ``availableReplicas``, ``currentReplicas``, ``updatedReplicas``, ``currentRevision``,
  ``updateRevision``, ``collisionCount``, ``observedGeneration``.
* **Events**: ``SuccessfulCreate`` / ``FailedCreate`` (``create Pod web-0 in StatefulSet web
  successful``), ``SuccessfulDelete`` / ``FailedDelete``, and the claims'.
"""

from __future__ import annotations

import copy
import datetime as dt
from collections.abc import Mapping
from typing import Any

from minik8s.api import errors
from minik8s.api.apps import StatefulSetView
from minik8s.api.base import Obj, object_key
from minik8s.api.revisions import revision_data, revision_template
from minik8s.api.selectors import LabelSelector
from minik8s.client.events import EventRecorder
from minik8s.client.factory import SharedInformerFactory
from minik8s.client.informer import NAMESPACE_INDEX, by_namespace
from minik8s.client.rest import Client
from minik8s.controllers.base import CONTROLLER_UID_INDEX, by_controller_uid
from minik8s.controllers.expectations import Expectations
from minik8s.controllers.history import (
    REVISION_HASH_LABEL,
    RevisionWriter,
    equal_data,
    hash_revision,
    history_limit,
    new_revision,
    next_revision,
    sort_revisions,
)
from minik8s.controllers.history import revision_name as history_revision_name
from minik8s.controllers.ownerrefs import claim, meta_of, new_controller_ref, recheck_owner, spec_selector
from minik8s.controllers.podowner import PodOwnerController
from minik8s.controllers.podutil import is_pod_available, is_pod_ready, pod_phase

POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
STATUS_FIELDS = ("observedGeneration", "replicas", "readyReplicas", "currentReplicas", "updatedReplicas",
                 "availableReplicas", "currentRevision", "updateRevision", "collisionCount")


# ====================================================================== pure helpers
def pod_name(sts_name: str, ordinal: int) -> str:
    """``<sts>-<ordinal>``."""
    return f"{sts_name}-{ordinal}"


def ordinal_of(sts_name: str, pod: Obj) -> int | None:
    """The ordinal of a member pod (``<sts>-<n>``), None for a pod not named as one (``getParentNameAndOrdinal``)."""
    name = meta_of(pod).get("name") or ""
    prefix, _, number = name.rpartition("-")
    if prefix != sts_name or not number.isdigit() or (len(number) > 1 and number.startswith("0")):
        return None
    return int(number)


def claim_name(template_name: str, sts_name: str, ordinal: int) -> str:
    """The claim of one pod for one of ``volumeClaimTemplates``: ``<template>-<sts>-<ordinal>``."""
    return f"{template_name}-{sts_name}-{ordinal}"


def claim_template_names(view: StatefulSetView) -> list[str]:
    """The names of the StatefulSet's claim templates, in order (unnamed ones left out)."""
    return [str(n) for t in view.claim_templates if (n := (t.get("metadata") or {}).get("name"))]


def add_claim_volumes(spec: Obj, view: StatefulSetView, ordinal: int) -> None:
    """Make the pod spec's volumes refer to its claims (``updateStorage``): one
    ``persistentVolumeClaim`` volume per claim template, named as the template, in place of any
    template volume of that name."""
    names = claim_template_names(view)
    if not names:
        return
    volumes = [vol for vol in spec.get("volumes") or [] if vol.get("name") not in names]
    volumes += [{"name": n, "persistentVolumeClaim": {"claimName": claim_name(n, view.meta.name, ordinal)}}
                for n in names]
    spec["volumes"] = volumes


def new_claim(view: StatefulSetView, template: Mapping[str, Any], ordinal: int, selector_labels: Mapping[str, str],
              owner_ref: Obj | None) -> Obj:
    """The PersistentVolumeClaim a pod's claim template makes: the template's spec, its labels plus the
    selector's ``matchLabels``, and (``whenDeleted: Delete``) a non-controller ownerReference to the set."""
    tmeta = template.get("metadata") or {}
    labels = {**(tmeta.get("labels") or {}), **selector_labels}
    meta: Obj = {"name": claim_name(str(tmeta.get("name")), view.meta.name, ordinal),
                 "namespace": view.meta.namespace or None, "labels": labels}
    if tmeta.get("annotations"):
        meta["annotations"] = dict(tmeta["annotations"])
    if owner_ref is not None:
        meta["ownerReferences"] = [owner_ref]
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta,
            "spec": copy.deepcopy(template.get("spec") or {})}


def revision_name(sts: Obj, collision_count: int | None = None) -> str:
    """``<sts>-<hash>``: the name of the revision of the StatefulSet's current template, its data hashed with
    ``collision_count`` (default ``status.collisionCount``, 0 while unset, as Kubernetes hashes it)."""
    if collision_count is None:
        collision_count = int((sts.get("status") or {}).get("collisionCount") or 0)
    name = str((sts.get("metadata") or {}).get("name") or "")
    return history_revision_name(name, hash_revision(revision_data(sts), collision_count))


def pod_revision(pod: Obj) -> str:
    return str((meta_of(pod).get("labels") or {}).get(REVISION_HASH_LABEL) or "")


def new_pod(sts: Obj, view: StatefulSetView, template: Obj, ordinal: int, revision: str) -> Obj:
    """Pod ``ordinal`` of the set from ``template`` at ``revision`` (``newVersionedStatefulSetPod``)."""
    template = copy.deepcopy(template)
    tmeta = template.get("metadata") or {}
    name = pod_name(view.meta.name, ordinal)
    labels = {**(tmeta.get("labels") or {}), POD_NAME_LABEL: name, POD_INDEX_LABEL: str(ordinal),
              REVISION_HASH_LABEL: revision}
    meta: Obj = {"name": name, "namespace": view.meta.namespace or None, "labels": labels,
                 "ownerReferences": [new_controller_ref(sts, "apps/v1", "StatefulSet")]}
    for fld in ("annotations", "finalizers"):
        if tmeta.get(fld):
            meta[fld] = tmeta[fld]
    spec = template.get("spec") or {}
    spec["hostname"] = name
    if view.service_name:
        spec["subdomain"] = view.service_name
    add_claim_volumes(spec, view, ordinal)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def is_terminating(pod: Obj) -> bool:
    return bool(meta_of(pod).get("deletionTimestamp"))


def is_finished(pod: Obj) -> bool:
    return pod_phase(pod) in ("Failed", "Succeeded")


def is_running_and_ready(pod: Obj) -> bool:
    return pod_phase(pod) == "Running" and is_pod_ready(pod)


def is_healthy(pod: Obj, min_ready_seconds: int, now: dt.datetime) -> bool:
    """Running, Ready (for ``minReadySeconds``) and not terminating: what OrderedReady waits for."""
    return is_running_and_ready(pod) and is_pod_available(pod, min_ready_seconds, now) and not is_terminating(pod)


def split_pods(view: StatefulSetView, pods: list[Obj]) -> tuple[dict[int, Obj], list[Obj]]:
    """``(ordinal → member pod in range, condemned pods sorted by ordinal)``; pods not named as members
    are left out."""
    first, last = view.start, view.start + view.replicas
    replicas: dict[int, Obj] = {}
    condemned: list[tuple[int, Obj]] = []
    for pod in pods:
        ordinal = ordinal_of(view.meta.name, pod)
        if ordinal is None:
            continue
        if first <= ordinal < last:
            replicas[ordinal] = pod
        else:
            condemned.append((ordinal, pod))
    return replicas, [p for _, p in sorted(condemned, key=lambda item: item[0])]


def identity_patch(view: StatefulSetView, pod: Obj, ordinal: int) -> Obj | None:
    """The labels patch that restores a member pod's identity labels, None when they are right."""
    labels = meta_of(pod).get("labels") or {}
    name = pod_name(view.meta.name, ordinal)
    wanted = {POD_NAME_LABEL: name, POD_INDEX_LABEL: str(ordinal)}
    missing = {k: val for k, val in wanted.items() if labels.get(k) != val}
    return {"metadata": {"labels": missing}} if missing else None


def compute_status(sts: Obj, view: StatefulSetView, pods: list[Obj], current: str, update: str,
                   now: dt.datetime) -> Obj:
    """``updateStatefulSet``'s status: counts over the member pods, and the revisions (the rollout is
    complete — current becomes update — when every pod is updated and Ready)."""
    replicas = ready = available = current_n = updated = 0
    for pod in pods:
        replicas += 1
        if is_running_and_ready(pod):
            ready += 1
            available += is_pod_available(pod, view.min_ready_seconds, now)
        if not is_terminating(pod) and pod_phase(pod):
            current_n += pod_revision(pod) == current
            updated += pod_revision(pod) == update
    status = copy.deepcopy(sts.get("status") or {})
    status.update({"replicas": replicas, "readyReplicas": ready, "availableReplicas": available,
                   "currentReplicas": current_n, "updatedReplicas": updated, "currentRevision": current,
                   "updateRevision": update, "collisionCount": view.collision_count or 0})
    if view.rolling and updated == replicas and ready == replicas:
        status["currentRevision"] = update
        status["currentReplicas"] = updated
    if view.meta.generation is not None:
        status["observedGeneration"] = view.meta.generation
    return status


# ====================================================================== the controller
class StatefulSetController(PodOwnerController):
    """Reconciles StatefulSets (keys ``namespace/name``) against the shared pod cache."""

    name = "statefulset-controller"
    owner_api_version = "apps/v1"
    owner_kind = "StatefulSet"

    def __init__(self, client: Client, factory: SharedInformerFactory, recorder: EventRecorder | None = None,
                 expectations: Expectations | None = None) -> None:
        super().__init__(client, factory, recorder)
        self.sts_rt = client.kind("apps/v1", "StatefulSet")
        self.pod_rt = client.kind("v1", "Pod")
        self.expectations = expectations or Expectations()
        self.statefulsets = factory.informer(self.sts_rt, {NAMESPACE_INDEX: by_namespace})
        self.pods = factory.informer(self.pod_rt, {NAMESPACE_INDEX: by_namespace,
                                                   CONTROLLER_UID_INDEX: by_controller_uid})
        self.history = RevisionWriter(client)
        self.revisions = factory.informer(self.history.rt, {NAMESPACE_INDEX: by_namespace})
        self.watch_pods(self.statefulsets, self.pods)
        self.watch_revisions(self.revisions)

    # ================================================================== revisions
    async def _list_revisions(self, sts: Obj, view: StatefulSetView, selector: LabelSelector) -> list[Obj]:
        """The StatefulSet's revisions, oldest first (``adoptOrphanRevisions`` and ``ListRevisions``)."""
        candidates = list(self.revisions.by_index(NAMESPACE_INDEX, view.meta.namespace))
        owner_ref = new_controller_ref(sts, "apps/v1", "StatefulSet")
        revisions, failures = await claim(self.client, self.history.rt, sts, owner_ref, selector, candidates,
                                          recheck_owner(self.client, self.sts_rt, sts))
        if failures:
            raise failures[0]
        return sort_revisions(revisions)

    async def _get_revisions(self, sts: Obj, view: StatefulSetView,
                             revisions: list[Obj]) -> tuple[Obj, Obj, int]:
        """``getStatefulSetRevisions``: (current revision, update revision, collisionCount).

        The update revision is the newest revision if it matches the template, else an older matching
        one renumbered as the next, else a new revision (its name hashed again with a raised collision
        count while taken by other data).  Raises the API error of a failed write.
        """
        collision = int(view.collision_count or 0)
        data = revision_data(sts)
        number = next_revision(revisions)
        equal = [r for r in revisions if equal_data(r.get("data"), data)]
        if equal and equal[-1] is revisions[-1]:
            update = revisions[-1]
        elif equal:
            update = await self.history.renumber(equal[-1], number)
        else:
            while True:
                hash_ = hash_revision(data, collision)
                body = new_revision(sts, "apps/v1", "StatefulSet", history_revision_name(view.meta.name, hash_),
                                    hash_, data, number)
                try:
                    update = await self.history.create(body)
                    break
                except errors.AlreadyExists:
                    collision += 1
        status_current = (sts.get("status") or {}).get("currentRevision")
        current = next((r for r in revisions if meta_of(r).get("name") == status_current), update)
        return current, update, collision

    async def _truncate_history(self, sts: Obj, members: list[Obj], revisions: list[Obj], current: str,
                                update: str) -> None:
        """``truncateHistory``: delete the oldest revisions beyond ``revisionHistoryLimit`` that are
        neither the current nor the update revision nor any pod's."""
        live = {current, update, *(pod_revision(p) for p in members)}
        old = [r for r in revisions if meta_of(r).get("name") not in live]
        for revision in old[:max(len(old) - history_limit(sts), 0)]:
            await self.history.delete(revision)

    # ================================================================== sync
    async def sync(self, key: str) -> None:
        """Reconcile StatefulSet ``key``: claim pods, create/delete/replace in ordinal order, write status."""
        sts = self.statefulsets.get(key)
        if sts is None:
            self.expectations.forget(key)
            return
        view = StatefulSetView.of(sts)
        selector = spec_selector(sts)
        if selector is None:
            self.log.warning("StatefulSet %s: invalid or empty selector, nothing to do", key)
            return
        needs_sync = self.expectations.satisfied(key)
        candidates = list(self.pods.by_index(NAMESPACE_INDEX, view.meta.namespace))
        owner_ref = new_controller_ref(sts, "apps/v1", "StatefulSet")
        claimed, failures = await claim(self.client, self.pod_rt, sts, owner_ref, selector, candidates,
                                        recheck_owner(self.client, self.sts_rt, sts))
        if failures:
            raise failures[0]
        members = [p for p in claimed if ordinal_of(view.meta.name, p) is not None]
        status_now = sts.get("status") or {}
        revisions: list[Obj] = []
        current_template: Obj = {}
        collision = int(view.collision_count or 0)
        if view.meta.deletion_timestamp:  # being deleted: no revision is written, the status keeps its names
            update = str(status_now.get("updateRevision") or revision_name(sts))
            current = str(status_now.get("currentRevision") or update)
        else:
            revisions = await self._list_revisions(sts, view, selector)
            current_rev, update_rev, collision = await self._get_revisions(sts, view, revisions)
            current, update = str(meta_of(current_rev).get("name")), str(meta_of(update_rev).get("name"))
            current_template = revision_template(current_rev)
        now = dt.datetime.now(dt.UTC)
        error: Exception | None = None
        if needs_sync and not view.meta.deletion_timestamp:
            try:
                await self._manage(key, sts, view, members, current, update, now, current_template)
                await self._truncate_history(sts, members, revisions, current, update)
            except Exception as exc:  # noqa: BLE001 - status first, then retried
                error = exc
        status = compute_status(sts, view, members, current, update, now)
        status["collisionCount"] = collision
        await self._write_status(sts, status)
        if error is not None:
            raise error
        self._requeue_for_availability(key, sts, members)

    async def _manage(self, key: str, sts: Obj, view: StatefulSetView, members: list[Obj], current: str,
                      update: str, now: dt.datetime, current_template: Obj) -> None:
        """One step of ``updateStatefulSet``: replicas in ordinal order, then the condemned from the
        highest ordinal, then one rolling-update step; OrderedReady stops at the first pod it waits for."""
        ordered = not view.parallel
        replicas, condemned = split_pods(view, members)
        healthy = {id(p): is_healthy(p, view.min_ready_seconds, now) for p in members}
        first_unhealthy = next((p for p in [*(replicas[o] for o in sorted(replicas)), *condemned]
                                if not healthy[id(p)]), None)
        for ordinal in range(view.start, view.start + view.replicas):
            pod = replicas.get(ordinal)
            if pod is not None and is_finished(pod) and not is_terminating(pod):
                self.log.info("StatefulSet %s: pod %s is %s, recreating it", key, meta_of(pod).get("name"),
                              pod_phase(pod))
                await self._delete(key, sts, pod)
                if ordered:
                    return
                continue
            if pod is None:
                await self._create(key, sts, view, ordinal, current, update, current_template)
                if ordered:
                    return
                continue
            if is_terminating(pod):
                if ordered:
                    return
                continue
            patch = identity_patch(view, pod, ordinal)
            if patch is not None:
                await self.client.patch(self.pod_rt, meta_of(pod).get("name") or "", patch, view.meta.namespace)
            if ordered and not healthy[id(pod)]:
                return
        for pod in reversed(condemned):
            if is_terminating(pod):
                if ordered:
                    return
                continue
            if ordered and not healthy[id(pod)] and pod is not first_unhealthy:
                return
            await self._delete(key, sts, pod)
            if ordered:
                return
        if not view.rolling:
            return
        for ordinal in range(view.start + view.replicas - 1, view.start + view.partition - 1, -1):
            pod = replicas.get(ordinal)
            if pod is None:
                return
            if pod_revision(pod) != update and not is_terminating(pod):
                self.log.info("StatefulSet %s: updating pod %s to revision %s", key, meta_of(pod).get("name"), update)
                await self._delete(key, sts, pod)
                return
            if not healthy[id(pod)]:
                return

    # ================================================================== writes
    async def _create(self, key: str, sts: Obj, view: StatefulSetView, ordinal: int, current: str,
                      update: str, current_template: Obj) -> None:
        """Create pod ``ordinal`` (its claims first) at the revision its ordinal gets: below the partition
        the current revision's template (``current_template``), else the StatefulSet's."""
        template = (sts.get("spec") or {}).get("template") or {}
        revision = update
        if view.rolling and ordinal < view.start + view.partition and current != update:
            template, revision = current_template, current
        await self._ensure_claims(sts, view, ordinal)
        body = new_pod(sts, view, template, ordinal, revision)
        name = meta_of(body).get("name")
        self.expectations.expect_creations(key, 1)
        try:
            await self.client.create(self.pod_rt, body, view.meta.namespace or None)
        except errors.AlreadyExists:
            self.expectations.creation_observed(key)  # the cache is behind: a later sync sees it
            return
        except errors.APIError as exc:
            self.expectations.creation_observed(key)
            self.event(sts, "Warning", "FailedCreate",
                       f"create Pod {name} in StatefulSet {view.meta.name} failed error: {exc.message}")
            raise
        self.log.info("StatefulSet %s created pod %s", key, name)
        self.event(sts, "Normal", "SuccessfulCreate", f"create Pod {name} in StatefulSet {view.meta.name} successful")

    async def _delete(self, key: str, sts: Obj, pod: Obj) -> None:
        self.expectations.expect_deletions(key, [object_key(pod)])
        problem = await self._delete_owned_pod(key, sts, pod)
        if problem is not None:
            raise problem

    async def _ensure_claims(self, sts: Obj, view: StatefulSetView, ordinal: int) -> None:
        """Create the claims of pod ``ordinal`` that do not exist yet (``createPersistentVolumeClaims``).
        Raises the API error of a failed create (``FailedCreate`` event on the set).
        """
        if not view.claim_templates:
            return
        pvc_rt = self.client.kind("v1", "PersistentVolumeClaim")
        selector_labels = dict(((sts.get("spec") or {}).get("selector") or {}).get("matchLabels") or {})
        owner = None
        if view.when_deleted == "Delete":
            owner = {**new_controller_ref(sts, "apps/v1", "StatefulSet"), "controller": False}
        for template in view.claim_templates:
            if not (template.get("metadata") or {}).get("name"):
                continue
            body = new_claim(view, template, ordinal, selector_labels, owner)
            name = meta_of(body).get("name") or ""
            try:
                await self.client.get(pvc_rt, name, view.meta.namespace)
                continue
            except errors.NotFound:
                pass
            try:
                await self.client.create(pvc_rt, body, view.meta.namespace or None)
            except errors.AlreadyExists:
                continue
            except errors.APIError as exc:
                self.event(sts, "Warning", "FailedCreate", f"create Claim {name} for Pod "
                           f"{pod_name(view.meta.name, ordinal)} in StatefulSet {view.meta.name} failed error: "
                           f"{exc.message}")
                raise
            self.event(sts, "Normal", "SuccessfulCreate", f"create Claim {name} Pod "
                       f"{pod_name(view.meta.name, ordinal)} in StatefulSet {view.meta.name} success")

    async def _write_status(self, sts: Obj, status: Obj) -> None:
        """PUT ``status`` through the status subresource unless unchanged (409 → a later sync)."""
        if (sts.get("status") or {}) == status:
            return
        obj = copy.deepcopy(sts)
        obj["status"] = status
        try:
            await self.client.update_status(self.sts_rt, obj)
        except errors.NotFound:
            return
