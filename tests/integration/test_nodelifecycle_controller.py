"""The node lifecycle controller against a real apiserver of its own, with the real scheduler.

Nodes are cluster-scoped, so this module runs its own etcd and apiserver (the session
apiserver's Nodes belong to other tests).  There are no real kubelets: :class:`FakeKubelet`
does over the API exactly what a kubelet does — registers its Node, renews Lease
``kube-node-lease/<node>``, posts Ready=True status, reports its pods Running/Ready with a
podIP and finishes their deletion.  "Killing" a node stops all of that at once.  The
controller-manager runs in-process with short periods (``--node-monitor-grace-period 3s``,
``--node-monitor-period 1s``); the module's apiserver runs with
``--default-not-ready-toleration-seconds 0`` and ``--default-unreachable-toleration-seconds 0``, so
the tolerations its DefaultTolerationSeconds admission gives a pod without its own let it go at
once (the 300 s default itself is covered by the unit tests and tests/integration/test_default_tolerations.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import itertools
from collections.abc import AsyncIterator, Iterator

import pytest

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.client.kubeconfig import ClientConfig
from minik8s.client.rest import Client
from minik8s.controllers.manager import ControllerManager, ControllerOptions
from minik8s.controllers.nodelifecycle import TAINT_UNREACHABLE, NodeLifecycleOptions
from minik8s.scheduler.scheduler import Scheduler
from tests.support.controllers import controller_manager as support_controller_manager
from tests.support.controllers import events_for, replicaset
from tests.support.processes import APIServer, Etcd, running_apiserver, wait_http
from tests.support.waiting import wait_for

GRACE = 3.0
SUBNETS = itertools.count(1)  # a /24 of pod IPs per fake node
OPTIONS = ControllerOptions(allocate_node_cidrs=False, node_lifecycle=NodeLifecycleOptions(
    node_monitor_period=1.0, node_monitor_grace_period=GRACE, node_startup_grace_period=GRACE,
    node_eviction_rate=100.0))
#: the apiserver's DefaultTolerationSeconds: 0 s, so an ordinary pod of a dead node goes at once
ZERO_DEFAULT_TOLERATIONS = ["--default-not-ready-toleration-seconds", "0",
                            "--default-unreachable-toleration-seconds", "0"]


@pytest.fixture(scope="module")
def own_apiserver(own_etcd: Etcd, tmp_path_factory: pytest.TempPathFactory) -> Iterator[APIServer]:
    """The module's own apiserver (Nodes are cluster-scoped) with :data:`ZERO_DEFAULT_TOLERATIONS`."""
    with running_apiserver(own_etcd, tmp_path_factory.mktemp("own-apiserver"), ZERO_DEFAULT_TOLERATIONS) as server:
        yield server


def stamp() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class FakeKubelet:
    """A kubelet's API traffic for node ``name``: Lease renewals every 0.3 s, Node status,
    pods started (Running, Ready, a podIP from ``10.244.<index>.0/24``) and finished."""

    def __init__(self, client: Client, name: str, index: int) -> None:
        self.client = client
        self.name = name
        self.index = index
        self.node_rt = client.kind("v1", "Node")
        self.pod_rt = client.kind("v1", "Pod")
        self.lease_rt = client.kind("coordination.k8s.io/v1", "Lease")
        self.task: asyncio.Task[None] | None = None
        self.next_ip = 2

    def conditions(self, ready: str = "True") -> list[Obj]:
        now = stamp()
        pressure = [{"type": t, "status": "False", "reason": f"KubeletHasNo{t}", "lastHeartbeatTime": now,
                     "lastTransitionTime": now} for t in ("MemoryPressure", "DiskPressure", "PIDPressure")]
        if ready == "True":
            reason, message = "KubeletReady", "kubelet is posting ready status"
        else:
            reason, message = "KubeletNotReady", "container runtime is down"
        return [*pressure, {"type": "Ready", "status": ready, "reason": reason, "message": message,
                            "lastHeartbeatTime": now, "lastTransitionTime": now}]

    async def register(self, unschedulable: bool = False) -> None:
        capacity = {"cpu": "4", "memory": "8Gi", "pods": "110"}
        body = {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": self.name, "labels": {"kubernetes.io/hostname": self.name}},
                "spec": {"unschedulable": unschedulable} if unschedulable else {}}
        await self.client.create(self.node_rt, body)
        await self.client.patch(self.node_rt, self.name, {"status": {
            "capacity": capacity, "allocatable": capacity, "conditions": self.conditions()}}, subresource="status")
        self.start()

    async def post_status(self, ready: str = "True") -> None:
        await self.client.patch(self.node_rt, self.name, {"status": {"conditions": self.conditions(ready)}},
                                subresource="status")

    async def renew(self) -> None:
        now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        try:
            lease = await self.client.get(self.lease_rt, self.name, "kube-node-lease")
        except errors.NotFound:
            await self.client.create(self.lease_rt, {
                "metadata": {"name": self.name, "namespace": "kube-node-lease"},
                "spec": {"holderIdentity": self.name, "leaseDurationSeconds": 40, "renewTime": now}}, "kube-node-lease")
            return
        lease["spec"]["renewTime"] = now
        await self.client.update(self.lease_rt, lease)

    async def sync_pods(self) -> None:
        listed = await self.client.list(self.pod_rt, field_selector=f"spec.nodeName={self.name}")
        for pod in listed["items"]:
            meta = pod["metadata"]
            with contextlib.suppress(errors.NotFound, errors.Conflict):
                if meta.get("deletionTimestamp"):
                    await self.client.delete(self.pod_rt, meta["name"], meta["namespace"], grace_period_seconds=0,
                                             preconditions={"uid": meta["uid"]})
                elif (pod.get("status") or {}).get("phase") != "Running":
                    now = stamp()
                    pod["status"] = {"phase": "Running", "podIP": f"10.244.{self.index}.{self.next_ip}",
                                     "startTime": now, "conditions": [
                                         {"type": t, "status": "True", "lastTransitionTime": now}
                                         for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")]}
                    self.next_ip += 1
                    await self.client.update_status(self.pod_rt, pod)

    async def _loop(self) -> None:
        while True:
            with contextlib.suppress(errors.APIError):
                await self.renew()
                await self.sync_pods()
            await asyncio.sleep(0.3)

    def start(self) -> None:
        self.task = asyncio.get_running_loop().create_task(self._loop())

    async def stop(self) -> None:
        """The node dies: no more Lease renewals, status posts or pod work."""
        if self.task is not None:
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)
            self.task = None


@contextlib.asynccontextmanager
async def scheduler(url: str) -> AsyncIterator[Scheduler]:
    """The real scheduler (default profile: TaintToleration, NodeReady, NodeUnschedulable, ...) in-process."""
    async with Client(ClientConfig(server=url)) as sched_client:
        sched = Scheduler(sched_client, initial_backoff=0.2, max_backoff=1.0, flush_interval=0.2)
        task = asyncio.get_running_loop().create_task(sched.run())
        try:
            await sched.wait_ready(15)
            yield sched
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


@contextlib.asynccontextmanager
async def controller_manager(url: str, namespace: str | None = None,
                             options: ControllerOptions = OPTIONS) -> AsyncIterator[ControllerManager]:
    """``controller-manager --controllers nodelifecycle,replicaset,endpoint`` (short periods) in-process;
    with ``namespace`` its informers are limited to it (the Lease informer then is the controller's own)."""
    async with Client(ClientConfig(server=url)) as cm_client, \
            support_controller_manager(cm_client, namespace, ["nodelifecycle", "replicaset", "endpoint"],
                                       options=options) as manager:
        yield manager


@contextlib.asynccontextmanager
async def kubelets(client: Client, namespace: str, *nodes: tuple[str, bool]) -> AsyncIterator[list[FakeKubelet]]:
    """Namespace ``namespace`` and one registered, running FakeKubelet per ``(node name, cordoned)``;
    all stopped at the end."""
    await client.create(client.kind("v1", "Namespace"), {"metadata": {"name": namespace}})
    running = [FakeKubelet(client, name, next(SUBNETS)) for name, _ in nodes]
    try:
        for kubelet, (_, cordoned) in zip(running, nodes, strict=True):
            await kubelet.register(unschedulable=cordoned)
        yield running
    finally:
        for kubelet in running:
            await kubelet.stop()


def pod(name: str, node: str, labels: dict[str, str] | None = None, tolerations: list[Obj] | None = None) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels or {}},
            "spec": {"nodeName": node, "tolerations": tolerations or [],
                     "containers": [{"name": "main", "image": "minik8s/busybox", "command": ["sleep", "3600"]}]}}


def unreachable_toleration(seconds: int | None) -> list[Obj]:
    toleration: Obj = {"key": TAINT_UNREACHABLE, "operator": "Exists", "effect": "NoExecute"}
    if seconds is not None:
        toleration["tolerationSeconds"] = seconds
    return [toleration]


def condition(obj: Obj, ctype: str) -> Obj:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == ctype), {})


async def test_a_dead_node_is_marked_tainted_and_emptied_and_rejoins(own_apiserver: APIServer) -> None:
    async with Client(ClientConfig(server=own_apiserver.url)) as client:
        node_rt, pod_rt = client.kind("v1", "Node"), client.kind("v1", "Pod")
        ns = "lifecycle"
        # worker-2 starts cordoned: the ReplicaSet's first pods go to worker-1
        async with kubelets(client, ns, ("worker-1", False), ("worker-2", True)) as (w1, w2):
            async with scheduler(own_apiserver.url):
                async with controller_manager(own_apiserver.url):
                    await client.create(client.kind("v1", "Service"), {"metadata": {"name": "web"}, "spec": {
                        "selector": {"svc": "web"}, "ports": [{"port": 80, "targetPort": 80}]}}, ns)
                    await client.create(client.kind("apps/v1", "ReplicaSet"),
                                        replicaset("web", 2, {"app": "web"}), ns)
                    for name, tolerations in (("plain", None), ("five", unreachable_toleration(5)),
                                              ("forever", unreachable_toleration(None))):
                        await client.create(pod_rt, pod(name, "worker-1", {"svc": "web"} if name == "forever" else {},
                                                        tolerations), ns)

                    async def live_pods() -> list[Obj]:
                        return [p for p in (await client.list(pod_rt, ns))["items"]
                                if not p["metadata"].get("deletionTimestamp")]

                    async def ready_on(node: str) -> set[str]:
                        return {p["metadata"]["name"] for p in await live_pods()
                                if p["spec"].get("nodeName") == node and condition(p, "Ready").get("status") == "True"}

                    async def all_running() -> bool:
                        return len(await ready_on("worker-1")) == 5
                    await wait_for(all_running, timeout=20, what="5 pods running on worker-1")
                    await client.patch(node_rt, "worker-2", {"spec": {"unschedulable": False}})
                    await asyncio.sleep(2 * GRACE)  # Lease renewals alone keep worker-1 healthy past the grace period
                    node = await client.get(node_rt, "worker-1")
                    assert condition(node, "Ready")["status"] == "True" and not node["spec"].get("taints")

                    # ---- worker-1 dies
                    await w1.stop()
                    loop = asyncio.get_running_loop()
                    died = loop.time()

                    async def tainted() -> bool:
                        node = await client.get(node_rt, "worker-1")
                        return [(t["key"], t["effect"]) for t in node["spec"].get("taints") or []] == [
                            (TAINT_UNREACHABLE, "NoSchedule"), (TAINT_UNREACHABLE, "NoExecute")]

                    await wait_for(tainted, timeout=GRACE + 4, interval=0.1, what="unreachable taints on worker-1")
                    tainted_at = loop.time()
                    assert tainted_at - died >= GRACE - 0.5
                    node = await client.get(node_rt, "worker-1")
                    ready = condition(node, "Ready")
                    assert (ready["status"], ready["reason"], ready["message"]) == (
                        "Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status.")
                    assert all(condition(node, t)["status"] == "Unknown" for t in ("MemoryPressure", "DiskPressure"))
                    assert all(t.get("timeAdded") for t in node["spec"]["taints"])

                    # pods without a toleration are evicted at once, the others marked not ready
                    async def evicted(name: str) -> bool:
                        return (await client.get(pod_rt, name, ns))["metadata"].get("deletionTimestamp") is not None

                    plain = await client.get(pod_rt, "plain", ns)  # the apiserver's DefaultTolerationSeconds
                    assert {(t["key"], t["tolerationSeconds"]) for t in plain["spec"]["tolerations"]} == {
                        ("node.kubernetes.io/not-ready", 0), (TAINT_UNREACHABLE, 0)}
                    await wait_for(lambda: evicted("plain"), timeout=3, what="plain evicted")
                    disrupted = condition(await client.get(pod_rt, "plain", ns), "DisruptionTarget")
                    assert (disrupted["status"], disrupted["reason"], disrupted["message"]) == (
                        "True", "DeletionByTaintManager", "Taint manager: deleting due to NoExecute taint")
                    forever = await client.get(pod_rt, "forever", ns)
                    assert condition(forever, "Ready")["status"] == "False"

                    async def endpoints_follow() -> bool:
                        ep = await client.get(client.kind("v1", "Endpoints"), "web", ns)
                        not_ready = [a["targetRef"]["name"] for s in ep.get("subsets") or []
                                     for a in s.get("notReadyAddresses") or []]
                        return "forever" in not_ready
                    await wait_for(endpoints_follow, timeout=5, what="forever in notReadyAddresses")

                    assert not await evicted("five")
                # the controller-manager restarts in between: the 5 s count runs from the taint's timeAdded
                async with controller_manager(own_apiserver.url):
                    await wait_for(lambda: evicted("five"), timeout=9, interval=0.1, what="five evicted")
                    waited = loop.time() - tainted_at
                    assert 3.5 <= waited <= 8, waited

                    # the ReplicaSet's pods were evicted and replaced on worker-2; the old ones stay Terminating
                    async def replaced() -> bool:
                        live = [p for p in await live_pods() if p["metadata"]["name"].startswith("web-")]
                        return len(live) == 2 and all(p["spec"].get("nodeName") == "worker-2" for p in live) \
                            and len(await ready_on("worker-2")) == 2
                    await wait_for(replaced, timeout=10, what="ReplicaSet pods replaced on worker-2")
                    terminating = [p["metadata"]["name"] for p in (await client.list(pod_rt, ns))["items"]
                                   if p["metadata"].get("deletionTimestamp")]
                    assert "plain" in terminating and "five" in terminating
                    assert sum(1 for n in terminating if n.startswith("web-")) == 2
                    assert not await evicted("forever")

                    events = await events_for(client, "default", "worker-1")
                    assert any(e["reason"] == "NodeNotReady" and e["message"] ==
                               "Node worker-1 status is now: NodeNotReady" for e in events)
                    events = await events_for(client, ns, "plain")
                    assert any(e["reason"] == "TaintManagerEviction" and e["message"] ==
                               f"Marking for deletion Pod {ns}/plain" for e in events)

                    # ---- worker-1 comes back: Lease renewed, Ready=True posted, Terminating pods finished
                    w1.start()
                    await w1.post_status()

                    async def rejoined() -> bool:
                        node = await client.get(node_rt, "worker-1")
                        return condition(node, "Ready").get("status") == "True" and not node["spec"].get("taints")
                    await wait_for(rejoined, timeout=GRACE + 3, what="worker-1 untainted and Ready")
                    await wait_for(lambda: _gone(client, ns, ("plain", "five")), timeout=5,
                                   what="the evicted pods finished by the returning kubelet")
                    await asyncio.sleep(1.5)
                    assert not await evicted("forever")


async def _gone(client: Client, ns: str, names: tuple[str, ...]) -> bool:
    items = (await client.list(client.kind("v1", "Pod"), ns))["items"]
    return not any(p["metadata"]["name"] in names for p in items)


async def test_a_node_reporting_not_ready_is_tainted_not_ready_until_it_is_ready(own_apiserver: APIServer) -> None:
    async with Client(ClientConfig(server=own_apiserver.url)) as client:
        node_rt, pod_rt = client.kind("v1", "Node"), client.kind("v1", "Pod")
        ns = "notready"
        async with kubelets(client, ns, ("worker-3", False)) as (kubelet,):
            async with controller_manager(own_apiserver.url, namespace=ns):
                await client.create(pod_rt, pod("tolerant", "worker-3", tolerations=[
                    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}]), ns)
                await client.create(pod_rt, pod("plain", "worker-3"), ns)

                async def running() -> bool:
                    items = (await client.list(pod_rt, ns))["items"]
                    return len(items) == 2 and all(condition(p, "Ready").get("status") == "True" for p in items)
                await wait_for(running, timeout=10, what="pods running on worker-3")
                await kubelet.post_status("False")  # alive (Lease renewed) but not ready

                async def taints() -> list[tuple[str, str]]:
                    node = await client.get(node_rt, "worker-3")
                    return [(t["key"], t["effect"]) for t in node["spec"].get("taints") or []]

                async def not_ready_taints() -> bool:
                    return await taints() == [("node.kubernetes.io/not-ready", "NoSchedule"),
                                              ("node.kubernetes.io/not-ready", "NoExecute")]
                await wait_for(not_ready_taints, timeout=5, what="not-ready taints on worker-3")
                node = await client.get(node_rt, "worker-3")
                assert condition(node, "Ready")["reason"] == "KubeletNotReady"  # the kubelet's word stands

                async def plain_evicted() -> bool:
                    # the kubelet is alive, so it finishes the deletion itself
                    names = [p["metadata"]["name"] for p in (await client.list(pod_rt, ns))["items"]]
                    return names == ["tolerant"]
                await wait_for(plain_evicted, timeout=5, what="plain evicted and removed by its kubelet")

                await kubelet.post_status("True")

                async def untainted() -> bool:
                    return await taints() == []
                await wait_for(untainted, timeout=5, what="taints removed")
                await asyncio.sleep(2 * GRACE)  # the controller's own kube-node-lease informer sees the renewals
                node = await client.get(node_rt, "worker-3")
                assert condition(node, "Ready")["status"] == "True" and not node["spec"].get("taints")
                assert [p["metadata"]["name"] for p in (await client.list(pod_rt, ns))["items"]] == ["tolerant"]


# The outage test's grace is longer than the fake kubelet's reconnect back-off (the REST client
# retries after 0.2, 0.4, ... 3.2 s), so a renewal right after the apiserver returns always fits.
OUTAGE_GRACE = 8.0
OUTAGE_OPTIONS = ControllerOptions(allocate_node_cidrs=False, node_lifecycle=NodeLifecycleOptions(
    node_monitor_period=1.0, node_monitor_grace_period=OUTAGE_GRACE, node_startup_grace_period=OUTAGE_GRACE,
    node_eviction_rate=100.0))


async def test_an_apiserver_restart_longer_than_the_grace_period_disturbs_nothing(own_apiserver: APIServer) -> None:
    async with Client(ClientConfig(server=own_apiserver.url)) as client:
        node_rt, pod_rt = client.kind("v1", "Node"), client.kind("v1", "Pod")
        ns = "outage"
        async with kubelets(client, ns, ("worker-4", False)) as (kubelet,):
            async with controller_manager(own_apiserver.url, options=OUTAGE_OPTIONS):
                await client.create(pod_rt, pod("web", "worker-4"), ns)

                async def running() -> bool:
                    return condition(await client.get(pod_rt, "web", ns), "Ready").get("status") == "True"
                await wait_for(running, timeout=10, what="pod running on worker-4")
                await asyncio.to_thread(own_apiserver.stop)
                await asyncio.sleep(1.5 * OUTAGE_GRACE)  # nobody can renew or write anything
                await asyncio.to_thread(own_apiserver.start)
                await asyncio.to_thread(wait_http, f"{own_apiserver.url}/readyz", 30)
                await asyncio.sleep(1.5 * OUTAGE_GRACE)  # the kubelet renews; the controller looks again
                node = await client.get(node_rt, "worker-4")
                assert condition(node, "Ready")["status"] == "True" and not node["spec"].get("taints")
                web = await client.get(pod_rt, "web", ns)
                assert condition(web, "Ready")["status"] == "True" and not web["metadata"].get("deletionTimestamp")
