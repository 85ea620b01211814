"""The scheduler against a real apiserver + etcd.

Each test makes its own Node objects (cluster-scoped, so labelled with a per-test group
the scheduler instance is restricted to), runs its own in-process scheduler under a
unique ``--scheduler-name``, and creates pods that name it -- so tests never see each
other's nodes or pods. Nodes are plain API objects (Ready condition and allocatable set
here; no kubelet).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.client.kubeconfig import ClientConfig, render
from minik8s.client.rest import Client
from minik8s.scheduler.nodeinfo import PodInfo
from minik8s.scheduler.queue import QueuedPodInfo
from minik8s.scheduler.scheduler import Scheduler
from tests.support.processes import ROOT, APIServer
from tests.support.waiting import wait_for

GROUP_LABEL = "scheduler-test.minik8s.io/group"


class Cluster:
    """Nodes, pods and one scheduler for one test."""

    def __init__(self, apiserver: APIServer, client: Client, namespace: str) -> None:
        self.apiserver = apiserver
        self.client = client
        self.namespace = namespace
        self.id = os.urandom(3).hex()
        self.scheduler_name = f"sched-{self.id}"
        self.node_rt = client.kind("v1", "Node")
        self.pod_rt = client.kind("v1", "Pod")
        self.event_rt = client.kind("v1", "Event")
        self.nodes: list[str] = []
        self.scheduler: Scheduler | None = None
        self._task: asyncio.Task[None] | None = None
        self._sched_client: Client | None = None

    # ------------------------------------------------------------------ scheduler
    async def start(self, **kwargs: Any) -> Scheduler:
        self._sched_client = Client(ClientConfig(server=self.apiserver.url))
        self.scheduler = Scheduler(self._sched_client, self.scheduler_name,
                                   node_label_selector=f"{GROUP_LABEL}={self.id}", **kwargs)
        self._task = asyncio.get_running_loop().create_task(self.scheduler.run())
        await self.scheduler.wait_ready(15)
        return self.scheduler

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None
        if self._sched_client is not None:
            await self._sched_client.close()
            self._sched_client = None

    async def close(self) -> None:
        await self.stop()
        for name in self.nodes:
            try:
                await self.client.delete(self.node_rt, name)
            except errors.NotFound:
                pass

    # ------------------------------------------------------------------ objects
    async def add_node(self, suffix: str, cpu: str = "4", memory: str = "8Gi", pods: str = "110", *,
                       labels: dict[str, str] | None = None, taints: list[Obj] | None = None,
                       unschedulable: bool = False, ready: str = "True") -> str:
        name = f"n{self.id}-{suffix}"
        spec: Obj = {}
        if taints:
            spec["taints"] = taints
        if unschedulable:
            spec["unschedulable"] = True
        status = {"allocatable": {"cpu": cpu, "memory": memory, "pods": pods},
                  "capacity": {"cpu": cpu, "memory": memory, "pods": pods},
                  "conditions": [{"type": "Ready", "status": ready, "reason": "KubeletReady"}]}
        body = {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "labels": {GROUP_LABEL: self.id, "kubernetes.io/hostname": name,
                                                      **(labels or {})}},
                "spec": spec, "status": status}
        created = await self.client.create(self.node_rt, body)
        self.nodes.append(name)
        if (created.get("status") or {}).get("allocatable") != status["allocatable"]:
            created["status"] = status
            await self.client.update_status(self.node_rt, created)
        return name

    async def patch_node(self, name: str, patch: Obj) -> None:
        await self.client.patch(self.node_rt, name, patch)

    async def create_pod(self, name: str, *, cpu: str | None = None, memory: str | None = None,
                         labels: dict[str, str] | None = None, host_port: int | None = None,
                         node_selector: dict[str, str] | None = None, tolerations: list[Obj] | None = None,
                         affinity: Obj | None = None, owner_uid: str | None = None,
                         spread: list[Obj] | None = None) -> Obj:
        requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v}
        container: Obj = {"name": "main", "image": "busybox", "command": ["sleep", "3600"]}
        if requests:
            container["resources"] = {"requests": requests}
        if host_port:
            container["ports"] = [{"containerPort": 8080, "hostPort": host_port}]
        spec: Obj = {"containers": [container], "schedulerName": self.scheduler_name}
        if node_selector:
            spec["nodeSelector"] = node_selector
        if tolerations:
            spec["tolerations"] = tolerations
        if affinity:
            spec["affinity"] = affinity
        if spread:
            spec["topologySpreadConstraints"] = spread
        meta: Obj = {"name": name, "namespace": self.namespace, "labels": labels or {}}
        if owner_uid:
            meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web",
                                        "uid": owner_uid, "controller": True}]
        return await self.client.create(self.pod_rt, {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                                                      "spec": spec})

    async def get_pod(self, name: str) -> Obj:
        return await self.client.get(self.pod_rt, name, self.namespace)

    async def wait_pod(self, name: str, predicate: Callable[[Obj], bool], timeout: float = 10.0) -> Obj:
        deadline = time.monotonic() + timeout
        while True:
            pod = await self.get_pod(name)
            if predicate(pod):
                return pod
            if time.monotonic() > deadline:
                raise AssertionError(f"pod {name} did not reach the expected state: "
                                     f"node={pod.get('spec', {}).get('nodeName')} status={pod.get('status')}")
            await asyncio.sleep(0.1)

    async def wait_bound(self, name: str, timeout: float = 10.0) -> str:
        pod = await self.wait_pod(name, lambda p: bool(p["spec"].get("nodeName")), timeout)
        return str(pod["spec"]["nodeName"])

    async def wait_unschedulable(self, name: str, message: str, timeout: float = 10.0) -> Obj:
        def check(pod: Obj) -> bool:
            cond = scheduled_condition(pod)
            return cond is not None and cond.get("status") == "False" and cond.get("message") == message

        return await self.wait_pod(name, check, timeout)

    async def wait_outcomes(self, names: list[str], timeout: float = 10.0) -> tuple[dict[str, str], list[str]]:
        """Wait until each pod is bound or marked unschedulable: ``({pod: node}, [pending pods])``."""
        deadline = time.monotonic() + timeout
        while True:
            bound: dict[str, str] = {}
            pending: list[str] = []
            for name in names:
                pod = await self.get_pod(name)
                if pod["spec"].get("nodeName"):
                    bound[name] = pod["spec"]["nodeName"]
                elif (scheduled_condition(pod) or {}).get("status") == "False":
                    pending.append(name)
            if len(bound) + len(pending) == len(names) or time.monotonic() > deadline:
                return bound, pending
            await asyncio.sleep(0.1)

    async def events(self, name: str) -> list[Obj]:
        listed = await self.client.list(self.event_rt, self.namespace)
        return [e for e in listed.get("items") or [] if (e.get("involvedObject") or {}).get("name") == name]

    async def wait_event(self, name: str, reason: str, timeout: float = 10.0) -> Obj:
        deadline = time.monotonic() + timeout
        while True:
            for event in await self.events(name):
                if event.get("reason") == reason:
                    return event
            if time.monotonic() > deadline:
                raise AssertionError(f"no {reason} event for {name}")
            await asyncio.sleep(0.1)

    async def still_pending(self, name: str, seconds: float = 1.5) -> None:
        await asyncio.sleep(seconds)
        assert not (await self.get_pod(name))["spec"].get("nodeName")


def scheduled_condition(pod: Obj) -> Obj | None:
    return next((c for c in (pod.get("status") or {}).get("conditions") or [] if c.get("type") == "PodScheduled"),
                None)


@pytest.fixture
async def cluster(apiserver: APIServer, client: Client, namespace: str) -> AsyncIterator[Cluster]:
    c = Cluster(apiserver, client, namespace)
    yield c
    await c.close()


# ---------------------------------------------------------------------------- tests
async def test_binds_pod_and_records_scheduled_event(cluster: Cluster) -> None:
    node = await cluster.add_node("a")
    await cluster.start()
    await cluster.create_pod("web")
    assert await cluster.wait_bound("web") == node
    pod = await cluster.get_pod("web")
    assert (scheduled_condition(pod) or {}).get("status") == "True"
    event = await cluster.wait_event("web", "Scheduled")
    assert event["type"] == "Normal"
    assert event["message"] == f"Successfully assigned {cluster.namespace}/web to {node}"
    assert event["source"]["component"] == cluster.scheduler_name


async def test_bindings_in_flight_are_bounded(cluster: Cluster) -> None:
    """A burst of pending pods waits in the queue, not as requests piled in the HTTP pool."""
    await cluster.add_node("a")
    await cluster.add_node("b")
    scheduler = await cluster.start(max_inflight_bindings=2)
    bind = scheduler.client.bind
    in_flight, peak = 0, 0

    async def slow_bind(namespace: str, name: str, node: str) -> Obj:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        try:
            await asyncio.sleep(0.1)
            return await bind(namespace, name, node)
        finally:
            in_flight -= 1

    scheduler.client.bind = slow_bind  # type: ignore[method-assign]
    names = [f"p{i}" for i in range(8)]
    for name in names:
        await cluster.create_pod(name)
    for name in names:
        await cluster.wait_bound(name)
    assert peak == 2
    await wait_for(lambda: scheduler.inflight_bindings == 0, 5, what="every binding cycle finished")


async def test_pods_of_other_schedulers_are_left_alone(cluster: Cluster) -> None:
    await cluster.add_node("a")
    await cluster.start()
    pod = await cluster.create_pod("mine")
    other = {**pod, "metadata": {"name": "theirs", "namespace": cluster.namespace},
             "spec": {**pod["spec"], "schedulerName": "someone-else"}}
    await cluster.client.create(cluster.pod_rt, other)
    await cluster.wait_bound("mine")
    await cluster.still_pending("theirs", 1.0)


async def test_resource_fit_then_bigger_node(cluster: Cluster) -> None:
    await cluster.add_node("small-1", cpu="1")
    await cluster.add_node("small-2", cpu="1")
    await cluster.start()
    await cluster.create_pod("hungry", cpu="2")
    message = ("0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 No preemption "
               "victims found for incoming pod..")
    pod = await cluster.wait_unschedulable("hungry", message)
    assert (scheduled_condition(pod) or {}).get("reason") == "Unschedulable"
    event = await cluster.wait_event("hungry", "FailedScheduling")
    assert event["type"] == "Warning" and event["message"] == message
    big = await cluster.add_node("big", cpu="4")
    assert await cluster.wait_bound("hungry", timeout=15) == big


async def test_requests_add_up_on_a_node(cluster: Cluster) -> None:
    await cluster.add_node("a", cpu="2")
    await cluster.start()
    for i in range(3):  # created together: the assume cache must stop the third
        await cluster.create_pod(f"p{i}", cpu="1")
    bound, pending = await cluster.wait_outcomes([f"p{i}" for i in range(3)])
    assert len(bound) == 2 and len(pending) == 1
    await cluster.wait_unschedulable(pending[0], "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes "
                                                 "are available: 1 No preemption victims found for incoming pod..")


async def test_node_selector(cluster: Cluster) -> None:
    await cluster.add_node("a")
    ssd = await cluster.add_node("b", labels={"disk": "ssd"})
    await cluster.add_node("c")
    await cluster.start()
    for i in range(3):
        await cluster.create_pod(f"db{i}", node_selector={"disk": "ssd"})
    for i in range(3):
        assert await cluster.wait_bound(f"db{i}") == ssd
    await cluster.create_pod("nowhere", node_selector={"disk": "tape"})
    await cluster.wait_unschedulable(
        "nowhere", "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 "
        "nodes are available: 3 Preemption is not helpful for scheduling..")


async def test_taints_and_tolerations(cluster: Cluster) -> None:
    taint = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    await cluster.add_node("a", taints=taint)
    b = await cluster.add_node("b", taints=taint)
    await cluster.start()
    await cluster.create_pod("plain")
    await cluster.create_pod("tolerant", tolerations=[{"key": "dedicated", "operator": "Equal", "value": "gpu",
                                                       "effect": "NoSchedule"}])
    assert await cluster.wait_bound("tolerant") in cluster.nodes
    await cluster.wait_unschedulable(
        "plain", "0/2 nodes are available: 2 node(s) had untolerated taint {dedicated: gpu}. preemption: 0/2 nodes "
        "are available: 2 Preemption is not helpful for scheduling..")
    await cluster.patch_node(b, {"spec": {"taints": None}})
    assert await cluster.wait_bound("plain", timeout=15) == b


async def test_host_port_conflict(cluster: Cluster) -> None:
    await cluster.add_node("a")
    await cluster.add_node("b")
    await cluster.start()
    for i in range(3):
        await cluster.create_pod(f"hp{i}", host_port=8080)
    placed, waiting = await cluster.wait_outcomes([f"hp{i}" for i in range(3)])
    assert len(waiting) == 1
    pending = waiting[0]
    assert sorted(placed.values()) == sorted(cluster.nodes)
    await cluster.wait_unschedulable(
        pending, "0/2 nodes are available: 2 node(s) didn't have free ports for the requested pod ports. preemption: "
        "0/2 nodes are available: 2 No preemption victims found for incoming pod..")
    gone, freed = next(iter(placed.items()))
    await cluster.client.delete(cluster.pod_rt, gone, cluster.namespace, grace_period_seconds=0)
    assert await cluster.wait_bound(pending, timeout=15) == freed


async def test_pods_of_one_owner_spread_across_nodes(cluster: Cluster) -> None:
    for suffix in ("a", "b", "c"):
        await cluster.add_node(suffix)
    await cluster.start()
    owner = f"rs-{cluster.id}"
    await asyncio.gather(*(cluster.create_pod(f"web-{i}", labels={"app": "web"}, owner_uid=owner)
                           for i in range(6)))
    nodes = [await cluster.wait_bound(f"web-{i}") for i in range(6)]
    assert Counter(nodes) == dict.fromkeys(cluster.nodes, 2)


async def test_required_anti_affinity_one_per_node(cluster: Cluster) -> None:
    for suffix in ("a", "b", "c"):
        await cluster.add_node(suffix)
    await cluster.start()
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    for i in range(4):
        await cluster.create_pod(f"db-{i}", labels={"app": "db"}, affinity=anti)
    placed, pending = await cluster.wait_outcomes([f"db-{i}" for i in range(4)])
    assert sorted(placed.values()) == sorted(cluster.nodes)
    assert len(pending) == 1
    await cluster.wait_unschedulable(pending[0], "0/3 nodes are available: 3 node(s) didn't match pod "
                                                 "anti-affinity rules. preemption: 0/3 nodes are available: 3 No "
                                                 "preemption victims found for incoming pod..")


async def test_cordoned_and_not_ready_nodes_are_avoided(cluster: Cluster) -> None:
    cordoned = await cluster.add_node("cordoned", unschedulable=True)
    await cluster.add_node("sick", ready="False")
    good = await cluster.add_node("good")
    await cluster.start()
    for i in range(4):
        await cluster.create_pod(f"p{i}")
    for i in range(4):
        assert await cluster.wait_bound(f"p{i}") == good
    # a new pod that fits nowhere but on the cordoned node's resources is told why
    await cluster.patch_node(good, {"spec": {"unschedulable": True}})
    await cluster.create_pod("late")
    await cluster.wait_unschedulable("late", "0/3 nodes are available: 1 node(s) had untolerated taint "
                                             "{node.kubernetes.io/not-ready: }, 2 node(s) were unschedulable. "
                                             "preemption: 0/3 nodes are available: 3 Preemption is not helpful for "
                                             "scheduling..")
    await cluster.patch_node(cordoned, {"spec": {"unschedulable": False}})
    assert await cluster.wait_bound("late", timeout=15) == cordoned


async def test_restart_schedules_what_is_still_pending(cluster: Cluster) -> None:
    node = await cluster.add_node("a")
    await cluster.start()
    await cluster.create_pod("before")
    assert await cluster.wait_bound("before") == node
    await cluster.wait_event("before", "Scheduled")
    await cluster.stop()
    await cluster.create_pod("during-1")
    await cluster.create_pod("during-2")
    await cluster.start()
    assert await cluster.wait_bound("during-1") == node
    assert await cluster.wait_bound("during-2") == node
    scheduled = [e for e in await cluster.events("before") if e.get("reason") == "Scheduled"]
    assert len(scheduled) == 1 and scheduled[0].get("count", 1) == 1  # not scheduled twice


async def test_bind_conflict_is_dropped(cluster: Cluster) -> None:
    node = await cluster.add_node("a")
    other = await cluster.add_node("b")
    scheduler = await cluster.start()
    pod = await cluster.create_pod("raced", node_selector={"nonexistent": "label"})
    await cluster.wait_unschedulable("raced", "0/2 nodes are available: 2 node(s) didn't match Pod's node "
                                              "affinity/selector. preemption: 0/2 nodes are available: 2 Preemption "
                                              "is not helpful for scheduling..")
    # someone else binds it; then our own (late) binding attempt gets 409 and is dropped
    await cluster.client.bind(cluster.namespace, "raced", other)
    info = PodInfo(pod)
    for _ in range(100):
        if scheduler.cache.has_pod(info.key):
            break
        await asyncio.sleep(0.05)
    await scheduler._bind(QueuedPodInfo(pod, info.key, time.monotonic()), pod, node)
    assert scheduler.stats["conflicts"] == 1
    other_info, node_info = scheduler.cache.node_info(other), scheduler.cache.node_info(node)
    assert other_info is not None and info.key in other_info.pods
    assert node_info is not None and info.key not in node_info.pods
    assert (await cluster.get_pod("raced"))["spec"]["nodeName"] == other


async def _wait_all_bound(cluster: Cluster, selector: str, count: int, started: float) -> dict[str, str]:
    bound: dict[str, str] = {}
    while len(bound) < count and time.monotonic() - started < 60:
        await asyncio.sleep(0.05)
        listed = await cluster.client.list(cluster.pod_rt, cluster.namespace, label_selector=selector)
        bound = {p["metadata"]["name"]: p["spec"]["nodeName"] for p in listed["items"] if p["spec"].get("nodeName")}
    return bound


async def test_burst_of_50_pods(cluster: Cluster) -> None:
    for suffix in ("a", "b", "c", "d", "e"):
        await cluster.add_node(suffix, cpu="8", memory="16Gi")
    await cluster.start()
    # 1. end to end: 50 pods created at once while the scheduler runs
    started = time.monotonic()
    await asyncio.gather(*(cluster.create_pod(f"burst-{i}", cpu="100m", memory="64Mi", labels={"app": "burst"})
                           for i in range(50)))
    created = time.monotonic() - started
    bound = await _wait_all_bound(cluster, "app=burst", 50, started)
    elapsed = time.monotonic() - started
    per_node = Counter(bound.values())
    assert len(bound) == 50 and len(per_node) == 5 and max(per_node.values()) - min(per_node.values()) <= 2
    # 2. scheduler alone: 50 pods already pending when a (restarted) scheduler starts
    await cluster.stop()
    await asyncio.gather(*(cluster.create_pod(f"backlog-{i}", cpu="100m", memory="64Mi",
                                              labels={"app": "backlog"}) for i in range(50)))
    started = time.monotonic()
    await cluster.start()
    backlog = await _wait_all_bound(cluster, "app=backlog", 50, started)
    drained = time.monotonic() - started
    assert len(backlog) == 50
    print(f"\nscheduler burst: 50 pods created in {created:.2f}s and all bound {elapsed:.2f}s after the first "
          f"create ({50 / elapsed:.1f} pods/s end to end), per node {sorted(per_node.values())}; "
          f"a 50-pod backlog bound {drained:.2f}s after scheduler start ({50 / drained:.1f} pods/s)")
    assert elapsed < 30 and drained < 30


async def test_cli_runs_as_a_process(cluster: Cluster, tmp_path: Path) -> None:
    """``minik8s scheduler --kubeconfig ... --scheduler-name ...`` binds pods and stops on SIGTERM."""
    node = await cluster.add_node("a")
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(render(cluster.apiserver.url))
    log_path = tmp_path / "scheduler.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "minik8s", "scheduler", "--kubeconfig", str(kubeconfig),
                                 "--scheduler-name", cluster.scheduler_name, "-v"],
                                stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
    try:
        # the process sees every node of the cluster: select this test's node
        await cluster.create_pod("via-cli", node_selector={GROUP_LABEL: cluster.id})
        assert await cluster.wait_bound("via-cli", timeout=20) == node
        await cluster.wait_event("via-cli", "Scheduled")
    finally:
        proc.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(proc.wait, 15)
    output = log_path.read_text()
    assert code == 0, output
    assert " scheduler INFO bound pod=" in output and f"node={node}" in output


async def test_scheduling_gates_hold_a_pod_until_removed(cluster: Cluster) -> None:
    """A pod with ``schedulingGates`` is created ``PodScheduled=False`` / ``SchedulingGated`` (kubectl's
    STATUS ``SchedulingGated``) and left alone; gates may only be removed; once gone, it is bound."""
    node = await cluster.add_node("a")
    await cluster.start()
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "gated", "namespace": cluster.namespace},
            "spec": {"containers": [{"name": "main", "image": "busybox"}], "schedulerName": cluster.scheduler_name,
                     "schedulingGates": [{"name": "example.com/quota"}, {"name": "example.com/review"}]}}
    created = await cluster.client.create(cluster.pod_rt, body)
    cond = scheduled_condition(created)
    assert cond is not None and (cond["status"], cond["reason"], cond["message"]) == (
        "False", "SchedulingGated", "Scheduling is blocked due to non-empty scheduling gates")
    table = await cluster.client.request("GET", f"/api/v1/namespaces/{cluster.namespace}/pods/gated",
                                         accept="application/json;as=Table;v=v1;g=meta.k8s.io")
    assert table["rows"][0]["cells"][2] == "SchedulingGated"
    # a pod created after it is scheduled: the scheduler has seen the gated one and left it
    await cluster.create_pod("barrier")
    await cluster.wait_bound("barrier")
    assert not (await cluster.get_pod("gated"))["spec"].get("nodeName")
    with pytest.raises(errors.Invalid) as refused:
        await cluster.client.patch(cluster.pod_rt, "gated", {"spec": {"schedulingGates": [
            {"name": "example.com/quota"}, {"name": "example.com/new"}]}}, cluster.namespace, patch_type="merge")
    assert "spec.schedulingGates[1].name: Forbidden: only deletion is allowed, but found new scheduling gate " \
        "'example.com/new'" in str(refused.value)
    await cluster.client.patch(cluster.pod_rt, "gated", {"spec": {"schedulingGates": [{"name": "example.com/quota"}]}},
                               cluster.namespace, patch_type="merge")
    await cluster.create_pod("barrier2")
    await cluster.wait_bound("barrier2")
    assert not (await cluster.get_pod("gated"))["spec"].get("nodeName")
    await cluster.client.patch(cluster.pod_rt, "gated", {"spec": {"schedulingGates": None}}, cluster.namespace,
                               patch_type="merge")
    assert await cluster.wait_bound("gated") == node
    assert (scheduled_condition(await cluster.get_pod("gated")) or {}).get("status") == "True"


async def test_newer_spread_and_affinity_fields(cluster: Cluster) -> None:
    """Topology spread ``matchLabelKeys``, ``minDomains`` and ``nodeTaintsPolicy``; pod affinity
    ``namespaceSelector`` (namespace labels from the scheduler's informer) and ``matchLabelKeys``
    (merged into the stored selector by the apiserver)."""
    zone = "topology.kubernetes.io/zone"
    a = await cluster.add_node("a", labels={zone: "z1"})
    b = await cluster.add_node("b", labels={zone: "z2"})
    await cluster.add_node("c", labels={zone: "z3"}, taints=[{"key": "dedicated", "value": "gpu",
                                                              "effect": "NoSchedule"}])
    ns_rt = cluster.client.kind("v1", "Namespace")
    data_ns = f"data-{cluster.id}"
    await cluster.client.create(ns_rt, {"metadata": {"name": data_ns, "labels": {"team": cluster.id}}})
    try:
        await cluster.start()
        db = {"apiVersion": "v1", "kind": "Pod",
              "metadata": {"name": "db", "namespace": data_ns, "labels": {"app": "db"}},
              "spec": {"containers": [{"name": "main", "image": "busybox"}], "schedulerName": cluster.scheduler_name,
                       "nodeSelector": {"kubernetes.io/hostname": a}}}
        await cluster.client.create(cluster.pod_rt, db)
        await wait_for(lambda: _bound(cluster, data_ns, "db"), timeout=10)

        def condition_says(text: str) -> Callable[[Obj], bool]:
            return lambda pod: text in ((scheduled_condition(pod) or {}).get("message") or "")

        # anti-affinity to the db pods of the namespaces labelled team=<id>: not on a
        away = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname",
             "namespaceSelector": {"matchLabels": {"team": cluster.id}}}]}}
        await cluster.create_pod("guarded", affinity=away, node_selector={"kubernetes.io/hostname": a})
        await cluster.wait_pod("guarded", condition_says("1 node(s) didn't match pod anti-affinity rules"))

        def web(version: str, min_domains: int | None = None) -> list[Obj]:
            c: Obj = {"maxSkew": 1, "topologyKey": zone, "whenUnsatisfiable": "DoNotSchedule",
                      "labelSelector": {"matchLabels": {"app": "web"}}, "matchLabelKeys": ["version"],
                      "nodeTaintsPolicy": "Honor"}
            if min_domains:
                c["minDomains"] = min_domains
            return [c]

        # the tainted zone z3 does not count (Honor): three v1 pods fit over z1 and z2
        for i in range(3):
            await cluster.create_pod(f"v1-{i}", labels={"app": "web", "version": "v1"}, spread=web("v1"))
        placed = [await cluster.wait_bound(f"v1-{i}") for i in range(3)]
        assert sorted(Counter(placed).values()) == [1, 2] and set(placed) == {a, b}
        # minDomains 3 > 2 eligible zones: the global minimum is 0, and both zones already hold v1 pods
        await cluster.create_pod("v1-more", labels={"app": "web", "version": "v1"}, spread=web("v1", 3))
        await cluster.wait_pod("v1-more", condition_says("2 node(s) didn't match pod topology spread constraints"))
        # matchLabelKeys: the v1 pods do not count for a v2 pod
        await cluster.create_pod("v2-0", labels={"app": "web", "version": "v2"}, spread=web("v2", 3))
        assert await cluster.wait_bound("v2-0") in (a, b)

        # pod anti-affinity matchLabelKeys: pods of another revision do not repel each other
        def rev(hash_: str) -> Obj:
            return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "rev"}}, "topologyKey": "kubernetes.io/hostname",
                 "matchLabelKeys": ["pod-template-hash"]}]}}

        on_b = {"kubernetes.io/hostname": b}
        r1 = await cluster.create_pod("r1", labels={"app": "rev", "pod-template-hash": "h1"}, affinity=rev("h1"),
                                      node_selector=on_b)
        stored = r1["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
        assert stored["labelSelector"]["matchExpressions"] == [
            {"key": "pod-template-hash", "operator": "In", "values": ["h1"]}]
        await cluster.create_pod("r2", labels={"app": "rev", "pod-template-hash": "h2"}, affinity=rev("h2"),
                                 node_selector=on_b)
        assert [await cluster.wait_bound("r1"), await cluster.wait_bound("r2")] == [b, b]
        await cluster.create_pod("r3", labels={"app": "rev", "pod-template-hash": "h1"}, affinity=rev("h1"),
                                 node_selector=on_b)
        await cluster.wait_pod("r3", condition_says("1 node(s) didn't match pod anti-affinity rules"))
    finally:
        await cluster.client.delete(ns_rt, data_ns)


async def _bound(cluster: Cluster, namespace: str, name: str) -> bool:
    pod = await cluster.client.get(cluster.pod_rt, name, namespace)
    return bool(pod["spec"].get("nodeName"))
