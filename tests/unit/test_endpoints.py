"""Endpoints computation (Kubernetes' endpoints controller rules), no services involved."""

from __future__ import annotations

from typing import Any

from minik8s.api.base import Obj
from minik8s.controllers.endpoints import (
    HEADLESS_LABEL,
    compute_subsets,
    desired_labels,
    endpoints_up_to_date,
    find_port,
    service_selector,
)


def pod(name: str, ip: str | None, ready: bool = True, ports: list[Obj] | None = None, node: str = "n1",
        **extra: Any) -> Obj:
    status: Obj = {"phase": "Running",
                   "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}
    if ip:
        status["podIP"] = ip
    spec: Obj = {"nodeName": node, "containers": [{"name": "c", "image": "x", "ports": ports or []}]}
    spec.update(extra.pop("spec", {}))
    meta: Obj = {"name": name, "namespace": "ns", "uid": f"uid-{name}", "labels": {"app": "web"}}
    meta.update(extra.pop("metadata", {}))
    return {"metadata": meta, "spec": spec, "status": status}


def service(ports: list[Obj], **spec: Any) -> Obj:
    return {"metadata": {"name": "web", "namespace": "ns", "labels": {"tier": "front"}},
            "spec": {"selector": {"app": "web"}, "clusterIP": "10.96.0.5", "ports": ports, **spec}}


HTTP = {"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"}


def addr(name: str, ip: str, node: str = "n1") -> Obj:
    return {"ip": ip, "nodeName": node, "targetRef": {"kind": "Pod", "namespace": "ns", "name": name,
                                                      "uid": f"uid-{name}"}}


def test_ready_and_not_ready_pods_with_a_numeric_target_port() -> None:
    pods = [pod("b", "10.244.0.12"), pod("a", "10.244.0.3"), pod("c", "10.244.0.4", ready=False)]
    assert compute_subsets(service([HTTP]), pods) == [{
        "addresses": [addr("a", "10.244.0.3"), addr("b", "10.244.0.12")],  # sorted by IP, numerically
        "notReadyAddresses": [addr("c", "10.244.0.4")],
        "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}],
    }]


def test_pods_without_ip_terminating_or_finished_are_left_out() -> None:
    done = pod("d", "10.244.0.6", spec={"restartPolicy": "Never"})
    done["status"]["phase"] = "Succeeded"
    pods = [pod("a", None), pod("b", "10.244.0.5", metadata={"deletionTimestamp": "2026-01-01T00:00:00Z"}), done]
    assert compute_subsets(service([HTTP]), pods) == []


def test_publish_not_ready_addresses_lists_every_pod_as_ready_even_terminating() -> None:
    pods = [pod("a", "10.244.0.3", ready=False), pod("b", "10.244.0.5", metadata={"deletionTimestamp": "x"})]
    subsets = compute_subsets(service([HTTP], publishNotReadyAddresses=True), pods)
    assert [a["ip"] for a in subsets[0]["addresses"]] == ["10.244.0.3", "10.244.0.5"]
    assert "notReadyAddresses" not in subsets[0]


def test_named_target_port_resolves_per_pod_into_separate_subsets() -> None:
    svc = service([{"name": "web", "port": 80, "targetPort": "http", "protocol": "TCP"}])
    pods = [pod("a", "10.244.0.3", ports=[{"name": "http", "containerPort": 8080, "protocol": "TCP"}]),
            pod("b", "10.244.0.4", ports=[{"name": "http", "containerPort": 9090, "protocol": "TCP"}]),
            pod("c", "10.244.0.5", ports=[{"name": "other", "containerPort": 8080, "protocol": "TCP"}]),
            pod("d", "10.244.0.6", ports=[{"name": "http", "containerPort": 8080, "protocol": "UDP"}])]
    assert compute_subsets(svc, pods) == [
        {"addresses": [addr("a", "10.244.0.3")], "ports": [{"name": "web", "port": 8080, "protocol": "TCP"}]},
        {"addresses": [addr("b", "10.244.0.4")], "ports": [{"name": "web", "port": 9090, "protocol": "TCP"}]},
    ]


def test_ports_reached_by_the_same_addresses_share_a_subset() -> None:
    """RepackSubsets: one subset per distinct set of addresses, holding every port they serve."""
    svc = service([HTTP, {"name": "metrics", "port": 9100, "targetPort": "metrics", "protocol": "TCP"},
                   {"name": "admin", "port": 81, "targetPort": 8081, "protocol": "TCP"}])
    with_metrics = [{"name": "metrics", "containerPort": 9100, "protocol": "TCP"}]
    pods = [pod("a", "10.244.0.3", ports=with_metrics), pod("b", "10.244.0.4", ports=with_metrics),
            pod("c", "10.244.0.5")]
    subsets = compute_subsets(svc, pods)
    assert subsets == [
        {"addresses": [addr("a", "10.244.0.3"), addr("b", "10.244.0.4"), addr("c", "10.244.0.5")],
         "ports": [{"name": "admin", "port": 8081, "protocol": "TCP"},
                   {"name": "http", "port": 8080, "protocol": "TCP"}]},
        {"addresses": [addr("a", "10.244.0.3"), addr("b", "10.244.0.4")],
         "ports": [{"name": "metrics", "port": 9100, "protocol": "TCP"}]},
    ]
    assert compute_subsets(svc, list(reversed(pods))) == subsets  # canonical order


def test_headless_service_hostname_and_no_ports() -> None:
    svc = service([], clusterIP="None")
    p = pod("a", "10.244.0.3", spec={"hostname": "a0", "subdomain": "web"})
    assert compute_subsets(svc, [p]) == [{"addresses": [{**addr("a", "10.244.0.3"), "hostname": "a0"}]}]
    assert desired_labels(svc) == {"tier": "front", HEADLESS_LABEL: ""}
    assert desired_labels(service([HTTP])) == {"tier": "front"}


def test_find_port_and_selectors() -> None:
    p = pod("a", "1.2.3.4", ports=[{"name": "dns", "containerPort": 53, "protocol": "UDP"}])
    assert find_port(p, {"port": 53, "targetPort": "dns", "protocol": "UDP"}) == 53
    assert find_port(p, {"port": 53, "targetPort": "dns"}) is None  # TCP by default
    assert find_port(p, {"port": 80}) == 80
    assert service_selector({"spec": {}}) is None and service_selector({"spec": {"selector": {}}}) is None
    assert service_selector(service([])) is not None


def test_up_to_date_compares_subsets_and_labels() -> None:
    subsets = compute_subsets(service([HTTP]), [pod("a", "10.244.0.3")])
    current = {"metadata": {"labels": {"tier": "front"}}, "subsets": subsets}
    assert endpoints_up_to_date(current, subsets, {"tier": "front"})
    assert not endpoints_up_to_date(current, [], {"tier": "front"})
    assert not endpoints_up_to_date(current, subsets, {})
