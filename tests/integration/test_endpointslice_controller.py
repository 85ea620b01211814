"""The EndpointSlice and EndpointSliceMirroring controllers against a real apiserver (controller-manager
in-process; pods' IPs and readiness reported over the ``status`` subresource, as a kubelet does), and
the slices read back through the official ``kubernetes`` client's DiscoveryV1Api."""

from __future__ import annotations

import asyncio
from typing import Any

from kubernetes import client as k8s

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.client.rest import Client
from tests.support.controllers import controller_manager, finish_deletion, mark_running
from tests.support.processes import APIServer
from tests.support.waiting import wait_for

SLICE = ("discovery.k8s.io/v1", "EndpointSlice")


async def report(client: Client, pod: Obj, ip: str, ready: bool = True, run: bool = True) -> None:
    """What a kubelet reports: Running and the Ready condition (with ``run``), then the podIP."""
    if run:
        await mark_running(client, pod, ready=ready)
    meta = pod["metadata"]
    await client.patch(client.kind("v1", "Pod"), meta["name"], {"status": {"podIP": ip, "podIPs": [{"ip": ip}]}},
                       meta["namespace"], subresource="status")


def pod(name: str, port: int = 8080, app: str = "web", **spec: Any) -> Obj:
    return {"metadata": {"name": name, "labels": {"app": app}},
            "spec": {"containers": [{"name": "main", "image": "minik8s/busybox",
                                     "ports": [{"name": "http", "containerPort": port}]}], **spec}}


async def slices(client: Client, ns: str, service: str = "web") -> list[Obj]:
    listed = await client.list(client.kind(*SLICE), ns, label_selector=f"kubernetes.io/service-name={service}")
    return sorted(listed.get("items") or [], key=lambda s: s["metadata"]["name"])


def by_ip(items: list[Obj]) -> dict[str, Obj]:
    return {e["addresses"][0]: e for s in items for e in s.get("endpoints") or []}


async def test_slices_follow_pods_readiness_termination_and_the_service(client: Client, namespace: str) -> None:
    pod_rt, svc_rt = client.kind("v1", "Pod"), client.kind("v1", "Service")
    async with controller_manager(client, namespace, ["endpointslice"]):
        svc = await client.create(svc_rt, {"metadata": {"name": "web", "labels": {"tier": "front"}}, "spec": {
            "selector": {"app": "web"}, "ports": [{"name": "http", "port": 80, "targetPort": "http"}]}}, namespace)

        async def placeholder() -> bool:
            items = await slices(client, namespace)
            return len(items) == 1 and not items[0].get("endpoints") and not items[0].get("ports")

        await wait_for(placeholder, what="an empty placeholder slice for the new Service")
        meta = (await slices(client, namespace))[0]["metadata"]
        assert meta["name"].startswith("web-") and meta["generateName"] == "web-"
        assert meta["labels"] == {"tier": "front", "kubernetes.io/service-name": "web",
                                  "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"}
        assert meta["ownerReferences"] == [{"apiVersion": "v1", "kind": "Service", "name": "web",
                                            "uid": svc["metadata"]["uid"], "controller": True,
                                            "blockOwnerDeletion": True}]

        a = await client.create(pod_rt, pod("a"), namespace)
        b = await client.create(pod_rt, pod("b"), namespace)
        await report(client, a, "10.244.210.2")
        await report(client, b, "10.244.210.3", ready=False)

        async def conditions(want: dict[str, tuple[bool, bool, bool]]) -> bool:
            items = await slices(client, namespace)
            got = {ip: (e["conditions"]["ready"], e["conditions"]["serving"], e["conditions"]["terminating"])
                   for ip, e in by_ip(items).items()}
            return len(items) == 1 and got == want

        await wait_for(lambda: conditions({"10.244.210.2": (True, True, False), "10.244.210.3": (False, False, False)}),
                       what="a ready, b not ready, in the one slice")
        one = (await slices(client, namespace))[0]
        assert one["addressType"] == "IPv4" and one["metadata"]["name"] == meta["name"]  # the placeholder, filled
        assert one["ports"] == [{"name": "http", "protocol": "TCP", "port": 8080}]
        endpoint = by_ip([one])["10.244.210.2"]
        assert endpoint["nodeName"] == "node-1" and endpoint["targetRef"] == {
            "kind": "Pod", "namespace": namespace, "name": "a", "uid": a["metadata"]["uid"]}

        await client.delete(pod_rt, "a", namespace)  # bound: graceful, terminating first
        await wait_for(lambda: conditions({"10.244.210.2": (False, True, True), "10.244.210.3": (False, False, False)}),
                       what="a terminating but still serving")
        await finish_deletion(client, await client.get(pod_rt, "a", namespace))
        await wait_for(lambda: conditions({"10.244.210.3": (False, False, False)}), what="a gone")

        # a slice edited by someone else is put back
        one = (await slices(client, namespace))[0]
        one["endpoints"] = []
        await client.update(client.kind(*SLICE), one)
        await wait_for(lambda: conditions({"10.244.210.3": (False, False, False)}), what="the edit undone")

        await client.delete(svc_rt, "web", namespace)
        await wait_for(lambda: _none(client, namespace), what="slices deleted with the Service")


async def _none(client: Client, ns: str, service: str = "web") -> bool:
    return not await slices(client, ns, service)


async def _create_and_report(client: Client, ns: str, body: Obj, ip: str, sem: asyncio.Semaphore) -> None:
    async with sem:
        made = await client.create(client.kind("v1", "Pod"), body, ns)
        await report(client, made, ip, run=False)


async def test_over_100_endpoints_split_and_named_ports_group_and_headless_hostnames(
        client: Client, namespace: str) -> None:
    sem = asyncio.Semaphore(8)
    bodies = [(pod(f"p{i}"), f"10.244.211.{i + 2}") for i in range(103)]
    # two pods name their "http" port 9090: they get a slice of their own
    bodies += [(pod(f"q{i}", port=9090), f"10.244.212.{i + 2}") for i in range(2)]
    # a headless Service's pod with hostname + subdomain
    bodies.append((pod("h", app="db", hostname="db-0", subdomain="db"), "10.244.213.2"))
    await asyncio.gather(*(_create_and_report(client, namespace, b, ip, sem) for b, ip in bodies))
    svc_rt = client.kind("v1", "Service")
    await client.create(svc_rt, {"metadata": {"name": "web"}, "spec": {
        "selector": {"app": "web"}, "ports": [{"name": "http", "port": 80, "targetPort": "http"}]}}, namespace)
    await client.create(svc_rt, {"metadata": {"name": "db"}, "spec": {
        "clusterIP": "None", "selector": {"app": "db"}, "ports": [{"port": 5432}]}}, namespace)
    async with controller_manager(client, namespace, ["endpointslice"]):
        async def split() -> bool:
            items = await slices(client, namespace)
            sizes = sorted((s["ports"][0]["port"], len(s.get("endpoints") or [])) for s in items if s.get("ports"))
            return sizes == [(8080, 3), (8080, 100), (9090, 2)] and len(items) == 3

        await wait_for(split, timeout=60, what="105 endpoints in slices of 100 + 3 (8080) and 2 (9090)")
        assert len(by_ip(await slices(client, namespace))) == 105

        async def headless() -> bool:
            items = await slices(client, namespace, "db")
            return len(items) == 1 and [e.get("hostname") for e in items[0].get("endpoints") or []] == ["db-0"]

        await wait_for(headless, what="the headless Service's endpoint with its hostname")
        db = (await slices(client, namespace, "db"))[0]
        assert db["metadata"]["labels"]["service.kubernetes.io/headless"] == ""
        assert db["ports"] == [{"name": "", "protocol": "TCP", "port": 5432}]

        # 4 pods leave: the 100-endpoint slice shrinks in place, nothing moves between slices
        before = {s["metadata"]["name"]: s for s in await slices(client, namespace)}
        for i in range(4):
            await client.delete(client.kind("v1", "Pod"), f"p{i}", namespace)  # unbound: removed at once

        async def shrunk() -> bool:
            items = await slices(client, namespace)
            return sorted(len(s.get("endpoints") or []) for s in items) == [2, 3, 96]

        await wait_for(shrunk, timeout=30, what="the pods' endpoints removed")
        after = {s["metadata"]["name"]: s for s in await slices(client, namespace)}
        assert set(after) == set(before)
        rv = {n: s["metadata"]["resourceVersion"] for n, s in before.items()}
        changed = [n for n, s in after.items() if s["metadata"]["resourceVersion"] != rv[n]]
        assert changed == [n for n in before if len(before[n]["endpoints"]) == 100]


async def test_mirroring_copies_a_selectorless_services_endpoints(client: Client, namespace: str) -> None:
    svc_rt, ep_rt = client.kind("v1", "Service"), client.kind("v1", "Endpoints")
    await client.create(svc_rt, {"metadata": {"name": "ext"}, "spec": {"ports": [{"name": "pg", "port": 5432}]}},
                        namespace)
    endpoints = await client.create(ep_rt, {"metadata": {"name": "ext", "labels": {"team": "db"}}, "subsets": [{
        "addresses": [{"ip": "10.244.214.2", "hostname": "pg-0"}, {"ip": "127.0.0.1"}],
        "notReadyAddresses": [{"ip": "10.244.214.3"}],
        "ports": [{"name": "pg", "port": 5432, "protocol": "TCP"}]}]}, namespace)
    async with controller_manager(client, namespace, ["endpointslicemirroring"]):
        async def mirrored(want: dict[str, bool]) -> bool:
            items = await slices(client, namespace, "ext")
            return {ip: e["conditions"]["ready"] for ip, e in by_ip(items).items()} == want

        await wait_for(lambda: mirrored({"10.244.214.2": True, "10.244.214.3": False}),
                       what="the Endpoints mirrored, the loopback address left out")
        one = (await slices(client, namespace, "ext"))[0]
        assert one["metadata"]["labels"] == {"team": "db", "kubernetes.io/service-name": "ext",
                                             "endpointslice.kubernetes.io/managed-by":
                                                 "endpointslicemirroring-controller.k8s.io"}
        assert one["metadata"]["ownerReferences"][0]["kind"] == "Endpoints"
        assert one["metadata"]["ownerReferences"][0]["uid"] == endpoints["metadata"]["uid"]
        assert by_ip([one])["10.244.214.2"]["hostname"] == "pg-0"
        assert one["ports"] == [{"name": "pg", "protocol": "TCP", "port": 5432}]

        endpoints["subsets"][0]["addresses"] = [{"ip": "10.244.214.4"}]
        await client.update(ep_rt, endpoints)
        await wait_for(lambda: mirrored({"10.244.214.4": True, "10.244.214.3": False}), what="the update mirrored")
        await client.delete(ep_rt, "ext", namespace)
        await wait_for(lambda: _none(client, namespace, "ext"), what="mirrored slices deleted with the Endpoints")


def _read_with_the_official_client(url: str, namespace: str) -> list[Any]:
    cfg = k8s.Configuration()
    cfg.host = url
    api = k8s.DiscoveryV1Api(k8s.ApiClient(cfg))
    listed = api.list_namespaced_endpoint_slice(namespace, label_selector="kubernetes.io/service-name=web")
    name = str(getattr(listed.items[0].metadata, "name", ""))
    one = api.read_namespaced_endpoint_slice(name, namespace)
    return [one, listed]


async def test_the_official_client_reads_the_controllers_slices(client: Client, namespace: str,
                                                                 apiserver: APIServer) -> None:
    async with controller_manager(client, namespace, ["endpointslice"]):
        await client.create(client.kind("v1", "Service"), {"metadata": {"name": "web"}, "spec": {
            "selector": {"app": "web"}, "ports": [{"name": "http", "port": 80, "targetPort": "http"}]}}, namespace)
        made = await client.create(client.kind("v1", "Pod"), pod("a"), namespace)
        await report(client, made, "10.244.215.2")
        await wait_for(lambda: _has(client, namespace, "10.244.215.2"), what="the pod's endpoint")
    one, listed = await asyncio.to_thread(_read_with_the_official_client, apiserver.url, namespace)
    assert one.address_type == "IPv4" and one.endpoints[0].addresses == ["10.244.215.2"]
    assert one.endpoints[0].conditions.ready is True and one.endpoints[0].target_ref.name == "a"
    assert one.ports[0].port == 8080 and one.ports[0].name == "http"
    assert [s.metadata.name for s in listed.items] == [one.metadata.name]


async def _has(client: Client, ns: str, ip: str) -> bool:
    return ip in by_ip(await slices(client, ns))


async def test_invalid_slices_are_refused_with_kubernetes_messages(client: Client, namespace: str) -> None:
    rt = client.kind(*SLICE)
    body = {"metadata": {"name": "bad"}, "addressType": "IPv4",
            "endpoints": [{"addresses": ["127.0.0.1"]}, {"addresses": []}],
            "ports": [{"name": "a", "port": 1}, {"name": "a", "port": 2, "protocol": "ICMP"}]}
    try:
        await client.create(rt, body, namespace)
    except errors.Invalid as exc:
        message = exc.message
    else:
        raise AssertionError("created")
    assert message == (
        'EndpointSlice.discovery.k8s.io "bad" is invalid: ['
        'endpoints[0].addresses[0]: Invalid value: "127.0.0.1": may not be in the loopback range '
        '(127.0.0.0/8, ::1/128), endpoints[1].addresses: Required value: must contain at least 1 address, '
        'ports[1].name: Duplicate value: "a", ports[1].protocol: Unsupported value: "ICMP": supported values: '
        '"SCTP", "TCP", "UDP"]'), message
    good = await client.create(rt, {"metadata": {"name": "ok"}, "addressType": "IPv4",
                                    "ports": [{"port": 80}]}, namespace)
    assert good["ports"] == [{"name": "", "protocol": "TCP", "port": 80}]
    good["addressType"] = "IPv6"
    try:
        await client.update(rt, good)
    except errors.Invalid as exc:
        assert 'addressType: Invalid value: "IPv6": field is immutable' in exc.message
    else:
        raise AssertionError("addressType changed")
