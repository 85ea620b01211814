"""The DaemonSet controller: one pod from each DaemonSet's template on every eligible node.

Kubernetes' ``pkg/controller/daemon`` semantics (1.12+, where the scheduler places daemon pods):

* **Eligibility** (:func:`node_should_run_daemon_pod`): a node should run the daemon pod when the
  template's ``nodeName`` (if any) is the node, its ``nodeSelector`` and required node affinity
  match the node, and the pod — with the automatic tolerations :func:`add_daemon_tolerations`
  adds — tolerates every ``NoSchedule``/``NoExecute`` taint of the node.  A pod already there
  may *continue running* while it tolerates the node's ``NoExecute`` taints.
* **Placement**: a new pod gets a required node affinity ``matchFields metadata.name In [node]``
  (:func:`replace_node_affinity`) and is bound by the scheduler, not by this controller.
* **Managing pods** per node: none on an eligible node → create one; pods on a node that should
  not run it (labels or taints changed) → delete them (``status.numberMisscheduled`` counts them
  meanwhile); Failed pods → delete them, with a per-node exponential back-off (1 s doubling to
  15 min) and a ``FailedDaemonPod`` warning, so that a pod the kubelet keeps rejecting is not
  replaced in a hot loop; Succeeded pods → delete them; more than one running pod → keep the
  oldest (with ``maxSurge``: the oldest old and the oldest new pod while the new one is not
  Ready).  minik8s has no pod garbage collector, so pods of nodes that no longer exist are
  deleted here (grace period 0), which Kubernetes' PodGC does.
* **History** (``constructHistory``, ``cleanupHistory``): one ControllerRevision per distinct
  template, ``<ds>-<hash of the template>`` with ``data`` the patch that restores it
  (:mod:`~minik8s.controllers.history`); the current template's revision is numbered above all
  others (an old one that matches again after a rollback is renumbered, not copied), and its
  ``controller-revision-hash`` label is the one new pods get.  A hash taken by other data raises
  ``status.collisionCount``.  Once nothing is in flight, the oldest revisions beyond
  ``revisionHistoryLimit`` (default 10) that no pod uses are deleted.
* **Rolling update** (``updateStrategy.type: RollingUpdate``): pods carry the label
  ``controller-revision-hash`` (their revision's hash).  With ``maxSurge: 0`` old pods are
  deleted while at most ``maxUnavailable`` nodes lack an available pod (unavailable old pods are
  replaced at once), and new pods are created on the emptied nodes; with ``maxSurge`` new pods
  are created next to old ones on up to ``maxSurge`` nodes and old pods deleted when the new
  pod is available.  ``OnDelete`` replaces only pods the user deletes.  Both numbers are ints or
  percentages of ``desiredNumberScheduled`` (rounded up); if both come out 0, 1 node may be
  unavailable.
* **Expectations**: creations and deletions in flight are recorded before they are sent
  (:class:`~minik8s.controllers.expectations.Expectations`); until the pod informer has seen them
  a sync only writes status, so a slow watch never puts two pods on one node.
* **Status**: ``desiredNumberScheduled``, ``currentNumberScheduled``, ``numberMisscheduled``,
  ``numberReady``, ``updatedNumberScheduled``, ``numberAvailable``, ``numberUnavailable``,
  ``observedGeneration`` through the ``status`` subresource, only when changed.
* **Events** on the DaemonSet: ``SuccessfulCreate``, ``SuccessfulDelete``, ``FailedCreate``,
  ``FailedDelete``, ``FailedDaemonPod``.
* **Owner references**: pods get a controller ownerReference with ``blockOwnerDeletion``, so the
  garbage collector deletes them with their DaemonSet; matching orphans are adopted.
"""

from __future__ import annotations

import asyncio
import copy
import datetime as dt
import time
from collections.abc import Mapping
from typing import Any

from minik8s.api import errors
from minik8s.api.apps import DaemonSetView
from minik8s.api.base import Obj, object_key, parse_time
from minik8s.api.meta import MetaView
from minik8s.api.nodeaffinity import pod_spec_matches_node
from minik8s.api.revisions import revision_data
from minik8s.api.selectors import LabelSelector
from minik8s.api.taints import (
    NO_EXECUTE,
    NO_SCHEDULE,
    TAINT_NOT_READY,
    TAINT_UNREACHABLE,
    TAINT_UNSCHEDULABLE,
    tolerates,
)
from minik8s.client.events import EventRecorder
from minik8s.client.factory import SharedInformerFactory
from minik8s.client.informer import NAMESPACE_INDEX, by_namespace
from minik8s.client.rest import Client
from minik8s.controllers.base import CONTROLLER_UID_INDEX, by_controller_uid, slow_start_batch
from minik8s.controllers.deploymentutil import compute_hash, scaled_value
from minik8s.controllers.expectations import Expectations
from minik8s.controllers.history import (
    REVISION_HASH_LABEL,
    RevisionWriter,
    equal_data,
    history_limit,
    new_revision,
    next_revision,
    revision_name,
    sort_revisions,
)
from minik8s.controllers.ownerrefs import (
    claim,
    meta_of,
    new_controller_ref,
    recheck_owner,
    spec_selector,
)
from minik8s.controllers.podowner import PodOwnerController
from minik8s.controllers.podutil import is_pod_available, is_pod_ready, pod_phase

#: The label with the DaemonSet's template generation (Kubernetes' ``pod-template-generation``).
TEMPLATE_GENERATION_LABEL = "pod-template-generation"
TEMPLATE_GENERATION_ANNOTATION = "deprecated.daemonset.template.generation"
#: Most pods one sync creates or deletes (Kubernetes' ``BurstReplicas`` of the DaemonSet controller).
BURST_REPLICAS = 250
#: Back-off before a Failed daemon pod on a node is replaced again (Kubernetes: 1 s doubling to 15 min).
FAILED_POD_BACKOFF_INITIAL = 1.0
FAILED_POD_BACKOFF_MAX = 900.0

TAINT_DISK_PRESSURE = "node.kubernetes.io/disk-pressure"
TAINT_MEMORY_PRESSURE = "node.kubernetes.io/memory-pressure"
TAINT_PID_PRESSURE = "node.kubernetes.io/pid-pressure"
TAINT_NETWORK_UNAVAILABLE = "node.kubernetes.io/network-unavailable"

STATUS_FIELDS = ("desiredNumberScheduled", "currentNumberScheduled", "numberMisscheduled", "numberReady",
                 "updatedNumberScheduled", "numberAvailable", "numberUnavailable", "observedGeneration")


# ====================================================================== pure helpers
def add_daemon_tolerations(spec: Obj) -> None:
    """Add Kubernetes' automatic DaemonSet tolerations to a pod spec in place (``AddOrUpdateDaemonPodTolerations``).

    ``not-ready`` and ``unreachable`` NoExecute (no tolerationSeconds: the pod is never evicted
    for them); ``disk-pressure``, ``memory-pressure``, ``pid-pressure`` and ``unschedulable``
    NoSchedule; ``network-unavailable`` NoSchedule for ``hostNetwork`` pods.  All ``Exists``.
    A toleration with the same key, operator and effect replaces the user's.
    """
    wanted = [(TAINT_NOT_READY, NO_EXECUTE), (TAINT_UNREACHABLE, NO_EXECUTE), (TAINT_DISK_PRESSURE, NO_SCHEDULE),
              (TAINT_MEMORY_PRESSURE, NO_SCHEDULE), (TAINT_PID_PRESSURE, NO_SCHEDULE),
              (TAINT_UNSCHEDULABLE, NO_SCHEDULE)]
    if spec.get("hostNetwork"):
        wanted.append((TAINT_NETWORK_UNAVAILABLE, NO_SCHEDULE))
    tolerations = [dict(t) for t in spec.get("tolerations") or []]
    for key, effect in wanted:
        new = {"key": key, "operator": "Exists", "effect": effect}
        tolerations = [t for t in tolerations
                       if not (t.get("key") == key and (t.get("operator") or "Equal") == "Exists"
                               and t.get("effect") == effect)]
        tolerations.append(new)
    spec["tolerations"] = tolerations


def replace_node_affinity(spec: Obj, node: str) -> None:
    """Make the pod spec require node ``node`` (``ReplaceDaemonSetPodNodeNameNodeAffinity``): its
    required node affinity becomes one term ``matchFields metadata.name In [node]``; preferred
    terms and pod (anti-)affinity stay."""
    affinity = spec.setdefault("affinity", {}) or {}
    spec["affinity"] = affinity
    node_affinity = affinity.setdefault("nodeAffinity", {}) or {}
    affinity["nodeAffinity"] = node_affinity
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}


def daemon_pod_spec(ds: Obj) -> Obj:
    """The template's pod spec with the automatic tolerations (what eligibility is judged on)."""
    spec = copy.deepcopy(((ds.get("spec") or {}).get("template") or {}).get("spec") or {})
    add_daemon_tolerations(spec)
    return spec


def _untolerated(taints: list[Obj], tolerations: list[Obj], effects: tuple[str, ...]) -> bool:
    return any(t.get("effect") in effects and not tolerates(tolerations, t) for t in taints)


def node_should_run_daemon_pod(node: Obj, pod_spec: Mapping[str, Any]) -> tuple[bool, bool]:
    """``(should_run, should_continue_running)`` of a daemon pod with ``pod_spec`` on ``node``
    (Kubernetes' ``NodeShouldRunDaemonPod``; ``pod_spec`` as :func:`daemon_pod_spec` makes it).

    Neither when the spec names another node or its nodeSelector / required node affinity does
    not match the node's labels and name.  A NoSchedule or NoExecute taint the pod does not
    tolerate means not to run a new pod; only an untolerated NoExecute taint also means that a
    pod already there must go.
    """
    meta = meta_of(node)
    name = meta.get("name") or ""
    wanted_node = pod_spec.get("nodeName")
    if wanted_node and wanted_node != name:
        return False, False
    if not pod_spec_matches_node(pod_spec, meta.get("labels") or {}, name):
        return False, False
    taints = list((node.get("spec") or {}).get("taints") or [])
    tolerations = list(pod_spec.get("tolerations") or [])
    if _untolerated(taints, tolerations, (NO_SCHEDULE, NO_EXECUTE)):
        return False, not _untolerated(taints, tolerations, (NO_EXECUTE,))
    return True, True


def target_node(pod: Obj) -> str:
    """The node a daemon pod is for: ``spec.nodeName``, else the ``metadata.name`` its required node
    affinity's ``matchFields`` names (``GetTargetNodeName``); ``""`` when neither."""
    spec = pod.get("spec") or {}
    if spec.get("nodeName"):
        return str(spec["nodeName"])
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution") or {}
    for term in required.get("nodeSelectorTerms") or []:
        for req in term.get("matchFields") or []:
            values = req.get("values") or []
            if req.get("key") == "metadata.name" and req.get("operator") == "In" and len(values) == 1:
                return str(values[0])
    return ""


def template_hash(ds: Obj, view: DaemonSetView | None = None) -> str:
    """The ``controller-revision-hash`` of the DaemonSet's current template (with its collisionCount)."""
    view = view or DaemonSetView.of(ds)
    return compute_hash((ds.get("spec") or {}).get("template") or {}, view.collision_count)


def is_updated(pod: Obj, hash_: str) -> bool:
    """The pod was made from the current template."""
    return (meta_of(pod).get("labels") or {}).get(REVISION_HASH_LABEL) == hash_


def _view(ds: Obj | DaemonSetView) -> DaemonSetView:
    return ds if isinstance(ds, DaemonSetView) else DaemonSetView.of(ds)


def update_counts(ds: Obj | DaemonSetView, desired: int) -> tuple[int, int]:
    """``(maxSurge, maxUnavailable)`` as numbers of nodes (``updatedDesiredNodeCounts``): percentages
    of ``desired`` rounded up; both 0 (or an OnDelete DaemonSet) → ``(0, 1)``."""
    view = _view(ds)
    try:
        surge = scaled_value(view.max_surge, desired, True)
        unavailable = scaled_value(view.max_unavailable, desired, True)
    except ValueError:
        surge, unavailable = 0, 1
    if desired > 0 and surge == 0 and unavailable == 0:
        unavailable = 1
    return max(surge, 0), max(unavailable, 0)


def _created_key(pod: Obj) -> tuple[dt.datetime, str]:
    created = parse_time(meta_of(pod).get("creationTimestamp")) or dt.datetime.max.replace(tzinfo=dt.UTC)
    return created, meta_of(pod).get("name") or ""


def find_updated_pods_on_node(pods: list[Obj], hash_: str) -> tuple[Obj | None, Obj | None, bool]:
    """``(new_pod, old_pod, ok)`` among a node's non-terminating pods; ``ok`` False when there are two
    of one kind (the manage step cleans that up first) — ``findUpdatedPodsOnNode``."""
    new: Obj | None = None
    old: Obj | None = None
    for pod in pods:
        if meta_of(pod).get("deletionTimestamp"):
            continue
        if is_updated(pod, hash_):
            if new is not None:
                return None, None, False
            new = pod
        else:
            if old is not None:
                return None, None, False
            old = pod
    return new, old, True


def rolling_update_plan(ds: Obj | DaemonSetView, node_pods: Mapping[str, list[Obj]], hash_: str, desired: int,
                        now: dt.datetime) -> tuple[list[Obj], list[str]]:
    """``(old pods to delete, nodes to create a new pod on)`` of one RollingUpdate step
    (Kubernetes' ``rollingUpdate``); ``node_pods`` holds the pods of the nodes that should run one."""
    view = _view(ds)
    surge, unavailable = update_counts(view, desired)
    min_ready = view.min_ready_seconds

    def available(pod: Obj) -> bool:
        return is_pod_available(pod, min_ready, now)

    if surge == 0:
        num_unavailable = 0
        replace: list[Obj] = []
        candidates: list[Obj] = []
        for node in sorted(node_pods):
            new, old, ok = find_updated_pods_on_node(node_pods[node], hash_)
            if not ok or (new is None) == (old is None):
                num_unavailable += 1  # the manage step creates or prunes here first
            elif new is not None:
                if not available(new):
                    num_unavailable += 1
            elif old is not None:
                if not available(old):
                    replace.append(old)
                elif num_unavailable < unavailable:
                    candidates.append(old)
        room = max(0, min(unavailable - num_unavailable, len(candidates)))
        return replace + candidates[:room], []
    to_delete: list[Obj] = []
    allowed_nodes: list[str] = []
    candidate_nodes: list[str] = []
    num_surge = 0
    for node in sorted(node_pods):
        new, old, ok = find_updated_pods_on_node(node_pods[node], hash_)
        if not ok:
            num_surge += 1
            continue
        if old is None:
            continue
        if new is None:
            if not available(old):
                allowed_nodes.append(node)
            elif num_surge < surge:
                candidate_nodes.append(node)
        elif not available(new):
            num_surge += 1
        else:
            to_delete.append(old)
    room = max(0, min(surge - num_surge, len(candidate_nodes)))
    return to_delete, allowed_nodes + candidate_nodes[:room]


class _Backoff:
    """Per-key exponential back-off (Kubernetes' ``flowcontrol.Backoff`` as the DaemonSet controller uses it)."""

    def __init__(self, initial: float, maximum: float) -> None:
        self.initial, self.maximum = initial, maximum
        self._entries: dict[str, tuple[float, float]] = {}  # key → (delay, last update)

    def in_backoff(self, key: str, now: float) -> float:
        """Seconds left of ``key``'s back-off since its last update (0: not in back-off)."""
        entry = self._entries.get(key)
        if entry is None:
            return 0.0
        delay, last = entry
        return max(0.0, last + delay - now)

    def next(self, key: str, now: float) -> None:
        entry = self._entries.get(key)
        if entry is None or now - entry[1] > 2 * self.maximum:
            self._entries[key] = (self.initial, now)
        else:
            self._entries[key] = (min(entry[0] * 2, self.maximum), now)

    def forget_prefix(self, prefix: str) -> None:
        for key in [k for k in self._entries if k.startswith(prefix)]:
            del self._entries[key]


# ====================================================================== the controller
class DaemonSetController(PodOwnerController):
    """Reconciles DaemonSets (keys ``namespace/name``) against the shared node and pod caches."""

    name = "daemonset-controller"
    owner_api_version = "apps/v1"
    owner_kind = "DaemonSet"

    def __init__(self, client: Client, factory: SharedInformerFactory, recorder: EventRecorder | None = None,
                 expectations: Expectations | None = None, burst_replicas: int = BURST_REPLICAS,
                 failed_pod_backoff: float = FAILED_POD_BACKOFF_INITIAL,
                 failed_pod_backoff_max: float = FAILED_POD_BACKOFF_MAX) -> None:
        super().__init__(client, factory, recorder)
        self.ds_rt = client.kind("apps/v1", "DaemonSet")
        self.pod_rt = client.kind("v1", "Pod")
        self.node_rt = client.kind("v1", "Node")
        self.expectations = expectations or Expectations()
        self.burst_replicas = burst_replicas
        self.failed_backoff = _Backoff(failed_pod_backoff, failed_pod_backoff_max)
        self.daemonsets = factory.informer(self.ds_rt, {NAMESPACE_INDEX: by_namespace})
        self.pods = factory.informer(self.pod_rt, {NAMESPACE_INDEX: by_namespace,
                                                   CONTROLLER_UID_INDEX: by_controller_uid})
        self.nodes = factory.informer(self.node_rt)
        self.history = RevisionWriter(client)
        self.revisions = factory.informer(self.history.rt, {NAMESPACE_INDEX: by_namespace})
        self.watch_pods(self.daemonsets, self.pods)
        self.watch_revisions(self.revisions)
        self.nodes.add_handler(self._add_node, self._update_node, self._delete_node)

    # ================================================================== event handlers
    def _delete_owner(self, ds: Obj) -> None:
        self.failed_backoff.forget_prefix(f"{meta_of(ds).get('uid')}/")
        super()._delete_owner(ds)

    def _enqueue_all(self) -> None:
        for ds in self.daemonsets.list():
            self.enqueue(object_key(ds))

    def _add_node(self, node: Obj) -> None:
        self._enqueue_all()

    def _update_node(self, old: Obj, cur: Obj) -> None:
        """Only what eligibility reads (labels, taints, the node itself) requeues the DaemonSets."""
        if (meta_of(old).get("labels") != meta_of(cur).get("labels")
                or (old.get("spec") or {}).get("taints") != (cur.get("spec") or {}).get("taints")):
            self._enqueue_all()

    def _delete_node(self, node: Obj) -> None:
        self._enqueue_all()

    # ================================================================== sync
    async def sync(self, key: str) -> None:
        """Reconcile DaemonSet ``key``: claim pods, create/delete per node, roll out, write status."""
        ds = self.daemonsets.get(key)
        if ds is None:
            self.expectations.forget(key)
            return
        view = DaemonSetView.of(ds)
        selector = spec_selector(ds)
        if selector is None:
            self.log.warning("DaemonSet %s: invalid or empty selector, nothing to do", key)
            return
        needs_sync = self.expectations.satisfied(key)
        candidates = [p for p in self.pods.by_index(NAMESPACE_INDEX, view.meta.namespace)
                      if not (meta_of(p).get("deletionTimestamp") and pod_phase(p) in ("Succeeded", "Failed"))]
        owner_ref = new_controller_ref(ds, "apps/v1", "DaemonSet")
        pods, failures = await claim(self.client, self.pod_rt, ds, owner_ref, selector, candidates,
                                     recheck_owner(self.client, self.ds_rt, ds))
        if failures:
            raise failures[0]
        node_pods: dict[str, list[Obj]] = {}
        for pod in pods:
            node_pods.setdefault(target_node(pod), []).append(pod)
        nodes = {meta_of(n).get("name") or "": n for n in self.nodes.list()}
        hash_ = template_hash(ds, view)
        old: list[Obj] = []
        if not view.meta.deletion_timestamp:
            cur, old = await self._construct_history(ds, view, selector)
            hash_ = str((meta_of(cur).get("labels") or {}).get(REVISION_HASH_LABEL) or hash_)
        error: Exception | None = None
        if needs_sync and not view.meta.deletion_timestamp:
            try:
                await self._manage(key, ds, view, nodes, node_pods, hash_)
                if self.expectations.satisfied(key):
                    await self._cleanup_history(ds, pods, old)
            except Exception as exc:  # noqa: BLE001 - status first, then retried
                error = exc
        await self._write_status(ds, self._status(ds, view, nodes, node_pods, hash_))
        if error is not None:
            raise error
        self._requeue_for_availability(key, ds, pods)

    # ================================================================== history
    async def _construct_history(self, ds: Obj, view: DaemonSetView, selector: LabelSelector) -> tuple[Obj, list[Obj]]:
        """``constructHistory``: (the revision of the current template, the other revisions of the DaemonSet).

        Claims the namespace's revisions the selector matches; renumbers a matching old revision above
        the others, or creates one.  Raises the API error of a failed write, and AlreadyExists after
        raising ``status.collisionCount`` when the name is another template's (the next sync hashes anew).
        """
        candidates = list(self.revisions.by_index(NAMESPACE_INDEX, view.meta.namespace))
        owner_ref = new_controller_ref(ds, "apps/v1", "DaemonSet")
        histories, failures = await claim(self.client, self.history.rt, ds, owner_ref, selector, candidates,
                                          recheck_owner(self.client, self.ds_rt, ds))
        if failures:
            raise failures[0]
        data = revision_data(ds)
        current = sort_revisions([h for h in histories if equal_data(h.get("data"), data)])
        old = [h for h in histories if not equal_data(h.get("data"), data)]
        number = next_revision(old)
        if current:
            for duplicate in current[:-1]:  # dedupCurHistories: the newest stays
                await self.history.delete(duplicate)
            return await self.history.renumber(current[-1], number), old
        hash_ = template_hash(ds, view)
        body = new_revision(ds, "apps/v1", "DaemonSet", revision_name(view.meta.name, hash_), hash_, data, number)
        try:
            return await self.history.create(body), old
        except errors.AlreadyExists:
            fresh = await self.client.get(self.ds_rt, view.meta.name, view.meta.namespace)
            status = fresh.setdefault("status", {})
            status["collisionCount"] = int(status.get("collisionCount") or 0) + 1
            await self.client.update_status(self.ds_rt, fresh)
            raise

    async def _cleanup_history(self, ds: Obj, pods: list[Obj], old: list[Obj]) -> None:
        """``cleanupHistory``: delete the oldest of ``old`` beyond ``revisionHistoryLimit`` that no pod's
        ``controller-revision-hash`` names."""
        to_kill = len(old) - history_limit(ds)
        if to_kill <= 0:
            return
        live = {(meta_of(p).get("labels") or {}).get(REVISION_HASH_LABEL) for p in pods}
        for revision in sort_revisions(old):
            if to_kill <= 0:
                break
            if (meta_of(revision).get("labels") or {}).get(REVISION_HASH_LABEL) in live:
                continue
            await self.history.delete(revision)
            to_kill -= 1

    async def _manage(self, key: str, ds: Obj, view: DaemonSetView, nodes: dict[str, Obj],
                      node_pods: dict[str, list[Obj]], hash_: str) -> None:
        """Pods per node toward one each (``manage``), then, when nothing else is to do, a rollout step."""
        pod_spec = daemon_pod_spec(ds)
        create_on: list[str] = []
        delete: list[Obj] = []
        delete_now: list[Obj] = []  # on nodes that no longer exist: nobody else will remove them
        surge_allowed = update_counts(view, 1)[0] > 0 and view.rolling
        uid = view.meta.uid
        for name, node in sorted(nodes.items()):
            should_run, should_continue = node_should_run_daemon_pod(node, pod_spec)
            here = node_pods.get(name) or []
            if should_run and not here:
                create_on.append(name)
            elif should_continue:
                delete += self._prune_node(key, ds, name, here, hash_, surge_allowed, uid)
            else:
                delete += [p for p in here if not meta_of(p).get("deletionTimestamp")]
        for name, here in node_pods.items():
            if name not in nodes:
                delete_now += [p for p in here if not meta_of(p).get("deletionTimestamp")
                               or (p.get("spec") or {}).get("nodeName")]
        if not (create_on or delete or delete_now) and view.rolling:
            eligible = {n: node_pods.get(n) or [] for n, node in nodes.items()
                        if node_should_run_daemon_pod(node, pod_spec)[0]}
            desired = len(eligible)
            delete, create_on = rolling_update_plan(view, eligible, hash_, desired, dt.datetime.now(dt.UTC))
        await self._sync_nodes(key, ds, view.meta, delete, delete_now, create_on[:self.burst_replicas], hash_)

    def _prune_node(self, key: str, ds: Obj, node: str, here: list[Obj], hash_: str, surge_allowed: bool,
                    uid: str) -> list[Obj]:
        """Pods to delete on a node that runs the daemon pod (Failed ones with back-off, extras)."""
        delete: list[Obj] = []
        running: list[Obj] = []
        for pod in here:
            if meta_of(pod).get("deletionTimestamp"):
                continue
            phase = pod_phase(pod)
            if phase == "Failed":
                backoff_key = f"{uid}/{node}"
                now = time.monotonic()
                left = self.failed_backoff.in_backoff(backoff_key, now)
                if left > 0:
                    self.enqueue_after(key, left + 0.01)
                    continue
                self.failed_backoff.next(backoff_key, now)
                pmeta = meta_of(pod)
                self.event(ds, "Warning", "FailedDaemonPod",
                           f"Found failed daemon pod {pmeta.get('namespace')}/{pmeta.get('name')} on node {node}, "
                           "will try to kill it")
                delete.append(pod)
            elif phase == "Succeeded":
                delete.append(pod)
            else:
                running.append(pod)
        if len(running) <= 1:
            return delete
        running.sort(key=_created_key)
        if not surge_allowed:
            return delete + running[1:]
        oldest_new: Obj | None = None
        oldest_old: Obj | None = None
        for pod in running:
            if is_updated(pod, hash_):
                if oldest_new is None:
                    oldest_new = pod
                    continue
            elif oldest_old is None:
                oldest_old = pod
                continue
            delete.append(pod)
        if oldest_new is not None and oldest_old is not None:
            if not is_pod_ready(oldest_old) or is_pod_ready(oldest_new):
                delete.append(oldest_old)
        return delete

    def _new_pod(self, ds: Obj, meta: MetaView, node: str, hash_: str) -> Obj:
        template = copy.deepcopy((ds.get("spec") or {}).get("template") or {})
        tmeta = template.get("metadata") or {}
        labels = dict(tmeta.get("labels") or {})
        labels[REVISION_HASH_LABEL] = hash_
        generation = meta.annotations.get(TEMPLATE_GENERATION_ANNOTATION)
        if generation:
            labels[TEMPLATE_GENERATION_LABEL] = str(generation)
        pod_meta: Obj = {"generateName": f"{meta.name}-", "namespace": meta.namespace or None,
                         "labels": labels, "ownerReferences": [new_controller_ref(ds, "apps/v1", "DaemonSet")]}
        for fld in ("annotations", "finalizers"):
            if tmeta.get(fld):
                pod_meta[fld] = tmeta[fld]
        spec = template.get("spec") or {}
        add_daemon_tolerations(spec)
        replace_node_affinity(spec, node)
        return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": spec}

    async def _sync_nodes(self, key: str, ds: Obj, meta: MetaView, delete: list[Obj], delete_now: list[Obj],
                          create_on: list[str], hash_: str) -> None:
        """Create a pod on each of ``create_on`` and delete ``delete`` (``syncNodes``), with expectations set first."""
        victims = (delete + delete_now)[:self.burst_replicas]
        if not victims and not create_on:
            return
        forced = {object_key(p) for p in delete_now}
        self.expectations.expect(key, len(create_on), [object_key(p) for p in victims])
        problems: list[BaseException] = []
        namespace = meta.namespace or None
        pending = list(create_on)

        async def create_one() -> None:
            node = pending.pop(0)
            try:
                pod = await self.client.create(self.pod_rt, self._new_pod(ds, meta, node, hash_), namespace)
            except errors.APIError as exc:
                if not (isinstance(exc, errors.Forbidden) and "being terminated" in exc.message):
                    self.event(ds, "Warning", "FailedCreate", f"Error creating: {exc.message}")
                raise
            self.log.info("DaemonSet %s created pod %s for node %s", key, meta_of(pod).get("name"), node)
            self.event(ds, "Normal", "SuccessfulCreate", f"Created pod: {meta_of(pod).get('name')}")

        successes, error = await slow_start_batch(len(create_on), 1, create_one)
        for _ in range(len(create_on) - successes):
            self.expectations.creation_observed(key)
        if error is not None and not (isinstance(error, errors.Forbidden) and "being terminated" in error.message):
            problems.append(error)
        deleted = await asyncio.gather(*(self._delete_owned_pod(key, ds, p, 0 if object_key(p) in forced else None)
                                         for p in victims))
        problems += [exc for exc in deleted if exc is not None]
        if problems:
            raise problems[0]

    # ================================================================== status
    def _status(self, ds: Obj, view: DaemonSetView, nodes: dict[str, Obj], node_pods: dict[str, list[Obj]],
                hash_: str) -> Obj:
        """``updateDaemonSetStatus``: per node that should run the pod, its oldest pod's readiness,
        availability and revision; pods on other nodes are misscheduled."""
        pod_spec = daemon_pod_spec(ds)
        min_ready = view.min_ready_seconds
        now = dt.datetime.now(dt.UTC)
        desired = current = misscheduled = ready = available = updated = 0
        for name, node in nodes.items():
            should_run, _ = node_should_run_daemon_pod(node, pod_spec)
            here = sorted(node_pods.get(name) or [], key=_created_key)
            if should_run:
                desired += 1
                if here:
                    current += 1
                    pod = here[0]
                    ready += is_pod_ready(pod)
                    available += is_pod_available(pod, min_ready, now)
                    updated += is_updated(pod, hash_)
            elif here:
                misscheduled += 1
        status = copy.deepcopy(ds.get("status") or {})
        status.update({"desiredNumberScheduled": desired, "currentNumberScheduled": current,
                       "numberMisscheduled": misscheduled, "numberReady": ready, "updatedNumberScheduled": updated,
                       "numberAvailable": available, "numberUnavailable": desired - available})
        generation = view.meta.generation
        if generation is not None:
            status["observedGeneration"] = generation
        return status

    async def _write_status(self, ds: Obj, status: Obj) -> None:
        """PUT ``status`` through the status subresource unless unchanged (409 → a later sync)."""
        if (ds.get("status") or {}) == status:
            return
        obj = copy.deepcopy(ds)
        obj["status"] = status
        try:
            await self.client.update_status(self.ds_rt, obj)
        except errors.NotFound:
            return

