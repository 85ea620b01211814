"""Issue 5: ``minik8s proxy`` programs real netfilter rules that carry real traffic.

The module runs one proxy process (``python -m minik8s proxy``) against the session
apiserver with its own chain prefix (``KT`` + 5 hex), its own slice of the service CIDR
(``10.96.X.0/24``, routed to its own port-less bridge) and the cluster CIDR 10.244.0.0/16.
Backends are three busybox httpd containers on a Docker bridge network of our own (a free
``10.244.Y.0/24``), each answering its own name.  Services and their EndpointSlices are
created through the API (no selector, so no controller touches the slices).

Network safety: traffic goes only to our containers, our ClusterIPs (DNATed to our
containers or rejected locally) and this machine's own address (NodePort).  Everything —
chains, jumps, routes, bridges, containers, networks — is removed by the fixtures, even on
failure.
"""

from __future__ import annotations

import ipaddress
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker
import pytest

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.client.kubeconfig import ClientConfig, render
from minik8s.client.rest import Client
from minik8s.host.addresses import default_node_name
from minik8s.proxy.iptables import sep_chain, svc_chain
from minik8s.proxy.ipvs import ipvs_unavailable_reason
from minik8s.proxy.routing import default_node_ip
from minik8s.proxy.servicemap import Endpoint, ServicePortName
from tests.support.processes import ROOT, APIServer, Etcd
from tests.support.proxy import (
    IMAGE,
    PROXY_MARKS,
    ProxyProcess,
    chains_with_prefix,
    create_network,
    http_get,
    iptables_save,
    link_exists,
)
from tests.support.waiting import wait_for_sync

pytestmark = PROXY_MARKS
















# ---------------------------------------------------------------------------- backends
@dataclass
class Backends:
    network: str
    gateway: str
    containers: list[Any]
    ips: list[str]
    names: list[str]

    def exec_wget(self, index: int, url: str) -> tuple[int, str]:
        code, out = self.containers[index].exec_run(["timeout", "5", "wget", "-q", "-O-", url])
        return code, out.decode(errors="replace").strip()




@pytest.fixture(scope="module")
def backends() -> Iterator[Backends]:
    """Three busybox httpd containers (port 8080) answering their own names."""
    engine = docker.from_env()
    tag = os.urandom(3).hex()
    labels = {"minik8s.test": f"proxy-{tag}"}
    name = f"mk8s-pt-{tag}"
    net, gateway = create_network(engine, name, labels)
    containers: list[Any] = []
    try:
        for i in range(3):
            cname = f"{name}-b{i}"
            script = f"mkdir -p /www && echo {cname} > /www/index.html && exec httpd -f -p 8080 -h /www"
            containers.append(engine.containers.run(IMAGE, ["sh", "-c", script], name=cname, detach=True,
                                                    network=name, labels=labels))
        ips = []
        for c in containers:
            c.reload()
            ips.append(c.attrs["NetworkSettings"]["Networks"][name]["IPAddress"])
        for ip in ips:
            wait_for_sync(lambda ip=ip: _answers(ip, 8080), timeout=20, interval=0.1)  # type: ignore[misc]
        # hairpin mode on our bridge's ports, as a pod network must set it (CNI bridge ``hairpinMode``):
        # with br_netfilter a pod DNATed to itself is bridged back out the port it came in on
        for port in Path(f"/sys/class/net/{name}/brif").iterdir():
            (port / "hairpin_mode").write_text("1")
        yield Backends(name, gateway, containers, ips, [c.name for c in containers])
    finally:
        for c in containers:
            try:
                c.remove(force=True)
            except docker.errors.APIError:
                pass
        net.remove()


def _answers(ip: str, port: int) -> bool:
    try:
        return bool(http_get(ip, port, timeout=1))
    except OSError:
        return False




ROUTE_LOCALNET = "/proc/sys/net/ipv4/conf/all/route_localnet"


# ---------------------------------------------------------------------------- API helpers
async def create_service(client: Client, ns: str, name: str, third: int, *, node_port: bool = False,
                         spec: Obj | None = None) -> Obj:
    """A selector-less Service (port 80 → targetPort 8080, port name ``http``) with a ClusterIP in
    10.96.<third>.0/24; ``spec``: more fields of its spec."""
    rt = client.kind("v1", "Service")
    for _ in range(20):
        body = {"metadata": {"name": name, "namespace": ns},
                "spec": {"type": "NodePort" if node_port else "ClusterIP",
                         "clusterIP": f"10.96.{third}.{random.randint(2, 254)}",
                         "ports": [{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"}],
                         **(spec or {})}}
        try:
            return await client.create(rt, body, ns)
        except errors.Invalid as exc:
            if "already allocated" not in str(exc):
                raise
    raise AssertionError("no free ClusterIP in the slice")


def endpoints_body(ns: str, name: str, ips: list[str], nodes: dict[str, str] | None = None) -> Obj:
    """The EndpointSlice ``name`` of Service ``name`` (kube-proxy reads slices): ``ips`` ready on 8080;
    ``nodes``: the ``nodeName`` of some of them."""
    endpoints: list[Obj] = [{"addresses": [ip], "conditions": {"ready": True}} for ip in ips]
    for endpoint in endpoints:
        if (nodes or {}).get(endpoint["addresses"][0]):
            endpoint["nodeName"] = (nodes or {})[endpoint["addresses"][0]]
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "addressType": "IPv4",
            "metadata": {"name": name, "namespace": ns, "labels": {"kubernetes.io/service-name": name}},
            "endpoints": endpoints, "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}]}


async def set_endpoints(client: Client, ns: str, name: str, ips: list[str], nodes: dict[str, str] | None = None,
                        ) -> None:
    rt = client.kind("discovery.k8s.io/v1", "EndpointSlice")
    try:
        current = await client.get(rt, name, ns)
    except errors.NotFound:
        await client.create(rt, endpoints_body(ns, name, ips, nodes), ns)
        return
    body = endpoints_body(ns, name, ips, nodes)
    body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
    await client.update(rt, body)


def spread(host: str, port: int, n: int) -> dict[str, int]:
    counts: dict[str, int] = {}
    for _ in range(n):
        body = http_get(host, port)
        counts[body] = counts.get(body, 0) + 1
    return counts


# ---------------------------------------------------------------------------- tests
def test_ipvs_mode_is_refused_on_a_kernel_without_ipvs(tmp_path: Path) -> None:
    if ipvs_unavailable_reason() is None:
        pytest.skip("this kernel has IPVS")
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(render("http://127.0.0.1:9"))
    proc = subprocess.run([sys.executable, "-m", "minik8s", "proxy", "--proxy-mode", "ipvs", "--kubeconfig",
                           str(kubeconfig), "--chain-prefix", "KTipvs"], capture_output=True, text=True, cwd=ROOT,
                          timeout=60)
    assert proc.returncode == 1
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "IPVS proxy mode is not available" in lines[0], proc.stderr
    assert not chains_with_prefix("KTipvs")


def test_auto_mode_falls_back_to_iptables_and_routes_the_service_cidr(proxy: ProxyProcess) -> None:
    if ipvs_unavailable_reason() is not None:
        assert "proxy-mode auto: using iptables" in proxy.log()
    routes = subprocess.run(["ip", "-j", "route", "show", "exact", proxy.cidr], capture_output=True, text=True).stdout
    assert f'"dev":"{proxy.cfg.service_bridge}"' in routes and "blackhole" not in routes
    jumps = [line for line in iptables_save("nat").splitlines() if line.startswith(("-A OUTPUT", "-A PREROUTING"))]
    for chain in ("OUTPUT", "PREROUTING"):
        assert f'-A {chain} -m comment --comment "minik8s {proxy.prefix} service portals" -j {proxy.prefix}-SERVICES' \
            in jumps, (jumps, proxy.log()[-3000:])


async def test_cluster_ip_from_the_host_and_from_a_pod(proxy: ProxyProcess, backends: Backends, client: Client,
                                                       namespace: str) -> None:
    svc = await create_service(client, namespace, "web", proxy.third)
    ip = svc["spec"]["clusterIP"]
    await set_endpoints(client, namespace, "web", backends.ips)
    proxy.wait_programmed(ip, 80, [f"{b}:8080" for b in backends.ips])

    counts = spread(ip, 80, 60)
    assert set(counts) == set(backends.names), counts  # every backend took part
    assert min(counts.values()) >= 5, counts  # random 1/3 each: P(<5 of 60) is ~1e-5

    answers = set()
    for _ in range(12):  # from inside backend 0: other pods and itself (hairpin)
        code, out = backends.exec_wget(0, f"http://{ip}:80/")
        assert code == 0, out
        answers.add(out)
    assert answers <= set(backends.names) and len(answers) >= 2

    # hairpin: a pod reaching itself through a ClusterIP (masqueraded, so the reply comes back)
    self_svc = await create_service(client, namespace, "self", proxy.third)
    self_ip = self_svc["spec"]["clusterIP"]
    await set_endpoints(client, namespace, "self", backends.ips[:1])
    proxy.wait_programmed(self_ip, 80, [f"{backends.ips[0]}:8080"])
    assert backends.exec_wget(0, f"http://{self_ip}:80/") == (0, backends.names[0])


async def test_node_port_from_the_host(proxy: ProxyProcess, backends: Backends, client: Client,
                                       namespace: str) -> None:
    node_ip = default_node_ip()
    if node_ip is None:
        pytest.skip("no default route: no node address to test NodePorts on")
    svc = await create_service(client, namespace, "np", proxy.third, node_port=True)
    node_port = svc["spec"]["ports"][0]["nodePort"]
    await set_endpoints(client, namespace, "np", backends.ips[:2])
    proxy.wait_programmed(svc["spec"]["clusterIP"], 80, [f"{b}:8080" for b in backends.ips[:2]])
    counts = spread(node_ip, node_port, 30)  # this machine's own address: stays local
    assert set(counts) == set(backends.names[:2]), counts
    if ipvs_unavailable_reason() is None:
        return  # IPVS mode: no localhost NodePorts (as in kube-proxy)
    # NodePorts answer on 127.0.0.1 too, as kube-proxy's iptables mode does by default
    assert Path(ROUTE_LOCALNET).read_text().strip() == "1"
    counts = spread("127.0.0.1", node_port, 20)
    assert set(counts) <= set(backends.names[:2]) and counts, counts


def recent_clients(sep: str) -> list[str]:
    """The source addresses in the kernel's ``recent`` list of an endpoint chain (empty: no list)."""
    path = Path("/proc/net/xt_recent") / sep
    if not path.exists():
        return []
    return [line.split()[0].removeprefix("src=") for line in path.read_text().splitlines() if line.strip()]


async def test_client_ip_session_affinity(proxy: ProxyProcess, backends: Backends, client: Client,
                                          namespace: str) -> None:
    """``sessionAffinity: ClientIP``: every connection of one client reaches the endpoint its first one
    reached (ClusterIP and NodePort alike; a pod is a client of its own), the endpoint chain's ``recent``
    list holds the client; back to ``None``, the connections spread again."""
    with pytest.raises(errors.Invalid, match=r"spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: "
                       r"86401: must be greater than 0 and less than 86400"):
        await create_service(client, namespace, "sticky", proxy.third, spec={
            "sessionAffinity": "ClientIP", "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 86401}}})
    svc = await create_service(client, namespace, "sticky", proxy.third, node_port=True,
                               spec={"sessionAffinity": "ClientIP"})
    assert svc["spec"]["sessionAffinityConfig"] == {"clientIP": {"timeoutSeconds": 10800}}  # the apiserver's
    ip, node_port = svc["spec"]["clusterIP"], svc["spec"]["ports"][0]["nodePort"]
    await set_endpoints(client, namespace, "sticky", backends.ips)
    proxy.wait_programmed(ip, 80, [f"{b}:8080" for b in backends.ips])
    name = ServicePortName(namespace, "sticky", "http")
    seps = [sep_chain(proxy.cfg, name, "TCP", Endpoint(b, 8080)) for b in backends.ips]

    counts = spread(ip, 80, 30)  # without affinity, P(30 of 30 on one of 3) is 3e-14
    assert len(counts) == 1, counts
    chosen = backends.names.index(next(iter(counts)))
    lists = [recent_clients(sep) for sep in seps]
    assert len(lists[chosen]) == 1 and not any(lists[i] for i in range(3) if i != chosen), lists

    # a new timeout rewrites the chains; the kernel keeps the lists, so the client keeps its endpoint
    rt = client.kind("v1", "Service")
    await client.patch(rt, "sticky", {"spec": {"sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 3600}}}},
                       namespace)
    chain = svc_chain(proxy.cfg, name, "TCP")
    wait_for_sync(lambda: f"--seconds 3600 --reap --name {seps[0]} " in iptables_save("nat"), timeout=10)
    assert spread(ip, 80, 10) == {backends.names[chosen]: 10}

    node_ip = default_node_ip()
    if node_ip is not None:  # the NodePort enters the same service chain: one backend for this client too
        assert len(spread(node_ip, node_port, 15)) == 1
    answers = set()
    for _ in range(6):  # a pod: a client of its own address, also kept on one backend
        code, out = backends.exec_wget(1, f"http://{ip}:80/")
        assert code == 0, out
        answers.add(out)
    assert len(answers) == 1 and answers <= set(backends.names), answers

    back = await client.patch(rt, "sticky", {"spec": {"sessionAffinity": "None"}}, namespace)
    assert "sessionAffinityConfig" not in back["spec"]  # dropped with None, as Kubernetes' defaulting does
    wait_for_sync(lambda: not any(line.startswith(f"-A {chain} ") and "recent" in line
                                  for line in iptables_save("nat").splitlines()), timeout=10)
    counts = spread(ip, 80, 30)
    assert len(counts) >= 2, counts  # P(all 30 on one of 3) is 3e-14


async def test_endpoint_changes_and_programming_latency(proxy: ProxyProcess, backends: Backends, client: Client,
                                                        namespace: str) -> None:
    svc = await create_service(client, namespace, "lat", proxy.third)
    ip = svc["spec"]["clusterIP"]
    await set_endpoints(client, namespace, "lat", backends.ips)
    proxy.wait_programmed(ip, 80, [f"{b}:8080" for b in backends.ips])

    await set_endpoints(client, namespace, "lat", backends.ips[:2])  # backend 2 leaves the rotation
    proxy.wait_programmed(ip, 80, [f"{b}:8080" for b in backends.ips[:2]])
    counts = spread(ip, 80, 30)
    assert backends.names[2] not in counts and set(counts) == set(backends.names[:2]), counts

    samples = []
    for i in range(20):
        ips = backends.ips if i % 2 else backends.ips[:2]
        if i % 2 == 0:
            ips = [backends.ips[i % 3]]
        t0 = time.perf_counter()
        await set_endpoints(client, namespace, "lat", ips)
        proxy.wait_programmed(ip, 80, [f"{b}:8080" for b in ips], timeout=5)
        samples.append(time.perf_counter() - t0)
    samples.sort()
    p50, p99 = statistics.median(samples), samples[-1]
    print(f"\nprogramming latency p50={p50 * 1000:.0f}ms p99={p99 * 1000:.0f}ms n={len(samples)}")
    assert p99 < 2.0, samples
    assert p50 < 1.0, samples


async def test_service_without_endpoints_is_refused_fast(proxy: ProxyProcess, client: Client,
                                                         namespace: str) -> None:
    svc = await create_service(client, namespace, "empty", proxy.third, node_port=True)
    ip, node_port = svc["spec"]["clusterIP"], svc["spec"]["ports"][0]["nodePort"]
    await set_endpoints(client, namespace, "empty", [])
    wait_for_sync(lambda: f"{namespace}/empty:http has no endpoints" in iptables_save("filter"), timeout=10)
    t0 = time.perf_counter()
    with pytest.raises(ConnectionRefusedError):
        http_get(ip, 80, timeout=5)
    assert time.perf_counter() - t0 < 1.0
    node_ip = default_node_ip()
    if node_ip:
        with pytest.raises(ConnectionRefusedError):
            http_get(node_ip, node_port, timeout=5)


async def test_deleting_the_service_removes_its_chains(proxy: ProxyProcess, backends: Backends, client: Client,
                                                       namespace: str) -> None:
    svc = await create_service(client, namespace, "gone", proxy.third)
    ip = svc["spec"]["clusterIP"]
    await set_endpoints(client, namespace, "gone", backends.ips)
    proxy.wait_programmed(ip, 80, [f"{b}:8080" for b in backends.ips])
    chain = svc_chain(proxy.cfg, ServicePortName(namespace, "gone", "http"), "TCP")
    nat = iptables_save("nat")
    seps = {line.split()[-1] for line in nat.splitlines() if line.startswith(f"-A {chain} ") and "-SEP-" in line}
    assert len(seps) == 3
    await client.delete(client.kind("v1", "Service"), "gone", namespace)
    wait_for_sync(lambda: chain not in iptables_save("nat"), timeout=10)
    nat = iptables_save("nat")
    assert not any(sep in nat for sep in seps) and ip not in nat
    assert ip not in iptables_save("filter")


# ---------------------------------------------------------------------------- traffic policies
OTHER_NODE = "mk8s-other-node"


def wait_filter(text: str, present: bool = True) -> None:
    wait_for_sync(lambda: (text in iptables_save("filter")) == present, timeout=10)


async def test_internal_traffic_policy_local(proxy: ProxyProcess, backends: Backends, client: Client,
                                             namespace: str) -> None:
    """``internalTrafficPolicy: Local``: ClusterIP connections reach only the endpoints on the proxy's node;
    with none there, they are dropped (not refused) while the Service has endpoints elsewhere."""
    svc = await create_service(client, namespace, "itp", proxy.third, spec={"internalTrafficPolicy": "Local"})
    ip = svc["spec"]["clusterIP"]
    here = default_node_name()
    nodes = {backends.ips[0]: here, backends.ips[1]: here, backends.ips[2]: OTHER_NODE}
    await set_endpoints(client, namespace, "itp", backends.ips, nodes)
    proxy.wait_programmed(ip, 80, [f"{b}:8080" for b in backends.ips[:2]])
    counts = spread(ip, 80, 20)
    assert set(counts) == set(backends.names[:2]), counts  # P(one of two missing in 20) is 2e-6

    await set_endpoints(client, namespace, "itp", backends.ips[1:], {b: OTHER_NODE for b in backends.ips})
    wait_filter(f"{namespace}/itp:http has no local endpoints")
    with pytest.raises(TimeoutError):  # DROP: no answer at all
        http_get(ip, 80, timeout=0.5)
    await set_endpoints(client, namespace, "itp", backends.ips[2:], {backends.ips[2]: here})
    proxy.wait_programmed(ip, 80, [f"{backends.ips[2]}:8080"])
    assert spread(ip, 80, 3) == {backends.names[2]: 3}


@pytest.fixture
def outside_client(backends: Backends) -> Iterator[Any]:
    """A container on a Docker network of its own outside the cluster CIDR, without masquerading, allowed
    to forward to the backends' network (a client from outside the cluster); yields (container, its
    gateway: a node address)."""
    engine = docker.from_env()
    tag = os.urandom(3).hex()
    labels = {"minik8s.test": f"proxy-client-{tag}"}
    name = f"mk8s-pc-{tag}"
    net = engine.networks.create(name, driver="bridge", labels=labels,
                                 options={"com.docker.network.bridge.name": name,
                                          "com.docker.network.bridge.enable_ip_masquerade": "false"})
    rules: list[list[str]] = []
    container = None
    try:
        net.reload()
        subnet = net.attrs["IPAM"]["Config"][0]["Subnet"]
        gateway = net.attrs["IPAM"]["Config"][0].get("Gateway") or str(
            next(ipaddress.ip_network(subnet).hosts()))
        backend_net = engine.networks.get(backends.network).attrs["IPAM"]["Config"][0]["Subnet"]
        for src, dst in ((subnet, backend_net), (backend_net, subnet)):  # (Docker isolates its bridges)
            rule = ["FORWARD", "-s", src, "-d", dst, "-m", "comment", "--comment", f"minik8s test {tag}", "-j",
                    "ACCEPT"]
            subprocess.run(["iptables", "-I", *rule], check=True)
            rules.append(rule)
        container = engine.containers.run(IMAGE, ["sleep", "120"], name=name, detach=True, network=name,
                                          labels=labels)
        yield container, gateway
    finally:
        if container is not None:
            container.remove(force=True)
        for rule in rules:
            subprocess.run(["iptables", "-D", *rule], check=False)
        net.remove()


def client_get(container: Any, url: str) -> str | None:
    """One GET from ``container`` (None: no answer within a second)."""
    code, out = container.exec_run(["timeout", "1", "wget", "-q", "-O-", url])
    return out.decode(errors="replace").strip() if code == 0 else None


async def test_external_traffic_policy_local_on_a_node_port(proxy: ProxyProcess, backends: Backends,
                                                            client: Client, namespace: str,
                                                            outside_client: tuple[Any, str]) -> None:
    """``externalTrafficPolicy: Local``: a NodePort reached from outside the cluster goes only to this node's
    endpoints, with the client's address kept; with none here it is dropped, while traffic from the node
    itself still reaches the Service (kube-proxy's short-circuit)."""
    container, gateway = outside_client
    for b in backends.containers:  # a CGI that answers with the client's address
        b.exec_run(["sh", "-c", "mkdir -p /www/cgi-bin && printf '#!/bin/sh\\necho Content-Type: text/plain"
                                "\\necho\\necho $REMOTE_ADDR\\n' > /www/cgi-bin/ip && chmod +x /www/cgi-bin/ip"])
    svc = await create_service(client, namespace, "etp", proxy.third, node_port=True,
                               spec={"externalTrafficPolicy": "Local"})
    assert svc["spec"]["externalTrafficPolicy"] == "Local"
    node_port = svc["spec"]["ports"][0]["nodePort"]
    here = default_node_name()
    await set_endpoints(client, namespace, "etp", backends.ips, {backends.ips[0]: here,
                                                                 backends.ips[1]: OTHER_NODE,
                                                                 backends.ips[2]: OTHER_NODE})
    proxy.wait_programmed(svc["spec"]["clusterIP"], 80, [f"{b}:8080" for b in backends.ips])
    url = f"http://{gateway}:{node_port}/"
    wait_for_sync(lambda: client_get(container, url) is not None, timeout=10)
    answers = {client_get(container, url) for _ in range(8)}
    assert answers == {backends.names[0]}, answers  # by chance (any endpoint): P is 1.5e-4
    container.reload()
    client_ip = container.attrs["NetworkSettings"]["Networks"][container.name]["IPAddress"]
    seen = client_get(container, url + "cgi-bin/ip")
    assert seen is not None and seen.strip("[]").removeprefix("::ffff:") == client_ip, seen  # not masqueraded

    await set_endpoints(client, namespace, "etp", backends.ips, {b: OTHER_NODE for b in backends.ips})
    wait_filter(f"{namespace}/etp:http has no local endpoints")
    assert client_get(container, url) is None  # dropped
    assert http_get("127.0.0.1", node_port, timeout=5) in backends.names  # the node itself: cluster-wide


async def test_health_check_node_port_follows_local_endpoints(
        backends: Backends, tmp_path_factory: pytest.TempPathFactory) -> None:
    """A LoadBalancer with ``externalTrafficPolicy: Local`` gets a ``healthCheckNodePort`` from the apiserver;
    the proxy (its own control plane, ``--nodeport-addresses 127.0.0.0/8``: loopback only) answers on it 200
    with local endpoints and 503 without, and closes it with the Service."""
    work = tmp_path_factory.mktemp("proxy-hc")
    etcd = Etcd(work)
    api = APIServer(etcd, work)
    node = "mk8s-hc-node"
    p = ProxyProcess(api.url, work, ["--nodeport-addresses", "127.0.0.0/8", "--hostname-override", node,
                                     "--no-network-policy"])
    try:
        async with Client(ClientConfig(server=api.url), retries=0) as client:
            await client.create(client.kind("v1", "Namespace"), {"metadata": {"name": "hc"}})
            p.start()
            svc = await create_service(client, "hc", "lb", p.third, spec={"type": "LoadBalancer",
                                                                        "externalTrafficPolicy": "Local"})
            port = svc["spec"]["healthCheckNodePort"]

            def health() -> tuple[int, Obj] | None:
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
                        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: node\r\n\r\n")
                        data = b""
                        while chunk := s.recv(4096):
                            data += chunk
                except OSError:
                    return None
                head, _, body = data.partition(b"\r\n\r\n")
                return int(head.split()[1]), json.loads(body)

            await set_endpoints(client, "hc", "lb", backends.ips, {backends.ips[0]: node, backends.ips[1]: node})
            wait_for_sync(lambda: (health() or (0,))[0] == 200, timeout=10)
            assert health() == (200, {"service": {"namespace": "hc", "name": "lb"}, "localEndpoints": 2,
                                      "serviceProxyHealthy": True})
            assert f"hc/lb health check node port\" -m tcp --dport {port} -j ACCEPT" in iptables_save("filter")
            await set_endpoints(client, "hc", "lb", backends.ips, {b: OTHER_NODE for b in backends.ips})
            wait_for_sync(lambda: (health() or (0,))[0] == 503, timeout=10)
            assert (health() or (0, {}))[1]["localEndpoints"] == 0
            await set_endpoints(client, "hc", "lb", backends.ips[2:], {backends.ips[2]: node})
            wait_for_sync(lambda: health() == (200, {"service": {"namespace": "hc", "name": "lb"},
                                                     "localEndpoints": 1, "serviceProxyHealthy": True}), timeout=10)
            node_ip = default_node_ip()
            if node_ip:  # loopback only: not on the node's other addresses
                with pytest.raises(OSError):
                    socket.create_connection((node_ip, port), timeout=1).close()
            await client.delete(client.kind("v1", "Service"), "lb", "hc")
            wait_for_sync(lambda: health() is None, timeout=10)
    finally:
        p.stop()
        p.cleanup()
        api.stop()
        etcd.stop()


async def test_rules_survive_apiserver_outage_and_restart_then_cleanup(
        backends: Backends, tmp_path_factory: pytest.TempPathFactory) -> None:
    """A second control plane (own etcd + apiserver) and a second proxy instance: the apiserver
    goes away (rules stay, traffic flows), the proxy restarts (rules stay), both come back and
    a change is programmed; then ``--cleanup`` leaves nothing of the instance behind."""
    work = tmp_path_factory.mktemp("proxy-outage")
    etcd = Etcd(work)
    api = APIServer(etcd, work)
    p = ProxyProcess(api.url, work, ["--sync-period", "1"])
    try:
        async with Client(ClientConfig(server=api.url), retries=0) as client:
            await client.create(client.kind("v1", "Namespace"), {"metadata": {"name": "outage"}})
            p.start()
            svc = await create_service(client, "outage", "web", p.third)
            ip = svc["spec"]["clusterIP"]
            await set_endpoints(client, "outage", "web", backends.ips[:2])
            p.wait_programmed(ip, 80, [f"{b}:8080" for b in backends.ips[:2]])

            api.stop()
            time.sleep(2.5)  # two full resyncs without an apiserver
            assert p.programmed()[f"{ip}:80/tcp"] == sorted(f"{b}:8080" for b in backends.ips[:2])
            assert set(spread(ip, 80, 20)) <= set(backends.names[:2])

            p.stop()  # the proxy goes away too: its rules stay
            assert set(spread(ip, 80, 10)) <= set(backends.names[:2])
            offset = p.start(wait=False)  # starts while the apiserver is away: must not flush
            time.sleep(2.0)
            assert p.proc is not None and p.proc.poll() is None, p.log()[offset:]
            assert p.programmed()[f"{ip}:80/tcp"] == sorted(f"{b}:8080" for b in backends.ips[:2])
            assert " synced mode=" not in p.log()[offset:]

            api.start()
            await set_endpoints(client, "outage", "web", backends.ips[2:])
            p.wait_programmed(ip, 80, [f"{backends.ips[2]}:8080"], timeout=30)
            assert spread(ip, 80, 5) == {backends.names[2]: 5}
        p.stop()
        assert chains_with_prefix(p.prefix)  # stopping never removes rules
        result = p.cleanup()
        assert result.returncode == 0, result.stderr
        assert chains_with_prefix(p.prefix) == []
        assert not link_exists(p.cfg.service_bridge)
        routes = subprocess.run(["ip", "route", "show", "exact", p.cidr], capture_output=True, text=True).stdout
        assert routes.strip() == ""
        again = p.cleanup()  # idempotent
        assert again.returncode == 0, again.stderr
    finally:
        p.stop()
        p.cleanup()
        api.stop()
        etcd.stop()
