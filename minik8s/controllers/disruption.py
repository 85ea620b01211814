"""The disruption controller: keeps every PodDisruptionBudget's ``status`` (Kubernetes'
``pkg/controller/disruption``).

For a budget it finds the pods of its namespace its selector matches, then:

* ``expectedPods``: with ``maxUnavailable`` or a percentage ``minAvailable``, the sum of the scale
  (``spec.replicas``) of the pods' controllers — a Deployment (through its ReplicaSet), a ReplicaSet
  no Deployment controls, a StatefulSet, a ReplicationController; a pod whose controller is none of
  them fails the sync; pods without a controller are left out (an ``UnmanagedPods`` warning).  With
  an integer ``minAvailable``: the number of matching pods;
* ``desiredHealthy``: ``minAvailable`` (a percentage of ``expectedPods``, rounded up), or
  ``expectedPods - maxUnavailable`` (rounded up), never below 0;
* ``currentHealthy``: matching pods that are Ready, not being deleted and not recorded in
  ``disruptedPods`` by an eviction of the last :data:`~minik8s.api.policy.DELETION_TIMEOUT` seconds;
* ``disruptionsAllowed``: ``currentHealthy - desiredHealthy``, 0 when negative or when no pod is
  expected; the ``DisruptionAllowed`` condition (SufficientPods / InsufficientPods) and
  ``observedGeneration`` with it;
* ``disruptedPods``: entries of pods gone, being deleted or older than the timeout are dropped
  (the budget is synced again when the oldest remaining entry expires).

A sync that fails sets ``disruptionsAllowed`` 0 and the condition False with reason SyncFailed
(``failSafe``), so an eviction cannot pass on a status nobody could compute.
"""

from __future__ import annotations

import datetime as dt

from minik8s.api import errors
from minik8s.api import policy as p
from minik8s.api.base import Obj, object_key, parse_time
from minik8s.api.selectors import LabelSelector
from minik8s.client.events import EventRecorder
from minik8s.client.factory import SharedInformerFactory
from minik8s.client.rest import Client
from minik8s.controllers.base import Controller
from minik8s.controllers.ownerrefs import meta_of


def _controller_ref(obj: Obj) -> Obj | None:
    return next((r for r in meta_of(obj).get("ownerReferences") or [] if r.get("controller")), None)


class DisruptionController(Controller):
    """Computes PodDisruptionBudget statuses from the pods and their controllers' scale (module doc)."""

    name = "disruption-controller"

    def __init__(self, client: Client, factory: SharedInformerFactory, recorder: EventRecorder | None = None,
                 clock: type[dt.datetime] = dt.datetime) -> None:
        super().__init__(client, factory, recorder)
        self.clock = clock
        self.pdb_rt = client.kind("policy/v1", "PodDisruptionBudget")
        self.pdbs = factory.informer(self.pdb_rt)
        self.pods = factory.informer(client.kind("v1", "Pod"))
        self.replicasets = factory.informer(client.kind("apps/v1", "ReplicaSet"))
        self.deployments = factory.informer(client.kind("apps/v1", "Deployment"))
        self.statefulsets = factory.informer(client.kind("apps/v1", "StatefulSet"))
        self.rcs = factory.informer(client.kind("v1", "ReplicationController"))
        self.pdbs.add_handler(self._on_pdb, lambda _old, cur: self._on_pdb(cur), self._on_pdb)
        self.pods.add_handler(self._on_pod, self._on_pod_update, self._on_pod)

    # ------------------------------------------------------------------ events
    def _on_pdb(self, pdb: Obj) -> None:
        self.enqueue(object_key(pdb))

    def _on_pod(self, pod: Obj) -> None:
        for pdb in self._budgets_of(pod):
            self.enqueue(object_key(pdb))

    def _on_pod_update(self, old: Obj, cur: Obj) -> None:
        if meta_of(old).get("labels") != meta_of(cur).get("labels"):
            self._on_pod(old)
        self._on_pod(cur)

    def _budgets_of(self, pod: Obj) -> list[Obj]:
        return [b for b in self.pdbs.list() if p.selects(b, pod)]

    # ------------------------------------------------------------------ sync
    async def sync(self, key: str) -> None:
        pdb = self.pdbs.get(key)
        if pdb is None:
            return
        try:
            await self._try_sync(pdb)
        except errors.Conflict:
            raise
        except (errors.APIError, ValueError) as exc:
            message = exc.message if isinstance(exc, errors.APIError) else str(exc)
            self.log.warning("%s failed to sync %s: %s", self.name, key, message)
            await self._fail_safe(pdb, message)

    def _pods_of(self, pdb: Obj) -> list[Obj]:
        meta = meta_of(pdb)
        selector = LabelSelector.from_dict((pdb.get("spec") or {}).get("selector"))
        return [pod for pod in self.pods.list() if meta_of(pod).get("namespace") == meta.get("namespace")
                and selector.matches(meta_of(pod).get("labels") or {})]

    async def _try_sync(self, pdb: Obj) -> None:
        pods = self._pods_of(pdb)
        if not pods:
            self.event(pdb, "Normal", "NoPods", "No matching pods found")
        expected, desired, unmanaged = self.expected_pod_count(pdb, pods)
        if unmanaged:
            selector = (pdb.get("spec") or {}).get("selector")
            self.event(pdb, "Warning", "UnmanagedPods",
                       f"Pods selected by this PodDisruptionBudget (selector: {selector}) were found to be "
                       "unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may "
                       'result in undefined behavior. To account for these pods please set ".spec.minAvailable" '
                       "field of the PDB to an integer value.")
        now = self.clock.now(dt.UTC)
        disrupted, recheck = self._disrupted_pods(pods, pdb, now)
        healthy = self._count_healthy(pods, disrupted, now)
        await self._update_status(pdb, healthy, desired, expected, disrupted)
        if recheck is not None:
            self.enqueue_after(object_key(pdb), max((recheck - now).total_seconds(), 0.0) + 0.1)

    # ------------------------------------------------------------------ counting
    def expected_pod_count(self, pdb: Obj, pods: list[Obj]) -> tuple[int, int, list[str]]:
        """``(expectedPods, desiredHealthy, unmanaged pod names)`` (``getExpectedPodCount``).

        Raises ValueError when a pod's controller cannot be found or a value does not parse."""
        spec = pdb.get("spec") or {}
        expected, desired = 0, 0
        unmanaged: list[str] = []
        if spec.get("maxUnavailable") is not None:
            expected, unmanaged = self.expected_scale(pods)
            desired = max(expected - p.scaled_value(spec["maxUnavailable"], expected, True), 0)
        elif spec.get("minAvailable") is not None:
            if isinstance(spec["minAvailable"], int):
                desired, expected = spec["minAvailable"], len(pods)
            else:
                expected, unmanaged = self.expected_scale(pods)
                desired = p.scaled_value(spec["minAvailable"], expected, True)
        return expected, desired, unmanaged

    def expected_scale(self, pods: list[Obj]) -> tuple[int, list[str]]:
        """The summed scale of the pods' controllers, and the pods without one (``getExpectedScale``)."""
        scales: dict[str, int] = {}
        unmanaged: list[str] = []
        for pod in pods:
            ref = _controller_ref(pod)
            if ref is None:
                unmanaged.append(str(meta_of(pod).get("name")))
                continue
            if ref.get("uid") in scales:
                continue
            found = self._controller_scale(ref, str(meta_of(pod).get("namespace") or ""))
            if found is None:
                raise ValueError(f'found no controllers for pod "{meta_of(pod).get("name")}"')
            scales[found[0]] = found[1]
        return sum(scales.values()), unmanaged

    def _controller_scale(self, ref: Obj, namespace: str) -> tuple[str, int] | None:
        """(uid, spec.replicas) of the workload ``ref`` stands for: a Deployment through its ReplicaSet,
        else the ReplicaSet, StatefulSet or ReplicationController itself (the finders, in order)."""
        group = str(ref.get("apiVersion") or "").rpartition("/")[0]
        kind, name = ref.get("kind"), ref.get("name")
        key = f"{namespace}/{name}"
        if kind == "ReplicaSet" and group == "apps":
            rs = self.replicasets.get(key)
            if rs is None or meta_of(rs).get("uid") != ref.get("uid"):
                return None
            owner = _controller_ref(rs)
            if owner is not None and owner.get("kind") == "Deployment":
                d = self.deployments.get(f"{namespace}/{owner.get('name')}")
                if d is None or meta_of(d).get("uid") != owner.get("uid"):
                    return None
                return str(meta_of(d).get("uid")), int((d.get("spec") or {}).get("replicas", 1))
            return str(meta_of(rs).get("uid")), int((rs.get("spec") or {}).get("replicas", 1))
        informer = {("StatefulSet", "apps"): self.statefulsets, ("ReplicationController", ""): self.rcs}.get(
            (str(kind), group))
        if informer is None:
            return None
        obj = informer.get(key)
        if obj is None or meta_of(obj).get("uid") != ref.get("uid"):
            return None
        return str(meta_of(obj).get("uid")), int((obj.get("spec") or {}).get("replicas", 1))

    @staticmethod
    def _disrupted_pods(pods: list[Obj], pdb: Obj, now: dt.datetime) -> tuple[dict[str, str], dt.datetime | None]:
        """``buildDisruptedPodMap``: the entries still awaited, and when the oldest of them expires."""
        recorded = (pdb.get("status") or {}).get("disruptedPods") or {}
        kept: dict[str, str] = {}
        recheck: dt.datetime | None = None
        for pod in pods:
            meta = meta_of(pod)
            stamp = recorded.get(meta.get("name"))
            if meta.get("deletionTimestamp") or stamp is None:
                continue
            when = parse_time(stamp)
            if when is None:
                continue
            expires = when + dt.timedelta(seconds=p.DELETION_TIMEOUT)
            if expires < now:
                continue
            recheck = expires if recheck is None or expires < recheck else recheck
            kept[str(meta.get("name"))] = stamp
        return kept, recheck

    @staticmethod
    def _count_healthy(pods: list[Obj], disrupted: dict[str, str], now: dt.datetime) -> int:
        """``countHealthyPods``: Ready pods neither being deleted nor awaiting an eviction's deletion."""
        healthy = 0
        for pod in pods:
            meta = meta_of(pod)
            if meta.get("deletionTimestamp"):
                continue
            when = parse_time(disrupted.get(str(meta.get("name"))))
            if when is not None and when + dt.timedelta(seconds=p.DELETION_TIMEOUT) > now:
                continue
            healthy += p.pod_is_ready(pod)
        return healthy

    # ------------------------------------------------------------------ writing
    async def _update_status(self, pdb: Obj, healthy: int, desired: int, expected: int,
                             disrupted: dict[str, str]) -> None:
        allowed = healthy - desired
        if expected <= 0 or allowed <= 0:
            allowed = 0
        status = pdb.get("status") or {}
        generation = meta_of(pdb).get("generation")
        if (status.get("currentHealthy"), status.get("desiredHealthy"), status.get("expectedPods"),
                status.get("disruptionsAllowed"), status.get("disruptedPods") or {},
                status.get("observedGeneration")) == (healthy, desired, expected, allowed, disrupted, generation) \
                and p.conditions_up_to_date(pdb):
            return
        new_status: Obj = {"observedGeneration": generation, "disruptedPods": disrupted or None,
                           "disruptionsAllowed": allowed, "currentHealthy": healthy, "desiredHealthy": desired,
                           "expectedPods": expected, "conditions": [dict(c) for c in status.get("conditions") or []]}
        new_status = {k: v for k, v in new_status.items() if v is not None}
        p.disruption_condition(new_status, generation, self._now())
        await self.client.update_status(self.pdb_rt, {**pdb, "status": new_status})

    async def _fail_safe(self, pdb: Obj, message: str) -> None:
        """``failSafe``: no disruption allowed, the condition says why."""
        status = dict(pdb.get("status") or {})
        status["disruptionsAllowed"] = 0
        status["conditions"] = [dict(c) for c in status.get("conditions") or []]
        p.set_condition(status, "False", p.SYNC_FAILED, message, status.get("observedGeneration"), self._now())
        await self.client.update_status(self.pdb_rt, {**pdb, "status": status})

    def _now(self) -> str:
        return self.clock.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
