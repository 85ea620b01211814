"""kubectl's workload and node verbs as a real subprocess against the real apiserver and etcd.

``scale``, ``rollout status|history|undo|restart|pause|resume``, ``cordon``/``uncordon``,
``drain``, ``taint``, ``label`` and ``annotate``.  The real controller-manager (ReplicaSet and
Deployment controllers) runs in-process, so Deployments really make ReplicaSets and pods;
:class:`~tests.support.controllers.SimulatedNode` plays the scheduler and
kubelet through the API (bind, report Running/Ready, finish graceful deletions).  kubectl
runs in a thread (or as a streamed child process) so the event loop keeps those running.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from minik8s.api.base import Obj
from minik8s.client.kubeconfig import render
from minik8s.client.rest import Client
from tests.support.controllers import (
    SimulatedNode,
    controller_manager,
    deployment,
    is_live,
    mark_running,
    pods,
    replicaset,
)
from tests.support.kubectl import Kubectl, Result, assert_one_error_line
from tests.support.processes import ROOT, APIServer
from tests.support.waiting import wait_for

LABELS = {"app": "web"}
WORKLOAD = ["replicaset", "deployment"]


class AsyncKubectl:
    """:class:`~tests.support.kubectl.Kubectl` run in a worker thread, plus a streamed form."""

    def __init__(self, kubectl: Kubectl) -> None:
        self.sync = kubectl

    async def __call__(self, *args: str, **kwargs: Any) -> Result:
        return await asyncio.to_thread(self.sync, *args, **kwargs)

    async def ok(self, *args: str, **kwargs: Any) -> Result:
        return await asyncio.to_thread(self.sync.ok, *args, **kwargs)

    async def fails(self, *args: str, fragments: tuple[str, ...] = ()) -> Result:
        """Run and check the error convention: exit 1, one line on stderr containing ``fragments``."""
        res = await self(*args)
        assert_one_error_line(res, *fragments)
        return res

    async def all_fail(self, *cases: tuple[list[str], str]) -> None:
        """Several independent ``(args, message)`` failure checks, run concurrently."""
        await asyncio.gather(*(self.fails(*args, fragments=(message,)) for args, message in cases))

    async def start(self, *args: str) -> asyncio.subprocess.Process:
        """Start kubectl with stdout piped, to read its progress lines as they come."""
        return await asyncio.create_subprocess_exec(
            sys.executable, "-m", "minik8s.kubectl", "--kubeconfig", str(self.sync.kubeconfig), *args,
            "-n", self.sync.namespace, cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            env={**os.environ, "KUBECONFIG": "/nonexistent"})


@pytest.fixture
def kc(apiserver: APIServer, tmp_path: Path, namespace: str) -> AsyncKubectl:
    path = tmp_path / "kubeconfig"
    path.write_text(render(apiserver.url))
    return AsyncKubectl(Kubectl(path, namespace))


async def _deployment(client: Client, ns: str, name: str) -> Obj:
    return await client.get(client.kind("apps/v1", "Deployment"), name, ns)


async def _replicasets(client: Client, ns: str) -> list[Obj]:
    return list((await client.list(client.kind("apps/v1", "ReplicaSet"), ns))["items"])


async def _complete(client: Client, ns: str, name: str) -> bool:
    d = await _deployment(client, ns, name)
    s, replicas = d.get("status") or {}, d["spec"]["replicas"]
    return (s.get("observedGeneration") == d["metadata"]["generation"] and s.get("updatedReplicas") == replicas
            and s.get("replicas") == replicas and s.get("availableReplicas") == replicas)


def _image(d: Obj) -> str:
    return str(d["spec"]["template"]["spec"]["containers"][0]["image"])


async def _node(client: Client, name: str) -> Obj:
    return await client.get(client.kind("v1", "Node"), name)


# ---------------------------------------------------------------------------------- scale
async def test_scale_deployment_and_replicaset(kc: AsyncKubectl, client: Client, namespace: str,
                                               tmp_path: Path) -> None:
    d_rt, rs_rt = client.kind("apps/v1", "Deployment"), client.kind("apps/v1", "ReplicaSet")
    async with SimulatedNode(client, namespace), controller_manager(client, namespace, WORKLOAD):
        await client.create(d_rt, deployment("web", 2, LABELS), namespace)
        await wait_for(lambda: _complete(client, namespace, "web"), what="web rolled out")

        assert (await kc.ok("scale", "deployment", "web", "--replicas", "3")).out == "deployment.apps/web scaled\n"
        await wait_for(lambda: _complete(client, namespace, "web"), what="web at 3")
        assert (await _deployment(client, namespace, "web"))["status"]["availableReplicas"] == 3
        assert len([p for p in await pods(client, namespace) if p["metadata"]["labels"].get("app") == "web"]) == 3

        # TYPE/NAME form with a precondition that holds, and --timeout waiting for the new size
        res = await kc.ok("scale", "deploy/web", "--replicas", "1", "--current-replicas", "3", "--timeout", "30s")
        assert res.out == "deployment.apps/web scaled\n"
        assert (await client.get(d_rt, "web", namespace, subresource="scale"))["status"]["replicas"] == 1

        # a precondition that does not hold changes nothing
        await kc.fails("scale", "deployment", "web", "--replicas", "5", "--current-replicas", "2",
                       fragments=("error: Expected replicas to be 2, was 1",))
        assert (await _deployment(client, namespace, "web"))["spec"]["replicas"] == 1

        # a bare ReplicaSet, by name and by manifest
        await client.create(rs_rt, replicaset("x", 1, {"app": "x"}), namespace)
        assert (await kc.ok("scale", "rs", "x", "--replicas", "2")).out == "replicaset.apps/x scaled\n"
        assert (await client.get(rs_rt, "x", namespace))["spec"]["replicas"] == 2
        manifest = tmp_path / "x.yaml"
        manifest.write_text(yaml.safe_dump(replicaset("x", 9, {"app": "x"})))
        assert (await kc.ok("scale", "-f", str(manifest), "--replicas", "0")).out == "replicaset.apps/x scaled\n"
        assert (await client.get(rs_rt, "x", namespace))["spec"]["replicas"] == 0

        await kc.fails("scale", "deployment", "nope", "--replicas", "1",
                       fragments=("Error from server (NotFound):", '"nope" not found'))
        await kc.fails("scale", "deployment", "web",
                       fragments=("The --replicas=COUNT flag is required, and COUNT must be greater than or "
                                  "equal to 0",))
        await kc.fails("scale", "deployment", "--replicas", "1",
                       fragments=("resource(s) were provided, but no name was specified",))
        assert (await _deployment(client, namespace, "web"))["spec"]["replicas"] == 1


# ---------------------------------------------------------------------------------- rollout status
async def test_rollout_status_waits_and_reports_success(kc: AsyncKubectl, client: Client, namespace: str) -> None:
    d_rt = client.kind("apps/v1", "Deployment")
    async with controller_manager(client, namespace, WORKLOAD):
        await client.create(d_rt, deployment("web", 3, LABELS), namespace)
        await wait_for(lambda: _pods_made(client, namespace, 3), what="3 pods made")
        # nothing runs the pods yet: the rollout waits, and says so
        proc = await kc.start("rollout", "status", "deployment/web", "--timeout", "60s")
        assert proc.stdout is not None and proc.stderr is not None
        first = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
        assert first.startswith('Waiting for deployment "web" rollout to finish: '), first
        once = await kc.ok("rollout", "status", "deployment", "web", "--watch=false")
        assert once.lines == ['Waiting for deployment "web" rollout to finish: 0 of 3 updated replicas are '
                              'available...']
        # now a node runs them: the same command finishes by itself
        async with SimulatedNode(client, namespace):
            out, err = await asyncio.wait_for(proc.communicate(), 60)
            assert proc.returncode == 0, err.decode()
            lines = (first + out.decode()).splitlines()
            assert lines[-1] == 'deployment "web" successfully rolled out'
            assert all(line.startswith('Waiting for deployment "web"') for line in lines[:-1]), lines
            assert len(lines) == len(set(lines)), "each progress line is printed once"
        done = await kc.ok("rollout", "status", "deployment/web")
        assert done.out == 'deployment "web" successfully rolled out\n'

        await kc.fails("rollout", "status", "deployment/nope",
                       fragments=("Error from server (NotFound):", '"nope" not found'))
        rs_name = (await _replicasets(client, namespace))[0]["metadata"]["name"]
        await kc.fails("rollout", "status", f"rs/{rs_name}",
                       fragments=("error: no status viewer has been implemented for ReplicaSet.apps",))
        # a bad flag value: the official kubectl's two lines (pflag's error, then where the usage is)
        bad = await kc("rollout", "status", "deployment/web", "--timeout", "5x")
        assert bad.code == 1 and bad.err.splitlines() == [
            'Error: invalid argument "5x" for "--timeout" flag: time: unknown unit "x" in duration "5x"',
            "See 'kubectl rollout status --help' for usage."], bad.err


async def _pods_made(client: Client, namespace: str, count: int) -> bool:
    return len(await pods(client, namespace)) == count


async def test_rollout_status_deadline_exceeded_and_timeout(kc: AsyncKubectl, client: Client,
                                                            namespace: str) -> None:
    d_rt = client.kind("apps/v1", "Deployment")
    async with controller_manager(client, namespace, WORKLOAD):
        await client.create(d_rt, deployment("stuck", 1, {"app": "stuck"}, progressDeadlineSeconds=1), namespace)
        await client.create(d_rt, deployment("slow", 1, {"app": "slow"}), namespace)

        async def observed() -> bool:  # else kubectl waits for "spec update to be observed" first
            d = await _deployment(client, namespace, "slow")
            return bool((d.get("status") or {}).get("observedGeneration") == d["metadata"]["generation"])

        await wait_for(observed, what="the controller observed deployment slow")
        stuck, slow = await asyncio.gather(
            kc("rollout", "status", "deployment/stuck", "--timeout", "40s"),
            kc("rollout", "status", "deployment/slow", "--timeout", "2s"))
        assert_one_error_line(stuck, 'error: deployment "stuck" exceeded its progress deadline')
        assert_one_error_line(slow, "error: timed out waiting for the condition")
        assert slow.lines and slow.lines[0].startswith('Waiting for deployment "slow"')


# ---------------------------------------------------------------------------------- history / undo / restart
async def _set_image(client: Client, ns: str, name: str, image: str, cause: str) -> None:
    patch = {"metadata": {"annotations": {"kubernetes.io/change-cause": cause}},
             "spec": {"template": {"spec": {"containers": [{"name": "main", "image": image}]}}}}
    await client.patch(client.kind("apps/v1", "Deployment"), name, patch, ns, patch_type="strategic")


async def test_rollout_history_undo_restart_pause(kc: AsyncKubectl, client: Client, namespace: str) -> None:
    d_rt = client.kind("apps/v1", "Deployment")
    async with SimulatedNode(client, namespace), controller_manager(client, namespace, WORKLOAD):
        obj = deployment("web", 2, LABELS, image="img:1")
        obj["metadata"]["annotations"] = {"kubernetes.io/change-cause": "create v1"}
        await client.create(d_rt, obj, namespace)
        await wait_for(lambda: _complete(client, namespace, "web"), what="v1 rolled out")

        # one revision: nothing to roll back to
        await kc.fails("rollout", "undo", "deployment/web",
                       fragments=('error: no rollout history found for deployment "web"',))

        await _set_image(client, namespace, "web", "img:2", "update to 2")
        await wait_for(lambda: _complete(client, namespace, "web"), what="v2 rolled out")
        history = await kc.ok("rollout", "history", "deployment/web")
        assert history.out == ("deployment.apps/web \nREVISION  CHANGE-CAUSE\n1         create v1\n"
                               "2         update to 2\n\n")
        one = await kc.ok("rollout", "history", "deployment/web", "--revision", "1")
        assert one.lines[:2] == ["deployment.apps/web with revision #1", "Pod Template:"]
        assert any(line.split() == ["Image:", "img:1"] for line in one.lines), one.out
        assert any("pod-template-hash=" in line for line in one.lines)
        assert any(line.split() == ["Annotations:", "kubernetes.io/change-cause:", "create", "v1"]
                   for line in one.lines), one.out
        await kc.fails("rollout", "history", "deployment/web", "--revision", "7",
                       fragments=("error: unable to find the specified revision",))

        # undo: back to revision 1's template (its ReplicaSet becomes revision 3)
        assert (await kc.ok("rollout", "undo", "deployment/web")).out == "deployment.apps/web rolled back\n"
        d = await _deployment(client, namespace, "web")
        assert _image(d) == "img:1" and "pod-template-hash" not in d["spec"]["template"]["metadata"]["labels"]
        assert d["metadata"]["annotations"]["kubernetes.io/change-cause"] == "create v1"
        await wait_for(lambda: _complete(client, namespace, "web"), what="undo rolled out")
        assert len(await _replicasets(client, namespace)) == 2, "the old ReplicaSet is reused"
        history = await kc.ok("rollout", "history", "deployment", "web")
        assert history.lines[2:4] == ["2         update to 2", "3         create v1"]

        # --to-revision, and a revision that does not exist (nothing changes)
        res = await kc.ok("rollout", "undo", "deployment/web", "--to-revision", "2")
        assert res.out == "deployment.apps/web rolled back\n"
        assert _image(await _deployment(client, namespace, "web")) == "img:2"
        await wait_for(lambda: _complete(client, namespace, "web"), what="undo to 2 rolled out")
        before = await _deployment(client, namespace, "web")
        await kc.fails("rollout", "undo", "deployment/web", "--to-revision", "9",
                       fragments=("error: unable to find specified revision 9 in history",))
        assert (await _deployment(client, namespace, "web"))["metadata"]["resourceVersion"] == \
            before["metadata"]["resourceVersion"]

        # restart: a new ReplicaSet whose template carries restartedAt
        assert (await kc.ok("rollout", "restart", "deployment/web")).out == "deployment.apps/web restarted\n"
        await wait_for(lambda: _complete(client, namespace, "web"), what="restart rolled out")
        rss = await _replicasets(client, namespace)
        assert len(rss) == 3
        stamped = [rs for rs in rss if "kubectl.kubernetes.io/restartedAt" in
                   (rs["spec"]["template"]["metadata"].get("annotations") or {})]
        assert len(stamped) == 1 and stamped[0]["spec"]["replicas"] == 2

        # pause / resume, and what a pause forbids
        assert (await kc.ok("rollout", "pause", "deployment/web")).out == "deployment.apps/web paused\n"
        assert (await _deployment(client, namespace, "web"))["spec"]["paused"] is True
        paused = await _deployment(client, namespace, "web")
        await kc.fails("rollout", "pause", "deployment/web",
                       fragments=('error: deployments.apps "web" is already paused',))
        await kc.fails("rollout", "undo", "deployment/web",
                       fragments=("error: you cannot rollback a paused deployment; resume it first",))
        await kc.fails("rollout", "restart", "deployment/web",
                       fragments=("can't restart paused deployment (run rollout resume first)",))
        assert (await _deployment(client, namespace, "web"))["metadata"]["resourceVersion"] == \
            paused["metadata"]["resourceVersion"]
        assert (await kc.ok("rollout", "resume", "deployment/web")).out == "deployment.apps/web resumed\n"
        assert not (await _deployment(client, namespace, "web"))["spec"].get("paused")
        await kc.fails("rollout", "resume", "deployment/web",
                       fragments=('error: deployments.apps "web" is not paused',))
        await kc.fails("rollout", "pause", f"rs/{rss[0]['metadata']['name']}",
                       fragments=(f'replicasets.apps "{rss[0]["metadata"]["name"]}" pausing is not supported',))


# ---------------------------------------------------------------------------------- cordon / drain
async def test_cordon_uncordon(kc: AsyncKubectl, client: Client, nodes: list[str]) -> None:
    n1 = nodes[0]
    assert (await kc.ok("cordon", n1)).out == f"node/{n1} cordoned\n"
    assert (await _node(client, n1))["spec"]["unschedulable"] is True
    assert (await kc.ok("cordon", n1)).out == f"node/{n1} already cordoned\n"
    assert (await kc.ok("uncordon", f"node/{n1}")).out == f"node/{n1} uncordoned\n"
    assert not (await _node(client, n1)).get("spec", {}).get("unschedulable")
    assert (await kc.ok("uncordon", n1)).out == f"node/{n1} already uncordoned\n"
    await kc.all_fail((["cordon", "nope-node"], 'Error from server (NotFound): nodes "nope-node" not found'),
                      (["cordon"], "error: USAGE: cordon NODE [flags]"),
                      (["uncordon", n1, "-l", "a=b"], "error: cannot specify both a node name and a --selector option"))


async def test_drain(kc: AsyncKubectl, client: Client, namespace: str, nodes: list[str]) -> None:
    n1, n2 = nodes
    d_rt, pod_rt = client.kind("apps/v1", "Deployment"), client.kind("v1", "Pod")
    async with controller_manager(client, namespace, WORKLOAD):
        async with SimulatedNode(client, namespace, node=n1):
            await client.create(d_rt, deployment("web", 2, LABELS), namespace)
            await wait_for(lambda: _complete(client, namespace, "web"), what="web running on n1")
        bare = await client.create(pod_rt, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bare"},
                                            "spec": {"containers": [{"name": "main", "image": "img"}]}}, namespace)
        await mark_running(client, bare, node=n1)
        on_n1 = {p["metadata"]["uid"]: p["metadata"]["name"] for p in await pods(client, namespace)}
        assert len(on_n1) == 3

        # from here on new pods land on n2 (the scheduler avoids the cordoned n1) and deletions finish
        async with SimulatedNode(client, namespace, node=n2):
            await kc.fails("drain", n1, fragments=(
                f'error: unable to drain node "{n1}" due to error: cannot delete Pods that declare no '
                f"controller (use --force to override): {namespace}/bare",))
            assert not (await _node(client, n1)).get("spec", {}).get("unschedulable"), "a refused drain changes nothing"
            assert len(await pods(client, namespace)) == 3

            res = await kc.ok("drain", n1, "--force", "--grace-period", "5", "--timeout", "60s")
            assert res.lines[0] == f"node/{n1} cordoned"
            assert res.lines[-1] == f"node/{n1} drained"
            assert sorted(res.lines[1:-1]) == sorted([f"evicting pod {namespace}/{name}" for name in on_n1.values()]
                                                     + [f"pod/{name} evicted" for name in on_n1.values()])
            assert res.err == f"Warning: deleting Pods that declare no controller: {namespace}/bare\n"
            assert (await _node(client, n1))["spec"]["unschedulable"] is True
            now = await pods(client, namespace, live_only=False)
            assert not {p["metadata"]["uid"] for p in now} & set(on_n1), "every pod of n1 is gone"
            assert all(p["spec"].get("nodeName") != n1 for p in now if is_live(p))

            again = await kc.ok("drain", n1)
            assert again.out == f"node/{n1} already cordoned\nnode/{n1} drained\n"
        await kc.fails("drain", "nope-node", fragments=('Error from server (NotFound): nodes "nope-node" not found',))


# ---------------------------------------------------------------------------------- taint
async def test_taint_add_replace_remove(kc: AsyncKubectl, client: Client, nodes: list[str]) -> None:
    n1 = nodes[0]

    async def taints() -> list[Obj]:
        return list((await _node(client, n1)).get("spec", {}).get("taints") or [])

    assert (await kc.ok("taint", "nodes", n1, "dedicated=gpu:NoSchedule")).out == f"node/{n1} tainted\n"
    assert await taints() == [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    await kc.fails("taint", "nodes", n1, "dedicated=cpu:NoSchedule", fragments=(
        f"error: node {n1} already has dedicated taint(s) with same effect(s) and --overwrite is false",))
    res = await kc.ok("taint", "node", n1, "dedicated=cpu:NoSchedule", "--overwrite")
    assert res.out == f"node/{n1} modified\n"
    assert await taints() == [{"key": "dedicated", "value": "cpu", "effect": "NoSchedule"}]
    assert (await kc.ok("taint", "nodes", n1, "spot:NoExecute", "dedicated=x:PreferNoSchedule")).out == \
        f"node/{n1} tainted\n"
    assert len(await taints()) == 3
    assert (await kc.ok("taint", "nodes", n1, "dedicated:NoSchedule-")).out == f"node/{n1} untainted\n"
    assert {(t["key"], t["effect"]) for t in await taints()} == {("spot", "NoExecute"),
                                                                 ("dedicated", "PreferNoSchedule")}
    assert (await kc.ok("taint", "nodes", n1, "dedicated-")).out == f"node/{n1} untainted\n"
    assert await taints() == [{"key": "spot", "effect": "NoExecute"}]

    before = await _node(client, n1)
    await kc.all_fail(
        (["taint", "nodes", n1, "dedicated-"], 'error: taint "dedicated" not found'),
        (["taint", "nodes", n1, "a=b:Sometimes"], "error: invalid taint effect: Sometimes, unsupported taint effect"),
        (["taint", "nodes", n1, "a=b=c:NoSchedule"], "error: invalid taint spec: a=b=c:NoSchedule"),
        (["taint", "nodes", n1, "a=b"],
         "error: invalid taint spec: a=b, name part must consist of alphanumeric characters"),
        (["taint", "nodes", n1, "a=b:NoSchedule", "a:NoSchedule-"],
         'error: can not both modify and remove the following taint(s) in the same command: {"a":"NoSchedule"}'),
        (["taint", "pods", "p", "a=b:NoSchedule"],
         'error: invalid resource type pods, only ["node" "nodes"] are supported'),
        (["taint", "nodes", n1], "error: at least one taint update is required"),
        (["taint", "nodes", "a=b:NoSchedule"],
         "error: at least one resource name must be specified since 'all' parameter is not set"),
        (["taint", "nodes", "nope-node", "a=b:NoSchedule"],
         'Error from server (NotFound): nodes "nope-node" not found'),
    )
    assert (await _node(client, n1))["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]


# ---------------------------------------------------------------------------------- label / annotate
async def test_label_and_annotate(kc: AsyncKubectl, client: Client, namespace: str, tmp_path: Path) -> None:
    pod_rt = client.kind("v1", "Pod")
    for name, tier in (("p1", "a"), ("p2", "a"), ("p3", "b")):
        await client.create(pod_rt, {"apiVersion": "v1", "kind": "Pod",
                                     "metadata": {"name": name, "labels": {"tier": tier}},
                                     "spec": {"containers": [{"name": "main", "image": "img"}]}}, namespace)

    async def meta(name: str) -> Obj:
        return dict((await client.get(pod_rt, name, namespace))["metadata"])

    assert (await kc.ok("label", "pods", "p1", "app=web")).out == "pod/p1 labeled\n"
    assert (await meta("p1"))["labels"] == {"tier": "a", "app": "web"}
    rv = (await meta("p1"))["resourceVersion"]
    await kc.all_fail(
        (["label", "pod/p1", "app=db"], "error: 'app' already has a value (web), and --overwrite is false"),
        (["label", "pods", "p1", "bad=-x"], 'error: invalid label value: "bad=-x"'),
        (["label", "pods", "p1"], "error: at least one label update is required"),
        (["label", "pods", "--all", "-l", "tier=a", "x=1"], "error: cannot set --all and --selector at the same time"),
        (["label", "pods", "nope", "x=1"], 'Error from server (NotFound): pods "nope" not found'),
        (["label", "pods", "p1", "x=1", "-l", "tier=a"],
         "error: name cannot be provided when a selector or --all is specified"),
        (["annotate", "pods", "p1"], "error: at least one annotation update is required"),
        (["annotate", "p1", "a=b"], 'error: the server doesn\'t have a resource type "p1"'),
    )
    assert (await meta("p1"))["resourceVersion"] == rv, "failed commands change nothing"

    assert (await kc.ok("label", "pods", "p1", "app=db", "--overwrite")).out == "pod/p1 labeled\n"
    assert (await meta("p1"))["labels"]["app"] == "db"
    assert (await kc.ok("label", "pods", "p1", "app=db")).out == "pod/p1 not labeled\n"
    assert (await kc.ok("label", "pods", "p1", "app-")).out == "pod/p1 unlabeled\n"
    assert (await meta("p1"))["labels"] == {"tier": "a"}
    assert (await kc.ok("label", "pods", "p1", "ghost-")).out == 'label "ghost" not found.\npod/p1 not labeled\n'
    assert (await kc.ok("label", "pods", "p1", "--list")).out == "tier=a\n"

    selected = await kc.ok("label", "pods", "-l", "tier=a", "team=x")
    assert sorted(selected.lines) == ["pod/p1 labeled", "pod/p2 labeled"]
    everything = await kc.ok("label", "pods", "--all", "zone=z1")
    assert sorted(everything.lines) == ["pod/p1 labeled", "pod/p2 labeled", "pod/p3 labeled"]
    assert "team" not in (await meta("p3"))["labels"] and (await meta("p3"))["labels"]["zone"] == "z1"
    manifest = tmp_path / "p3.yaml"
    manifest.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p3"}}))
    assert (await kc.ok("label", "-f", str(manifest), "from=file")).out == "pod/p3 labeled\n"

    assert (await kc.ok("annotate", "pods", "p1", "note=hello world")).out == "pod/p1 annotated\n"
    assert (await meta("p1"))["annotations"]["note"] == "hello world"
    await kc.fails("annotate", "pod/p1", "note=bye", fragments=(
        "error: --overwrite is false but found the following declared annotation(s): "
        "'note' already has a value (hello world)",))
    assert (await kc.ok("annotate", "pods", "p1", "note=bye", "--overwrite")).out == "pod/p1 annotated\n"
    assert (await meta("p1"))["annotations"]["note"] == "bye"
    assert (await kc.ok("annotate", "pods", "p1", "note-")).out == "pod/p1 annotated\n"
    assert "note" not in ((await meta("p1")).get("annotations") or {})
    many = await kc.ok("annotate", "pods", "-l", "tier=a", "owner=ops")
    assert sorted(many.lines) == ["pod/p1 annotated", "pod/p2 annotated"]
