"""discovery.k8s.io/v1 EndpointSlice: defaults and validation (Kubernetes'
``pkg/registry/discovery/endpointslice`` and ``pkg/apis/discovery/validation``)."""

from __future__ import annotations

from typing import Any

from minik8s.api import validation as v
from minik8s.api.discovery import ADDRESS_TYPES, non_special_ip_errors, parse_ip_sloppy
from minik8s.apiserver.strategies.base import REQUIRED, Cause, Obj, Strategy, too_many, unsupported

PORT_PROTOCOLS = ("SCTP", "TCP", "UDP")
MAX_ADDRESSES = 100
MAX_PORTS = 20000
MAX_ENDPOINTS = 1000
MAX_TOPOLOGY_LABELS = 16
MAX_ZONE_HINTS = 8


def address_errors(address: Any, address_type: str, path: str) -> list[Cause]:
    """One endpoint address of a slice of ``address_type`` (unknown types are not checked)."""
    text = str(address)
    if address_type in ("IPv4", "IPv6"):
        ip = parse_ip_sloppy(text)
        if ip is None or ip.version != int(address_type[-1]):
            return [(path, text, f"must be a valid {address_type} address")]
        return [(path, text, m) for m in non_special_ip_errors(text)]
    if address_type == "FQDN":
        return fqdn_errors(text, path)
    return []


def fqdn_errors(name: str, path: str) -> list[Cause]:
    """Kubernetes' ``IsFullyQualifiedDomainName``."""
    if not name:
        return [(path, None, REQUIRED)]
    name = name.removesuffix(".")
    errs = v.dns1123_subdomain_errors(name)
    if errs:
        return [(path, name, ",".join(errs))]
    if len(name.split(".")) < 2:
        return [(path, name, "should be a domain with at least two segments separated by dots")]
    for label in name.split("."):
        errs = v.dns1123_label_errors(label)
        if errs:
            return [(path, label, ",".join(errs))]
    return []


class EndpointSliceStrategy(Strategy):
    """Ports default to name ``""`` and protocol TCP (``SetDefaults_EndpointPort``); validation as
    ``ValidateEndpointSlice``; ``addressType`` is immutable."""

    def default(self, obj: Obj) -> None:
        for port in obj.get("ports") or []:
            if isinstance(port, dict):
                port.setdefault("name", "")
                port.setdefault("protocol", "TCP")

    def generation_changed(self, new: Obj, old: Obj) -> bool:
        """EndpointSlices have no spec: any change of endpoints, ports or addressType is one."""
        return any(new.get(k) != old.get(k) for k in ("addressType", "endpoints", "ports"))

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        address_type = obj.get("addressType")
        if not address_type:
            causes.append(("addressType", None, REQUIRED))
        elif address_type not in ADDRESS_TYPES:
            causes.append(("addressType", None, unsupported(address_type, ADDRESS_TYPES)))
        causes += self._endpoints_errors(obj.get("endpoints") or [], str(address_type or ""))
        causes += self._ports_errors(obj.get("ports") or [])
        if old is not None and old.get("addressType") != address_type:
            causes.append(("addressType", address_type, "field is immutable"))
        return causes

    @staticmethod
    def _endpoints_errors(endpoints: list[Obj], address_type: str) -> list[Cause]:
        if len(endpoints) > MAX_ENDPOINTS:
            return [("endpoints", None, too_many(len(endpoints), MAX_ENDPOINTS))]
        causes: list[Cause] = []
        for i, endpoint in enumerate(endpoints):
            path = f"endpoints[{i}]"
            addresses = endpoint.get("addresses") or []
            if not addresses:
                causes.append((f"{path}.addresses", None, "Required value: must contain at least 1 address"))
            elif len(addresses) > MAX_ADDRESSES:
                causes.append((f"{path}.addresses", None, too_many(len(addresses), MAX_ADDRESSES)))
            for j, address in enumerate(addresses):
                causes += address_errors(address, address_type, f"{path}.addresses[{j}]")
            node = endpoint.get("nodeName")
            if node is not None:
                causes += [(f"{path}.nodeName", node, m) for m in v.dns1123_subdomain_errors(str(node))]
            topology = endpoint.get("deprecatedTopology") or {}
            if len(topology) > MAX_TOPOLOGY_LABELS:
                causes.append((f"{path}.deprecatedTopology", None, too_many(len(topology), MAX_TOPOLOGY_LABELS)))
            causes += v.validate_labels(topology, f"{path}.deprecatedTopology")
            hostname = endpoint.get("hostname")
            if hostname is not None:
                causes += [(f"{path}.hostname", hostname, m) for m in v.dns1123_label_errors(str(hostname))]
            hints = endpoint.get("hints")
            if isinstance(hints, dict):
                causes += _hints_errors(hints, f"{path}.hints")
        return causes

    @staticmethod
    def _ports_errors(ports: list[Obj]) -> list[Cause]:
        if len(ports) > MAX_PORTS:
            return [("ports", None, too_many(len(ports), MAX_PORTS))]
        causes: list[Cause] = []
        names: set[str] = set()
        for i, port in enumerate(ports):
            path = f"ports[{i}]"
            name = str(port.get("name") or "")
            if name:
                causes += [(f"{path}.name", name, m) for m in v.dns1123_label_errors(name)]
            if name in names:
                causes.append((f"{path}.name", None, f'Duplicate value: "{name}"'))
            names.add(name)
            protocol = port.get("protocol")
            if protocol is None:
                causes.append((f"{path}.protocol", None, REQUIRED))
            elif protocol not in PORT_PROTOCOLS:
                causes.append((f"{path}.protocol", None, unsupported(protocol, PORT_PROTOCOLS)))
            app_protocol = port.get("appProtocol")
            if app_protocol is not None:
                causes += [(f"{path}.appProtocol", app_protocol, m)
                           for m in v.qualified_name_errors(str(app_protocol))]
        return causes


def _hints_errors(hints: Obj, path: str) -> list[Cause]:
    zones = hints.get("forZones") or []
    if len(zones) > MAX_ZONE_HINTS:
        return [(f"{path}.forZones", None, too_many(len(zones), MAX_ZONE_HINTS))]
    causes: list[Cause] = []
    seen: set[str] = set()
    for i, zone in enumerate(zones):
        zpath, name = f"{path}.forZones[{i}].name", str((zone or {}).get("name") or "")
        if name in seen:
            causes.append((zpath, None, f'Duplicate value: "{name}"'))
        seen.add(name)
        causes += [(zpath, name, m) for m in v.label_value_errors(name)]
    return causes
