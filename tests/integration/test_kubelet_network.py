"""Issue 5: the node side of the pod network, for real (routes, netfilter, Docker, network namespaces).

Two kubelet processes on this host stand for two nodes (pod CIDRs 10.244.231.0/24 and
10.244.232.0/24, cluster CIDR 10.244.224.0/20 so nothing mixes with a real cluster's
10.244.0.0/16): a pod on one reaches a pod on the other by pod IP and keeps its source
address; the cluster CIDR is blackholed; a Node with an on-link InternalIP (a veth pair
made here) gets a ``proto 250`` route that follows its podCIDR and goes with it; pods get
the cluster DNS resolv.conf and a managed hosts file; hairpin mode is on; a kubelet
without ``--pod-cidr`` waits for the Node's podCIDR.

Both kubelets share this host's routing table, so ``via <InternalIP>`` cannot carry
traffic between them; the last tests therefore run the kubelet's pod network agent in
network namespaces made here — two "nodes" on one link (host-gw), then two nodes in
different subnets behind a router namespace (vxlan) — each with a "pod" namespace on a
bridge, and check that a pod reaches the other node's pod with its own source address.

Traffic goes only to loopback, to the containers and to the namespaces made here; every
container, network, link, namespace, route and rule is removed at the end, also on failure.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import docker
import httpx
import pytest

from minik8s.api.base import Obj
from minik8s.client.informer import Informer
from minik8s.client.rest import Client
from minik8s.host.commands import netns_runner
from minik8s.kubelet.network.podnetwork import PodNetworkAgent
from tests.support.kubelet import BUSYBOX, KubeletProcess, create_pod, pod_body, wait_phase
from tests.support.processes import APIServer
from tests.support.waiting import wait_for

pytestmark = pytest.mark.docker

CLUSTER = "10.244.224.0/20"
CIDR_A, CIDR_B = "10.244.231.0/24", "10.244.232.0/24"
CLUSTER_DNS = "10.96.0.10"


def sh(*argv: str, check: bool = True) -> str:
    """Run a command (20 s at most); returns stdout."""
    proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=20, check=False)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr.strip()}")
    return proc.stdout


def routes(*selector: str) -> list[Obj]:
    out = sh("ip", "-j", "-4", "route", "show", *selector).strip()
    return json.loads(out) if out else []


def used_subnets() -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    return [ipaddress.ip_network(cfg["Subnet"], strict=False) for net in docker.from_env().networks.list()
            for cfg in (net.attrs.get("IPAM") or {}).get("Config") or [] if cfg.get("Subnet")]


def node_rt(client: Client) -> Any:
    return client.kind("v1", "Node")


def container_of(kubelet: KubeletProcess, pod: str, container: str) -> Any:
    found = kubelet.containers(**{"io.kubernetes.pod.name": pod, "io.kubernetes.container.name": container})
    assert found, f"no container {container} of pod {pod}"
    return found[0]


# ---------------------------------------------------------------------------- two kubelets on this host
@dataclass
class Pair:
    a: KubeletProcess
    b: KubeletProcess


@pytest.fixture(scope="module")
def pair(apiserver: APIServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    try:
        docker.from_env().ping()
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"the Docker Engine does not answer: {exc}")
    taken = [c for c in (CIDR_A, CIDR_B) if any(ipaddress.ip_network(c).overlaps(u) for u in used_subnets())]
    if taken or routes("exact", CLUSTER):
        pytest.skip(f"{taken or CLUSTER} already in use on this host")
    extra = ["--cluster-cidr", CLUSTER, "--cluster-dns", CLUSTER_DNS, "--resolv-conf", "",
             "--network-sync-period", "1"]
    p = Pair(KubeletProcess(apiserver, tmp_path_factory.mktemp("node-a"), CIDR_A, extra),
             KubeletProcess(apiserver, tmp_path_factory.mktemp("node-b"), CIDR_B, extra))
    try:
        p.a.start()
        p.b.start()
        yield p
    finally:
        for k in (p.a, p.b):
            k.stop()
        for k in (p.a, p.b):
            k.cleanup()
            for path in (f"/api/v1/nodes/{k.node}",
                         f"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/{k.node}"):
                httpx.delete(apiserver.url + path, timeout=5)


SERVER = ("mkdir -p /www/cgi-bin && printf '#!/bin/sh\\necho Content-Type: text/plain\\necho\\necho $REMOTE_ADDR\\n' "
          "> /www/cgi-bin/peer && chmod +x /www/cgi-bin/peer && exec httpd -f -p 0.0.0.0:8080 -h /www")


async def test_pod_reaches_a_pod_on_the_other_node_with_its_own_address(pair: Pair, client: Client,
                                                                         namespace: str) -> None:
    await create_pod(client, namespace, pod_body("server", pair.b.node, [
        {"name": "web", "image": BUSYBOX, "command": ["sh", "-c", SERVER]}]))
    await create_pod(client, namespace, pod_body("client", pair.a.node, [
        {"name": "app", "image": BUSYBOX, "command": ["sleep", "600"]}], hostname="cl", subdomain="grp"))
    server = await wait_phase(client, namespace, "server", "Running")
    cl = await wait_phase(client, namespace, "client", "Running")
    server_ip, client_ip = server["status"]["podIP"], cl["status"]["podIP"]
    assert ipaddress.ip_address(server_ip) in ipaddress.ip_network(CIDR_B)
    assert ipaddress.ip_address(client_ip) in ipaddress.ip_network(CIDR_A)
    app = container_of(pair.a, "client", "app")

    async def peer_seen() -> str | None:
        code, out = app.exec_run(["timeout", "3", "wget", "-q", "-O-", f"http://{server_ip}:8080/cgi-bin/peer"])
        return out.decode().strip() if code == 0 else None
    # the server sees the client's pod IP: no masquerading between pods
    assert await wait_for(peer_seen, 15, interval=0.5, what="an answer across the nodes") == client_ip
    # and back: node B's pod reaches node A's pod too
    web = container_of(pair.b, "server", "web")
    code, out = web.exec_run(["ping", "-c", "1", "-W", "2", client_ip])
    assert code == 0, out.decode()

    # Docker's own masquerading is off on both pod networks; the kubelet's rules are in place
    for k in (pair.a, pair.b):
        opts = docker.from_env().networks.get(k.network).attrs["Options"]
        assert opts["com.docker.network.bridge.enable_ip_masquerade"] == "false"
    nat = sh("iptables", "-w", "5", "-t", "nat", "-S", "MINIK8S-POSTROUTING")
    assert f"-s {CLUSTER} -d {CLUSTER}" in nat and "-j MASQUERADE" in nat
    assert "-j MINIK8S-POSTROUTING" in sh("iptables", "-w", "5", "-t", "nat", "-S", "POSTROUTING")
    assert f"-s {CLUSTER}" in sh("iptables", "-w", "5", "-S", "MINIK8S-FORWARD")


async def test_pod_dns_and_hosts_files(pair: Pair, client: Client, namespace: str) -> None:
    await create_pod(client, namespace, pod_body("dns", pair.a.node, [
        {"name": "app", "image": BUSYBOX, "command": ["sleep", "600"]},
        {"name": "side", "image": BUSYBOX, "command": ["sleep", "600"],
         "securityContext": {"readOnlyRootFilesystem": True}}],
        hostname="db", subdomain="backend",
        hostAliases=[{"ip": "127.0.0.1", "hostnames": ["foo.local"]}],
        dnsConfig={"options": [{"name": "edns0"}]}))
    await create_pod(client, namespace, pod_body("custom", pair.a.node, [
        {"name": "app", "image": BUSYBOX, "command": ["sleep", "600"]}],
        dnsPolicy="None", dnsConfig={"nameservers": ["10.96.0.53"], "searches": ["example.test"]}))
    pod = await wait_phase(client, namespace, "dns", "Running")
    await wait_phase(client, namespace, "custom", "Running")
    ip = pod["status"]["podIP"]
    for name in ("app", "side"):  # every container of the pod sees the same files
        c = container_of(pair.a, "dns", name)
        assert c.exec_run(["cat", "/etc/resolv.conf"]).output.decode() == (
            f"nameserver {CLUSTER_DNS}\n"
            f"search {namespace}.svc.cluster.local svc.cluster.local cluster.local\n"
            "options ndots:5 edns0\n")
        hosts = c.exec_run(["cat", "/etc/hosts"]).output.decode()
        assert hosts.startswith("# Kubernetes-managed hosts file.\n")
        assert f"{ip}\tdb.backend.{namespace}.svc.cluster.local\tdb\n" in hosts and "127.0.0.1\tfoo.local" in hosts
        assert c.exec_run(["hostname"]).output.decode().strip() == "db"
    assert container_of(pair.a, "dns", "side").exec_run(["sh", "-c", "echo x >> /etc/hosts"]).exit_code != 0
    custom = container_of(pair.a, "custom", "app").exec_run(["cat", "/etc/resolv.conf"]).output.decode()
    assert custom == "nameserver 10.96.0.53\nsearch example.test\n"


async def test_hairpin_pod_reaches_itself_through_a_cluster_ip(pair: Pair, client: Client, namespace: str) -> None:
    await create_pod(client, namespace, pod_body("self", pair.a.node, [
        {"name": "web", "image": BUSYBOX, "command": ["sh", "-c", "mkdir -p /www && echo me > /www/index.html && "
                                                                  "exec httpd -f -p 0.0.0.0:8080 -h /www"]}]))
    ip = (await wait_phase(client, namespace, "self", "Running"))["status"]["podIP"]
    # hairpin mode on every port of the pod bridge
    bridge = pair.a.network
    assert len(bridge) <= 15, "the test network name should be the bridge name"
    ports = os.listdir(f"/sys/class/net/{bridge}/brif")
    assert ports
    for port in ports:
        with open(f"/sys/class/net/{bridge}/brif/{port}/hairpin_mode") as fh:
            assert fh.read().strip() == "1", port
    # kube-proxy's part, reduced to one made-up ClusterIP: DNAT to the pod, masquerade the
    # pod's traffic to itself (KUBE-MARK-MASQ for hairpin); then the pod calls its own "Service"
    chain, cluster_ip = f"MK8S-T{os.urandom(3).hex().upper()}", "10.96.231.1"
    nat = ["iptables", "-w", "5", "-t", "nat"]
    sh(*nat, "-N", chain)
    try:
        sh(*nat, "-A", chain, "-d", f"{cluster_ip}/32", "-p", "tcp", "--dport", "80", "-j", "DNAT",
           "--to-destination", f"{ip}:8080")
        sh(*nat, "-I", "PREROUTING", "1", "-j", chain)
        sh(*nat, "-I", "POSTROUTING", "1", "-s", f"{ip}/32", "-d", f"{ip}/32", "-j", "MASQUERADE")
        web = container_of(pair.a, "self", "web")
        got = web.exec_run(["timeout", "3", "wget", "-q", "-O-", f"http://{cluster_ip}/"])
        assert got.exit_code == 0 and got.output.decode().strip() == "me", got
    finally:
        sh(*nat, "-D", "POSTROUTING", "-s", f"{ip}/32", "-d", f"{ip}/32", "-j", "MASQUERADE", check=False)
        sh(*nat, "-D", "PREROUTING", "-j", chain, check=False)
        sh(*nat, "-F", chain, check=False)
        sh(*nat, "-X", chain, check=False)


async def test_cluster_cidr_is_blackholed(pair: Pair) -> None:
    found = routes("exact", CLUSTER)
    assert found and found[0]["type"] == "blackhole" and found[0]["protocol"] == "250"
    # the local pod bridges are more specific and win
    assert routes("exact", CIDR_A)[0]["protocol"] == "kernel"
    unused = "10.244.239.77"  # in the cluster CIDR, no pod, no node
    lookup = subprocess.run(["ip", "route", "get", unused], capture_output=True, text=True, timeout=10)
    assert lookup.returncode != 0 and "Invalid argument" in lookup.stderr  # what a blackhole answers
    started = time.monotonic()
    with pytest.raises(OSError), socket.create_connection((unused, 80), timeout=5):
        pass
    assert time.monotonic() - started < 1.0  # fails here and now, nothing was sent


@pytest.fixture
def onlink_peer() -> Iterator[str]:
    """A veth pair made here (``172.31.239.1/24`` on one end): 172.31.239.2 is on a local link
    but nobody has it, so nothing routed there goes anywhere."""
    name = f"mk8s-g{os.urandom(3).hex()}"
    sh("ip", "link", "add", name, "type", "veth", "peer", "name", name + "p")
    try:
        sh("ip", "addr", "add", "172.31.239.1/24", "dev", name)
        sh("ip", "link", "set", name, "up")
        sh("ip", "link", "set", name + "p", "up")
        yield "172.31.239.2"
    finally:
        sh("ip", "link", "del", name, check=False)  # its routes go with it


async def test_routes_follow_other_nodes(pair: Pair, client: Client, onlink_peer: str) -> None:
    name = f"ghost-{os.urandom(3).hex()}"
    rt = node_rt(client)
    await client.create(rt, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
                             "spec": {"podCIDR": "10.244.233.0/24", "podCIDRs": ["10.244.233.0/24"]}})
    try:
        await client.patch(rt, name, {"status": {"addresses": [{"type": "InternalIP", "address": onlink_peer}]}},
                           subresource="status")

        async def route(cidr: str) -> Obj | None:
            found = routes("exact", cidr)
            return found[0] if found else None
        got = await wait_for(lambda: route("10.244.233.0/24"), 10, what="the route to the new node")
        assert got["gateway"] == onlink_peer and got["protocol"] == "250"
        # the two kubelets' own podCIDRs: no routes (their InternalIP is this host: the bridges are local)
        assert all(r["protocol"] == "kernel" for c in (CIDR_A, CIDR_B) for r in routes("exact", c))
        # a route of someone else inside the cluster CIDR is never touched
        sh("ip", "route", "add", "10.244.238.0/24", "via", onlink_peer, "proto", "static")
        try:
            await client.patch(rt, name, {"spec": {"podCIDR": "10.244.234.0/24", "podCIDRs": ["10.244.234.0/24"]}})
            await wait_for(lambda: route("10.244.234.0/24"), 10, what="the route to the new podCIDR")

            async def old_gone() -> bool:
                return await route("10.244.233.0/24") is None
            await wait_for(old_gone, 10, what="the old route removed")
            await asyncio.sleep(1.5)  # more than a sync period
            assert routes("exact", "10.244.238.0/24")[0]["protocol"] == "static"
        finally:
            sh("ip", "route", "del", "10.244.238.0/24", "proto", "static", check=False)
    finally:
        await client.delete(rt, name)

    async def gone() -> bool:
        return await route("10.244.234.0/24") is None
    await wait_for(gone, 10, what="the route removed with its Node")


async def test_kubelet_waits_for_the_pod_cidr(apiserver: APIServer, client: Client,
                                              tmp_path_factory: pytest.TempPathFactory, pair: Pair) -> None:
    cidr, stale = "10.244.235.0/24", "10.244.236.0/24"
    k = KubeletProcess(apiserver, tmp_path_factory.mktemp("node-c"), "",
                       ["--cluster-cidr", CLUSTER, "--network-sync-period", "1"])
    dc = docker.from_env()
    # a leftover pod network with another subnet and no containers: re-created for the podCIDR
    dc.networks.create(k.network, driver="bridge", ipam=docker.types.IPAMConfig(
        pool_configs=[docker.types.IPAMPool(subnet=stale)]))
    try:
        k.start()
        rt = node_rt(client)

        async def not_ready() -> Obj | None:
            node = await client.get(rt, k.node)
            ready: Obj = next((c for c in node["status"]["conditions"] if c["type"] == "Ready"), {})
            return ready if ready.get("status") == "False" else None
        ready = await wait_for(not_ready, 10, what="NotReady while there is no podCIDR")
        assert "NetworkPluginNotReady" in ready["message"] and "podCIDR" in ready["message"]
        assert "waiting for spec.podCIDR" in k.log_path.read_text()
        await client.patch(rt, k.node, {"spec": {"podCIDR": cidr, "podCIDRs": [cidr]}})  # as the node IPAM does

        async def network_subnet() -> str | None:
            nets = dc.networks.list(names=[k.network])
            subnets = [c["Subnet"] for n in nets for c in (n.attrs.get("IPAM") or {}).get("Config") or []]
            return subnets[0] if subnets == [cidr] else None
        assert await wait_for(network_subnet, 15, what="the pod network on the podCIDR") == cidr

        async def ready_again() -> bool:
            node = await client.get(rt, k.node)
            return any(c["type"] == "Ready" and c["status"] == "True" for c in node["status"]["conditions"])
        await wait_for(ready_again, 10, what="Ready once the network exists")
    finally:
        k.stop()
        for c in k.containers():
            c.remove(force=True)
        for n in dc.networks.list(names=[k.network]):
            n.remove()
        subprocess.run(["rm", "-rf", str(k.root)], check=False)
        for path in (f"/api/v1/nodes/{k.node}",
                     f"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/{k.node}"):
            httpx.delete(apiserver.url + path, timeout=5)


# ---------------------------------------------------------------------------- nodes as network namespaces
class Lab:
    """Network namespaces made for one test (all deleted by :meth:`close`, their links with them)."""

    def __init__(self) -> None:
        self.tag = os.urandom(2).hex()
        self.names: list[str] = []

    def ns(self, role: str) -> str:
        name = f"mk8s-{role}-{self.tag}"
        sh("ip", "netns", "add", name)
        self.names.append(name)
        self.run(name, "ip", "link", "set", "lo", "up")
        return name

    def run(self, ns: str, *argv: str, check: bool = True) -> str:
        return sh("ip", "netns", "exec", ns, *argv, check=check)

    def link(self, ns_a: str, addr_a: str, ns_b: str, addr_b: str) -> None:
        """A veth pair between two namespaces, with an address on each end."""
        a, b = f"v{os.urandom(3).hex()}", f"v{os.urandom(3).hex()}"
        sh("ip", "link", "add", a, "netns", ns_a, "type", "veth", "peer", "name", b, "netns", ns_b)
        for ns, dev, addr in ((ns_a, a, addr_a), (ns_b, b, addr_b)):
            self.run(ns, "ip", "addr", "add", addr, "dev", dev)
            self.run(ns, "ip", "link", "set", dev, "up")

    def node(self, role: str, pod_cidr: str) -> tuple[str, str, str]:
        """A "node" namespace with a bridge on ``pod_cidr`` (``.1``) and one "pod" namespace on it
        (``.2``); returns (node ns, pod ns, pod IP)."""
        net = ipaddress.ip_network(pod_cidr)
        node, pod = self.ns(role), self.ns(role + "p")
        self.run(node, "sysctl", "-qw", "net.ipv4.ip_forward=1")
        self.run(node, "ip", "link", "add", "cbr0", "type", "bridge")
        self.run(node, "ip", "addr", "add", f"{net.network_address + 1}/{net.prefixlen}", "dev", "cbr0")
        self.run(node, "ip", "link", "set", "cbr0", "up")
        host_end = f"v{os.urandom(3).hex()}"
        sh("ip", "link", "add", host_end, "netns", node, "type", "veth", "peer", "name", "eth0", "netns", pod)
        self.run(node, "ip", "link", "set", host_end, "master", "cbr0", "up")
        pod_ip = str(net.network_address + 2)
        self.run(pod, "ip", "addr", "add", f"{pod_ip}/{net.prefixlen}", "dev", "eth0")
        self.run(pod, "ip", "link", "set", "eth0", "up")
        self.run(pod, "ip", "route", "add", "default", "via", str(net.network_address + 1))
        return node, pod, pod_ip

    def close(self) -> None:
        for name in reversed(self.names):
            sh("ip", "netns", "del", name, check=False)


@pytest.fixture
def lab() -> Iterator[Lab]:
    if subprocess.run(["ip", "netns", "list"], capture_output=True, timeout=10).returncode != 0:
        pytest.skip("no network namespaces here")
    lab = Lab()
    try:
        yield lab
    finally:
        lab.close()


PEER_SERVER = """
import socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 8080))
s.listen()
s.settimeout(10)
c, addr = s.accept()
print(addr[0])
c.close()
"""
CONNECT = """
import socket, sys, time
for _ in range(50):  # the server may not listen yet
    try:
        socket.create_connection((sys.argv[1], 8080), timeout=2).close()
        break
    except OSError:
        time.sleep(0.1)
else:
    sys.exit("no connection")
"""
FAILS_FAST = """
import socket, sys, time
t = time.monotonic()
try:
    socket.create_connection((sys.argv[1], 80), timeout=5)
except OSError:
    print(time.monotonic() - t)
else:
    sys.exit("connected")
"""


def peer_address(lab: Lab, server_ns: str, client_ns: str, server_ip: str) -> str:
    """Start a one-shot TCP server in ``server_ns``, connect from ``client_ns``; returns the source
    address the server saw."""
    server = subprocess.Popen(["ip", "netns", "exec", server_ns, sys.executable, "-c", PEER_SERVER],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lab.run(client_ns, sys.executable, "-c", CONNECT, server_ip)
        out, err = server.communicate(timeout=15)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(5)
    assert server.returncode == 0, err
    return out.strip()


@dataclass
class LabNode:
    """A node made of namespaces: its Node name, InternalIP, podCIDR, namespace, pod namespace and pod IP."""

    name: str
    ip: str
    cidr: str
    ns: str
    pod_ns: str
    pod_ip: str


def lab_node(lab: Lab, role: str, ip: str, cidr: str) -> LabNode:
    ns, pod_ns, pod_ip = lab.node(role, cidr)
    return LabNode(f"{role}-{lab.tag}", ip, cidr, ns, pod_ns, pod_ip)


def ns_routes(lab: Lab, ns: str, cidr: str) -> list[Obj]:
    out = lab.run(ns, "ip", "-j", "-4", "route", "show", "exact", cidr).strip()
    return json.loads(out) if out else []


def trigger(agent: PodNetworkAgent) -> Callable[[Obj], None]:
    """An informer handler that asks ``agent`` for a sync."""
    return lambda _obj: agent.trigger()


@contextlib.asynccontextmanager
async def lab_cluster(client: Client, lab: Lab, nodes: list[LabNode], backend: str) -> AsyncIterator[None]:
    """Create the Nodes, run one PodNetworkAgent per node in its namespace (one Node informer
    feeds them all), wait until every node routes every other's podCIDR; delete the Nodes after."""
    rt = node_rt(client)
    informer = Informer(client, rt)
    tasks = [asyncio.create_task(informer.run())]
    try:
        for n in nodes:
            await client.create(rt, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": n.name},
                                     "spec": {"podCIDR": n.cidr, "podCIDRs": [n.cidr]}})
            await client.patch(rt, n.name, {"status": {"addresses": [{"type": "InternalIP", "address": n.ip}]}},
                               subresource="status")
            agent = PodNetworkAgent(n.name, n.ip, CLUSTER, "10.96.0.0/16", backend, informer.list,
                                    netns_runner(n.ns), resync_period=1.0)
            agent.pod_cidr = n.cidr
            informer.add_handler(on_add=trigger(agent), on_update=agent.on_node_update, on_delete=trigger(agent))
            tasks.append(asyncio.create_task(agent.run()))

        async def routed() -> bool:
            return all(ns_routes(lab, a.ns, b.cidr) for a in nodes for b in nodes if a is not b)
        await wait_for(routed, 10, what="routes on every node")
        yield
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for n in nodes:
            with contextlib.suppress(Exception):
                await client.delete(rt, n.name)


async def pods_keep_their_addresses(lab: Lab, a: LabNode, b: LabNode) -> None:
    """Pod A → pod B and back: each server sees the other pod's IP."""
    assert await asyncio.to_thread(peer_address, lab, b.pod_ns, a.pod_ns, b.pod_ip) == a.pod_ip
    assert await asyncio.to_thread(peer_address, lab, a.pod_ns, b.pod_ns, a.pod_ip) == b.pod_ip


async def test_host_gw_between_namespaces(client: Client, lab: Lab) -> None:
    """Two nodes on one link: ``<podCIDR> via <InternalIP>`` carries pod traffic, sources kept."""
    a = lab_node(lab, "na", "172.31.228.1", "10.244.228.0/24")
    b = lab_node(lab, "nb", "172.31.228.2", "10.244.229.0/24")
    lab.link(a.ns, f"{a.ip}/24", b.ns, f"{b.ip}/24")
    async with lab_cluster(client, lab, [a, b], "host-gw"):
        assert ns_routes(lab, a.ns, b.cidr)[0]["gateway"] == b.ip
        assert ns_routes(lab, a.ns, CLUSTER)[0]["type"] == "blackhole"
        await pods_keep_their_addresses(lab, a, b)
        # pod A -> node B's own address leaves the pod network: masqueraded to node A's
        assert await asyncio.to_thread(peer_address, lab, b.ns, a.pod_ns, b.ip) == a.ip
        # an unprogrammed pod address dies on node A, at once
        assert float(lab.run(a.ns, sys.executable, "-c", FAILS_FAST, "10.244.230.9")) < 1.0
        # node B goes away: node A drops its route
        await client.delete(node_rt(client), b.name)

        async def dropped() -> bool:
            return not ns_routes(lab, a.ns, b.cidr)
        await wait_for(dropped, 10, what="the route removed with node B")


async def test_vxlan_between_namespaces_in_different_subnets(client: Client, lab: Lab) -> None:
    """Two nodes in different subnets behind a router: ``auto`` picks VXLAN; sources kept."""
    a = lab_node(lab, "va", "172.31.226.1", "10.244.226.0/24")
    b = lab_node(lab, "vb", "172.31.227.1", "10.244.227.0/24")
    router = lab.ns("vr")
    lab.run(router, "sysctl", "-qw", "net.ipv4.ip_forward=1")
    lab.link(a.ns, f"{a.ip}/24", router, "172.31.226.254/24")
    lab.link(b.ns, f"{b.ip}/24", router, "172.31.227.254/24")
    lab.run(a.ns, "ip", "route", "add", "172.31.227.0/24", "via", "172.31.226.254")
    lab.run(b.ns, "ip", "route", "add", "172.31.226.0/24", "via", "172.31.227.254")
    async with lab_cluster(client, lab, [a, b], "auto"):
        r = ns_routes(lab, a.ns, b.cidr)[0]
        assert r["dev"] == "minik8s.1" and r["gateway"] == "10.244.227.0" and "onlink" in r["flags"]
        assert f"dst {b.ip}" in lab.run(a.ns, "bridge", "fdb", "show", "dev", "minik8s.1")
        await pods_keep_their_addresses(lab, a, b)
        await client.delete(node_rt(client), b.name)

        async def dropped() -> bool:
            return "minik8s.1" not in lab.run(a.ns, "ip", "-br", "link", "show")
        await wait_for(dropped, 10, what="the VXLAN device removed with the last remote node")
