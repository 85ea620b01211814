"""The scheduler loop: watch pods and nodes, pick a node for each pending pod, bind it.

Kubernetes' ``kube-scheduler`` shape:

* Two informers (all pods, all nodes). Bound pods feed the :class:`SchedulerCache`;
  pending pods that are ours -- ``spec.schedulerName`` is this scheduler's name, no
  ``spec.nodeName``, no ``spec.schedulingGates``, no ``deletionTimestamp`` -- feed the
  :class:`SchedulingQueue`.
  Node changes and bound-pod changes move unschedulable pods back to be retried.
* ``schedule_one`` pops a pod, re-reads it from the informer cache (level-triggered:
  the queue only says *which* pod), runs one framework cycle over a snapshot of the
  cache (synchronous: nothing changes under it), *assumes* the pod onto the chosen node
  and binds it in the background (``POST pods/{name}/binding``), so the next pod is
  considered at once and already sees the room as taken.
* Success: a ``Normal Scheduled`` event "Successfully assigned <ns>/<pod> to <node>".
  No fit: the pod's ``PodScheduled`` condition becomes ``False`` / ``Unschedulable``
  with Kubernetes' "0/N nodes are available: ..." message (written only when it
  changes), a ``Warning FailedScheduling`` event with the same message, and the pod
  waits in the unschedulable pool.
* A 409 from the binding means someone else bound the pod (or it is being deleted):
  it is dropped. A restarted scheduler just lists and schedules what is still pending.
* Preemption: when no node fits, the PostFilter plugins run (``DefaultPreemption``). When they
  nominate a node, the pod's ``status.nominatedNodeName`` is set with its ``PodScheduled``
  condition, the nominated pod counts on that node for pods of no higher priority, and each
  victim gets a ``DisruptionTarget`` condition (``PreemptionByScheduler``), a ``Normal Preempted``
  event ("Preempted by pod <uid> on node <node>") and is deleted (gracefully) -- in the
  background, as Kubernetes' asynchronous preemption. Lower-priority pods nominated to that
  node lose their nomination. Once a victim is gone, the ``AssignedPodDelete`` event retries the
  pod. The PodDisruptionBudgets it weighs come from a third informer.
* Namespaces are watched too: their labels are what the ``namespaceSelector`` of pod affinity
  terms matches.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine, Iterable, Mapping
from typing import Any

from minik8s.api import errors
from minik8s.api.base import Obj, now_rfc3339
from minik8s.api.storage import ANN_SELECTED_NODE
from minik8s.client.events import EventRecorder
from minik8s.client.informer import Informer
from minik8s.client.rest import Client
from minik8s.scheduler.cache import SchedulerCache, pod_terminal
from minik8s.scheduler.framework import ClusterEvent, FitError, Framework, PluginRow, PostFilterResult, SchedulingError
from minik8s.scheduler.nodeinfo import PodInfo, StorageObjects, node_condition
from minik8s.scheduler.plugins import DEFAULT_PLUGINS
from minik8s.scheduler.plugins.default_preemption import DISRUPTION_TARGET, REASON_PREEMPTION_BY_SCHEDULER
from minik8s.scheduler.plugins.volume_binding import claims_to_select
from minik8s.scheduler.queue import QueueClosed, QueuedPodInfo, SchedulingQueue, pod_key

log = logging.getLogger("scheduler")


DEFAULT_SCHEDULER_NAME = "default-scheduler"
#: binding cycles in flight at once (see :attr:`Scheduler.max_inflight_bindings`)
DEFAULT_MAX_INFLIGHT_BINDINGS = 32


def _assigned(pod: Obj) -> bool:
    return bool((pod.get("spec") or {}).get("nodeName"))


def _node_fingerprint(node: Obj) -> tuple[Any, ...]:
    """What of a node can change a scheduling decision (heartbeats do not)."""
    meta, spec, status = node.get("metadata") or {}, node.get("spec") or {}, node.get("status") or {}
    return (meta.get("labels"), bool(spec.get("unschedulable")), spec.get("taints"),
            status.get("allocatable"), status.get("capacity"), node_condition(node, "Ready"),
            [i.get("names") for i in status.get("images") or []])


def _requests_or_labels_changed(old: Obj, new: Obj) -> bool:
    old_info, new_info = PodInfo(old), PodInfo(new)
    return old_info.labels != new_info.labels or old_info.requests != new_info.requests


class Scheduler:
    """One scheduler (one profile) named ``scheduler_name``.

    ``plugins`` is the profile (default :data:`~minik8s.scheduler.plugins.DEFAULT_PLUGINS`).
    ``node_label_selector`` restricts the nodes this scheduler sees (a label selector
    string; None: all nodes) -- for partitioned clusters and tests. Back-off and timeout
    parameters are seconds (see :class:`SchedulingQueue`); on shutdown, bindings already
    sent get ``shutdown_grace`` seconds to finish.

    ``await run()`` runs until cancelled; ``await wait_ready()`` returns once both
    informers have listed. ``stats`` counts ``scheduled``, ``unschedulable``, ``errors``
    and ``conflicts``.
    """

    def __init__(self, client: Client, scheduler_name: str = DEFAULT_SCHEDULER_NAME, *,
                 plugins: Iterable[PluginRow] | None = None, node_label_selector: str | None = None,
                 initial_backoff: float = 1.0, max_backoff: float = 10.0,
                 unschedulable_timeout: float = 30.0, flush_interval: float = 0.5,
                 shutdown_grace: float = 2.0, max_inflight_bindings: int = DEFAULT_MAX_INFLIGHT_BINDINGS) -> None:
        self.client = client
        #: binding cycles (the binding POST and its Scheduled event) running at once; the
        #: scheduling loop waits for a free slot, so a burst of pending pods stays in the queue
        #: instead of becoming thousands of requests queued in the HTTP connection pool
        self.max_inflight_bindings = max_inflight_bindings
        self._binding_slots = asyncio.Semaphore(max_inflight_bindings)
        self.inflight_bindings = 0
        self.scheduler_name = scheduler_name
        self.framework = Framework(DEFAULT_PLUGINS if plugins is None else plugins)
        self.cache = SchedulerCache()
        self.queue = SchedulingQueue(self.framework.plugin_events(), initial_backoff=initial_backoff,
                                     max_backoff=max_backoff, unschedulable_timeout=unschedulable_timeout)
        self.flush_interval = flush_interval
        self.shutdown_grace = shutdown_grace
        self.pod_rt = client.kind("v1", "Pod")
        self.node_rt = client.kind("v1", "Node")
        self.pods = Informer(client, self.pod_rt)
        self.nodes = Informer(client, self.node_rt, label_selector=node_label_selector)
        self.pvc_rt = client.kind("v1", "PersistentVolumeClaim")
        self.claims = Informer(client, self.pvc_rt)
        self.volumes = Informer(client, client.kind("v1", "PersistentVolume"))
        self.classes = Informer(client, client.kind("storage.k8s.io/v1", "StorageClass"))
        self.storage = StorageObjects(claim=lambda ns, name: self.claims.get(f"{ns}/{name}"),
                                      volume=self.volumes.get, storage_class=self.classes.get,
                                      volumes=self.volumes.list)
        self.budgets = Informer(client, client.kind("policy/v1", "PodDisruptionBudget"))
        #: namespace labels, for the ``namespaceSelector`` of pod affinity terms (InterPodAffinity)
        self.namespaces = Informer(client, client.kind("v1", "Namespace"))
        #: pending pods nominated to a node by a preemption: key -> (node, PodInfo) (Kubernetes' nominator)
        self.nominated: dict[str, tuple[str, PodInfo]] = {}
        self.recorder = EventRecorder(client, scheduler_name)
        self.stats = {"scheduled": 0, "unschedulable": 0, "errors": 0, "conflicts": 0, "preemptions": 0}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._ready = asyncio.Event()
        self._handlers_added = False

    # ------------------------------------------------------------------ which pods
    def responsible_for(self, pod: Obj) -> bool:
        """A pending pod this scheduler should place: our ``schedulerName`` (unset counts as
        ``default-scheduler``), no ``nodeName``, no ``schedulingGates`` (Kubernetes'
        ``SchedulingGates`` PreEnqueue plugin: the apiserver gave it ``PodScheduled=False`` /
        ``SchedulingGated``; removing its last gate queues it), not being deleted, not finished."""
        spec = pod.get("spec") or {}
        return ((spec.get("schedulerName") or DEFAULT_SCHEDULER_NAME) == self.scheduler_name
                and not spec.get("nodeName")
                and not spec.get("schedulingGates")
                and not (pod.get("metadata") or {}).get("deletionTimestamp")
                and not pod_terminal(pod))

    # ------------------------------------------------------------------ informer handlers
    def _nominate(self, pod: Obj) -> None:
        """Track the pod's ``status.nominatedNodeName`` (or forget it: bound, gone, none)."""
        key = pod_key(pod)
        node = (pod.get("status") or {}).get("nominatedNodeName") or ""
        if node and not _assigned(pod) and not (pod.get("metadata") or {}).get("deletionTimestamp"):
            self.nominated[key] = (node, PodInfo(pod))
        else:
            self.nominated.pop(key, None)

    def nominated_by_node(self) -> dict[str, list[PodInfo]]:
        """Node name -> the pods nominated to it ({} at once when there are none)."""
        if not self.nominated:
            return {}
        by_node: dict[str, list[PodInfo]] = {}
        for node, info in self.nominated.values():
            by_node.setdefault(node, []).append(info)
        return by_node

    def namespace_labels(self, name: str) -> Mapping[str, str]:
        """The labels of namespace ``name`` as the informer last saw them ({} for one not known, as
        Kubernetes' ``GetNamespaceLabelsSnapshot``)."""
        labels: Mapping[str, str] = ((self.namespaces.get(name) or {}).get("metadata") or {}).get("labels") or {}
        return labels

    def _on_pod_add(self, pod: Obj) -> None:
        if self.nominated or (pod.get("status") or {}).get("nominatedNodeName"):
            self._nominate(pod)
        if _assigned(pod):
            if not pod_terminal(pod):
                self.cache.add_pod(pod)
                self.queue.move_all(ClusterEvent.ASSIGNED_POD_ADD)
        elif self.responsible_for(pod):
            self.queue.add(pod)

    def _on_pod_update(self, old: Obj, new: Obj) -> None:
        if self.nominated or (new.get("status") or {}).get("nominatedNodeName"):
            self._nominate(new)
        if _assigned(new):
            self.queue.delete(new)  # bound (by us or anyone): not pending any more
            key = pod_key(new)
            if pod_terminal(new):
                if self.cache.has_pod(key):
                    self.cache.remove_pod(new)
                    self.queue.move_all(ClusterEvent.ASSIGNED_POD_DELETE)
                return
            known = self.cache.has_pod(key) and not self.cache.is_assumed(key)
            self.cache.update_pod(new)
            if not known or not _assigned(old):
                self.queue.move_all(ClusterEvent.ASSIGNED_POD_ADD)
            elif _requests_or_labels_changed(old, new):
                self.queue.move_all(ClusterEvent.ASSIGNED_POD_UPDATE)
        elif self.responsible_for(new):
            self.queue.update(old, new)
        else:
            self.queue.delete(new)

    def _on_pod_delete(self, pod: Obj) -> None:
        key = pod_key(pod)
        self.nominated.pop(key, None)
        self.queue.delete(pod)
        if self.cache.has_pod(key):
            was_bound = not self.cache.is_assumed(key)
            self.cache.remove_pod(pod)
            if was_bound:
                self.queue.move_all(ClusterEvent.ASSIGNED_POD_DELETE)

    def _on_node_add(self, node: Obj) -> None:
        self.cache.add_node(node)
        self.queue.move_all(ClusterEvent.NODE_ADD)

    def _on_node_update(self, old: Obj, new: Obj) -> None:
        self.cache.update_node(new)
        if _node_fingerprint(old) != _node_fingerprint(new):
            self.queue.move_all(ClusterEvent.NODE_UPDATE)

    def _on_node_delete(self, node: Obj) -> None:
        self.cache.remove_node(node)
        self.queue.move_all(ClusterEvent.NODE_DELETE)

    # ------------------------------------------------------------------ running
    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def wait_ready(self, timeout: float | None = None) -> None:
        """Wait until both informers have listed and scheduling has started."""
        await asyncio.wait_for(self._ready.wait(), timeout)

    async def run(self) -> None:
        """Run until cancelled: informers, the queue's timers, and the scheduling loop."""
        if not self._handlers_added:
            self.nodes.add_handler(self._on_node_add, self._on_node_update, self._on_node_delete)
            self.pods.add_handler(self._on_pod_add, self._on_pod_update, self._on_pod_delete)
            for informer, event in ((self.claims, ClusterEvent.PVC_CHANGE), (self.volumes, ClusterEvent.PV_CHANGE),
                                    (self.classes, ClusterEvent.STORAGE_CLASS_CHANGE)):
                def moved(*_objs: Obj, event: ClusterEvent = event) -> None:
                    self.queue.move_all(event)
                informer.add_handler(moved, moved, moved)
            self._handlers_added = True
        background = [self._spawn(self.nodes.run()), self._spawn(self.pods.run()),
                      self._spawn(self.claims.run()), self._spawn(self.volumes.run()),
                      self._spawn(self.classes.run()), self._spawn(self.budgets.run()),
                      self._spawn(self.namespaces.run()),
                      self._spawn(self.queue.run_flush(self.flush_interval)), self._spawn(self._housekeeping())]
        try:
            await self.nodes.wait_synced()
            await self.pods.wait_synced()
            for informer in (self.claims, self.volumes, self.classes, self.budgets, self.namespaces):
                await informer.wait_synced()
            log.info("started scheduler=%s nodes=%d pending=%d", self.scheduler_name,
                     len(self.cache.node_names()), sum(self.queue.counts().values()))
            self._ready.set()
            while True:
                try:
                    await self.schedule_one()
                except QueueClosed:
                    return
                except asyncio.CancelledError:
                    raise
                except Exception:  # noqa: BLE001 - one broken pod must not stop the scheduler
                    log.exception("scheduling loop error scheduler=%s", self.scheduler_name)
                    await asyncio.sleep(0.1)
        finally:
            self.queue.close()
            for task in background:
                task.cancel()
            pending = [t for t in self._tasks if t not in background]
            if pending:  # let bindings and reports already sent finish (briefly)
                await asyncio.wait(pending, timeout=self.shutdown_grace)
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _housekeeping(self) -> None:
        while True:
            await asyncio.sleep(5.0)
            for key in self.cache.cleanup_expired():
                log.warning("assumed pod expired pod=%s reason=binding never confirmed by a watch event", key)

    # ------------------------------------------------------------------ one pod
    async def schedule_one(self) -> None:
        """Pop one pod and run a scheduling cycle for it (binding happens in the background, at
        most ``max_inflight_bindings`` at once: the next pod is popped once a slot is free)."""
        await self._binding_slots.acquire()
        binding = False
        try:
            binding = await self._schedule_one()
        finally:
            if not binding:
                self._binding_slots.release()

    async def _schedule_one(self) -> bool:
        """One scheduling cycle; True when a binding cycle was started (it owns the slot)."""
        qpi = await self.queue.pop()
        pod = self.pods.get(qpi.key)
        if pod is None or not self.responsible_for(pod) or self.cache.has_pod(qpi.key):
            self.queue.done(qpi.key)  # gone, bound, assumed or not ours any more
            return False
        qpi.pod = pod
        info = PodInfo(pod)
        started = time.monotonic()
        snapshot = self.cache.snapshot()
        snapshot.storage = self.storage
        snapshot.nominated = self.nominated_by_node()
        snapshot.namespace_labels = self.namespace_labels
        try:
            result = self.framework.schedule(info, snapshot)
        except FitError as exc:
            self.stats["unschedulable"] += 1
            nominated = None
            if exc.state is not None and self.framework.post_filter_plugins:
                snapshot.disruption_budgets = self.budgets.list()
                preemptor = info
                known = self.nominated.get(qpi.key)
                if known is not None and known[0] != (pod.get("status") or {}).get("nominatedNodeName"):
                    # nominated by the last attempt, its status not written yet: the plugin reads it there
                    preemptor = PodInfo({**pod, "status": {**(pod.get("status") or {}), "nominatedNodeName": known[0]}})
                try:
                    found, _ = self.framework.run_post_filter(exc.state, preemptor, exc.diagnosis)
                except SchedulingError as err:
                    found = None
                    log.warning("preemption error pod=%s error=%r", qpi.key, str(err))
                if found is not None:
                    nominated = self._preempt(pod, info, found)
            where = self.queue.add_unschedulable(qpi, exc.diagnosis.unschedulable_plugins)
            log.info("unschedulable pod=%s attempts=%d queue=%s message=%r", qpi.key, qpi.attempts,
                     where or "dropped", exc.message)
            self._spawn(self._report_failure(pod, "Unschedulable", exc.message, nominated))
            return False
        except SchedulingError as exc:
            self.stats["errors"] += 1
            self.queue.add_backoff(qpi)
            log.warning("scheduling error pod=%s attempts=%d error=%r", qpi.key, qpi.attempts, str(exc))
            self._spawn(self._report_failure(pod, "SchedulerError", str(exc)))
            return False
        self.cache.assume_pod(info, result.node)
        log.debug("assumed pod=%s node=%s feasible=%d evaluated=%d scores=%s cycle_ms=%.2f", qpi.key, result.node,
                  result.feasible, result.evaluated, result.scores, (time.monotonic() - started) * 1000)
        self.inflight_bindings += 1
        self._spawn(self._bind_in_slot(qpi, pod, result.node))
        return True

    async def _bind_in_slot(self, qpi: QueuedPodInfo, pod: Obj, node: str) -> None:
        """:meth:`_bind`, then give its binding slot back (taken by :meth:`schedule_one`)."""
        try:
            await self._bind(qpi, pod, node)
        finally:
            self.inflight_bindings -= 1
            self._binding_slots.release()

    async def _bind(self, qpi: QueuedPodInfo, pod: Obj, node: str) -> None:
        meta = pod.get("metadata") or {}
        namespace, name = meta.get("namespace") or "default", meta.get("name") or ""
        try:
            for pvc in claims_to_select(pod, self.storage, node):
                # VolumeBinding's PreBind: WaitForFirstConsumer claims learn their node first.
                await self.client.patch(self.pvc_rt, pvc["metadata"]["name"],
                                        {"metadata": {"annotations": {ANN_SELECTED_NODE: node}}}, namespace)
            await self.client.bind(namespace, name, node)
        except (errors.Conflict, errors.NotFound) as exc:
            # Someone else bound it, or it is being deleted or gone: not ours to place.
            self.stats["conflicts"] += 1
            self.cache.forget_pod(qpi.key)
            self.queue.done(qpi.key)
            log.info("binding refused, dropping pod=%s node=%s error=%r", qpi.key, node, str(exc))
            current = self.pods.get(qpi.key)
            if isinstance(exc, errors.Conflict) and current is not None and self.responsible_for(current):
                # Still pending as far as we know: the watch will tell; look again after a back-off.
                self.queue.add_backoff(qpi)
            return
        except asyncio.CancelledError:
            self.cache.forget_pod(qpi.key)
            self.queue.done(qpi.key)
            raise
        except Exception as exc:  # noqa: BLE001 - apiserver away etc.: retry after the back-off
            self.stats["errors"] += 1
            self.cache.forget_pod(qpi.key)
            self.queue.add_backoff(qpi)
            log.warning("binding failed, will retry pod=%s node=%s error=%r", qpi.key, node, str(exc))
            await self.recorder.record(self._ref(pod), "Warning", "FailedScheduling", f"Binding rejected: {exc}")
            return
        self.cache.finish_binding(qpi.key)
        self.queue.done(qpi.key)
        self.stats["scheduled"] += 1
        log.info("bound pod=%s node=%s attempts=%d", qpi.key, node, qpi.attempts)
        await self.recorder.record(self._ref(pod), "Normal", "Scheduled",
                                   f"Successfully assigned {namespace}/{name} to {node}")

    # ------------------------------------------------------------------ preemption
    def _preempt(self, pod: Obj, info: PodInfo, found: PostFilterResult) -> str | None:
        """Act on a PostFilter result: nominate the pod (returns the node to write into its status,
        ``""`` to clear it, None to leave it) and evict the victims in the background."""
        node = found.nominated_node
        current = (pod.get("status") or {}).get("nominatedNodeName") or ""
        if not node:
            self.nominated.pop(info.key, None)
            return "" if current else None
        self.stats["preemptions"] += 1
        self.nominated[info.key] = (node, info)
        lower = [other for key, (where, other) in self.nominated.items()
                 if where == node and key != info.key and other.priority < info.priority]
        for other in lower:
            del self.nominated[other.key]
        log.info("preempting pod=%s node=%s victims=%s pdb_violations=%d", info.key, node,
                 [v.key for v in found.victims], found.pdb_violations)
        self._spawn(self._evict_victims(pod, node, found.victims, lower))
        return node

    async def _evict_victims(self, pod: Obj, node: str, victims: list[PodInfo], lower: list[PodInfo]) -> None:
        """Kubernetes' ``prepareCandidate``: each victim gets the ``DisruptionTarget`` condition, is
        deleted and gets a ``Preempted`` event; lower-priority pods nominated to ``node`` lose their
        nomination."""
        uid = (pod.get("metadata") or {}).get("uid") or ""
        scheduler = (pod.get("spec") or {}).get("schedulerName") or self.scheduler_name

        async def evict(victim: PodInfo) -> None:
            condition = {"type": DISRUPTION_TARGET, "status": "True", "reason": REASON_PREEMPTION_BY_SCHEDULER,
                         "message": f"{scheduler}: preempting to accommodate a higher priority pod",
                         "lastProbeTime": None, "lastTransitionTime": now_rfc3339()}
            try:
                await self.client.patch(self.pod_rt, victim.name, {"status": {"conditions": [condition]}},
                                        victim.namespace, patch_type="strategic", subresource="status")
                await self.client.delete(self.pod_rt, victim.name, victim.namespace,
                                         preconditions={"uid": victim.uid} if victim.uid else None)
            except errors.NotFound:
                return
            except Exception as exc:  # noqa: BLE001 - the pod is retried and preempts again if still needed
                log.warning("preemption: evicting pod=%s failed error=%r", victim.key, str(exc))
                return
            log.info("preempted pod=%s by=%s node=%s", victim.key, pod_key(pod), node)
            await self.recorder.record(self._ref(victim.pod), "Normal", "Preempted",
                                       f"Preempted by pod {uid} on node {node}")

        async def clear(other: PodInfo) -> None:
            try:
                await self.client.patch(self.pod_rt, other.name, {"status": {"nominatedNodeName": None}},
                                        other.namespace, patch_type="merge", subresource="status")
            except errors.APIError as exc:
                log.info("clearing nomination pod=%s error=%r", other.key, str(exc))

        await asyncio.gather(*(evict(v) for v in victims), *(clear(o) for o in lower))

    @staticmethod
    def _ref(pod: Obj) -> Obj:
        return {**pod, "apiVersion": pod.get("apiVersion") or "v1", "kind": pod.get("kind") or "Pod"}

    async def _report_failure(self, pod: Obj, reason: str, message: str, nominated: str | None = None) -> None:
        """Set ``PodScheduled=False`` (only when it changes) and record ``FailedScheduling``.
        ``nominated``: the ``status.nominatedNodeName`` to write with it (``""``: clear it; None: leave
        it), as Kubernetes' ``updatePod`` does."""
        meta = pod.get("metadata") or {}
        namespace, name = meta.get("namespace") or "default", meta.get("name") or ""
        status = pod.get("status") or {}
        current = next((c for c in status.get("conditions") or [] if c.get("type") == "PodScheduled"), None)
        changed = current is None or (current.get("status"), current.get("reason"), current.get("message")) != \
            ("False", reason, message)
        if changed or (nominated and nominated != status.get("nominatedNodeName")):
            condition = {"type": "PodScheduled", "status": "False", "reason": reason, "message": message,
                         "lastProbeTime": None, "lastTransitionTime": now_rfc3339()}
            if current is not None and current.get("status") == "False" and current.get("lastTransitionTime"):
                condition["lastTransitionTime"] = current["lastTransitionTime"]
            patch: Obj = {"conditions": [condition]}
            if nominated is not None:
                patch["nominatedNodeName"] = nominated or None
            try:
                await self.client.patch(self.pod_rt, name, {"status": patch}, namespace,
                                        patch_type="strategic", subresource="status")
            except errors.NotFound:
                return
            except Exception as exc:  # noqa: BLE001 - the condition is informative; the queue retries anyway
                log.warning("condition update failed pod=%s/%s error=%r", namespace, name, str(exc))
        await self.recorder.record(self._ref(pod), "Warning", "FailedScheduling", message)
