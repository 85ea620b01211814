"""The apiserver's write turns per priority level (minik8s.apiserver.inflight).

The middleware is driven over ASGI (httpx's ASGITransport) in front of a small ASGI app that
holds every workload write until the test lets it go: the turns and queues are what is tested.
"""

from __future__ import annotations

import asyncio

import httpx
import pytest
from starlette.types import Receive, Scope, Send

from minik8s.apiserver.inflight import MutatingInflight, priority_level

LEASES = "/apis/coordination.k8s.io/v1/namespaces"


@pytest.mark.parametrize(("path", "level"), [
    (f"{LEASES}/kube-system/leases/kube-scheduler", "leader-election"),
    (f"{LEASES}/kube-system/leases", "leader-election"),
    (f"{LEASES}/kube-node-lease/leases/node-1", "node-high"),
    ("/api/v1/nodes/node-1/status", "node-high"),
    ("/api/v1/nodes", "node-high"),
    ("/api/v1/nodesx", "workload"),
    (f"{LEASES}/default/leases/mine", "workload"),
    (f"{LEASES}/kube-systemx/leases/x", "workload"),
    ("/api/v1/namespaces/default/pods", "workload"),
])
def test_priority_level_by_path(path: str, level: str) -> None:
    assert priority_level(path) == level


class HeldApp:
    """Answers 200 at once, except workload writes, which wait for ``release``."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.held = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await receive()
        if scope["method"] != "GET" and priority_level(scope["path"]) == "workload":
            self.held += 1
            await self.release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


async def test_lease_and_node_writes_pass_a_full_workload_queue() -> None:
    app = HeldApp()
    middleware = MutatingInflight(app, limit=2, queue_length=3)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=middleware), base_url="http://api") as http:
        def write() -> asyncio.Task[httpx.Response]:
            return asyncio.create_task(http.post("/api/v1/namespaces/default/configmaps", content=b"{}"))

        writes = [write(), write()]  # they take the two turns
        while app.held < 2:
            await asyncio.sleep(0.01)
        writes += [write() for _ in range(3)]  # they fill the queue
        while middleware.levels["workload"].waiting < 3:
            await asyncio.sleep(0.01)
        refused = await http.post("/api/v1/namespaces/default/pods", content=b"{}")
        assert refused.status_code == 429 and refused.headers["retry-after"] == "1"
        for path in (f"{LEASES}/kube-system/leases/kube-controller-manager", f"{LEASES}/kube-node-lease/leases/n1",
                     "/api/v1/nodes/n1/status"):
            r = await asyncio.wait_for(http.put(path, content=b"{}"), 5)
            assert r.status_code == 200, path
        assert (await http.get("/api/v1/namespaces/default/pods")).status_code == 200  # reads never wait
        app.release.set()
        assert [r.status_code for r in await asyncio.gather(*writes)] == [200] * 5
    assert middleware.waiting == 0


async def test_each_level_has_its_own_turns() -> None:
    middleware = MutatingInflight(HeldApp(), limit=5)
    assert {name: level.limit for name, level in middleware.levels.items()} == \
        {"leader-election": 1, "node-high": 2, "workload": 5}
    assert MutatingInflight(HeldApp(), limit=1).levels["node-high"].limit == 1


def test_suggested_levels_share_the_write_turns() -> None:
    """With Kubernetes' suggested PriorityLevelConfigurations and the default limit (4), requests
    without credentials (``global-default``) keep the 4 turns every write had before the levels."""
    from minik8s.api import flowcontrol as fc
    from minik8s.apiserver.apf import concurrency_limits
    from minik8s.apiserver.inflight import TOTAL_PER_MUTATING

    levels = {o["metadata"]["name"]: o for o in fc.MANDATORY_PRIORITY_LEVELS + fc.SUGGESTED_PRIORITY_LEVELS}
    assert concurrency_limits(levels, 4 * TOTAL_PER_MUTATING) == {
        "catch-all": 1, "global-default": 4, "leader-election": 2, "node-high": 8, "system": 6,
        "workload-high": 8, "workload-low": 20}
