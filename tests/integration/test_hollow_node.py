"""The hollow-node simulator against a real etcd + apiserver of its own, with the real scheduler
and the node IPAM, deployment and replicaset controllers in-process.

Nodes are cluster-wide, so this module has its own apiserver: the session apiserver's other
tests never see the hollow Nodes.
"""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import AsyncIterator

import pytest

from minik8s.api.base import Obj
from minik8s.client.kubeconfig import ClientConfig
from minik8s.client.rest import Client
from minik8s.hollownode.hollow import HOLLOW_LABEL, HollowConfig, HollowNodes
from minik8s.scheduler.scheduler import Scheduler
from tests.support.controllers import controller_manager, deployment
from tests.support.processes import APIServer
from tests.support.waiting import wait_for

COUNT = 4
TOLERATION = {"key": HOLLOW_LABEL, "operator": "Equal", "value": "true", "effect": "NoSchedule"}


@pytest.fixture
async def cluster(own_apiserver: APIServer) -> AsyncIterator[tuple[Client, HollowNodes]]:
    """Hollow nodes (leases of 4 s: renewed every second), the scheduler and the controllers."""
    async with Client(ClientConfig(server=own_apiserver.url)) as client:
        hollow = HollowNodes(client, HollowConfig(count=COUNT, lease_duration=4, status_period=5))
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        tasks = [loop.create_task(hollow.run(stop))]
        scheduler = Scheduler(client)
        tasks.append(loop.create_task(scheduler.run()))
        try:
            async with controller_manager(client, None, ["nodeipam", "deployment", "replicaset"]):
                await asyncio.wait_for(hollow.ready.wait(), 20)
                await scheduler.wait_ready(15)
                yield client, hollow
        finally:
            stop.set()
            for task in tasks[1:]:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)


def condition(obj: Obj, ctype: str) -> str | None:
    return next((c.get("status") for c in (obj.get("status") or {}).get("conditions") or []
                 if c.get("type") == ctype), None)


async def test_nodes_register_with_label_taint_capacity_cidr_and_renew_leases(
        cluster: tuple[Client, HollowNodes]) -> None:
    client, _ = cluster
    node_rt, lease_rt = client.kind("v1", "Node"), client.kind("coordination.k8s.io/v1", "Lease")

    async def ready_nodes() -> list[Obj] | None:
        items = (await client.list(node_rt, label_selector=f"{HOLLOW_LABEL}=true"))["items"]
        ok = [n for n in items if condition(n, "Ready") == "True" and n["spec"].get("podCIDR")]
        return items if len(ok) == COUNT else None

    nodes = await wait_for(ready_nodes, 20, what="every hollow node Ready with a podCIDR")
    assert sorted(n["metadata"]["name"] for n in nodes) == [f"hollow-{i}" for i in range(COUNT)]
    cidrs = {n["spec"]["podCIDR"] for n in nodes}
    assert len(cidrs) == COUNT  # the node IPAM controller gave each its own
    for n in nodes:
        assert n["spec"]["taints"] == [{"key": HOLLOW_LABEL, "value": "true", "effect": "NoSchedule"}]
        assert n["metadata"]["labels"][HOLLOW_LABEL] == "true"
        assert n["status"]["capacity"] == {"cpu": "4", "memory": "16Gi", "pods": "110"}
        assert n["status"]["allocatable"] == n["status"]["capacity"]
        assert "hollow" in n["status"]["nodeInfo"]["kubeletVersion"]
        assert ipaddress.ip_address(n["status"]["addresses"][0]["address"]) in ipaddress.ip_network("198.18.0.0/15")

    first = {n["metadata"]["name"]: (await client.get(lease_rt, n["metadata"]["name"], "kube-node-lease"))
             for n in nodes}
    for name, lease in first.items():
        assert lease["spec"]["holderIdentity"] == name and lease["spec"]["leaseDurationSeconds"] == 4
        assert lease["metadata"]["ownerReferences"][0]["kind"] == "Node"

    async def all_renewed() -> bool:
        for name, lease in first.items():
            now = await client.get(lease_rt, name, "kube-node-lease")
            if now["spec"]["renewTime"] == lease["spec"]["renewTime"]:
                return False
        return True

    await wait_for(all_renewed, 10, what="every lease renewed")


async def test_tolerating_pods_run_with_ips_of_their_node_and_deletion_finishes(
        cluster: tuple[Client, HollowNodes]) -> None:
    client, _ = cluster
    pod_rt, node_rt = client.kind("v1", "Pod"), client.kind("v1", "Node")
    dep_rt = client.kind("apps/v1", "Deployment")
    ns = "default"
    dep = deployment("web", 8, {"app": "web"})
    dep["spec"]["template"]["spec"]["tolerations"] = [TOLERATION]
    await client.create(dep_rt, dep, ns)
    plain = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "intolerant"},
             "spec": {"containers": [{"name": "c", "image": "minik8s/busybox"}]}}
    await client.create(pod_rt, plain, ns)

    async def running() -> list[Obj] | None:
        items = (await client.list(pod_rt, ns, label_selector="app=web"))["items"]
        ok = [p for p in items if p["status"].get("phase") == "Running" and condition(p, "Ready") == "True"]
        return ok if len(ok) == 8 else None

    pods = await wait_for(running, 30, what="8 Running web pods")
    cidrs = {n["metadata"]["name"]: ipaddress.ip_network(n["spec"]["podCIDR"])
             for n in (await client.list(node_rt))["items"]}
    ips = set()
    for p in pods:
        ip = ipaddress.ip_address(p["status"]["podIP"])
        assert ip in cidrs[p["spec"]["nodeName"]], (p["spec"]["nodeName"], ip)
        ips.add(ip)
        assert p["status"]["containerStatuses"][0]["containerID"].startswith("hollow://")
        assert p["status"]["containerStatuses"][0]["state"]["running"]
    assert len(ips) == 8
    assert len({p["spec"]["nodeName"] for p in pods}) > 1  # spread over the hollow nodes

    lonely = await client.get(pod_rt, "intolerant", ns)
    assert not lonely["spec"].get("nodeName") and lonely["status"]["phase"] == "Pending"

    victim = pods[0]["metadata"]["name"]
    await client.delete(pod_rt, victim, ns)  # default grace: the hollow node finishes it

    async def gone_and_replaced() -> bool:
        items = (await client.list(pod_rt, ns, label_selector="app=web"))["items"]
        names = {p["metadata"]["name"] for p in items}
        return victim not in names and len((await running()) or []) == 8

    await wait_for(gone_and_replaced, 30, what="the deleted pod gone and replaced")
    await client.delete(dep_rt, "web", ns)  # no garbage collector here: the ReplicaSet goes by hand
    await client.delete_collection(client.kind("apps/v1", "ReplicaSet"), ns, label_selector="app=web")
    await client.delete_collection(pod_rt, ns, label_selector="app=web")
    await wait_for(lambda: _none_left(client, ns), 30, what="every web pod deleted")
    await client.delete(pod_rt, "intolerant", ns, grace_period_seconds=0)


async def _none_left(client: Client, ns: str) -> bool:
    return not (await client.list(client.kind("v1", "Pod"), ns, label_selector="app=web"))["items"]
