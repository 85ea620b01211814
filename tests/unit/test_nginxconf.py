"""nginx configuration generated for DNS objects and Ingresses, and their shared Frontend shape."""

from __future__ import annotations

from minik8s.api.base import Obj
from minik8s.api.networking import Route, claimed_hosts, frontend_of, frontend_resource_name
from minik8s.controllers.dnsrecords import desired_deployment, desired_service, resolve_backend
from minik8s.controllers.nginxconf import render_config

DNS_OBJ: Obj = {
    "apiVersion": "minik8s.io/v1", "kind": "DNS",
    "metadata": {"name": "shop", "namespace": "default", "uid": "u1", "creationTimestamp": "2026-01-01T00:00:00Z"},
    "spec": {"host": "Shop.Example.com", "paths": [{"path": "/cart/", "serviceName": "cart", "servicePort": 80},
                                                   {"path": "/", "serviceName": "web", "servicePort": 8080}]},
}
BACKENDS = {"cart": ("10.96.1.2", 80), "web": ("10.96.1.3", 8080)}


def resolve(route: Route) -> tuple[str, int] | None:
    return BACKENDS.get(route.service)


def test_dns_object_becomes_one_server_stripping_path_prefixes() -> None:
    fe = frontend_of(DNS_OBJ)
    assert fe is not None and fe.hosts == ["shop.example.com"] and fe.resource_name == "dns-shop"
    conf = render_config(fe, resolve)
    lines = [line.strip() for line in conf.splitlines()]
    assert "server_name shop.example.com;" in lines
    assert "location = /cart { proxy_pass http://10.96.1.2:80/; }  # -> cart:80" in lines
    assert "location /cart/ { proxy_pass http://10.96.1.2:80/; }  # -> cart:80" in lines
    assert "location / { proxy_pass http://10.96.1.3:8080/; }  # -> web:8080" in lines
    assert conf.count("server {") == 1 and "default_server" not in conf
    assert render_config(fe, resolve) == conf  # deterministic


def test_unresolvable_backend_answers_503() -> None:
    fe = frontend_of(DNS_OBJ)
    assert fe is not None
    conf = render_config(fe, lambda r: None)
    assert "location = /cart { return 503; }" in conf and "proxy_pass" not in conf


def test_ingress_keeps_paths_and_honours_path_types_hosts_and_default_backend() -> None:
    ing: Obj = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                "metadata": {"name": "i", "namespace": "default", "uid": "u2"},
                "spec": {"defaultBackend": {"service": {"name": "web", "port": {"number": 8080}}},
                         "rules": [{"host": "a.example.com", "http": {"paths": [
                             {"path": "/cart", "pathType": "Prefix",
                              "backend": {"service": {"name": "cart", "port": {"name": "http"}}}},
                             {"path": "/cart", "pathType": "Exact",
                              "backend": {"service": {"name": "web", "port": {"number": 8080}}}}]}}]}}
    fe = frontend_of(ing)
    assert fe is not None and fe.resource_name == "ingress-i" and fe.hosts == ["a.example.com"]
    conf = render_config(fe, lambda r: ("10.96.1.2", 80) if r.service == "cart" else ("10.96.1.3", 8080))
    assert "location = /cart { proxy_pass http://10.96.1.3:8080; }" in conf  # Exact wins its location
    assert "location /cart/ { proxy_pass http://10.96.1.2:80; }" in conf     # no prefix stripping
    assert "listen 80 default_server;" in conf and "server_name _;" in conf
    assert frontend_of({**ing, "spec": {**ing["spec"], "ingressClassName": "nginx"}}) is None


def test_named_ports_resolve_against_the_service() -> None:
    svc: Obj = {"spec": {"clusterIP": "10.96.0.7", "ports": [{"name": "http", "port": 81}]}}
    assert resolve_backend(Route("/", "s", "http"), svc) == ("10.96.0.7", 81)
    assert resolve_backend(Route("/", "s", "nope"), svc) is None
    assert resolve_backend(Route("/", "s", 80), svc) == ("10.96.0.7", 80)
    assert resolve_backend(Route("/", "s", 80), {"spec": {"clusterIP": "None"}}) is None
    assert resolve_backend(Route("/", "s", 80), None) is None


def test_children_carry_owner_reference_labels_and_config() -> None:
    fe = frontend_of(DNS_OBJ)
    assert fe is not None
    dep = desired_deployment(fe, "CONF")
    ref = dep["metadata"]["ownerReferences"][0]
    assert ref == {"apiVersion": "minik8s.io/v1", "kind": "DNS", "name": "shop", "uid": "u1", "controller": True,
                   "blockOwnerDeletion": True}
    container = dep["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "minik8s/nginx:latest"
    assert container["env"] == [{"name": "NGINX_CONFIG", "value": "CONF"}]
    assert dep["spec"]["selector"]["matchLabels"] == {"minik8s.io/frontend": "dns-shop"}
    assert desired_deployment(fe, "OTHER")["metadata"]["annotations"] != dep["metadata"]["annotations"]
    svc = desired_service(fe)
    assert svc["spec"]["selector"] == {"minik8s.io/frontend": "dns-shop"} and svc["metadata"]["name"] == "dns-shop"


def test_resource_names_are_valid_service_names() -> None:
    assert frontend_resource_name("DNS", "web") == "dns-web"
    long = frontend_resource_name("DNS", "a.b." + "x" * 80)
    assert len(long) <= 63 and "." not in long and long.startswith("dns-a-b-")
    assert long != frontend_resource_name("DNS", "a.b." + "x" * 81)


def test_oldest_object_claims_a_host() -> None:
    young = {**DNS_OBJ, "metadata": {**DNS_OBJ["metadata"], "name": "b", "uid": "u3",
                                     "creationTimestamp": "2026-02-01T00:00:00Z"}}
    fronts = [f for f in (frontend_of(young), frontend_of(DNS_OBJ)) if f is not None]
    assert claimed_hosts(fronts)["shop.example.com"].uid == "u1"
