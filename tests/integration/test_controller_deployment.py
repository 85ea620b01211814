"""The Deployment controller against a real apiserver, with the ReplicaSet controller and simulated nodes."""

from __future__ import annotations

import asyncio
from typing import Any

from minik8s.client.informer import Informer
from minik8s.client.rest import Client
from minik8s.controllers import deploymentutil as du
from tests.support.controllers import SimulatedNode, controller_manager, deployment, events_for, is_live, is_ready, pods
from tests.support.waiting import wait_for

LABELS = {"app": "web"}
WORKLOAD = ["replicaset", "deployment"]


async def _get(client: Client, ns: str, name: str) -> dict[str, Any]:
    return await client.get(client.kind("apps/v1", "Deployment"), name, ns)


async def _replicasets(client: Client, ns: str) -> list[dict[str, Any]]:
    return (await client.list(client.kind("apps/v1", "ReplicaSet"), ns))["items"]


def _cond(d: dict[str, Any], type_: str) -> dict[str, Any]:
    return du.get_condition(d.get("status"), type_) or {}


async def _complete(client: Client, ns: str, name: str, replicas: int) -> bool:
    d = await _get(client, ns, name)
    s = d.get("status") or {}
    return (s.get("observedGeneration") == d["metadata"]["generation"] and s.get("updatedReplicas") == replicas
            and s.get("replicas") == replicas and s.get("availableReplicas") == replicas
            and _cond(d, "Progressing").get("reason") == "NewReplicaSetAvailable")


async def _set_image(client: Client, ns: str, name: str, image: str) -> None:
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": image,
                                                             "command": ["sleep", "3600"]}]}}}}
    await client.patch(client.kind("apps/v1", "Deployment"), name, patch, ns)


async def test_creates_replicaset_and_pods_with_hash_revision_and_conditions(client: Client, namespace: str) -> None:
    d_rt = client.kind("apps/v1", "Deployment")
    async with SimulatedNode(client, namespace), controller_manager(client, namespace, WORKLOAD):
        d = await client.create(d_rt, deployment("web", 3, LABELS, minReadySeconds=1), namespace)
        await wait_for(lambda: _complete(client, namespace, "web", 3), what="rollout complete")
        (rs,) = await _replicasets(client, namespace)
        assert rs["spec"]["minReadySeconds"] == 1
        pod_hash = du.compute_hash(d["spec"]["template"])
        assert rs["metadata"]["name"] == f"web-{pod_hash}"
        assert rs["spec"]["selector"]["matchLabels"] == {**LABELS, "pod-template-hash": pod_hash}
        assert rs["spec"]["template"]["metadata"]["labels"] == {**LABELS, "pod-template-hash": pod_hash}
        assert rs["metadata"]["labels"]["pod-template-hash"] == pod_hash
        assert rs["metadata"]["ownerReferences"][0]["uid"] == d["metadata"]["uid"]
        ann = rs["metadata"]["annotations"]
        assert ann[du.REVISION_ANNOTATION] == "1"
        assert (ann[du.DESIRED_REPLICAS_ANNOTATION], ann[du.MAX_REPLICAS_ANNOTATION]) == ("3", "4")
        for pod in await pods(client, namespace):
            assert pod["metadata"]["labels"]["pod-template-hash"] == pod_hash
        d = await _get(client, namespace, "web")
        assert d["metadata"]["annotations"][du.REVISION_ANNOTATION] == "1"
        status = d["status"]
        assert (status["replicas"], status["updatedReplicas"], status["readyReplicas"],
                status["availableReplicas"], status["unavailableReplicas"]) == (3, 3, 3, 3, 0)
        available = _cond(d, "Available")
        assert (available["status"], available["reason"]) == ("True", "MinimumReplicasAvailable")
        progressing = _cond(d, "Progressing")
        assert progressing["message"] == f'ReplicaSet "web-{pod_hash}" has successfully progressed.'
        events = [e["message"] for e in await events_for(client, namespace, "web")
                  if e["reason"] == "ScalingReplicaSet"]
        assert f"Scaled up replica set web-{pod_hash} from 0 to 3" in events

        # scaling the Deployment (scale subresource) scales its one ReplicaSet
        await client.patch(d_rt, "web", {"spec": {"replicas": 5}}, namespace, subresource="scale")
        await wait_for(lambda: _complete(client, namespace, "web", 5), what="scaled to 5")
        (rs,) = await _replicasets(client, namespace)
        assert rs["spec"]["replicas"] == 5
        assert rs["metadata"]["annotations"][du.DESIRED_REPLICAS_ANNOTATION] == "5"


class PodCounter:
    """Watches a namespace's pods and checks the rollout bounds after every event."""

    def __init__(self, client: Client, namespace: str) -> None:
        self.informer = Informer(client, client.kind("v1", "Pod"), namespace)
        self.max_live = 0
        self.min_ready: int | None = None
        self.states: list[tuple[int, int]] = []
        self.informer.add_handler(lambda _o: self.check(), lambda _o, _n: self.check(), lambda _o: self.check())

    def reset(self) -> None:
        """Forget the states seen while the first list was replayed one pod at a time."""
        self.max_live, self.min_ready, self.states = 0, None, []
        self.check()

    def check(self) -> None:
        live = [p for p in self.informer.list() if is_live(p)]
        ready = sum(1 for p in live if is_ready(p))
        self.states.append((len(live), ready))
        self.max_live = max(self.max_live, len(live))
        self.min_ready = ready if self.min_ready is None else min(self.min_ready, ready)


async def test_rolling_update_respects_bounds_then_rollback_reuses_old_replicaset(client: Client,
                                                                                  namespace: str) -> None:
    d_rt = client.kind("apps/v1", "Deployment")
    body = deployment("web", 10, LABELS, strategy={"type": "RollingUpdate",
                                                   "rollingUpdate": {"maxSurge": 2, "maxUnavailable": "25%"}})
    # pods take a while to stop (0.5 s), so scaled-down ReplicaSets report stale status for a while
    async with SimulatedNode(client, namespace, ready_delay=0.05, termination_delay=0.5), \
            controller_manager(client, namespace, WORKLOAD):
        await client.create(d_rt, body, namespace)
        await wait_for(lambda: _complete(client, namespace, "web", 10), what="v1 complete")
        (first,) = await _replicasets(client, namespace)
        counter = PodCounter(client, namespace)
        task = asyncio.create_task(counter.informer.run())
        try:
            await counter.informer.wait_synced(10)
            counter.reset()
            await _set_image(client, namespace, "web", "minik8s/busybox:v2")
            await wait_for(lambda: _complete(client, namespace, "web", 10), timeout=30, what="v2 complete")
            # maxSurge 2 → never more than 12 pods; maxUnavailable 25% of 10 (2) → never fewer than 8 ready
            assert counter.max_live <= 12, counter.states
            assert counter.min_ready is not None and counter.min_ready >= 8, counter.states
            assert counter.max_live == 12 and len(counter.states) > 20  # the surge was used, in many steps
            rss = {rs["metadata"]["name"]: rs for rs in await _replicasets(client, namespace)}
            assert len(rss) == 2
            old = rss[first["metadata"]["name"]]
            (second,) = [rs for name, rs in rss.items() if name != first["metadata"]["name"]]
            assert old["spec"]["replicas"] == 0 and second["spec"]["replicas"] == 10
            assert second["metadata"]["annotations"][du.REVISION_ANNOTATION] == "2"
            d = await _get(client, namespace, "web")
            assert d["metadata"]["annotations"][du.REVISION_ANNOTATION] == "2"
            messages = [e["message"] for e in await events_for(client, namespace, "web")]
            assert any(m.startswith(f"Scaled down replica set {first['metadata']['name']} from 10 to")
                       for m in messages)

            # rollback (what `kubectl rollout undo` does): the Deployment gets the old template back
            counter.reset()
            template = old["spec"]["template"]
            template["metadata"]["labels"].pop("pod-template-hash")
            await client.patch(d_rt, "web", {"spec": {"template": template}}, namespace)
            await wait_for(lambda: _complete(client, namespace, "web", 10), timeout=30, what="rollback complete")
            assert counter.max_live <= 12 and counter.min_ready is not None and counter.min_ready >= 8
        finally:
            task.cancel()
        rss = {rs["metadata"]["name"]: rs for rs in await _replicasets(client, namespace)}
        assert set(rss) == {first["metadata"]["name"], second["metadata"]["name"]}  # reused, no third
        reused = rss[first["metadata"]["name"]]
        assert reused["metadata"]["uid"] == first["metadata"]["uid"]
        assert reused["spec"]["replicas"] == 10 and rss[second["metadata"]["name"]]["spec"]["replicas"] == 0
        assert reused["metadata"]["annotations"][du.REVISION_ANNOTATION] == "3"
        assert reused["metadata"]["annotations"][du.REVISION_HISTORY_ANNOTATION] == "1"
        d = await _get(client, namespace, "web")
        assert d["metadata"]["annotations"][du.REVISION_ANNOTATION] == "3"


async def test_recreate_removes_old_pods_before_creating_new(client: Client, namespace: str) -> None:
    d_rt, pod_rt = client.kind("apps/v1", "Deployment"), client.kind("v1", "Pod")
    async with SimulatedNode(client, namespace, termination_delay=0.5), \
            controller_manager(client, namespace, WORKLOAD):
        await client.create(d_rt, deployment("web", 2, LABELS, strategy={"type": "Recreate"}), namespace)
        await wait_for(lambda: _complete(client, namespace, "web", 2), what="v1 complete")
        old_pods = {p["metadata"]["name"] for p in await pods(client, namespace)}
        existing: set[str] = set(old_pods)
        violations: list[str] = []

        async def observe() -> None:
            async for ev in client.watch(pod_rt, namespace, resource_version="0"):
                name = ev["object"]["metadata"]["name"]
                if ev["type"] == "DELETED":
                    existing.discard(name)
                elif ev["type"] == "ADDED" and name not in old_pods:
                    if existing & old_pods:
                        violations.append(f"{name} created while {sorted(existing & old_pods)} still exist")
                    existing.add(name)

        task = asyncio.create_task(observe())
        try:
            await asyncio.sleep(0.2)
            await _set_image(client, namespace, "web", "minik8s/busybox:v2")
            await wait_for(lambda: _complete(client, namespace, "web", 2), timeout=20, what="v2 complete")
        finally:
            task.cancel()
        assert violations == []
        assert not (old_pods & {p["metadata"]["name"] for p in await pods(client, namespace, live_only=False)})


async def test_revision_history_limit_prunes_oldest(client: Client, namespace: str) -> None:
    d_rt = client.kind("apps/v1", "Deployment")
    async with SimulatedNode(client, namespace, ready_delay=0.05, termination_delay=0.05), \
            controller_manager(client, namespace, WORKLOAD):
        await client.create(d_rt, deployment("web", 1, LABELS, revisionHistoryLimit=1), namespace)
        await wait_for(lambda: _complete(client, namespace, "web", 1), what="v1")
        for version in ("v2", "v3", "v4"):
            await _set_image(client, namespace, "web", f"minik8s/busybox:{version}")
            await wait_for(lambda: _complete(client, namespace, "web", 1), timeout=20, what=version)

        async def pruned() -> bool:
            return len(await _replicasets(client, namespace)) == 2

        await wait_for(pruned, what="history pruned to 1 old ReplicaSet")
        revisions = sorted(du.revision(rs) for rs in await _replicasets(client, namespace))
        assert revisions == [3, 4]


async def test_paused_deployment_and_progress_deadline(client: Client, namespace: str) -> None:
    d_rt = client.kind("apps/v1", "Deployment")
    async with controller_manager(client, namespace, WORKLOAD):
        # no node: pods never become ready, so the rollout cannot finish
        await client.create(d_rt, deployment("stuck", 2, LABELS, progressDeadlineSeconds=2), namespace)

        async def timed_out() -> bool:
            d = await _get(client, namespace, "stuck")
            return _cond(d, "Progressing").get("reason") == "ProgressDeadlineExceeded"

        await wait_for(timed_out, timeout=15, what="ProgressDeadlineExceeded")
        d = await _get(client, namespace, "stuck")
        assert _cond(d, "Progressing")["status"] == "False"
        assert _cond(d, "Progressing")["message"].endswith("has timed out progressing.")
        assert (_cond(d, "Available")["status"], _cond(d, "Available")["reason"]) == (
            "False", "MinimumReplicasUnavailable")

        await client.create(d_rt, deployment("paused", 1, {"app": "p"}), namespace)
        await client.patch(d_rt, "paused", {"spec": {"paused": True}}, namespace)

        async def paused_shown() -> bool:
            d = await _get(client, namespace, "paused")
            return _cond(d, "Progressing").get("reason") == "DeploymentPaused"

        await wait_for(paused_shown, what="DeploymentPaused")
        before = [rs for rs in await _replicasets(client, namespace) if rs["metadata"]["name"].startswith("paused-")]
        await _set_image(client, namespace, "paused", "minik8s/busybox:v2")
        await asyncio.sleep(1.0)
        after = [rs for rs in await _replicasets(client, namespace) if rs["metadata"]["name"].startswith("paused-")]
        assert len(before) == len(after) == 1  # paused: no rollout
        await client.patch(d_rt, "paused", {"spec": {"paused": False}}, namespace)

        async def rolled() -> bool:
            return len([rs for rs in await _replicasets(client, namespace)
                        if rs["metadata"]["name"].startswith("paused-")]) == 2

        await wait_for(rolled, what="rollout after resume")
