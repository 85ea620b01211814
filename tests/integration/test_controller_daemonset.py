"""The DaemonSet controller against a real apiserver, with the real scheduler in-process.

Nodes are Node objects created through the API (no kubelets): :class:`SimulatedNode` with
``node=None`` plays the kubelets, reporting the pods the scheduler bound Running and Ready and
finishing their deletions.  Each test's nodes carry a label of their own, and its DaemonSets
select them by ``nodeSelector`` and name a scheduler of their own, so tests never see each
other's nodes.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import os
from collections.abc import AsyncIterator
from typing import Any

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.api.revisions import revision_data, revision_template
from minik8s.client.kubeconfig import ClientConfig
from minik8s.client.rest import Client
from minik8s.scheduler.scheduler import Scheduler
from tests.support.controllers import SimulatedNode, controller_manager, events_for, mark_running, pods
from tests.support.kubectl import Kubectl
from tests.support.processes import APIServer
from tests.support.waiting import wait_for

GROUP_LABEL = "minik8s.io/ds-test"
LABELS = {"app": "daemon"}
HASH = "controller-revision-hash"


class Nodes:
    """This test's Node objects (deleted afterwards)."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.id = os.urandom(3).hex()
        self.rt = client.kind("v1", "Node")
        self.names: list[str] = []

    async def add(self, suffix: str, labels: dict[str, str] | None = None, taints: list[Obj] | None = None) -> str:
        name = f"ds{self.id}-{suffix}"
        status = {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                  "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                  "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}
        body = {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "labels": {GROUP_LABEL: self.id, "kubernetes.io/hostname": name,
                                                      **(labels or {})}},
                "spec": {"taints": taints} if taints else {}, "status": status}
        created = await self.client.create(self.rt, body)
        self.names.append(name)
        if (created.get("status") or {}).get("allocatable") != status["allocatable"]:
            created["status"] = status
            await self.client.update_status(self.rt, created)
        return name

    async def delete(self, name: str) -> None:
        with contextlib.suppress(errors.NotFound):
            await self.client.delete(self.rt, name)

    async def close(self) -> None:
        for name in self.names:
            await self.delete(name)


@contextlib.asynccontextmanager
async def cluster(apiserver: APIServer, client: Client, namespace: str) -> AsyncIterator[Nodes]:
    """Nodes, a scheduler for them, the daemonset and garbage collector controllers and the kubelets' stand-in."""
    nodes = Nodes(client)
    async with Client(ClientConfig(server=apiserver.url)) as sched_client:
        sched = Scheduler(sched_client, f"sched-{nodes.id}", node_label_selector=f"{GROUP_LABEL}={nodes.id}",
                          initial_backoff=0.2, max_backoff=1.0, flush_interval=0.2)
        task = asyncio.get_running_loop().create_task(sched.run())
        try:
            await sched.wait_ready(15)
            async with controller_manager(client, namespace, ["daemonset", "garbagecollector"]), \
                    SimulatedNode(client, namespace, node=None, ready_delay=0.1, termination_delay=0.1):
                yield nodes
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            await nodes.close()


def daemonset(nodes: Nodes, name: str = "agent", image: str = "minik8s/busybox", **spec: Any) -> Obj:
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": dict(LABELS)},
                     "template": {"metadata": {"labels": dict(LABELS)},
                                  "spec": {"schedulerName": f"sched-{nodes.id}",
                                           "nodeSelector": {GROUP_LABEL: nodes.id},
                                           "containers": [{"name": "main", "image": image,
                                                           "command": ["sleep", "3600"]}]}},
                     **spec}}


async def placed(client: Client, ns: str) -> dict[str, Obj]:
    """Live pods by the node they are bound to (unbound ones under ``""``); fails on two on one node."""
    out: dict[str, Obj] = {}
    for pod in await pods(client, ns):
        node = pod["spec"].get("nodeName") or ""
        assert node not in out or not node, f"two pods on node {node}"
        out[node] = pod
    return out


async def running_on(client: Client, ns: str, expected: set[str], image: str | None = None) -> dict[str, Obj]:
    """Pods Ready on exactly the nodes ``expected`` (with ``image``, if given), else {} (not yet)."""
    found = await placed(client, ns)
    if set(found) != expected:
        return {}
    for pod in found.values():
        if not any(c["type"] == "Ready" and c["status"] == "True" for c in pod.get("status", {}).get("conditions", [])):
            return {}
        if image and pod["spec"]["containers"][0]["image"] != image:
            return {}
    return found


async def ds_status(client: Client, ns: str, name: str = "agent") -> Obj:
    return (await client.get(client.kind("apps/v1", "DaemonSet"), name, ns)).get("status") or {}


async def test_one_pod_per_node_following_nodes(apiserver: APIServer, client: Client, namespace: str) -> None:
    ds_rt = client.kind("apps/v1", "DaemonSet")
    async with cluster(apiserver, client, namespace) as nodes:
        names = {await nodes.add(s) for s in ("a", "b", "c")}
        ds = await client.create(ds_rt, daemonset(nodes), namespace)
        found = await wait_for(lambda: running_on(client, namespace, names), what="a Ready pod on each node")
        for node, pod in found.items():
            meta, spec = pod["metadata"], pod["spec"]
            assert meta["generateName"] == "agent-" and meta["labels"]["app"] == "daemon" and meta["labels"][HASH]
            assert meta["labels"]["pod-template-generation"] == "1"
            assert meta["ownerReferences"] == [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent",
                                                "uid": ds["metadata"]["uid"], "controller": True,
                                                "blockOwnerDeletion": True}]
            required = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            assert required == {"nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}
            keys = {(t["key"], t["effect"]) for t in spec["tolerations"]}
            assert ("node.kubernetes.io/not-ready", "NoExecute") in keys
            assert ("node.kubernetes.io/unschedulable", "NoSchedule") in keys

        async def status_settled() -> Obj:
            s = await ds_status(client, namespace)
            return s if (s.get("desiredNumberScheduled"), s.get("currentNumberScheduled"), s.get("numberReady"),
                         s.get("updatedNumberScheduled"), s.get("numberAvailable"), s.get("numberUnavailable"),
                         s.get("observedGeneration")) == (3, 3, 3, 3, 3, 0, 1) else {}

        await wait_for(status_settled, what="status 3/3 ready")
        # a node joins: it gets a pod; a node leaves: its pod goes
        names.add(await nodes.add("d"))
        await wait_for(lambda: running_on(client, namespace, names), what="a pod on the new node")
        gone = sorted(names)[0]
        await nodes.delete(gone)
        names.discard(gone)
        await wait_for(lambda: running_on(client, namespace, names), what="the deleted node's pod removed")

        async def both_events() -> set[str]:  # the recorder writes events after the pods change
            reasons = {e["reason"] for e in await events_for(client, namespace, "agent")}
            return reasons if {"SuccessfulCreate", "SuccessfulDelete"} <= reasons else set()

        await wait_for(both_events, what="the DaemonSet's SuccessfulCreate and SuccessfulDelete events")


async def test_taints_tolerations_and_node_selector(apiserver: APIServer, client: Client, namespace: str) -> None:
    ds_rt = client.kind("apps/v1", "DaemonSet")
    async with cluster(apiserver, client, namespace) as nodes:
        web = await nodes.add("web", labels={"role": "web"})
        tainted = await nodes.add("tainted", labels={"role": "web"},
                                  taints=[{"key": "dedicated", "value": "db", "effect": "NoSchedule"}])
        cordoned = await nodes.add("cordoned", labels={"role": "web"},
                                   taints=[{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}])
        await nodes.add("other", labels={"role": "db"})
        body = daemonset(nodes)
        body["spec"]["template"]["spec"]["nodeSelector"]["role"] = "web"
        await client.create(ds_rt, body, namespace)
        # the tainted node gets none; the cordoned one does (the automatic unschedulable toleration)
        await wait_for(lambda: running_on(client, namespace, {web, cordoned}), what="pods on web and cordoned")
        status = await wait_for(lambda: _status_with(client, namespace, desiredNumberScheduled=2, numberReady=2),
                                what="desired 2")
        assert status["numberMisscheduled"] == 0
        # a toleration makes the tainted node eligible
        await client.patch(ds_rt, "agent", {"spec": {"template": {"spec": {"tolerations": [
            {"key": "dedicated", "operator": "Equal", "value": "db", "effect": "NoSchedule"}]}}}}, namespace)
        await wait_for(lambda: running_on(client, namespace, {web, cordoned, tainted}), timeout=30,
                       what="a pod on the tolerated node too")
        # a node whose labels stop matching loses its pod
        await client.patch(nodes.rt, web, {"metadata": {"labels": {"role": "db"}}})
        await wait_for(lambda: running_on(client, namespace, {cordoned, tainted}),
                       what="the relabelled node's pod gone")
        await wait_for(lambda: _status_with(client, namespace, desiredNumberScheduled=2, numberMisscheduled=0),
                       what="desired 2 again")


async def _status_with(client: Client, ns: str, **want: int) -> Obj:
    status = await ds_status(client, ns)
    return status if all(status.get(k) == v for k, v in want.items()) else {}


async def test_rolling_update_respects_max_unavailable(apiserver: APIServer, client: Client, namespace: str) -> None:
    ds_rt = client.kind("apps/v1", "DaemonSet")
    async with cluster(apiserver, client, namespace) as nodes:
        names = {await nodes.add(s) for s in ("a", "b", "c", "d")}
        await client.create(ds_rt, daemonset(nodes, updateStrategy={
            "type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}}), namespace)
        before = await wait_for(lambda: running_on(client, namespace, names), what="4 Ready pods")
        old_hash = next(iter(before.values()))["metadata"]["labels"][HASH]
        await client.patch(ds_rt, "agent", {"spec": {"template": {"spec": {"containers": [
            {"name": "main", "image": "minik8s/busybox:v2", "command": ["sleep", "3600"]}]}}}}, namespace)
        lowest = len(names)

        async def rolled() -> bool:
            nonlocal lowest
            live = await placed(client, namespace)
            ready = [p for n, p in live.items() if n and any(
                c["type"] == "Ready" and c["status"] == "True" for c in p.get("status", {}).get("conditions", []))]
            lowest = min(lowest, len(ready))
            return bool(await running_on(client, namespace, names, image="minik8s/busybox:v2"))

        await wait_for(rolled, timeout=40, interval=0.02, what="every pod replaced by the new template")
        assert lowest >= len(names) - 1, f"{len(names) - lowest} nodes were unavailable at once"
        after = await placed(client, namespace)
        assert all(p["metadata"]["labels"][HASH] != old_hash for p in after.values())
        assert all(p["metadata"]["labels"]["pod-template-generation"] == "2" for p in after.values())
        await wait_for(lambda: _status_with(client, namespace, updatedNumberScheduled=4, numberAvailable=4,
                                            observedGeneration=2), what="status: 4 updated")


async def _two_nodes_running(client: Client, ns: str, nodes: Nodes, **spec: Any) -> tuple[set[str], dict[str, Obj]]:
    """Add nodes ``a`` and ``b``, create DaemonSet ``agent`` (``spec`` added) and wait for its 2 Ready pods:
    the node names and the pod on each."""
    names = {await nodes.add(s) for s in ("a", "b")}
    await client.create(client.kind("apps/v1", "DaemonSet"), daemonset(nodes, **spec), ns)
    return names, await wait_for(lambda: running_on(client, ns, names), what="2 Ready pods")


async def _replaced(client: Client, ns: str, names: set[str], node: str, old: Obj) -> bool:
    """Every node of ``names`` runs a Ready pod, and the one on ``node`` is no longer ``old``."""
    live = await running_on(client, ns, names)
    return bool(live) and live[node]["metadata"]["uid"] != old["metadata"]["uid"]


async def test_on_delete_replaces_only_deleted_pods(apiserver: APIServer, client: Client, namespace: str) -> None:
    ds_rt, pod_rt = client.kind("apps/v1", "DaemonSet"), client.kind("v1", "Pod")
    async with cluster(apiserver, client, namespace) as nodes:
        names, before = await _two_nodes_running(client, namespace, nodes, updateStrategy={"type": "OnDelete"})
        await client.patch(ds_rt, "agent", {"spec": {"template": {"spec": {"containers": [
            {"name": "main", "image": "minik8s/busybox:v2", "command": ["sleep", "3600"]}]}}}}, namespace)
        # the controller has seen generation 2 and left both pods alone
        await wait_for(lambda: _status_with(client, namespace, observedGeneration=2, updatedNumberScheduled=0,
                                            currentNumberScheduled=2), what="status of generation 2")
        assert {p["metadata"]["uid"] for p in (await placed(client, namespace)).values()} == \
            {p["metadata"]["uid"] for p in before.values()}
        victim_node = sorted(names)[0]
        victim = before[victim_node]
        await client.delete(pod_rt, victim["metadata"]["name"], namespace)

        await wait_for(lambda: _replaced(client, namespace, names, victim_node, victim),
                       what="the deleted pod replaced")
        live = await placed(client, namespace)
        assert live[victim_node]["spec"]["containers"][0]["image"] == "minik8s/busybox:v2"
        other = sorted(names)[1]
        assert live[other]["metadata"]["uid"] == before[other]["metadata"]["uid"]
        await wait_for(lambda: _status_with(client, namespace, updatedNumberScheduled=1), what="1 updated")


async def test_failed_pod_replaced_and_deletion_cascades(apiserver: APIServer, client: Client,
                                                          namespace: str) -> None:
    ds_rt = client.kind("apps/v1", "DaemonSet")
    async with cluster(apiserver, client, namespace) as nodes:
        names, before = await _two_nodes_running(client, namespace, nodes)
        node = sorted(names)[0]
        failed = before[node]
        await mark_running(client, failed, node=None, ready=False, phase="Failed")

        await wait_for(lambda: _replaced(client, namespace, names, node, failed), what="the failed pod replaced")
        reasons = [e["reason"] for e in await events_for(client, namespace, "agent")]
        assert "FailedDaemonPod" in reasons
        await client.delete(ds_rt, "agent", namespace)
        await wait_for(lambda: _no_pods(client, namespace), what="the DaemonSet's pods deleted with it")


async def _no_pods(client: Client, ns: str) -> bool:
    return not await pods(client, ns, live_only=False)


async def test_invalid_daemonsets_answer_422(client: Client, namespace: str) -> None:
    ds_rt = client.kind("apps/v1", "DaemonSet")
    nodes = Nodes(client)
    body = daemonset(nodes)
    bad = copy.deepcopy(body)
    bad["spec"]["selector"] = {"matchLabels": {"app": "other"}}
    try:
        await client.create(ds_rt, bad, namespace)
        raise AssertionError("created a DaemonSet whose selector does not match its template")
    except errors.Invalid as exc:
        assert "`selector` does not match template `labels`" in exc.message
    created = await client.create(ds_rt, body, namespace)
    assert created["spec"]["updateStrategy"] == {"type": "RollingUpdate",
                                                 "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}
    assert created["spec"]["revisionHistoryLimit"] == 10
    assert created["metadata"]["annotations"]["deprecated.daemonset.template.generation"] == "1"
    try:
        await client.patch(ds_rt, "agent", {"spec": {"selector": {"matchLabels": {"app": "daemon", "x": "y"}}}},
                           namespace)
        raise AssertionError("changed an immutable selector")
    except errors.Invalid as exc:
        assert "field is immutable" in exc.message
    assert (await pods(client, namespace)) == []


async def test_kubectl_get_rollout_status_and_restart(apiserver: APIServer, client: Client, namespace: str,
                                                      kubectl: Kubectl) -> None:
    async with cluster(apiserver, client, namespace) as nodes:
        names, before = await _two_nodes_running(client, namespace, nodes)
        await wait_for(lambda: _status_with(client, namespace, numberAvailable=2, updatedNumberScheduled=2),
                       what="status 2 available")
        table = (await asyncio.to_thread(kubectl.ok, "get", "ds")).table()
        assert table[0] == ["NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE SELECTOR", "AGE"]
        assert table[1][:7] == ["agent", "2", "2", "2", "2", "2", f"{GROUP_LABEL}={nodes.id}"]
        wide = (await asyncio.to_thread(kubectl.ok, "get", "daemonsets", "-o", "wide")).table()
        assert wide[0][-3:] == ["CONTAINERS", "IMAGES", "SELECTOR"] and wide[1][-1] == "app=daemon"
        done = await asyncio.to_thread(kubectl.ok, "rollout", "status", "daemonset/agent", "--timeout", "20s")
        assert done.lines[-1] == 'daemon set "agent" successfully rolled out'
        restarted = await asyncio.to_thread(kubectl.ok, "rollout", "restart", "ds/agent")
        assert restarted.out.strip() == "daemonset.apps/agent restarted"
        done = await asyncio.to_thread(kubectl.ok, "rollout", "status", "daemonset/agent", "--timeout", "30s")
        assert done.lines[-1] == 'daemon set "agent" successfully rolled out'
        after = await placed(client, namespace)
        assert {p["metadata"]["uid"] for p in after.values()}.isdisjoint(p["metadata"]["uid"] for p in before.values())
        described = await asyncio.to_thread(kubectl.ok, "describe", "ds", "agent")
        assert "agent" in described.out


async def revisions_of(client: Client, ns: str, count: int | None = None) -> list[Obj]:
    """The namespace's ControllerRevisions by revision number ([] until there are ``count``)."""
    listed = await client.list(client.kind("apps/v1", "ControllerRevision"), ns)
    items = sorted(listed["items"], key=lambda r: r["revision"])
    return items if count is None or len(items) == count else []


async def test_controller_revisions_history_rollback_and_limit(apiserver: APIServer, client: Client,
                                                               namespace: str, kubectl: Kubectl) -> None:
    """One ControllerRevision per template (``data`` the template patch), pods labelled with its hash;
    a rollback renumbers the old revision instead of copying it; old revisions beyond
    revisionHistoryLimit that no pod uses are deleted; ``kubectl rollout history/undo`` use them."""
    ds_rt = client.kind("apps/v1", "DaemonSet")
    async with cluster(apiserver, client, namespace) as nodes:
        names, before = await _two_nodes_running(client, namespace, nodes)
        ds = await client.get(ds_rt, "agent", namespace)
        [first] = await wait_for(lambda: revisions_of(client, namespace, 1), what="the first revision")
        hash1 = first["metadata"]["labels"][HASH]
        assert first["metadata"]["name"] == f"agent-{hash1}" and first["revision"] == 1
        assert first["metadata"]["labels"]["app"] == "daemon"
        assert first["metadata"]["ownerReferences"] == [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent",
                                                         "uid": ds["metadata"]["uid"], "controller": True,
                                                         "blockOwnerDeletion": True}]
        assert first["data"] == revision_data(ds)  # the template, as Go writes it, with $patch: replace
        assert revision_template(first)["spec"] == {**ds["spec"]["template"]["spec"], "containers": [
            {**c, "resources": {}} for c in ds["spec"]["template"]["spec"]["containers"]]}
        assert {p["metadata"]["labels"][HASH] for p in before.values()} == {hash1}
        # a new template: revision 2, and the pods move to its hash
        await client.patch(ds_rt, "agent", {"metadata": {"annotations": {"kubernetes.io/change-cause": "v2"}},
                                            "spec": {"template": {"spec": {"containers": [
                                                {"name": "main", "image": "minik8s/busybox:v2",
                                                 "command": ["sleep", "3600"]}]}}}}, namespace)
        r1, r2 = await wait_for(lambda: revisions_of(client, namespace, 2), what="a second revision")
        hash2 = r2["metadata"]["labels"][HASH]
        assert (r1["metadata"]["name"], r2["revision"], r2["metadata"]["annotations"]["kubernetes.io/change-cause"]) \
            == (first["metadata"]["name"], 2, "v2")
        after = await wait_for(lambda: running_on(client, namespace, names, image="minik8s/busybox:v2"),
                               timeout=30, what="the pods at revision 2")
        assert {p["metadata"]["labels"][HASH] for p in after.values()} == {hash2}
        table = (await asyncio.to_thread(kubectl.ok, "get", "controllerrevisions")).table()
        assert table[0] == ["NAME", "CONTROLLER", "REVISION", "AGE"]
        assert sorted(row[:3] for row in table[1:]) == sorted([[f"agent-{hash1}", "daemonset.apps/agent", "1"],
                                                              [f"agent-{hash2}", "daemonset.apps/agent", "2"]])
        history = await asyncio.to_thread(kubectl.ok, "rollout", "history", "ds/agent")
        assert history.out == "daemonset.apps/agent \nREVISION  CHANGE-CAUSE\n1         <none>\n2         v2\n\n"
        one = await asyncio.to_thread(kubectl.ok, "rollout", "history", "ds/agent", "--revision", "1")
        assert one.lines[0] == "daemonset.apps/agent with revision #1" and "minik8s/busybox\n" in one.out
        # undo: back to revision 1's template, which becomes revision 3 (no new object)
        undone = await asyncio.to_thread(kubectl.ok, "rollout", "undo", "daemonset/agent")
        assert undone.out == "daemonset.apps/agent rolled back\n"
        r2_, r1_ = await wait_for(lambda: _renumbered(client, namespace, first["metadata"]["name"], 3),
                                  what="revision 1 renumbered 3")
        assert r1_["metadata"]["uid"] == first["metadata"]["uid"] and r2_["revision"] == 2
        back = await wait_for(lambda: running_on(client, namespace, names, image="minik8s/busybox"),
                              timeout=30, what="the pods back at the first template")
        assert {p["metadata"]["labels"][HASH] for p in back.values()} == {hash1}
        skipped = await asyncio.to_thread(kubectl.ok, "rollout", "undo", "ds/agent", "--to-revision", "3")
        assert skipped.out == "daemonset.apps/agent skipped rollback (current template already matches revision 3)\n"
        missing = await asyncio.to_thread(kubectl, "rollout", "undo", "ds/agent", "--to-revision", "7")
        assert missing.code == 1 and missing.err == "error: unable to find specified revision 7 in history\n"
        # revisionHistoryLimit 0: the old revision no pod uses goes
        await client.patch(ds_rt, "agent", {"spec": {"revisionHistoryLimit": 0}}, namespace)
        [only] = await wait_for(lambda: revisions_of(client, namespace, 1), what="the old revision deleted")
        assert only["metadata"]["name"] == first["metadata"]["name"]


async def _renumbered(client: Client, ns: str, name: str, revision: int) -> list[Obj]:
    items = await revisions_of(client, ns, 2)
    return items if items and items[-1]["metadata"]["name"] == name and items[-1]["revision"] == revision else []
