"""The node lifecycle controller: notice dead nodes, taint them, evict the pods that do not tolerate it.

Kubernetes' ``pkg/controller/nodelifecycle`` (``monitorNodeHealth`` / ``tryUpdateNodeHealth``,
taint-based eviction) together with the NoExecute taint manager
(``pkg/controller/tainteviction``):

* **Node health.**  For every Node the controller keeps a *probe time* — when it last saw
  the node alive, on its own clock: the first time it sees the node, whenever the node's
  ``Ready`` condition carries a new ``lastHeartbeatTime`` (the kubelet posted status) and
  whenever Lease ``kube-node-lease/<node>`` has a newer ``renewTime`` (the kubelet's 10 s
  heartbeat).  A node that was never seen with a ``Ready`` condition starts from its
  ``creationTimestamp`` and gets ``--node-startup-grace-period`` (60 s) instead of
  ``--node-monitor-grace-period`` (40 s).  Counting on the controller's own clock, as
  Kubernetes does, makes the decision immune to clock skew between hosts; a restarted
  controller therefore gives every node a fresh grace period.
* **Unknown.**  When the probe time is older than the grace period, the ``Ready``,
  ``MemoryPressure``, ``DiskPressure`` and ``PIDPressure`` conditions are set to
  ``Unknown`` (reason ``NodeStatusUnknown``, message "Kubelet stopped posting node status.";
  a condition the kubelet never posted is added with ``NodeStatusNeverUpdated``, "Kubelet
  never posted node status.") through the Node ``status`` subresource.
* **Taints.**  ``Ready`` Unknown → ``node.kubernetes.io/unreachable`` with effects
  ``NoSchedule`` and ``NoExecute``; ``Ready`` False → ``node.kubernetes.io/not-ready`` with
  both effects (swapped at once when the node goes from one to the other); ``Ready`` True →
  both removed.  New taints get ``timeAdded``; other taints on the node are left alone.
  Adding the first ``NoExecute`` taint to a node is limited to ``--node-eviction-rate``
  nodes per second (default 0.1, burst 1, one limiter for the cluster — Kubernetes keeps
  one per zone and slows down or stops when a large part of a zone is unhealthy; this
  controller does not).  ``NoSchedule`` taints and removals are never delayed.
* **Pods not ready.**  Pods on a node whose ``Ready`` is Unknown get their ``Ready``
  condition set to False (``MarkPodsNotReady``; a Warning event ``NodeNotReady`` "Node is
  not ready" on the pod), so the endpoints controller takes them out of Services at once.
  When a node goes from Ready=True to False (its kubelet is alive and reports it) this is
  done once, as Kubernetes does, and the kubelet stays in charge afterwards.
* **Taint-based eviction.**  A pod on a node with ``NoExecute`` taints is deleted unless
  every such taint is tolerated: at once when one is not tolerated; otherwise at the
  earliest ``timeAdded + tolerationSeconds`` of the tolerations used (the first toleration
  matching each taint); never when none of them has ``tolerationSeconds``.  Kubernetes
  counts from when its taint manager saw the taint; counting from ``timeAdded`` keeps the
  decision across controller restarts (``timeAdded`` has second precision, so an eviction
  may come up to a second early; a taint without it counts from when this controller first
  saw it).  Pods already terminating are left alone.  A pod is first given the
  ``DisruptionTarget`` condition (``DeletionByTaintManager``, ``Taint manager: deleting due to
  NoExecute taint``), then deleted, as Kubernetes' ``addConditionAndDeletePod``.  Evicted pods stay ``Terminating``
  while their node is away (nothing can stop their containers); the ReplicaSet controller
  ignores terminating pods and creates replacements, which the scheduler keeps off the
  tainted node.
* **Only the pod's own tolerations count.**  The apiserver's ``DefaultTolerationSeconds``
  admission plugin (:mod:`minik8s.apiserver.defaulttolerationseconds`, kube-apiserver's
  ``--default-not-ready-toleration-seconds`` / ``--default-unreachable-toleration-seconds``,
  300 s) gives every pod ``node.kubernetes.io/not-ready:NoExecute`` and
  ``node.kubernetes.io/unreachable:NoExecute`` tolerations when it is created, so an ordinary
  pod goes 300 s after its node's taint was added; a pod without them (the plugin disabled)
  goes at once, as in Kubernetes.
* **Events.**  ``NodeNotReady`` ("Node <name> status is now: NodeNotReady") on the Node when
  its Ready condition leaves True; ``TaintManagerEviction`` ("Marking for deletion Pod
  ns/name", and "Cancelling deletion of Pod ns/name" when a pending eviction is called off).

**Apiserver outages.**  Kubelets cannot renew Leases while the apiserver is away, so an
outage must not make every node look dead when it ends: after an API call of this
controller failed with ServiceUnavailable, or after the Lease informer had to relist (its
watch broke), every grace period starts over from the moment the API answered again —
as a restarted controller does.  Running pods and Services are not disturbed by an
apiserver restart.

Keys of the work queue are node names; pod and Lease events enqueue their node.  Every
node is looked at again after ``--node-monitor-period`` (5 s) and exactly when its grace
period or a pending eviction runs out.
"""

from __future__ import annotations

import asyncio
import copy
import datetime as dt
import math
from collections.abc import Callable
from dataclasses import dataclass, field

from minik8s.api import errors
from minik8s.api.base import Obj, now_rfc3339, parse_time
from minik8s.api.policy import DELETION_BY_TAINT_MANAGER, DISRUPTION_TARGET
from minik8s.api.taints import NO_EXECUTE, NO_SCHEDULE, TAINT_NOT_READY, TAINT_UNREACHABLE, toleration_matches
from minik8s.client.events import EventRecorder
from minik8s.client.factory import SharedInformerFactory
from minik8s.client.informer import Informer, pods_by_node
from minik8s.client.rest import Client
from minik8s.controllers.base import Controller
from minik8s.controllers.ownerrefs import meta_of

Clock = Callable[[], dt.datetime]

LEASE_NAMESPACE = "kube-node-lease"
#: Taint keys this controller owns (with both effects).
CONTROLLER_TAINT_KEYS = (TAINT_NOT_READY, TAINT_UNREACHABLE)
#: Node conditions set to Unknown when the kubelet stops posting (Kubernetes' ``nodeConditionTypes``).
NODE_CONDITION_TYPES = ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")
NODE_NAME_INDEX = "nodeName"


def utcnow() -> dt.datetime:
    """The current time, timezone-aware UTC (the default clock)."""
    return dt.datetime.now(dt.UTC)


def format_time(when: dt.datetime) -> str:
    """RFC 3339 with second precision, as ``metav1.Time`` is serialised."""
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class NodeLifecycleOptions:
    """kube-controller-manager flags of the same names; durations in seconds, rate in nodes/s."""

    node_monitor_period: float = 5.0
    node_monitor_grace_period: float = 40.0
    node_startup_grace_period: float = 60.0
    node_eviction_rate: float = 0.1


# ====================================================================== node health
@dataclass
class NodeHealth:
    """What the controller last saw of one node (Kubernetes' ``nodeHealthData``).

    ``probe``: when the node was last seen alive, on the controller's clock;
    ``heartbeat``: the Ready condition's ``lastHeartbeatTime`` then (None: no Ready condition);
    ``renew``: the Lease's ``renewTime`` then; ``ready``: the Ready status after the last sync.
    """

    probe: dt.datetime
    heartbeat: str | None = None
    renew: dt.datetime | None = None
    ready: str | None = None


def node_condition(node: Obj, ctype: str) -> Obj | None:
    """The Node's ``status.conditions`` entry of type ``ctype``, or None."""
    for cond in (node.get("status") or {}).get("conditions") or []:
        if cond.get("type") == ctype:
            return dict(cond)
    return None


def ready_status(node: Obj) -> str | None:
    """``True``, ``False`` or ``Unknown`` from the Ready condition; None when there is none."""
    cond = node_condition(node, "Ready")
    return str(cond.get("status")) if cond is not None else None


def lease_renew_time(lease: Obj | None) -> dt.datetime | None:
    """The Lease's ``spec.renewTime`` as a datetime (None without lease or time, or unparsable)."""
    if lease is None:
        return None
    try:
        return parse_time((lease.get("spec") or {}).get("renewTime"))
    except ValueError:
        return None


def observe(health: NodeHealth | None, node: Obj, lease: Obj | None, now: dt.datetime) -> NodeHealth:
    """``health`` brought up to date with the cached ``node`` and its ``lease`` (``tryUpdateNodeHealth``).

    The probe time moves to ``now`` when the node is first seen (to its
    ``creationTimestamp`` when it has no Ready condition yet), when its Ready condition
    appears, disappears or carries a new ``lastHeartbeatTime``, and when the Lease's
    ``renewTime`` is later than the one seen before.  Returns a new NodeHealth.
    """
    ready = node_condition(node, "Ready")
    heartbeat = str(ready.get("lastHeartbeatTime") or "") if ready is not None else None
    if health is None:
        probe = now
        if ready is None:
            created = parse_time(meta_of(node).get("creationTimestamp"))
            probe = min(created, now) if created is not None else now
        result = NodeHealth(probe=probe, heartbeat=heartbeat)
    else:
        result = NodeHealth(probe=health.probe, heartbeat=heartbeat, renew=health.renew, ready=health.ready)
        if (health.heartbeat is None) != (heartbeat is None) or health.heartbeat != heartbeat:
            result.probe = now
    renew = lease_renew_time(lease)
    if renew is not None and (result.renew is None or result.renew < renew):
        result.renew = renew
        result.probe = now
    return result


def grace_period(node: Obj, options: NodeLifecycleOptions) -> float:
    """``--node-startup-grace-period`` while the node never posted Ready, else ``--node-monitor-grace-period``."""
    if node_condition(node, "Ready") is None:
        return options.node_startup_grace_period
    return options.node_monitor_grace_period


def seconds_until_stale(health: NodeHealth, node: Obj, now: dt.datetime, options: NodeLifecycleOptions) -> float:
    """Seconds left before the node counts as gone (0 or less: it already does)."""
    return grace_period(node, options) - (now - health.probe).total_seconds()


def unknown_conditions(node: Obj, now: dt.datetime) -> list[Obj] | None:
    """``status.conditions`` with Ready and the pressure conditions set to Unknown; None if nothing changes.

    A condition that is not Unknown yet becomes Unknown with reason ``NodeStatusUnknown``
    and a new ``lastTransitionTime`` (its ``lastHeartbeatTime`` is kept: the last time the
    kubelet posted); a missing one is added with reason ``NodeStatusNeverUpdated``
    (heartbeat: the Node's ``creationTimestamp``).  Other condition types are kept.
    """
    conditions = [dict(c) for c in (node.get("status") or {}).get("conditions") or []]
    stamp = format_time(now)
    changed = False
    for ctype in NODE_CONDITION_TYPES:
        cond = next((c for c in conditions if c.get("type") == ctype), None)
        if cond is None:
            conditions.append({"type": ctype, "status": "Unknown", "reason": "NodeStatusNeverUpdated",
                               "message": "Kubelet never posted node status.",
                               "lastHeartbeatTime": meta_of(node).get("creationTimestamp") or stamp,
                               "lastTransitionTime": stamp})
            changed = True
        elif cond.get("status") != "Unknown":
            cond.update({"status": "Unknown", "reason": "NodeStatusUnknown",
                         "message": "Kubelet stopped posting node status.", "lastTransitionTime": stamp})
            changed = True
    return conditions if changed else None


# ====================================================================== taints
def is_controller_taint(taint: Obj) -> bool:
    """One of the four taints this controller manages (not-ready/unreachable × NoSchedule/NoExecute)."""
    return taint.get("key") in CONTROLLER_TAINT_KEYS and taint.get("effect") in (NO_SCHEDULE, NO_EXECUTE)


def has_controller_no_execute(taints: list[Obj]) -> bool:
    """The node already carries a not-ready or unreachable ``NoExecute`` taint."""
    return any(is_controller_taint(t) and t.get("effect") == NO_EXECUTE for t in taints)


def desired_taints(taints: list[Obj], ready: str | None, now: dt.datetime,
                   allow_no_execute: bool = True) -> list[Obj]:
    """The node's ``spec.taints`` as they should be for Ready status ``ready``.

    False → ``not-ready`` NoSchedule + NoExecute, Unknown → ``unreachable`` NoSchedule +
    NoExecute, True or no Ready condition → neither.  Taints already present keep their
    ``timeAdded``; new ones get ``now``.  ``allow_no_execute=False`` (eviction rate limit)
    holds back a NoExecute taint the node does not have yet.  Taints of other keys are kept
    in their order.
    """
    key = {"False": TAINT_NOT_READY, "Unknown": TAINT_UNREACHABLE}.get(ready or "")
    wanted = [(key, NO_SCHEDULE), (key, NO_EXECUTE)] if key else []
    result: list[Obj] = []
    for taint in taints:
        if not is_controller_taint(taint) or (taint.get("key"), taint.get("effect")) in wanted:
            result.append(taint)
    present = {(t.get("key"), t.get("effect")) for t in result}
    for wanted_key, effect in wanted:
        if (wanted_key, effect) in present:
            continue
        if effect == NO_EXECUTE and not allow_no_execute:
            continue
        result.append({"key": wanted_key, "effect": effect, "timeAdded": format_time(now)})
    return result


class TokenBucket:
    """``--node-eviction-rate``: tokens per second, burst 1 (client-go's ``NewTokenBucketRateLimiter``).

    :meth:`take` spends a token when one is there and returns 0, else returns the seconds
    until the next one (``inf`` when ``rate`` is 0 or less: never).
    """

    def __init__(self, rate: float, burst: int = 1) -> None:
        self.rate = rate
        self.burst = max(burst, 1)
        self.tokens = float(self.burst)
        self.stamp: dt.datetime | None = None

    def take(self, now: dt.datetime) -> float:
        if self.rate <= 0:
            return math.inf
        if self.stamp is not None:
            elapsed = max((now - self.stamp).total_seconds(), 0.0)
            self.tokens = min(float(self.burst), self.tokens + elapsed * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return 0.0
        return (1 - self.tokens) / self.rate


# ====================================================================== tolerations and eviction
def eviction_time(tolerations: list[Obj], taints: list[tuple[Obj, dt.datetime]]) -> dt.datetime | None:
    """When a pod with ``tolerations`` must go because of NoExecute ``taints`` (each with its start time).

    Kubernetes' ``processPodOnNode``: when some taint is not tolerated the answer is the
    earliest start (that is, at once); otherwise, of the first toleration matching each
    taint, those with ``tolerationSeconds`` (negative counts as 0) give ``start + seconds``
    and the earliest wins; None (never) when no taint or no used toleration has seconds.
    """
    deadlines: list[dt.datetime] = []
    for taint, start in taints:
        used = next((t for t in tolerations if toleration_matches(t, taint)), None)
        if used is None:
            return min(s for _, s in taints)
        seconds = used.get("tolerationSeconds")
        if seconds is not None:
            deadlines.append(start + dt.timedelta(seconds=max(int(seconds), 0)))
    return min(deadlines) if deadlines else None


def pod_not_ready_status(pod: Obj, now: dt.datetime) -> Obj | None:
    """The pod's ``status`` with its Ready condition set to False (``MarkPodsNotReady``).

    Only a pod whose Ready condition is True changes (status False, new
    ``lastTransitionTime``); None otherwise.
    """
    status = copy.deepcopy(pod.get("status") or {})
    for cond in status.get("conditions") or []:
        if cond.get("type") == "Ready":
            if cond.get("status") != "True":
                return None
            cond["status"] = "False"
            cond["lastTransitionTime"] = format_time(now)
            return status
    return None


# ====================================================================== the controller
@dataclass
class _NodeState:
    """Per-node bookkeeping beyond NodeHealth: first sightings of taints without timeAdded,
    pending evictions (pod key → time), and whether an eviction-rate token was granted."""

    taint_seen: dict[tuple[str, str, str], dt.datetime] = field(default_factory=dict)
    pending: dict[str, dt.datetime] = field(default_factory=dict)
    granted: bool = False


class NodeLifecycleController(Controller):
    """Monitors node health through Node status and Leases, taints dead nodes, evicts pods (keys: node names).

    ``options`` holds the ``--node-*`` flags; ``clock`` returns aware UTC datetimes (tests
    pass a fake one).  With a namespace-limited ``factory`` (tests) the Lease informer
    still watches ``kube-node-lease``: it is then this controller's own.
    """

    name = "node-controller"

    def __init__(self, client: Client, factory: SharedInformerFactory,
                 options: NodeLifecycleOptions | None = None, recorder: EventRecorder | None = None,
                 clock: Clock = utcnow) -> None:
        super().__init__(client, factory, recorder)
        self.options = options or NodeLifecycleOptions()
        self.now = clock
        self.eviction_recorder = EventRecorder(client, "taint-eviction-controller")
        self.node_rt = client.kind("v1", "Node")
        self.pod_rt = client.kind("v1", "Pod")
        self.lease_rt = client.kind("coordination.k8s.io/v1", "Lease")
        self.nodes = factory.informer(self.node_rt)
        self.pods = factory.informer(self.pod_rt, {NODE_NAME_INDEX: pods_by_node})
        self.own_lease_informer = factory.namespace not in (None, LEASE_NAMESPACE)
        if self.own_lease_informer:
            self.leases = Informer(client, self.lease_rt, LEASE_NAMESPACE)
        else:
            self.leases = factory.informer(self.lease_rt)
        self.health: dict[str, NodeHealth] = {}
        self.state: dict[str, _NodeState] = {}
        self.limiter = TokenBucket(self.options.node_eviction_rate)
        #: an API call failed with ServiceUnavailable and no call has succeeded since
        self.contact_lost = False
        #: grace periods count from here at the earliest (when the API view was last regained)
        self.fresh_since: dt.datetime | None = None
        self._lease_lists: int | None = None
        self.nodes.add_handler(self._on_node, lambda _old, cur: self._on_node(cur), self._on_node_delete)
        self.leases.add_handler(self._on_lease, lambda _old, cur: self._on_lease(cur), self._on_lease)
        self.pods.add_handler(self._on_pod, lambda _old, cur: self._on_pod(cur), self._on_pod_delete)

    # ------------------------------------------------------------------ event handlers
    def _on_node(self, node: Obj) -> None:
        self.enqueue(str(meta_of(node).get("name")))

    def _on_node_delete(self, node: Obj) -> None:
        name = str(meta_of(node).get("name"))
        self.health.pop(name, None)
        self.state.pop(name, None)
        self.enqueue(name)

    def _on_lease(self, lease: Obj) -> None:
        meta = meta_of(lease)
        if meta.get("namespace") == LEASE_NAMESPACE and meta.get("name"):
            self.enqueue(str(meta["name"]))

    def _on_pod(self, pod: Obj) -> None:
        """A pod on a node that is not Ready or has NoExecute taints: look at that node again."""
        node_name = (pod.get("spec") or {}).get("nodeName")
        if not node_name:
            return
        node = self.nodes.get(node_name)
        if node is None:
            return
        taints = (node.get("spec") or {}).get("taints") or []
        if ready_status(node) != "True" or any(t.get("effect") == NO_EXECUTE for t in taints):
            self.enqueue(node_name)

    def _on_pod_delete(self, pod: Obj) -> None:
        node_name = (pod.get("spec") or {}).get("nodeName")
        state = self.state.get(node_name or "")
        if state is not None:
            meta = meta_of(pod)
            state.pending.pop(f"{meta.get('namespace')}/{meta.get('name')}", None)

    # ------------------------------------------------------------------ running
    async def run(self, workers: int = 1) -> None:
        """Run the private Lease informer (namespace-limited factories only), then the workers."""
        if not self.own_lease_informer:
            await super().run(workers)
            return
        task = asyncio.get_running_loop().create_task(self.leases.run(), name="informer-leases")
        try:
            await self.leases.wait_synced()
            await super().run(workers)
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    # ------------------------------------------------------------------ sync
    async def sync(self, key: str) -> None:
        """Reconcile node ``key``: health, conditions, taints, pod readiness, evictions; requeue.

        An apiserver that cannot be reached (ServiceUnavailable) is remembered: see :meth:`_regain_contact`.
        """
        try:
            await self._sync(key)
        except errors.ServiceUnavailable:
            self.contact_lost = True
            raise

    def _note_relist(self, now: dt.datetime) -> None:
        """A relisted Lease informer (its watch broke: apiserver restart, network) restarts every grace period."""
        lists = self.leases.relists
        if self._lease_lists is not None and lists != self._lease_lists:
            self.fresh_since = now
            self.log.info("node leases relisted: every node gets a fresh grace period")
        self._lease_lists = lists

    async def _regain_contact(self, key: str, now: dt.datetime) -> None:
        """After an outage, read the node's Lease from the apiserver before judging it.

        Kubelets could not renew their Leases while the apiserver was away, so a node is not
        judged on that time: once the apiserver answers again every grace period starts
        over (raises ServiceUnavailable while it still does not answer).
        """
        try:
            await self.client.get(self.lease_rt, key, LEASE_NAMESPACE)
        except errors.NotFound:
            pass
        self.contact_lost = False
        self.fresh_since = now
        self.log.info("apiserver reachable again: every node gets a fresh grace period")

    async def _sync(self, key: str) -> None:
        node = self.nodes.get(key)
        if node is None:
            self.health.pop(key, None)
            self.state.pop(key, None)
            return
        opts = self.options
        now = self.now()
        self._note_relist(now)
        state = self.state.setdefault(key, _NodeState())
        previous = self.health.get(key)
        health = observe(previous, node, self.leases.get(f"{LEASE_NAMESPACE}/{key}"), now)
        self.health[key] = health
        before = health.ready if previous is not None and previous.ready is not None else ready_status(node)
        left = seconds_until_stale(health, node, now, opts)
        if left <= 0 and self.contact_lost:
            await self._regain_contact(key, now)
        if self.fresh_since is not None and health.probe < self.fresh_since:
            health.probe = self.fresh_since
            left = seconds_until_stale(health, node, now, opts)
        if left <= 0:
            conditions = unknown_conditions(node, now)
            if conditions is not None:
                node = await self._write_conditions(node, conditions)
                self.log.info("node %s stopped posting status (last seen %.1fs ago): Ready Unknown", key,
                              (now - health.probe).total_seconds())
        ready = ready_status(node)
        if before == "True" and ready != "True":
            self.event(node, "Normal", "NodeNotReady", f"Node {key} status is now: NodeNotReady")
        health.ready = ready

        delays = [opts.node_monitor_period]
        if left > 0:
            delays.append(left)
        node, wait = await self._sync_taints(key, node, ready, state, now)
        if wait > 0:
            delays.append(wait)
        errs: list[BaseException] = []
        pods = self.pods.by_index(NODE_NAME_INDEX, key)
        if ready == "Unknown" or (ready == "False" and before == "True"):
            errs += await self._mark_pods_not_ready(pods, now)
        next_eviction, evict_errs = await self._evict(key, node, pods, state, now)
        errs += evict_errs
        if next_eviction is not None:
            delays.append((next_eviction - now).total_seconds())
        delay = min(d for d in delays if math.isfinite(d))
        self.enqueue_after(key, max(delay, 0.05))
        if errs:
            raise errs[0]

    async def _write_conditions(self, node: Obj, conditions: list[Obj]) -> Obj:
        """Merge-patch ``status.conditions`` (compare-and-swap on the cached resourceVersion)."""
        meta = meta_of(node)
        patch = {"metadata": {"resourceVersion": meta.get("resourceVersion")}, "status": {"conditions": conditions}}
        return await self.client.patch(self.node_rt, str(meta.get("name")), patch, subresource="status")

    async def _sync_taints(self, key: str, node: Obj, ready: str | None, state: _NodeState,
                           now: dt.datetime) -> tuple[Obj, float]:
        """Bring the node's not-ready/unreachable taints in line with ``ready``; returns the node and
        the seconds to wait for an eviction-rate token (0: none needed)."""
        taints = list((node.get("spec") or {}).get("taints") or [])
        wait = 0.0
        allow = True
        if ready in ("False", "Unknown") and not has_controller_no_execute(taints):
            if not state.granted:
                wait = self.limiter.take(now)
                state.granted = wait == 0
            allow = state.granted
        else:
            state.granted = False
        wanted = desired_taints(taints, ready, now, allow)
        if wanted == taints:
            return node, wait
        meta = meta_of(node)
        patch = {"metadata": {"resourceVersion": meta.get("resourceVersion")}, "spec": {"taints": wanted or None}}
        node = await self.client.patch(self.node_rt, key, patch)
        added = [f"{t['key']}:{t['effect']}" for t in wanted if t not in taints]
        removed = [f"{t['key']}:{t['effect']}" for t in taints if t not in wanted]
        self.log.info("node %s Ready=%s taints added=%s removed=%s", key, ready, ",".join(added) or "-",
                      ",".join(removed) or "-")
        return node, wait

    async def _mark_pods_not_ready(self, pods: list[Obj], now: dt.datetime) -> list[BaseException]:
        """Set Ready=False on the node's Ready pods (status subresource, compare-and-swap)."""
        errs: list[BaseException] = []
        for pod in pods:
            status = pod_not_ready_status(pod, now)
            if status is None or meta_of(pod).get("deletionTimestamp"):
                continue
            updated = {**pod, "status": status}
            try:
                await self.client.update_status(self.pod_rt, updated)
            except errors.NotFound:
                continue
            except errors.APIError as exc:
                errs.append(exc)
                continue
            self.event(pod, "Warning", "NodeNotReady", "Node is not ready")
        return errs

    def _taint_start(self, node_name: str, taint: Obj, state: _NodeState, now: dt.datetime) -> dt.datetime:
        """When a taint started: its ``timeAdded``, else when this controller first saw it."""
        try:
            added = parse_time(taint.get("timeAdded"))
        except ValueError:
            added = None
        if added is not None:
            return added
        ident = (str(taint.get("key")), str(taint.get("value") or ""), str(taint.get("effect")))
        return state.taint_seen.setdefault(ident, now)

    async def _evict(self, node_name: str, node: Obj, pods: list[Obj], state: _NodeState,
                     now: dt.datetime) -> tuple[dt.datetime | None, list[BaseException]]:
        """Delete the pods the node's NoExecute taints do not (or no longer) allow.

        Returns the next pending eviction time (None: none) and the errors met.
        """
        no_execute = [t for t in (node.get("spec") or {}).get("taints") or [] if t.get("effect") == NO_EXECUTE]
        current = {(str(t.get("key")), str(t.get("value") or ""), str(t.get("effect"))) for t in no_execute}
        state.taint_seen = {k: v for k, v in state.taint_seen.items() if k in current}
        timed = [(t, self._taint_start(node_name, t, state, now)) for t in no_execute]
        earliest: dt.datetime | None = None
        errs: list[BaseException] = []
        pending: dict[str, dt.datetime] = {}
        for pod in pods:
            meta = meta_of(pod)
            pod_key = f"{meta.get('namespace')}/{meta.get('name')}"
            if meta.get("deletionTimestamp"):
                continue
            when = None
            if timed:
                when = eviction_time((pod.get("spec") or {}).get("tolerations") or [], timed)
            if when is None:
                if pod_key in state.pending:
                    self._eviction_event(pod, f"Cancelling deletion of Pod {pod_key}")
                continue
            if when > now:
                pending[pod_key] = when
                earliest = when if earliest is None else min(earliest, when)
                continue
            try:
                await self._mark_disrupted(pod)
                await self.client.delete(self.pod_rt, str(meta.get("name")), meta.get("namespace"),
                                         preconditions={"uid": str(meta.get("uid"))})
            except (errors.NotFound, errors.Conflict):
                continue
            except errors.APIError as exc:
                errs.append(exc)
                pending[pod_key] = when
                continue
            self.log.info("evicting pod %s from node %s (NoExecute taints %s)", pod_key, node_name,
                          ",".join(str(t.get("key")) for t in no_execute))
            self._eviction_event(pod, f"Marking for deletion Pod {pod_key}")
        state.pending = pending
        return earliest, errs

    async def _mark_disrupted(self, pod: Obj) -> None:
        """``addConditionAndDeletePod``'s first half: the ``DisruptionTarget`` condition (reason
        ``DeletionByTaintManager``) on the pod's status, unless it is there already."""
        reason, message = DELETION_BY_TAINT_MANAGER
        if any(c.get("type") == DISRUPTION_TARGET and c.get("status") == "True" and c.get("reason") == reason
               for c in (pod.get("status") or {}).get("conditions") or []):
            return
        condition = {"type": DISRUPTION_TARGET, "status": "True", "reason": reason, "message": message,
                     "lastProbeTime": None, "lastTransitionTime": now_rfc3339()}
        meta = meta_of(pod)
        await self.client.patch(self.pod_rt, str(meta.get("name")),
                                {"metadata": {"uid": meta.get("uid")}, "status": {"conditions": [condition]}},
                                meta.get("namespace"), patch_type="strategic", subresource="status")

    def _eviction_event(self, pod: Obj, message: str) -> None:
        """A Normal ``TaintManagerEviction`` event from ``taint-eviction-controller``, in the background."""
        try:
            task = asyncio.get_running_loop().create_task(
                self.eviction_recorder.record(pod, "Normal", "TaintManagerEviction", message))
        except RuntimeError:
            return
        self._event_tasks.add(task)
        task.add_done_callback(self._event_tasks.discard)
