"""The ``minik8s dns`` process: informers → :class:`ClusterZone` → :class:`DNSServer`, plus registration.

Start-up: start the informers (Services, EndpointSlices, Pods, DNS objects, Ingresses), wait
for their first lists (so the first answers are already right), bind the server (retrying
while the address does not exist yet), then register: the ``kube-dns`` Service and this
server's address in its Endpoints, re-checked every ``register_period`` seconds (a deleted
Endpoints object comes back).  On stop the address is withdrawn.  While the apiserver is
away the caches keep their last state and the server keeps answering from them.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from minik8s.api.discovery import SERVICE_INDEX, slice_service_key
from minik8s.client.factory import SharedInformerFactory
from minik8s.client.informer import NAMESPACE_INDEX, by_namespace
from minik8s.client.registration import ServiceRegistration
from minik8s.client.rest import Client
from minik8s.dns.records import POD_IP_INDEX, ClusterZone, pod_ips
from minik8s.dns.server import DNSServer

log = logging.getLogger("dns")

#: The labels of the ``kube-dns`` Service and Endpoints, as a cluster's DNS add-on sets them.
SERVICE_LABELS = {"k8s-app": "kube-dns", "kubernetes.io/name": "minik8s-dns"}


def dns_service_ports(target_port: int) -> list[dict[str, object]]:
    """The ``kube-dns`` Service's ports: ``dns`` (UDP 53) and ``dns-tcp`` (TCP 53) to ``target_port``."""
    return [{"name": "dns", "port": 53, "targetPort": target_port, "protocol": "UDP"},
            {"name": "dns-tcp", "port": 53, "targetPort": target_port, "protocol": "TCP"}]


@dataclass
class DNSConfig:
    """Settings of one DNS server (``minik8s dns`` flags).

    ``advertise_address``: the IP written to the DNS Service's Endpoints (default: the bind
    address); ``register``: manage the Service and Endpoints at all; ``ttl`` in seconds.
    """

    bind_address: str = "127.0.0.1"
    port: int = 53
    cluster_domain: str = "cluster.local"
    cluster_dns_ip: str = "10.96.0.10"
    service_namespace: str = "kube-system"
    service_name: str = "kube-dns"
    advertise_address: str | None = None
    node_name: str | None = None
    register: bool = True
    register_period: float = 30.0
    forward: bool = False
    upstreams: list[tuple[str, int]] = field(default_factory=list)
    ttl: int = 5


class ClusterDNS:
    """Runs the DNS server for ``config`` over ``client`` until cancelled."""

    def __init__(self, client: Client, config: DNSConfig) -> None:
        self.client = client
        self.config = config
        self.factory = SharedInformerFactory(client)
        services = self.factory.for_kind("v1", "Service", {NAMESPACE_INDEX: by_namespace})
        endpoint_slices = self.factory.for_kind("discovery.k8s.io/v1", "EndpointSlice",
                                                {SERVICE_INDEX: slice_service_key})
        pods = self.factory.for_kind("v1", "Pod", {POD_IP_INDEX: pod_ips})
        fronts = [self.factory.for_kind("minik8s.io/v1", "DNS"),
                  self.factory.for_kind("networking.k8s.io/v1", "Ingress")]
        self.zone = ClusterZone(services, endpoint_slices, pods, fronts, config.cluster_domain, config.ttl)
        for informer in fronts:
            informer.add_handler(lambda _obj: self.zone.invalidate_hosts(),
                                 lambda _old, _cur: self.zone.invalidate_hosts(),
                                 lambda _obj: self.zone.invalidate_hosts())
        self.server = DNSServer(self.zone, config.bind_address, config.port, forward=config.forward,
                                upstreams=config.upstreams)
        self.registration: ServiceRegistration | None = None
        self.ready = asyncio.Event()

    async def run(self, stop: asyncio.Event | None = None) -> None:
        """Serve until ``stop`` is set or the task is cancelled; the informers stop with it."""
        stop = stop or asyncio.Event()
        self.factory.start()
        try:
            while not await self.factory.wait_for_cache_sync(timeout=30):
                log.warning("dns still waiting for informer caches to sync")
            if not await self.server.start_retrying(stop):
                return
            if self.config.register:
                advertise = self.config.advertise_address or self.config.bind_address
                self.registration = ServiceRegistration(
                    self.client, self.config.service_namespace, self.config.service_name,
                    dns_service_ports(self.server.port), advertise, dict(SERVICE_LABELS),
                    cluster_ip=self.config.cluster_dns_ip, node_name=self.config.node_name, component="dns")
                # serving; ready once registered (or tried to); the address is withdrawn on stop
                await self.registration.run(stop, self.config.register_period, self.ready.set)
            else:
                self.ready.set()
                await stop.wait()
        finally:
            await self.server.close()
            await self.factory.shutdown()
