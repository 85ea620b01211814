"""The HorizontalPodAutoscaler controller against a real apiserver, etcd and metrics API.

The metrics come from :class:`~tests.support.metrics.SummaryStandIn` (a
stand-in kubelet stats endpoint whose per-app usage the test sets), scraped by the
apiserver every second; pods are bound and reported Running by
:class:`~tests.support.controllers.SimulatedNode`; the ReplicaSet and
Deployment controllers run in-process.  The HPA controller syncs every second and scales
through the targets' ``scale`` subresource.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from minik8s.api.base import Obj
from minik8s.client.factory import SharedInformerFactory
from minik8s.client.rest import Client
from minik8s.controllers.podautoscaler import AutoscalerOptions, HorizontalPodAutoscalerController
from tests.support.controllers import SimulatedNode, controller_manager, deployment, events_for, replicaset
from tests.support.metrics import SummaryStandIn, start_apiserver
from tests.support.processes import APIServer, Etcd
from tests.support.waiting import wait_for

MIB = 1024 * 1024


@pytest.fixture(scope="module")
def apiserver(etcd: Etcd, tmp_path_factory: pytest.TempPathFactory) -> Iterator[APIServer]:
    server = start_apiserver(etcd, tmp_path_factory.mktemp("hpa-apiserver"), "1s")
    yield server
    server.stop()


@contextlib.asynccontextmanager
async def hpa_controller(client: Client, namespace: str) -> AsyncIterator[HorizontalPodAutoscalerController]:
    """The HPA controller in-process, informers limited to ``namespace``, syncing every second."""
    factory = SharedInformerFactory(client, namespace=namespace)
    controller = HorizontalPodAutoscalerController(client, factory, AutoscalerOptions(sync_period=1.0))
    factory.start()
    task = asyncio.get_running_loop().create_task(controller.run(2))
    try:
        yield controller
    finally:
        controller.shutdown()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await factory.shutdown()


def with_requests(obj: Obj, **requests: str) -> Obj:
    obj["spec"]["template"]["spec"]["containers"][0]["resources"] = {"requests": requests}
    return obj


def rules(window: int, value: int, period: int) -> Obj:
    return {"stabilizationWindowSeconds": window, "selectPolicy": "Max",
            "policies": [{"type": "Pods", "value": value, "periodSeconds": period}]}


def hpa(name: str, kind: str, low: int, high: int, metrics: list[Obj], behavior: Obj | None = None) -> Obj:
    spec: Obj = {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": kind, "name": name},
                 "minReplicas": low, "maxReplicas": high, "metrics": metrics}
    if behavior:
        spec["behavior"] = behavior
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": name},
            "spec": spec}


def utilization(resource: str, target: int) -> Obj:
    return {"type": "Resource", "resource": {"name": resource, "target": {"type": "Utilization",
                                                                           "averageUtilization": target}}}


PODS_METRIC = {"type": "Pods", "pods": {"metric": {"name": "requests_per_second"},
                                        "target": {"type": "AverageValue", "averageValue": "10"}}}


def container_average(container: str, resource: str, value: str) -> Obj:
    return {"type": "ContainerResource", "containerResource": {
        "name": resource, "container": container, "target": {"type": "AverageValue", "averageValue": value}}}


def average(resource: str, value: str) -> Obj:
    return {"type": "Resource", "resource": {"name": resource, "target": {"type": "AverageValue",
                                                                           "averageValue": value}}}


class ReplicaLog:
    """Polls a target's ``spec.replicas`` and keeps ``(monotonic time, replicas)`` of every change."""

    def __init__(self, client: Client, kind: str, name: str, namespace: str) -> None:
        self.client, self.rt, self.name, self.namespace = client, client.kind("apps/v1", kind), name, namespace
        self.changes: list[tuple[float, int]] = []
        self._task: asyncio.Task[None] | None = None

    async def _poll(self) -> None:
        while True:
            obj = await self.client.get(self.rt, self.name, self.namespace)
            replicas = obj["spec"]["replicas"]
            if not self.changes or self.changes[-1][1] != replicas:
                self.changes.append((time.monotonic(), replicas))
            await asyncio.sleep(0.1)

    def current(self) -> int:
        return self.changes[-1][1] if self.changes else -1

    def steps(self) -> list[tuple[float, int]]:
        """``(seconds since the previous change, replicas)`` of every change after the first."""
        return [(round(t - self.changes[i][0], 2), r) for i, (t, r) in enumerate(self.changes[1:])]

    async def __aenter__(self) -> ReplicaLog:
        self._task = asyncio.get_running_loop().create_task(self._poll())
        return self

    async def __aexit__(self, *exc: Any) -> None:
        assert self._task is not None
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)


async def hpa_status(client: Client, namespace: str, name: str) -> Obj:
    obj = await client.get(client.kind("autoscaling/v2", "HorizontalPodAutoscaler"), name, namespace)
    return obj.get("status") or {}


def condition(status: Obj, ctype: str) -> tuple[str, str, str]:
    c: Obj = next((c for c in status.get("conditions") or [] if c["type"] == ctype), {})
    return c.get("status", ""), c.get("reason", ""), c.get("message", "")


async def test_deployment_scales_up_and_down_by_the_behavior_policies(apiserver: APIServer, client: Client,
                                                                      namespace: str) -> None:
    dep = with_requests(deployment("web", 1, {"app": "web"}), cpu="100m", memory="64Mi")
    await client.create(client.kind("apps/v1", "Deployment"), dep, namespace)
    behavior = {"scaleUp": rules(0, 1, 3), "scaleDown": rules(3, 1, 3)}
    async with SummaryStandIn(client, apiserver.url) as node, SimulatedNode(client, namespace, node=node.name), \
            controller_manager(client, namespace, ["replicaset", "deployment"]), hpa_controller(client, namespace), \
            ReplicaLog(client, "Deployment", "web", namespace) as log:
        node.usage["web"] = (150, 8 * MIB)  # 150 % of the cpu request, 12 % of the memory request
        await client.create(client.kind("autoscaling/v2", "HorizontalPodAutoscaler"),
                            hpa("web", "Deployment", 1, 4, [utilization("cpu", 50), utilization("memory", 80)],
                                behavior), namespace)
        await wait_for(lambda: log.current() == 4, 40, 0.1, "the Deployment scaled up to maxReplicas")
        up = log.steps()
        status = await hpa_status(client, namespace, "web")
        node.usage["web"] = (10, 8 * MIB)
        await wait_for(lambda: log.current() == 1, 40, 0.1, "the Deployment scaled down to minReplicas")
        down = log.steps()[len(up):]

        async def settled() -> bool:  # status.currentReplicas is the size a sync started from: one more sync
            return (await hpa_status(client, namespace, "web")).get("currentReplicas") == 1

        await wait_for(settled, 10, 0.2, "status.currentReplicas 1")
    # one pod per step (Pods 1 per 3 s), each step at least one policy period after the previous one
    assert [r for _, r in up] == [2, 3, 4], up
    assert all(gap >= 2.9 for gap, _ in up[1:]), up
    assert [r for _, r in down] == [3, 2, 1], down
    assert all(gap >= 2.9 for gap, _ in down), down  # the first one waited for the 3 s stabilization window
    cpu = status["currentMetrics"][0]["resource"]
    assert cpu["name"] == "cpu" and cpu["current"]["averageUtilization"] >= 140
    assert status["currentMetrics"][1]["resource"]["current"]["averageUtilization"] == 12
    assert condition(status, "ScalingActive")[:2] == ("True", "ValidMetricFound")
    assert condition(status, "ScalingLimited")[:2] == ("True", "TooManyReplicas")
    messages = [e["message"] for e in await events_for(client, namespace, "web")
                if e.get("reason") == "SuccessfulRescale" and e["involvedObject"]["kind"] == "HorizontalPodAutoscaler"]
    assert "New size: 2; reason: cpu resource utilization (percentage of request) above target" in messages
    assert "New size: 1; reason: All metrics below target" in messages
    final = await hpa_status(client, namespace, "web")
    assert final["desiredReplicas"] == 1 and final.get("lastScaleTime")


async def test_replicaset_on_memory_with_a_failing_cpu_metric(apiserver: APIServer, client: Client,
                                                              namespace: str) -> None:
    rs = with_requests(replicaset("cache", 1, {"app": "cache"}), memory="64Mi")  # no cpu request
    await client.create(client.kind("apps/v1", "ReplicaSet"), rs, namespace)
    behavior = {"scaleUp": rules(0, 4, 15), "scaleDown": rules(0, 4, 15)}
    async with SummaryStandIn(client, apiserver.url) as node, SimulatedNode(client, namespace, node=node.name), \
            controller_manager(client, namespace, ["replicaset"]), hpa_controller(client, namespace), \
            ReplicaLog(client, "ReplicaSet", "cache", namespace) as log:
        node.usage["cache"] = (10, 100 * MIB)  # twice the 50Mi AverageValue target
        await client.create(client.kind("autoscaling/v2", "HorizontalPodAutoscaler"),
                            hpa("cache", "ReplicaSet", 1, 3, [utilization("cpu", 50), average("memory", "50Mi"),
                                                              PODS_METRIC, container_average("main", "memory", "50Mi")],
                                behavior), namespace)
        await wait_for(lambda: log.current() == 3, 30, 0.1, "the ReplicaSet scaled up on memory")
        status = await hpa_status(client, namespace, "cache")
        assert status["currentMetrics"][0] == {"type": ""}
        assert status["currentMetrics"][1]["resource"]["current"]["averageValue"] == str(100 * MIB)
        assert status["currentMetrics"][2] == {"type": ""}  # no custom metrics API: the Pods metric fails
        assert status["currentMetrics"][3] == {"type": "ContainerResource", "containerResource": {
            "name": "memory", "container": "main", "current": {"averageValue": str(100 * MIB)}}}
        node.usage["cache"] = (10, 10 * MIB)  # memory alone would scale down, but the cpu metric is broken

        async def refused() -> bool:
            st = await hpa_status(client, namespace, "cache")
            return condition(st, "ScalingActive")[:2] == ("False", "FailedGetResourceMetric")

        await wait_for(refused, 15, 0.2, "ScalingActive False while a metric fails on a scale-down")
        await asyncio.sleep(3)
        assert log.current() == 3
    message = condition(await hpa_status(client, namespace, "cache"), "ScalingActive")[2]
    assert message.startswith("the HPA was unable to compute the replica count: failed to get cpu utilization: "
                              "missing request for cpu in container main of Pod cache-")
    warnings = {e["reason"] for e in await events_for(client, namespace, "cache") if e["type"] == "Warning"}
    assert {"FailedGetResourceMetric", "FailedGetPodsMetric", "FailedComputeMetricsReplicas"} <= warnings


async def test_missing_target(apiserver: APIServer, client: Client, namespace: str) -> None:
    async with hpa_controller(client, namespace):
        await client.create(client.kind("autoscaling/v2", "HorizontalPodAutoscaler"),
                            hpa("nope", "Deployment", 1, 3, [utilization("cpu", 50)]), namespace)

        async def failed() -> bool:
            st = await hpa_status(client, namespace, "nope")
            return condition(st, "AbleToScale")[:2] == ("False", "FailedGetScale")

        await wait_for(failed, 10, 0.2, "AbleToScale False FailedGetScale")
    status = await hpa_status(client, namespace, "nope")
    assert condition(status, "AbleToScale")[2] == ("the HPA controller was unable to get the target's current "
                                                   'scale: deployments.apps "nope" not found')
