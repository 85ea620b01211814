"""PodDisruptionBudgets against the real apiserver and etcd: validation, the disruption controller's
status, the ``pods/eviction`` subresource, ``kubectl drain`` honouring a budget (minik8s' kubectl and
the official 1.32 and 1.37), and ``get``/``describe pdb`` against the official kubectl 1.32.

The controller-manager (ReplicaSet, Deployment and disruption controllers) runs in-process, limited
to the test's namespace; :class:`~tests.support.controllers.SimulatedNode` plays the scheduler and
kubelet through the API (bind, report Running/Ready, finish graceful deletions).
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx
import pytest

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.client.rest import Client
from tests.realkubectl import RealKubectl, find
from tests.support.controllers import SimulatedNode, controller_manager, deployment, is_ready, mark_running, pods
from tests.support.kubectl import Kubectl, Result
from tests.support.processes import ROOT, APIServer
from tests.support.waiting import wait_for

LABELS = {"app": "web"}
CONTROLLERS = ["replicaset", "deployment", "disruption"]
TOO_MANY = "Cannot evict pod as it would violate the pod's disruption budget."


def pdb(name: str, selector: Obj | None = None, **spec: object) -> Obj:
    body: Obj = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name},
                 "spec": dict(spec)}
    if selector is not None:
        body["spec"]["selector"] = selector
    return body


def eviction(name: str, namespace: str, **delete_options: object) -> Obj:
    body: Obj = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": namespace}}
    if delete_options:
        body["deleteOptions"] = dict(delete_options)
    return body


@pytest.fixture
async def http(apiserver: APIServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=apiserver.url, timeout=30) as h:
        yield h


async def _status(client: Client, namespace: str, name: str) -> Obj:
    got = await client.get(client.kind("policy/v1", "PodDisruptionBudget"), name, namespace)
    return dict(got.get("status") or {})


async def _status_is(client: Client, namespace: str, name: str, **want: object) -> bool:
    got = await client.get(client.kind("policy/v1", "PodDisruptionBudget"), name, namespace)
    status = got.get("status") or {}
    return status.get("observedGeneration") == got["metadata"]["generation"] and \
        all(status.get(k) == v for k, v in want.items())


async def _evict(http: httpx.AsyncClient, namespace: str, name: str, **delete_options: object) -> httpx.Response:
    return await http.post(f"/api/v1/namespaces/{namespace}/pods/{name}/eviction",
                           json=eviction(name, namespace, **delete_options))


# ---------------------------------------------------------------------------------- validation
async def test_validation(client: Client, namespace: str) -> None:
    rt = client.kind("policy/v1", "PodDisruptionBudget")
    sel = {"matchLabels": LABELS}
    with pytest.raises(errors.Invalid) as both:
        await client.create(rt, pdb("both", sel, minAvailable=1, maxUnavailable=1), namespace)
    assert "spec: Invalid value: policy.PodDisruptionBudgetSpec{" in both.value.message
    assert both.value.message.endswith(": minAvailable and maxUnavailable cannot be both set")
    with pytest.raises(errors.Invalid) as bad:
        await client.create(rt, pdb("bad", sel, minAvailable="150%", unhealthyPodEvictionPolicy="Never"), namespace)
    assert bad.value.message == (
        'PodDisruptionBudget.policy "bad" is invalid: [spec.minAvailable: Invalid value: "150%": must not be greater '
        'than 100%, spec.unhealthyPodEvictionPolicy: Unsupported value: "Never": supported values: '
        '"AlwaysAllow", "IfHealthyBudget"]')
    with pytest.raises(errors.Invalid):
        await client.create(rt, pdb("neg", sel, maxUnavailable=-1), namespace)
    made = await client.create(rt, pdb("ok", sel, maxUnavailable="25%", unhealthyPodEvictionPolicy="AlwaysAllow"),
                               namespace)
    assert made["status"] == {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}
    made["status"] = {"disruptionsAllowed": 5}
    made["spec"]["maxUnavailable"] = 2
    updated = await client.update(rt, made)
    assert updated["status"]["disruptionsAllowed"] == 0, "a main-resource update keeps the status"
    assert updated["metadata"]["generation"] == 2


# ---------------------------------------------------------------------------------- controller and eviction
async def test_status_and_eviction(client: Client, http: httpx.AsyncClient, namespace: str) -> None:
    d_rt, pdb_rt = client.kind("apps/v1", "Deployment"), client.kind("policy/v1", "PodDisruptionBudget")
    sel = {"matchLabels": LABELS}
    async with controller_manager(client, namespace, CONTROLLERS), SimulatedNode(client, namespace, node="n1"):
        await client.create(d_rt, deployment("web", 3, LABELS), namespace)
        await client.create(pdb_rt, pdb("web", sel, minAvailable=2), namespace)
        await client.create(pdb_rt, pdb("half", sel, maxUnavailable="50%"), namespace)
        await wait_for(lambda: _status_is(client, namespace, "web", expectedPods=3, desiredHealthy=2,
                                          currentHealthy=3, disruptionsAllowed=1), what="web budget computed")
        # maxUnavailable 50% of the Deployment's 3 replicas: 2 may go (rounded up), 1 must stay
        await wait_for(lambda: _status_is(client, namespace, "half", expectedPods=3, desiredHealthy=1,
                                          currentHealthy=3, disruptionsAllowed=2), what="half budget computed")
        status = await _status(client, namespace, "web")
        assert [(c["type"], c["status"], c["reason"]) for c in status["conditions"]] == \
            [("DisruptionAllowed", "True", "SufficientPods")]

        victim = (await pods(client, namespace))[0]["metadata"]["name"]
        refused = await _evict(http, namespace, victim)
        assert refused.status_code == 500, "two budgets select the pod"
        assert refused.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                  "message": "This pod has more than one PodDisruptionBudget, which the eviction "
                                             "subresource does not support.", "code": 500}
        await client.delete(pdb_rt, "half", namespace)

        taken = await _evict(http, namespace, victim)
        assert taken.status_code == 201, taken.text
        assert taken.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                                "code": 201}
        # the replacement comes up; the controller drops the evicted pod's entry once it is gone
        await wait_for(lambda: _status_is(client, namespace, "web", currentHealthy=3, disruptionsAllowed=1),
                       what="budget back to 1 after the replacement")
        await wait_for(lambda: _no_disrupted(client, namespace, "web"), what="disruptedPods emptied")

        # a budget that needs every pod refuses with Kubernetes' 429
        pdb_now = await client.get(pdb_rt, "web", namespace)
        pdb_now["spec"]["minAvailable"] = 3
        await client.update(pdb_rt, pdb_now)
        await wait_for(lambda: _status_is(client, namespace, "web", desiredHealthy=3, disruptionsAllowed=0),
                       what="budget at 0")
        status = await _status(client, namespace, "web")
        assert [(c["type"], c["status"], c["reason"]) for c in status["conditions"]] == \
            [("DisruptionAllowed", "False", "InsufficientPods")]
        victim = (await pods(client, namespace))[0]["metadata"]["name"]
        refused = await _evict(http, namespace, victim)
        assert refused.status_code == 429
        assert refused.json() == {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": TOO_MANY,
            "reason": "TooManyRequests",
            "details": {"causes": [{"reason": "DisruptionBudget",
                                    "message": "The disruption budget web needs 3 healthy pods and has 3 currently"}]},
            "code": 429}
        assert "retry-after" not in refused.headers
        assert victim in {p["metadata"]["name"] for p in await pods(client, namespace)}

        # a pod no budget covers is simply deleted; a dry run deletes nothing; the pod evicted gets
        # the DisruptionTarget condition first (a finalizer keeps it here to be looked at)
        pod_rt = client.kind("v1", "Pod")
        await client.create(pod_rt, {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "bare", "labels": {"app": "other"}, "finalizers": ["minik8s.io/test"]},
            "spec": {"containers": [{"name": "main", "image": "img"}]}}, namespace)
        await wait_for(lambda: _ready(client, namespace, "bare"), what="bare pod Running (SimulatedNode)")
        assert (await http.post(f"/api/v1/namespaces/{namespace}/pods/bare/eviction?dryRun=All",
                                json=eviction("bare", namespace))).status_code == 201
        kept = await client.get(pod_rt, "bare", namespace)
        assert not kept["metadata"].get("deletionTimestamp")
        assert "DisruptionTarget" not in [c["type"] for c in kept["status"].get("conditions") or []]
        assert (await _evict(http, namespace, "bare", gracePeriodSeconds=0)).status_code == 201
        evicted = await client.get(pod_rt, "bare", namespace)
        assert evicted["metadata"]["deletionTimestamp"]
        assert [(c["status"], c["reason"], c["message"]) for c in evicted["status"]["conditions"]
                if c["type"] == "DisruptionTarget"] == [("True", "EvictionByEvictionAPI", "Eviction API: evicting")]
        await client.patch(pod_rt, "bare", {"metadata": {"finalizers": None}}, namespace, patch_type="merge")
        await wait_for(lambda: _gone(client, namespace, "bare"), what="bare pod gone")
        assert (await _evict(http, namespace, "bare")).status_code == 404
        mismatch = await http.post(f"/api/v1/namespaces/{namespace}/pods/{victim}/eviction",
                                   json=eviction("other", namespace))
        assert mismatch.status_code == 400
        assert mismatch.json()["message"] == "name in URL does not match name in Eviction object"


async def _gone(client: Client, namespace: str, name: str) -> bool:
    try:
        await client.get(client.kind("v1", "Pod"), name, namespace)
    except errors.NotFound:
        return True
    return False


async def _ready(client: Client, namespace: str, name: str) -> bool:
    return is_ready(await client.get(client.kind("v1", "Pod"), name, namespace))


async def _no_disrupted(client: Client, namespace: str, name: str) -> bool:
    return not (await _status(client, namespace, name)).get("disruptedPods")


async def test_unready_and_pending_pods(client: Client, http: httpx.AsyncClient, namespace: str) -> None:
    """A Pending pod goes without asking the budget; an unready one when the budget is healthy
    (IfHealthyBudget) or always (AlwaysAllow); a budget not yet observed answers 429."""
    pod_rt, pdb_rt = client.kind("v1", "Pod"), client.kind("policy/v1", "PodDisruptionBudget")

    async def make(name: str, ready: bool | None) -> None:
        pod = await client.create(pod_rt, {"apiVersion": "v1", "kind": "Pod",
                                           "metadata": {"name": name, "labels": LABELS},
                                           "spec": {"containers": [{"name": "main", "image": "img"}]}}, namespace)
        if ready is not None:
            await mark_running(client, pod, node="n1", ready=ready)

    await client.create(pdb_rt, pdb("all", {"matchLabels": LABELS}, minAvailable=5), namespace)
    await make("pending", None)
    assert (await _evict(http, namespace, "pending", gracePeriodSeconds=0)).status_code == 201
    await make("sick", ready=False)
    unobserved = await _evict(http, namespace, "sick")
    assert unobserved.status_code == 429
    assert unobserved.headers["retry-after"] == "10"
    assert unobserved.json()["details"]["causes"][0]["message"] == \
        "The disruption budget all is still being processed by the server."
    async with controller_manager(client, namespace, ["disruption"]):
        await wait_for(lambda: _status_is(client, namespace, "all", expectedPods=1, desiredHealthy=5,
                                          currentHealthy=0, disruptionsAllowed=0), what="budget observed")
        refused = await _evict(http, namespace, "sick")
        assert refused.status_code == 429, "IfHealthyBudget: the budget is not healthy"
        assert refused.json()["details"]["causes"][0]["message"] == \
            "The disruption budget all needs 5 healthy pods and has 0 currently"
        budget = await client.get(pdb_rt, "all", namespace)
        budget["spec"]["unhealthyPodEvictionPolicy"] = "AlwaysAllow"
        await client.update(pdb_rt, budget)
        await wait_for(lambda: _status_is(client, namespace, "all"), what="new generation observed")
        assert (await _evict(http, namespace, "sick", gracePeriodSeconds=0)).status_code == 201
        assert "sick" not in {p["metadata"]["name"] for p in await pods(client, namespace, live_only=False)}


# ---------------------------------------------------------------------------------- drain
def _drain_argv(which: str, kubeconfig: Path, namespace: str, node: str) -> list[str]:
    args = ["drain", node, "--timeout", "120s"]
    if which == "minik8s":
        return [sys.executable, "-m", "minik8s.kubectl", "--kubeconfig", str(kubeconfig), *args]
    path, why = find(which)
    if path is None:
        pytest.skip(why)
    real = RealKubectl(path, which, kubeconfig, namespace)
    return real.argv(tuple(args), ns=False)


class Lines:
    """A stream's lines as they come (read by a task)."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self.lines: list[str] = []
        self.task = asyncio.get_running_loop().create_task(self._pump(stream))

    async def _pump(self, stream: asyncio.StreamReader) -> None:
        async for raw in stream:
            self.lines.append(raw.decode().rstrip("\n"))


@pytest.mark.parametrize("which", ["minik8s", "1.32", "1.37"])
async def test_drain_waits_for_the_budget(which: str, client: Client, namespace: str, nodes: list[str],
                                          tmp_path: Path, apiserver: APIServer) -> None:
    from minik8s.client.kubeconfig import render

    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(render(apiserver.url))
    argv = _drain_argv(which, kubeconfig, namespace, nodes[0])
    n1, n2 = nodes
    d_rt, pdb_rt = client.kind("apps/v1", "Deployment"), client.kind("policy/v1", "PodDisruptionBudget")
    async with controller_manager(client, namespace, CONTROLLERS):
        async with SimulatedNode(client, namespace, node=n1):
            await client.create(d_rt, deployment("web", 2, LABELS), namespace)
            await client.create(pdb_rt, pdb("web", {"matchLabels": LABELS}, minAvailable=2), namespace)
            await wait_for(lambda: _status_is(client, namespace, "web", currentHealthy=2, disruptionsAllowed=0),
                           what="two pods on n1, no disruption allowed")
        on_n1 = sorted(p["metadata"]["name"] for p in await pods(client, namespace))
        async with SimulatedNode(client, namespace, node=n2):
            proc = await asyncio.create_subprocess_exec(
                *argv, cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                env={**os.environ, "KUBECONFIG": "/nonexistent", "HOME": str(tmp_path)})
            assert proc.stdout is not None and proc.stderr is not None
            out, err = Lines(proc.stdout), Lines(proc.stderr)
            try:
                retry = re.compile(r'error when evicting pods/"(web-[^"]+)" -n "' + namespace +
                                   r'" \(will retry after 5s\): ' + re.escape(TOO_MANY))

                async def refused() -> bool:
                    return sum(1 for line in err.lines if retry.fullmatch(line)) >= 2

                await wait_for(refused, timeout=60, what=f"{which} drain refused by the budget")
                assert sorted(p["metadata"]["name"] for p in await pods(client, namespace)) == on_n1
                assert out.lines[0] == f"node/{n1} cordoned"
                # a third replica on n2 lets one pod go at a time
                await client.patch(d_rt, "web", {"spec": {"replicas": 3}}, namespace)
                code = await asyncio.wait_for(proc.wait(), 90)
                await asyncio.gather(out.task, err.task)
            finally:
                if proc.returncode is None:
                    proc.kill()
                    await proc.wait()
            assert code == 0, (out.lines, err.lines)
            assert out.lines[-1] == f"node/{n1} drained"
            assert sorted(line for line in out.lines if line.endswith(" evicted")) == \
                [f"pod/{name} evicted" for name in on_n1]
            assert {line for line in out.lines if line.startswith("evicting pod ")} == \
                {f"evicting pod {namespace}/{name}" for name in on_n1}
            assert all(retry.fullmatch(line) or line.startswith("Warning:") for line in err.lines), err.lines
            left = await pods(client, namespace)
            assert len(left) == 3 and all(p["spec"]["nodeName"] == n2 for p in left)


async def test_drain_disable_eviction_ignores_budget(client: Client, namespace: str, nodes: list[str],
                                                     tmp_path: Path, apiserver: APIServer) -> None:
    from minik8s.client.kubeconfig import render

    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(render(apiserver.url))
    kc = Kubectl(kubeconfig, namespace)
    n1, n2 = nodes
    d_rt, pdb_rt = client.kind("apps/v1", "Deployment"), client.kind("policy/v1", "PodDisruptionBudget")
    async with controller_manager(client, namespace, CONTROLLERS):
        async with SimulatedNode(client, namespace, node=n1):
            await client.create(d_rt, deployment("web", 1, LABELS), namespace)
            await client.create(pdb_rt, pdb("web", {"matchLabels": LABELS}, minAvailable=1), namespace)
            await wait_for(lambda: _status_is(client, namespace, "web", currentHealthy=1, disruptionsAllowed=0),
                           what="one pod on n1")
        name = (await pods(client, namespace))[0]["metadata"]["name"]
        why = f'error when evicting pods/"{name}" -n "{namespace}": global timeout reached: 3s'
        want = [f'error when evicting pods/"{name}" -n "{namespace}" (will retry after 5s): {TOO_MANY}',
                f'There are pending pods in node "{n1}" when an error occurred: {why}', f"pod/{name}",
                f'error: unable to drain node "{n1}" due to error: {why}, continuing command...',
                "There are pending nodes to be drained:", f" {n1}", why]
        runners: list[Callable[..., Result]] = [kc]
        path, _why = find("1.32")
        if path is not None:  # the official kubectl writes the same on stderr
            runners.append(RealKubectl(path, "1.32", kubeconfig, namespace))
        for run in runners:
            timed_out = await asyncio.to_thread(run, "drain", n1, "--timeout", "3s", ns=False)
            assert (timed_out.code, timed_out.err.splitlines()) == (1, want)
        async with SimulatedNode(client, namespace, node=n2):
            res = await asyncio.to_thread(kc.ok, "drain", n1, "--disable-eviction", ns=False)
        assert res.out == f"node/{n1} already cordoned\npod/{name} deleted\nnode/{n1} drained\n"


# ---------------------------------------------------------------------------------- get / describe parity
async def test_get_and_describe_parity(client: Client, namespace: str, tmp_path: Path,
                                       apiserver: APIServer) -> None:
    path, why = find("1.32")
    if path is None:
        pytest.skip(why)
    from minik8s.client.kubeconfig import render

    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(render(apiserver.url))
    real, ours = RealKubectl(path, "1.32", kubeconfig, namespace), Kubectl(kubeconfig, namespace)
    rt = client.kind("policy/v1", "PodDisruptionBudget")
    await client.create(rt, pdb("min", {"matchLabels": LABELS, "matchExpressions": [
        {"key": "tier", "operator": "In", "values": ["a", "b"]}]}, minAvailable=2), namespace)
    await client.create(rt, pdb("max", {"matchLabels": LABELS}, maxUnavailable="30%"), namespace)
    await client.create(rt, pdb("everything", {}, maxUnavailable=1), namespace)
    await client.create(rt, pdb("unset", None, minAvailable="100%"), namespace)
    age = re.compile(r"\b\d+(?:d\d*h?|h\d*m?|m\d*s?|s)\b")
    for args in (["get", "pdb"], ["get", "poddisruptionbudgets", "-o", "wide"], ["get", "pdb", "max"],
                 ["describe", "pdb"], ["describe", "pdb", "min"], ["get", "pdb", "-o", "name"]):
        want, got = await asyncio.gather(asyncio.to_thread(real, *args),
                                         asyncio.to_thread(ours, *args))
        assert (got.code, age.sub("<age>", got.out), got.err) == (want.code, age.sub("<age>", want.out), want.err), \
            args
