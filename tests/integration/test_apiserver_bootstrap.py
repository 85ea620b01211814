"""The apiserver keeps the system namespaces and the ``default/kubernetes`` Service in place."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from minik8s.api import errors
from minik8s.api.registry import default_registry
from minik8s.apiserver.bootstrap import SYSTEM_NAMESPACES, Bootstrap, kubernetes_service_ip
from minik8s.apiserver.endpointreconciler import LeaseEndpointReconciler, lease_name
from minik8s.apiserver.resources import DeleteOptions, ResourceAPI
from minik8s.apiserver.storage import Store
from minik8s.apiserver.strategies import default_strategies
from minik8s.client.rest import Client
from minik8s.host.addresses import publishable
from tests.support.processes import APIServer, Etcd
from tests.support.waiting import wait_for

REGISTRY = default_registry()
SVC, EP = (REGISTRY.by_kind("v1", k) for k in ("Service", "Endpoints"))
LEASE = REGISTRY.by_kind("coordination.k8s.io/v1", "Lease")


async def test_the_running_apiserver_serves_the_kubernetes_service(client: Client, apiserver: APIServer) -> None:
    svc = await client.get(client.kind("v1", "Service"), "kubernetes", "default")
    assert svc["spec"]["clusterIP"] == "10.96.0.1"
    assert svc["spec"]["ports"] == [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": apiserver.port}]
    assert "selector" not in svc["spec"]
    for ns in SYSTEM_NAMESPACES:
        await client.get(client.kind("v1", "Namespace"), ns)
    with pytest.raises(errors.NotFound):  # advertised on loopback: pods could not reach it
        await client.get(client.kind("v1", "Endpoints"), "kubernetes", "default")


@pytest.fixture
def own_etcd(tmp_path: Path) -> Iterator[Etcd]:
    server = Etcd(tmp_path)
    yield server
    server.stop()


@pytest.fixture
async def api(own_etcd: Etcd) -> AsyncIterator[ResourceAPI]:
    store = Store("127.0.0.1", own_etcd.port)
    yield ResourceAPI(store, REGISTRY, default_strategies("10.96.0.0/16"))
    await store.close()


async def test_lease_reconciler_lists_live_apiservers_and_drops_stopped_ones(api: ResourceAPI) -> None:
    # addresses of the blackholed cluster CIDR: only written as data, never connected to
    first = Bootstrap(api, REGISTRY, "10.96.0.0/16", "10.244.251.10", 6443, period=0.1)
    await first.ensure()
    one = LeaseEndpointReconciler(api, REGISTRY, "10.244.251.10", 6443, ttl=2, interval=0.5)
    assert await one.reconcile() == ["10.244.251.10"]
    ep = await api.get(EP, "default", "kubernetes")
    assert ep["subsets"] == [{"addresses": [{"ip": "10.244.251.10"}],
                              "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}]}]
    lease = await api.get(LEASE, "kube-system", lease_name("10.244.251.10"))
    assert lease["spec"]["holderIdentity"] == "10.244.251.10" and lease["spec"]["leaseDurationSeconds"] == 2
    # a second apiserver adds itself; the first one's address stays
    two = LeaseEndpointReconciler(api, REGISTRY, "10.244.251.11", 6443, ttl=2, interval=0.5)
    assert await two.reconcile() == ["10.244.251.10", "10.244.251.11"]
    # a clean stop takes the address out at once
    await two.remove()
    ep = await api.get(EP, "default", "kubernetes")
    assert [a["ip"] for a in ep["subsets"][0]["addresses"]] == ["10.244.251.10"]
    # a killed one (lease no longer renewed) disappears once its lease expired
    await two.reconcile()
    stop = asyncio.Event()
    task = asyncio.get_running_loop().create_task(one.run(stop))
    try:
        async def only_first() -> bool:
            ep = await api.get(EP, "default", "kubernetes")
            return [a["ip"] for a in ep["subsets"][0]["addresses"]] == ["10.244.251.10"]
        await wait_for(only_first, timeout=10, what="the stale address dropped")
        with pytest.raises(errors.NotFound):
            await api.get(LEASE, "kube-system", lease_name("10.244.251.11"))
    finally:
        stop.set()
        await task
    # the last apiserver stopping leaves no address
    assert (await api.get(EP, "default", "kubernetes")).get("subsets") in (None, [])


async def test_bootstrap_repairs_deletions(api: ResourceAPI) -> None:
    first = Bootstrap(api, REGISTRY, "10.96.0.0/16", "10.244.251.10", 6443, period=0.1)
    await first.ensure()
    await api.delete(SVC, "default", "kubernetes", DeleteOptions())
    stop = asyncio.Event()
    task = asyncio.get_running_loop().create_task(first.run(stop))
    try:
        for _ in range(100):
            try:
                svc = await api.get(SVC, "default", "kubernetes")
                break
            except errors.NotFound:
                await asyncio.sleep(0.1)
        else:
            pytest.fail("the kubernetes Service was not re-created")
        assert svc["spec"]["clusterIP"] == "10.96.0.1"
    finally:
        stop.set()
        await task


def test_service_ip_and_publishable_addresses() -> None:
    assert kubernetes_service_ip("10.96.0.0/16") == "10.96.0.1"
    assert kubernetes_service_ip("172.20.0.0/24") == "172.20.0.1"
    assert publishable("192.168.56.11")
    assert not publishable("127.0.0.1") and not publishable("0.0.0.0") and not publishable("node1")
