"""NetworkPolicy: defaults and validation (Kubernetes' messages), and the filter rules the proxy renders."""

from __future__ import annotations

from minik8s.apiserver.strategies.networkpolicy import NetworkPolicyStrategy
from minik8s.proxy.config import ProxyConfig
from minik8s.proxy.netpol import PolicyView, render

CFG = ProxyConfig(chain_prefix="KTu").validate()


def policy(spec: dict, name: str = "p", ns: str = "a") -> dict:
    return {"metadata": {"name": name, "namespace": ns}, "spec": spec}


def causes(spec: dict) -> list[tuple]:
    return NetworkPolicyStrategy().validate(policy(spec), None)


def test_defaults_policy_types_and_protocols() -> None:
    obj = policy({"egress": [{"ports": [{"port": 53}]}]})
    NetworkPolicyStrategy().default(obj)
    assert obj["spec"]["policyTypes"] == ["Ingress", "Egress"]
    assert obj["spec"]["egress"][0]["ports"][0]["protocol"] == "TCP"
    assert obj["spec"]["podSelector"] == {}
    only = policy({"ingress": [{}]})
    NetworkPolicyStrategy().default(only)
    assert only["spec"]["policyTypes"] == ["Ingress"]


def test_validation_messages() -> None:
    assert causes({"podSelector": {}}) == []
    assert causes({"ingress": [{"from": [{}]}]}) == [("spec.ingress[0].from[0]", None,
                                                      "Required value: must specify a peer")]
    assert causes({"ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0/8"}, "podSelector": {}}]}]}) == [
        ("spec.ingress[0].from[0]", None, "Forbidden: may not specify both ipBlock and another peer")]
    assert causes({"egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/24", "except": ["192.168.0.0/24"]}}]}]}) == [
        ("spec.egress[0].to[0].ipBlock.except[0]", "192.168.0.0/24", "must be a strict subset of `cidr`")]
    assert causes({"egress": [{"to": [{"ipBlock": {"cidr": "300.0.0.0/8"}}]}]}) == [
        ("spec.egress[0].to[0].ipBlock.cidr", "300.0.0.0/8",
         "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)")]
    assert causes({"ingress": [{"ports": [{"port": 90, "endPort": 80}]}]}) == [
        ("spec.ingress[0].ports[0].endPort", 90, "must be greater than or equal to `port`")]
    assert causes({"ingress": [{"ports": [{"port": "http", "endPort": 80}]}]}) == [
        ("spec.ingress[0].ports[0].endPort", 80, "may not be specified when `port` is non-numeric")]
    assert causes({"ingress": [{"ports": [{"endPort": 80}]}]}) == [
        ("spec.ingress[0].ports[0].endPort", 80, "may not be specified when `port` is not specified")]
    assert causes({"ingress": [{"ports": [{"protocol": "ICMP"}]}]}) == [
        ("spec.ingress[0].ports[0].protocol", None,
         'Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"')]
    assert causes({"policyTypes": ["Both"]}) == [
        ("spec.policyTypes[0]", None, 'Unsupported value: "Both": supported values: "Ingress", "Egress"')]


POD = {"metadata": {"namespace": "a", "name": "srv", "labels": {"app": "srv"}},
       "spec": {"nodeName": "n1", "containers": [{"ports": [{"name": "web", "containerPort": 8080}]}]},
       "status": {"podIP": "10.1.0.2", "phase": "Running"}}
CLIENT = {"metadata": {"namespace": "b", "name": "cl", "labels": {"role": "c"}},
          "spec": {"nodeName": "n2"}, "status": {"podIP": "10.1.1.3", "phase": "Running"}}
NAMESPACES = [{"metadata": {"name": "a", "labels": {}}}, {"metadata": {"name": "b", "labels": {"team": "b"}}}]


def rules_of(spec: dict, node: str | None = None) -> list[str]:
    return render(PolicyView.build([POD, CLIENT], NAMESPACES, [policy(spec)]), CFG, node).rules


def test_named_ports_ranges_and_peers() -> None:
    rules = rules_of({"podSelector": {"matchLabels": {"app": "srv"}}, "ingress": [{
        "from": [{"namespaceSelector": {"matchLabels": {"team": "b"}}, "podSelector": {"matchLabels": {"role": "c"}}}],
        "ports": [{"port": "web", "protocol": "TCP"}, {"port": 9000, "endPort": 9010, "protocol": "UDP"},
                  {"port": "missing", "protocol": "TCP"}]}]})
    allowed = [r for r in rules if r.endswith("-j RETURN") and "NPI-" in r.split()[1]]
    assert [r.split(" -m comment")[0].split(" ", 2)[2] for r in allowed] == [
        "-s 10.1.1.3/32 -p tcp -m tcp --dport 8080", "-s 10.1.1.3/32 -p udp -m udp --dport 9000:9010"]
    assert rules[-1].endswith("-j REJECT --reject-with icmp-port-unreachable")


def test_only_selected_pods_of_the_node_are_isolated() -> None:
    spec = {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}
    assert any("a/srv ingress" in r for r in rules_of(spec))
    assert not any("a/srv" in r for r in rules_of(spec, node="n2"))
    assert not any("b/cl" in r for r in rules_of(spec))  # the policy is namespace a's


def test_ip_block_except_uses_a_sub_chain_and_no_policy_no_pod_chain() -> None:
    rules = rules_of({"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0/8",
                                                                            "except": ["10.1.1.0/24"]}}]}]})
    assert any(" -s 10.1.1.0/24 -j RETURN" in r for r in rules)
    assert any("-g KTu-NPCLR" in r for r in rules)
    empty = render(PolicyView.build([POD], NAMESPACES, []), CFG)
    assert empty.chains == ["KTu-NETPOL", "KTu-NPCLR"] and empty.isolated == 0
