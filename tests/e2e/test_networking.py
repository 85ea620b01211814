"""Issue 5 end to end on a real local cluster (``minik8s up``): Services (ClusterIP and NodePort)
programmed by kube-proxy, Endpoints that follow their pods, cluster DNS names in pods and on the
host, a DNS object whose two paths reach two Services, and a clean slate after deletion.

The workloads are ``examples/networking`` (a busybox-httpd ReplicaSet whose pods answer their
own names, a ClusterIP and a NodePort Service over it, a DNS object with two paths), applied
to a namespace of this module, plus a client pod that runs ``wget``/``nslookup``.

Network safety: every request goes to a ClusterIP (10.96.x.x, DNATed on this host to pod IPs
of this cluster), to the node's own InternalIP (this machine) or to the cluster DNS server;
each request has a timeout and every loop is bounded.  Plain HTTP without proxies
(``trust_env=False``).
"""

from __future__ import annotations

import re
import socket
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from dnslib import QTYPE, RCODE, DNSRecord

from minik8s.api.base import Obj
from tests.support.cluster import E2E_NODE, Cluster, wait_for

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "networking"

CLUSTER_DNS = "10.96.0.10"
SHOP_HOST = "shop.minik8s.example"  # the host of examples/networking/dns-two-paths.yaml
NODE_PORT = 30080  # examples/networking/service-nodeport.yaml
HTTP_TIMEOUT = 5.0
SPREAD_REQUESTS = 30


# ---------------------------------------------------------------------------- helpers
def http_get(url: str, host: str | None = None, timeout: float = HTTP_TIMEOUT) -> str:
    """One GET on a fresh connection (no proxy from the environment); the body, stripped.
    Raises httpx.HTTPError."""
    headers = {"Connection": "close", **({"Host": host} if host else {})}
    with httpx.Client(trust_env=False, timeout=timeout) as client:
        response = client.get(url, headers=headers)
    response.raise_for_status()
    return response.text.strip()


def try_get(url: str, host: str | None = None) -> str | None:
    """As :func:`http_get`, but None when the request fails."""
    try:
        return http_get(url, host)
    except httpx.HTTPError:
        return None


def tcp_answers(ip: str, port: int, timeout: float = 2.0) -> bool:
    """True when a TCP connection to ``ip:port`` is accepted within ``timeout`` seconds."""
    try:
        with socket.create_connection((ip, port), timeout=timeout):
            return True
    except OSError:
        return False


def dns_query(name: str, qtype: str = "A", timeout: float = 3.0) -> DNSRecord:
    """One UDP query to the cluster DNS Service (kube-proxy DNATs it to the server)."""
    return DNSRecord.parse(DNSRecord.question(name, qtype).send(CLUSTER_DNS, 53, timeout=timeout))


def try_query(name: str) -> DNSRecord | None:
    """As :func:`dns_query`, but None when no reply came."""
    try:
        return dns_query(name)
    except OSError:
        return None


def a_records(reply: DNSRecord | None) -> list[str]:
    if reply is None:
        return []
    return [str(rr.rdata) for rr in reply.rr if rr.rtype == QTYPE.A]


def iptables_save(table: str) -> str:
    return subprocess.run(["iptables-save", "-t", table], capture_output=True, text=True, check=True,
                          timeout=30).stdout


def ready(pod: Obj) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(x["type"] == "Ready" and x["status"] == "True" for x in conditions)


@dataclass
class Net:
    """The module's namespace on the cluster, with a client pod to run commands from."""

    c: Cluster
    ns: str
    client: str = "client"

    def kubectl(self, *args: str, check: bool = True, input: str | None = None) -> subprocess.CompletedProcess[str]:
        return self.c.kubectl(args[0], "-n", self.ns, *args[1:], check=check, input=input)  # -n before any "--"

    def get(self, *args: str) -> Any:
        return self.c.get_json("-n", self.ns, *args)

    def apply(self, manifest: str | Path) -> str:
        if isinstance(manifest, Path):
            return self.kubectl("apply", "-f", str(manifest)).stdout
        return self.kubectl("apply", "-f", "-", input=manifest).stdout

    def sh(self, script: str, pod: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        """``sh -c script`` in ``pod`` (the client pod by default)."""
        return self.kubectl("exec", pod or self.client, "--", "sh", "-c", script, check=check)

    def wget(self, url: str, pod: str | None = None) -> str:
        """The body of ``url`` fetched by busybox wget in ``pod`` (5 s timeout), stripped; raises
        AssertionError with wget's complaint when nothing came (so :func:`wait_for` shows it)."""
        proc = self.sh(f"timeout 5 wget -q -O- {url}", pod=pod, check=False)
        if proc.returncode != 0 or not proc.stdout.strip():
            raise AssertionError(f"wget {url}: exit {proc.returncode}: {proc.stderr.strip()}")
        return proc.stdout.strip()

    def pods(self, selector: str) -> list[Obj]:
        """Pods matching ``selector`` that are not terminating."""
        return [p for p in self.get("pods", "-l", selector)["items"] if not p["metadata"].get("deletionTimestamp")]

    def ready_pods(self, selector: str) -> dict[str, str]:
        """name → podIP of the ready, non-terminating pods matching ``selector``."""
        return {p["metadata"]["name"]: p["status"]["podIP"] for p in self.pods(selector)
                if ready(p) and (p.get("status") or {}).get("podIP")}

    def service(self, name: str) -> Obj:
        return self.get("service", name)  # type: ignore[no-any-return]

    def cluster_ip(self, name: str) -> str:
        ip = self.service(name)["spec"].get("clusterIP")
        assert ip and ip != "None", f"service {name} has no ClusterIP"
        return str(ip)

    def endpoints(self, name: str) -> tuple[dict[str, str], dict[str, str]]:
        """(ready, not ready) addresses of the Endpoints ``name``: pod name → ip (from targetRef)."""
        ep = self.get("endpoints", name)
        ok: dict[str, str] = {}
        not_ok: dict[str, str] = {}
        for subset in ep.get("subsets") or []:
            for key, out in (("addresses", ok), ("notReadyAddresses", not_ok)):
                for a in subset.get(key) or []:
                    out[(a.get("targetRef") or {}).get("name") or a["ip"]] = a["ip"]
        return ok, not_ok


def hostnames_rs(name: str, replicas: int) -> str:
    """A ReplicaSet of busybox httpd pods answering their own name on port ``http``, labelled
    ``app=<name>`` (what the Service selects) and ``owner=rs`` (only the ReplicaSet selects that:
    a bare ``app=<name>`` pod is not adopted)."""
    labels = {"app": name, "owner": "rs"}
    return yaml.safe_dump({
        "apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels}, "spec": {
                     "terminationGracePeriodSeconds": 1, "containers": [httpd_container()]}}}})


def httpd_container(readiness_file: bool = False) -> Obj:
    container: Obj = {
        "name": "httpd", "image": "minik8s/busybox:latest",
        "command": ["sh", "-c", "mkdir -p /www && hostname > /www/index.html && exec httpd -f -p 8080 -h /www"],
        "ports": [{"name": "http", "containerPort": 8080}]}
    if readiness_file:
        container["readinessProbe"] = {"exec": {"command": ["cat", "/tmp/ready"]}, "periodSeconds": 1}
    return container


def service(name: str, port: int = 80, target: int | str = "http") -> str:
    return yaml.safe_dump({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
                           "spec": {"selector": {"app": name},
                                    "ports": [{"name": "http", "port": port, "targetPort": target}]}})


# ---------------------------------------------------------------------------- the module's cluster state
@pytest.fixture(scope="module")
def net(cluster: Cluster) -> Iterator[Net]:
    """A namespace with the networking examples applied and ready, and a client pod."""
    with cluster.namespace("net") as ns:
        n = Net(cluster, ns)
        for name in ("service-clusterip.yaml", "service-nodeport.yaml", "dns-two-paths.yaml"):
            n.apply(EXAMPLES / name)
        n.apply(yaml.safe_dump({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": n.client},
                                "spec": {"terminationGracePeriodSeconds": 1, "containers": [
                                    {"name": "client", "image": "minik8s/busybox:latest",
                                     "command": ["sleep", "3600"]}]}}))
        wait_for(lambda: len(n.ready_pods("app=hostnames")) == 3, 120, what="3 ready hostnames pods")
        wait_for(lambda: len(n.endpoints("hostnames")[0]) == 3, 60, what="3 hostnames endpoints")
        wait_for(lambda: ready(n.get("pod", n.client)), 60, what="client pod ready")
        yield n


# ---------------------------------------------------------------------------- ClusterIP and NodePort
def test_clusterip_from_pod_and_host(net: Net) -> None:
    ip = net.cluster_ip("hostnames")
    names = set(net.ready_pods("app=hostnames"))
    out = wait_for(lambda: net.wget(f"http://{ip}:80/"), 30, what="ClusterIP answering a pod")
    assert out in names
    answer = wait_for(lambda: try_get(f"http://{ip}:80/"), 30, what="ClusterIP answering the host")
    assert answer in names


def test_nodeport_from_host(net: Net) -> None:
    svc = net.service("hostnames-nodeport")
    assert svc["spec"]["type"] == "NodePort"
    assert svc["spec"]["ports"][0]["nodePort"] == NODE_PORT
    node = net.c.get_json("node", E2E_NODE)
    internal = [a["address"] for a in node["status"]["addresses"] if a["type"] == "InternalIP"]
    assert internal, node["status"]["addresses"]
    names = set(net.ready_pods("app=hostnames"))
    answer = wait_for(lambda: try_get(f"http://{internal[0]}:{NODE_PORT}/"), 30, what="NodePort answering")
    assert answer in names
    # the NodePort Service has its own ClusterIP over the same pods, too
    assert try_get(f"http://{net.cluster_ip('hostnames-nodeport')}/") in names


def test_requests_spread_over_all_endpoints(net: Net) -> None:
    ip = net.cluster_ip("hostnames")
    names = set(net.ready_pods("app=hostnames"))
    assert set(net.endpoints("hostnames")[0]) == names
    # kube-proxy programs the endpoints a moment after they appear: a batch that misses a pod is
    # sampled again until the deadline (each batch must still be answered in full)
    def batch_hits_every_pod() -> bool:
        hit = {http_get(f"http://{ip}/") for _ in range(SPREAD_REQUESTS)}
        assert hit == names, f"{SPREAD_REQUESTS} requests hit {sorted(hit)}, pods are {sorted(names)}"
        return True

    wait_for(batch_hits_every_pod, 60, interval=1, what=f"{SPREAD_REQUESTS} requests hitting every pod")


# ---------------------------------------------------------------------------- Endpoints follow the pods
def test_endpoints_follow_pods(net: Net) -> None:
    net.apply(hostnames_rs("follow", 2) + "---\n" + service("follow"))

    def in_sync(count: int) -> dict[str, str]:
        pods = net.ready_pods("app=follow")
        ok, not_ok = net.endpoints("follow")
        return pods if len(pods) == count and ok == pods and not not_ok else {}

    pods = wait_for(lambda: in_sync(2), 90, what="Endpoints = the 2 pods")
    shown = net.kubectl("get", "endpoints", "follow").stdout
    assert all(f"{ip}:8080" in shown for ip in pods.values()), shown

    # scale up and down
    net.kubectl("scale", "rs", "follow", "--replicas=3")
    pods = wait_for(lambda: in_sync(3), 90, what="Endpoints = the 3 pods after scale-up")
    shown = net.kubectl("get", "endpoints", "follow").stdout
    assert all(f"{ip}:8080" in shown for ip in pods.values()), shown
    net.kubectl("scale", "rs", "follow", "--replicas=2")
    pods = wait_for(lambda: in_sync(2), 90, what="Endpoints = the 2 pods after scale-down")

    # a deleted pod leaves, its replacement joins
    victim = sorted(pods)[0]
    net.kubectl("delete", "pod", victim, "--wait=false")
    pods = wait_for(lambda: (p := in_sync(2)) and victim not in p and p, 90, what="deleted pod replaced")

    # a pod relabelled out of the selector leaves (and the ReplicaSet replaces it)
    moved = sorted(pods)[0]
    net.kubectl("label", "pod", moved, "app=moved", "--overwrite")
    pods = wait_for(lambda: (p := in_sync(2)) and moved not in p and p, 90, what="relabelled pod out")
    assert moved not in net.endpoints("follow")[1]

    # a pod that is not ready is only in notReadyAddresses, until it is ready
    net.apply(yaml.safe_dump({"apiVersion": "v1", "kind": "Pod",
                              "metadata": {"name": "follow-unready", "labels": {"app": "follow"}},
                              "spec": {"terminationGracePeriodSeconds": 1,
                                       "containers": [httpd_container(readiness_file=True)]}}))
    unready_ip = wait_for(lambda: net.endpoints("follow")[1].get("follow-unready"), 90,
                          what="the unready pod in notReadyAddresses")
    ok, _ = net.endpoints("follow")
    assert "follow-unready" not in ok and set(ok) == set(pods)
    assert unready_ip not in net.kubectl("get", "endpoints", "follow").stdout
    # ... and kube-proxy sends it nothing
    ip = net.cluster_ip("follow")
    answers = {http_get(f"http://{ip}/") for _ in range(12)}
    assert answers <= set(pods), answers
    net.sh("touch /tmp/ready", pod="follow-unready")
    wait_for(lambda: net.endpoints("follow")[0].get("follow-unready") == unready_ip, 60,
             what="the pod in addresses once ready")
    assert "follow-unready" not in net.endpoints("follow")[1]
    wait_for(lambda: try_get(f"http://{ip}/") == "follow-unready", 60, interval=0.2,
             what="the now-ready pod answering through the ClusterIP")


def test_service_created_before_its_pods(net: Net) -> None:
    net.apply(service("early", port=8080, target=8080))
    ip = wait_for(lambda: net.cluster_ip("early"), 30, what="ClusterIP allocated")
    wait_for(lambda: net.get("endpoints", "early"), 30, what="an (empty) Endpoints object")
    assert net.endpoints("early") == ({}, {})
    assert try_get(f"http://{ip}:8080/") is None  # no endpoints: rejected on this host
    net.apply(hostnames_rs("early", 2))
    names = set(wait_for(lambda: len(p := net.ready_pods("app=early")) == 2 and p, 90, what="2 early pods"))
    answer = wait_for(lambda: try_get(f"http://{ip}:8080/"), 60, what="the Service answering once pods came")
    assert answer in names
    out = wait_for(lambda: net.wget("http://early:8080/"), 30,
                   what="early answering a pod by name")
    assert out in names


# ---------------------------------------------------------------------------- cluster DNS
def test_pod_resolv_conf(net: Net) -> None:
    lines = net.sh("cat /etc/resolv.conf").stdout.splitlines()
    assert f"nameserver {CLUSTER_DNS}" in lines
    search = [line.split()[1:] for line in lines if line.startswith("search ")]
    assert search and search[0][:3] == [f"{net.ns}.svc.cluster.local", "svc.cluster.local", "cluster.local"]
    assert "options ndots:5" in lines


def test_cluster_dns_names_resolve_in_pods(net: Net) -> None:
    ip = net.cluster_ip("hostnames")
    fqdn = f"hostnames.{net.ns}.svc.cluster.local"
    names = set(net.ready_pods("app=hostnames"))
    address = re.compile(rf"^Address:\s*{re.escape(ip)}$", re.M)

    # busybox nslookup applies the search path to names without dots (and exits 1 because the
    # other search domains answer NXDOMAIN), so check the answer, not the exit code
    short = wait_for(lambda: net.sh("nslookup hostnames", check=False).stdout, 30, what="nslookup hostnames")
    assert f"Name:\thostnames.{net.ns}.svc.cluster.local" in short and address.search(short), short
    full = net.sh(f"nslookup {fqdn}")
    assert address.search(full.stdout), full.stdout
    # <svc>.<ns>: busybox nslookup does not search dotted names; the libc resolver does (ndots:5),
    # and busybox wget names the address it connected to
    by_ns = net.sh(f"timeout 5 wget -O /dev/null http://hostnames.{net.ns}/")
    assert f"Connecting to hostnames.{net.ns} ({ip}:80)" in by_ns.stderr, by_ns.stderr
    for host in ("hostnames", f"hostnames.{net.ns}", fqdn):
        assert net.wget(f"http://{host}/") in names

    missing = net.sh(f"nslookup nosuch.{net.ns}.svc.cluster.local", check=False)
    assert missing.returncode != 0 and "NXDOMAIN" in missing.stdout + missing.stderr
    pod_ip = net.ready_pods("app=hostnames")[sorted(names)[0]]
    pod_name = f"{pod_ip.replace('.', '-')}.{net.ns}.pod.cluster.local"
    assert re.search(rf"^Address:\s*{re.escape(pod_ip)}$", net.sh(f"nslookup {pod_name}").stdout, re.M)


def test_cluster_dns_from_the_host(net: Net) -> None:
    reply = dns_query(f"hostnames.{net.ns}.svc.cluster.local")
    assert reply.header.rcode == RCODE.NOERROR and a_records(reply) == [net.cluster_ip("hostnames")]
    assert dns_query(f"nosuch.{net.ns}.svc.cluster.local").header.rcode == RCODE.NXDOMAIN


def _shop_address(net: Net) -> str:
    status = net.get("dns", "shop").get("status") or {}
    conds = {c["type"]: c["status"] for c in status.get("conditions") or []}
    return str(status.get("serviceAddress")) if conds.get("Ready") == "True" and status.get("serviceAddress") else ""


def test_dns_paths_reach_their_services(net: Net) -> None:
    address = wait_for(lambda: _shop_address(net), 120, what="DNS object shop Ready")
    assert address == net.cluster_ip("dns-shop")
    carts = set(wait_for(lambda: len(p := net.ready_pods("app=cart")) == 2 and p, 60, what="cart pods"))
    webs = set(wait_for(lambda: len(p := net.ready_pods("app=web")) == 2 and p, 60, what="web pods"))

    def from_pod(path: str) -> str:
        return net.wget(f"http://{SHOP_HOST}{path}")

    # from a pod: the host resolved by the cluster DNS server, nginx forwards by path
    cart = wait_for(lambda: (out := from_pod("/cart/")).startswith("cart: ") and out, 60, what="/cart/ from a pod")
    assert cart.removeprefix("cart: ") in carts
    web = wait_for(lambda: (out := from_pod("/")).startswith("web: ") and out, 30, what="/ from a pod")
    assert web.removeprefix("web: ") in webs

    # from the host: resolve through 10.96.0.10, then HTTP to that address with the Host header
    reply = dns_query(SHOP_HOST)
    assert reply.header.rcode == RCODE.NOERROR and a_records(reply) == [address]
    cart = wait_for(lambda: try_get(f"http://{address}/cart/", SHOP_HOST), 30, what="/cart/ from the host")
    assert cart.startswith("cart: ") and cart.removeprefix("cart: ") in carts
    assert http_get(f"http://{address}/cart", SHOP_HOST).startswith("cart: ")
    web = http_get(f"http://{address}/", SHOP_HOST)
    assert web.startswith("web: ") and web.removeprefix("web: ") in webs


# ---------------------------------------------------------------------------- deletion cleans up
def _our_rules(ns: str) -> list[str]:
    tag = f'--comment "{ns}/'
    return [line for table in ("nat", "filter") for line in iptables_save(table).splitlines() if tag in line]


def _dynamic_chains(lines: list[str]) -> set[str]:
    out = set()
    for line in lines:
        for word in line.split():
            if word.startswith(("KUBE-SVC-", "KUBE-SEP-")):
                out.add(word)
    return out


def test_deleting_services_removes_their_rules(net: Net) -> None:
    services = net.get("services")["items"]
    assert {s["metadata"]["name"] for s in services} >= {"hostnames", "hostnames-nodeport", "dns-shop", "cart",
                                                         "web", "follow", "early"}
    targets = [(s["spec"]["clusterIP"], p["port"]) for s in services for p in s["spec"]["ports"]]
    rules = _our_rules(net.ns)
    chains = _dynamic_chains(rules)
    # every Service port has its SVC chain, and every endpoint its SEP chain
    assert sum(c.startswith("KUBE-SVC-") for c in chains) >= len(targets), rules
    assert any(c.startswith("KUBE-SEP-") for c in chains)
    assert tcp_answers(net.cluster_ip("hostnames"), 80)

    net.kubectl("delete", "dns", "shop")  # the garbage collector removes dns-shop with it
    net.kubectl("delete", "service", *sorted(s["metadata"]["name"] for s in services
                                              if s["metadata"]["name"] != "dns-shop"))
    wait_for(lambda: not net.get("services")["items"], 60, what="every Service of the namespace gone")
    wait_for(lambda: not _our_rules(net.ns), 60, what="no rule mentioning the namespace's Services")
    nat = iptables_save("nat")
    declared = {line[1:].split()[0] for line in nat.splitlines() if line.startswith(":")}
    assert not chains & declared, f"chains left behind: {sorted(chains & declared)}"
    assert not chains & _dynamic_chains(nat.splitlines())
    assert "kube-system/kube-dns" in nat  # the others' rules are still there

    node = net.c.get_json("node", E2E_NODE)
    internal = next(a["address"] for a in node["status"]["addresses"] if a["type"] == "InternalIP")
    with ThreadPoolExecutor(max_workers=len(targets) + 1) as pool:
        answering = [t for t, ok in zip([*targets, (internal, NODE_PORT)],
                                        pool.map(lambda t: tcp_answers(*t), [*targets, (internal, NODE_PORT)]),
                                        strict=True) if ok]
    assert not answering, f"still answering after deletion: {answering}"
    # the cluster DNS server forgets the names and the DNS object's host
    wait_for(lambda: (r := try_query(f"hostnames.{net.ns}.svc.cluster.local")) and r.header.rcode == RCODE.NXDOMAIN,
             30, what="hostnames name gone")
    wait_for(lambda: (r := try_query(SHOP_HOST)) and not a_records(r), 30, what="shop host gone")
