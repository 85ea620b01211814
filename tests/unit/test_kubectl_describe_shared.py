"""The pure pieces of ``kubectl describe``'s generic rendering and of its storage and service
printers (:mod:`minik8s.kubectl.describe.shared`, ``.storage``, ``.services``), against what
kubectl 1.32 prints."""

from __future__ import annotations

import pytest

from minik8s.api.kubejsonpath import go_float
from minik8s.kubectl.describe.services import format_endpoint_slices
from minik8s.kubectl.describe.shared import smart_label, write_unstructured
from minik8s.kubectl.describe.storage import access_modes, go_strings
from minik8s.kubectl.sections import Writer


@pytest.mark.parametrize(("key", "label"), [
    ("apiVersion", "API Version"), ("podIP", "Pod IP"), ("uid", "UID"), ("creationTimestamp", "Creation Timestamp"),
    ("HTTPServer", "HTTP Server"), ("URLs", "UR Ls"), ("foo-bar", "Foo - Bar"),
    ("app.kubernetes.io/name", "app.kubernetes.io/name"), ("openAPIV3Schema", "openAPIV3Schema"), ("v1", "v1"),
])
def test_smart_label_as_kubectl(key: str, label: str) -> None:
    assert smart_label(key) == label


@pytest.mark.parametrize(("value", "text"), [
    (0.5, "0.5"), (1e6, "1e+06"), (1234567.0, "1.234567e+06"), (100000.0, "100000"), (0.0001, "0.0001"),
    (0.00001, "1e-05"), (-2.5, "-2.5"), (100.0, "100"), (0.0, "0"),
])
def test_go_float(value: float, text: str) -> None:
    assert go_float(value) == text


def test_unstructured_content_sorted_nested_and_multiline() -> None:
    w = Writer()
    write_unstructured(w, 0, {"spec": {"b": [1, {"x": None}], "a": "one\ntwo", "on": True}, "kind": "K",
                              "metadata": {"name": "n", "uid": "u"}})
    # a multi-line value's further lines at the margin end the column block, as in Go's tabwriter
    assert w.text() == ("Kind:  K\nMetadata:\n  UID:  u\nSpec:\n  A:  one\ntwo\n  B:\n    1\n    X:  <nil>\n"
                        "  On:   true\n")


def test_access_modes_and_go_strings() -> None:
    assert access_modes(["ReadWriteMany", "ReadWriteOnce", "ReadWriteOnce"]) == "RWO,RWX"
    assert go_strings(["a", "b"]) == "[a b]" and go_strings(None) == "[]"


def test_endpoint_slices_three_then_more_and_not_ready_skipped() -> None:
    eps = [{"addresses": [f"10.0.0.{i}"]} for i in range(5)] + [{"addresses": ["10.0.0.9"],
                                                                 "conditions": {"ready": False}}]
    slices = [{"ports": [{"name": "http", "port": 80}], "endpoints": eps}]
    assert format_endpoint_slices(slices, {"http"}) == "10.0.0.0:80,10.0.0.1:80,10.0.0.2:80 + 2 more..."
    assert format_endpoint_slices(slices, {"other"}) == ""
    assert format_endpoint_slices([], {"http"}) == "<none>"
