"""PriorityClasses, the Priority admission plugin and preemption, against a real apiserver and etcd.

The scheduler runs in-process under a per-test name, restricted to the test's own Node objects
(labelled with a per-test group); a :class:`~tests.support.controllers.SimulatedNode` plays the
kubelets (bound pods become Running, deleted pods are removed shortly after), and the real disruption
controller computes the budgets' ``disruptionsAllowed``. PriorityClasses are cluster-scoped: each test
names its own and deletes them.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from typing import Any

import pytest

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.client.informer import Informer
from minik8s.client.kubeconfig import ClientConfig
from minik8s.client.rest import Client
from minik8s.scheduler.scheduler import Scheduler
from tests.support.controllers import SimulatedNode, controller_manager
from tests.support.processes import APIServer
from tests.support.waiting import wait_for

GROUP_LABEL = "priority-test.minik8s.io/group"


class Classes:
    """PriorityClasses made by one test (unique names), deleted afterwards."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.rt = client.kind("scheduling.k8s.io/v1", "PriorityClass")
        self.id = os.urandom(3).hex()
        self.names: list[str] = []

    def name(self, short: str) -> str:
        return f"{short}-{self.id}"

    async def create(self, short: str, value: int, **fields: Any) -> Obj:
        body = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                "metadata": {"name": self.name(short)}, "value": value, **fields}
        created = await self.client.create(self.rt, body)
        self.names.append(created["metadata"]["name"])
        return created

    async def close(self) -> None:
        for name in self.names:
            try:
                await self.client.delete(self.rt, name)
            except errors.NotFound:
                pass


@pytest.fixture
async def classes(client: Client) -> AsyncIterator[Classes]:
    c = Classes(client)
    yield c
    await c.close()


def pod_body(name: str, *, priority_class: str | None = None, cpu: str | None = None,
             scheduler: str | None = None, node: str | None = None, labels: dict[str, str] | None = None,
             **spec: Any) -> Obj:
    container: Obj = {"name": "main", "image": "busybox", "command": ["sleep", "3600"]}
    if cpu:
        container["resources"] = {"requests": {"cpu": cpu}}
    body_spec: Obj = {"containers": [container], **spec}
    if priority_class:
        body_spec["priorityClassName"] = priority_class
    if scheduler:
        body_spec["schedulerName"] = scheduler
    if node:
        body_spec["nodeSelector"] = {"kubernetes.io/hostname": node}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels or {}}, "spec": body_spec}


# ---------------------------------------------------------------------------- the kind
async def test_system_classes_and_validation(client: Client, classes: Classes) -> None:
    rt = classes.rt
    node_critical = await wait_for(lambda: client.get(rt, "system-node-critical"), 20, what="system classes",
                                   not_yet=(errors.NotFound,))
    assert node_critical["value"] == 2000001000
    assert node_critical["preemptionPolicy"] == "PreemptLowerPriority"
    assert node_critical["description"] == ("Used for system critical pods that must not be moved from their "
                                            "current node.")
    assert (await client.get(rt, "system-cluster-critical"))["value"] == 2000000000

    created = await classes.create("user", 1000, description="a class")
    assert created["preemptionPolicy"] == "PreemptLowerPriority"
    assert not created.get("globalDefault")

    with pytest.raises(errors.Invalid) as too_high:
        await classes.create("huge", 1000000001)
    assert too_high.value.message == (f'PriorityClass.scheduling.k8s.io "huge-{classes.id}" is invalid: value: '
                                      "Forbidden: maximum allowed value of a user defined priority is 1000000000")
    with pytest.raises(errors.Invalid) as system:
        await client.create(rt, {"metadata": {"name": "system-mine"}, "value": 10})
    assert system.value.message == (
        'PriorityClass.scheduling.k8s.io "system-mine" is invalid: metadata.name: Forbidden: priority class names with '
        "'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class")
    with pytest.raises(errors.Invalid) as policy:
        await classes.create("policy", 5, preemptionPolicy="Sometimes")
    assert 'preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"' \
        in policy.value.message

    with pytest.raises(errors.Invalid) as changed:
        await client.patch(rt, created["metadata"]["name"], {"value": 2000})
    assert changed.value.message == f'PriorityClass.scheduling.k8s.io "user-{classes.id}" is invalid: value: ' \
                                    "Forbidden: may not be changed in an update."
    patched = await client.patch(rt, created["metadata"]["name"], {"description": "changed"})
    assert patched["description"] == "changed"


# ---------------------------------------------------------------------------- admission
async def test_admission_resolves_priority(client: Client, namespace: str, classes: Classes) -> None:
    pod_rt = client.kind("v1", "Pod")
    high = await classes.create("high", 1000)
    never = await classes.create("never", 500, preemptionPolicy="Never")

    pod = await client.create(pod_rt, pod_body("with-class", priority_class=high["metadata"]["name"]), namespace)
    assert pod["spec"]["priority"] == 1000
    assert pod["spec"]["preemptionPolicy"] == "PreemptLowerPriority"
    pod = await client.create(pod_rt, pod_body("never", priority_class=never["metadata"]["name"]), namespace)
    assert (pod["spec"]["priority"], pod["spec"]["preemptionPolicy"]) == (500, "Never")
    plain = await client.create(pod_rt, pod_body("plain"), namespace)
    assert (plain["spec"]["priority"], plain["spec"]["preemptionPolicy"]) == (0, "PreemptLowerPriority")
    assert "priorityClassName" not in plain["spec"]
    # an update that leaves the priority out keeps it
    plain["spec"].pop("priority")
    plain["metadata"]["labels"] = {"touched": "yes"}
    updated = await client.update(pod_rt, plain)
    assert updated["spec"]["priority"] == 0

    with pytest.raises(errors.Forbidden) as unknown:
        await client.create(pod_rt, pod_body("lost", priority_class="no-such-class"), namespace)
    assert unknown.value.message == 'pods "lost" is forbidden: no PriorityClass with name no-such-class was found'
    with pytest.raises(errors.Forbidden) as mismatch:
        await client.create(pod_rt, pod_body("liar", priority_class=high["metadata"]["name"], priority=7), namespace)
    assert mismatch.value.message == (
        'pods "liar" is forbidden: the integer value of priority (7) must not be provided in pod spec; '
        "priority admission controller computed 1000 from the given PriorityClass name")
    with pytest.raises(errors.Forbidden) as policy:
        await client.create(pod_rt, pod_body("policy", priority_class=never["metadata"]["name"],
                                              preemptionPolicy="PreemptLowerPriority"), namespace)
    assert "the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided" in policy.value.message
    assert (await client.create(pod_rt, pod_body("critical", priority_class="system-cluster-critical"),
                                namespace))["spec"]["priority"] == 2000000000


async def test_global_default(client: Client, namespace: str, classes: Classes) -> None:
    pod_rt = client.kind("v1", "Pod")
    default = await classes.create("default", 42, globalDefault=True)
    with pytest.raises(errors.Forbidden) as second:
        await classes.create("other", 43, globalDefault=True)
    assert second.value.message == (f'priorityclasses.scheduling.k8s.io "other-{classes.id}" is forbidden: '
                                    f"PriorityClass default-{classes.id} is already marked as default. "
                                    "Only one default can exist")
    # the default itself may be updated
    await client.patch(classes.rt, default["metadata"]["name"], {"description": "the default"})
    pod = await client.create(pod_rt, pod_body("defaulted"), namespace)
    assert pod["spec"]["priority"] == 42
    assert pod["spec"]["priorityClassName"] == default["metadata"]["name"]
    await client.delete(classes.rt, default["metadata"]["name"])
    classes.names.remove(default["metadata"]["name"])
    assert (await client.create(pod_rt, pod_body("after"), namespace))["spec"]["priority"] == 0


# ---------------------------------------------------------------------------- preemption
class PreemptionCluster:
    """Nodes of one test, an in-process scheduler restricted to them, the pods' recorded states."""

    def __init__(self, apiserver: APIServer, client: Client, namespace: str) -> None:
        self.apiserver = apiserver
        self.client = client
        self.namespace = namespace
        self.id = os.urandom(3).hex()
        self.scheduler_name = f"prio-{self.id}"
        self.node_rt = client.kind("v1", "Node")
        self.pod_rt = client.kind("v1", "Pod")
        self.nodes: list[str] = []
        self.scheduler: Scheduler | None = None
        self._tasks: list[asyncio.Task[Any]] = []
        self._clients: list[Client] = []
        #: pod name -> every condition type seen on it (the DisruptionTarget lives only while it terminates)
        self.conditions: dict[str, set[str]] = {}
        self.deleted: list[str] = []
        #: pod name -> every status.nominatedNodeName seen on it (the kubelet stand-in rewrites the status)
        self.nominations: dict[str, set[str]] = {}

    async def add_node(self, suffix: str, cpu: str) -> str:
        name = f"n{self.id}-{suffix}"
        status = {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
                  "capacity": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
                  "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}
        created = await self.client.create(self.node_rt, {
            "apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {
                GROUP_LABEL: self.id, "kubernetes.io/hostname": name}}, "status": status})
        self.nodes.append(name)
        if (created.get("status") or {}).get("allocatable") != status["allocatable"]:
            created["status"] = status
            await self.client.update_status(self.node_rt, created)
        return name

    async def start(self) -> Scheduler:
        sched_client = Client(ClientConfig(server=self.apiserver.url))
        self._clients.append(sched_client)
        self.scheduler = Scheduler(sched_client, self.scheduler_name, node_label_selector=f"{GROUP_LABEL}={self.id}",
                                   initial_backoff=0.2, max_backoff=1.0)
        self._tasks.append(asyncio.get_running_loop().create_task(self.scheduler.run()))
        await self.scheduler.wait_ready(15)
        watcher = Informer(self.client, self.pod_rt, self.namespace)

        def seen(pod: Obj) -> None:
            name = pod["metadata"]["name"]
            self.conditions.setdefault(name, set()).update(
                c.get("type") for c in (pod.get("status") or {}).get("conditions") or [])
            if (pod.get("status") or {}).get("nominatedNodeName"):
                self.nominations.setdefault(name, set()).add(pod["status"]["nominatedNodeName"])

        watcher.add_handler(seen, lambda _old, new: seen(new), lambda pod: self.deleted.append(pod["metadata"]["name"]))
        self._tasks.append(asyncio.get_running_loop().create_task(watcher.run()))
        await watcher.wait_synced(10)
        return self.scheduler

    async def create(self, name: str, **kwargs: Any) -> Obj:
        return await self.client.create(self.pod_rt, pod_body(name, scheduler=self.scheduler_name, **kwargs),
                                        self.namespace)

    async def pod(self, name: str) -> Obj:
        return await self.client.get(self.pod_rt, name, self.namespace)

    async def wait_running(self, name: str, timeout: float = 20) -> Obj:
        async def running() -> Obj | None:
            pod = await self.pod(name)
            return pod if pod["spec"].get("nodeName") and pod["status"].get("phase") == "Running" else None
        return await wait_for(running, timeout, what=f"pod {name} bound and Running")  # type: ignore[no-any-return]

    async def wait_gone(self, name: str, timeout: float = 20) -> None:
        async def gone() -> bool:
            try:
                await self.pod(name)
            except errors.NotFound:
                return True
            return False
        await wait_for(gone, timeout, what=f"pod {name} deleted")

    async def events(self, name: str, reason: str) -> list[Obj]:
        items = (await self.client.list(self.client.kind("v1", "Event"), self.namespace))["items"]
        return [e for e in items if (e.get("involvedObject") or {}).get("name") == name and e.get("reason") == reason]

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for c in self._clients:
            await c.close()
        for name in self.nodes:
            try:
                await self.client.delete(self.node_rt, name)
            except errors.NotFound:
                pass


@pytest.fixture
async def pcluster(apiserver: APIServer, client: Client, namespace: str) -> AsyncIterator[PreemptionCluster]:
    c = PreemptionCluster(apiserver, client, namespace)
    try:
        yield c
    finally:
        await c.close()


async def test_preempts_the_lowest_priority_pods(pcluster: PreemptionCluster, classes: Classes,
                                                 client: Client, namespace: str) -> None:
    for short, value in (("lowest", 1), ("low", 10), ("mid", 500), ("high", 1000)):
        await classes.create(short, value)
    node = await pcluster.add_node("a", cpu="3")
    await pcluster.start()
    async with SimulatedNode(client, namespace, node=None, termination_delay=0.3):
        for name, cls in (("mid", "mid"), ("low", "low"), ("lowest", "lowest")):
            await pcluster.create(name, priority_class=classes.name(cls), cpu="1")
        for name in ("mid", "low", "lowest"):
            await pcluster.wait_running(name)
        high = await pcluster.create("high", priority_class=classes.name("high"), cpu="1")

        # one victim is enough, and it is the lowest-priority pod: the others are reprieved
        await pcluster.wait_gone("lowest")
        bound = await pcluster.wait_running("high")
        assert bound["spec"]["nodeName"] == node
        assert pcluster.nominations["high"] == {node}
        for name in ("mid", "low"):
            assert (await pcluster.pod(name))["metadata"].get("deletionTimestamp") is None
        assert "DisruptionTarget" in pcluster.conditions["lowest"]
        preempted = await wait_for(lambda: pcluster.events("lowest", "Preempted"), 10, what="Preempted event")
        assert preempted[0]["type"] == "Normal"
        assert preempted[0]["message"] == f"Preempted by pod {high['metadata']['uid']} on node {node}"
        assert pcluster.scheduler is not None and pcluster.scheduler.stats["preemptions"] == 1


async def test_never_policy_waits(pcluster: PreemptionCluster, classes: Classes, client: Client,
                                  namespace: str) -> None:
    await classes.create("low", 10)
    await classes.create("polite", 1000, preemptionPolicy="Never")
    await pcluster.add_node("a", cpu="1")
    await pcluster.start()
    async with SimulatedNode(client, namespace, node=None):
        await pcluster.create("low", priority_class=classes.name("low"), cpu="1")
        await pcluster.wait_running("low")
        await pcluster.create("polite", priority_class=classes.name("polite"), cpu="1")

        async def refused() -> Obj | None:
            pod = await pcluster.pod("polite")
            cond = next((c for c in pod["status"].get("conditions") or [] if c["type"] == "PodScheduled"), {})
            return pod if cond.get("status") == "False" else None
        pod = await wait_for(refused, 15, what="polite pod marked unschedulable")
        cond = next(c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled")
        assert cond["message"] == ("0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to "
                                   "preemptionPolicy=Never..")
        assert not pod["status"].get("nominatedNodeName")
        low = await pcluster.pod("low")
        assert low["metadata"].get("deletionTimestamp") is None
        assert pcluster.scheduler is not None and pcluster.scheduler.stats["preemptions"] == 0


async def test_victims_respect_disruption_budgets(pcluster: PreemptionCluster, classes: Classes, client: Client,
                                                  namespace: str) -> None:
    await classes.create("low", 10)
    await classes.create("high", 1000)
    a = await pcluster.add_node("a", cpu="1")
    b = await pcluster.add_node("b", cpu="1")
    await pcluster.start()
    pdb_rt = client.kind("policy/v1", "PodDisruptionBudget")
    await client.create(pdb_rt, {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                                 "metadata": {"name": "guarded"},
                                 "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "guarded"}}}},
                        namespace)
    async with controller_manager(client, namespace, ["disruption"]), \
            SimulatedNode(client, namespace, node=None, termination_delay=0.3):
        # the guarded pod starts last, on the node that sorts first: without the budget it would be the
        # victim (the latest start time, then the first name, wins among equal candidates)
        await pcluster.create("free", priority_class=classes.name("low"), cpu="1", node=b)
        await pcluster.wait_running("free")
        await pcluster.create("guarded", priority_class=classes.name("low"), cpu="1", node=a,
                              labels={"app": "guarded"})
        await pcluster.wait_running("guarded")

        async def budget_settled() -> bool:
            pdb = await client.get(pdb_rt, "guarded", namespace)
            status = pdb.get("status") or {}
            return status.get("currentHealthy") == 1 and status.get("disruptionsAllowed") == 0
        await wait_for(budget_settled, 20, what="the budget allowing no disruption")
        await pcluster.wait_running("guarded")

        await pcluster.create("high", priority_class=classes.name("high"), cpu="1")
        await pcluster.wait_gone("free")
        bound = await pcluster.wait_running("high")
        assert bound["spec"]["nodeName"] == b
        assert (await pcluster.pod("guarded"))["metadata"].get("deletionTimestamp") is None
