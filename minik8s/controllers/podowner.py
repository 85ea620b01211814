"""The informer event handlers every controller that owns pods shares (ReplicaSet, ReplicationController,
DaemonSet, Job).

Kubernetes writes the same ``addPod`` / ``updatePod`` / ``deletePod`` handlers in each of
``pkg/controller/replicaset``, ``pkg/controller/daemon`` and ``pkg/controller/job``; here they are written
once, in :class:`PodOwnerController`, parameterised by the owner's kind (:attr:`~PodOwnerController.owner_kind`,
:attr:`~PodOwnerController.owner_api_version`) and the owners' informer given to
:meth:`~PodOwnerController.watch_pods`:

* **addPod**: a pod already terminating counts as a deletion.  A pod with a controller ownerReference
  resolving to a cached owner (same kind, group and uid) lowers that owner's creation expectation and
  queues it; an orphan queues every owner whose selector matches it (one of them may adopt it).
* **updatePod**: resyncs (same resourceVersion) are ignored.  A pod turning terminating counts as a
  deletion.  When the controller ownerReference changed, the old owner is queued too.  The current owner is
  queued, and again after ``spec.minReadySeconds`` when the pod just became Ready (it turns available
  then).  An orphan whose labels or ownerReference changed queues the owners selecting it.
* **deletePod**: lowers the owning controller's deletion expectation for that pod and queues it.

The owner's own add/update/delete handlers (queue it; forget its expectations when it is deleted or
recreated under the same name) are here too.  The Job controller finds its pods by controller uid and
adopts no orphans: it keeps ``deletePod`` and overrides ``addPod``/``updatePod`` with narrower ones.
"""

from __future__ import annotations

import datetime as dt
from typing import ClassVar

from minik8s.api import errors
from minik8s.api.base import Obj, object_key
from minik8s.api.resourcetypes import ResourceType
from minik8s.client.informer import Informer
from minik8s.controllers.base import Controller
from minik8s.controllers.expectations import Expectations
from minik8s.controllers.ownerrefs import controller_ref, meta_of, resolve_controller_ref, selecting_controllers
from minik8s.controllers.podutil import is_pod_available, is_pod_ready, seconds_until_available


class PodOwnerController(Controller):
    """A :class:`~minik8s.controllers.base.Controller` whose objects (keys ``namespace/name``) own pods
    through controller ownerReferences and count pod creations/deletions in :attr:`expectations`.

    Subclasses set :attr:`owner_api_version` and :attr:`owner_kind`, create :attr:`expectations`, and call
    :meth:`watch_pods` with the owners' and the pods' informers from ``__init__``.
    """

    #: The kind kept, as its pods' controller ownerReferences name it (e.g. ``apps/v1`` ``ReplicaSet``).
    owner_api_version: ClassVar[str] = "apps/v1"
    owner_kind: ClassVar[str] = ""
    #: ``updatePod`` of Kubernetes' ReplicaSet controller also counts the *old* pod as deleted when a pod
    #: turning terminating changed its labels in the same update; the DaemonSet controller's does not.
    relabeled_terminating_deletes_old: ClassVar[bool] = False

    expectations: Expectations
    owners: Informer
    pod_rt: ResourceType

    def watch_pods(self, owners: Informer, pods: Informer) -> None:
        """Register the owner and pod event handlers on the ``owners`` and ``pods`` informers."""
        self.owners = owners
        owners.add_handler(self._add_owner, self._update_owner, self._delete_owner)
        pods.add_handler(self._add_pod, self._update_pod, self._delete_pod)

    def watch_revisions(self, revisions: Informer) -> None:
        """Queue a ControllerRevision's owner whenever it changes or goes (``addHistory``, ``updateHistory``,
        ``deleteHistory`` of the DaemonSet and StatefulSet controllers); an orphan queues the owners that
        select it."""
        revisions.add_handler(self._revision_changed, lambda old, cur: self._revision_changed(cur),
                              self._revision_changed)

    def _revision_changed(self, revision: Obj) -> None:
        if controller_ref(revision) is None:
            self._enqueue_selecting(revision)
            return
        owner = self._owner_of(revision)
        if owner is not None:
            self.enqueue(object_key(owner))

    # ------------------------------------------------------------------ owners
    def _add_owner(self, owner: Obj) -> None:
        self.enqueue(object_key(owner))

    def _update_owner(self, old: Obj, cur: Obj) -> None:
        if meta_of(old).get("uid") != meta_of(cur).get("uid"):
            self.expectations.forget(object_key(old))  # deleted and recreated under the same name
        self.enqueue(object_key(cur))

    def _delete_owner(self, owner: Obj) -> None:
        key = object_key(owner)
        self.expectations.forget(key)
        self.enqueue(key)

    def _resolve(self, namespace: str, ref: Obj) -> Obj | None:
        """The cached owner a controller ownerReference points at (same kind, group and uid), or None."""
        return resolve_controller_ref(self.owners, namespace, ref, self.owner_kind,
                                      self.owner_api_version.rpartition("/")[0])

    def _owner_of(self, pod: Obj) -> Obj | None:
        """The cached owner of ``pod`` through its controller ownerReference, or None."""
        ref = controller_ref(pod)
        return None if ref is None else self._resolve(meta_of(pod).get("namespace") or "", ref)

    def _enqueue_selecting(self, pod: Obj) -> None:
        """Queue every owner whose selector matches the orphan ``pod`` (one of them may adopt it)."""
        for owner in selecting_controllers(self.owners, pod):
            self.enqueue(object_key(owner))

    # ------------------------------------------------------------------ pods
    def _add_pod(self, pod: Obj) -> None:
        """``addPod``."""
        if meta_of(pod).get("deletionTimestamp"):
            self._delete_pod(pod)  # seen terminating after a relist: a deletion, not a creation
            return
        if controller_ref(pod) is None:
            self._enqueue_selecting(pod)
            return
        owner = self._owner_of(pod)
        if owner is not None:
            key = object_key(owner)
            self.expectations.creation_observed(key)
            self.enqueue(key)

    def _update_pod(self, old: Obj, cur: Obj) -> None:
        """``updatePod``."""
        old_meta, cur_meta = meta_of(old), meta_of(cur)
        if old_meta.get("resourceVersion") == cur_meta.get("resourceVersion"):
            return  # periodic resync: the owners' resync covers it
        labels_changed = (old_meta.get("labels") or {}) != (cur_meta.get("labels") or {})
        if cur_meta.get("deletionTimestamp"):
            self._delete_pod(cur)
            if labels_changed and self.relabeled_terminating_deletes_old:
                self._delete_pod(old)
            return
        cur_ref, old_ref = controller_ref(cur), controller_ref(old)
        ref_changed = cur_ref != old_ref
        if ref_changed and old_ref is not None:
            old_owner = self._owner_of(old)
            if old_owner is not None:
                self.enqueue(object_key(old_owner))
        if cur_ref is not None:
            owner = self._owner_of(cur)
            if owner is None:
                return
            key = object_key(owner)
            self.enqueue(key)
            min_ready = int((owner.get("spec") or {}).get("minReadySeconds") or 0)
            if min_ready > 0 and not is_pod_ready(old) and is_pod_ready(cur):
                self.enqueue_after(key, min_ready + 0.05)  # becomes available then
            return
        if labels_changed or ref_changed:
            self._enqueue_selecting(cur)

    def _delete_pod(self, pod: Obj) -> None:
        """``deletePod``."""
        owner = self._owner_of(pod)
        if owner is None:
            return
        key = object_key(owner)
        self.expectations.deletion_observed(key, object_key(pod))
        self.enqueue(key)

    # ------------------------------------------------------------------ minReadySeconds
    def _requeue_for_availability(self, key: str, owner: Obj, pods: list[Obj]) -> None:
        """With ``spec.minReadySeconds``, sync ``key`` again when the next of ``pods`` that is Ready but
        not yet available turns available (0.1 s after it does)."""
        min_ready = int((owner.get("spec") or {}).get("minReadySeconds") or 0)
        if min_ready <= 0:
            return
        now = dt.datetime.now(dt.UTC)
        waits = [w for p in pods if not is_pod_available(p, min_ready, now)
                 and (w := seconds_until_available(p, min_ready, now)) is not None]
        if waits:
            self.enqueue_after(key, min(waits) + 0.1)

    # ------------------------------------------------------------------ deleting pods
    async def _delete_owned_pod(self, key: str, owner: Obj, pod: Obj,
                                grace_period_seconds: int | None = None) -> errors.APIError | None:
        """Delete ``pod`` of ``owner`` (queue key ``key``) with a uid precondition, its deletion already
        expected; ``SuccessfulDelete``/``FailedDelete`` Events on the owner.

        A pod already gone or replaced (404/409) lowers the expectation at once, as does a failed delete,
        whose error is returned (None otherwise) for the sync to raise after the others.
        """
        pmeta = meta_of(pod)
        try:
            await self.client.delete(self.pod_rt, pmeta.get("name") or "", pmeta.get("namespace"),
                                     grace_period_seconds=grace_period_seconds,
                                     preconditions={"uid": pmeta.get("uid") or ""})
        except (errors.NotFound, errors.Conflict):
            self.expectations.deletion_observed(key, object_key(pod))  # already gone or replaced
            return None
        except errors.APIError as exc:
            self.expectations.deletion_observed(key, object_key(pod))
            self.event(owner, "Warning", "FailedDelete", f"Error deleting: {exc.message}")
            return exc
        self.log.info("%s %s deleted pod %s", self.owner_kind, key, pmeta.get("name"))
        self.event(owner, "Normal", "SuccessfulDelete", f"Deleted pod: {pmeta.get('name')}")
        return None
