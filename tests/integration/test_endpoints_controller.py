"""The endpoints controller against a real apiserver (controller-manager in-process, pods reported over the API).

Pods get their IPs the way a kubelet reports them: through the ``status`` subresource
(:func:`mark_running` of the shared helpers, then ``podIP``); nothing reaches into the
controller.
"""

from __future__ import annotations

import itertools
from typing import Any

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.client.rest import Client
from tests.support.controllers import SimulatedNode, controller_manager, finish_deletion, mark_running, replicaset
from tests.support.waiting import wait_for

_ips = itertools.count(10)


def next_ip() -> str:
    n = next(_ips)
    return f"10.244.{200 + n // 250}.{n % 250 + 2}"


async def report(client: Client, pod: Obj, ip: str, ready: bool = True) -> Obj:
    """What a kubelet reports for a running pod: phase, Ready condition, then its podIP."""
    await mark_running(client, pod, ready=ready)
    meta = pod["metadata"]
    return await client.patch(client.kind("v1", "Pod"), meta["name"],
                              {"status": {"podIP": ip, "podIPs": [{"ip": ip}]}}, meta["namespace"],
                              subresource="status")


class NodeWithIPs(SimulatedNode):
    """The shared scheduler + kubelet stand-in, also reporting a podIP for every pod it starts."""

    async def _start(self, pod: Obj) -> None:
        await super()._start(pod)
        meta = pod["metadata"]
        try:
            await self.client.patch(self.client.kind("v1", "Pod"), meta["name"], {"status": {"podIP": next_ip()}},
                                    meta["namespace"], subresource="status")
        except (errors.NotFound, errors.Conflict):
            pass


def web_pod(name: str, labels: dict[str, str] | None = None, port: int = 8080) -> Obj:
    return {"metadata": {"name": name, "labels": labels or {"app": "web"}},
            "spec": {"containers": [{"name": "main", "image": "minik8s/busybox",
                                     "ports": [{"name": "http", "containerPort": port}]}]}}


def web_service(name: str = "web", **spec: Any) -> Obj:
    return {"metadata": {"name": name, "labels": {"tier": "front"}},
            "spec": {"selector": {"app": "web"},
                     "ports": [{"name": "http", "port": 80, "targetPort": "http"}], **spec}}


async def get_endpoints(client: Client, ns: str, name: str = "web") -> Obj | None:
    try:
        return await client.get(client.kind("v1", "Endpoints"), name, ns)
    except errors.NotFound:
        return None


def ips(endpoints: Obj | None, field: str = "addresses") -> list[str]:
    return sorted(a["ip"] for s in (endpoints or {}).get("subsets") or [] for a in s.get(field) or [])


async def test_endpoints_follow_pod_create_readiness_relabel_and_delete(client: Client, namespace: str) -> None:
    pod_rt, svc_rt = client.kind("v1", "Pod"), client.kind("v1", "Service")
    async with controller_manager(client, namespace, ["endpoint"]):
        await client.create(svc_rt, web_service(), namespace)
        await wait_for(lambda: _exists(client, namespace), what="empty Endpoints for the new Service")
        empty = await get_endpoints(client, namespace)
        assert empty is not None and not empty.get("subsets") and empty["metadata"]["labels"] == {"tier": "front"}

        a = await client.create(pod_rt, web_pod("a"), namespace)
        b = await client.create(pod_rt, web_pod("b"), namespace)
        ip_a, ip_b = next_ip(), next_ip()
        await report(client, a, ip_a)
        await report(client, b, ip_b, ready=False)

        async def state(ready: list[str], not_ready: list[str]) -> bool:
            ep = await get_endpoints(client, namespace)
            return ips(ep) == sorted(ready) and ips(ep, "notReadyAddresses") == sorted(not_ready)

        await wait_for(lambda: state([ip_a], [ip_b]), what="a ready, b not ready")
        ep = await get_endpoints(client, namespace)
        assert ep is not None
        subset = ep["subsets"][0]
        assert subset["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
        address = subset["addresses"][0]
        assert address["nodeName"] == "node-1"
        assert address["targetRef"] == {"kind": "Pod", "namespace": namespace, "name": "a",
                                        "uid": a["metadata"]["uid"]}

        await report(client, b, ip_b, ready=True)
        await wait_for(lambda: state([ip_a, ip_b], []), what="b ready")

        # no write when nothing that matters changed
        rv = (await get_endpoints(client, namespace) or {})["metadata"]["resourceVersion"]
        await client.patch(pod_rt, "a", {"metadata": {"annotations": {"note": "x"}}}, namespace)
        await client.patch(pod_rt, "a", {"metadata": {"annotations": {"note": "y"}}}, namespace)
        await wait_for(lambda: state([ip_a, ip_b], []), what="unchanged")
        assert (await get_endpoints(client, namespace) or {})["metadata"]["resourceVersion"] == rv

        await client.patch(pod_rt, "a", {"metadata": {"labels": {"app": "other"}}}, namespace)
        await wait_for(lambda: state([ip_b], []), what="relabelled a left out")

        await client.delete(pod_rt, "b", namespace)  # bound: graceful, terminating first
        await wait_for(lambda: state([], []), what="terminating b left out")
        await finish_deletion(client, await client.get(pod_rt, "b", namespace))

        await client.delete(svc_rt, "web", namespace)
        await wait_for(lambda: _gone(client, namespace), what="Endpoints deleted with the Service")


async def _exists(client: Client, ns: str, name: str = "web") -> bool:
    return await get_endpoints(client, ns, name) is not None


async def _gone(client: Client, ns: str, name: str = "web") -> bool:
    return await get_endpoints(client, ns, name) is None


async def test_service_created_after_its_replicaset_pods(client: Client, namespace: str) -> None:
    rs_rt, svc_rt = client.kind("apps/v1", "ReplicaSet"), client.kind("v1", "Service")
    labels = {"app": "web"}
    rs = replicaset("web", 3, labels)
    rs["spec"]["template"]["spec"]["containers"][0]["ports"] = [{"name": "http", "containerPort": 8080}]
    async with NodeWithIPs(client, namespace), \
            controller_manager(client, namespace, ["replicaset", "endpoint"]):
        await client.create(rs_rt, rs, namespace)

        async def ready_pods(n: int) -> bool:
            items = (await client.list(client.kind("v1", "Pod"), namespace))["items"]
            return sum(1 for p in items if (p.get("status") or {}).get("podIP")) == n

        await wait_for(lambda: ready_pods(3), what="3 pods with IPs")
        await client.create(svc_rt, web_service(), namespace)

        async def count(n: int) -> bool:
            return len(ips(await get_endpoints(client, namespace))) == n

        await wait_for(lambda: count(3), what="3 endpoints")
        await client.patch(rs_rt, "web", {"spec": {"replicas": 1}}, namespace)
        await wait_for(lambda: count(1), what="1 endpoint after scale-down")


async def test_selectorless_service_endpoints_are_left_alone(client: Client, namespace: str) -> None:
    svc_rt, ep_rt, pod_rt = client.kind("v1", "Service"), client.kind("v1", "Endpoints"), client.kind("v1", "Pod")
    manual = {"metadata": {"name": "manual"},
              "subsets": [{"addresses": [{"ip": "10.244.250.9"}], "ports": [{"port": 9000, "protocol": "TCP"}]}]}
    await client.create(svc_rt, {"metadata": {"name": "manual"}, "spec": {"ports": [{"port": 80}]}}, namespace)
    await client.create(ep_rt, manual, namespace)
    # a leftover from a Service deleted while no controller ran: removed on start
    await client.create(ep_rt, {"metadata": {"name": "leftover"}, "subsets": []}, namespace)
    async with controller_manager(client, namespace, ["endpoint"]):
        await client.create(svc_rt, web_service(), namespace)
        pod = await client.create(pod_rt, web_pod("a", {"app": "web"}), namespace)
        ip = next_ip()
        await report(client, pod, ip)
        await wait_for(lambda: _has(client, namespace, ip), what="web endpoints")
        await wait_for(lambda: _gone(client, namespace, "leftover"), what="leftover Endpoints removed")
        current = await client.get(ep_rt, "manual", namespace)
        assert current["subsets"] == manual["subsets"]


async def _has(client: Client, ns: str, ip: str) -> bool:
    return ips(await get_endpoints(client, ns)) == [ip]
