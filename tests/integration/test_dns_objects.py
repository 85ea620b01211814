"""DNS objects (minik8s.io/v1) end to end over the API: the DNS controller makes the nginx Deployment
and Service, the Deployment and ReplicaSet controllers roll it out (pods run by the shared
kubelet stand-in), the cluster DNS server resolves the host, updates roll the configuration
and deleting the object garbage-collects everything."""

from __future__ import annotations

import pytest

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.client.rest import Client
from tests.support.controllers import SimulatedNode, controller_manager
from tests.support.dns import answers, dns_server, query
from tests.support.waiting import wait_for

CONTROLLERS = ["dns", "deployment", "replicaset", "garbagecollector", "endpoint"]


def dns_object(host: str, paths: list[tuple[str, str, int]]) -> Obj:
    return {"apiVersion": "minik8s.io/v1", "kind": "DNS", "metadata": {"name": "shop"},
            "spec": {"host": host, "paths": [{"path": p, "serviceName": s, "servicePort": n} for p, s, n in paths]}}


async def nginx_config(client: Client, ns: str) -> str:
    dep = await client.get(client.kind("apps/v1", "Deployment"), "dns-shop", ns)
    env = dep["spec"]["template"]["spec"]["containers"][0]["env"]
    return str(next(e["value"] for e in env if e["name"] == "NGINX_CONFIG"))


async def test_dns_object_runs_nginx_resolves_and_is_collected(client: Client, namespace: str) -> None:
    svc_rt, dns_rt = client.kind("v1", "Service"), client.kind("minik8s.io/v1", "DNS")
    dep_rt = client.kind("apps/v1", "Deployment")
    cart = await client.create(svc_rt, {"metadata": {"name": "cart"}, "spec": {"ports": [{"port": 80}]}}, namespace)
    web = await client.create(svc_rt, {"metadata": {"name": "web"}, "spec": {"ports": [{"port": 8080}]}}, namespace)
    host = f"shop-{namespace}.example.com"
    with pytest.raises(errors.Invalid):
        await client.create(dns_rt, dns_object(host, [("cart", "cart", 80)]), namespace)
    async with SimulatedNode(client, namespace), controller_manager(client, namespace, CONTROLLERS), \
            dns_server(client, namespace, register=False) as dns:
        obj = await client.create(dns_rt, dns_object(host, [("/cart", "cart", 80), ("/", "web", 8080)]), namespace)

        async def ready() -> bool:
            status = (await client.get(dns_rt, "shop", namespace)).get("status") or {}
            return any(c["type"] == "Ready" and c["status"] == "True" for c in status.get("conditions") or [])

        await wait_for(ready, timeout=30, what="DNS object Ready")
        status = (await client.get(dns_rt, "shop", namespace))["status"]
        nginx_svc = await client.get(svc_rt, "dns-shop", namespace)
        assert status["serviceName"] == "dns-shop" and status["serviceAddress"] == nginx_svc["spec"]["clusterIP"]
        assert status["observedGeneration"] == 1
        for child in (nginx_svc, await client.get(dep_rt, "dns-shop", namespace)):
            ref = child["metadata"]["ownerReferences"][0]
            assert (ref["kind"], ref["uid"], ref["controller"]) == ("DNS", obj["metadata"]["uid"], True)
        config = await nginx_config(client, namespace)
        assert f"server_name {host};" in config
        assert f"location /cart/ {{ proxy_pass http://{cart['spec']['clusterIP']}:80/; }}" in config
        assert f"location / {{ proxy_pass http://{web['spec']['clusterIP']}:8080/; }}" in config

        for tcp in (False, True):
            reply = await query(dns.server.port, host, tcp=tcp)
            assert answers(reply) == [status["serviceAddress"]]

        # update: a new path rolls a new configuration into the Deployment
        live = await client.get(dns_rt, "shop", namespace)
        live["spec"]["paths"].append({"path": "/api", "serviceName": "api", "servicePort": 9000})
        await client.update(dns_rt, live)

        async def rolled() -> bool:
            return "location /api/ { return 503; }" in await nginx_config(client, namespace)

        await wait_for(rolled, what="configuration with /api (no Service yet: 503)")
        api = await client.create(svc_rt, {"metadata": {"name": "api"}, "spec": {"ports": [{"port": 9000}]}},
                                  namespace)

        async def forwarded() -> bool:
            return f"proxy_pass http://{api['spec']['clusterIP']}:9000/;" in await nginx_config(client, namespace)

        await wait_for(forwarded, what="/api forwarded once its Service exists")

        # delete: the garbage collector removes Deployment and Service; the name stops resolving
        await client.delete(dns_rt, "shop", namespace)

        async def collected() -> bool:
            for rt in (dep_rt, svc_rt):
                try:
                    await client.get(rt, "dns-shop", namespace)
                    return False
                except errors.NotFound:
                    continue
            return True

        await wait_for(collected, timeout=30, what="nginx Deployment and Service collected")
        await wait_for(lambda: _refused(dns.server.port, host), what="host no longer resolving")


async def _refused(port: int, host: str) -> bool:
    reply = await query(port, host)
    return not reply.rr


async def test_ingress_uses_the_same_machinery(client: Client, namespace: str) -> None:
    ing_rt, svc_rt = client.kind("networking.k8s.io/v1", "Ingress"), client.kind("v1", "Service")
    await client.create(svc_rt, {"metadata": {"name": "web"}, "spec": {"ports": [{"name": "http", "port": 8080}]}},
                        namespace)
    host = f"ing-{namespace}.example.com"
    ingress = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "site"},
               "spec": {"rules": [{"host": host, "http": {"paths": [
                   {"path": "/app", "pathType": "Prefix",
                    "backend": {"service": {"name": "web", "port": {"name": "http"}}}}]}}]}}
    async with controller_manager(client, namespace, ["dns"]), \
            dns_server(client, namespace, register=False) as dns:
        await client.create(ing_rt, ingress, namespace)

        async def has_ip() -> bool:
            status = (await client.get(ing_rt, "site", namespace)).get("status") or {}
            return bool(((status.get("loadBalancer") or {}).get("ingress") or [{}])[0].get("ip"))

        await wait_for(has_ip, what="Ingress status IP")
        ip = (await client.get(ing_rt, "site", namespace))["status"]["loadBalancer"]["ingress"][0]["ip"]
        assert ip == (await client.get(svc_rt, "ingress-site", namespace))["spec"]["clusterIP"]
        await wait_for(lambda: _resolves_to(dns.server.port, host, ip), what="Ingress host resolving")


async def _resolves_to(port: int, host: str, ip: str) -> bool:
    return answers(await query(port, host)) == [ip]
