"""The cluster DNS address through the real kube-proxy: ``<cluster DNS IP>:53`` DNATed to the server.

A ``minik8s proxy`` process (its own chain prefix and 10.96.X.0/24 slice, as in
``test_proxy.py``) programs the DNS Service; the DNS server listens on the gateway of a
Docker bridge network of our own (the role of the node's pod-bridge gateway) and registers
that address in the Service's Endpoints, which the EndpointSlice mirroring controller (run
in-process) copies into the EndpointSlice kube-proxy reads.  Queries go from the host and from a busybox
container on that network to ``10.96.X.10:53``.  Network safety: only our ClusterIP slice,
our bridge and our containers are involved; everything is removed afterwards.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from typing import Any

import docker
import pytest

from minik8s.client.rest import Client
from tests.support.controllers import controller_manager
from tests.support.dns import answers, dns_server, query
from tests.support.proxy import IMAGE, PROXY_MARKS, ProxyProcess, create_network

pytestmark = PROXY_MARKS


@pytest.fixture(scope="module")
def bridge() -> Iterator[tuple[Any, str, str]]:
    """(docker client, network name, gateway address on this host)."""
    engine = docker.from_env()
    tag = os.urandom(3).hex()
    name = f"mk8s-dp-{tag}"
    net, gateway = create_network(engine, name, {"minik8s.test": f"dns-proxy-{tag}"})
    try:
        yield engine, name, gateway
    finally:
        net.remove()


async def test_cluster_dns_ip_reaches_the_server_from_host_and_pod(
        proxy: ProxyProcess, client: Client, namespace: str, bridge: tuple[Any, str, str]) -> None:
    engine, network, gateway = bridge
    svc_rt = client.kind("v1", "Service")
    web = await client.create(svc_rt, {"metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}}, namespace)
    dns_ip = f"10.96.{proxy.third}.10"
    async with controller_manager(client, namespace, ["endpointslicemirroring"]), \
            dns_server(client, namespace, bind_address=gateway, cluster_dns_ip=dns_ip) as server:
        port = server.server.port
        # in a thread: the mirroring controller that writes the slice the proxy waits for runs on this
        # event loop, which a blocking wait would stop
        await asyncio.to_thread(proxy.wait_programmed, dns_ip, 53, [f"{gateway}:{port}"])
        name = f"web.{namespace}.svc.cluster.local"
        for tcp in (False, True):
            reply = await query(53, name, tcp=tcp, host=dns_ip)
            assert answers(reply) == [web["spec"]["clusterIP"]]
        # a pod on the bridge asks the cluster DNS address, as its resolv.conf would
        # (in a thread: the DNS server answers on this event loop)
        out = await asyncio.to_thread(engine.containers.run, IMAGE, ["nslookup", name, dns_ip], network=network,
                                      remove=True, labels={"minik8s.test": "dns-proxy"})
        assert web["spec"]["clusterIP"] in out.decode(), out.decode()
