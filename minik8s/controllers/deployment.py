"""The Deployment controller: roll a Deployment's pod template out through ReplicaSets.

Kubernetes' ``pkg/controller/deployment`` semantics, on the shared informer caches:

* A Deployment owns ReplicaSets named ``<deployment>-<pod-template-hash>``; the hash
  (:func:`~minik8s.controllers.deploymentutil.compute_hash`) is added as the
  ``pod-template-hash`` label to the ReplicaSet's selector, labels and pod template.
  Matching orphan ReplicaSets are adopted, owned ones that stop matching are released.
* The *new* ReplicaSet is the oldest one whose template equals the Deployment's (ignoring
  the hash label); every other one is *old*.  So setting the template back to an older
  one (``kubectl rollout undo``) reuses that ReplicaSet, whose revision is raised to
  ``max(old revisions) + 1`` (``deployment.kubernetes.io/revision``, mirrored on the
  Deployment; former revisions go to ``revision-history``).
* RollingUpdate scales the new ReplicaSet up within ``replicas + maxSurge`` and the old
  ones down keeping ``replicas - maxUnavailable`` available
  (:func:`~minik8s.controllers.deploymentutil.rolling_step`); Recreate scales the old ones
  to 0, waits until their pods are gone, then scales the new one to ``replicas``.
* A change of ``spec.replicas`` alone (seen as ReplicaSets whose
  ``deployment.kubernetes.io/desired-replicas`` differs) scales the current ReplicaSet, or
  every active one proportionally during a rollout; so does a paused Deployment, which
  otherwise does not roll out.
* At most ``revisionHistoryLimit`` fully scaled-down old ReplicaSets are kept.
* Status: replicas, updatedReplicas, readyReplicas, availableReplicas,
  unavailableReplicas, observedGeneration, conditions Available and Progressing (with
  Kubernetes' reasons and messages, including ProgressDeadlineExceeded).
* Events ``ScalingReplicaSet`` ("Scaled up replica set web-5d4f7 from 0 to 3").
"""

from __future__ import annotations

import copy

from minik8s.api import errors
from minik8s.api.base import Obj, object_key
from minik8s.api.selectors import LabelSelector
from minik8s.client.events import EventRecorder
from minik8s.client.factory import SharedInformerFactory
from minik8s.client.informer import NAMESPACE_INDEX, by_namespace
from minik8s.client.rest import Client
from minik8s.controllers import deploymentutil as du
from minik8s.controllers.base import (
    CONTROLLER_UID_INDEX,
    Controller,
    by_controller_uid,
)
from minik8s.controllers.ownerrefs import (
    claim,
    controller_ref,
    meta_of,
    new_controller_ref,
    recheck_owner,
    resolve_controller_ref,
    selecting_controllers,
    spec_selector,
)
from minik8s.controllers.podutil import is_pod_terminal


class DeploymentController(Controller):
    """Reconciles Deployments (keys ``namespace/name``) against the shared ReplicaSet and pod caches."""

    name = "deployment-controller"

    def __init__(self, client: Client, factory: SharedInformerFactory, recorder: EventRecorder | None = None) -> None:
        super().__init__(client, factory, recorder)
        self.d_rt = client.kind("apps/v1", "Deployment")
        self.rs_rt = client.kind("apps/v1", "ReplicaSet")
        self.pod_rt = client.kind("v1", "Pod")
        indexers = {NAMESPACE_INDEX: by_namespace, CONTROLLER_UID_INDEX: by_controller_uid}
        self.deployments = factory.informer(self.d_rt, {NAMESPACE_INDEX: by_namespace})
        self.replicasets = factory.informer(self.rs_rt, indexers)
        self.pods = factory.informer(self.pod_rt, indexers)
        self.deployments.add_handler(self._enqueue_obj, lambda _old, cur: self._enqueue_obj(cur), self._enqueue_obj)
        self.replicasets.add_handler(self._add_rs, self._update_rs, self._delete_rs)
        self.pods.add_handler(on_delete=self._delete_pod)

    # ================================================================== event handlers
    def _enqueue_obj(self, obj: Obj) -> None:
        self.enqueue(object_key(obj))

    def _resolve(self, namespace: str, ref: Obj) -> Obj | None:
        """The cached Deployment a controller ownerReference points at (same uid), or None."""
        return resolve_controller_ref(self.deployments, namespace, ref, "Deployment")

    def _matching_deployments(self, rs: Obj) -> list[Obj]:
        return selecting_controllers(self.deployments, rs)

    def _add_rs(self, rs: Obj) -> None:
        if meta_of(rs).get("deletionTimestamp"):
            self._delete_rs(rs)
            return
        ref = controller_ref(rs)
        if ref is not None:
            d = self._resolve(meta_of(rs).get("namespace") or "", ref)
            if d is not None:
                self._enqueue_obj(d)
            return
        for d in self._matching_deployments(rs):
            self._enqueue_obj(d)

    def _update_rs(self, old: Obj, cur: Obj) -> None:
        if meta_of(old).get("resourceVersion") == meta_of(cur).get("resourceVersion"):
            return
        namespace = meta_of(cur).get("namespace") or ""
        cur_ref, old_ref = controller_ref(cur), controller_ref(old)
        ref_changed = cur_ref != old_ref
        if ref_changed and old_ref is not None:
            d = self._resolve(namespace, old_ref)
            if d is not None:
                self._enqueue_obj(d)
        if cur_ref is not None:
            d = self._resolve(namespace, cur_ref)
            if d is not None:
                self._enqueue_obj(d)
            return
        if ref_changed or (meta_of(old).get("labels") or {}) != (meta_of(cur).get("labels") or {}):
            for d in self._matching_deployments(cur):
                self._enqueue_obj(d)

    def _delete_rs(self, rs: Obj) -> None:
        ref = controller_ref(rs)
        if ref is not None:
            d = self._resolve(meta_of(rs).get("namespace") or "", ref)
            if d is not None:
                self._enqueue_obj(d)

    def _delete_pod(self, pod: Obj) -> None:
        """A Recreate rollout waits for the old pods to be gone: re-check when one goes."""
        ref = controller_ref(pod)
        if ref is None or ref.get("kind") != "ReplicaSet":
            return
        namespace = meta_of(pod).get("namespace") or ""
        rs = self.replicasets.get(f"{namespace}/{ref.get('name')}")
        if rs is None or meta_of(rs).get("uid") != ref.get("uid"):
            return
        rs_ref = controller_ref(rs)
        d = self._resolve(namespace, rs_ref) if rs_ref is not None else None
        if d is not None and not du.is_rolling_update(d):
            self._enqueue_obj(d)

    # ================================================================== sync
    async def sync(self, key: str) -> None:
        """Reconcile Deployment ``key`` one step (``syncDeployment``)."""
        cached = self.deployments.get(key)
        if cached is None:
            return
        d = copy.deepcopy(cached)
        selector = spec_selector(d)
        if selector is None:
            self.event(d, "Warning", "SelectingAll", "This deployment is selecting all pods. A non-empty "
                                                     "selector is required.")
            return
        rss = await self._replica_sets_for(d, selector)
        if meta_of(d).get("deletionTimestamp"):
            new_rs, old_rss = await self._new_and_old(d, rss, create=False)
            await self._sync_status(d, old_rss + ([new_rs] if new_rs else []), new_rs)
            return
        await self._check_paused_conditions(d)
        if (d.get("spec") or {}).get("paused"):
            await self._sync_scale(d, rss)
            return
        if await self._is_scaling_event(d, rss):
            await self._sync_scale(d, rss)
            return
        if du.is_rolling_update(d):
            await self._rollout_rolling(d, rss)
        else:
            await self._rollout_recreate(d, rss)

    async def _replica_sets_for(self, d: Obj, selector: LabelSelector) -> list[Obj]:
        """Claim the namespace's ReplicaSets for ``d`` (adopt matching orphans, release non-matching)."""
        namespace = meta_of(d).get("namespace") or ""
        candidates = self.replicasets.by_index(NAMESPACE_INDEX, namespace)
        owner_ref = new_controller_ref(d, "apps/v1", "Deployment")
        claimed, failures = await claim(self.client, self.rs_rt, d, owner_ref, selector, candidates,
                                        recheck_owner(self.client, self.d_rt, d))
        if failures:
            raise failures[0]
        return [copy.deepcopy(rs) for rs in claimed]

    # ------------------------------------------------------------------ new / old ReplicaSets
    async def _new_and_old(self, d: Obj, rss: list[Obj], create: bool) -> tuple[Obj | None, list[Obj]]:
        """(new ReplicaSet or None, old ReplicaSets), creating the new one when ``create``
        (``getAllReplicaSetsAndSyncRevision``)."""
        existing = du.find_new_replica_set(d, rss)
        old_rss = du.find_old_replica_sets(existing, rss)
        new_rs = await self._new_replica_set(d, old_rss, existing, create)
        if new_rs is not None:  # later calls in this sync must see what was just written
            rss[:] = [rs for rs in rss if du.uid_of(rs) != du.uid_of(new_rs)] + [new_rs]
        return new_rs, old_rss

    async def _new_replica_set(self, d: Obj, old_rss: list[Obj], existing: Obj | None, create: bool) -> Obj | None:
        new_revision = du.max_revision(old_rss) + 1
        spec = d.get("spec") or {}
        if existing is not None:
            rs = copy.deepcopy(existing)
            changed = du.set_new_replica_set_annotations(d, rs, new_revision, exists=True)
            min_ready = int(spec.get("minReadySeconds") or 0)
            if changed or int((rs.get("spec") or {}).get("minReadySeconds") or 0) != min_ready:
                rs["spec"]["minReadySeconds"] = min_ready
                rs = await self.client.update(self.rs_rt, rs)
            await self._set_revision(d, du.annotations_of(rs).get(du.REVISION_ANNOTATION) or "")
            if du.has_progress_deadline(d) and du.get_condition(d.get("status"), du.PROGRESSING) is None:
                status = d.setdefault("status", {})
                du.set_condition(status, du.new_condition(du.PROGRESSING, "True", du.FOUND_NEW_RS_REASON,
                                                          f'Found new replica set "{du.name_of(rs)}"'))
                await self._write_status(d, status)
            return rs
        if not create:
            return None
        meta = meta_of(d)
        template = copy.deepcopy(spec.get("template") or {})
        collision = (d.get("status") or {}).get("collisionCount")
        pod_hash = du.compute_hash(template, collision)
        tmeta = template.setdefault("metadata", {})
        tmeta["labels"] = {**(tmeta.get("labels") or {}), du.POD_TEMPLATE_HASH_LABEL: pod_hash}
        selector = copy.deepcopy(spec.get("selector") or {})
        selector["matchLabels"] = {**(selector.get("matchLabels") or {}), du.POD_TEMPLATE_HASH_LABEL: pod_hash}
        new_rs: Obj = {
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": f"{meta.get('name')}-{pod_hash}", "namespace": meta.get("namespace"),
                         "labels": dict(tmeta["labels"]),
                         "ownerReferences": [new_controller_ref(d, "apps/v1", "Deployment")]},
            "spec": {"replicas": 0, "minReadySeconds": int(spec.get("minReadySeconds") or 0),
                     "selector": selector, "template": template},
        }
        new_rs["spec"]["replicas"] = du.new_rs_new_replicas(d, old_rss + [new_rs], new_rs)
        du.set_new_replica_set_annotations(d, new_rs, new_revision, exists=False)
        name = du.name_of(new_rs)
        try:
            created = await self.client.create(self.rs_rt, new_rs, meta.get("namespace"))
        except errors.AlreadyExists:
            found = self.replicasets.get(f"{meta.get('namespace')}/{name}")
            if found is None:
                found = await self.client.get(self.rs_rt, name, meta.get("namespace"))
            ref = controller_ref(found)
            if ref is not None and ref.get("uid") == meta.get("uid") and \
                    du.equal_ignore_hash(spec.get("template"), (found.get("spec") or {}).get("template")):
                return copy.deepcopy(found)  # ours already: the cache had not seen it yet
            status = d.setdefault("status", {})
            status["collisionCount"] = int(status.get("collisionCount") or 0) + 1
            self.log.info("deployment %s: hash collision on %s, collisionCount=%d", object_key(d), name,
                          status["collisionCount"])
            await self._write_status(d, status)
            raise
        except errors.APIError as exc:
            msg = f'Failed to create new replica set "{name}": {exc.message}'
            if du.has_progress_deadline(d):
                status = d.setdefault("status", {})
                du.set_condition(status, du.new_condition(du.PROGRESSING, "False", du.FAILED_RS_CREATE_REASON, msg))
                try:
                    await self._write_status(d, status)
                except errors.APIError:
                    pass
            self.event(d, "Warning", du.FAILED_RS_CREATE_REASON, msg)
            raise
        replicas = du.spec_replicas(created)
        if replicas > 0:
            self.event(d, "Normal", "ScalingReplicaSet", f"Scaled up replica set {name} from 0 to {replicas}")
        self.log.info("deployment %s created replicaset %s replicas=%d revision=%d", object_key(d), name,
                      replicas, new_revision)
        await self._set_revision(d, str(new_revision))
        if du.has_progress_deadline(d):
            status = d.setdefault("status", {})
            du.set_condition(status, du.new_condition(du.PROGRESSING, "True", du.NEW_RS_REASON,
                                                      f'Created new replica set "{name}"'))
            await self._write_status(d, status)
        return created

    async def _set_revision(self, d: Obj, revision: str) -> None:
        """Mirror the new ReplicaSet's revision on the Deployment's revision annotation."""
        if not revision or du.annotations_of(d).get(du.REVISION_ANNOTATION) == revision:
            return
        meta = meta_of(d)
        fresh = await self.client.patch(self.d_rt, meta.get("name") or "",
                                        {"metadata": {"annotations": {du.REVISION_ANNOTATION: revision}}},
                                        meta.get("namespace"))
        fmeta = meta_of(fresh)
        if fmeta.get("uid") != meta.get("uid") or fmeta.get("generation") != meta.get("generation"):
            raise errors.Conflict(f"deployment {object_key(d)} changed during its sync")
        d["metadata"] = fmeta

    # ------------------------------------------------------------------ scaling
    async def _scale_rs(self, d: Obj, rs: Obj, size: int) -> Obj:
        """Set ``rs``'s size and desired/max-replicas annotations (``scaleReplicaSet``); event on resize."""
        replicas = du.spec_replicas(d)
        old_size = du.spec_replicas(rs)
        resize = old_size != size
        if not resize and not du.replicas_annotations_need_update(rs, replicas, replicas + du.max_surge(d)):
            return rs
        new = copy.deepcopy(rs)
        new.setdefault("spec", {})["replicas"] = size
        du.set_replicas_annotations(new, replicas, replicas + du.max_surge(d))
        updated = await self.client.update(self.rs_rt, new)
        if resize:
            direction = "up" if old_size < size else "down"
            self.log.info("deployment %s scaled %s replicaset %s from %d to %d", object_key(d), direction,
                          du.name_of(rs), old_size, size)
            self.event(d, "Normal", "ScalingReplicaSet",
                       f"Scaled {direction} replica set {du.name_of(rs)} from {old_size} to {size}")
        return updated

    async def _apply_sizes(self, d: Obj, rss: list[Obj], sizes: dict[str, int], only_resize: bool) -> list[Obj]:
        """Write ``sizes`` (name → replicas) in order; returns ``rss`` with the written objects."""
        by_name = {du.name_of(rs): i for i, rs in enumerate(rss)}
        out = list(rss)
        for name, size in sizes.items():
            i = by_name.get(name)
            if i is None:
                continue
            if only_resize and du.spec_replicas(out[i]) == size:
                continue
            out[i] = await self._scale_rs(d, out[i], size)
        return out

    async def _is_scaling_event(self, d: Obj, rss: list[Obj]) -> bool:
        """An active ReplicaSet's desired-replicas annotation differs from ``spec.replicas``."""
        new_rs, old_rss = await self._new_and_old(d, rss, create=False)
        for rs in du.active(old_rss + [new_rs] if new_rs else old_rss):
            desired = du.desired_replicas_annotation(rs)
            if desired is not None and desired != du.spec_replicas(d):
                return True
        return False

    async def _sync_scale(self, d: Obj, rss: list[Obj]) -> None:
        """Scaling only (paused Deployment, or ``spec.replicas`` changed): ``DeploymentController.sync``."""
        new_rs, old_rss = await self._new_and_old(d, rss, create=False)
        all_rss = old_rss + ([new_rs] if new_rs is not None else [])
        all_rss = await self._apply_sizes(d, all_rss, du.proportional_scale(d, new_rs, old_rss), only_resize=False)
        new_rs = next((rs for rs in all_rss if new_rs is not None and du.uid_of(rs) == du.uid_of(new_rs)), None)
        old_rss = [rs for rs in all_rss if rs is not new_rs]
        if (d.get("spec") or {}).get("paused"):
            await self._cleanup(d, old_rss)
        await self._sync_status(d, all_rss, new_rs)

    # ------------------------------------------------------------------ strategies
    async def _rollout_rolling(self, d: Obj, rss: list[Obj]) -> None:
        new_rs, old_rss = await self._new_and_old(d, rss, create=True)
        assert new_rs is not None
        all_rss = old_rss + [new_rs]
        plan = du.rolling_step(d, new_rs, old_rss)
        if plan:
            all_rss = await self._apply_sizes(d, all_rss, plan, only_resize=True)
            await self._sync_rollout_status(d, all_rss, all_rss[-1])
            return
        if du.deployment_complete(d, d.get("status") or {}):
            await self._cleanup(d, old_rss)
        await self._sync_rollout_status(d, all_rss, new_rs)

    def _old_pods_running(self, new_rs: Obj | None, old_rss: list[Obj]) -> bool:
        """Old ReplicaSets still report replicas, or own a pod that is not Succeeded/Failed."""
        if du.actual_replica_count(old_rss) > 0:
            return True
        for rs in old_rss:
            if new_rs is not None and du.uid_of(rs) == du.uid_of(new_rs):
                continue
            for pod in self.pods.by_index(CONTROLLER_UID_INDEX, du.uid_of(rs)):
                if not is_pod_terminal(pod):
                    return True
        return False

    async def _rollout_recreate(self, d: Obj, rss: list[Obj]) -> None:
        new_rs, old_rss = await self._new_and_old(d, rss, create=False)
        scaled_down = False
        for i, rs in enumerate(old_rss):
            if du.spec_replicas(rs) > 0:
                old_rss[i] = await self._scale_rs(d, rs, 0)
                scaled_down = True
        all_rss = old_rss + ([new_rs] if new_rs is not None else [])
        if scaled_down or self._old_pods_running(new_rs, old_rss):
            await self._sync_rollout_status(d, all_rss, new_rs)
            return
        if new_rs is None:
            new_rs, old_rss = await self._new_and_old(d, rss, create=True)
            assert new_rs is not None
        if du.spec_replicas(new_rs) != du.spec_replicas(d):
            new_rs = await self._scale_rs(d, new_rs, du.spec_replicas(d))
        all_rss = old_rss + [new_rs]
        if du.deployment_complete(d, d.get("status") or {}):
            await self._cleanup(d, old_rss)
        await self._sync_rollout_status(d, all_rss, new_rs)

    async def _cleanup(self, d: Obj, old_rss: list[Obj]) -> None:
        """Delete the oldest scaled-down ReplicaSets beyond ``revisionHistoryLimit``."""
        for rs in du.cleanup_candidates(d, old_rss):
            meta = meta_of(rs)
            try:
                await self.client.delete(self.rs_rt, meta.get("name") or "", meta.get("namespace"),
                                         preconditions={"uid": meta.get("uid") or ""})
                self.log.info("deployment %s deleted old replicaset %s (revision %d)", object_key(d),
                              meta.get("name"), du.revision(rs))
            except (errors.NotFound, errors.Conflict):
                pass

    # ------------------------------------------------------------------ status
    async def _check_paused_conditions(self, d: Obj) -> None:
        """Progressing Unknown DeploymentPaused / DeploymentResumed when ``spec.paused`` flips."""
        if not du.has_progress_deadline(d):
            return
        cond = du.get_condition(d.get("status"), du.PROGRESSING)
        if cond is not None and cond.get("reason") == du.TIMED_OUT_REASON:
            return
        paused_shown = cond is not None and cond.get("reason") == du.PAUSED_REASON
        paused = bool((d.get("spec") or {}).get("paused"))
        status = copy.deepcopy(d.get("status") or {})
        if paused and not paused_shown:
            du.set_condition(status, du.new_condition(du.PROGRESSING, "Unknown", du.PAUSED_REASON,
                                                      "Deployment is paused"))
        elif not paused and paused_shown:
            du.set_condition(status, du.new_condition(du.PROGRESSING, "Unknown", du.RESUMED_REASON,
                                                      "Deployment is resumed"))
        else:
            return
        await self._write_status(d, status)

    async def _sync_status(self, d: Obj, all_rss: list[Obj], new_rs: Obj | None) -> None:
        """Write the counts and the Available condition (``syncDeploymentStatus``)."""
        status = du.calculate_status(d, all_rss, new_rs)
        if status != (d.get("status") or {}):
            await self._write_status(d, status)

    async def _sync_rollout_status(self, d: Obj, all_rss: list[Obj], new_rs: Obj | None) -> None:
        """Write counts and conditions incl. Progressing; re-check later for the progress deadline."""
        status = du.rollout_status(d, all_rss, new_rs)
        if status != (d.get("status") or {}):
            await self._write_status(d, status)
        delay = du.seconds_until_deadline(d, status)
        if delay is not None:
            self.enqueue_after(object_key(d), delay)

    async def _write_status(self, d: Obj, status: Obj) -> None:
        """PUT ``status`` through the status subresource (409 on a stale resourceVersion → retried sync)."""
        obj = copy.deepcopy(d)
        obj["status"] = status
        try:
            written = await self.client.update_status(self.d_rt, obj)
        except errors.NotFound:
            return
        d["metadata"] = meta_of(written)
        d["status"] = written.get("status") or {}
