"""A Service's ``sessionAffinity``: the apiserver's defaulting and validation (Kubernetes'
``SetDefaults_Service`` and ``validateClientIPAffinityConfig``), and what the proxy reads of it."""

from __future__ import annotations

from typing import Any

import pytest

from minik8s.apiserver.strategies.service import ServiceStrategy
from minik8s.proxy.servicemap import build_state, sticky_max_age_seconds

PORTS = [{"port": 80}]


def defaulted(spec: dict[str, Any]) -> dict[str, Any]:
    obj = {"metadata": {"name": "web", "namespace": "default"}, "spec": {"ports": PORTS, **spec}}
    ServiceStrategy().default(obj)
    return obj


def causes(spec: dict[str, Any], default: bool = True) -> list[tuple[str, Any, str]]:
    obj = defaulted(spec) if default else {"metadata": {"name": "web", "namespace": "default"},
                                           "spec": {"type": "ClusterIP", "ports": PORTS, **spec}}
    return ServiceStrategy().validate(obj, None)


@pytest.mark.parametrize(("spec", "want_affinity", "want_config"), [
    ({}, "None", None),
    ({"sessionAffinity": ""}, "None", None),
    ({"sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 60}}}, "None", None),  # dropped with None
    ({"sessionAffinity": "ClientIP"}, "ClientIP", {"clientIP": {"timeoutSeconds": 10800}}),
    ({"sessionAffinity": "ClientIP", "sessionAffinityConfig": {}}, "ClientIP", {"clientIP": {"timeoutSeconds": 10800}}),
    ({"sessionAffinity": "ClientIP", "sessionAffinityConfig": {"clientIP": {}}}, "ClientIP",
     {"clientIP": {"timeoutSeconds": 10800}}),
    ({"sessionAffinity": "ClientIP", "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 30}}}, "ClientIP",
     {"clientIP": {"timeoutSeconds": 30}}),
])
def test_session_affinity_defaults(spec: dict[str, Any], want_affinity: str, want_config: Any) -> None:
    out = defaulted(spec)["spec"]
    assert out["sessionAffinity"] == want_affinity
    assert out.get("sessionAffinityConfig") == want_config
    assert ServiceStrategy().validate(defaulted(spec), None) == []


@pytest.mark.parametrize("timeout", [1, 86400])
def test_timeout_bounds_are_accepted(timeout: int) -> None:
    assert causes({"sessionAffinity": "ClientIP", "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": timeout}}}) \
        == []


@pytest.mark.parametrize("timeout", [0, -5, 86401])
def test_timeout_out_of_range_is_refused(timeout: int) -> None:
    assert causes({"sessionAffinity": "ClientIP", "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": timeout}}}) \
        == [("spec.sessionAffinityConfig.clientIP.timeoutSeconds", timeout,
             "must be greater than 0 and less than 86400")]


def test_unsupported_affinity_and_undefaulted_configs() -> None:
    assert causes({"sessionAffinity": "Cookie"}) == [
        ("spec.sessionAffinity", None, 'Unsupported value: "Cookie": supported values: "ClientIP", "None"')]
    # what validation says of objects the defaulting did not see (Kubernetes' messages)
    required = "Required value: when session affinity type is ClientIP"
    assert causes({"sessionAffinity": "ClientIP"}, default=False) == [("spec.sessionAffinityConfig", None, required)]
    assert causes({"sessionAffinity": "ClientIP", "sessionAffinityConfig": {}}, default=False) == [
        ("spec.sessionAffinityConfig.clientIP", None, required)]
    assert causes({"sessionAffinity": "ClientIP", "sessionAffinityConfig": {"clientIP": {}}}, default=False) == [
        ("spec.sessionAffinityConfig.clientIP.timeoutSeconds", None, required)]
    assert causes({"sessionAffinity": "None", "sessionAffinityConfig": {}}, default=False) == [
        ("spec.sessionAffinityConfig", None, "Forbidden: must not be set when session affinity is None")]


def test_the_proxy_reads_the_timeout_of_every_port() -> None:
    assert sticky_max_age_seconds({}) == 0
    assert sticky_max_age_seconds({"sessionAffinity": "None"}) == 0
    assert sticky_max_age_seconds({"sessionAffinity": "ClientIP"}) == 10800  # kube-proxy's fallback
    assert sticky_max_age_seconds({"sessionAffinity": "ClientIP",
                                   "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 5}}}) == 5
    spec = defaulted({"sessionAffinity": "ClientIP", "clusterIP": "10.96.0.10",
                      "ports": [{"name": "a", "port": 80}, {"name": "b", "port": 81}]})
    state = build_state([spec], [])
    assert [sp.sticky_max_age_seconds for sp in state.services.values()] == [10800, 10800]
