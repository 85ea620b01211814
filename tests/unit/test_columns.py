"""The shared column definitions (minik8s/api/columns.py) and the Tables built from them."""

from __future__ import annotations

import datetime as dt

import pytest

from minik8s.api import columns

AT = dt.datetime(2026, 1, 1, 0, 10, tzinfo=dt.UTC)


def test_definitions_follow_kubernetes_printers() -> None:
    assert [c.name for c in columns.definitions("Pod")] == [
        "Name", "Ready", "Status", "Restarts", "Age", "IP", "Node", "Nominated Node", "Readiness Gates"]
    assert [c.header for c in columns.definitions("Deployment")][:4] == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE"]
    events = columns.definitions("Event")
    assert events[0].name == "Last Seen" and (events[-1].name, events[-1].format, events[-1].priority) == \
        ("Name", "name", 1)
    assert [c.name for c in columns.definitions("DNS")] == ["Name", "Age"]  # no printer: as CRDs
    assert columns.definitions("Pod")[0].definition() == {
        "name": "Name", "type": "string", "format": "name", "description": columns.NAME_DESCRIPTION, "priority": 0}


def test_ingress_and_metrics_cells() -> None:
    ing = {"metadata": {"name": "site", "creationTimestamp": "2026-01-01T00:00:00Z"},
           "spec": {"ingressClassName": "nginx", "tls": [{"hosts": ["a.com"]}],
                    "rules": [{"host": "a.com"}, {}, {"host": "b.com"}, {"host": "c.com"}]},
           "status": {"loadBalancer": {"ingress": [{"ip": "192.168.100.200"}, {"hostname": "lb.example.com"}]}}}
    assert columns.cells(columns.definitions("Ingress"), ing, AT) == [
        "site", "nginx", "a.com,*,b.com + 1 more...", "192.168.100.200,lb.example.com", "80, 443", "10m"]
    pod_metrics = {"metadata": {"name": "web"}, "window": "15s",
                   "containers": [{"usage": {"cpu": "250m", "memory": "64Mi"}},
                                  {"usage": {"cpu": "1500000n", "memory": "1Mi"}}]}
    assert columns.cells(columns.definitions("PodMetrics"), pod_metrics, AT) == ["web", "251500u", "65Mi", "15s"]


def test_table_include_object() -> None:
    pod = {"metadata": {"name": "web", "labels": {"a": "b"}, "resourceVersion": "7"}, "spec": {"containers": []}}
    meta = columns.table("Pod", [pod], list_meta={"resourceVersion": "9"}, at=AT)
    assert meta["metadata"] == {"resourceVersion": "9"} and meta["apiVersion"] == "meta.k8s.io/v1"
    assert meta["rows"][0]["object"] == {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                                         "metadata": pod["metadata"]}
    assert columns.table("Pod", [pod], include_object="Object", at=AT)["rows"][0]["object"] is pod
    beta = columns.table("Pod", [pod], include_object="None", table_version="v1beta1", with_definitions=False)
    assert beta["rows"][0]["object"] is None and beta["columnDefinitions"] == []
    assert beta["apiVersion"] == "meta.k8s.io/v1beta1"
    with pytest.raises(ValueError):
        columns.table("Pod", [pod], include_object="All")
