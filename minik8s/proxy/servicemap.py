"""Services and Endpoints (wire dicts from the informers) → one immutable :class:`ProxyState`.

Kubernetes' kube-proxy keeps a ``ServicePortMap`` and an ``EndpointsMap`` keyed by
``ServicePortName`` (namespace, service name, port name); this module builds the same two
maps from the cached objects.  Service ports and Endpoints ports are matched by *name* and
protocol: the endpoints controller has already resolved each (possibly named) targetPort
into the port number an EndpointPort carries.  Only ``addresses`` (ready endpoints) are
used; ``notReadyAddresses`` never receive traffic.  Services that are headless
(``clusterIP: None``), ExternalName, or have no ClusterIP yet get no rules.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from minik8s.api.base import Obj
from minik8s.api.core import PROTOCOLS


@dataclass(frozen=True, order=True)
class ServicePortName:
    """One port of one Service: ``namespace/name:port`` (``:port`` omitted for an unnamed port)."""

    namespace: str
    name: str
    port: str = ""

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}:{self.port}" if self.port else f"{self.namespace}/{self.name}"


@dataclass(frozen=True)
class ServicePort:
    """What the proxy needs of one Service port: ClusterIP:port/protocol and the nodePort (or None)."""

    name: ServicePortName
    cluster_ip: str
    port: int
    protocol: str = "TCP"
    node_port: int | None = None


@dataclass(frozen=True, order=True)
class Endpoint:
    """One backend of a Service port: pod IP and the resolved target port number."""

    ip: str
    port: int

    def __str__(self) -> str:
        return f"{self.ip}:{self.port}"

    @property
    def sort_key(self) -> tuple[int, int]:
        return (int(ipaddress.IPv4Address(self.ip)), self.port)


@dataclass(frozen=True)
class ProxyState:
    """A snapshot: every programmable Service port and its ready endpoints (sorted, no duplicates).

    ``endpoints`` has an entry (possibly empty) for every key of ``services``.
    """

    services: dict[ServicePortName, ServicePort] = field(default_factory=dict)
    endpoints: dict[ServicePortName, tuple[Endpoint, ...]] = field(default_factory=dict)

    @property
    def endpoint_count(self) -> int:
        return sum(len(e) for e in self.endpoints.values())


def _valid_ipv4(value: Any) -> bool:
    try:
        ipaddress.IPv4Address(value)
    except (ValueError, TypeError):
        return False
    return True


def service_ports(service: Obj) -> list[ServicePort]:
    """The programmable ports of one Service (empty for headless/ExternalName/no-ClusterIP ones)."""
    meta = service.get("metadata") or {}
    spec = service.get("spec") or {}
    if spec.get("type") == "ExternalName":
        return []
    cluster_ip = spec.get("clusterIP")
    if not _valid_ipv4(cluster_ip):  # None, "", "None" (headless) or garbage
        return []
    with_node_port = spec.get("type") in ("NodePort", "LoadBalancer")
    out = []
    for p in spec.get("ports") or []:
        port, protocol = p.get("port"), p.get("protocol") or "TCP"
        if not isinstance(port, int) or protocol not in PROTOCOLS:
            continue
        node_port = p.get("nodePort") if with_node_port and isinstance(p.get("nodePort"), int) else None
        out.append(ServicePort(ServicePortName(meta.get("namespace") or "", meta.get("name") or "",
                                               p.get("name") or ""),
                               str(cluster_ip), port, protocol, node_port or None))
    return out


def endpoint_ports(endpoints: Obj) -> dict[tuple[str, str], set[Endpoint]]:
    """Ready endpoints of one Endpoints object keyed by (port name, protocol)."""
    out: dict[tuple[str, str], set[Endpoint]] = {}
    for subset in endpoints.get("subsets") or []:
        addresses = [a.get("ip") for a in subset.get("addresses") or [] if _valid_ipv4(a.get("ip"))]
        for p in subset.get("ports") or []:
            port = p.get("port")
            if not isinstance(port, int) or not 0 < port < 65536:
                continue
            key = (p.get("name") or "", p.get("protocol") or "TCP")
            out.setdefault(key, set()).update(Endpoint(ip, port) for ip in addresses)
    return out


def _key(obj: Obj) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return (meta.get("namespace") or "", meta.get("name") or "")


def build_state(services: Iterable[Obj], endpoints: Iterable[Obj]) -> ProxyState:
    """The snapshot for a set of Services and Endpoints (Endpoints match Services by namespace/name)."""
    by_service = {_key(e): endpoint_ports(e) for e in endpoints}
    ports: dict[ServicePortName, ServicePort] = {}
    eps: dict[ServicePortName, tuple[Endpoint, ...]] = {}
    for svc in services:
        ep_ports = by_service.get(_key(svc), {})
        for sp in service_ports(svc):
            ports[sp.name] = sp
            found = ep_ports.get((sp.name.port, sp.protocol), set())
            eps[sp.name] = tuple(sorted(found, key=lambda e: e.sort_key))
    return ProxyState(dict(sorted(ports.items())), dict(sorted(eps.items())))
