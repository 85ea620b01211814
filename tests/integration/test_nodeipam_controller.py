"""The node IPAM controller against a real apiserver of its own (Nodes are cluster-wide, so the
session apiserver's Nodes of other tests are not touched)."""

from __future__ import annotations

import contextlib

import pytest

from minik8s.api import errors
from minik8s.client.kubeconfig import ClientConfig
from minik8s.client.rest import Client
from minik8s.controllers.manager import ControllerManager
from tests.support.controllers import controller_manager
from tests.support.processes import APIServer
from tests.support.waiting import wait_for


def ipam(client: Client) -> contextlib.AbstractAsyncContextManager[ControllerManager]:
    """``controller-manager --controllers nodeipam`` in-process (default --cluster-cidr 10.244.0.0/16,
    /24 per node; Nodes are cluster-scoped, so the namespace does not limit it)."""
    return controller_manager(client, "default", ["nodeipam"])


async def cidrs(client: Client) -> dict[str, str | None]:
    items = (await client.list(client.kind("v1", "Node")))["items"]
    return {n["metadata"]["name"]: (n.get("spec") or {}).get("podCIDR") for n in items}


async def add_node(client: Client, name: str, pod_cidr: str | None = None) -> None:
    spec = {"podCIDR": pod_cidr, "podCIDRs": [pod_cidr]} if pod_cidr else {}
    await client.create(client.kind("v1", "Node"), {"metadata": {"name": name}, "spec": spec})


async def all_allocated(client: Client, n: int) -> bool:
    found = await cidrs(client)
    return len(found) == n and all(found.values())


async def test_allocates_distinct_cidrs_keeps_existing_ones_and_survives_restarts(own_apiserver: APIServer) -> None:
    async with Client(ClientConfig(server=own_apiserver.url)) as client:
        await add_node(client, "static", "10.244.0.0/24")  # a kubelet started with --pod-cidr
        await add_node(client, "outside", "192.168.50.0/24")
        for name in ("a", "b", "c"):
            await add_node(client, name)
        async with ipam(client):
            await wait_for(lambda: all_allocated(client, 5), what="every node allocated")
            first = await cidrs(client)
            assert first["static"] == "10.244.0.0/24" and first["outside"] == "192.168.50.0/24"
            assert len(set(first.values())) == 5
            node = await client.get(client.kind("v1", "Node"), "a")
            assert node["spec"]["podCIDRs"] == [node["spec"]["podCIDR"]]
        # restarted controller: rebuilds "used" from the Nodes, moves nothing, never reuses one
        await add_node(client, "d")
        async with ipam(client):
            await wait_for(lambda: all_allocated(client, 6), what="node d allocated after a restart")
            second = await cidrs(client)
            assert {k: v for k, v in second.items() if k != "d"} == first
            assert second["d"] not in first.values()
            # a deleted node releases its subnet; new nodes still never collide
            await client.delete(client.kind("v1", "Node"), "a")
            await add_node(client, "e")
            await add_node(client, "f")
            await wait_for(lambda: all_allocated(client, 7), what="nodes e and f allocated")
            third = await cidrs(client)
            assert len(set(third.values())) == 7
            with pytest.raises(errors.NotFound):
                await client.get(client.kind("v1", "Node"), "a")
            # two Nodes that came with the same subnet: kept, and a Warning says so (once)
            await add_node(client, "twin", "10.244.0.0/24")
            await wait_for(lambda: _conflict_events(client), what="a PodCIDRConflict event")
            twin = [e for e in await _conflict_events(client) if e["involvedObject"]["name"] == "twin"]
            assert len(twin) == 1 and "overlaps node static's 10.244.0.0/24" in twin[0]["message"], twin
            assert (await cidrs(client))["twin"] == "10.244.0.0/24"


async def _conflict_events(client: Client) -> list[dict[str, object]]:
    events = (await client.list(client.kind("v1", "Event"), "default"))["items"]
    return [e for e in events if e.get("reason") == "PodCIDRConflict"]
