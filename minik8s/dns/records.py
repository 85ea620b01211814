"""Cluster DNS records, answered from informer caches (Kubernetes' DNS specification, as CoreDNS does).

Names served (``<domain>`` is the cluster domain, ``cluster.local`` by default; names are
case-insensitive):

* ``<svc>.<ns>.svc.<domain>`` — A: the ClusterIP; for a headless Service
  (``clusterIP: None``) the ready addresses of its EndpointSlices; CNAME: the
  ``externalName`` of an ExternalName Service.  SRV on that name: every named port.
* ``_<port>._<proto>.<svc>.<ns>.svc.<domain>`` — SRV: priority 0, port and target
  ``<svc>.<ns>.svc.<domain>`` (headless: one record per ready endpoint, target
  ``<hostname or a-b-c-d>.<svc>.<ns>.svc.<domain>``), with the targets' A records as
  additional records.
* ``<hostname or a-b-c-d>.<svc>.<ns>.svc.<domain>`` — A of one endpoint of a headless Service.
* ``<a-b-c-d>.<ns>.pod.<domain>`` — A ``a.b.c.d`` when a pod of ``<ns>`` has that IP
  (CoreDNS ``pods verified``).
* the hosts of DNS objects and Ingresses (any name, inside the cluster domain or not) — A:
  the ClusterIP of their nginx Service (``dns-<name>``, controlled by that object).
* the zone apex: SOA and NS (``ns.dns.<domain>``).

An existing name asked for another type (AAAA, TXT, ...) gets NOERROR with no answer
(NODATA); an unknown name under the cluster domain gets NXDOMAIN; both carry the zone's
SOA as authority (negative caching for ``ttl`` seconds, RFC 2308).  Names outside the
cluster domain that no DNS object claims are not answered here (:meth:`ClusterZone.answer`
returns None: the server refuses or forwards them).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from dnslib import CNAME, NS, QTYPE, RCODE, RR, SOA, SRV, A, DNSLabel

from minik8s.api.base import Obj, ObjList
from minik8s.api.discovery import SERVICE_INDEX, endpoint_ready
from minik8s.api.networking import Frontend, claimed_hosts, frontend_of, is_controlled_by
from minik8s.client.informer import NAMESPACE_INDEX

POD_IP_INDEX = "podIP"
DEFAULT_TTL = 5


class Cache(Protocol):
    """What the zone reads: an informer's ``get``/``list``/``by_index`` (``minik8s.client.informer.Informer``)."""

    def get(self, key: str) -> Obj | None: ...

    def list(self) -> ObjList: ...

    def by_index(self, index: str, value: str) -> ObjList: ...


def pod_ips(pod: Obj) -> list[str]:
    """Index function: every IP of a pod (``status.podIP`` and ``status.podIPs``)."""
    status = pod.get("status") or {}
    ips = [status["podIP"]] if status.get("podIP") else []
    ips += [p["ip"] for p in status.get("podIPs") or [] if p.get("ip") and p["ip"] not in ips]
    return ips


@dataclass
class Answer:
    """A reply's content: ``rcode`` (dnslib ``RCODE``), answer, authority and additional RRs."""

    rcode: int = RCODE.NOERROR
    answers: list[RR] = field(default_factory=list)
    authority: list[RR] = field(default_factory=list)
    additional: list[RR] = field(default_factory=list)


def dashed_ip(ip: str) -> str:
    """``10.244.1.5`` → ``10-244-1-5`` (pod and endpoint DNS labels)."""
    return ip.replace(".", "-").replace(":", "-")


def undashed_ipv4(label: str) -> str | None:
    """``10-244-1-5`` → ``10.244.1.5``; None when the label is not a dashed IPv4 address."""
    try:
        return str(ipaddress.IPv4Address(label.replace("-", ".")))
    except ValueError:
        return None


class ClusterZone:
    """Answers questions about the cluster domain and DNS-object hosts from caches.

    ``services``, ``endpoint_slices``, ``pods`` and each of ``frontends`` (DNS objects, Ingresses)
    are caches keyed ``namespace/name``; ``services`` needs the :data:`NAMESPACE_INDEX`
    index, ``endpoint_slices`` the :data:`~minik8s.api.discovery.SERVICE_INDEX` index
    (:func:`~minik8s.api.discovery.slice_service_key`) and ``pods`` the :data:`POD_IP_INDEX` index.
    ``ttl`` is in seconds.
    """

    def __init__(self, services: Cache, endpoint_slices: Cache, pods: Cache, frontends: Sequence[Cache],
                 domain: str = "cluster.local", ttl: int = DEFAULT_TTL) -> None:
        self.services = services
        self.endpoint_slices = endpoint_slices
        self.pods = pods
        self.frontends = list(frontends)
        self.domain = domain.strip(".").lower()
        self.ttl = ttl
        self._hosts: dict[str, Frontend] | None = None

    # ------------------------------------------------------------------ host claims
    def invalidate_hosts(self) -> None:
        """Forget the host → DNS object map (call when a DNS object or Ingress changes)."""
        self._hosts = None

    def hosts(self) -> dict[str, Frontend]:
        """Host → the DNS object or Ingress serving it (the oldest one, see ``claimed_hosts``)."""
        if self._hosts is None:
            fronts = [fe for cache in self.frontends for obj in cache.list() if (fe := frontend_of(obj)) is not None]
            self._hosts = claimed_hosts(fronts)
        return self._hosts

    def _frontend_for(self, name: str) -> Frontend | None:
        hosts = self.hosts()
        if name in hosts:
            return hosts[name]
        _, _, parent = name.partition(".")
        return hosts.get(f"*.{parent}") if parent else None

    # ------------------------------------------------------------------ records
    def _rr(self, name: str, rtype: int, rdata: Any) -> RR:
        return RR(DNSLabel(name + "."), rtype, rdata=rdata, ttl=self.ttl)

    def soa(self) -> RR:
        """The zone's SOA record (minimum = ``ttl``: the negative-caching time)."""
        return self._rr(self.domain, QTYPE.SOA,
                        SOA(f"ns.dns.{self.domain}.", f"hostmaster.{self.domain}.", (1, 7200, 1800, 86400, self.ttl)))

    def _negative(self, rcode: int) -> Answer:
        return Answer(rcode, authority=[self.soa()])

    def _a_records(self, name: str, ips: list[str], qtype: int) -> Answer:
        if qtype not in (QTYPE.A, QTYPE.ANY):
            return self._negative(RCODE.NOERROR)
        return Answer(answers=[self._rr(name, QTYPE.A, A(ip)) for ip in ips])

    # ------------------------------------------------------------------ entry point
    def answer(self, qname: str, qtype: int) -> Answer | None:
        """The answer for one question, or None when the name is not this server's to answer."""
        name = qname.rstrip(".").lower()
        frontend = self._frontend_for(name)
        if frontend is not None:
            return self._frontend_answer(name, frontend, qtype)
        if name != self.domain and not name.endswith("." + self.domain):
            return None
        labels = name[: -len(self.domain)].rstrip(".").split(".") if name != self.domain else []
        if not labels:
            return self._apex(qtype)
        if labels[-1] == "svc":
            return self._svc(name, labels[:-1], qtype)
        if labels[-1] == "pod":
            return self._pod(name, labels[:-1], qtype)
        return self._negative(RCODE.NXDOMAIN)

    def _apex(self, qtype: int) -> Answer:
        if qtype in (QTYPE.SOA, QTYPE.ANY):
            return Answer(answers=[self.soa()])
        if qtype == QTYPE.NS:
            return Answer(answers=[self._rr(self.domain, QTYPE.NS, NS(f"ns.dns.{self.domain}."))])
        return self._negative(RCODE.NOERROR)

    def _frontend_answer(self, name: str, frontend: Frontend, qtype: int) -> Answer:
        service = self.services.get(f"{frontend.namespace}/{frontend.resource_name}")
        ip = ((service or {}).get("spec") or {}).get("clusterIP")
        if service is None or not is_controlled_by(service, frontend.uid) or not ip or ip == "None" \
                or qtype not in (QTYPE.A, QTYPE.ANY):
            return Answer()  # NODATA (no SOA: the host is not in the cluster's zone)
        return Answer(answers=[self._rr(name, QTYPE.A, A(ip))])

    # ------------------------------------------------------------------ <...>.svc.<domain>
    def _svc(self, name: str, labels: list[str], qtype: int) -> Answer:
        if len(labels) == 0:
            return self._negative(RCODE.NOERROR)
        if len(labels) == 1:
            exists = bool(self.services.by_index(NAMESPACE_INDEX, labels[0]))
            return self._negative(RCODE.NOERROR if exists else RCODE.NXDOMAIN)
        service = self.services.get(f"{labels[-1]}/{labels[-2]}")
        if service is None:
            return self._negative(RCODE.NXDOMAIN)
        rest = labels[:-2]
        if not rest:
            return self._service(name, service, qtype)
        if len(rest) == 1:
            return self._endpoint_host(name, service, rest[0], qtype)
        if len(rest) == 2 and rest[0].startswith("_") and rest[1].startswith("_"):
            srv = self._srv(service, rest[0][1:], rest[1][1:].upper())
            if not srv.answers:
                return self._negative(RCODE.NXDOMAIN)
            if qtype not in (QTYPE.SRV, QTYPE.ANY):
                return self._negative(RCODE.NOERROR)
            return srv
        return self._negative(RCODE.NXDOMAIN)

    def _fqdn(self, service: Obj) -> str:
        meta = service.get("metadata") or {}
        return f"{meta.get('name')}.{meta.get('namespace')}.svc.{self.domain}"

    def _ready_addresses(self, service: Obj) -> list[tuple[Obj, Obj]]:
        """(address, slice) pairs of the ready endpoints of the Service's EndpointSlices (a missing
        ``ready`` condition counts as ready, as CoreDNS reads it); an address is ``{"ip", "hostname"}``."""
        meta = service.get("metadata") or {}
        out = []
        key = f"{meta.get('namespace')}/{meta.get('name')}"
        for endpoint_slice in self.endpoint_slices.by_index(SERVICE_INDEX, key):
            if endpoint_slice.get("addressType") != "IPv4":
                continue
            for endpoint in endpoint_slice.get("endpoints") or []:
                if not endpoint_ready(endpoint):
                    continue
                for ip in endpoint.get("addresses") or []:
                    address = {"ip": ip, "hostname": endpoint.get("hostname")}
                    out.append((address, endpoint_slice))
        return out

    def _service(self, name: str, service: Obj, qtype: int) -> Answer:
        spec = service.get("spec") or {}
        if spec.get("type") == "ExternalName" and spec.get("externalName"):
            target = str(spec["externalName"]).rstrip(".") + "."
            return Answer(answers=[self._rr(name, QTYPE.CNAME, CNAME(target))])
        if qtype == QTYPE.SRV:
            srv = Answer()
            for port in spec.get("ports") or []:
                if port.get("name"):
                    found = self._srv(service, port["name"], port.get("protocol") or "TCP")
                    srv.answers += found.answers
                    srv.additional += [rr for rr in found.additional if rr not in srv.additional]
            return srv if srv.answers else self._negative(RCODE.NOERROR)
        ip = spec.get("clusterIP")
        if ip and ip != "None":
            return self._a_records(name, [ip], qtype)
        ips = sorted({a["ip"] for a, _ in self._ready_addresses(service)}, key=_ip_key)
        return self._a_records(name, ips, qtype)

    def _endpoint_host(self, name: str, service: Obj, label: str, qtype: int) -> Answer:
        if (service.get("spec") or {}).get("clusterIP") != "None":
            return self._negative(RCODE.NXDOMAIN)
        ips = sorted({a["ip"] for a, _ in self._ready_addresses(service)
                      if a.get("hostname") == label or dashed_ip(a["ip"]) == label}, key=_ip_key)
        if not ips:
            return self._negative(RCODE.NXDOMAIN)
        return self._a_records(name, ips, qtype)

    def _srv(self, service: Obj, port_name: str, protocol: str) -> Answer:
        """SRV records for ``_<port_name>._<protocol>`` of ``service`` (empty Answer: no such port)."""
        spec = service.get("spec") or {}
        fqdn = self._fqdn(service)
        srv_name = f"_{port_name}._{protocol.lower()}.{fqdn}"
        out = Answer()
        ip = spec.get("clusterIP")
        if ip and ip != "None":
            for port in spec.get("ports") or []:
                if port.get("name") == port_name and (port.get("protocol") or "TCP") == protocol:
                    out.answers.append(self._rr(srv_name, QTYPE.SRV, SRV(0, 100, port["port"], fqdn + ".")))
                    out.additional = [self._rr(fqdn, QTYPE.A, A(ip))]
            return out
        targets: dict[str, tuple[str, int]] = {}
        for address, subset in self._ready_addresses(service):
            for port in subset.get("ports") or []:
                if port.get("name") == port_name and (port.get("protocol") or "TCP") == protocol:
                    host = address.get("hostname") or dashed_ip(address["ip"])
                    targets[f"{host}.{fqdn}"] = (address["ip"], port["port"])
        weight = max(1, 100 // len(targets)) if targets else 0
        for target, (addr, number) in sorted(targets.items()):
            out.answers.append(self._rr(srv_name, QTYPE.SRV, SRV(0, weight, number, target + ".")))
            out.additional.append(self._rr(target, QTYPE.A, A(addr)))
        return out

    # ------------------------------------------------------------------ <ip>.<ns>.pod.<domain>
    def _pod(self, name: str, labels: list[str], qtype: int) -> Answer:
        if len(labels) <= 1:
            return self._negative(RCODE.NOERROR)
        if len(labels) != 2:
            return self._negative(RCODE.NXDOMAIN)
        ip = undashed_ipv4(labels[0])
        namespace = labels[1]
        if ip is None or not any((p.get("metadata") or {}).get("namespace") == namespace
                                 for p in self.pods.by_index(POD_IP_INDEX, ip)):
            return self._negative(RCODE.NXDOMAIN)
        return self._a_records(name, [ip], qtype)


def _ip_key(ip: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else 0 for p in ip.split("."))

