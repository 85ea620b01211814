"""The cluster DNS server against a real apiserver, queried over real UDP and TCP on 127.0.0.1.

The server runs in-process (:class:`minik8s.dns.app.ClusterDNS`) on a free port and
registers itself in a per-test ``kube-dns``-like Service of the test namespace (so the
session apiserver's ``kube-system`` is not touched).  One test runs ``minik8s dns`` as a
process.  Forwarding goes only to a fake upstream on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
from pathlib import Path

from dnslib import QTYPE, RCODE, RR, A, DNSRecord

from minik8s.api import errors
from minik8s.client.kubeconfig import render
from minik8s.client.rest import Client
from minik8s.cluster.processes import free_port
from tests.support.dns import answers, dns_server, query
from tests.support.processes import ROOT, APIServer
from tests.support.waiting import wait_for


async def test_answers_cluster_names_over_udp_and_tcp_and_registers_itself(client: Client, namespace: str) -> None:
    svc_rt, ep_rt, pod_rt = client.kind("v1", "Service"), client.kind("v1", "Endpoints"), client.kind("v1", "Pod")
    web = await client.create(svc_rt, {"metadata": {"name": "web"}, "spec": {
        "ports": [{"name": "http", "port": 80, "protocol": "TCP"}]}}, namespace)
    await client.create(svc_rt, {"metadata": {"name": "db"}, "spec": {
        "clusterIP": "None", "ports": [{"name": "pg", "port": 5432}]}}, namespace)
    await client.create(client.kind("discovery.k8s.io/v1", "EndpointSlice"), {
        "metadata": {"name": "db-1", "labels": {"kubernetes.io/service-name": "db"}}, "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.244.201.7"]}, {"addresses": ["10.244.201.8"]},
                      {"addresses": ["10.244.201.6"], "conditions": {"ready": False}}],
        "ports": [{"name": "pg", "port": 5432, "protocol": "TCP"}]}, namespace)
    pod = await client.create(pod_rt, {"metadata": {"name": "p"}, "spec": {
        "containers": [{"name": "c", "image": "minik8s/busybox"}]}}, namespace)
    await client.patch(pod_rt, "p", {"status": {"podIP": "10.244.201.9"}}, namespace, subresource="status")
    assert pod["metadata"]["name"] == "p"
    cluster_ip = web["spec"]["clusterIP"]

    async with dns_server(client, namespace) as server:
        port = server.server.port
        for tcp in (False, True):
            reply = await query(port, f"web.{namespace}.svc.cluster.local", tcp=tcp)
            assert reply.header.rcode == RCODE.NOERROR and reply.header.aa == 1
            assert answers(reply) == [cluster_ip]
        reply = await query(port, f"db.{namespace}.svc.cluster.local")
        assert sorted(answers(reply)) == ["10.244.201.7", "10.244.201.8"]
        srv = await query(port, f"_http._tcp.web.{namespace}.svc.cluster.local", "SRV", tcp=True)
        assert answers(srv) == [f"0 100 80 web.{namespace}.svc.cluster.local."]
        await wait_for(lambda: _resolves(port, f"10-244-201-9.{namespace}.pod.cluster.local", ["10.244.201.9"]),
                       what="pod A record")
        missing = await query(port, f"nope.{namespace}.svc.cluster.local")
        assert missing.header.rcode == RCODE.NXDOMAIN and missing.auth[0].rtype == QTYPE.SOA
        refused = await query(port, "example.org")
        assert refused.header.rcode == RCODE.REFUSED and not refused.rr

        # a new Service is answered as soon as the informer saw it
        late = await client.create(svc_rt, {"metadata": {"name": "late"}, "spec": {"ports": [{"port": 81}]}},
                                   namespace)
        await wait_for(lambda: _resolves(port, f"late.{namespace}.svc.cluster.local", [late["spec"]["clusterIP"]]),
                       what="late Service resolvable")

        # registration: the selector-less DNS Service and this server's address in its Endpoints
        service = await client.get(svc_rt, "kube-dns", namespace)
        assert service["spec"]["clusterIP"] == server.config.cluster_dns_ip and "selector" not in service["spec"]
        assert {(p["name"], p["protocol"], p["port"]) for p in service["spec"]["ports"]} == \
            {("dns", "UDP", 53), ("dns-tcp", "TCP", 53)}
        endpoints = await client.get(ep_rt, "kube-dns", namespace)
        assert endpoints["subsets"][0]["addresses"] == [{"ip": "127.0.0.1", "nodeName": "node-1"}]
        assert {p["port"] for p in endpoints["subsets"][0]["ports"]} == {port}
        await client.delete(ep_rt, "kube-dns", namespace)
        await wait_for(lambda: _exists(client, namespace), what="Endpoints re-registered")
    after = await client.get(ep_rt, "kube-dns", namespace)
    assert not after.get("subsets")  # withdrawn on stop


async def _resolves(port: int, name: str, want: list[str]) -> bool:
    return sorted(answers(await query(port, name))) == sorted(want)


async def _exists(client: Client, ns: str) -> bool:
    try:
        ep = await client.get(client.kind("v1", "Endpoints"), "kube-dns", ns)
    except errors.NotFound:
        return False
    return bool(ep.get("subsets"))


class FakeUpstream(asyncio.DatagramProtocol):
    """An upstream resolver on 127.0.0.1 answering every A query with 192.0.2.1 (TEST-NET-1)."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        request = DNSRecord.parse(data)
        reply = request.reply()
        reply.add_answer(RR(request.q.qname, QTYPE.A, rdata=A("192.0.2.1"), ttl=60))
        self.transport.sendto(reply.pack(), addr)  # type: ignore[attr-defined]


async def test_forwarding_only_when_enabled(client: Client, namespace: str) -> None:
    transport, _ = await asyncio.get_running_loop().create_datagram_endpoint(FakeUpstream,
                                                                             local_addr=("127.0.0.1", 0))
    upstream = transport.get_extra_info("sockname")[1]
    try:
        async with dns_server(client, namespace, register=False, forward=True,
                              upstreams=[("127.0.0.1", free_port()), ("127.0.0.1", upstream)]) as server:
            reply = await query(server.server.port, "example.org")
            # the first upstream refuses the connection: the second one's reply is relayed unchanged
            assert reply.header.rcode == RCODE.NOERROR and answers(reply) == ["192.0.2.1"]
            cluster = await query(server.server.port, "nope.svc.cluster.local")
            assert cluster.header.rcode == RCODE.NXDOMAIN  # cluster names are never forwarded
    finally:
        transport.close()


async def test_dns_command_serves_and_stops_on_sigterm(apiserver: APIServer, tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(render(apiserver.url))
    port = free_port()
    log = open(tmp_path / "dns.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen([sys.executable, "-m", "minik8s", "dns", "--kubeconfig", str(kubeconfig),
                             "--bind-address", "127.0.0.1", "--port", str(port), "--no-register"],
                            stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
    try:
        await wait_for(lambda: "dns serving" in (tmp_path / "dns.log").read_text(), timeout=20, what="dns up")
        reply = await query(port, "kubernetes.default.svc.cluster.local", tcp=True)
        assert reply.header.rcode in (RCODE.NOERROR, RCODE.NXDOMAIN)
        assert (await query(port, "cluster.local", "SOA")).rr[0].rtype == QTYPE.SOA
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(15)
        log.close()
    text = (tmp_path / "dns.log").read_text()
    assert code == 0 and "Traceback" not in text, text


async def test_tcp_clients_that_trickle_or_stall_are_closed(client: Client, namespace: str) -> None:
    """DNS over TCP, bounded like the HTTP listeners: a message is at most 65,535 bytes (its
    2-byte length prefix) and each part must arrive within ``tcp_idle_timeout``; a client that
    trickles a message or sends nothing is closed while others are answered."""
    async with dns_server(client, namespace) as server:
        server.server.tcp_idle_timeout = 1.0
        port = server.server.port

        async def closed_after(first: bytes, trickle: bytes) -> float:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            started = asyncio.get_running_loop().time()
            writer.write(first)
            try:
                while asyncio.get_running_loop().time() - started < 10:
                    try:
                        if await asyncio.wait_for(reader.read(1), 0.3) == b"":
                            break
                    except TimeoutError:
                        writer.write(trickle)
            except ConnectionError:
                pass
            writer.close()
            return asyncio.get_running_loop().time() - started

        stalls = [closed_after(b"", b""), closed_after(b"\xff\xff", b"a"), closed_after(b"\x00", b"")]
        results = await asyncio.gather(*stalls, query(port, "kubernetes.default.svc.cluster.local", tcp=True))
        assert all(t < 4 for t in results[:3]), results[:3]
        assert results[3].header.rcode in (RCODE.NOERROR, RCODE.NXDOMAIN)
