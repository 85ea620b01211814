"""The in-cluster address of the DNS server: the ``kube-dns`` Service and its Endpoints.

Like a cluster's DNS add-on, the Service ``kube-system/kube-dns`` has the well-known
ClusterIP (``--cluster-dns-ip``, 10.96.0.10; what kubelets put in pods' resolv.conf) and
ports ``dns`` (UDP 53) and ``dns-tcp`` (TCP 53), but **no selector**: the DNS servers are
not pods, so each ``minik8s dns`` instance adds its own address (with its ``nodeName``) to
the Endpoints itself and removes it when it stops.  kube-proxy then DNATs
``10.96.0.10:53`` to the servers.  Every write is a read-modify-write on resourceVersion
(409 → read again), so instances on several nodes never drop each other's address.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.client.rest import Client

log = logging.getLogger("dns")

SERVICE_LABELS = {"k8s-app": "kube-dns", "kubernetes.io/name": "minik8s-dns"}


def dns_ports(port: int) -> list[Obj]:
    """Endpoint ports of a server listening on ``port`` (``dns`` UDP, ``dns-tcp`` TCP)."""
    return [{"name": "dns", "port": port, "protocol": "UDP"}, {"name": "dns-tcp", "port": port, "protocol": "TCP"}]


def service_body(namespace: str, name: str, cluster_ip: str, target_port: int) -> Obj:
    """The selector-less DNS Service (ports 53/UDP and 53/TCP to ``target_port``)."""
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "namespace": namespace, "labels": dict(SERVICE_LABELS)},
            "spec": {"type": "ClusterIP", "clusterIP": cluster_ip,
                     "ports": [{"name": "dns", "port": 53, "targetPort": target_port, "protocol": "UDP"},
                               {"name": "dns-tcp", "port": 53, "targetPort": target_port, "protocol": "TCP"}]}}


def with_address(endpoints: Obj, ip: str, node_name: str | None, port: int) -> Obj:
    """``endpoints`` with ``ip`` among its ready addresses of the DNS ports (idempotent)."""
    out = copy.deepcopy(endpoints)
    ports = dns_ports(port)
    subsets = out.setdefault("subsets", []) or []
    out["subsets"] = subsets
    subset = next((s for s in subsets if s.get("ports") == ports), None)
    if subset is None:
        subset = {"addresses": [], "ports": ports}
        subsets.append(subset)
    addresses = [a for a in subset.get("addresses") or [] if a.get("ip") != ip]
    address: Obj = {"ip": ip}
    if node_name:
        address["nodeName"] = node_name
    addresses.append(address)
    subset["addresses"] = sorted(addresses, key=lambda a: str(a.get("ip")))
    return out


def without_address(endpoints: Obj, ip: str, port: int) -> Obj:
    """``endpoints`` without ``ip`` in the DNS ports' subset (empty subsets dropped)."""
    out = copy.deepcopy(endpoints)
    ports = dns_ports(port)
    subsets = []
    for subset in out.get("subsets") or []:
        if subset.get("ports") == ports:
            subset["addresses"] = [a for a in subset.get("addresses") or [] if a.get("ip") != ip]
            if not subset["addresses"]:
                subset.pop("addresses")
        if subset.get("addresses") or subset.get("notReadyAddresses"):
            subsets.append(subset)
    out["subsets"] = subsets
    return out


class Registration:
    """Keeps the DNS Service and this server's address in its Endpoints.

    ``advertise`` is the IP other nodes and pods reach this server at, ``port`` its port.
    Raises API errors (other than a retried 409) from :meth:`ensure` and :meth:`withdraw`.
    """

    def __init__(self, client: Client, namespace: str, name: str, cluster_ip: str, advertise: str, port: int,
                 node_name: str | None = None) -> None:
        self.client = client
        self.namespace = namespace
        self.name = name
        self.cluster_ip = cluster_ip
        self.advertise = advertise
        self.port = port
        self.node_name = node_name
        self.svc_rt = client.kind("v1", "Service")
        self.ep_rt = client.kind("v1", "Endpoints")

    async def ensure(self) -> None:
        """Create the Service if missing, then add this server's address to the Endpoints."""
        await self.ensure_service()
        await self._edit(lambda ep: with_address(ep, self.advertise, self.node_name, self.port))

    async def ensure_service(self) -> Obj:
        try:
            service: Obj = await self.client.get(self.svc_rt, self.name, self.namespace)
        except errors.NotFound:
            body = service_body(self.namespace, self.name, self.cluster_ip, self.port)
            try:
                created: Obj = await self.client.create(self.svc_rt, body, self.namespace)
            except errors.AlreadyExists:
                return await self.ensure_service()
            log.info("dns created service %s/%s clusterIP %s", self.namespace, self.name, self.cluster_ip)
            return created
        ip = (service.get("spec") or {}).get("clusterIP")
        if ip != self.cluster_ip:
            log.warning("dns service %s/%s has clusterIP %s, not --cluster-dns-ip %s (pods' resolv.conf must "
                        "name %s)", self.namespace, self.name, ip, self.cluster_ip, ip)
        return service

    async def withdraw(self) -> None:
        """Remove this server's address from the Endpoints (on shutdown)."""
        await self._edit(lambda ep: without_address(ep, self.advertise, self.port))

    async def _edit(self, change: Callable[[Obj], Obj], attempts: int = 5) -> None:
        for attempt in range(attempts):
            try:
                current: Obj | None = await self.client.get(self.ep_rt, self.name, self.namespace)
            except errors.NotFound:
                current = None
            base = current or {"apiVersion": "v1", "kind": "Endpoints",
                               "metadata": {"name": self.name, "namespace": self.namespace,
                                            "labels": dict(SERVICE_LABELS)}, "subsets": []}
            wanted = change(base)
            if current is not None and (wanted.get("subsets") or []) == (current.get("subsets") or []):
                return
            try:
                if current is None:
                    await self.client.create(self.ep_rt, wanted, self.namespace)
                else:
                    await self.client.update(self.ep_rt, wanted)
                return
            except (errors.Conflict, errors.AlreadyExists, errors.NotFound):
                if attempt == attempts - 1:
                    raise
