"""The cluster DNS server as the integration tests drive it: in-process on a free port, queried
over real UDP and TCP."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator
from typing import Any

from dnslib import DNSRecord

from minik8s.client.rest import Client
from minik8s.dns.app import ClusterDNS, DNSConfig


async def query(port: int, name: str, qtype: str = "A", tcp: bool = False, host: str = "127.0.0.1") -> DNSRecord:
    """One real query to ``host:port`` (dnslib's client, in a thread)."""
    packet = DNSRecord.question(name, qtype)
    raw = await asyncio.to_thread(packet.send, host, port, tcp, 5)
    return DNSRecord.parse(raw)


def answers(reply: DNSRecord) -> list[str]:
    """The rdata of every answer record, as text."""
    return [str(rr.rdata) for rr in reply.rr]


@contextlib.asynccontextmanager
async def dns_server(client: Client, namespace: str, **config: Any) -> AsyncIterator[ClusterDNS]:
    """A :class:`ClusterDNS` running in-process on a free port, registered in ``namespace``'s
    ``kube-dns`` Service (``config`` overrides :class:`DNSConfig` fields)."""
    settings: dict[str, Any] = {"port": 0, "service_namespace": namespace, "service_name": "kube-dns",
                                "cluster_dns_ip": f"10.96.{random.randint(200, 250)}.{random.randint(2, 250)}",
                                "node_name": "node-1", "register_period": 0.5, **config}
    cfg = DNSConfig(**settings)
    server = ClusterDNS(client, cfg)
    stop = asyncio.Event()
    task = asyncio.get_running_loop().create_task(server.run(stop))
    try:
        await asyncio.wait_for(server.ready.wait(), 20)
        yield server
    finally:
        stop.set()
        await asyncio.wait_for(task, 20)

