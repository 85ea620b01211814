"""Host-and-path routing kinds: minik8s' own ``DNS`` (``minik8s.io/v1``) and ``networking.k8s.io/v1`` Ingress
and IngressClass; and ``networking.k8s.io/v1`` NetworkPolicy (enforced by kube-proxy, :mod:`minik8s.proxy.netpol`).

A **DNS** object maps one host name plus several URL paths to Services of its namespace::

    apiVersion: minik8s.io/v1
    kind: DNS
    metadata: {name: shop}
    spec:
      host: shop.example.com
      paths:
      - {path: /cart, serviceName: cart, servicePort: 80}
      - {path: /api,  serviceName: api,  servicePort: 8080}

The DNS controller (:mod:`minik8s.controllers.dnsrecords`) runs an nginx Deployment plus a
ClusterIP Service (``dns-<name>``) for it; nginx forwards ``/cart/x`` to ``cart:80/x``
(the path prefix is stripped, as the original minik8s did) and the cluster DNS server
(:mod:`minik8s.dns`) resolves ``shop.example.com`` to that Service's ClusterIP.  An
**Ingress** (rules of host + paths, ``pathType`` Exact/Prefix, backends by port number or
name) goes through the same machinery (Service ``ingress-<name>``), with Kubernetes'
semantics: the path is passed to the backend unchanged.

Both kinds are turned into one neutral shape, :class:`Frontend` (sites of routes), by
:func:`frontend_of`; the controller and the DNS server share it and :func:`claimed_hosts`,
which decides which object owns a host when several name the same one (the oldest).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from minik8s.api.base import Obj
from minik8s.api.meta import Condition, LabelSelector, TypedObject
from minik8s.api.model import Model

#: minik8s' own API group (DNS, and later Function, Workflow, GPU Job).
GROUP = "minik8s.io"
DNS_API_VERSION = f"{GROUP}/v1"
INGRESS_API_VERSION = "networking.k8s.io/v1"
#: The IngressClass of minik8s' own ingress controller (the DNS controller creates it at start-up):
#: Ingresses naming it, or no class, are served by nginx; those naming another class are ignored.
INGRESS_CLASS = "minik8s"
#: ``spec.controller`` of that class (an IngressClass naming it is served too, whatever its name).
INGRESS_CONTROLLER = "minik8s.io/nginx"
#: The annotation that makes an IngressClass the default (Kubernetes' DefaultIngressClass admission).
ANN_DEFAULT_INGRESS_CLASS = "ingressclass.kubernetes.io/is-default-class"
#: Label on the nginx Deployment, its pods and Service: ``<kind>-<name>`` of the owning object.
FRONTEND_LABEL = "minik8s.io/frontend"
PATH_TYPES = ("Exact", "Prefix", "ImplementationSpecific")


# ---------------------------------------------------------------- DNS (minik8s.io/v1)
class DNSPath(Model):
    """One forwarded path: requests under ``path`` go to ``serviceName:servicePort`` (prefix stripped)."""

    path: str
    service_name: str
    service_port: int


class DNSSpec(Model):
    host: str
    paths: list[DNSPath] | None = None


class DNSStatus(Model):
    """``serviceName``/``serviceAddress``: the nginx Service and its ClusterIP the host resolves to."""

    observed_generation: int | None = None
    conditions: list[Condition] | None = None
    service_name: str | None = None
    service_address: str | None = None


class DNS(TypedObject):
    spec: DNSSpec
    status: DNSStatus | None = None


# ---------------------------------------------------------------- Ingress (networking.k8s.io/v1)
class ServiceBackendPort(Model):
    name: str | None = None
    number: int | None = None


class IngressServiceBackend(Model):
    name: str
    port: ServiceBackendPort | None = None


class IngressBackend(Model):
    service: IngressServiceBackend | None = None
    resource: dict[str, Any] | None = None


class HTTPIngressPath(Model):
    path: str | None = None
    path_type: str | None = None
    backend: IngressBackend


class HTTPIngressRuleValue(Model):
    paths: list[HTTPIngressPath]


class IngressRule(Model):
    host: str | None = None
    http: HTTPIngressRuleValue | None = None


class IngressTLS(Model):
    hosts: list[str] | None = None
    secret_name: str | None = None


class IngressSpec(Model):
    ingress_class_name: str | None = None
    default_backend: IngressBackend | None = None
    tls: list[IngressTLS] | None = None
    rules: list[IngressRule] | None = None


class IngressPortStatus(Model):
    port: int
    protocol: str
    error: str | None = None


class IngressLoadBalancerIngress(Model):
    ip: str | None = None
    hostname: str | None = None
    ports: list[IngressPortStatus] | None = None


class IngressLoadBalancerStatus(Model):
    ingress: list[IngressLoadBalancerIngress] | None = None


class IngressStatus(Model):
    load_balancer: IngressLoadBalancerStatus | None = None


class Ingress(TypedObject):
    spec: IngressSpec | None = None
    status: IngressStatus | None = None


class IngressClassParametersReference(Model):
    api_group: str | None = None
    kind: str
    name: str
    namespace: str | None = None
    scope: str | None = None


class IngressClassSpec(Model):
    controller: str | None = None
    parameters: IngressClassParametersReference | None = None


class IngressClass(TypedObject):
    """``networking.k8s.io/v1`` IngressClass (cluster-scoped): the ``controller`` that implements
    the Ingresses naming it, and its ``parameters``; the annotation
    :data:`ANN_DEFAULT_INGRESS_CLASS` ``"true"`` makes it the default class."""

    spec: IngressClassSpec | None = None


def default_ingress_class(classes: Iterable[Obj]) -> Obj | None:
    """The default IngressClass (annotated :data:`ANN_DEFAULT_INGRESS_CLASS` ``"true"``); of several,
    the newest (``creationTimestamp``, then name), as Kubernetes' DefaultIngressClass admission picks."""
    found: Obj | None = None
    for ic in classes:
        meta = _meta(ic)
        if (meta.get("annotations") or {}).get(ANN_DEFAULT_INGRESS_CLASS) != "true":
            continue
        if found is None or (meta.get("creationTimestamp") or "", meta.get("name") or "") > \
                (_meta(found).get("creationTimestamp") or "", _meta(found).get("name") or ""):
            found = ic
    return found


# ---------------------------------------------------------------- NetworkPolicy (networking.k8s.io/v1)
POLICY_TYPES = ("Ingress", "Egress")
POLICY_PROTOCOLS = ("SCTP", "TCP", "UDP")


class IPBlock(Model):
    """A CIDR and the CIDRs inside it that do not count (``except``)."""

    cidr: str
    except_: list[str] | None = Field(default=None, alias="except")


class NetworkPolicyPeer(Model):
    """Pods (``podSelector``, in ``namespaceSelector``'s namespaces or the policy's own) or an ``ipBlock``."""

    pod_selector: LabelSelector | None = None
    namespace_selector: LabelSelector | None = None
    ip_block: IPBlock | None = None


class NetworkPolicyPort(Model):
    """``protocol`` (TCP by default), ``port`` (a number or a named container port), ``endPort`` (a range)."""

    protocol: str | None = None
    port: int | str | None = None
    end_port: int | None = None


class NetworkPolicyIngressRule(Model):
    ports: list[NetworkPolicyPort] | None = None
    from_: list[NetworkPolicyPeer] | None = Field(default=None, alias="from")


class NetworkPolicyEgressRule(Model):
    ports: list[NetworkPolicyPort] | None = None
    to: list[NetworkPolicyPeer] | None = None


class NetworkPolicySpec(Model):
    pod_selector: LabelSelector = Field(default_factory=LabelSelector)
    ingress: list[NetworkPolicyIngressRule] | None = None
    egress: list[NetworkPolicyEgressRule] | None = None
    policy_types: list[str] | None = None


class NetworkPolicy(TypedObject):
    spec: NetworkPolicySpec = Field(default_factory=NetworkPolicySpec)


def policy_types(policy: Obj) -> list[str]:
    """A NetworkPolicy's ``policyTypes`` as Kubernetes defaults them: the listed ones, else
    ``Ingress`` and, when the policy has egress rules, ``Egress``."""
    spec = policy.get("spec") or {}
    listed = spec.get("policyTypes")
    if listed:
        return [str(t) for t in listed]
    return ["Ingress", "Egress"] if spec.get("egress") else ["Ingress"]


# ---------------------------------------------------------------- the shared shape
@dataclass(frozen=True)
class Route:
    """One ``location``: ``path`` (``/`` or ``/a/b``), ``path_type`` ``Prefix`` or ``Exact``, the
    backend Service ``service`` and its ``port`` (a number, or a Service port name), and whether
    the matched prefix is removed before forwarding (DNS objects: yes; Ingress: no)."""

    path: str
    service: str
    port: int | str
    path_type: str = "Prefix"
    strip_prefix: bool = False


@dataclass(frozen=True)
class Site:
    """One nginx ``server``: ``host`` (``""`` = any host, the default server) and its routes."""

    host: str
    routes: tuple[Route, ...]


@dataclass(frozen=True)
class Frontend:
    """A DNS object or an Ingress as the controller and the DNS server see it."""

    api_version: str
    kind: str
    namespace: str
    name: str
    uid: str
    creation_timestamp: str
    sites: tuple[Site, ...]

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def resource_name(self) -> str:
        """Name of the nginx Deployment and Service (:func:`frontend_resource_name`)."""
        return frontend_resource_name(self.kind, self.name)

    @property
    def label_value(self) -> str:
        """Value of :data:`FRONTEND_LABEL` on its Deployment, pods and Service."""
        return self.resource_name

    @property
    def hosts(self) -> list[str]:
        return [s.host for s in self.sites if s.host]


_LABEL_RE = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")


def frontend_resource_name(kind: str, name: str) -> str:
    """``dns-<name>`` for a DNS object, ``ingress-<name>`` for an Ingress.

    The result is a valid Service name (a DNS-1035 label of at most 63 characters); a name
    that would not give one (dots, too long) is shortened and suffixed with a hash of the
    original, so two objects never share a name.
    """
    prefix = "dns" if kind == "DNS" else kind.lower()
    candidate = f"{prefix}-{name}"
    if len(candidate) <= 63 and _LABEL_RE.fullmatch(candidate):
        return candidate
    digest = hashlib.sha256(name.encode()).hexdigest()[:10]
    head = re.sub(r"[^a-z0-9-]", "-", candidate.lower())[:63 - 11].rstrip("-")
    return f"{head}-{digest}"


def normalize_path(value: str) -> str:
    """``/a/b/`` → ``/a/b``; ``/`` stays ``/`` (paths are compared and routed without a trailing slash)."""
    return value.rstrip("/") or "/"


def _meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def _dns_sites(obj: Obj) -> tuple[Site, ...]:
    spec = obj.get("spec") or {}
    routes = tuple(Route(normalize_path(str(p.get("path") or "/")), str(p.get("serviceName") or ""),
                         p.get("servicePort") or 0, "Prefix", True)
                   for p in spec.get("paths") or [])
    return (Site(str(spec.get("host") or "").lower(), routes),)


def _ingress_route(path: Obj) -> Route | None:
    service = (path.get("backend") or {}).get("service") or {}
    port = service.get("port") or {}
    number = port.get("number")
    target: int | str = number if isinstance(number, int) and number else str(port.get("name") or "")
    if not service.get("name") or not target:
        return None  # resource backends are not supported
    path_type = "Exact" if path.get("pathType") == "Exact" else "Prefix"
    return Route(str(path.get("path") or "/"), str(service["name"]), target, path_type, False)


def _ingress_sites(obj: Obj) -> tuple[Site, ...]:
    spec = obj.get("spec") or {}
    sites: list[Site] = []
    for rule in spec.get("rules") or []:
        routes = [r for p in (rule.get("http") or {}).get("paths") or [] if (r := _ingress_route(p)) is not None]
        sites.append(Site(str(rule.get("host") or "").lower(), tuple(routes)))
    default = _ingress_route({"backend": spec["defaultBackend"], "path": "/"}) if spec.get("defaultBackend") else None
    if default is not None:
        merged = False
        for i, site in enumerate(sites):
            if not site.host:
                sites[i] = Site("", (*site.routes, default))
                merged = True
        if not merged:
            sites.append(Site("", (default,)))
    return tuple(sites)


def handles_ingress(obj: Obj, classes: Iterable[str] = (INGRESS_CLASS,)) -> bool:
    """Whether minik8s serves this Ingress: no ``ingressClassName``, or one of ``classes`` (the names of
    the IngressClasses whose controller is :data:`INGRESS_CONTROLLER`; :data:`INGRESS_CLASS` always)."""
    name = (obj.get("spec") or {}).get("ingressClassName")
    return name in (None, "", INGRESS_CLASS) or name in set(classes)


def frontend_of(obj: Obj, classes: Iterable[str] = (INGRESS_CLASS,)) -> Frontend | None:
    """The :class:`Frontend` of a wire-form DNS object or Ingress; None for other kinds and for
    Ingresses of a class not in ``classes`` (:func:`handles_ingress`)."""
    kind = obj.get("kind")
    if kind == "DNS":
        sites = _dns_sites(obj)
    elif kind == "Ingress" and handles_ingress(obj, classes):
        sites = _ingress_sites(obj)
    else:
        return None
    meta = _meta(obj)
    return Frontend(str(obj.get("apiVersion") or ""), kind, meta.get("namespace") or "", meta.get("name") or "",
                    meta.get("uid") or "", meta.get("creationTimestamp") or "", sites)


def claimed_hosts(frontends: Iterable[Frontend]) -> dict[str, Frontend]:
    """Host → the frontend that serves it.  When several objects name the same host, the
    oldest (creationTimestamp, then namespace/name, then kind) wins — the others are
    reported in conflict by the controller; hosts are compared lower-case."""
    owners: dict[str, Frontend] = {}
    for fe in sorted(frontends, key=lambda f: (f.creation_timestamp, f.namespace, f.name, f.kind)):
        for host in fe.hosts:
            owners.setdefault(host.lower(), fe)
    return owners


def is_controlled_by(obj: Obj, uid: str) -> bool:
    """Whether ``obj``'s controller ownerReference points at ``uid``."""
    return any(r.get("controller") and r.get("uid") == uid for r in _meta(obj).get("ownerReferences") or [])
