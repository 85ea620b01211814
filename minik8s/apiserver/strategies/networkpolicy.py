"""networking.k8s.io/v1 NetworkPolicy: Kubernetes' defaults (``SetDefaults_NetworkPolicy``,
``SetDefaults_NetworkPolicyPort``) and validation (``ValidateNetworkPolicySpec`` in
``pkg/apis/networking/validation``), with its messages."""

from __future__ import annotations

import ipaddress
from typing import Any

from minik8s.api import validation as v
from minik8s.api.networking import POLICY_PROTOCOLS, POLICY_TYPES
from minik8s.apiserver.strategies.base import REQUIRED, Cause, Obj, Strategy, selector_errors, unsupported

CIDR_MESSAGE = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"


def _network(value: Any) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    """``value`` as a CIDR (host bits allowed, as Go's ``ParseCIDR``); None when it is not one."""
    if not isinstance(value, str) or "/" not in value:
        return None
    try:
        return ipaddress.ip_network(value, strict=False)
    except ValueError:
        return None


def ip_block_errors(block: Obj, path: str) -> list[Cause]:
    """``ValidateIPBlock``: a CIDR, and every ``except`` a CIDR strictly inside it."""
    cidr = block.get("cidr")
    if not cidr:
        return [(f"{path}.cidr", None, REQUIRED)]
    net = _network(cidr)
    if net is None:
        return [(f"{path}.cidr", cidr, CIDR_MESSAGE)]
    causes: list[Cause] = []
    for i, item in enumerate(block.get("except") or []):
        sub = _network(item)
        if sub is None:
            causes.append((f"{path}.except[{i}]", item, CIDR_MESSAGE))
        elif sub.version != net.version or sub.network_address not in net or net.prefixlen >= sub.prefixlen:
            causes.append((f"{path}.except[{i}]", item, "must be a strict subset of `cidr`"))
    return causes


def port_errors(port: Obj, path: str) -> list[Cause]:
    """``ValidateNetworkPolicyPort``: protocol, a port number or name, and ``endPort`` only after a number."""
    causes: list[Cause] = []
    protocol = port.get("protocol")
    if protocol is not None and protocol not in POLICY_PROTOCOLS:
        causes.append((f"{path}.protocol", None, unsupported(protocol, POLICY_PROTOCOLS)))
    number, end = port.get("port"), port.get("endPort")
    if number is None:
        if end is not None:
            causes.append((f"{path}.endPort", end, "may not be specified when `port` is not specified"))
    elif isinstance(number, int) and not isinstance(number, bool):
        causes += [(f"{path}.port", number, m) for m in v.port_number_errors(number)]
        if end is not None:
            if isinstance(end, int) and end < number:
                causes.append((f"{path}.endPort", number, "must be greater than or equal to `port`"))
            causes += [(f"{path}.endPort", end, m) for m in v.port_number_errors(end)]
    else:
        if end is not None:
            causes.append((f"{path}.endPort", end, "may not be specified when `port` is non-numeric"))
        causes += [(f"{path}.port", number, m) for m in v.iana_svc_name_errors(str(number))]
    return causes


def peer_errors(peer: Obj, path: str) -> list[Cause]:
    """``ValidateNetworkPolicyPeer``: at least one of the three; ``ipBlock`` alone."""
    causes: list[Cause] = []
    count = 0
    for fld in ("podSelector", "namespaceSelector"):
        if peer.get(fld) is not None:
            count += 1
            causes += selector_errors(peer[fld], f"{path}.{fld}")
    if peer.get("ipBlock") is not None:
        count += 1
        causes += ip_block_errors(peer["ipBlock"], f"{path}.ipBlock")
    if count == 0:
        causes.append((path, None, "Required value: must specify a peer"))
    elif count > 1 and peer.get("ipBlock") is not None:
        causes.append((path, None, "Forbidden: may not specify both ipBlock and another peer"))
    return causes


class NetworkPolicyStrategy(Strategy):
    """NetworkPolicy: ports default to TCP; ``policyTypes`` defaults to ``Ingress`` plus ``Egress``
    when the policy has egress rules (what kube-apiserver stores); validation as Kubernetes'."""

    def default(self, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        spec.setdefault("podSelector", {})
        for direction in ("ingress", "egress"):
            for rule in spec.get(direction) or []:
                for port in rule.get("ports") or []:
                    port.setdefault("protocol", "TCP")
        if not spec.get("policyTypes"):
            spec["policyTypes"] = ["Ingress", "Egress"] if spec.get("egress") else ["Ingress"]

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        spec = obj.get("spec") or {}
        causes += selector_errors(spec.get("podSelector"), "spec.podSelector")
        for direction, peers in (("ingress", "from"), ("egress", "to")):
            for i, rule in enumerate(spec.get(direction) or []):
                rp = f"spec.{direction}[{i}]"
                for j, port in enumerate(rule.get("ports") or []):
                    causes += port_errors(port, f"{rp}.ports[{j}]")
                for j, peer in enumerate(rule.get(peers) or []):
                    causes += peer_errors(peer, f"{rp}.{peers}[{j}]")
        types = spec.get("policyTypes") or []
        if len(types) > len(POLICY_TYPES):
            causes.append(("spec.policyTypes", None, "Invalid value: may not specify more than two policyTypes"))
            return causes
        for i, kind in enumerate(types):
            if kind not in POLICY_TYPES:
                causes.append((f"spec.policyTypes[{i}]", None, unsupported(kind, POLICY_TYPES)))
        return causes
