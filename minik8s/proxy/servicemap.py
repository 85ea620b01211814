"""Services and EndpointSlices (wire dicts from the informers) → one immutable :class:`ProxyState`.

Kubernetes' kube-proxy keeps a ``ServicePortMap`` and an ``EndpointsMap`` keyed by
``ServicePortName`` (namespace, service name, port name); this module builds the same two
maps from the cached objects.  As kube-proxy has since 1.19, endpoints come from the
``discovery.k8s.io/v1`` EndpointSlices of a Service (label ``kubernetes.io/service-name``;
Endpoints of selector-less Services reach it through the mirroring controller).  Service
ports and slice ports are matched by *name* and protocol: the EndpointSlice controller has
already resolved each (possibly named) targetPort into the port number a slice port carries.
Ready endpoints receive traffic; when a Service port has none, its serving terminating
endpoints do (kube-proxy's ``ProxyTerminatingEndpoints``, so a rolling update drains
gracefully); others never.  Services that are headless (``clusterIP: None``), ExternalName,
or have no ClusterIP yet get no rules.  ``sessionAffinity: ClientIP`` gives every port of the
Service its ``sessionAffinityConfig.clientIP.timeoutSeconds`` (kube-proxy's ``StickyMaxAgeSeconds``).

Traffic policies (kube-proxy's ``CategorizeEndpoints``): an endpoint is *local* when its slice
``nodeName`` is the proxy's node name.  Besides the cluster-wide endpoints every port gets its local
ones — the local ready endpoints, or, when there are none, the local serving terminating ones — used
by ``internalTrafficPolicy: Local`` (ClusterIP traffic) and ``externalTrafficPolicy: Local`` (NodePort
traffic of a NodePort or LoadBalancer Service).  A LoadBalancer Service with ``externalTrafficPolicy:
Local`` and a ``healthCheckNodePort`` gets a :class:`HealthCheck` counting its local *ready* endpoints
(unique addresses over all its ports, kube-proxy's ``LocalReadyEndpoints``).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from minik8s.api.base import Obj
from minik8s.api.core import DEFAULT_CLIENT_IP_AFFINITY_SECONDS, PROTOCOLS
from minik8s.api.discovery import SERVICE_NAME_LABEL, endpoint_ready, endpoint_serving, endpoint_terminating


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
    """What the proxy needs of one Service port: ClusterIP:port/protocol, the nodePort (or None), and
    how many seconds a client stays with the endpoint it last reached (``sessionAffinity: ClientIP``;
    0: no affinity), and whether ClusterIP (``internal_local``) and NodePort (``external_local``) traffic
    goes only to this node's endpoints (traffic policy ``Local``)."""

    name: ServicePortName
    cluster_ip: str
    port: int
    protocol: str = "TCP"
    node_port: int | None = None
    sticky_max_age_seconds: int = 0
    internal_local: bool = False
    external_local: bool = False


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


@dataclass(frozen=True, order=True)
class HealthCheck:
    """The ``healthCheckNodePort`` of one Service (``namespace``/``name``) and how many ready endpoints
    it has on this node."""

    namespace: str
    name: str
    port: int
    local_endpoints: int = 0


@dataclass(frozen=True)
class ProxyState:
    """A snapshot: every programmable Service port and its ready endpoints (sorted, no duplicates).

    ``endpoints`` (cluster-wide: the ready ones, else the serving terminating ones) and
    ``local_endpoints`` (this node's: ready, else serving terminating) have an entry (possibly empty)
    for every key of ``services``; ``health_checks`` is keyed by health check node port.
    ``node_port_ips``: with ``--nodeport-addresses``, the local addresses NodePorts answer on.
    """

    services: dict[ServicePortName, ServicePort] = field(default_factory=dict)
    endpoints: dict[ServicePortName, tuple[Endpoint, ...]] = field(default_factory=dict)
    local_endpoints: dict[ServicePortName, tuple[Endpoint, ...]] = field(default_factory=dict)
    health_checks: dict[int, HealthCheck] = field(default_factory=dict)
    node_port_ips: tuple[str, ...] = ()

    @property
    def endpoint_count(self) -> int:
        return sum(len(e) for e in self.endpoints.values())


def _valid_ipv4(value: Any) -> bool:
    try:
        ipaddress.IPv4Address(value)
    except (ValueError, TypeError):
        return False
    return True


def sticky_max_age_seconds(spec: Obj) -> int:
    """The ClientIP affinity timeout of a Service spec in seconds, 0 without affinity: ``timeoutSeconds``,
    or 10800 when a ``ClientIP`` Service lacks it (the apiserver defaults it; kube-proxy falls back the same)."""
    if spec.get("sessionAffinity") != "ClientIP":
        return 0
    timeout = ((spec.get("sessionAffinityConfig") or {}).get("clientIP") or {}).get("timeoutSeconds")
    if isinstance(timeout, int) and not isinstance(timeout, bool) and timeout > 0:
        return timeout
    return DEFAULT_CLIENT_IP_AFFINITY_SECONDS


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
    sticky = sticky_max_age_seconds(spec)
    internal_local = spec.get("internalTrafficPolicy") == "Local"
    external_local = with_node_port and spec.get("externalTrafficPolicy") == "Local"
    out = []
    for p in spec.get("ports") or []:
        port, protocol = p.get("port"), p.get("protocol") or "TCP"
        if not isinstance(port, int) or protocol not in PROTOCOLS:
            continue
        node_port = p.get("nodePort") if with_node_port and isinstance(p.get("nodePort"), int) else None
        out.append(ServicePort(ServicePortName(meta.get("namespace") or "", meta.get("name") or "",
                                               p.get("name") or ""),
                               str(cluster_ip), port, protocol, node_port or None, sticky, internal_local,
                               external_local))
    return out


@dataclass
class PortEndpoints:
    """The endpoints of one (port name, protocol) of a Service's slices: ready and serving terminating
    ones, cluster-wide and on this node."""

    ready: set[Endpoint] = field(default_factory=set)
    terminating: set[Endpoint] = field(default_factory=set)
    local_ready: set[Endpoint] = field(default_factory=set)
    local_terminating: set[Endpoint] = field(default_factory=set)

    @property
    def cluster(self) -> set[Endpoint]:
        """The ready endpoints, or the serving terminating ones when none is ready."""
        return self.ready or self.terminating

    @property
    def local(self) -> set[Endpoint]:
        """This node's ready endpoints, or its serving terminating ones when none is ready."""
        return self.local_ready or self.local_terminating


def slice_ports(endpoint_slices: Iterable[Obj], node_name: str = "") -> dict[tuple[str, str], PortEndpoints]:
    """The endpoints of one Service's EndpointSlices keyed by (port name, protocol); an endpoint is
    local when its ``nodeName`` is ``node_name`` (never when ``node_name`` is empty)."""
    out: dict[tuple[str, str], PortEndpoints] = {}
    for endpoint_slice in endpoint_slices:
        if endpoint_slice.get("addressType") != "IPv4":
            continue
        for p in endpoint_slice.get("ports") or []:
            port = p.get("port")
            if not isinstance(port, int) or not 0 < port < 65536:
                continue
            pe = out.setdefault((p.get("name") or "", p.get("protocol") or "TCP"), PortEndpoints())
            for endpoint in endpoint_slice.get("endpoints") or []:
                addresses = [a for a in endpoint.get("addresses") or [] if _valid_ipv4(a)]
                if not addresses:
                    continue
                ep = Endpoint(addresses[0], port)
                local = bool(node_name) and endpoint.get("nodeName") == node_name
                if endpoint_ready(endpoint):
                    pe.ready.add(ep)
                    if local:
                        pe.local_ready.add(ep)
                elif endpoint_serving(endpoint) and endpoint_terminating(endpoint):
                    pe.terminating.add(ep)
                    if local:
                        pe.local_terminating.add(ep)
    return out


def _service_of(endpoint_slice: Obj) -> tuple[str, str]:
    meta = endpoint_slice.get("metadata") or {}
    return (meta.get("namespace") or "", (meta.get("labels") or {}).get(SERVICE_NAME_LABEL) or "")


def _key(obj: Obj) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return (meta.get("namespace") or "", meta.get("name") or "")


def _sorted(endpoints: set[Endpoint]) -> tuple[Endpoint, ...]:
    return tuple(sorted(endpoints, key=lambda e: e.sort_key))


def health_check(service: Obj, local_ready: set[str]) -> HealthCheck | None:
    """The health check of a LoadBalancer Service with ``externalTrafficPolicy: Local`` and a
    ``healthCheckNodePort`` (None for any other), with ``len(local_ready)`` local endpoints."""
    meta, spec = service.get("metadata") or {}, service.get("spec") or {}
    port = spec.get("healthCheckNodePort")
    if spec.get("type") != "LoadBalancer" or spec.get("externalTrafficPolicy") != "Local" \
            or not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
        return None
    return HealthCheck(meta.get("namespace") or "", meta.get("name") or "", port, len(local_ready))


def build_state(services: Iterable[Obj], endpoint_slices: Iterable[Obj], node_name: str = "") -> ProxyState:
    """The snapshot for a set of Services and EndpointSlices (slices match Services by namespace and
    their ``kubernetes.io/service-name`` label) on node ``node_name`` (empty: no endpoint is local)."""
    grouped: dict[tuple[str, str], list[Obj]] = {}
    for endpoint_slice in endpoint_slices:
        grouped.setdefault(_service_of(endpoint_slice), []).append(endpoint_slice)
    ports: dict[ServicePortName, ServicePort] = {}
    eps: dict[ServicePortName, tuple[Endpoint, ...]] = {}
    local: dict[ServicePortName, tuple[Endpoint, ...]] = {}
    checks: dict[int, HealthCheck] = {}
    for svc in services:
        ep_ports = slice_ports(grouped.get(_key(svc), []), node_name)
        for sp in service_ports(svc):
            ports[sp.name] = sp
            pe = ep_ports.get((sp.name.port, sp.protocol)) or PortEndpoints()
            eps[sp.name] = _sorted(pe.cluster)
            local[sp.name] = _sorted(pe.local)
        check = health_check(svc, {e.ip for pe in ep_ports.values() for e in pe.local_ready})
        if check is not None and check.port not in checks:
            checks[check.port] = check
    return ProxyState(dict(sorted(ports.items())), dict(sorted(eps.items())), dict(sorted(local.items())),
                      dict(sorted(checks.items())))
