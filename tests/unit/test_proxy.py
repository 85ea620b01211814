"""Unit tests for the proxy: state building, iptables rule generation, IPVS planning (no kernel)."""

from __future__ import annotations

import logging
import re
import shlex
from typing import Any

import pytest

from minik8s.host.errors import CommandFailed, ConfigError
from minik8s.proxy.config import ProxyConfig
from minik8s.proxy.errors import IPVSUnavailable
from minik8s.proxy.iptables import (
    FILTER,
    NAT,
    IptablesBackend,
    cleanup_payload,
    ext_chain_name,
    jumps,
    missing_jumps,
    parse_save,
    programmed_endpoints,
    render,
    restore_payload,
    sep_chain,
    stale_chains,
    svc_chain,
)
from minik8s.proxy.ipvs import (
    IPVSBackend,
    IPVSTable,
    RealServer,
    VirtualServer,
    desired_table,
    ipvs_unavailable_reason,
    owned,
    plan,
    require_ipvs,
)
from minik8s.proxy.servicemap import Endpoint, ProxyState, ServicePortName, build_state

CFG = ProxyConfig()


def svc(name: str, ip: str | None, ports: list[dict[str, Any]], ns: str = "default", type_: str = "ClusterIP",
        ) -> dict[str, Any]:
    spec: dict[str, Any] = {"type": type_, "ports": ports}
    if ip is not None:
        spec["clusterIP"] = ip
    return {"metadata": {"namespace": ns, "name": name}, "spec": spec}


def eps(name: str, ips: list[str], ports: list[dict[str, Any]], ns: str = "default",
        not_ready: list[str] | None = None, terminating: list[str] | None = None) -> dict[str, Any]:
    """An EndpointSlice of Service ``name``: ``ips`` ready, ``not_ready`` not, ``terminating`` serving
    and terminating."""
    endpoints = [{"addresses": [i], "conditions": {"ready": True}} for i in ips]
    endpoints += [{"addresses": [i], "conditions": {"ready": False}} for i in not_ready or []]
    endpoints += [{"addresses": [i], "conditions": {"ready": False, "serving": True, "terminating": True}}
                  for i in terminating or []]
    return {"metadata": {"namespace": ns, "name": f"{name}-x1", "labels": {"kubernetes.io/service-name": name}},
            "addressType": "IPv4", "endpoints": endpoints, "ports": ports}


def web_state(ips: list[str], node_port: int | None = None, sticky: int | None = None) -> ProxyState:
    """Service default/web (10.96.0.10:80, endpoints ``ips`` on 8080); ``sticky``: ClientIP affinity
    with that timeout."""
    port: dict[str, Any] = {"name": "http", "port": 80, "protocol": "TCP", "targetPort": "web"}
    if node_port:
        port["nodePort"] = node_port
    service = svc("web", "10.96.0.10", [port], type_="NodePort" if node_port else "ClusterIP")
    if sticky is not None:
        service["spec"].update(sessionAffinity="ClientIP",
                               sessionAffinityConfig={"clientIP": {"timeoutSeconds": sticky}})
    return build_state([service], [eps("web", ips, [{"name": "http", "port": 8080, "protocol": "TCP"}])])


def rules_of(text: str, chain: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(f"-A {chain} ")]


# ---------------------------------------------------------------------------- config
def test_config_derives_names_from_the_prefix() -> None:
    assert CFG.chain("SERVICES") == "KUBE-SERVICES" and CFG.mark == "0x4000"
    assert CFG.service_bridge == "minik8s-svc0" and CFG.ipvs_interface == "minik8s-proxy0"
    test = ProxyConfig(chain_prefix="KTab12f").validate()
    assert test.chain("MARK-MASQ") == "KTab12f-MARK-MASQ"
    assert 16 <= test.masquerade_bit <= 27 and test.mark == hex(1 << test.masquerade_bit)
    assert test.service_bridge == "msvc-ktab12f" and len(test.ipvs_interface) <= 15


@pytest.mark.parametrize("kwargs", [{"chain_prefix": "TOOLONG12"}, {"chain_prefix": "1AB"}, {"chain_prefix": "A-B"},
                                    {"service_cidr": "10.96.0.0/33"}, {"cluster_cidr": "fd00::/64"},
                                    {"node_ip": "not-an-ip"}, {"min_sync_period": 60.0}])
def test_config_rejects_bad_values(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        ProxyConfig(**kwargs).validate()


def test_longest_prefix_still_fits_iptables_chain_names() -> None:
    cfg = ProxyConfig(chain_prefix="KT12345").validate()
    name = svc_chain(cfg, ServicePortName("ns", "a-very-long-service-name", "http"), "TCP")
    assert len(name) == 28
    assert all(len(c) <= 28 for c in render(web_state(["10.244.1.2"], 30080), cfg).tables[NAT].chains)


# ---------------------------------------------------------------------------- service map
def test_build_state_matches_ports_by_name_and_uses_ready_addresses_only() -> None:
    services = [svc("multi", "10.96.0.20", [{"name": "http", "port": 80, "protocol": "TCP"},
                                              {"name": "dns", "port": 53, "protocol": "UDP"}])]
    endpoints = [eps("multi", ["10.244.1.5", "10.244.1.4"], [{"name": "http", "port": 8080},
                                                              {"name": "dns", "port": 5353, "protocol": "UDP"}],
                     not_ready=["10.244.1.9"])]
    state = build_state(services, endpoints)
    http, dns = ServicePortName("default", "multi", "http"), ServicePortName("default", "multi", "dns")
    assert state.endpoints[http] == (Endpoint("10.244.1.4", 8080), Endpoint("10.244.1.5", 8080))
    assert state.endpoints[dns] == (Endpoint("10.244.1.4", 5353), Endpoint("10.244.1.5", 5353))
    assert state.services[dns].protocol == "UDP" and state.endpoint_count == 4
    assert str(http) == "default/multi:http" and str(ServicePortName("a", "b")) == "a/b"


def test_build_state_skips_headless_external_and_unallocated_services() -> None:
    services = [svc("headless", "None", [{"port": 80}]), svc("pending", None, [{"port": 80}]),
                {"metadata": {"namespace": "default", "name": "ext"},
                 "spec": {"type": "ExternalName", "externalName": "example.invalid"}},
                svc("ok", "10.96.0.3", [{"port": 80}])]
    state = build_state(services, [])
    assert [str(n) for n in state.services] == ["default/ok"]
    assert state.endpoints[ServicePortName("default", "ok")] == ()


def test_endpoints_sorted_numerically_and_deduplicated() -> None:
    state = web_state(["10.244.1.10", "10.244.1.9", "10.244.1.10"])
    assert [str(e) for e in next(iter(state.endpoints.values()))] == ["10.244.1.9:8080", "10.244.1.10:8080"]


def test_serving_terminating_endpoints_only_when_none_is_ready() -> None:
    services = [svc("web", "10.96.0.10", [{"name": "http", "port": 80, "protocol": "TCP"}])]
    port = [{"name": "http", "port": 8080, "protocol": "TCP"}]
    http = ServicePortName("default", "web", "http")
    state = build_state(services, [eps("web", ["10.244.1.2"], port, terminating=["10.244.1.3"])])
    assert state.endpoints[http] == (Endpoint("10.244.1.2", 8080),)
    state = build_state(services, [eps("web", [], port, not_ready=["10.244.1.4"], terminating=["10.244.1.3"])])
    assert state.endpoints[http] == (Endpoint("10.244.1.3", 8080),)
    # a slice split in two (over 100 endpoints) and another Service's slice
    state = build_state(services, [eps("web", ["10.244.1.5"], port), eps("web", ["10.244.1.6"], port),
                                   eps("other", ["10.244.1.7"], port)])
    assert state.endpoints[http] == (Endpoint("10.244.1.5", 8080), Endpoint("10.244.1.6", 8080))


def test_node_port_only_for_nodeport_services() -> None:
    services = [svc("a", "10.96.0.4", [{"port": 80, "nodePort": 30001}]),
                svc("b", "10.96.0.5", [{"port": 80, "nodePort": 30002}], type_="NodePort")]
    state = build_state(services, [])
    assert [sp.node_port for sp in state.services.values()] == [None, 30002]


# ---------------------------------------------------------------------------- iptables rendering
def test_chain_names_are_stable_hashes() -> None:
    name = ServicePortName("default", "web", "http")
    a = svc_chain(CFG, name, "TCP")
    assert re.fullmatch(r"KUBE-SVC-[A-Z2-7]{16}", a)
    assert a == svc_chain(CFG, name, "TCP") != svc_chain(CFG, name, "UDP")
    assert a != svc_chain(CFG, ServicePortName("other", "web", "http"), "TCP")
    s1 = sep_chain(CFG, name, "TCP", Endpoint("10.244.1.2", 8080))
    assert re.fullmatch(r"KUBE-SEP-[A-Z2-7]{16}", s1)
    assert s1 != sep_chain(CFG, name, "TCP", Endpoint("10.244.1.2", 8081))
    assert svc_chain(ProxyConfig(chain_prefix="KT1"), name, "TCP") == "KT1" + a[4:]


def test_render_is_deterministic() -> None:
    a = render(web_state(["10.244.1.3", "10.244.1.2"]), CFG).text()
    b = render(web_state(["10.244.1.2", "10.244.1.3"]), CFG).text()
    assert a == b


def test_cluster_ip_dnat_with_statistic_probabilities() -> None:
    ips = ["10.244.1.2", "10.244.1.3", "10.244.1.4", "10.244.1.5"]
    text = restore_payload(render(web_state(ips), CFG))
    name = ServicePortName("default", "web", "http")
    chain = svc_chain(CFG, name, "TCP")
    assert (f'-A KUBE-SERVICES -d 10.96.0.10/32 -p tcp -m comment --comment "default/web:http cluster IP" '
            f"-m tcp --dport 80 -j {chain}") in text
    svc_rules = rules_of(text, chain)
    assert "! -s 10.244.0.0/16 -d 10.96.0.10/32" in svc_rules[0] and svc_rules[0].endswith("-j KUBE-MARK-MASQ")
    probs = [re.search(r"--probability (\S+)", r) for r in svc_rules[1:]]
    assert [p.group(1) if p else None for p in probs] == ["0.2500000000", "0.3333333333", "0.5000000000", None]
    for ip, rule in zip(ips, svc_rules[1:], strict=True):
        sep = sep_chain(CFG, name, "TCP", Endpoint(ip, 8080))
        assert rule.endswith(f"-j {sep}") and f"-> {ip}:8080" in rule
        assert rules_of(text, sep) == [
            f'-A {sep} -s {ip}/32 -m comment --comment "default/web:http" -j KUBE-MARK-MASQ',
            f'-A {sep} -p tcp -m comment --comment "default/web:http" -m tcp -j DNAT --to-destination {ip}:8080']
    # overall probability of each endpoint is 1/n
    remaining, shares = 1.0, []
    for p in probs:
        share = remaining * (float(p.group(1)) if p else 1.0)
        shares.append(share)
        remaining -= share
    assert shares == pytest.approx([0.25] * 4, abs=1e-8)


def test_client_ip_affinity_checks_recent_clients_before_the_random_pick() -> None:
    """kube-proxy's rules: each endpoint chain records the client (``-m recent --set``) where it DNATs,
    and the service chain sends a client seen within the timeout back to it, before the random rules."""
    ips = ["10.244.1.2", "10.244.1.3", "10.244.1.4"]
    text = restore_payload(render(web_state(ips, node_port=30080, sticky=600), CFG))
    name = ServicePortName("default", "web", "http")
    chain = svc_chain(CFG, name, "TCP")
    seps = [sep_chain(CFG, name, "TCP", Endpoint(ip, 8080)) for ip in ips]
    svc_rules = rules_of(text, chain)
    assert svc_rules[0].endswith("-j KUBE-MARK-MASQ")
    assert svc_rules[1:4] == [
        f'-A {chain} -m comment --comment "default/web:http -> {ip}:8080" -m recent --name {sep} --rcheck '
        f"--seconds 600 --reap -j {sep}" for ip, sep in zip(ips, seps, strict=True)]
    assert ["--probability" in r for r in svc_rules[4:]] == [True, True, False]
    assert [r.split()[-1] for r in svc_rules[4:]] == seps
    for ip, sep in zip(ips, seps, strict=True):
        assert rules_of(text, sep) == [
            f'-A {sep} -s {ip}/32 -m comment --comment "default/web:http" -j KUBE-MARK-MASQ',
            f'-A {sep} -p tcp -m comment --comment "default/web:http" -m tcp -m recent --name {sep} --set '
            f"-j DNAT --to-destination {ip}:8080"]
    # NodePort traffic enters the same service chain (through its EXT chain), so it shares the affinity
    ext = ext_chain_name(CFG, name, "TCP")
    assert rules_of(text, "KUBE-NODEPORTS")[-1].endswith(f"--dport 30080 -j {ext}")
    assert rules_of(text, ext)[-1] == f"-A {ext} -j {chain}"
    # the read-back view still sees each endpoint once
    assert programmed_endpoints(text, CFG) == {"10.96.0.10:80/tcp": [f"{ip}:8080" for ip in ips]}
    # a single endpoint is remembered too (a new endpoint later must not take its clients)
    one = restore_payload(render(web_state(ips[:1], sticky=10800), CFG))
    assert f"-m recent --name {seps[0]} --rcheck --seconds 10800 --reap -j {seps[0]}" in one
    # without affinity, no recent match anywhere; a changed timeout is a changed ruleset
    assert "recent" not in restore_payload(render(web_state(ips), CFG))
    assert render(web_state(ips, sticky=600), CFG).text() != render(web_state(ips, sticky=601), CFG).text()
    assert "recent" not in restore_payload(render(web_state(ips, sticky=600), CFG, mode="ipvs"))


def test_fixed_chains_mark_and_masquerade() -> None:
    text = restore_payload(render(web_state(["10.244.1.2"]), CFG))
    assert rules_of(text, "KUBE-MARK-MASQ") == ["-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000"]
    post = rules_of(text, "KUBE-POSTROUTING")
    assert post[0] == "-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN"
    assert post[1] == "-A KUBE-POSTROUTING -j MARK --xor-mark 0x4000" and "-j MASQUERADE" in post[2]
    fwd = rules_of(text, "KUBE-FORWARD")
    assert "--mark 0x4000/0x4000 -j ACCEPT" in fwd[0] and "RELATED,ESTABLISHED -j ACCEPT" in fwd[1]
    # the NodePort jump is the last rule of KUBE-SERVICES; NodePorts answer on 127.0.0.1 too (kube-proxy's
    # --iptables-localhost-nodeports), with the firewall rule that keeps outsiders off 127.0.0.0/8
    assert rules_of(text, "KUBE-SERVICES")[-1].endswith(
        "service nodeports; NOTE: this must be the last rule in this chain\" -m addrtype --dst-type LOCAL "
        "-j KUBE-NODEPORTS")
    assert rules_of(text, "KUBE-FIREWALL") == [
        '-A KUBE-FIREWALL -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m comment --comment "block incoming localnet '
        'connections" -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP']
    for cfg, mode in ((ProxyConfig(localhost_nodeports=False), "iptables"), (CFG, "ipvs")):
        text = restore_payload(render(web_state(["10.244.1.2"]), cfg, mode))
        assert rules_of(text, "KUBE-SERVICES")[-1].endswith(
            "! -d 127.0.0.0/8 -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS")
        assert rules_of(text, "KUBE-FIREWALL") == []


def test_service_without_endpoints_is_rejected_in_filter() -> None:
    state = build_state([svc("empty", "10.96.0.11", [{"name": "http", "port": 81, "nodePort": 30081}],
                             type_="NodePort")], [])
    rs = render(state, CFG)
    flt = "\n".join(rs.tables[FILTER].rules)
    assert ('-A KUBE-SERVICES -d 10.96.0.11/32 -p tcp -m comment --comment "default/empty:http has no endpoints" '
            "-m tcp --dport 81 -j REJECT --reject-with icmp-port-unreachable") in flt
    assert ("-A KUBE-EXTERNAL-SERVICES -m addrtype --dst-type LOCAL -p tcp -m comment --comment "
            '"default/empty:http has no endpoints" -m tcp --dport 30081 -j REJECT') in flt
    nat = "\n".join(rs.tables[NAT].rules)
    assert "10.96.0.11" not in nat and "KUBE-SVC-" not in nat


def test_nodeport_marks_and_jumps_to_the_service_chain() -> None:
    """kube-proxy 1.32: a NodePort jumps to the port's EXT chain, which (policy Cluster) masquerades and
    goes on to the cluster-wide chain."""
    text = restore_payload(render(web_state(["10.244.1.2"], node_port=30080), CFG))
    name = ServicePortName("default", "web", "http")
    chain, ext = svc_chain(CFG, name, "TCP"), ext_chain_name(CFG, name, "TCP")
    assert rules_of(text, "KUBE-NODEPORTS") == [
        f'-A KUBE-NODEPORTS -p tcp -m comment --comment "default/web:http" -m tcp --dport 30080 -j {ext}']
    assert rules_of(text, ext) == [
        f'-A {ext} -m comment --comment "masquerade traffic for default/web:http external destinations" '
        "-j KUBE-MARK-MASQ", f"-A {ext} -j {chain}"]


def test_no_cluster_cidr_means_no_off_cluster_masquerade() -> None:
    text = restore_payload(render(web_state(["10.244.1.2"]), ProxyConfig(cluster_cidr="")))
    assert "! -s" not in text.replace("! -s 127.0.0.0/8", "")  # (the localnet firewall rule)


def test_restore_payload_declares_only_own_chains_and_inserts_missing_jumps() -> None:
    cfg = ProxyConfig(chain_prefix="KT9")
    rs = render(web_state(["10.244.1.2"]), cfg)
    text = restore_payload(rs, add_jumps=jumps(cfg))
    for line in text.splitlines():
        if line.startswith(":"):
            assert line.startswith(":KT9-") and line.endswith(" - [0:0]")
        elif line.startswith("-A "):
            assert line.split()[1].startswith("KT9-")
        elif line.startswith("-I "):
            assert line.split()[1] in ("PREROUTING", "OUTPUT", "POSTROUTING", "INPUT", "FORWARD")
    # inserted in reverse, so the final order at the top of FORWARD is jumps()' order
    fwd = [line for line in text.splitlines() if line.startswith("-I FORWARD")]
    assert fwd[0].endswith("-j KT9-SERVICES") and fwd[1].endswith("-j KT9-FORWARD")
    assert text.count("COMMIT") == 2 and "-F" not in text.split() and "-X" not in text.split()


SAVED = """# Generated by iptables-save
*nat
:PREROUTING ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
:DOCKER - [0:0]
:KUBE-SERVICES - [0:0]
:KUBE-SVC-OLDOLDOLDOLDOLD1 - [0:0]
:KUBE-SEP-OLDOLDOLDOLDOLD2 - [0:0]
:KUBEX-SVC-NOTOURSNOTOURS1 - [0:0]
:KT1-SVC-OTHERINSTANCEXX - [0:0]
-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A OUTPUT -m addrtype --dst-type LOCAL -j DOCKER
-A KUBE-SERVICES -d 10.96.0.99/32 -p tcp -m comment --comment "x/y" -m tcp --dport 80 -j KUBE-SVC-OLDOLDOLDOLDOLD1
-A KUBE-SVC-OLDOLDOLDOLDOLD1 -j KUBE-SEP-OLDOLDOLDOLDOLD2
-A KUBE-SEP-OLDOLDOLDOLDOLD2 -p tcp -m tcp -j DNAT --to-destination 10.244.9.9:80
COMMIT
*filter
:INPUT ACCEPT [0:0]
:FORWARD DROP [0:0]
:OUTPUT ACCEPT [0:0]
:KUBE-FORWARD - [0:0]
-A FORWARD -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD
COMMIT
"""


def test_stale_chains_are_deleted_and_others_left_alone() -> None:
    saved = parse_save(SAVED)
    rs = render(web_state(["10.244.1.2"]), CFG)
    stale = stale_chains(saved, rs, CFG)
    assert stale == {NAT: ["KUBE-SEP-OLDOLDOLDOLDOLD2", "KUBE-SVC-OLDOLDOLDOLDOLD1"], FILTER: []}
    text = restore_payload(rs, stale)
    nat = text.split("*nat")[1]
    assert ":KUBE-SVC-OLDOLDOLDOLDOLD1 - [0:0]" in nat and nat.index("-X KUBE-SVC-OLDOLDOLDOLDOLD1") > nat.index(
        "-A KUBE-SERVICES")
    assert "KUBEX" not in text and "KT1-" not in text and "DOCKER" not in text


def test_missing_jumps_are_detected_from_iptables_save() -> None:
    missing = {(j.table, j.chain, j.target) for j in missing_jumps(parse_save(SAVED), CFG)}
    assert missing == {(NAT, "OUTPUT", "KUBE-SERVICES"), (NAT, "POSTROUTING", "KUBE-POSTROUTING"),
                       (FILTER, "INPUT", "KUBE-EXTERNAL-SERVICES"), (FILTER, "FORWARD", "KUBE-SERVICES"),
                       (FILTER, "OUTPUT", "KUBE-SERVICES"), (FILTER, "INPUT", "KUBE-FIREWALL"),
                       (FILTER, "OUTPUT", "KUBE-FIREWALL"), (FILTER, "INPUT", "KUBE-NODEPORTS")}


def test_cleanup_payload_removes_own_chains_and_jumps_only() -> None:
    text = cleanup_payload(parse_save(SAVED), CFG)
    assert text is not None
    assert '-D PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES' in text
    assert "-X KUBE-SVC-OLDOLDOLDOLDOLD1" in text and "-X KUBE-FORWARD" in text
    assert "KUBEX" not in text and "KT1-" not in text and "DOCKER" not in text
    assert cleanup_payload(parse_save(SAVED), ProxyConfig(chain_prefix="NONE")) is None


def test_programmed_endpoints_reads_back_rendered_rules() -> None:
    cfg = ProxyConfig(chain_prefix="KT2")
    text = restore_payload(render(web_state(["10.244.1.3", "10.244.1.2"]), cfg))
    assert programmed_endpoints(text, cfg) == {"10.96.0.10:80/tcp": ["10.244.1.2:8080", "10.244.1.3:8080"]}
    assert programmed_endpoints(text, CFG) == {}


class RecordingRunner:
    """Stands in for iptables: returns canned iptables-save output, records restores."""

    def __init__(self, saved: str = "") -> None:
        self.saved = saved
        self.calls: list[list[str]] = []
        self.restores: list[str] = []
        self.fail = False

    def __call__(self, argv: list[str], stdin: str | None = None) -> str:
        self.calls.append(argv)
        if argv[0] == "iptables-save":
            table = argv[2]
            return "\n".join(p for p in self.saved.split("COMMIT") if f"*{table}" in p) + "\nCOMMIT\n"
        if self.fail:
            raise CommandFailed(argv, 1, "iptables-restore: line 3 failed")
        assert stdin is not None
        self.restores.append(stdin)
        return ""


def test_backend_rewrites_only_on_change_and_forces_on_resync() -> None:
    runner = RecordingRunner(SAVED)
    backend = IptablesBackend(CFG, runner)
    first = backend.sync(web_state(["10.244.1.2"]))
    assert first.changed and first.deleted_chains == 2 and first.added_jumps == 8 and len(runner.restores) == 1
    calls = len(runner.calls)
    assert not backend.sync(web_state(["10.244.1.2"])).changed and len(runner.calls) == calls  # no syscalls
    assert backend.sync(web_state(["10.244.1.2"]), force=True).changed and len(runner.restores) == 2
    calls = len(runner.calls)
    assert backend.sync(web_state(["10.244.1.2", "10.244.1.3"])).changed and len(runner.restores) == 3
    assert len(runner.calls) == calls + 1  # a partial sync: one iptables-restore, no iptables-save


def test_partial_sync_deletes_the_chains_it_no_longer_needs() -> None:
    runner = RecordingRunner()
    backend = IptablesBackend(CFG, runner)
    backend.sync(web_state(["10.244.1.2", "10.244.1.3"]))
    gone = sep_chain(CFG, ServicePortName("default", "web", "http"), "TCP", Endpoint("10.244.1.3", 8080))
    result = backend.sync(web_state(["10.244.1.2"]))
    assert result.deleted_chains == 1 and f"-X {gone}" in runner.restores[-1]
    result = backend.sync(ProxyState())
    assert result.deleted_chains == 2 and "-X KUBE-SVC-" in runner.restores[-1]
    assert "-X KUBE-SERVICES" not in runner.restores[-1]


def test_backend_failure_forces_the_next_write() -> None:
    runner = RecordingRunner()
    backend = IptablesBackend(CFG, runner)
    backend.sync(web_state(["10.244.1.2"]))
    runner.fail = True
    with pytest.raises(CommandFailed):
        backend.sync(web_state(["10.244.1.3"]))
    runner.fail = False
    assert backend.sync(web_state(["10.244.1.3"])).changed


def test_ipvs_render_mode_has_no_dnat_chains() -> None:
    text = restore_payload(render(web_state(["10.244.1.2"], node_port=30080), CFG, mode="ipvs"))
    assert "KUBE-SVC-" not in text and "DNAT" not in text
    assert ("-A KUBE-SERVICES ! -s 10.244.0.0/16 -d 10.96.0.10/32 -p tcp -m comment --comment "
            '"default/web:http cluster IP" -m tcp --dport 80 -j KUBE-MARK-MASQ') in text
    assert "--dport 30080 -j KUBE-MARK-MASQ" in text


def test_every_rendered_rule_is_shell_parsable() -> None:
    for line in restore_payload(render(web_state(["10.244.1.2"], 30080, sticky=60), CFG)).splitlines():
        shlex.split(line)


# ---------------------------------------------------------------------------- IPVS planning
IPVS_CFG = ProxyConfig(node_ip="192.0.2.10")
VS = VirtualServer("10.96.0.10", 80, "TCP")


def test_desired_table_has_cluster_ip_and_nodeport_virtual_servers() -> None:
    table, addrs = desired_table(web_state(["10.244.1.2", "10.244.1.3"], node_port=30080), IPVS_CFG)
    reals = frozenset({RealServer("10.244.1.2", 8080), RealServer("10.244.1.3", 8080)})
    assert table == {VS: reals, VirtualServer("192.0.2.10", 30080, "TCP"): reals}
    assert addrs == {"10.96.0.10"}
    empty, _ = desired_table(web_state([]), IPVS_CFG)
    assert empty == {VS: frozenset()}


def test_plan_diffs_real_servers_and_keeps_foreign_virtual_servers() -> None:
    desired, addrs = desired_table(web_state(["10.244.1.2", "10.244.1.4"]), IPVS_CFG)
    foreign = VirtualServer("172.17.0.5", 8080, "TCP")
    stale = VirtualServer("10.96.0.77", 443, "TCP")
    stale_np = VirtualServer("192.0.2.10", 31000, "TCP")
    current: IPVSTable = {VS: frozenset({RealServer("10.244.1.2", 8080), RealServer("10.244.1.3", 8080)}),
                          foreign: frozenset(), stale: frozenset({RealServer("10.244.2.2", 443)}),
                          stale_np: frozenset()}
    p = plan(desired, current, addrs, {"10.96.0.10", "10.96.0.77"}, IPVS_CFG)
    assert p.add_services == [] and p.add_destinations == [(VS, RealServer("10.244.1.4", 8080))]
    assert p.delete_destinations == [(VS, RealServer("10.244.1.3", 8080))]
    assert p.delete_services == [stale, stale_np]
    assert p.bind_addresses == [] and p.unbind_addresses == ["10.96.0.77"]
    assert len(p) == 5
    assert not owned(foreign, IPVS_CFG) and owned(stale, IPVS_CFG)
    assert len(plan(desired, desired, addrs, addrs, IPVS_CFG)) == 0


class FakeKernel:
    def __init__(self) -> None:
        self.table: dict[VirtualServer, set[RealServer]] = {}
        self.addrs: set[str] = set()
        self.ops: list[str] = []
        self.interface = False

    def prepare(self) -> None:
        self.interface = True

    def virtual_servers(self) -> IPVSTable:
        return {vs: frozenset(rs) for vs, rs in self.table.items()}

    def add_virtual_server(self, vs: VirtualServer) -> None:
        self.ops.append(f"+vs {vs}")
        self.table[vs] = set()

    def delete_virtual_server(self, vs: VirtualServer) -> None:
        self.ops.append(f"-vs {vs}")
        del self.table[vs]

    def add_real_server(self, vs: VirtualServer, rs: RealServer) -> None:
        self.ops.append(f"+rs {vs} {rs}")
        self.table[vs].add(rs)

    def delete_real_server(self, vs: VirtualServer, rs: RealServer) -> None:
        self.ops.append(f"-rs {vs} {rs}")
        self.table[vs].discard(rs)

    def bound_addresses(self) -> set[str]:
        return set(self.addrs)

    def bind_address(self, ip: str) -> None:
        self.ops.append(f"+ip {ip}")
        self.addrs.add(ip)

    def unbind_address(self, ip: str) -> None:
        self.ops.append(f"-ip {ip}")
        self.addrs.discard(ip)

    def remove_interface(self) -> None:
        self.interface = False
        self.addrs.clear()


def test_ipvs_backend_converges_and_skips_when_unchanged() -> None:
    kernel, runner = FakeKernel(), RecordingRunner()
    backend = IPVSBackend(IPVS_CFG, kernel, IptablesBackend(IPVS_CFG, runner, render_mode="ipvs"))
    backend.sync(web_state(["10.244.1.2", "10.244.1.3"], node_port=30080))
    assert kernel.interface and kernel.addrs == {"10.96.0.10"}
    assert kernel.ops[0] == "+vs TCP 10.96.0.10:80" and kernel.ops[-1] == "+ip 10.96.0.10"
    assert kernel.table[VS] == {RealServer("10.244.1.2", 8080), RealServer("10.244.1.3", 8080)}
    kernel.ops.clear()
    assert not backend.sync(web_state(["10.244.1.2", "10.244.1.3"], node_port=30080)).changed
    assert kernel.ops == []
    backend.sync(web_state(["10.244.1.3"], node_port=30080))
    assert sorted(kernel.ops) == ["-rs TCP 10.96.0.10:80 10.244.1.2:8080",
                                  "-rs TCP 192.0.2.10:30080 10.244.1.2:8080"]
    backend.sync(ProxyState())
    assert kernel.table == {} and kernel.addrs == set()
    backend.sync(web_state(["10.244.1.3"]))
    assert backend.cleanup() >= 1 and kernel.table == {} and not kernel.interface


def test_ipvs_mode_warns_once_that_it_does_not_honour_client_ip_affinity() -> None:
    backend = IPVSBackend(IPVS_CFG, FakeKernel(), IptablesBackend(IPVS_CFG, RecordingRunner(), render_mode="ipvs"))
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler, logger = Keep(logging.WARNING), logging.getLogger("proxy")
    # another test's logging set-up (dictConfig) may have disabled the logger in this process
    disabled, logger.disabled = logger.disabled, False
    logger.addHandler(handler)
    try:
        for _ in range(2):
            backend.sync(web_state(["10.244.1.2"], sticky=60))
    finally:
        logger.removeHandler(handler)
        logger.disabled = disabled
    assert backend.affinity_ignored == {ServicePortName("default", "web", "http")}
    warnings = [r.getMessage() for r in records if "sessionAffinity" in r.getMessage()]
    assert warnings == ["service default/web:http: sessionAffinity ClientIP is not honoured in IPVS mode "
                        "(round robin); use --proxy-mode iptables"]


def test_ipvs_detection_with_a_fake_kernel(tmp_path: Any) -> None:
    def no_modprobe(argv: list[str], stdin: str | None = None) -> str:
        raise CommandFailed(argv, 1, "modprobe: FATAL: Module ip_vs not found in directory /lib/modules/x")

    missing = str(tmp_path / "ip_vs")
    reason = ipvs_unavailable_reason(no_modprobe, missing)
    assert reason and "Module ip_vs not found" in reason and "\n" not in reason
    with pytest.raises(IPVSUnavailable, match="IPVS proxy mode is not available"):
        require_ipvs(no_modprobe, missing)
    present = tmp_path / "present"
    present.write_text("IP Virtual Server version 1.2.1\n")
    assert ipvs_unavailable_reason(no_modprobe, str(present)) is None
