"""Cluster DNS answers computed from given caches (no server, no apiserver)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dnslib import QTYPE, RCODE

from minik8s.api.base import Obj, ObjList
from minik8s.api.discovery import SERVICE_INDEX, slice_service_key
from minik8s.client.informer import NAMESPACE_INDEX, by_namespace
from minik8s.dns.records import POD_IP_INDEX, Answer, ClusterZone, pod_ips


class StaticCache:
    """The slice of an informer the zone reads, over a fixed list of objects."""

    def __init__(self, objs: list[Obj], indexers: dict[str, Callable[[Obj], list[str]]] | None = None) -> None:
        self.objs = objs
        self.indexers = indexers or {}

    def get(self, key: str) -> Obj | None:
        return next((o for o in self.objs if f"{o['metadata'].get('namespace')}/{o['metadata']['name']}" == key),
                    None)

    def list(self) -> ObjList:
        return list(self.objs)

    def by_index(self, index: str, value: str) -> ObjList:
        return [o for o in self.objs if value in self.indexers[index](o)]


def svc(name: str, ns: str = "default", **spec: Any) -> Obj:
    return {"metadata": {"name": name, "namespace": ns, "uid": f"uid-{name}"}, "spec": spec}


SERVICES = [
    svc("web", clusterIP="10.96.0.20", ports=[{"name": "http", "port": 80, "protocol": "TCP"}]),
    svc("db", clusterIP="None", ports=[{"name": "pg", "port": 5432, "protocol": "TCP"}]),
    svc("ext", type="ExternalName", externalName="example.org"),
    {**svc("dns-shop", clusterIP="10.96.0.30"),
     "metadata": {"name": "dns-shop", "namespace": "default", "ownerReferences": [
         {"apiVersion": "minik8s.io/v1", "kind": "DNS", "name": "shop", "uid": "dns-uid", "controller": True}]}},
]
SLICE_LABELS = {"kubernetes.io/service-name": "db"}
ENDPOINTS = [{"metadata": {"name": "db-abc", "namespace": "default", "labels": SLICE_LABELS}, "addressType": "IPv4",
              "endpoints": [{"addresses": ["10.244.0.8"], "hostname": "db-0", "conditions": {"ready": True}},
                            {"addresses": ["10.244.0.7"]},
                            {"addresses": ["10.244.0.9"], "conditions": {"ready": False}}],
              "ports": [{"name": "pg", "port": 5432, "protocol": "TCP"}]}]
PODS = [{"metadata": {"name": "p", "namespace": "default"}, "status": {"podIP": "10.244.0.7"}}]
DNSES = [{"apiVersion": "minik8s.io/v1", "kind": "DNS",
          "metadata": {"name": "shop", "namespace": "default", "uid": "dns-uid", "creationTimestamp": "t"},
          "spec": {"host": "shop.example.com", "paths": [{"path": "/", "serviceName": "web", "servicePort": 80}]}}]


def zone() -> ClusterZone:
    return ClusterZone(StaticCache(SERVICES, {NAMESPACE_INDEX: by_namespace}),
                       StaticCache(ENDPOINTS, {SERVICE_INDEX: slice_service_key}),
                       StaticCache(PODS, {POD_IP_INDEX: pod_ips}), [StaticCache(DNSES), StaticCache([])])


def ask(name: str, qtype: str = "A") -> Answer:
    answer = zone().answer(name, getattr(QTYPE, qtype))
    assert answer is not None, name
    return answer


def rdata(answer: Answer) -> list[str]:
    return [str(rr.rdata) for rr in answer.answers]


def test_cluster_ip_service() -> None:
    answer = ask("web.default.svc.cluster.local.")
    assert answer.rcode == RCODE.NOERROR and rdata(answer) == ["10.96.0.20"]
    assert answer.answers[0].ttl == 5 and str(answer.answers[0].rname) == "web.default.svc.cluster.local."
    assert rdata(ask("WEB.Default.SVC.cluster.local")) == ["10.96.0.20"]  # case-insensitive


def test_headless_service_returns_ready_endpoints() -> None:
    assert rdata(ask("db.default.svc.cluster.local")) == ["10.244.0.7", "10.244.0.8"]
    assert rdata(ask("db-0.db.default.svc.cluster.local")) == ["10.244.0.8"]
    assert rdata(ask("10-244-0-7.db.default.svc.cluster.local")) == ["10.244.0.7"]
    assert ask("10-244-0-9.db.default.svc.cluster.local").rcode == RCODE.NXDOMAIN  # not ready


def test_srv_records() -> None:
    answer = ask("_http._tcp.web.default.svc.cluster.local", "SRV")
    assert rdata(answer) == ["0 100 80 web.default.svc.cluster.local."]
    assert [str(rr.rdata) for rr in answer.additional] == ["10.96.0.20"]
    headless = ask("_pg._tcp.db.default.svc.cluster.local", "SRV")
    assert rdata(headless) == ["0 50 5432 10-244-0-7.db.default.svc.cluster.local.",
                               "0 50 5432 db-0.db.default.svc.cluster.local."]
    assert ask("_nope._tcp.web.default.svc.cluster.local", "SRV").rcode == RCODE.NXDOMAIN
    assert rdata(ask("web.default.svc.cluster.local", "SRV")) == ["0 100 80 web.default.svc.cluster.local."]


def test_external_name_is_a_cname() -> None:
    answer = ask("ext.default.svc.cluster.local")
    assert answer.answers[0].rtype == QTYPE.CNAME and rdata(answer) == ["example.org."]


def test_pod_names_are_verified() -> None:
    assert rdata(ask("10-244-0-7.default.pod.cluster.local")) == ["10.244.0.7"]
    assert ask("10-244-0-7.other.pod.cluster.local").rcode == RCODE.NXDOMAIN
    assert ask("10-244-0-99.default.pod.cluster.local").rcode == RCODE.NXDOMAIN


def test_unknown_names_nxdomain_and_other_types_nodata_with_soa() -> None:
    for name in ("nope.default.svc.cluster.local", "web.nons.svc.cluster.local", "x.cluster.local",
                 "nons.svc.cluster.local"):
        answer = ask(name)
        assert answer.rcode == RCODE.NXDOMAIN and not answer.answers, name
        assert answer.authority[0].rtype == QTYPE.SOA
    nodata = ask("web.default.svc.cluster.local", "AAAA")
    assert nodata.rcode == RCODE.NOERROR and not nodata.answers and nodata.authority
    assert ask("default.svc.cluster.local").rcode == RCODE.NOERROR
    assert ask("cluster.local", "SOA").answers[0].rtype == QTYPE.SOA


def test_dns_object_hosts_resolve_to_their_nginx_service() -> None:
    assert rdata(ask("shop.example.com")) == ["10.96.0.30"]
    assert rdata(ask("SHOP.example.com.")) == ["10.96.0.30"]


def test_names_outside_the_zone_are_not_answered() -> None:
    assert zone().answer("example.org", QTYPE.A) is None
    assert zone().answer("other.example.com", QTYPE.A) is None


async def test_server_packs_answers_truncates_udp_and_answers_edns() -> None:
    from dnslib import EDNS0, DNSRecord

    from minik8s.dns.server import DNSServer, parse_resolv_conf, parse_upstream

    many = [svc("big", clusterIP="None", ports=[])]
    eps = [{"metadata": {"name": f"big-{i}", "namespace": "default", "labels": {"kubernetes.io/service-name": "big"}},
            "addressType": "IPv4", "endpoints": [{"addresses": [f"10.244.1.{i * 50 + j}"]} for j in range(1, 51)]}
           for i in range(2)]  # 100 endpoints in two slices
    server = DNSServer(ClusterZone(StaticCache(many, {NAMESPACE_INDEX: by_namespace}),
                                   StaticCache(eps, {SERVICE_INDEX: slice_service_key}),
                                   StaticCache([]), []))
    question = DNSRecord.question("big.default.svc.cluster.local")
    small = DNSRecord.parse(await server.handle(question.pack(), tcp=False) or b"")
    assert small.header.tc == 1 and not small.rr  # 100 A records do not fit in 512 bytes
    full = DNSRecord.parse(await server.handle(question.pack(), tcp=True) or b"")
    assert full.header.tc == 0 and len(full.rr) == 100
    question.add_ar(EDNS0(udp_len=4096))
    edns = DNSRecord.parse(await server.handle(question.pack(), tcp=False) or b"")
    assert edns.header.tc == 0 and len(edns.rr) == 100 and edns.ar[-1].rtype == QTYPE.OPT
    assert await server.handle(b"\x00", tcp=False) is None  # not even a header: dropped
    bad = DNSRecord.parse(await server.handle(question.pack()[:14], tcp=False) or b"")
    assert bad.header.rcode == RCODE.FORMERR
    assert parse_resolv_conf("# x\nnameserver 1.1.1.1\nnameserver bad\nsearch a\nnameserver ::1\n") == \
        ["1.1.1.1", "::1"]
    assert parse_upstream("127.0.0.1:5353") == ("127.0.0.1", 5353) and parse_upstream("10.0.0.1") == ("10.0.0.1", 53)
