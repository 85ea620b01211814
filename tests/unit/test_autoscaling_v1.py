"""autoscaling/v1 HorizontalPodAutoscaler <-> the stored autoscaling/v2 form."""

from __future__ import annotations

from minik8s.api.autoscaling_v1 import from_v1, to_v1

REF = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
CPU = {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}
MEMORY = {"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "1Gi"}}}


def test_v1_to_v2_and_back() -> None:
    v1 = {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web"},
          "spec": {"scaleTargetRef": REF, "minReplicas": 2, "maxReplicas": 5, "targetCPUUtilizationPercentage": 50}}
    v2 = from_v1(v1)
    assert v2 == {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web"},
                  "spec": {"scaleTargetRef": REF, "minReplicas": 2, "maxReplicas": 5, "metrics": [CPU]}}
    stored = {**v2, "status": {"currentReplicas": 3, "desiredReplicas": 4, "currentMetrics": [
        {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 61}}}],
        "conditions": [{"type": "AbleToScale", "status": "True"}]}}
    assert to_v1(stored) == {**v1, "status": {"currentReplicas": 3, "desiredReplicas": 4,
                                              "currentCPUUtilizationPercentage": 61}}


def test_v1_writes_keep_what_v1_cannot_show() -> None:
    behavior = {"scaleDown": {"stabilizationWindowSeconds": 60}}
    stored = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web"},
              "spec": {"scaleTargetRef": REF, "maxReplicas": 5, "metrics": [CPU, MEMORY], "behavior": behavior},
              "status": {"currentReplicas": 1, "conditions": [{"type": "AbleToScale", "status": "True"}]}}
    shown = to_v1(stored)
    assert shown["spec"] == {"scaleTargetRef": REF, "maxReplicas": 5, "targetCPUUtilizationPercentage": 50}
    shown["spec"]["targetCPUUtilizationPercentage"] = 70
    shown["status"]["currentReplicas"] = 2
    back = from_v1(shown, stored)
    assert back["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 70
    assert back["spec"]["metrics"][1] == MEMORY and back["spec"]["behavior"] == behavior
    assert back["status"] == {"currentReplicas": 2, "desiredReplicas": 0,  # v1 always shows both
                              "conditions": [{"type": "AbleToScale", "status": "True"}]}
    del shown["spec"]["targetCPUUtilizationPercentage"]
    assert from_v1(shown, stored)["spec"]["metrics"] == [MEMORY]
    assert from_v1("not an object") == "not an object"
