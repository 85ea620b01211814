"""Traffic policies in the proxy (kube-proxy 1.32's ``CategorizeEndpoints`` and iptables rules):
``internalTrafficPolicy: Local``, ``externalTrafficPolicy: Local``, terminating local endpoints, and the
health check node ports; no kernel."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import socket
from typing import Any

import pytest

from minik8s.host.errors import ConfigError
from minik8s.proxy.config import ProxyConfig
from minik8s.proxy.healthcheck import HealthCheckServers
from minik8s.proxy.iptables import (
    FILTER,
    ext_chain_name,
    programmed_endpoints,
    render,
    restore_payload,
    sep_chain,
    svc_chain,
    svl_chain,
)
from minik8s.proxy.servicemap import Endpoint, HealthCheck, ServicePortName, build_state
from tests.unit.test_proxy import CFG, rules_of, svc

NODE = "node-a"
NAME = ServicePortName("default", "web", "http")
PORT = [{"name": "http", "port": 8080, "protocol": "TCP"}]
SVC, SVL, EXT = svc_chain(CFG, NAME, "TCP"), svl_chain(CFG, NAME, "TCP"), ext_chain_name(CFG, NAME, "TCP")


def endpoint(ip: str, node: str | None, ready: bool = True, terminating: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"addresses": [ip], "conditions": {"ready": ready, "serving": ready or terminating,
                                                             "terminating": terminating}}
    if node:
        out["nodeName"] = node
    return out


def state(endpoints: list[dict[str, Any]], *, internal: str = "Cluster", external: str | None = None,
          type_: str = "ClusterIP", hcnp: int | None = None, node: str = NODE, sticky: bool = False) -> Any:
    """default/web 10.96.0.10:80 (nodePort 30080 unless ClusterIP) with ``endpoints`` on 8080, seen on ``node``."""
    port: dict[str, Any] = {"name": "http", "port": 80, "protocol": "TCP"}
    if type_ != "ClusterIP":
        port["nodePort"] = 30080
    service = svc("web", "10.96.0.10", [port], type_=type_)
    service["spec"]["internalTrafficPolicy"] = internal
    if external:
        service["spec"]["externalTrafficPolicy"] = external
    if hcnp:
        service["spec"]["healthCheckNodePort"] = hcnp
    if sticky:
        service["spec"].update(sessionAffinity="ClientIP", sessionAffinityConfig={"clientIP": {"timeoutSeconds": 60}})
    slice_ = {"metadata": {"namespace": "default", "name": "web-1", "labels": {"kubernetes.io/service-name": "web"}},
              "addressType": "IPv4", "endpoints": endpoints, "ports": PORT}
    return build_state([service], [slice_], node)


MIXED = [endpoint("10.244.1.2", NODE), endpoint("10.244.2.2", "node-b"), endpoint("10.244.1.3", NODE),
         endpoint("10.244.3.2", None)]


def text_of(st: Any) -> str:
    return restore_payload(render(st, CFG))


def test_local_endpoints_are_those_of_this_node_ready_else_serving_terminating() -> None:
    st = state(MIXED, internal="Local")
    assert st.local_endpoints[NAME] == (Endpoint("10.244.1.2", 8080), Endpoint("10.244.1.3", 8080))
    assert len(st.endpoints[NAME]) == 4
    # no ready local endpoint: the serving terminating local ones (not a remote ready one, not a non-serving one)
    st = state([endpoint("10.244.1.2", NODE, ready=False, terminating=True), endpoint("10.244.2.2", "node-b"),
                endpoint("10.244.1.4", NODE, ready=False)], internal="Local")
    assert st.local_endpoints[NAME] == (Endpoint("10.244.1.2", 8080),)
    assert st.endpoints[NAME] == (Endpoint("10.244.2.2", 8080),)
    # a proxy without a node name has no local endpoints
    assert state(MIXED, internal="Local", node="").local_endpoints[NAME] == ()


def test_internal_local_sends_cluster_ip_traffic_to_the_local_chain_only() -> None:
    text = text_of(state(MIXED, internal="Local"))
    assert rules_of(text, "KUBE-SERVICES")[0] == (
        '-A KUBE-SERVICES -d 10.96.0.10/32 -p tcp -m comment --comment "default/web:http cluster IP" -m tcp '
        f"--dport 80 -j {SVL}")
    svl = rules_of(text, SVL)
    assert svl[0] == (f"-A {SVL} ! -s 10.244.0.0/16 -d 10.96.0.10/32 -p tcp -m comment --comment "
                      '"default/web:http cluster IP" -m tcp --dport 80 -j KUBE-MARK-MASQ')
    assert [r.split()[-1] for r in svl[1:]] == [sep_chain(CFG, NAME, "TCP", Endpoint(ip, 8080))
                                                for ip in ("10.244.1.2", "10.244.1.3")]
    assert "--probability 0.5000000000" in svl[1]
    # no cluster-wide chain (nothing uses it) and no chain for the remote endpoints
    assert f":{SVC} " not in text and f":{EXT} " not in text
    assert sep_chain(CFG, NAME, "TCP", Endpoint("10.244.2.2", 8080)) not in text
    assert programmed_endpoints(text, CFG) == {"10.96.0.10:80/tcp": ["10.244.1.2:8080", "10.244.1.3:8080"]}
    assert "has no" not in text


def test_internal_local_without_local_endpoints_drops_and_without_any_rejects() -> None:
    st = state([endpoint("10.244.2.2", "node-b")], internal="Local")
    rs = render(st, CFG)
    flt = rs.tables[FILTER].rules
    assert ('-A KUBE-SERVICES -d 10.96.0.10/32 -p tcp -m comment --comment "default/web:http has no local '
            'endpoints" -m tcp --dport 80 -j DROP') in flt
    assert "-SVL-" not in rs.text() and "-SEP-" not in rs.text()
    assert "10.96.0.10" not in "\n".join(rs.tables["nat"].rules)
    empty = render(state([], internal="Local"), CFG).tables[FILTER].rules
    assert any('"default/web:http has no endpoints"' in r and r.endswith("REJECT --reject-with icmp-port-unreachable")
               for r in empty)
    assert not any("no local endpoints" in r for r in empty)


def test_external_local_keeps_the_client_address_and_short_circuits_pods_and_the_node() -> None:
    text = text_of(state(MIXED, external="Local", type_="NodePort"))
    assert rules_of(text, "KUBE-NODEPORTS") == [
        f'-A KUBE-NODEPORTS -p tcp -m comment --comment "default/web:http" -m tcp --dport 30080 -j {EXT}']
    assert rules_of(text, EXT) == [
        f'-A {EXT} -s 10.244.0.0/16 -m comment --comment "pod traffic for default/web:http external destinations" '
        f"-j {SVC}",
        f'-A {EXT} -m comment --comment "masquerade LOCAL traffic for default/web:http external destinations" '
        "-m addrtype --src-type LOCAL -j KUBE-MARK-MASQ",
        f'-A {EXT} -m comment --comment "route LOCAL traffic for default/web:http external destinations" '
        f"-m addrtype --src-type LOCAL -j {SVC}",
        f"-A {EXT} -j {SVL}"]
    # ClusterIP traffic (policy Cluster) still reaches all four; the local chain has the two local ones
    assert rules_of(text, "KUBE-SERVICES")[0].endswith(f"-j {SVC}")
    assert len([r for r in rules_of(text, SVC) if "-SEP-" in r]) == 4
    assert len([r for r in rules_of(text, SVL) if "-SEP-" in r]) == 2
    assert not any("MARK-MASQ" in r for r in rules_of(text, SVL))  # no masquerade on the external path
    # one SEP chain per endpoint, even for endpoints in both chains
    assert text.count(f":{sep_chain(CFG, NAME, 'TCP', Endpoint('10.244.1.2', 8080))} ") == 1


def test_external_local_without_local_endpoints_drops_what_is_not_short_circuited() -> None:
    rs = render(state([endpoint("10.244.2.2", "node-b")], external="Local", type_="NodePort"), CFG)
    text = restore_payload(rs)
    ext = rules_of(text, EXT)
    assert len(ext) == 3 and not any(r.endswith(f"-j {SVL}") for r in ext)  # pods and the node still get through
    assert ("-A KUBE-EXTERNAL-SERVICES -m addrtype --dst-type LOCAL -p tcp -m comment --comment "
            '"default/web:http has no local endpoints" -m tcp --dport 30080 -j DROP') in rs.tables[FILTER].rules
    assert not any("KUBE-SERVICES" in r and "DROP" in r for r in rs.tables[FILTER].rules)  # ClusterIP is Cluster
    # a Cluster policy never drops
    cluster = render(state([endpoint("10.244.2.2", "node-b")], type_="NodePort"), CFG).tables[FILTER].rules
    assert not any(r.endswith("-j DROP") for r in cluster if "SERVICES" in r)


def test_both_policies_local_with_affinity() -> None:
    text = text_of(state(MIXED, internal="Local", external="Local", type_="NodePort", sticky=True))
    assert rules_of(text, "KUBE-SERVICES")[0].endswith(f"-j {SVL}")
    # the cluster-wide chain exists for the short-circuited traffic, without the ClusterIP masquerade rule
    assert not any("MARK-MASQ" in r for r in rules_of(text, SVC))
    assert len([r for r in rules_of(text, SVL) if "--rcheck" in r]) == 2
    assert len([r for r in rules_of(text, SVC) if "--rcheck" in r]) == 4


def test_ipvs_mode_renders_the_drops_but_no_chains() -> None:
    rs = render(state([endpoint("10.244.2.2", "node-b")], internal="Local"), CFG, mode="ipvs")
    assert any(r.endswith("-j DROP") and "has no local endpoints" in r for r in rs.tables[FILTER].rules)
    assert not any("-SVL-" in c or "-EXT-" in c for c in rs.tables["nat"].chains)


def test_health_checks_count_local_ready_endpoints_of_local_load_balancers() -> None:
    eps = [endpoint("10.244.1.2", NODE), endpoint("10.244.1.3", NODE, ready=False, terminating=True),
           endpoint("10.244.2.2", "node-b")]
    st = state(eps, external="Local", type_="LoadBalancer", hcnp=31000)
    assert st.health_checks == {31000: HealthCheck("default", "web", 31000, 1)}
    assert rules_of("\n".join(render(st, CFG).tables[FILTER].rules), "KUBE-NODEPORTS") == [(
        '-A KUBE-NODEPORTS -m comment --comment "default/web health check node port" -m tcp -p tcp --dport 31000 '
        "-j ACCEPT")]
    assert state([], external="Local", type_="LoadBalancer", hcnp=31000).health_checks[31000].local_endpoints == 0
    # only a LoadBalancer with externalTrafficPolicy Local has one
    assert state(eps, external="Cluster", type_="LoadBalancer", hcnp=31000).health_checks == {}
    assert state(eps, external="Local", type_="NodePort", hcnp=31000).health_checks == {}


# ---------------------------------------------------------------------------- --nodeport-addresses
def test_nodeport_addresses_jump_per_local_address() -> None:
    cfg = ProxyConfig(nodeport_addresses=("127.0.0.0/8", "primary"), node_ip="192.0.2.7").validate()
    assert cfg.nodeport_ips(["10.0.0.5", "127.0.0.1", "192.0.2.7", "192.0.2.8"]) == ["127.0.0.1", "192.0.2.7"]
    st = dataclasses.replace(state(MIXED, type_="NodePort"), node_port_ips=("127.0.0.1", "192.0.2.7"))
    text = restore_payload(render(st, cfg))
    last = "service nodeports; NOTE: this must be the last rule in this chain"
    assert [r for r in rules_of(text, "KUBE-SERVICES") if last in r] == [
        f'-A KUBE-SERVICES -d {ip}/32 -m comment --comment "kubernetes {last}" -j KUBE-NODEPORTS'
        for ip in ("127.0.0.1", "192.0.2.7")]
    assert rules_of(text, "KUBE-FIREWALL")  # loopback answers: the localnet firewall rule stays
    text = restore_payload(render(dataclasses.replace(st, node_port_ips=("192.0.2.7",)), cfg))
    assert not rules_of(text, "KUBE-FIREWALL") and "--dst-type LOCAL -j KUBE-NODEPORTS" not in text
    with pytest.raises(ConfigError, match="--nodeport-addresses"):
        ProxyConfig(nodeport_addresses=("fd00::/64",)).validate()


# ---------------------------------------------------------------------------- health check servers
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def fetch(port: int, request: bytes = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n") -> tuple[int, dict[str, str],
                                                                                                bytes]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request)
        data = await asyncio.wait_for(reader.read(), 5)
    except ConnectionResetError:  # (the server closed with our bytes unread)
        data = b""
    writer.close()
    if not data:
        return 0, {}, b""  # closed without an answer
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), headers, body


async def test_health_check_servers_answer_200_with_local_endpoints_and_503_without() -> None:
    servers = HealthCheckServers()
    port = free_port()
    try:
        await servers.sync({port: HealthCheck("default", "web", port, 2)}, True, ["127.0.0.1"])
        status, headers, body = await fetch(port)
        assert status == 200 and headers["Content-Type"] == "application/json"
        assert headers["X-Load-Balancing-Endpoint-Weight"] == "2" and headers["X-Content-Type-Options"] == "nosniff"
        assert json.loads(body) == {"service": {"namespace": "default", "name": "web"}, "localEndpoints": 2,
                                    "serviceProxyHealthy": True}
        assert body.startswith(b'{\n\t"service": {\n\t\t"namespace": "default",')  # kube-proxy's layout
        await servers.sync({port: HealthCheck("default", "web", port, 0)}, True, ["127.0.0.1"])
        status, _, body = await fetch(port, b"GET / HTTP/1.0\r\n\r\n")  # any path, as kube-proxy
        assert status == 503 and json.loads(body)["localEndpoints"] == 0
        await servers.sync({port: HealthCheck("default", "web", port, 1)}, False, ["127.0.0.1"])
        status, _, body = await fetch(port)
        assert status == 503 and json.loads(body)["serviceProxyHealthy"] is False
        # hostile input: an oversized head gets no answer, and the server goes on
        assert (await fetch(port, b"GET /" + b"a" * 10000 + b" HTTP/1.1\r\n\r\n"))[2] == b""
        assert (await fetch(port))[0] == 503
        # the Service loses its port: closed
        await servers.sync({}, True, ["127.0.0.1"])
        with pytest.raises(OSError):
            await fetch(port)
    finally:
        await servers.close()


async def test_health_check_port_in_use_is_retried_at_the_next_sync() -> None:
    servers = HealthCheckServers()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        check = {port: HealthCheck("default", "web", port, 1)}
        await servers.sync(check, True, ["127.0.0.1"])
        assert port not in servers.servers  # (logged)
    try:
        await servers.sync(check, True, ["127.0.0.1"])
        assert (await fetch(port))[0] == 200
    finally:
        await servers.close()
