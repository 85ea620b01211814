"""High availability: leader election, several apiservers over one etcd, client failover.

Real processes throughout: one etcd, two apiservers over it (advertising TEST-NET addresses that
are only written as data), two ``minik8s scheduler`` and two ``minik8s controller-manager``
processes whose kubeconfig names both apiservers.  Leases are short (3 s / 2 s / 0.5 s) so
takeovers take seconds; the module runs in well under a minute.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.client.kubeconfig import ClientConfig, render
from minik8s.client.leaderelection import LeaderElectionConfig, LeaderElector, holder, run_elected
from minik8s.client.rest import Client
from minik8s.cluster.processes import wait_http
from tests.support.controllers import replicaset
from tests.support.processes import ROOT, APIServer, Etcd, running_apiserver, running_etcd, stop_process
from tests.support.waiting import wait_for

ADDRESSES = ("192.0.2.11", "192.0.2.12")  # TEST-NET-1: published in the Endpoints, never dialled
LEASE_FLAGS = ["--leader-elect-lease-duration", "3s", "--leader-elect-renew-deadline", "2s",
               "--leader-elect-retry-period", "0.5s"]
LEASE_DURATION = 3.0


@dataclass
class HA:
    etcd: Etcd
    apiservers: list[APIServer]
    kubeconfig: Path
    workdir: Path
    node: str


@pytest.fixture(scope="module")
def ha(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HA]:
    workdir = tmp_path_factory.mktemp("ha")
    with contextlib.ExitStack() as stack:
        etcd = stack.enter_context(running_etcd(workdir))
        servers = [stack.enter_context(running_apiserver(etcd, workdir, extra=[
            "--advertise-address", ip, "--endpoint-reconciler-ttl", "3s", "--endpoint-reconciler-interval", "0.5s"]))
            for ip in ADDRESSES]
        kubeconfig = workdir / "kubeconfig"
        kubeconfig.write_text(render(servers[0].url, fallback_servers=[servers[1].url]))
        yield HA(etcd, servers, kubeconfig, workdir, "ha-node")


@pytest.fixture
async def ha_client(ha: HA) -> AsyncIterator[Client]:
    async with Client.from_kubeconfig(str(ha.kubeconfig), retries=2, backoff=0.1) as client:
        node_rt = client.kind("v1", "Node")
        try:
            await client.get(node_rt, ha.node)
        except errors.NotFound:
            status = {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                      "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                      "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}
            created = await client.create(node_rt, {"apiVersion": "v1", "kind": "Node",
                                                    "metadata": {"name": ha.node}, "status": status})
            if (created.get("status") or {}).get("allocatable") != status["allocatable"]:
                created["status"] = status
                await client.update_status(node_rt, created)
        yield client


@pytest.fixture
async def ns(ha_client: Client) -> AsyncIterator[str]:
    name = f"ha-{os.urandom(3).hex()}"
    await ha_client.create(ha_client.kind("v1", "Namespace"), {"metadata": {"name": name}})
    yield name


class Candidate:
    """One ``minik8s scheduler`` or ``controller-manager`` process and its log."""

    def __init__(self, ha: HA, component: str, index: int, *args: str) -> None:
        self.log_path = ha.workdir / f"{component}-{index}-{os.urandom(2).hex()}.log"
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen([sys.executable, "-m", "minik8s", component, "--kubeconfig",
                                          str(ha.kubeconfig), *LEASE_FLAGS, *args],
                                         stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)

    def identity(self) -> str | None:
        """The holder identity it campaigns as (from its log), once it logged it."""
        m = re.search(r"leader election on lease \S+ as (\S+)", self.log_path.read_text())
        return m.group(1) if m else None

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(15)
        except subprocess.TimeoutExpired:
            stop_process(self.proc)
            return -9


async def _lease(client: Client, name: str) -> Obj:
    return await client.get(client.kind("coordination.k8s.io/v1", "Lease"), name, "kube-system")


async def _leader(client: Client, name: str, candidates: list[Candidate]) -> Candidate | None:
    current = holder(await _lease(client, name))
    return next((c for c in candidates if current and c.identity() == current), None)


def _pod(name: str, scheduler: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"schedulerName": scheduler,
                     "containers": [{"name": "main", "image": "minik8s/busybox", "command": ["sleep", "1"]}]}}


async def _bound(client: Client, ns: str, name: str) -> str | None:
    pod = await client.get(client.kind("v1", "Pod"), name, ns)
    return (pod.get("spec") or {}).get("nodeName")


# ---------------------------------------------------------------------------- in-process elector


async def test_one_elector_leads_and_release_hands_over_at_once(ha_client: Client, ns: str) -> None:
    config = LeaderElectionConfig(namespace=ns, name="demo", lease_duration=3, renew_deadline=2, retry_period=0.25)
    electors = [LeaderElector(ha_client, config) for _ in range(2)]
    leading: list[int] = []
    gate = [asyncio.Event(), asyncio.Event()]

    def lead(i: int) -> Any:
        async def work() -> None:
            leading.append(i)
            await gate[i].wait()
        return work

    tasks = [asyncio.get_running_loop().create_task(e.run(lead(i))) for i, e in enumerate(electors)]
    try:
        await wait_for(lambda: leading, what="a leader")
        first = leading[0]
        lease = await _lease_in(ha_client, ns, "demo")
        assert lease["spec"]["holderIdentity"] == electors[first].identity
        assert lease["spec"]["leaseDurationSeconds"] == 3 and lease["spec"]["leaseTransitions"] == 0
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", lease["spec"]["renewTime"])
        assert electors[first].is_leader() and not electors[1 - first].is_leader()
        # renewals keep it: the follower does not take over while the leader renews
        renewed = lease["spec"]["renewTime"]
        await wait_for(lambda: _renewed_after(ha_client, ns, renewed), what="a renewal")
        assert leading == [first]
        # a clean stop releases the lease: the follower takes it at its next retry, not a lease later
        tasks[first].cancel()
        started = time.monotonic()
        await wait_for(lambda: len(leading) == 2, timeout=LEASE_DURATION, what="the takeover")
        assert time.monotonic() - started < 2.0
        lease = await _lease_in(ha_client, ns, "demo")
        assert lease["spec"]["holderIdentity"] == electors[1 - first].identity
        assert lease["spec"]["leaseTransitions"] == 1
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def test_election_renews_while_the_components_client_is_saturated(ha_client: Client, ns: str) -> None:
    """The election has a client of its own: a component whose own client has every request slot
    taken (a burst of thousands of writes queued behind them) still acquires and renews."""
    config = LeaderElectionConfig(namespace=ns, name="demo", lease_duration=3, renew_deadline=2, retry_period=0.25)
    async with Client(ha_client.config, max_inflight=1) as busy:
        await busy._inflight.acquire()  # the one request slot stays taken for the whole test
        leading = asyncio.Event()

        async def lead() -> None:
            leading.set()
            await asyncio.Event().wait()

        task = asyncio.get_running_loop().create_task(run_elected(busy, config, lead, "test"))
        try:
            await asyncio.wait_for(leading.wait(), 10)
            renewed = (await _lease_in(ha_client, ns, "demo"))["spec"]["renewTime"]
            await wait_for(lambda: _renewed_after(ha_client, ns, renewed), what="a renewal")
            assert not task.done()
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


async def _lease_in(client: Client, ns: str, name: str) -> Obj:
    return await client.get(client.kind("coordination.k8s.io/v1", "Lease"), name, ns)


async def _renewed_after(client: Client, ns: str, when: str) -> bool:
    return str((await _lease_in(client, ns, "demo"))["spec"]["renewTime"]) > when


# ---------------------------------------------------------------------------- scheduler processes


async def test_two_schedulers_one_leader_and_takeover(ha: HA, ha_client: Client, ns: str) -> None:
    name = f"ha-sched-{os.urandom(2).hex()}"
    flags = ["--scheduler-name", name, "--leader-elect-resource-name", name]
    candidates = [Candidate(ha, "scheduler", i, *flags) for i in range(2)]
    pod_rt = ha_client.kind("v1", "Pod")
    try:
        leader = await wait_for(lambda: _leader(ha_client, name, candidates), what="a leader")
        await ha_client.create(pod_rt, _pod("first", name), ns)
        assert await wait_for(lambda: _bound(ha_client, ns, "first"), what="first bound") == ha.node
        follower = next(c for c in candidates if c is not leader)
        assert "successfully acquired lease" not in follower.log_path.read_text()
        assert "bound pod=" not in follower.log_path.read_text()

        # a clean stop (SIGTERM) releases the lease: the follower leads within about a retry period
        assert leader.stop() == 0
        started = time.monotonic()
        await wait_for(lambda: _leader(ha_client, name, [follower]), timeout=LEASE_DURATION, what="takeover")
        released_takeover = time.monotonic() - started
        await ha_client.create(pod_rt, _pod("second", name), ns)
        assert await wait_for(lambda: _bound(ha_client, ns, "second"), what="second bound") == ha.node

        # the stopped one comes back as a follower; then the leader is killed outright
        candidates.append(Candidate(ha, "scheduler", 2, *flags))
        await wait_for(lambda: candidates[2].identity(), what="the new candidate campaigning")
        assert follower.stop(signal.SIGKILL) == -signal.SIGKILL
        await ha_client.create(pod_rt, _pod("third", name), ns)
        started = time.monotonic()
        assert await wait_for(lambda: _bound(ha_client, ns, "third"), timeout=LEASE_DURATION + 5,
                              what="third bound by the new leader") == ha.node
        killed_takeover = time.monotonic() - started
        lease = await _lease(ha_client, name)
        assert lease["spec"]["holderIdentity"] == candidates[2].identity()
        assert lease["spec"]["leaseTransitions"] == 2
        # within the lease duration (plus the jittered retry and the binding)
        assert killed_takeover < LEASE_DURATION + 2.5, killed_takeover
        assert released_takeover < 2.0, released_takeover
        print(f"takeover after release {released_takeover:.2f}s, after SIGKILL {killed_takeover:.2f}s")
    finally:
        for c in candidates:
            c.stop()


# ---------------------------------------------------------------------------- controller-manager processes


async def test_two_controller_managers_replace_a_pod_once_after_the_leader_dies(ha: HA, ha_client: Client,
                                                                                ns: str) -> None:
    name = f"ha-cm-{os.urandom(2).hex()}"
    flags = ["--controllers", "replicaset", "--concurrent-workers", "2", "--leader-elect-resource-name", name]
    candidates = [Candidate(ha, "controller-manager", i, *flags) for i in range(2)]
    rs_rt, pod_rt = ha_client.kind("apps/v1", "ReplicaSet"), ha_client.kind("v1", "Pod")
    created: set[str] = set()

    async def pods() -> list[Obj]:
        items = (await ha_client.list(pod_rt, ns))["items"]
        created.update(p["metadata"]["uid"] for p in items)
        return [p for p in items if not p["metadata"].get("deletionTimestamp")]

    async def settled(n: int) -> bool:
        rs = await ha_client.get(rs_rt, "web", ns)
        status = rs.get("status") or {}
        return len(await pods()) == n and status.get("replicas") == n \
            and status.get("observedGeneration") == rs["metadata"]["generation"]

    try:
        leader = await wait_for(lambda: _leader(ha_client, name, candidates), what="a leader")
        await ha_client.create(rs_rt, replicaset("web", 2, {"app": "web"}), ns)
        await wait_for(lambda: settled(2), timeout=20, what="2 pods")
        assert len(created) == 2
        assert leader.stop(signal.SIGKILL) == -signal.SIGKILL
        victim = (await pods())[0]["metadata"]["name"]
        await ha_client.delete(pod_rt, victim, ns, grace_period_seconds=0)
        await wait_for(lambda: settled(2), timeout=LEASE_DURATION + 15, what="the replacement")
        follower = next(c for c in candidates if c is not leader)
        assert holder(await _lease(ha_client, name)) == follower.identity()
        # exactly one replacement: three pods were ever created, two exist
        await wait_for(lambda: settled(2), what="still 2 pods")
        assert len(created) == 3 and len(await pods()) == 2
    finally:
        for c in candidates:
            c.stop()


# ---------------------------------------------------------------------------- apiservers


async def _endpoint_ips(client: Client) -> list[str]:
    ep = await client.get(client.kind("v1", "Endpoints"), "kubernetes", "default")
    return [a["ip"] for s in ep.get("subsets") or [] for a in s.get("addresses") or []]


async def test_kubernetes_endpoints_follow_the_live_apiservers_and_clients_fail_over(ha: HA,
                                                                                     ha_client: Client) -> None:
    first, second = ha.apiservers
    await wait_for(lambda: _eq(_endpoint_ips(ha_client), list(ADDRESSES)), what="both apiservers listed")
    leases = await ha_client.list(ha_client.kind("coordination.k8s.io/v1", "Lease"), "kube-system",
                                  label_selector="minik8s.io/apiserver-endpoint=true")
    assert sorted(holder(lease) for lease in leases["items"]) == list(ADDRESSES)

    # a clean stop takes the address out at once
    second.stop()
    assert await _endpoint_ips(ha_client) == [ADDRESSES[0]]
    second.start(wait=False)
    wait_http(f"{second.url}/readyz")
    await wait_for(lambda: _eq(_endpoint_ips(ha_client), list(ADDRESSES)), what="the second back")

    # killed outright: gone once its lease expired
    assert second.proc is not None
    second.proc.kill()
    second.proc.wait()
    started = time.monotonic()
    await wait_for(lambda: _eq(_endpoint_ips(ha_client), [ADDRESSES[0]]), timeout=10, what="the dead one dropped")
    assert time.monotonic() - started < 3.0 + 1.5  # TTL + a reconcile interval and some slack
    second.start(wait=False)
    wait_http(f"{second.url}/readyz")

    # the first apiserver goes away: a client naming both keeps working on the second
    async with Client(ClientConfig(server=first.url, fallback_servers=[second.url]), retries=1) as client:
        await client.get(client.kind("v1", "Namespace"), "default")
        first.stop()
        try:
            await client.get(client.kind("v1", "Namespace"), "default")
            assert client.server == second.url
            await client.create(client.kind("v1", "ConfigMap"), {"metadata": {"name": "after-failover"}},
                                "default")
            async for event in client.watch(client.kind("v1", "ConfigMap"), "default", timeout_seconds=10):
                if event["type"] == "ADDED" and event["object"]["metadata"]["name"] == "after-failover":
                    break
            else:
                pytest.fail("the watch through the second apiserver did not show the ConfigMap")
        finally:
            first.start(wait=False)
            wait_http(f"{first.url}/readyz")


async def _eq(value: Any, expected: Any) -> bool:
    return bool(await value == expected)
