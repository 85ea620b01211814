"""NetworkPolicy enforced for real: a kubelet's pods on their bridge, ``minik8s proxy`` programming the
filter table, TCP connections between the pods (``wget`` in the client containers).

One kubelet, one proxy and the pods below are shared by every case (each case creates its policies
and removes them at the end): a server ``srv`` (labels ``app=srv``) with web servers on 8080
(container port ``http``), 9000, 9005 and 53; in the first namespace clients ``cl-a``
(``role=client``) and ``cl-b`` (no role); in a second namespace (``team=b``) ``cl-ns``
(``role=client``) and ``cl-ns2`` (``role=other``).  A blocked connection is refused at once (the
policy chains REJECT), so every check polls with a deadline until the connection is accepted or
refused as expected.  Traffic goes only to the pods and the ClusterIP made here.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from minik8s.api.base import Obj
from tests.support.kubelet import BUSYBOX, KubeletProcess, pod_body
from tests.support.processes import APIServer
from tests.support.proxy import PROXY_MARKS, ProxyProcess, chains_with_prefix
from tests.support.waiting import wait_for_sync

pytestmark = PROXY_MARKS

SERVER = ("mkdir -p /www && echo ok > /www/index.html && httpd -p 9000 -h /www && httpd -p 9005 -h /www "
          "&& httpd -p 53 -h /www && exec httpd -f -p 8080 -h /www")
NP = "/apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies"


@dataclass
class Net:
    api: httpx.Client
    kubelet: KubeletProcess
    proxy: ProxyProcess
    ns: str
    ns2: str
    ips: dict[str, str]
    cluster_ip: str

    def container(self, pod: str) -> Any:
        found = self.kubelet.containers(**{"io.kubernetes.pod.name": pod, "io.kubernetes.container.name": "app"})
        assert found, pod
        return found[0]

    def connect(self, client: str, target: str, port: int) -> str:
        """``open`` when ``client`` gets an answer from ``target:port``, ``refused`` when refused, else the output."""
        host = self.cluster_ip if target == "svc" else self.ips[target]
        code, out = self.container(client).exec_run(["timeout", "4", "wget", "-q", "-O-", f"http://{host}:{port}/"])
        text = out.decode(errors="replace")
        if code == 0 and text.strip() == "ok":
            return "open"
        return "refused" if "refused" in text.lower() else text.strip() or f"exit {code}"

    def expect(self, want: dict[tuple[str, str, int], str], timeout: float = 20) -> None:
        """Poll every (client, target, port) until each gives its wanted verdict."""
        for (client, target, port), verdict in want.items():
            wait_for_sync(lambda c=client, t=target, p=port, v=verdict: self.connect(c, t, p) == v,  # type: ignore[misc]
                          timeout=timeout, interval=0.2, what=f"{client} -> {target}:{port} {verdict}")

    def policy(self, ns: str, name: str, spec: Obj) -> Obj:
        body = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                "metadata": {"name": name, "namespace": ns}, "spec": spec}
        r = self.api.post(NP.format(ns=ns), json=body)
        assert r.status_code == 201, r.text
        return r.json()

    def replace(self, ns: str, name: str, spec: Obj) -> None:
        current = self.api.get(f"{NP.format(ns=ns)}/{name}").json()
        current["spec"] = spec
        r = self.api.put(f"{NP.format(ns=ns)}/{name}", json=current)
        assert r.status_code == 200, r.text

    def clear(self) -> None:
        for ns in (self.ns, self.ns2):
            for item in self.api.get(NP.format(ns=ns)).json()["items"]:
                self.api.delete(f"{NP.format(ns=ns)}/{item['metadata']['name']}")

    def label(self, path: str, labels: dict[str, str | None]) -> None:
        r = self.api.patch(path, json={"metadata": {"labels": labels}},
                           headers={"Content-Type": "application/merge-patch+json"})
        assert r.status_code == 200, r.text


@pytest.fixture(scope="module")
def net(apiserver: APIServer, kubelet: KubeletProcess, proxy: ProxyProcess) -> Iterator[Net]:
    api = httpx.Client(base_url=apiserver.url, timeout=10)
    suffix = os.urandom(3).hex()
    ns, ns2 = f"np-{suffix}", f"np2-{suffix}"
    for name, labels in ((ns, {}), (ns2, {"team": "b"})):
        assert api.post("/api/v1/namespaces", json={"metadata": {"name": name, "labels": labels}}).status_code == 201
    pods = {"srv": (ns, {"app": "srv"}), "cl-a": (ns, {"role": "client"}), "cl-b": (ns, {}),
            "cl-ns": (ns2, {"role": "client"}), "cl-ns2": (ns2, {"role": "other"})}
    try:
        for name, (pns, labels) in pods.items():
            command = ["sh", "-c", SERVER] if name == "srv" else ["sleep", "3600"]
            container: Obj = {"name": "app", "image": BUSYBOX, "command": command}
            if name == "srv":
                container["ports"] = [{"name": "http", "containerPort": 8080}]
            body = pod_body(name, kubelet.node, [container])
            body["metadata"]["labels"] = labels
            assert api.post(f"/api/v1/namespaces/{pns}/pods", json=body).status_code == 201

        def ips() -> dict[str, str] | None:
            out = {}
            for name, (pns, _) in pods.items():
                pod = api.get(f"/api/v1/namespaces/{pns}/pods/{name}").json()
                if (pod.get("status") or {}).get("phase") != "Running" or not pod["status"].get("podIP"):
                    return None
                out[name] = pod["status"]["podIP"]
            return out
        addresses = wait_for_sync(ips, timeout=60, interval=0.2, what="the pods running")
        # a Service in front of srv, its ClusterIP in the proxy's slice, its slice naming srv:8080
        for _ in range(20):
            svc = api.post(f"/api/v1/namespaces/{ns}/services", json={
                "metadata": {"name": "web"},
                "spec": {"clusterIP": f"10.96.{proxy.third}.{random.randint(2, 254)}",
                         "ports": [{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"}]}})
            if svc.status_code == 201:
                break
        assert svc.status_code == 201, svc.text
        cluster_ip = svc.json()["spec"]["clusterIP"]
        r = api.post(f"/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices", json={
            "addressType": "IPv4", "metadata": {"name": "web", "labels": {"kubernetes.io/service-name": "web"}},
            "endpoints": [{"addresses": [addresses["srv"]], "conditions": {"ready": True}}],
            "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}]})
        assert r.status_code == 201, r.text
        n = Net(api, kubelet, proxy, ns, ns2, addresses, cluster_ip)
        n.expect({(c, "srv", 8080): "open" for c in ("cl-a", "cl-b", "cl-ns", "cl-ns2")}, timeout=30)
        n.expect({("cl-a", "svc", 80): "open"}, timeout=30)
        yield n
    finally:
        for name in (ns, ns2):
            api.delete(f"/api/v1/namespaces/{name}")
        api.close()


@pytest.fixture
def fresh(net: Net) -> Iterator[Net]:
    """The shared pods with no policy; every policy goes at the end, and everything is open again."""
    try:
        yield net
    finally:
        net.clear()
        net.expect({(c, "srv", 8080): "open" for c in ("cl-a", "cl-b", "cl-ns")})


ALL_CLIENTS = ("cl-a", "cl-b", "cl-ns", "cl-ns2")


def test_default_deny_ingress_then_removed_is_open_again(fresh: Net) -> None:
    fresh.policy(fresh.ns, "deny", {"podSelector": {}})
    fresh.expect({(c, "srv", 8080): "refused" for c in ALL_CLIENTS})
    fresh.expect({("cl-a", "srv", 9000): "refused", ("cl-a", "svc", 80): "refused"})
    fresh.clear()
    fresh.expect({(c, "srv", 8080): "open" for c in ALL_CLIENTS})


def test_allow_from_pods_with_a_label_and_through_the_service(fresh: Net) -> None:
    clients = {"podSelector": {"matchLabels": {"role": "client"}}}
    fresh.policy(fresh.ns, "from-clients", {"podSelector": {"matchLabels": {"app": "srv"}},
                                            "ingress": [{"from": [clients]}]})
    # podSelector alone: the policy's own namespace only
    fresh.expect({("cl-a", "srv", 8080): "open", ("cl-b", "srv", 8080): "refused",
                  ("cl-ns", "srv", 8080): "refused"})
    # judged after the Service's DNAT
    fresh.expect({("cl-a", "svc", 80): "open", ("cl-b", "svc", 80): "refused"})


def test_namespace_selector_and_both_together(fresh: Net) -> None:
    team_b = {"namespaceSelector": {"matchLabels": {"team": "b"}}}
    fresh.policy(fresh.ns, "from-team-b", {"podSelector": {"matchLabels": {"app": "srv"}},
                                           "ingress": [{"from": [team_b]}]})
    fresh.expect({("cl-ns", "srv", 8080): "open", ("cl-ns2", "srv", 8080): "open", ("cl-a", "srv", 8080): "refused"})
    fresh.replace(fresh.ns, "from-team-b", {
        "podSelector": {"matchLabels": {"app": "srv"}},
        "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"team": "b"}},
                               "podSelector": {"matchLabels": {"role": "client"}}}]}]})
    fresh.expect({("cl-ns", "srv", 8080): "open", ("cl-ns2", "srv", 8080): "refused",
                  ("cl-a", "srv", 8080): "refused"})
    # the namespace loses its label: its pods lose the access
    fresh.label(f"/api/v1/namespaces/{fresh.ns2}", {"team": None})
    try:
        fresh.expect({("cl-ns", "srv", 8080): "refused"})
    finally:
        fresh.label(f"/api/v1/namespaces/{fresh.ns2}", {"team": "b"})
    fresh.expect({("cl-ns", "srv", 8080): "open"})


def test_ip_block_with_except_and_a_pod_label_change(fresh: Net) -> None:
    fresh.policy(fresh.ns, "block", {"podSelector": {"matchLabels": {"app": "srv"}},
                                     "ingress": [{"from": [{"ipBlock": {"cidr": fresh.kubelet.cidr,
                                                                        "except": [f"{fresh.ips['cl-b']}/32"]}}]}]})
    fresh.expect({("cl-a", "srv", 8080): "open", ("cl-ns", "srv", 8080): "open", ("cl-b", "srv", 8080): "refused"})
    fresh.replace(fresh.ns, "block", {"podSelector": {"matchLabels": {"app": "srv"}},
                                      "ingress": [{"from": [{"podSelector": {"matchLabels": {"role": "client"}}}]}]})
    fresh.expect({("cl-b", "srv", 8080): "refused", ("cl-ns", "srv", 8080): "refused"})
    # cl-b gains the label the policy allows
    fresh.label(f"/api/v1/namespaces/{fresh.ns}/pods/cl-b", {"role": "client"})
    try:
        fresh.expect({("cl-b", "srv", 8080): "open"})
    finally:
        fresh.label(f"/api/v1/namespaces/{fresh.ns}/pods/cl-b", {"role": None})


def test_ports_named_ports_and_port_ranges(fresh: Net) -> None:
    fresh.policy(fresh.ns, "ports", {"podSelector": {"matchLabels": {"app": "srv"}},
                                     "ingress": [{"ports": [{"port": 8080}]}]})
    fresh.expect({("cl-a", "srv", 8080): "open", ("cl-a", "srv", 9000): "refused"})
    fresh.replace(fresh.ns, "ports", {"podSelector": {"matchLabels": {"app": "srv"}},
                                      "ingress": [{"ports": [{"port": "http", "protocol": "TCP"}]}]})
    fresh.expect({("cl-b", "srv", 8080): "open", ("cl-b", "srv", 9000): "refused"})
    fresh.replace(fresh.ns, "ports", {"podSelector": {"matchLabels": {"app": "srv"}},
                                      "ingress": [{"ports": [{"port": 9000, "endPort": 9004}]}]})
    fresh.expect({("cl-a", "srv", 9000): "open", ("cl-a", "srv", 9005): "refused",
                  ("cl-a", "srv", 8080): "refused"})


def test_egress_deny_and_allow_with_the_dns_case(fresh: Net) -> None:
    fresh.policy(fresh.ns, "egress", {"podSelector": {"matchLabels": {"role": "client"}}, "policyTypes": ["Egress"]})
    fresh.expect({("cl-a", "srv", 8080): "refused", ("cl-b", "srv", 8080): "open"})
    # the usual DNS exception: port 53 to every namespace's pods, UDP and TCP
    fresh.policy(fresh.ns, "dns", {"podSelector": {}, "policyTypes": ["Egress"],
                                   "egress": [{"to": [{"namespaceSelector": {}}],
                                               "ports": [{"port": 53, "protocol": "UDP"}, {"port": 53}]}]})
    fresh.expect({("cl-a", "srv", 53): "open", ("cl-a", "srv", 8080): "refused", ("cl-b", "srv", 53): "open",
                  ("cl-b", "srv", 8080): "refused"})
    fresh.policy(fresh.ns, "to-web", {"podSelector": {"matchLabels": {"role": "client"}},
                                      "egress": [{"to": [{"podSelector": {"matchLabels": {"app": "srv"}}}],
                                                  "ports": [{"port": "http"}]}]})
    fresh.expect({("cl-a", "srv", 8080): "open", ("cl-a", "svc", 80): "open", ("cl-a", "srv", 9000): "refused"})


def test_cleanup_removes_the_policy_chains(net: Net) -> None:
    """The chains exist while the proxy runs (the fixture's cleanup checks that none is left)."""
    rules = chains_with_prefix(net.proxy.prefix)
    assert any(f"{net.proxy.prefix}-NETPOL" in line for line in rules), rules
