"""The field selectors the apiserver takes for v1 Events: Kubernetes' set, which ``kubectl events --for``
uses (``involvedObject.kind=Pod,involvedObject.apiVersion=v1,involvedObject.name=X``)."""

from __future__ import annotations

from minik8s.apiserver.strategies.event import EventStrategy


def test_event_field_selectors_are_kubernetes_set() -> None:
    event = {"metadata": {"name": "box.1", "namespace": "ns"}, "reason": "Started", "type": "Normal",
             "reportingComponent": "kubelet", "source": {"component": "kubelet"},
             "involvedObject": {"kind": "Pod", "apiVersion": "v1", "name": "box", "namespace": "ns", "uid": "u1",
                                "resourceVersion": "7", "fieldPath": "spec.containers{main}"}}
    assert EventStrategy().fields(event) == {
        "metadata.name": "box.1", "metadata.namespace": "ns",
        "involvedObject.kind": "Pod", "involvedObject.apiVersion": "v1", "involvedObject.name": "box",
        "involvedObject.namespace": "ns", "involvedObject.uid": "u1", "involvedObject.resourceVersion": "7",
        "involvedObject.fieldPath": "spec.containers{main}", "reason": "Started", "type": "Normal",
        "source": "kubelet", "reportingComponent": "kubelet"}
