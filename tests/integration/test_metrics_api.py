"""The metrics API (``metrics.k8s.io/v1beta1``) served by the apiserver from a real kubelet's ``/stats/summary``.

This module's ``apiserver`` fixture overrides the session one with an apiserver that
scrapes every 2 s; the real kubelet process comes from ``tests/integration/conftest.py``'s
``kubelet`` fixture (which then runs against this apiserver).  A CPU-burning busybox pod
(limited to 200m) and an idle one run on Docker; their usage must show up in PodMetrics,
the node's in NodeMetrics, and ``kubectl top`` must print them.  An unreachable kubelet
(a Node and Lease pointing at a closed port on 127.0.0.1) must not disturb the others.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import httpx
import pytest

from minik8s.api.base import Obj
from minik8s.api.quantity import milli_value
from minik8s.client.rest import Client
from minik8s.kubectl import top
from minik8s.kubectl.session import GlobalOptions
from tests.support.kubelet import KubeletProcess, create_pod, pod_body, wait_phase
from tests.support.metrics import _micro_now, _now, start_apiserver
from tests.support.processes import APIServer, Etcd, free_port
from tests.support.waiting import wait_for

pytestmark = pytest.mark.docker

BUSYBOX = "minik8s/busybox:latest"
GROUP = "/apis/metrics.k8s.io/v1beta1"


@pytest.fixture(scope="module")
def apiserver(etcd: Etcd, tmp_path_factory: pytest.TempPathFactory) -> Iterator[APIServer]:
    server = start_apiserver(etcd, tmp_path_factory.mktemp("metrics-apiserver"), "2s")
    yield server
    server.stop()


async def get(api: APIServer, path: str, **params: str) -> httpx.Response:
    async with httpx.AsyncClient(base_url=api.url, timeout=10) as http:
        return await http.get(path, params=params)


def burner(name: str, node: str) -> Obj:
    body = pod_body(name, node, [{"name": "burn", "image": BUSYBOX, "command": ["sh", "-c", "while :; do :; done"],
                                  "resources": {"limits": {"cpu": "200m", "memory": "32Mi"}}}])
    body["metadata"]["labels"] = {"app": "burn"}
    return body


def idler(name: str, node: str) -> Obj:
    body = pod_body(name, node, [{"name": "idle", "image": BUSYBOX, "command": ["sleep", "3600"],
                                  "resources": {"requests": {"cpu": "50m"}}}])
    body["metadata"]["labels"] = {"app": "idle"}
    return body


def cpu_milli(item: Obj) -> int:
    return sum(milli_value(c["usage"]["cpu"]) for c in item["containers"])


async def test_pod_and_node_metrics_from_a_real_kubelet(kubelet: KubeletProcess, apiserver: APIServer,  # noqa: F811
                                                       client: Client, namespace: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    discovery = (await get(apiserver, GROUP)).json()
    assert [(r["name"], r["verbs"]) for r in discovery["resources"]] == [("pods", ["get", "list"]),
                                                                         ("nodes", ["get", "list"])]
    await create_pod(client, namespace, burner("burn", kubelet.node))
    await create_pod(client, namespace, idler("idle", kubelet.node))
    for name in ("burn", "idle"):
        await wait_phase(client, namespace, name, "Running", 60)

    async def both_listed() -> list[Obj] | None:
        resp = await get(apiserver, f"{GROUP}/namespaces/{namespace}/pods")
        items = resp.json()["items"]
        by_name = {i["metadata"]["name"]: i for i in items}
        if set(by_name) == {"burn", "idle"} and cpu_milli(by_name["burn"]) > 100:
            return items
        return None

    items = await wait_for(both_listed, 40, what="PodMetrics of both pods with the burner busy")
    burn = next(i for i in items if i["metadata"]["name"] == "burn")
    idle = next(i for i in items if i["metadata"]["name"] == "idle")
    assert burn["kind"] == "PodMetrics" and burn["apiVersion"] == "metrics.k8s.io/v1beta1"
    assert burn["metadata"]["labels"] == {"app": "burn"} and burn["window"].endswith("s")
    assert [c["name"] for c in burn["containers"]] == ["burn"]
    assert 100 < cpu_milli(burn) <= 260, burn  # the CFS quota holds it near 200m
    assert cpu_milli(idle) < 30, idle
    assert milli_value(burn["containers"][0]["usage"]["memory"]) > 0

    selected = (await get(apiserver, f"{GROUP}/namespaces/{namespace}/pods", labelSelector="app=burn")).json()
    assert [i["metadata"]["name"] for i in selected["items"]] == ["burn"]
    everywhere = (await get(apiserver, f"{GROUP}/pods")).json()
    assert {"burn", "idle"} <= {i["metadata"]["name"] for i in everywhere["items"]}
    one = await get(apiserver, f"{GROUP}/namespaces/{namespace}/pods/idle")
    assert one.status_code == 200 and one.json()["metadata"]["name"] == "idle"
    missing = await get(apiserver, f"{GROUP}/namespaces/{namespace}/pods/nope")
    assert missing.status_code == 404
    assert missing.json()["reason"] == "NotFound"
    assert missing.json()["message"] == f'podmetrics.metrics.k8s.io "{namespace}/nope" not found'

    node = (await get(apiserver, f"{GROUP}/nodes/{kubelet.node}")).json()
    assert node["kind"] == "NodeMetrics" and milli_value(node["usage"]["cpu"]) > 100
    assert milli_value(node["usage"]["memory"]) > 0
    assert (await get(apiserver, f"{GROUP}/nodes/nope")).status_code == 404

    async with httpx.AsyncClient(base_url=apiserver.url, timeout=10) as http:
        assert (await http.post(f"{GROUP}/namespaces/{namespace}/pods", json={})).status_code == 405
        assert (await http.get(f"{GROUP}/pods", params={"watch": "true"})).status_code == 405

    opts = GlobalOptions(server=apiserver.url, namespace=namespace)
    assert await top.run_top_pod(opts, None, False, "", "", False, "cpu", False) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["NAME", "CPU(cores)", "MEMORY(bytes)"]
    assert lines[1].split()[0] == "burn" and lines[1].split()[1].endswith("m")
    assert await top.run_top_node(opts, kubelet.node, "", "", True) == 0
    row = capsys.readouterr().out.split()
    assert row[0] == kubelet.node and row[2].endswith("%") and row[3].endswith("Mi")

    await client.delete(client.kind("v1", "Pod"), "burn", namespace, grace_period_seconds=0)

    async def gone() -> bool:
        return (await get(apiserver, f"{GROUP}/namespaces/{namespace}/pods/burn")).status_code == 404

    await wait_for(gone, 20, what="the deleted pod's metrics to go")


async def test_an_unreachable_kubelet_does_not_disturb_the_others(kubelet: KubeletProcess,  # noqa: F811
                                                                  apiserver: APIServer, client: Client,
                                                                  namespace: str) -> None:
    ghost = f"ghost-{os.urandom(3).hex()}"
    node_rt, lease_rt = client.kind("v1", "Node"), client.kind("coordination.k8s.io/v1", "Lease")
    created = await client.create(node_rt, {"metadata": {"name": ghost}})
    created["status"] = {"conditions": [{"type": "Ready", "status": "True", "lastHeartbeatTime": _now()}],
                         "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}],
                         "daemonEndpoints": {"kubeletEndpoint": {"Port": free_port()}}}  # nothing listens there
    await client.update_status(node_rt, created)
    await client.create(lease_rt, {"metadata": {"name": ghost}, "spec": {
        "holderIdentity": ghost, "leaseDurationSeconds": 40, "renewTime": _micro_now()}}, "kube-node-lease")
    try:
        await create_pod(client, namespace, idler("still", kubelet.node))
        await wait_phase(client, namespace, "still", "Running", 60)

        async def served() -> bool:
            return (await get(apiserver, f"{GROUP}/namespaces/{namespace}/pods/still")).status_code == 200

        await wait_for(served, 30, what="metrics of a pod on the healthy node")
        assert (await get(apiserver, f"{GROUP}/nodes/{ghost}")).status_code == 404
        nodes = (await get(apiserver, f"{GROUP}/nodes")).json()["items"]
        assert kubelet.node in {n["metadata"]["name"] for n in nodes}
        assert "unreachable" in apiserver.log_path.read_text()
    finally:
        await client.delete(lease_rt, ghost, "kube-node-lease")
        await client.delete(node_rt, ghost)
