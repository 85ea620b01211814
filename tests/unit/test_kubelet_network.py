"""Pure pod-network logic of the kubelet: route planning and diffing, netfilter rules, DNS files.

Commands are recorded by a fake runner; nothing here touches the host.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from minik8s.api.base import Obj
from minik8s.host.errors import CommandFailed, ConfigError
from minik8s.kubelet.config import check_backend, check_cidr
from minik8s.kubelet.network.bridge import network_mismatch, network_options, set_hairpin
from minik8s.kubelet.network.dnsconfig import (
    DNSConfig,
    PodFiles,
    effective_policy,
    merge_options,
    parse_resolv_conf,
    pod_dns,
    pod_hostname,
    render_hosts,
    render_resolv_conf,
)
from minik8s.kubelet.network.netfilter import FILTER_CHAIN, NAT_CHAIN, Netfilter, rules
from minik8s.kubelet.network.podnetwork import PodNetworkAgent
from minik8s.kubelet.network.routes import (
    DIRECT,
    LOCAL,
    ROUTED,
    UNREACHABLE,
    VXLAN_DEVICE,
    Peer,
    Plan,
    Route,
    Routes,
    diff,
    is_ours,
    node_peer,
    plan,
    vtep_address,
    vtep_mac,
)

CLUSTER = "10.244.0.0/16"


def node(name: str, cidr: str | None, ip: str | None) -> Obj:
    spec = {"podCIDR": cidr, "podCIDRs": [cidr]} if cidr else {}
    addresses = [{"type": "InternalIP", "address": ip}] if ip else []
    return {"metadata": {"name": name}, "spec": spec,
            "status": {"addresses": [*addresses, {"type": "Hostname", "address": name}]}}


def reach_table(**where: str) -> Any:
    """reach(ip) from a mapping of the last octet (``d2="direct"``) to a class; default ROUTED."""
    return lambda ip: where.get("d" + ip.rsplit(".", 1)[1], ROUTED)


# ---------------------------------------------------------------------------- peers and plans
def test_node_peer_needs_a_pod_cidr_and_an_internal_ip() -> None:
    assert node_peer(node("a", "10.244.1.7/24", "192.168.1.2")) == Peer("a", "10.244.1.0/24", "192.168.1.2")
    assert node_peer(node("a", None, "192.168.1.2")) is None
    assert node_peer(node("a", "10.244.1.0/24", None)) is None
    assert node_peer(node("a", "fd00::/64", "192.168.1.2")) is None
    assert node_peer(node("a", "garbage", "192.168.1.2")) is None
    only_old_field = {"metadata": {"name": "b"}, "spec": {"podCIDR": "10.244.2.0/24"},
                      "status": {"addresses": [{"type": "InternalIP", "address": "192.168.1.3"}]}}
    assert node_peer(only_old_field) == Peer("b", "10.244.2.0/24", "192.168.1.3")


def test_host_gw_routes_each_other_node_via_its_internal_ip_when_on_link() -> None:
    peers = [node_peer(node(n, c, ip)) for n, c, ip in [
        ("me", "10.244.1.0/24", "192.168.1.1"), ("b", "10.244.2.0/24", "192.168.1.2"),
        ("c", "10.244.3.0/24", "192.168.1.3"), ("far", "10.244.4.0/24", "192.168.9.4"),
        ("same-host", "10.244.5.0/24", "127.0.0.1"), ("gone", "10.244.6.0/24", "192.168.1.6")]]
    got = plan([p for p in peers if p], "me", "10.244.1.0/24", CLUSTER, "host-gw",
               reach_table(d2=DIRECT, d3=DIRECT, d4=ROUTED, d1=LOCAL, d6=UNREACHABLE))
    assert got.routes == {"10.244.2.0/24": Route("10.244.2.0/24", "192.168.1.2", None, "b"),
                          "10.244.3.0/24": Route("10.244.3.0/24", "192.168.1.3", None, "c")}
    assert "not on a local link" in got.skipped["far"] and "this host" in got.skipped["same-host"]
    assert "no route" in got.skipped["gone"] and "me" not in got.skipped and got.vxlan_peers == []
    assert got.routes["10.244.2.0/24"].argv() == ["ip", "route", "replace", "10.244.2.0/24", "via", "192.168.1.2",
                                                  "proto", "250"]


def test_unsafe_pod_cidrs_are_never_routed() -> None:
    peers = [Peer("a-outside", "10.99.0.0/24", "192.168.1.2"), Peer("b-whole", CLUSTER, "192.168.1.3"),
             Peer("c-mine", "10.244.1.0/25", "192.168.1.4"), Peer("d-first", "10.244.7.0/24", "192.168.1.5"),
             Peer("e-overlap", "10.244.7.128/25", "192.168.1.6"), Peer("f-default", "0.0.0.0/0", "192.168.1.7")]
    got = plan(peers, "me", "10.244.1.0/24", CLUSTER, "host-gw", lambda ip: DIRECT)
    assert list(got.routes) == ["10.244.7.0/24"]
    assert set(got.skipped) == {"a-outside", "b-whole", "c-mine", "e-overlap", "f-default"}
    assert "not a subnet" in got.skipped["a-outside"] and "overlaps" in got.skipped["e-overlap"]


def test_vxlan_and_auto_backends() -> None:
    peers = [Peer("b", "10.244.2.0/24", "192.168.1.2"), Peer("c", "10.244.3.0/24", "192.168.9.3")]
    reach = reach_table(d2=DIRECT, d3=ROUTED)
    vx = plan(peers, "me", "10.244.1.0/24", CLUSTER, "vxlan", reach)
    assert vx.routes["10.244.2.0/24"] == Route("10.244.2.0/24", "10.244.2.0", VXLAN_DEVICE, "b")
    assert [p.name for p in vx.vxlan_peers] == ["b", "c"]
    assert vx.routes["10.244.3.0/24"].argv() == ["ip", "route", "replace", "10.244.3.0/24", "via", "10.244.3.0",
                                                 "dev", VXLAN_DEVICE, "onlink", "proto", "250"]
    auto = plan(peers, "me", "10.244.1.0/24", CLUSTER, "auto", reach)
    assert auto.routes["10.244.2.0/24"].dev is None and auto.routes["10.244.3.0/24"].dev == VXLAN_DEVICE
    assert [p.name for p in auto.vxlan_peers] == ["c"]
    assert plan(peers, "me", "10.244.1.0/24", CLUSTER, "none", reach).routes == {}
    assert vtep_address("10.244.3.0/24") == "10.244.3.0" and vtep_mac("192.168.9.3") == "0a:6b:c0:a8:09:03"


# ---------------------------------------------------------------------------- diff against the table
def table_route(dst: str, gateway: str | None = None, proto: str = "250", **extra: Any) -> Obj:
    r: Obj = {"dst": dst, "protocol": proto, "flags": [], **extra}
    if gateway:
        r["gateway"] = gateway
    return r


def test_diff_adds_fixes_and_deletes_only_our_routes() -> None:
    want = Plan(routes={"10.244.2.0/24": Route("10.244.2.0/24", "192.168.1.2"),
                        "10.244.3.0/24": Route("10.244.3.0/24", "192.168.1.3"),
                        "10.244.4.0/24": Route("10.244.4.0/24", "192.168.1.4"),
                        "10.244.5.0/24": Route("10.244.5.0/24", "192.168.1.5")})
    table = [
        table_route("default", "192.0.2.1", "boot"),
        table_route("10.244.0.0/16", type="blackhole"),                   # our blackhole: not a peer route
        table_route("10.244.1.0/24", proto="kernel", dev="br0"),          # the local bridge
        table_route("10.244.2.0/24", "192.168.1.2"),                      # right already
        table_route("10.244.3.0/24", "192.168.1.99"),                     # ours, wrong gateway
        table_route("10.244.5.0/24", "192.168.1.50", "static"),           # someone else's: conflict
        table_route("10.244.9.0/24", "192.168.1.9"),                      # ours, node gone
        table_route("10.244.10.0/24", "192.168.1.10", "boot"),            # someone else's, not wanted
        table_route("10.99.0.0/24", "192.168.1.11"),                      # proto 250 outside the cluster CIDR
        table_route("10.244.11.0/24", "192.168.1.12", table="100"),       # another table
        table_route("10.244.224.0/20", type="blackhole"),                 # a test cluster inside this one...
        table_route("10.244.231.0/24", "192.168.1.13"),                   # ...and its route
    ]
    changes = diff(want, table, CLUSTER)
    assert [r.dst for r in changes.replace] == ["10.244.3.0/24", "10.244.4.0/24"]
    assert [r["dst"] for r in changes.delete] == ["10.244.9.0/24"]
    assert list(changes.conflicts) == ["10.244.5.0/24"] and "someone else" in changes.conflicts["10.244.5.0/24"]
    assert not is_ours(table[1], CLUSTER) and not is_ours(table[8], CLUSTER) and is_ours(table[6], CLUSTER)
    assert is_ours(table[-1], CLUSTER) and is_ours(table[-1], "10.244.224.0/20")  # only the table tells them apart


def test_diff_of_vxlan_routes_checks_device_and_onlink() -> None:
    want = Plan(routes={"10.244.2.0/24": Route("10.244.2.0/24", "10.244.2.0", VXLAN_DEVICE)})
    good = table_route("10.244.2.0/24", "10.244.2.0", dev=VXLAN_DEVICE, flags=["onlink"])
    assert diff(want, [good], CLUSTER).replace == []
    assert len(diff(want, [{**good, "flags": []}], CLUSTER).replace) == 1


class FakeRunner:
    """Records argv lists; answers from ``replies`` (first matching prefix), raising for ``fail`` prefixes."""

    def __init__(self, replies: dict[str, str] | None = None, fail: tuple[str, ...] = ()) -> None:
        self.calls: list[list[str]] = []
        self.replies = replies or {}
        self.fail = fail

    def __call__(self, argv: list[str]) -> str:
        self.calls.append(argv)
        line = " ".join(argv)
        if line.startswith(self.fail):
            raise CommandFailed(argv, 1, "iptables: Bad rule (does a matching rule exist in that chain?).")
        for prefix, out in self.replies.items():
            if line.startswith(prefix):
                return out
        return ""


def test_routes_apply_and_reach_use_ip() -> None:
    runner = FakeRunner({"ip -j -4 route get 192.168.1.2": json.dumps([{"dst": "192.168.1.2", "dev": "eth0"}]),
                         "ip -j -4 route get 192.168.9.3": json.dumps([{"dst": "x", "gateway": "192.168.1.1"}]),
                         "ip -j -4 route get 127.0.0.1": json.dumps([{"type": "local", "dev": "lo"}])})
    routes = Routes(runner)
    assert [routes.reach(ip) for ip in ("192.168.1.2", "192.168.9.3", "127.0.0.1")] == [DIRECT, ROUTED, LOCAL]
    changes = diff(Plan(routes={"10.244.2.0/24": Route("10.244.2.0/24", "192.168.1.2")}),
                   [table_route("10.244.9.0/24", "192.168.1.9")], CLUSTER)
    runner.calls.clear()
    routes.apply(changes)
    assert runner.calls == [["ip", "route", "del", "10.244.9.0/24", "proto", "250"],
                            ["ip", "route", "replace", "10.244.2.0/24", "via", "192.168.1.2", "proto", "250"]]


def test_blackhole_is_added_once_and_never_over_someone_elses_route() -> None:
    runner = FakeRunner()
    assert Routes(runner).ensure_blackhole(CLUSTER) is None
    assert runner.calls[-1] == ["ip", "route", "replace", "blackhole", CLUSTER, "proto", "250"]
    ours = FakeRunner({"ip -j -4 route show": json.dumps([table_route(CLUSTER, type="blackhole")])})
    assert Routes(ours).ensure_blackhole(CLUSTER) is None and len(ours.calls) == 1
    theirs = FakeRunner({"ip -j -4 route show": json.dumps([table_route(CLUSTER, "10.0.0.1", "static")])})
    assert "someone else" in (Routes(theirs).ensure_blackhole(CLUSTER) or "") and len(theirs.calls) == 1


# ---------------------------------------------------------------------------- netfilter
def test_netfilter_rules_keep_pod_sources_and_masquerade_the_rest() -> None:
    got = rules(CLUSTER, "10.96.0.0/16")
    nat = [" ".join(r.spec) for r in got if r.chain == NAT_CHAIN]
    assert nat[0].startswith(f"-s {CLUSTER} -d {CLUSTER} ") and nat[0].endswith("-j RETURN")
    assert nat[1].startswith(f"-s {CLUSTER} -d 10.96.0.0/16 ") and nat[1].endswith("-j RETURN")
    assert nat[-1].startswith(f"-s {CLUSTER} -m comment") and nat[-1].endswith("-j MASQUERADE --random-fully")
    fwd = [" ".join(r.spec) for r in got if r.chain == FILTER_CHAIN]
    assert fwd[0].startswith(f"-s {CLUSTER} ") and fwd[1].startswith(f"-d {CLUSTER} ")
    assert all(r.table == ("nat" if r.chain == NAT_CHAIN else "filter") for r in got)
    assert len(rules(CLUSTER, None)) == len(got) - 1


def test_netfilter_ensure_rewrites_only_its_own_rules() -> None:
    other = f'-A {NAT_CHAIN} -s 10.250.0.0/16 -m comment --comment "minik8s pod network 10.250.0.0/16: x" -j RETURN'
    stale = f'-A {NAT_CHAIN} -s {CLUSTER} -m comment --comment "minik8s pod network {CLUSTER}: old" -j RETURN'
    runner = FakeRunner({f"iptables -w 5 -t nat -S {NAT_CHAIN}": f"-N {NAT_CHAIN}\n{other}\n{stale}\n",
                         "iptables -w 5 -t filter -S DOCKER-USER": "-N DOCKER-USER\n-A DOCKER-USER -j RETURN\n"},
                        fail=("iptables -w 5 -t nat -C", "iptables -w 5 -t filter -C"))
    assert Netfilter(runner).ensure(CLUSTER, "10.96.0.0/16")
    lines = [" ".join(c[5:]) for c in runner.calls]
    assert f"-D {NAT_CHAIN} 2" in lines and f"-D {NAT_CHAIN} 1" not in lines  # the other cluster's rule stays
    assert sum(1 for line in lines if line.startswith(f"-A {NAT_CHAIN}")) == 4
    assert any(line.startswith(f"-I POSTROUTING 1 -m comment --comment minik8s pod network -j {NAT_CHAIN}")
               for line in lines)
    assert any(line.startswith("-I DOCKER-USER 1") and line.endswith(FILTER_CHAIN) for line in lines)


# ---------------------------------------------------------------------------- Docker network options, hairpin
def test_pod_network_options_and_when_to_recreate() -> None:
    opts = network_options("mk8s-net", 1450, "20.10.24+dfsg1")
    assert opts["com.docker.network.bridge.enable_ip_masquerade"] == "false"
    assert opts["com.docker.network.bridge.name"] == "mk8s-net" and opts["com.docker.network.driver.mtu"] == "1450"
    assert "com.docker.network.bridge.gateway_mode_ipv4" not in opts
    assert network_options("a-very-long-network-name", None, "28.1.0")[
        "com.docker.network.bridge.gateway_mode_ipv4"] == "nat-unprotected"
    info: Obj = {"IPAM": {"Config": [{"Subnet": "10.244.1.0/24"}]},
                 "Options": {"com.docker.network.bridge.enable_ip_masquerade": "false"}}
    assert network_mismatch(info, "10.244.1.0/24", {}) is None
    assert "subnet" in (network_mismatch(info, "10.244.2.0/24", {}) or "")
    assert "masquerades" in (network_mismatch({**info, "Options": {}}, "10.244.1.0/24", {}) or "")
    assert "MTU" in (network_mismatch(info, "10.244.1.0/24", {"com.docker.network.driver.mtu": "1450"}) or "")


def test_set_hairpin_switches_every_port_of_the_bridge() -> None:
    ports = [{"ifname": "veth1", "master": "br0", "hairpin": False}, {"ifname": "veth2", "master": "br0",
                                                                       "hairpin": True},
             {"ifname": "veth3", "master": "other", "hairpin": False}]
    runner = FakeRunner({"bridge -j -d link show": json.dumps(ports)})
    assert set_hairpin("br0", runner) == 1
    assert runner.calls[-1] == ["bridge", "link", "set", "dev", "veth1", "hairpin", "on"]


def test_flags() -> None:
    assert check_cidr("10.244.3.9/24", "--cluster-cidr") == "10.244.3.0/24"
    with pytest.raises(ConfigError, match="--cluster-cidr"):
        check_cidr("nope", "--cluster-cidr")
    assert check_backend("vxlan") == "vxlan"
    with pytest.raises(ConfigError):
        check_backend("flannel")


# ---------------------------------------------------------------------------- DNS
def pod(**spec: Any) -> Obj:
    return {"metadata": {"name": "web-0", "namespace": "shop", "uid": "u1"}, "spec": spec}


HOST = DNSConfig(["192.0.2.53"], ["corp.example"], ["timeout:2"])


def test_cluster_first_resolv_conf_is_kubernetes_format() -> None:
    cfg = pod_dns(pod(), ["10.96.0.10"], "cluster.local", HOST)
    assert render_resolv_conf(cfg) == (
        "nameserver 10.96.0.10\n"
        "search shop.svc.cluster.local svc.cluster.local cluster.local corp.example\n"
        "options ndots:5\n")
    assert render_resolv_conf(pod_dns(pod(), ["10.96.0.10"], "cluster.local", DNSConfig())).splitlines()[1] == \
        "search shop.svc.cluster.local svc.cluster.local cluster.local"


def test_dns_policies_and_dns_config_merge() -> None:
    assert pod_dns(pod(dnsPolicy="Default"), ["10.96.0.10"], "cluster.local", HOST) == HOST
    # ClusterFirst without --cluster-dns falls back to Default, with Kubernetes' event message
    assert pod_dns(pod(), [], "cluster.local", HOST) == HOST
    policy, warning = effective_policy(pod(), [])
    assert policy == "Default" and warning and "Falling back to \"Default\" policy" in warning
    # hostNetwork pods use the host's unless ClusterFirstWithHostNet
    assert pod_dns(pod(hostNetwork=True), ["10.96.0.10"], "cluster.local", HOST) == HOST
    assert pod_dns(pod(hostNetwork=True, dnsPolicy="ClusterFirstWithHostNet"), ["10.96.0.10"], "cluster.local",
                   HOST).servers == ["10.96.0.10"]
    extra = {"nameservers": ["1.1.1.1", "10.96.0.10"], "searches": ["my.dns.search", "cluster.local"],
             "options": [{"name": "ndots", "value": "2"}, {"name": "edns0"}]}
    merged = pod_dns(pod(dnsConfig=extra), ["10.96.0.10"], "cluster.local", DNSConfig())
    assert merged.servers == ["10.96.0.10", "1.1.1.1"]
    assert merged.searches == ["shop.svc.cluster.local", "svc.cluster.local", "cluster.local", "my.dns.search"]
    assert merged.options == ["ndots:2", "edns0"]
    none = pod_dns(pod(dnsPolicy="None", dnsConfig={"nameservers": ["1.2.3.4"], "searches": ["x.local"]}),
                   ["10.96.0.10"], "cluster.local", HOST)
    assert none == DNSConfig(["1.2.3.4"], ["x.local"], [])
    many = pod_dns(pod(dnsPolicy="None", dnsConfig={"nameservers": [f"10.0.0.{i}" for i in range(5)],
                                                    "searches": [f"s{i}.example" for i in range(40)]}),
                   [], "cluster.local", HOST)
    assert len(many.servers) == 3 and len(many.searches) == 32
    assert merge_options(["ndots:5", "timeout:1"], [{"name": "timeout", "value": 3}]) == ["ndots:5", "timeout:3"]


def test_parse_resolv_conf() -> None:
    text = "# generated\nnameserver 10.0.0.2\nnameserver 10.0.0.3 ; x\ndomain a.example\nsearch b.example c.example\n" \
           "options ndots:1 rotate\n"
    assert parse_resolv_conf(text) == DNSConfig(["10.0.0.2", "10.0.0.3"], ["b.example", "c.example"],
                                                ["ndots:1", "rotate"])


def test_hosts_file_has_the_pod_name_fqdn_and_aliases() -> None:
    plain = render_hosts(pod(), "10.244.1.5", "cluster.local")
    assert plain.startswith("# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n")
    assert plain.endswith("10.244.1.5\tweb-0\n")
    sub = render_hosts(pod(hostname="db", subdomain="backend",
                           hostAliases=[{"ip": "127.0.0.1", "hostnames": ["foo.local", "bar.local"]}]),
                       "10.244.1.5", "cluster.local")
    assert "10.244.1.5\tdb.backend.shop.svc.cluster.local\tdb\n" in sub
    assert sub.endswith("# Entries added by HostAliases.\n127.0.0.1\tfoo.local\tbar.local\n")
    assert pod_hostname({"metadata": {"name": "x" * 62 + "-abc"}, "spec": {}}) == "x" * 62


def test_pod_files_are_written_and_bound(tmp_path: Path) -> None:
    resolv = tmp_path / "host-resolv.conf"
    resolv.write_text("nameserver 192.0.2.53\n")
    files = PodFiles(tmp_path / "root", ["10.96.0.10"], "cluster.local", str(resolv))
    written = files.write(pod(), "10.244.1.5")
    assert set(written) == {"/etc/resolv.conf", "/etc/hosts"}
    inode = Path(written["/etc/hosts"]).stat().st_ino
    assert Path(written["/etc/resolv.conf"]).read_text().startswith("nameserver 10.96.0.10\n")
    files.write(pod(), "10.244.1.6")  # a new sandbox IP: same file, new content
    assert Path(written["/etc/hosts"]).stat().st_ino == inode
    assert "10.244.1.6\tweb-0" in Path(written["/etc/hosts"]).read_text()
    assert set(files.write(pod(hostNetwork=True), "192.0.2.2")) == {"/etc/resolv.conf"}
    binds = PodFiles.binds({"volumeMounts": [{"mountPath": "/etc/hosts"}],
                            "securityContext": {"readOnlyRootFilesystem": True}}, written)
    assert binds == [f"{written['/etc/resolv.conf']}:/etc/resolv.conf:ro"]


# ---------------------------------------------------------------------------- the agent
def test_agent_routes_nothing_before_its_pod_cidr_is_known_then_syncs() -> None:
    table = [table_route("10.244.9.0/24", "192.168.1.9")]  # ours, for a node that is gone
    runner = FakeRunner({"ip -j -4 route show table main exact": "",
                         "ip -j -4 route show table main": json.dumps(table),
                         "ip -j -4 route get 192.168.1.2": json.dumps([{"dst": "192.168.1.2", "dev": "eth0"}])})
    nodes = [node("me", "10.244.1.0/24", "192.168.1.1"), node("b", "10.244.2.0/24", "192.168.1.2")]
    agent = PodNetworkAgent("me", "192.168.1.1", CLUSTER, "10.96.0.0/16", "host-gw", lambda: nodes, runner)
    report = agent.sync(nodes)
    assert report.replaced == [] and report.deleted == []
    assert not any(c[:3] == ["ip", "route", "del"] for c in runner.calls)
    assert ["ip", "route", "replace", "blackhole", CLUSTER, "proto", "250"] in runner.calls
    agent.pod_cidr = "10.244.1.0/24"
    report = agent.sync(nodes)
    assert report.replaced == ["10.244.2.0/24"] and report.deleted == ["10.244.9.0/24"]
    assert not any(c[:2] == ["ip", "link"] and "add" in c for c in runner.calls)  # no VXLAN device for host-gw
