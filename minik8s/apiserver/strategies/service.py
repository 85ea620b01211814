"""v1 Service: defaults, validation and update rules (``corev1.Service``); the ClusterIP and
nodePort reservations are :class:`~minik8s.apiserver.allocators.ServiceAllocator`'s."""

from __future__ import annotations

import ipaddress
from typing import Any

from minik8s.api import validation as v
from minik8s.api.core import (
    DEFAULT_CLIENT_IP_AFFINITY_SECONDS,
    MAX_CLIENT_IP_AFFINITY_SECONDS,
    PROTOCOLS,
    SESSION_AFFINITIES,
)
from minik8s.apiserver.allocators import ServiceAllocator, needs_health_check
from minik8s.apiserver.strategies.base import REQUIRED, Cause, Obj, Strategy, unsupported

SERVICE_TYPES = ("ClusterIP", "NodePort", "LoadBalancer", "ExternalName")
TRAFFIC_POLICIES = ("Cluster", "Local")


def externally_accessible(spec: Obj) -> bool:
    """Kubernetes' ``ExternallyAccessible``: a NodePort or LoadBalancer Service, or one with externalIPs."""
    return spec.get("type") in ("NodePort", "LoadBalancer") or bool(spec.get("externalIPs"))


class ServiceStrategy(Strategy):
    """Defaults, validation and IP/port allocation for Services."""

    has_status = True
    name_check = staticmethod(v.dns1035_label_errors)

    def __init__(self, service_cidr: str = "10.96.0.0/16", node_port_range: tuple[int, int] = (30000, 32767)) -> None:
        self.allocator = ServiceAllocator(service_cidr, node_port_range)
        self.network = self.allocator.network
        self.node_ports = self.allocator.node_ports

    # ------------------------------------------------------------------ defaults and validation
    def default(self, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        spec.setdefault("type", "ClusterIP")
        default_session_affinity(spec)
        if spec["type"] != "ExternalName":
            spec.setdefault("ipFamilies", ["IPv4"])
            spec.setdefault("ipFamilyPolicy", "SingleStack")
            spec.setdefault("internalTrafficPolicy", "Cluster")
        if externally_accessible(spec) and not spec.get("externalTrafficPolicy"):
            spec["externalTrafficPolicy"] = "Cluster"
        if spec["type"] == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is None:
            spec["allocateLoadBalancerNodePorts"] = True
        for port in spec.get("ports") or []:
            port.setdefault("protocol", "TCP")
            if port.get("targetPort") in (None, 0, ""):
                port["targetPort"] = port.get("port")
        obj.setdefault("status", {}).setdefault("loadBalancer", {})  # Kubernetes always sends the stanza

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        spec = obj.get("spec") or {}
        stype = spec.get("type")
        if stype not in SERVICE_TYPES:
            causes.append(("spec.type", None, unsupported(stype, SERVICE_TYPES)))
        ports = spec.get("ports") or []
        headless = spec.get("clusterIP") == "None"
        if not ports and stype != "ExternalName" and not headless:
            causes.append(("spec.ports", None, "Required value"))
        names: set[str] = set()
        for i, p in enumerate(ports):
            path = f"spec.ports[{i}]"
            name = p.get("name")
            if len(ports) > 1 and not name:
                causes.append((f"{path}.name", None, "Required value"))
            if name:
                causes += [(f"{path}.name", name, m) for m in v.dns1123_label_errors(name)]
                if name in names:
                    causes.append((f"{path}.name", None, f'Duplicate value: "{name}"'))
                names.add(name)
            port = p.get("port")
            if not isinstance(port, int):
                causes.append((f"{path}.port", None, "Required value"))
            else:
                causes += [(f"{path}.port", port, m) for m in v.port_number_errors(port)]
            if p.get("protocol") not in PROTOCOLS:
                causes.append((f"{path}.protocol", None, unsupported(p.get("protocol"), PROTOCOLS)))
            target = p.get("targetPort")
            if isinstance(target, int):
                causes += [(f"{path}.targetPort", target, m) for m in v.port_number_errors(target)]
            elif isinstance(target, str):
                causes += [(f"{path}.targetPort", target, m) for m in v.iana_svc_name_errors(target)]
            node_port = p.get("nodePort")
            if node_port:
                if stype not in ("NodePort", "LoadBalancer"):
                    causes.append((f"{path}.nodePort", None, "Forbidden: may not be used when `type` is 'ClusterIP'"))
                elif not self.node_ports[0] <= node_port <= self.node_ports[1]:
                    causes.append((f"{path}.nodePort", node_port,
                                   f"provided port is not in the valid range. The range of valid ports is "
                                   f"{self.node_ports[0]}-{self.node_ports[1]}"))
        if spec.get("allocateLoadBalancerNodePorts") is not None and stype != "LoadBalancer":
            causes.append(("spec.allocateLoadBalancerNodePorts", None,
                           "Forbidden: may only be used when `type` is 'LoadBalancer'"))
        ip = spec.get("clusterIP")
        if ip not in (None, "", "None"):
            try:
                if ipaddress.ip_address(ip) not in self.network:
                    raise ValueError
            except ValueError:
                causes.append(("spec.clusterIPs[0]", ip, f"failed to allocate IP {ip}: provided IP is not in the "
                               f"valid range. The range of valid IPs is {self.network}"))
        if old is not None:
            old_ip = (old.get("spec") or {}).get("clusterIP")
            external = "ExternalName" in (stype, (old.get("spec") or {}).get("type"))
            if old_ip and ip != old_ip and not external:
                causes.append(("spec.clusterIPs[0]", ip, "field is immutable"))
        for key, val in (spec.get("selector") or {}).items():
            causes += [("spec.selector", key, m) for m in v.qualified_name_errors(key)]
            causes += [("spec.selector", val, m) for m in v.label_value_errors(val)]
        return causes + session_affinity_errors(spec) + traffic_policy_errors(spec, old)

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        super().prepare_for_update(new, old)
        spec, old_spec = new.setdefault("spec", {}), old.get("spec") or {}
        _drop_type_dependent_fields(spec, old_spec)
        if needs_health_check(old_spec) and needs_health_check(spec) and not spec.get("healthCheckNodePort"):
            spec["healthCheckNodePort"] = old_spec.get("healthCheckNodePort")  # kept when left out
        if not spec.get("clusterIP") and old_spec.get("clusterIP"):
            spec["clusterIP"] = old_spec["clusterIP"]
            spec["clusterIPs"] = old_spec.get("clusterIPs") or [old_spec["clusterIP"]]
        if spec.get("type") in ("NodePort", "LoadBalancer"):
            previous = {(p.get("port"), p.get("protocol", "TCP")): p.get("nodePort")
                        for p in old_spec.get("ports") or []}
            for p in spec.get("ports") or []:
                if not p.get("nodePort"):
                    kept = previous.get((p.get("port"), p.get("protocol", "TCP")))
                    if kept:
                        p["nodePort"] = kept

    def fields(self, obj: Obj) -> dict[str, str]:
        f = super().fields(obj)
        f["spec.clusterIP"] = (obj.get("spec") or {}).get("clusterIP") or ""
        f["spec.type"] = (obj.get("spec") or {}).get("type") or ""
        return f

    # ------------------------------------------------------------------ allocation
    async def allocate(self, store: Any, obj: Obj, old: Obj | None) -> list[str]:
        """Reserve the ClusterIP and nodePorts ``obj`` needs (new ones only); returns the keys taken.

        Raises Invalid when a requested IP/port is taken, or the range is full.
        """
        return await self.allocator.allocate(store, obj, old)

    @staticmethod
    def keys_of(obj: Obj | None) -> set[str]:
        """The allocation keys a Service holds."""
        return ServiceAllocator.keys_of(obj)

    @staticmethod
    async def release_keys(store: Any, keys: Any) -> None:
        await ServiceAllocator.release(store, keys)


def _drop_type_dependent_fields(spec: Obj, old_spec: Obj) -> None:
    """What an update that changes a Service's type leaves behind and the new type may not have,
    dropped when the client did not change it (kube-apiserver's ``dropTypeDependentFields``):
    nodePorts leaving NodePort/LoadBalancer, ``allocateLoadBalancerNodePorts`` and
    ``loadBalancerClass`` leaving LoadBalancer, ``externalTrafficPolicy`` leaving the types that
    are reached from outside, ``healthCheckNodePort`` when the Service no longer needs one (its type
    or its ``externalTrafficPolicy`` changed; the port is then released)."""
    if needs_health_check(old_spec) and not needs_health_check(spec) \
            and spec.get("healthCheckNodePort") == old_spec.get("healthCheckNodePort"):
        spec.pop("healthCheckNodePort", None)
    old_type, new_type = old_spec.get("type"), spec.get("type")
    if old_type == new_type:
        return
    node_port_types = ("NodePort", "LoadBalancer")
    if old_type in node_port_types and new_type not in node_port_types:
        def node_ports(s: Obj) -> list[Any]:
            return [p.get("nodePort") for p in s.get("ports") or [] if isinstance(p, dict)]
        if node_ports(spec) == node_ports(old_spec):
            for p in spec.get("ports") or []:
                if isinstance(p, dict):
                    p.pop("nodePort", None)
    if old_type == "LoadBalancer" and new_type != "LoadBalancer":
        for field in ("allocateLoadBalancerNodePorts", "loadBalancerClass"):
            if spec.get(field) == old_spec.get(field):
                spec.pop(field, None)

    def external(s: Obj) -> bool:
        return s.get("type") in node_port_types or bool(s.get("externalIPs"))
    if external(old_spec) and not external(spec) \
            and spec.get("externalTrafficPolicy") == old_spec.get("externalTrafficPolicy"):
        spec.pop("externalTrafficPolicy", None)


# ---------------------------------------------------------------------- traffic policies
def traffic_policy_errors(spec: Obj, old: Obj | None) -> list[Cause]:
    """Kubernetes' checks of ``internalTrafficPolicy``, ``externalTrafficPolicy`` (``Cluster`` or ``Local``;
    the latter only on externally-accessible Services) and ``healthCheckNodePort`` (only on a LoadBalancer
    with ``externalTrafficPolicy: Local``, a port number, and not changed by an update that keeps needing it)."""
    causes: list[Cause] = []
    internal, external = spec.get("internalTrafficPolicy"), spec.get("externalTrafficPolicy")
    if internal is not None and internal not in TRAFFIC_POLICIES:
        causes.append(("spec.internalTrafficPolicy", None, unsupported(internal, TRAFFIC_POLICIES)))
    if not externally_accessible(spec):
        if external:
            causes.append(("spec.externalTrafficPolicy", external,
                           "may only be set for externally-accessible services"))
    elif external and external not in TRAFFIC_POLICIES:
        causes.append(("spec.externalTrafficPolicy", None, unsupported(external, TRAFFIC_POLICIES)))
    port = spec.get("healthCheckNodePort")
    if not needs_health_check(spec):
        if port:
            causes.append(("spec.healthCheckNodePort", port,
                           "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"))
    elif isinstance(port, int) and not isinstance(port, bool):
        causes += [("spec.healthCheckNodePort", port, m) for m in v.port_number_errors(port)]
        old_spec = (old or {}).get("spec") or {}
        if needs_health_check(old_spec) and old_spec.get("healthCheckNodePort") not in (None, port):
            causes.append(("spec.healthCheckNodePort", port, "cannot change healthCheckNodePort on loadBalancer "
                           "service with externalTraffic=Local during update"))
    return causes


# ---------------------------------------------------------------------- session affinity
def default_session_affinity(spec: Obj) -> None:
    """Kubernetes' defaulting of ``sessionAffinity`` (``SetDefaults_Service``): unset is ``None``, which
    drops any ``sessionAffinityConfig``; ``ClientIP`` without ``sessionAffinityConfig.clientIP.timeoutSeconds``
    gets ``{"clientIP": {"timeoutSeconds": 10800}}`` in place of what was there."""
    if not spec.get("sessionAffinity"):
        spec["sessionAffinity"] = "None"
    if spec["sessionAffinity"] == "None":
        spec.pop("sessionAffinityConfig", None)
    elif spec["sessionAffinity"] == "ClientIP" and _client_ip_timeout(spec) is None:
        spec["sessionAffinityConfig"] = {"clientIP": {"timeoutSeconds": DEFAULT_CLIENT_IP_AFFINITY_SECONDS}}


def _client_ip_timeout(spec: Obj) -> Any:
    config = spec.get("sessionAffinityConfig")
    client_ip = config.get("clientIP") if isinstance(config, dict) else None
    return client_ip.get("timeoutSeconds") if isinstance(client_ip, dict) else None


def session_affinity_errors(spec: Obj) -> list[Cause]:
    """Kubernetes' checks of ``sessionAffinity`` and ``sessionAffinityConfig``: ``ClientIP`` or ``None``;
    with ``ClientIP`` a ``clientIP.timeoutSeconds`` in 1..86400 ("must be greater than 0 and less than
    86400"); with ``None`` no ``sessionAffinityConfig`` ("Forbidden: must not be set when session affinity
    is None")."""
    affinity = spec.get("sessionAffinity")
    path = "spec.sessionAffinityConfig"
    if not affinity:
        return [("spec.sessionAffinity", None, REQUIRED)]
    if affinity not in SESSION_AFFINITIES:
        return [("spec.sessionAffinity", None, unsupported(affinity, SESSION_AFFINITIES))]
    config = spec.get("sessionAffinityConfig")
    if affinity == "None":
        return [] if config is None else [(path, None, "Forbidden: must not be set when session affinity is None")]
    required = f"{REQUIRED}: when session affinity type is ClientIP"
    if not isinstance(config, dict):
        return [(path, None, required)]
    client_ip = config.get("clientIP")
    if not isinstance(client_ip, dict):
        return [(f"{path}.clientIP", None, required)]
    timeout = client_ip.get("timeoutSeconds")
    if timeout is None:
        return [(f"{path}.clientIP.timeoutSeconds", None, required)]
    if not 0 < timeout <= MAX_CLIENT_IP_AFFINITY_SECONDS:
        return [(f"{path}.clientIP.timeoutSeconds", timeout,
                 f"must be greater than 0 and less than {MAX_CLIENT_IP_AFFINITY_SECONDS}")]
    return []
