"""The pure pieces of ``kubectl describe hpa|role|clusterrole``: metric lines of every type and the
RBAC rule breakdown, compaction and sort key (:mod:`minik8s.kubectl.describe.autoscaling`,
:mod:`minik8s.kubectl.describe.access`)."""

from __future__ import annotations

from minik8s.kubectl.describe.access import breakdown, combine_resource_group, compact, rule_string
from minik8s.kubectl.describe.autoscaling import metric_line


def test_metric_lines() -> None:
    cpu = {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization",
                                                                      "averageUtilization": 80}}}
    status = {"currentMetrics": [{"type": "Resource", "resource": {
        "name": "cpu", "current": {"averageUtilization": 12, "averageValue": "6m"}}}]}
    assert metric_line(cpu, 0, status) == "resource cpu on pods  (as a percentage of request):\t12% (6m) / 80%"
    assert metric_line(cpu, 1, status) == "resource cpu on pods  (as a percentage of request):\t<unknown> / 80%"
    container = {"type": "ContainerResource", "containerResource": {
        "name": "memory", "container": "web", "target": {"type": "AverageValue", "averageValue": "1Gi"}}}
    assert metric_line(container, 0, {}) == 'resource memory of container "web" on pods:\t<unknown> / 1Gi'
    pods = {"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"averageValue": "10"}}}
    assert metric_line(pods, 0, {}) == '"qps" on pods:\t<unknown> / 10'
    obj = {"type": "Object", "object": {"metric": {"name": "hits"}, "describedObject": {"kind": "Service",
                                                                                         "name": "web"},
                                        "target": {"type": "Value", "value": "2k"}}}
    assert metric_line(obj, 0, {}) == '"hits" on Service/web (target value):\t<unknown> / 2k'
    external = {"type": "External", "external": {"metric": {"name": "queue"}, "target": {"value": "30"}}}
    assert metric_line(external, 0, {}) == '"queue" (target value):\t<unknown> / 30'
    assert metric_line({"type": "Odd"}, 0, {}) == '<unknown metric type "Odd">'


def test_rules_are_broken_down_compacted_and_sorted() -> None:
    rules = [{"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": ["get", "list"]},
             {"apiGroups": [""], "resources": ["pods"], "verbs": ["watch", "get"]},
             {"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["a"], "verbs": ["update"]},
             {"nonResourceURLs": ["/healthz"], "verbs": ["get"]}]
    out = sorted(compact([r for rule in rules for r in breakdown(rule)]), key=rule_string)
    assert out == [  # Go's "[get list watch]" < "[get list]" < "[get]": a space sorts before "]"
        (("get", "list", "watch"), ("",), ("pods",), (), ()),
        (("get", "list"), ("",), ("pods/log",), (), ()),
        (("get",), (), (), (), ("/healthz",)),
        (("update",), ("",), ("configmaps",), ("a",), ()),
    ]
    assert rule_string(out[2]) == \
        "&PolicyRule{Verbs:[get],APIGroups:[],Resources:[],ResourceNames:[],NonResourceURLs:[/healthz],}"


def test_combine_resource_group() -> None:
    assert combine_resource_group(("pods",), ("",)) == "pods"
    assert combine_resource_group(("deployments/scale",), ("apps",)) == "deployments.apps/scale"
    assert combine_resource_group((), ()) == ""
