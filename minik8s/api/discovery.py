"""``discovery.k8s.io/v1`` EndpointSlice: a Service's endpoints in slices of at most 100.

Kubernetes 1.32's type (``k8s.io/api/discovery/v1``): an ``addressType`` (IPv4, IPv6, FQDN), the
``endpoints`` (each one or more ``addresses``, ``conditions`` ready/serving/terminating, an
optional ``hostname``, ``targetRef``, ``nodeName``, ``zone``, topology ``hints``) and the ``ports``
every endpoint of the slice serves.  The slices of a Service carry the label
:data:`SERVICE_NAME_LABEL`; the controller that keeps them names itself in
:data:`MANAGED_BY_LABEL` (:mod:`minik8s.controllers.endpointslice`).  kube-proxy and the DNS server
read a Service's endpoints from its slices.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from minik8s.api.meta import ObjectReference, TypedObject
from minik8s.api.model import Model

API_VERSION = "discovery.k8s.io/v1"
#: The label naming a slice's Service (``discovery.LabelServiceName``).
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
#: The label naming the controller that manages a slice (``discovery.LabelManagedBy``).
MANAGED_BY_LABEL = "endpointslice.kubernetes.io/managed-by"
#: The value of :data:`MANAGED_BY_LABEL` on the slices the EndpointSlice controller keeps.
CONTROLLER_NAME = "endpointslice-controller.k8s.io"
ADDRESS_TYPES = ("FQDN", "IPv4", "IPv6")
#: The name of the index of slices by ``namespace/service`` (:func:`slice_service_key`).
SERVICE_INDEX = "service"


class EndpointConditions(Model):
    """``ready`` (nil: unknown, read as ready), ``serving`` (ready regardless of termination),
    ``terminating``."""

    ready: bool | None = None
    serving: bool | None = None
    terminating: bool | None = None


class ForZone(Model):
    name: str


class EndpointHints(Model):
    for_zones: list[ForZone] | None = None


class Endpoint(Model):
    addresses: list[str]
    conditions: EndpointConditions | None = None
    hostname: str | None = None
    target_ref: ObjectReference | None = None
    deprecated_topology: dict[str, str] | None = None
    node_name: str | None = None
    zone: str | None = None
    hints: EndpointHints | None = None


class EndpointPort(Model):
    """A port of every endpoint of the slice; ``port`` None: all ports (a slice without ports
    means no port at all)."""

    name: str | None = None
    protocol: str | None = None
    port: int | None = None
    app_protocol: str | None = None


class EndpointSlice(TypedObject):
    address_type: str
    endpoints: list[Endpoint] | None = None
    ports: list[EndpointPort] | None = None


def slice_service_key(endpoint_slice: dict[str, Any]) -> list[str]:
    """Index function: ``namespace/service`` of a slice's :data:`SERVICE_NAME_LABEL` (none without it)."""
    meta = endpoint_slice.get("metadata") or {}
    name = (meta.get("labels") or {}).get(SERVICE_NAME_LABEL)
    return [f"{meta.get('namespace') or ''}/{name}"] if name else []


def endpoint_ready(endpoint: dict[str, object]) -> bool:
    """Whether a slice's endpoint is ready: a missing ``ready`` condition counts as ready
    (``EndpointConditions.ready``: nil means unknown, to be read as ready)."""
    conditions = endpoint.get("conditions")
    return not isinstance(conditions, dict) or conditions.get("ready") is not False


def endpoint_serving(endpoint: dict[str, object]) -> bool:
    """Whether a slice's endpoint serves: ``serving`` when set, else the ready condition."""
    conditions = endpoint.get("conditions")
    if isinstance(conditions, dict) and conditions.get("serving") is not None:
        return bool(conditions["serving"])
    return endpoint_ready(endpoint)


def endpoint_terminating(endpoint: dict[str, object]) -> bool:
    """Whether a slice's endpoint is terminating (a missing condition: not terminating)."""
    conditions = endpoint.get("conditions")
    return isinstance(conditions, dict) and bool(conditions.get("terminating"))


def parse_ip_sloppy(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """Go's ``netutils.ParseIPSloppy``: IPv4 parts with leading zeros are read as decimal."""
    try:
        return ipaddress.ip_address(value)
    except ValueError:
        pass
    parts = value.split(".")
    if len(parts) == 4 and all(p.isdigit() and len(p) <= 3 for p in parts):
        try:
            return ipaddress.IPv4Address(".".join(str(int(p)) for p in parts))
        except ValueError:
            return None
    return None


def non_special_ip_errors(value: str) -> list[str]:
    """Kubernetes' ``ValidateNonSpecialIP``: not unspecified, loopback or link-local."""
    ip = parse_ip_sloppy(value)
    if ip is None:
        return ["must be a valid IP address"]
    errors = []
    if ip.is_unspecified:
        errors.append("may not be unspecified (0.0.0.0)")
    if ip.is_loopback:
        errors.append("may not be in the loopback range (127.0.0.0/8, ::1/128)")
    if ip.is_link_local and not ip.is_multicast:
        errors.append("may not be in the link-local range (169.254.0.0/16, fe80::/10)")
    if ip.is_multicast and ip in (ipaddress.ip_network("224.0.0.0/24") if ip.version == 4
                                  else ipaddress.ip_network("ff02::/16")):
        errors.append("may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)")
    return errors
