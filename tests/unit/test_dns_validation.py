"""Validation of the DNS kind (minik8s.io/v1) and of networking.k8s.io/v1 Ingress."""

from __future__ import annotations

from typing import Any

import pytest

from minik8s.api.base import Obj
from minik8s.api.registry import default_registry
from minik8s.apiserver.strategies.dns import DNSStrategy
from minik8s.apiserver.strategies.ingress import IngressStrategy


def dns(**spec: Any) -> Obj:
    base: Obj = {"host": "shop.example.com", "paths": [{"path": "/cart", "serviceName": "cart", "servicePort": 80}]}
    base.update(spec)
    return {"apiVersion": "minik8s.io/v1", "kind": "DNS", "metadata": {"name": "shop"}, "spec": base}


def fields(causes: list[tuple[str, Any, str]]) -> list[str]:
    return [c[0] for c in causes]


def test_a_valid_dns_object() -> None:
    assert DNSStrategy().validate(dns(), None) == []


@pytest.mark.parametrize("spec, field", [
    ({"host": ""}, "spec.host"),
    ({"host": "Shop.example.com"}, "spec.host"),
    ({"host": "shop_1.example.com"}, "spec.host"),
    ({"host": "10.1.2.3"}, "spec.host"),
    ({"paths": []}, "spec.paths"),
    ({"paths": [{"path": "cart", "serviceName": "cart", "servicePort": 80}]}, "spec.paths[0].path"),
    ({"paths": [{"path": "/a b", "serviceName": "cart", "servicePort": 80}]}, "spec.paths[0].path"),
    ({"paths": [{"path": "/a;b", "serviceName": "cart", "servicePort": 80}]}, "spec.paths[0].path"),
    ({"paths": [{"path": "/a", "serviceName": "cart", "servicePort": 80},
                {"path": "/a/", "serviceName": "web", "servicePort": 80}]}, "spec.paths[1].path"),
    ({"paths": [{"path": "/a", "serviceName": "Cart", "servicePort": 80}]}, "spec.paths[0].serviceName"),
    ({"paths": [{"path": "/a", "serviceName": "1cart", "servicePort": 80}]}, "spec.paths[0].serviceName"),
    ({"paths": [{"path": "/a", "serviceName": "cart", "servicePort": 0}]}, "spec.paths[0].servicePort"),
    ({"paths": [{"path": "/a", "serviceName": "cart", "servicePort": 65536}]}, "spec.paths[0].servicePort"),
    ({"paths": [{"path": "/a", "serviceName": "cart"}]}, "spec.paths[0].servicePort"),
])
def test_invalid_dns_objects(spec: Obj, field: str) -> None:
    assert field in fields(DNSStrategy().validate(dns(**spec), None))


def ingress(spec: Obj) -> Obj:
    return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "i"}, "spec": spec}


def rule(path: Obj, host: str = "*.example.com") -> Obj:
    return {"rules": [{"host": host, "http": {"paths": [path]}}]}


BACKEND = {"service": {"name": "web", "port": {"number": 80}}}


def test_valid_ingresses() -> None:
    strategy = IngressStrategy()
    assert strategy.validate(ingress(rule({"path": "/", "pathType": "Prefix", "backend": BACKEND})), None) == []
    named = {"service": {"name": "web", "port": {"name": "http"}}}
    assert strategy.validate(ingress({"defaultBackend": named}), None) == []


@pytest.mark.parametrize("spec, field", [
    ({}, "spec"),
    (rule({"path": "/", "backend": BACKEND}), "spec.rules[0].http.paths[0].pathType"),
    (rule({"path": "/", "pathType": "Regex", "backend": BACKEND}), "spec.rules[0].http.paths[0].pathType"),
    (rule({"path": "x", "pathType": "Exact", "backend": BACKEND}), "spec.rules[0].http.paths[0].path"),
    (rule({"path": "/", "pathType": "Exact", "backend": BACKEND}, host="a..b"), "spec.rules[0].host"),
    (rule({"path": "/", "pathType": "Exact", "backend": {}}), "spec.rules[0].http.paths[0].backend"),
    (rule({"path": "/", "pathType": "Exact", "backend": {"service": {"name": "web", "port": {}}}}),
     "spec.rules[0].http.paths[0].backend.service.port"),
    (rule({"path": "/", "pathType": "Exact", "backend": {"service": {"name": "web", "port": {"number": 0}}}}),
     "spec.rules[0].http.paths[0].backend.service.port.number"),
    ({"defaultBackend": {"service": {"name": "web", "port": {"name": "HTTP"}}}},
     "spec.defaultBackend.service.port.name"),
])
def test_invalid_ingresses(spec: Obj, field: str) -> None:
    assert field in fields(IngressStrategy().validate(ingress(spec), None))


def test_kinds_are_registered() -> None:
    reg = default_registry()
    dns_rt, ing_rt = reg.resolve("dns"), reg.resolve("ing")
    assert dns_rt is not None and dns_rt.api_version == "minik8s.io/v1" and dns_rt.plural == "dnses"
    assert ing_rt is not None and ing_rt.api_version == "networking.k8s.io/v1" and ing_rt.namespaced
    assert reg.resolve("dnses.minik8s.io") is dns_rt
