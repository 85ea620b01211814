"""The ReplicaSet controller: keep ``spec.replicas`` active pods matching each ReplicaSet's selector.

Kubernetes' ``pkg/controller/replicaset`` semantics:

* **Claiming**: active pods (not terminating, not Succeeded/Failed) in the ReplicaSet's
  namespace are claimed with :func:`minik8s.controllers.ownerrefs.claim` — matching
  orphans are adopted, owned pods whose labels stopped matching are released.
* **Managing replicas**: too few → create pods from ``spec.template`` (``generateName``
  ``<rs>-``, controller ownerReference) in slow-start batches 1, 2, 4, ... capped at
  :data:`BURST_REPLICAS` per sync; too many → delete in the order of
  :func:`minik8s.controllers.podutil.pods_to_delete`.
* **Expectations**: creates/deletes in flight are recorded before they are sent and lowered
  by the informer's pod events; while some are outstanding (and younger than 5 minutes)
  the sync only updates status, so a slow watch never causes extra creates or deletes.
* **Status** (``replicas``, ``fullyLabeledReplicas``, ``readyReplicas``,
  ``availableReplicas``, ``observedGeneration``, condition ``ReplicaFailure``) is written
  through the ``status`` subresource, only when it changed.
* **Events** on the ReplicaSet: ``SuccessfulCreate``, ``SuccessfulDelete``,
  ``FailedCreate``, ``FailedDelete``.

:class:`ReplicationManager` keeps core/v1 ReplicationControllers with the same code, as
Kubernetes' replication manager wraps its ReplicaSet controller: only the kind and the selector's
form (a label map, see :func:`minik8s.api.selectors.workload_selector`) differ.
"""

from __future__ import annotations

import asyncio
import copy
import datetime as dt

from minik8s.api import errors
from minik8s.api.base import Obj, now_rfc3339, object_key
from minik8s.api.selectors import LabelSelector
from minik8s.client.events import EventRecorder
from minik8s.client.factory import SharedInformerFactory
from minik8s.client.informer import NAMESPACE_INDEX, by_namespace
from minik8s.client.rest import Client
from minik8s.controllers.base import CONTROLLER_UID_INDEX, by_controller_uid, slow_start_batch
from minik8s.controllers.expectations import Expectations
from minik8s.controllers.ownerrefs import (
    claim,
    controller_ref,
    meta_of,
    new_controller_ref,
    recheck_owner,
    spec_selector,
)
from minik8s.controllers.podowner import PodOwnerController
from minik8s.controllers.podutil import (
    is_pod_active,
    is_pod_available,
    is_pod_ready,
    pods_to_delete,
)

#: Most pods one sync creates or deletes (Kubernetes' ``BurstReplicas``).
BURST_REPLICAS = 500
#: The first slow-start batch size (Kubernetes' ``SlowStartInitialBatchSize``).
SLOW_START_INITIAL_BATCH = 1
#: Status fields this controller owns.
STATUS_FIELDS = ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas", "observedGeneration")


def _namespace_terminating(exc: errors.APIError) -> bool:
    return isinstance(exc, errors.Forbidden) and "being terminated" in exc.message


def calculate_status(rs: Obj, pods: list[Obj], manage_error: Exception | None,
                     now: dt.datetime | None = None) -> Obj:
    """The ReplicaSet status ``pods`` (its claimed active pods) add up to.

    ``fullyLabeledReplicas`` counts pods carrying every template label, ``readyReplicas``
    Ready pods, ``availableReplicas`` pods Ready for ``spec.minReadySeconds``.  A
    ``ReplicaFailure`` condition (reason FailedCreate/FailedDelete) is set while
    ``manage_error`` is not None and removed once a sync succeeds (``calculateStatus``).
    ``observedGeneration`` is the ReplicaSet's ``metadata.generation``.
    """
    spec = rs.get("spec") or {}
    min_ready = int(spec.get("minReadySeconds") or 0)
    template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    template_selector = LabelSelector.from_set(template_labels)
    now = now or dt.datetime.now(dt.UTC)
    status = copy.deepcopy(rs.get("status") or {})
    status["replicas"] = len(pods)
    status["fullyLabeledReplicas"] = sum(1 for p in pods if template_selector.matches(meta_of(p).get("labels") or {}))
    status["readyReplicas"] = sum(1 for p in pods if is_pod_ready(p))
    status["availableReplicas"] = sum(1 for p in pods if is_pod_available(p, min_ready, now))
    status["observedGeneration"] = meta_of(rs).get("generation")
    conditions = [c for c in status.get("conditions") or [] if c.get("type") != "ReplicaFailure"]
    failure = next((c for c in status.get("conditions") or [] if c.get("type") == "ReplicaFailure"), None)
    if manage_error is not None:
        if failure is None:
            diff = len(pods) - int(spec.get("replicas") or 0)
            reason = "FailedCreate" if diff < 0 else "FailedDelete" if diff > 0 else ""
            failure = {"type": "ReplicaFailure", "status": "True", "reason": reason,
                       "message": str(manage_error), "lastTransitionTime": now_rfc3339()}
        conditions.append(failure)
    if conditions:
        status["conditions"] = conditions
    else:
        status.pop("conditions", None)
    if status.get("observedGeneration") is None:
        status.pop("observedGeneration", None)
    return status


class ReplicaSetController(PodOwnerController):
    """Reconciles ReplicaSets (keys ``namespace/name``) against the shared pod cache."""

    name = "replicaset-controller"
    owner_api_version = "apps/v1"
    owner_kind = "ReplicaSet"
    relabeled_terminating_deletes_old = True

    def __init__(self, client: Client, factory: SharedInformerFactory, recorder: EventRecorder | None = None,
                 expectations: Expectations | None = None, burst_replicas: int = BURST_REPLICAS) -> None:
        super().__init__(client, factory, recorder)
        self.rs_rt = client.kind(self.owner_api_version, self.owner_kind)
        self.pod_rt = client.kind("v1", "Pod")
        self.expectations = expectations or Expectations()
        self.burst_replicas = burst_replicas
        self.replicasets = factory.informer(self.rs_rt, {NAMESPACE_INDEX: by_namespace,
                                                         CONTROLLER_UID_INDEX: by_controller_uid})
        self.pods = factory.informer(self.pod_rt, {NAMESPACE_INDEX: by_namespace,
                                                   CONTROLLER_UID_INDEX: by_controller_uid})
        self.watch_pods(self.replicasets, self.pods)

    # ================================================================== sync
    async def sync(self, key: str) -> None:
        """Reconcile ReplicaSet ``key``: claim pods, create/delete toward spec.replicas, write status."""
        rs = self.replicasets.get(key)
        if rs is None:
            self.expectations.forget(key)
            return
        needs_sync = self.expectations.satisfied(key)
        meta = meta_of(rs)
        selector = spec_selector(rs)
        if selector is None:
            self.log.warning("%s %s: invalid or empty selector, nothing to do", self.owner_kind, key)
            return
        namespace = meta.get("namespace") or ""
        active = [p for p in self.pods.by_index(NAMESPACE_INDEX, namespace) if is_pod_active(p)]
        owner_ref = new_controller_ref(rs, self.owner_api_version, self.owner_kind)
        pods, failures = await claim(self.client, self.pod_rt, rs, owner_ref, selector, active,
                                     recheck_owner(self.client, self.rs_rt, rs))
        if failures:
            raise failures[0]
        manage_error: Exception | None = None
        if needs_sync and not meta.get("deletionTimestamp"):
            try:
                await self._manage_replicas(key, rs, pods)
            except Exception as exc:  # noqa: BLE001 - recorded in status, then re-raised for a retry
                manage_error = exc
        status = calculate_status(rs, pods, manage_error)
        updated = await self._write_status(rs, status)
        if manage_error is not None:
            raise manage_error
        self._requeue_for_availability(key, updated or rs, pods)

    async def _manage_replicas(self, key: str, rs: Obj, pods: list[Obj]) -> None:
        """Create or delete pods so that ``len(pods)`` moves toward ``spec.replicas``."""
        wanted = int((rs.get("spec") or {}).get("replicas") or 0)
        diff = len(pods) - wanted
        if diff < 0:
            await self._create_pods(key, rs, min(-diff, self.burst_replicas))
        elif diff > 0:
            await self._delete_pods(key, rs, pods, min(diff, self.burst_replicas))

    def _pod_from_template(self, rs: Obj) -> Obj:
        meta = meta_of(rs)
        template = copy.deepcopy((rs.get("spec") or {}).get("template") or {})
        tmeta = template.get("metadata") or {}
        pod_meta: Obj = {"generateName": f"{meta.get('name')}-", "namespace": meta.get("namespace"),
                         "ownerReferences": [new_controller_ref(rs, self.owner_api_version, self.owner_kind)]}
        for fld in ("labels", "annotations", "finalizers"):
            if tmeta.get(fld):
                pod_meta[fld] = tmeta[fld]
        return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": template.get("spec") or {}}

    async def _create_pods(self, key: str, rs: Obj, count: int) -> None:
        namespace = meta_of(rs).get("namespace")
        self.expectations.expect_creations(key, count)
        terminating: list[bool] = []

        async def create_one() -> None:
            try:
                pod = await self.client.create(self.pod_rt, self._pod_from_template(rs), namespace)
            except errors.APIError as exc:
                if _namespace_terminating(exc):
                    terminating.append(True)
                else:
                    self.event(rs, "Warning", "FailedCreate", f"Error creating: {exc.message}")
                raise
            name = meta_of(pod).get("name")
            self.log.info("%s %s created pod %s", self.owner_kind, key, name)
            self.event(rs, "Normal", "SuccessfulCreate", f"Created pod: {name}")

        successes, error = await slow_start_batch(count, SLOW_START_INITIAL_BATCH, create_one)
        for _ in range(count - successes):
            self.expectations.creation_observed(key)  # never sent or failed: will never be observed
        if error is not None and not terminating:
            raise error

    async def _delete_pods(self, key: str, rs: Obj, pods: list[Obj], count: int) -> None:
        victims = pods_to_delete(pods, self._related_pods(rs, pods), count)
        self.expectations.expect_deletions(key, [object_key(p) for p in victims])
        failures = await asyncio.gather(*(self._delete_owned_pod(key, rs, p) for p in victims))
        first = next((exc for exc in failures if exc is not None), None)
        if first is not None:
            raise first

    def _related_pods(self, rs: Obj, own: list[Obj]) -> list[Obj]:
        """Active pods of every ReplicaSet controlled by the same owner as ``rs`` (or ``own``)."""
        ref = controller_ref(rs)
        if ref is None:
            return own
        related: list[Obj] = []
        for sibling in self.replicasets.by_index(CONTROLLER_UID_INDEX, str(ref.get("uid"))):
            related += [p for p in self.pods.by_index(CONTROLLER_UID_INDEX, meta_of(sibling).get("uid") or "")
                        if is_pod_active(p)]
        return related or own

    async def _write_status(self, rs: Obj, status: Obj) -> Obj | None:
        """PUT ``status`` through the status subresource unless unchanged; one retry on 409."""
        if (rs.get("status") or {}) == status:
            return rs
        obj = copy.deepcopy(rs)
        for attempt in range(2):
            obj["status"] = status
            try:
                return await self.client.update_status(self.rs_rt, obj)
            except errors.NotFound:
                return None
            except errors.Conflict:
                if attempt:
                    raise
                meta = meta_of(rs)
                try:
                    obj = await self.client.get(self.rs_rt, meta.get("name") or "", meta.get("namespace"))
                except errors.NotFound:
                    return None
                if meta_of(obj).get("uid") != meta.get("uid"):
                    return None
        return None


class ReplicationManager(ReplicaSetController):
    """Reconciles core/v1 ReplicationControllers (keys ``namespace/name``) exactly as ReplicaSets."""

    name = "replication-controller"
    owner_api_version = "v1"
    owner_kind = "ReplicationController"
