"""The proxy's sync loop in-process against the real apiserver, with a recording backend (no kernel).

Checks the kube-proxy loop contract: handlers only mark dirty, bursts of changes are
coalesced, two syncs start at least ``min_sync_period`` apart, a full resync comes every
``sync_period``, and a failing backend is retried without losing the desired state.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from minik8s.client.rest import Client
from minik8s.host.errors import CommandFailed
from minik8s.proxy.config import ProxyConfig
from minik8s.proxy.iptables import SyncResult
from minik8s.proxy.proxier import Proxier
from minik8s.proxy.servicemap import Endpoint, ProxyState, ServicePortName
from tests.support.waiting import wait_for


class RecordingBackend:
    mode = "recording"

    def __init__(self) -> None:
        self.calls: list[tuple[float, bool, ProxyState]] = []
        self.fail_next = 0

    def sync(self, state: ProxyState, force: bool = False) -> SyncResult:
        self.calls.append((time.monotonic(), force, state))
        if self.fail_next:
            self.fail_next -= 1
            raise CommandFailed(["iptables-restore"], 1, "simulated failure")
        return SyncResult(changed=True)

    def cleanup(self) -> int:
        return 0


def endpoints_of(state: ProxyState, ns: str) -> tuple[Endpoint, ...] | None:
    return state.endpoints.get(ServicePortName(ns, "web", "http"))


async def test_loop_coalesces_rate_limits_resyncs_and_retries(client: Client, namespace: str) -> None:
    backend = RecordingBackend()
    cfg = ProxyConfig(chain_prefix="KTloop", sync_period=1.5, min_sync_period=0.2).validate()
    proxier = Proxier(client, backend, cfg, route=None)
    task = asyncio.create_task(proxier.run())
    try:
        await asyncio.wait_for(proxier.synced.wait(), 10)
        assert backend.calls[0][1] is True  # the first sync is a full one
        svc_rt, ep_rt = client.kind("v1", "Service"), client.kind("discovery.k8s.io/v1", "EndpointSlice")
        await client.create(svc_rt, {"metadata": {"name": "web"}, "spec": {
            "ports": [{"name": "http", "port": 80, "targetPort": 8080}]}}, namespace)
        ep = await client.create(ep_rt, {"metadata": {"name": "web", "labels": {"kubernetes.io/service-name": "web"}},
                                         "addressType": "IPv4", "ports": [{"name": "http", "port": 8080}]},
                                 namespace)
        before = len(backend.calls)
        for i in range(2, 12):  # a burst of 10 changes
            ep["endpoints"] = [{"addresses": [f"10.244.9.{i}"]}]
            ep = await client.update(ep_rt, ep)
        want = (Endpoint("10.244.9.11", 8080),)
        await wait_for(lambda: bool(backend.calls) and endpoints_of(backend.calls[-1][2], namespace) == want)
        burst = backend.calls[before:]
        assert len(burst) < 10, len(burst)  # coalesced
        starts = [c[0] for c in backend.calls]
        assert all(b - a >= 0.19 for a, b in zip(starts, starts[1:], strict=False)), starts

        # nothing changes: a forced full resync still comes every sync_period
        n = len(backend.calls)
        await asyncio.sleep(cfg.sync_period + 0.4)
        assert any(force for _, force, _ in backend.calls[n:])

        # a failing backend: retried (as a full sync) until it works, with the latest state
        backend.fail_next = 2
        ep["endpoints"] = [{"addresses": ["10.244.9.99"]}]
        await client.update(ep_rt, ep)
        latest = (Endpoint("10.244.9.99", 8080),)
        await wait_for(lambda: proxier.failures == 2 and proxier.state is not None
                         and endpoints_of(proxier.state, namespace) == latest)
        assert backend.fail_next == 0 and backend.calls[-1][1] is True  # the retry was a full sync
        assert endpoints_of(backend.calls[-1][2], namespace) == latest
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
