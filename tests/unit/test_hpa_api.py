"""The API side of autoscaling: HPA defaults/validation, metrics quantities and durations, the
metrics scraper's pure parts (which nodes, Summary → samples → PodMetrics), kubectl top rows
and the ``get hpa`` TARGETS column."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from minik8s.api.base import Obj
from minik8s.api.columns import hpa_targets
from minik8s.api.durations import format_duration, parse_duration
from minik8s.api.quantity import (
    cpu_nanocores,
    format_decimal,
    format_milli,
    format_nanocores,
    milli_value,
)
from minik8s.api.registry import METRICS_TYPES, default_registry
from minik8s.api.resourcetypes import Registry
from minik8s.apiserver import discovery
from minik8s.apiserver.kubelet_client import kubelet_address
from minik8s.apiserver.metrics import (
    PodSample,
    node_metrics,
    pod_metrics,
    samples_from_summary,
    scrape_targets,
)
from minik8s.apiserver.strategies import default_strategies
from minik8s.kubectl.top import memory_text, node_rows, pod_rows

NOW = dt.datetime(2026, 11, 21, 12, 0, 0, tzinfo=dt.UTC)


def stamp(seconds_ago: float) -> str:
    return (NOW - dt.timedelta(seconds=seconds_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


# ----------------------------------------------------------------------------- HPA strategy
def strategy() -> Any:
    return default_strategies()["HorizontalPodAutoscaler"]


def hpa(**spec: Any) -> Obj:
    base: Obj = {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxReplicas": 5}
    base.update(spec)
    return {"metadata": {"name": "web", "namespace": "default"}, "spec": base}


def test_defaults_follow_kubernetes() -> None:
    obj = hpa()
    strategy().default(obj)
    assert obj["spec"]["minReplicas"] == 1
    assert obj["spec"]["metrics"] == [{"type": "Resource", "resource": {"name": "cpu", "target": {
        "type": "Utilization", "averageUtilization": 80}}}]
    assert "behavior" not in obj["spec"]  # an absent behavior stays absent
    obj = hpa(behavior={"scaleDown": {"stabilizationWindowSeconds": 60}}, metrics=[
        {"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": 1024}}}])
    strategy().default(obj)
    assert obj["spec"]["behavior"] == {
        "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
                    "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                                 {"type": "Percent", "value": 100, "periodSeconds": 15}]},
        "scaleDown": {"stabilizationWindowSeconds": 60, "selectPolicy": "Max",
                      "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}}
    assert obj["spec"]["metrics"][0]["resource"]["target"]["averageValue"] == "1024"
    obj = hpa(behavior={})
    strategy().default(obj)
    assert "stabilizationWindowSeconds" not in obj["spec"]["behavior"]["scaleDown"]  # the controller's flag applies


@pytest.mark.parametrize(("spec", "field", "message"), [
    ({"scaleTargetRef": None}, "spec.scaleTargetRef", "Required value"),
    ({"scaleTargetRef": {"kind": "Deployment"}}, "spec.scaleTargetRef.name", "Required value"),
    ({"scaleTargetRef": {"kind": "a/b", "name": "x"}}, "spec.scaleTargetRef.kind", "may not contain '/'"),
    ({"minReplicas": 0}, "spec.minReplicas", "must be greater than or equal to 1"),
    ({"maxReplicas": 0}, "spec.maxReplicas", "must be greater than 0"),
    ({"minReplicas": 6}, "spec.maxReplicas", "must be greater than or equal to `minReplicas`"),
    ({"metrics": [{"type": "Cpu"}]}, "spec.metrics[0].type",
     'Unsupported value: "Cpu": supported values: "ContainerResource", "External", "Object", "Pods", "Resource"'),
    ({"metrics": [{"type": "Pods"}]}, "spec.metrics[0].pods", "must populate information"),
    ({"metrics": [{"type": "Pods", "pods": {"metric": {"name": "rps"}, "target": {"type": "Value", "value": "1"}}}]},
     "spec.metrics[0].pods.target.averageValue", "must specify a positive target averageValue"),
    ({"metrics": [{"type": "Object", "object": {"metric": {"name": "a/b"}, "describedObject": {"kind": "Service"},
                                                "target": {"type": "Value", "value": "1"}}}]},
     "spec.metrics[0].object.metric.name", "may not contain '/'"),
    ({"metrics": [{"type": "Object", "object": {"metric": {"name": "hits"}, "describedObject": {"kind": "Service"},
                                                "target": {"type": "Value", "value": "1"}}}]},
     "spec.metrics[0].object.describedObject.name", "Required value"),
    ({"metrics": [{"type": "External", "external": {"metric": {"name": "q"}, "target": {
        "type": "Value", "value": "1", "averageValue": "1"}}}]}, "spec.metrics[0].external.target.value",
     "may not set both a target value for metric and a per-pod target"),
    ({"metrics": [{"type": "ContainerResource", "containerResource": {"name": "cpu", "target": {
        "type": "Utilization", "averageUtilization": 50}}}]}, "spec.metrics[0].containerResource.container",
     "must specify a container"),
    ({"metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
        "type": "Utilization", "averageUtilization": 50}}, "pods": {}}]}, "spec.metrics[0].pods",
     "must populate the given metric source only"),
    ({"metrics": [{"type": "Resource"}]}, "spec.metrics[0].resource", "must populate information"),
    ({"metrics": [{"type": "Resource", "resource": {"name": "gpu", "target": {
        "type": "Utilization", "averageUtilization": 50}}}]}, "spec.metrics[0].resource.name", "Unsupported"),
    ({"metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
        "type": "Utilization", "averageUtilization": 0}}}]}, "spec.metrics[0].resource.target.averageUtilization",
     "must be greater than 0"),
    ({"metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
        "type": "AverageValue", "averageValue": "-1"}}}]}, "spec.metrics[0].resource.target.averageValue",
     "must be positive"),
    ({"metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization"}}}]},
     "spec.metrics[0].resource.target.averageUtilization", "must set either a target raw value"),
    ({"metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
        "type": "Utilization", "averageUtilization": 50, "averageValue": "1"}}}]},
     "spec.metrics[0].resource.target.averageValue", "may not set both"),
    ({"behavior": {"scaleUp": {"stabilizationWindowSeconds": 3601, "policies": [
        {"type": "Pods", "value": 1, "periodSeconds": 15}]}}}, "spec.behavior.scaleUp.stabilizationWindowSeconds",
     "must be less than or equal to 3600"),
    ({"behavior": {"scaleDown": {"selectPolicy": "Avg", "policies": [
        {"type": "Pods", "value": 1, "periodSeconds": 15}]}}}, "spec.behavior.scaleDown.selectPolicy", "Unsupported"),
    ({"behavior": {"scaleDown": {"policies": []}}}, "spec.behavior.scaleDown.policies",
     "must specify at least one Policy"),
    ({"behavior": {"scaleUp": {"policies": [{"type": "Pods", "value": 0, "periodSeconds": 1801}]}}},
     "spec.behavior.scaleUp.policies[0].periodSeconds", "must be less than or equal to 1800"),
])
def test_validation(spec: Obj, field: str, message: str) -> None:
    obj = hpa(**spec)
    causes = strategy().validate(obj, None)
    assert any(f == field and message in m for f, _, m in causes), causes


def test_a_complete_hpa_is_valid() -> None:
    obj = hpa(minReplicas=2, behavior={"scaleUp": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 10}]}})
    strategy().default(obj)
    assert strategy().validate(obj, None) == []


# ----------------------------------------------------------------------------- discovery
def test_discovery_lists_hpa_and_metrics() -> None:
    served = Registry(default_registry().types + METRICS_TYPES)
    autoscaling = discovery.resource_list(served, "autoscaling", "v2")
    assert autoscaling is not None
    assert {"name": "horizontalpodautoscalers/status", "singularName": "", "namespaced": True,
            "kind": "HorizontalPodAutoscaler", "verbs": ["get", "patch", "update"]} in autoscaling["resources"]
    assert next(r for r in autoscaling["resources"] if r["name"] == "horizontalpodautoscalers")["shortNames"] == ["hpa"]
    metrics = discovery.resource_list(served, "metrics.k8s.io", "v1beta1")
    assert metrics is not None
    assert [(r["name"], r["kind"], r["verbs"], r["namespaced"]) for r in metrics["resources"]] == [
        ("pods", "PodMetrics", ["get", "list"], True), ("nodes", "NodeMetrics", ["get", "list"], False)]
    groups = [g["name"] for g in discovery.api_group_list(served)["groups"]]
    assert "autoscaling" in groups and "metrics.k8s.io" in groups
    assert default_registry().get("metrics.k8s.io", "v1beta1", "pods") is None  # never etcd-backed


# ----------------------------------------------------------------------------- quantities and durations
def test_quantity_formats() -> None:
    assert format_nanocores(12_345_678) == "12345678n"
    assert format_nanocores(250_000_000) == "250m"
    assert format_nanocores(2_000_000_000) == "2"
    assert format_nanocores(0) == "0"
    assert format_milli(250) == "250m" and format_milli(2000) == "2" and format_milli(52_428_800_000) == "52428800"
    assert format_decimal(3, 3) == "3k"
    with pytest.raises(ValueError):
        format_decimal(1, 2)
    assert milli_value("250m") == 250 and milli_value("1Ki") == 1_024_000
    assert milli_value("12345678n") == 13 and milli_value("1n") == 1
    assert cpu_nanocores("250m") == 250_000_000


def test_durations() -> None:
    assert parse_duration("15s") == 15 and parse_duration("1m30s") == 90 and parse_duration("500ms") == 0.5
    assert parse_duration("0") == 0 and parse_duration("-1.5h") == -5400 and parse_duration("2µs") == 2e-6
    for bad, reason in (("2", 'missing unit in duration "2"'), ("fast", 'invalid duration "fast"'),
                        ("5x", 'unknown unit "x" in duration "5x"'), ("", 'invalid duration ""')):
        with pytest.raises(ValueError, match=reason):
            parse_duration(bad)  # Go's time.ParseDuration rules: a bare number other than 0 has no unit
    with pytest.raises(ValueError):
        parse_duration(2.5)  # type: ignore[arg-type]
    assert format_duration(15) == "15s" and format_duration(2.5) == "2.5s" and format_duration(90) == "1m30s"
    assert format_duration(0.25) == "250ms" and format_duration(3725) == "1h2m5s"


# ----------------------------------------------------------------------------- the scraper's pure parts
def node(name: str, ready: str = "True", ip: str | None = "127.0.0.1", port: int | None = 10250,
         heartbeat: str | None = None) -> Obj:
    status: Obj = {"conditions": [{"type": "Ready", "status": ready,
                                   **({"lastHeartbeatTime": heartbeat} if heartbeat else {})}]}
    if ip:
        status["addresses"] = [{"type": "InternalIP", "address": ip}]
    if port:
        status["daemonEndpoints"] = {"kubeletEndpoint": {"Port": port}}
    return {"metadata": {"name": name}, "status": status}


def lease(name: str, renewed: str, duration: int = 40) -> Obj:
    return {"metadata": {"name": name}, "spec": {"renewTime": renewed, "leaseDurationSeconds": duration}}


def test_only_live_ready_nodes_are_scraped() -> None:
    nodes = [node("live"), node("stale-lease"), node("not-ready", ready="False"), node("no-lease-fresh",
             heartbeat=stamp(10)), node("no-lease-old", heartbeat=stamp(3600)), node("fake", ip="10.9.8.7"),
             node("no-ip", ip=None), node("long-lease")]
    leases = [lease("live", stamp(5)), lease("stale-lease", stamp(100)), lease("not-ready", stamp(1)),
              lease("no-ip", stamp(1)), lease("long-lease", stamp(100), duration=120)]
    assert scrape_targets(nodes, leases, NOW) == [("live", "127.0.0.1:10250"), ("no-lease-fresh", "127.0.0.1:10250"),
                                                  ("long-lease", "127.0.0.1:10250")]
    assert kubelet_address(node("v6", ip="::1", port=None)) == "[::1]:10250"


def test_a_node_without_a_kubelet_endpoint_is_never_contacted() -> None:
    """Port 0 (a hollow node: no kubelet API) is no address, not the default port: neither the
    metrics scraper nor logs/exec ever connect to such a node's (unroutable) InternalIP."""
    hollow = node("hollow-0", ip="198.18.0.1")
    hollow["status"]["daemonEndpoints"] = {"kubeletEndpoint": {"Port": 0}}
    assert kubelet_address(hollow) is None
    assert scrape_targets([hollow], [lease("hollow-0", stamp(1))], NOW) == []


SUMMARY = {
    "node": {"nodeName": "n1", "cpu": {"time": "2026-11-21T12:00:00Z", "usageNanoCores": 1_500_000_000},
             "memory": {"workingSetBytes": 2 * 1024**3}},
    "pods": [
        {"podRef": {"name": "web", "namespace": "default", "uid": "u1"}, "cpu": {"time": "2026-11-21T12:00:00Z"},
         "containers": [
             {"name": "app", "cpu": {"usageNanoCores": 12_000_000}, "memory": {"workingSetBytes": 4096 * 1024}},
             {"name": "side", "cpu": {"usageNanoCores": 1}, "memory": {"workingSetBytes": 3000}}]},
        {"podRef": {"name": "new", "namespace": "default", "uid": "u2"},
         "containers": [{"name": "app", "cpu": {}, "memory": {"workingSetBytes": 1}}]},
    ]}


def test_summary_to_samples_and_metrics_objects() -> None:
    node_sample, pods = samples_from_summary(SUMMARY, "n1", 15.0, 7.0)
    assert node_sample is not None and node_sample.cpu_nanocores == 1_500_000_000
    assert [p.uid for p in pods] == ["u1"]  # "new" has no CPU rate yet
    pm = pod_metrics({"metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}}}, pods[0])
    assert pm["kind"] == "PodMetrics" and pm["apiVersion"] == "metrics.k8s.io/v1beta1"
    assert pm["metadata"]["labels"] == {"app": "web"} and pm["window"] == "15s"
    assert pm["timestamp"] == "2026-11-21T12:00:00Z"
    assert pm["containers"] == [{"name": "app", "usage": {"cpu": "12m", "memory": "4Mi"}},
                                {"name": "side", "usage": {"cpu": "1n", "memory": "3000"}}]
    nm = node_metrics({"metadata": {"name": "n1"}}, node_sample)
    assert nm["usage"] == {"cpu": "1500m", "memory": "2Gi"}


# ----------------------------------------------------------------------------- kubectl top
def pod_item(name: str, namespace: str, *containers: tuple[str, str, str]) -> Obj:
    return {"metadata": {"name": name, "namespace": namespace},
            "containers": [{"name": c, "usage": {"cpu": cpu, "memory": mem}} for c, cpu, mem in containers]}


def test_top_pod_rows() -> None:
    items = [pod_item("a", "x", ("app", "12345678n", "35Mi"), ("side", "1m", "1Mi")),
             pod_item("b", "y", ("app", "250m", "10Mi"))]
    assert pod_rows(items, False, False, "") == (["NAME", "CPU(cores)", "MEMORY(bytes)"],
                                                 [["a", "14m", "36Mi"], ["b", "250m", "10Mi"]])
    header, rows = pod_rows(items, True, True, "cpu")
    assert header == ["NAMESPACE", "POD", "NAME", "CPU(cores)", "MEMORY(bytes)"]
    assert rows[0] == ["y", "b", "app", "250m", "10Mi"]
    assert memory_text(1_048_575_000) == "0Mi"


def test_top_node_rows() -> None:
    items = [{"metadata": {"name": "n1"}, "usage": {"cpu": "500m", "memory": "1Gi"}}]
    nodes = [{"metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "2", "memory": "4Gi"}}},
             {"metadata": {"name": "n2"}, "status": {"allocatable": {"cpu": "2", "memory": "4Gi"}}}]
    header, rows = node_rows(items, nodes, "")
    assert header == ["NAME", "CPU(cores)", "CPU%", "MEMORY(bytes)", "MEMORY%"]
    assert rows == [["n1", "500m", "25%", "1024Mi", "25%"], ["n2"] + ["<unknown>"] * 4]


# ----------------------------------------------------------------------------- get hpa TARGETS
def test_get_hpa_targets_column() -> None:
    obj = {"spec": {"metrics": [
        {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}},
        {"type": "Resource", "resource": {"name": "memory", "target": {"type": "Utilization",
                                                                        "averageUtilization": 70}}}]},
        "status": {"currentMetrics": [
            {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 85,
                                                                          "averageValue": "85m"}}},
            {"type": "Resource", "resource": {"name": "memory", "current": {"averageUtilization": 30,
                                                                             "averageValue": "31457280"}}}]}}
    assert hpa_targets(obj, NOW) == "cpu: 85%/50%, memory: 30%/70%"
    obj["status"]["currentMetrics"] = [{"type": ""}, obj["status"]["currentMetrics"][1]]
    assert hpa_targets(obj, NOW) == "cpu: <unknown>/50%, memory: 30%/70%"
    del obj["status"]["currentMetrics"]
    assert hpa_targets(obj, NOW) == "cpu: <unknown>/50%, memory: <unknown>/70%"


def test_pod_sample_fields() -> None:
    sample = PodSample("u", "ns", "p", "n1", "2026-11-21T12:00:00Z", 2.5, [])
    assert pod_metrics({"metadata": {"name": "p", "namespace": "ns"}}, sample)["window"] == "2.5s"


def test_every_metric_type_is_accepted() -> None:
    metrics = [
        {"type": "ContainerResource", "containerResource": {"name": "cpu", "container": "app", "target": {
            "type": "Utilization", "averageUtilization": 50}}},
        {"type": "Pods", "pods": {"metric": {"name": "rps"}, "target": {"type": "AverageValue", "averageValue": 10}}},
        {"type": "Object", "object": {"metric": {"name": "hits"}, "target": {"type": "Value", "value": "2k"},
                                      "describedObject": {"apiVersion": "v1", "kind": "Service", "name": "web"}}},
        {"type": "External", "external": {"metric": {"name": "q", "selector": {"matchLabels": {"queue": "a"}}},
                                          "target": {"type": "AverageValue", "averageValue": "30"}}}]
    obj = hpa(metrics=metrics)
    strategy().default(obj)
    assert strategy().validate(obj, None) == []
    assert obj["spec"]["metrics"][1]["pods"]["target"]["averageValue"] == "10"
