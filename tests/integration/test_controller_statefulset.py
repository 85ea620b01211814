"""The StatefulSet controller against a real apiserver, in-process (no kubelet, no scheduler).

Pods' Running/Ready status is written by the test (``mark_running``) or by :class:`SimulatedNode`,
which also finishes graceful deletions; a pod informer of the test's own records the order in
which pods appear, start terminating and go (:class:`Timeline`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.api.revisions import revision_data, revision_template
from minik8s.client.informer import Informer
from minik8s.client.rest import Client
from tests.support.controllers import (
    SimulatedNode,
    controller_manager,
    finish,
    finish_deletion,
    is_ready,
    mark_running,
    pods,
)
from tests.support.kubectl import Kubectl
from tests.support.waiting import wait_for

LABELS = {"app": "web"}
HASH = "controller-revision-hash"


def statefulset(name: str = "web", replicas: int = 3, image: str = "minik8s/busybox", **spec: Any) -> Obj:
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name},
            "spec": {"serviceName": name, "replicas": replicas, "selector": {"matchLabels": dict(LABELS)},
                     "template": {"metadata": {"labels": dict(LABELS)},
                                  "spec": {"containers": [{"name": "main", "image": image,
                                                           "command": ["sleep", "3600"]}]}},
                     **spec}}


class Timeline:
    """``(event, pod name)`` in the order the test's pod informer saw them: ``created``,
    ``terminating`` (deletionTimestamp first seen) and ``gone``."""

    def __init__(self, client: Client, namespace: str) -> None:
        self.events: list[tuple[str, str]] = []
        self.informer = Informer(client, client.kind("v1", "Pod"), namespace)
        self.informer.add_handler(self._add, self._update, self._delete)

    def _add(self, pod: Obj) -> None:
        self.events.append(("created", pod["metadata"]["name"]))

    def _update(self, old: Obj, cur: Obj) -> None:
        if cur["metadata"].get("deletionTimestamp") and not old["metadata"].get("deletionTimestamp"):
            self.events.append(("terminating", cur["metadata"]["name"]))

    def _delete(self, pod: Obj) -> None:
        self.events.append(("gone", pod["metadata"]["name"]))

    def of(self, kind: str) -> list[str]:
        return [name for k, name in self.events if k == kind]


@contextlib.asynccontextmanager
async def running(client: Client, namespace: str, node: bool = True) -> AsyncIterator[Timeline]:
    """The statefulset controller, the test's timeline and (``node``) the scheduler/kubelet stand-in."""
    timeline = Timeline(client, namespace)
    task = asyncio.get_running_loop().create_task(timeline.informer.run())
    try:
        await timeline.informer.wait_synced(10)
        async with contextlib.AsyncExitStack() as stack:
            await stack.enter_async_context(controller_manager(client, namespace, ["statefulset"]))
            if node:
                await stack.enter_async_context(SimulatedNode(client, namespace, ready_delay=0.05,
                                                              termination_delay=0.05))
            yield timeline
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def by_name(client: Client, ns: str) -> dict[str, Obj]:
    return {p["metadata"]["name"]: p for p in await pods(client, ns)}


async def names_are(client: Client, ns: str, expected: set[str], ready: bool = False) -> dict[str, Obj]:
    found = await by_name(client, ns)
    if set(found) != expected or (ready and not all(is_ready(p) for p in found.values())):
        return {}
    return found


async def sts_status(client: Client, ns: str, name: str = "web") -> Obj:
    return (await client.get(client.kind("apps/v1", "StatefulSet"), name, ns)).get("status") or {}


async def status_with(client: Client, ns: str, **want: Any) -> Obj:
    status = await sts_status(client, ns)
    return status if all(status.get(k) == v for k, v in want.items()) else {}


async def test_ordered_creation_identity_and_recreation(client: Client, namespace: str) -> None:
    sts_rt = client.kind("apps/v1", "StatefulSet")
    async with running(client, namespace, node=False):
        sts = await client.create(sts_rt, statefulset(), namespace)
        web0 = (await wait_for(lambda: names_are(client, namespace, {"web-0"}), what="web-0 alone"))["web-0"]
        meta, spec = web0["metadata"], web0["spec"]
        assert spec["hostname"] == "web-0" and spec["subdomain"] == "web"
        assert meta["labels"]["statefulset.kubernetes.io/pod-name"] == "web-0"
        assert meta["labels"]["apps.kubernetes.io/pod-index"] == "0"
        assert meta["labels"]["app"] == "web" and meta["labels"][HASH].startswith("web-")
        assert meta["ownerReferences"] == [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web",
                                            "uid": sts["metadata"]["uid"], "controller": True,
                                            "blockOwnerDeletion": True}]
        # Running but not Ready: web-1 waits
        await mark_running(client, web0, ready=False)
        await wait_for(lambda: status_with(client, namespace, replicas=1, readyReplicas=0), what="status 1/0")
        assert set(await by_name(client, namespace)) == {"web-0"}
        await mark_running(client, web0, node=None)
        web1 = (await wait_for(lambda: names_are(client, namespace, {"web-0", "web-1"}), what="web-1"))["web-1"]
        assert web1["spec"]["hostname"] == "web-1"
        await mark_running(client, web1)
        web2 = (await wait_for(lambda: names_are(client, namespace, {"web-0", "web-1", "web-2"}),
                               what="web-2"))["web-2"]
        await mark_running(client, web2)
        status = await wait_for(lambda: status_with(client, namespace, replicas=3, readyReplicas=3,
                                                    availableReplicas=3, currentReplicas=3, updatedReplicas=3,
                                                    observedGeneration=1), what="status 3 ready")
        assert status["currentRevision"] == status["updateRevision"] == meta["labels"][HASH]
        # a deleted pod comes back under its name (new uid)
        live = await by_name(client, namespace)
        await client.delete(client.kind("v1", "Pod"), "web-1", namespace)
        await finish_deletion(client, live["web-1"])

        async def replaced(name: str, old_uid: str) -> Obj | None:
            pod = (await by_name(client, namespace)).get(name)
            return pod if pod is not None and pod["metadata"]["uid"] != old_uid else None

        new1 = await wait_for(lambda: replaced("web-1", live["web-1"]["metadata"]["uid"]), what="web-1 again")
        await mark_running(client, new1)
        # a Failed pod is deleted (at once: it runs nothing) and made again
        await finish(client, live["web-2"], phase="Failed")
        new2 = await wait_for(lambda: replaced("web-2", live["web-2"]["metadata"]["uid"]), what="web-2 again")
        assert new2["status"]["phase"] == "Pending"


async def test_scale_down_highest_first_one_at_a_time(client: Client, namespace: str) -> None:
    sts_rt = client.kind("apps/v1", "StatefulSet")
    async with running(client, namespace) as timeline:
        await client.create(sts_rt, statefulset(replicas=4), namespace)
        await wait_for(lambda: names_are(client, namespace, {f"web-{i}" for i in range(4)}, ready=True),
                       what="4 ready pods")
        assert timeline.of("created") == ["web-0", "web-1", "web-2", "web-3"]
        await client.patch(sts_rt, "web", {"spec": {"replicas": 1}}, namespace, subresource="scale")
        await wait_for(lambda: names_are(client, namespace, {"web-0"}), what="scaled to 1")
        await wait_for(lambda: len(timeline.of("gone")) == 3, what="3 pods gone")
        down = [e for e in timeline.events if e[0] in ("terminating", "gone")]
        assert down == [("terminating", "web-3"), ("gone", "web-3"), ("terminating", "web-2"), ("gone", "web-2"),
                        ("terminating", "web-1"), ("gone", "web-1")]
        scale = await client.get(sts_rt, "web", namespace, subresource="scale")
        assert scale["spec"]["replicas"] == 1 and scale["status"]["selector"] == "app=web"
        await wait_for(lambda: status_with(client, namespace, replicas=1, readyReplicas=1), what="status 1")


async def test_partitioned_rolling_update(client: Client, namespace: str, kubectl: Kubectl) -> None:
    sts_rt = client.kind("apps/v1", "StatefulSet")
    async with running(client, namespace) as timeline:
        body = statefulset(updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 1}})
        await client.create(sts_rt, body, namespace)
        before = await wait_for(lambda: names_are(client, namespace, {"web-0", "web-1", "web-2"}, ready=True),
                                what="3 ready pods")
        old = await wait_for(lambda: status_with(client, namespace, readyReplicas=3, updatedReplicas=3),
                             what="status settled")
        table = (await asyncio.to_thread(kubectl.ok, "get", "sts")).table()
        assert table[0] == ["NAME", "READY", "AGE"] and table[1][:2] == ["web", "3/3"]
        wide = (await asyncio.to_thread(kubectl.ok, "get", "statefulsets", "-o", "wide")).table()
        assert wide[0] == ["NAME", "READY", "AGE", "CONTAINERS", "IMAGES"] and wide[1][-1] == "minik8s/busybox"
        await client.patch(sts_rt, "web", {"spec": {"template": {"spec": {"containers": [
            {"name": "main", "image": "minik8s/busybox:v2"}]}}}}, namespace)

        async def updated_above_partition() -> dict[str, Obj]:
            found = await names_are(client, namespace, {"web-0", "web-1", "web-2"}, ready=True)
            images = {n: p["spec"]["containers"][0]["image"] for n, p in found.items()}
            return found if images == {"web-0": "minik8s/busybox", "web-1": "minik8s/busybox:v2",
                                       "web-2": "minik8s/busybox:v2"} else {}

        after = await wait_for(updated_above_partition, timeout=20, what="web-2 and web-1 updated")
        assert timeline.of("terminating") == ["web-2", "web-1"]
        assert after["web-0"]["metadata"]["uid"] == before["web-0"]["metadata"]["uid"]
        status = await wait_for(lambda: status_with(client, namespace, updatedReplicas=2, currentReplicas=1,
                                                    readyReplicas=3), what="status of the partitioned update")
        assert status["currentRevision"] == old["currentRevision"] != status["updateRevision"]
        assert after["web-1"]["metadata"]["labels"][HASH] == status["updateRevision"]
        partial = await asyncio.to_thread(kubectl.ok, "rollout", "status", "sts/web", "--timeout", "10s")
        assert partial.lines[-1] == "partitioned roll out complete: 2 new pods have been updated..."
        # a pod below the partition deleted by hand comes back at the current revision
        await client.delete(client.kind("v1", "Pod"), "web-0", namespace)

        async def web0_back() -> Obj | None:
            pod = (await by_name(client, namespace)).get("web-0")
            return pod if pod and pod["metadata"]["uid"] != before["web-0"]["metadata"]["uid"] else None

        back = await wait_for(web0_back, what="web-0 back")
        assert back["spec"]["containers"][0]["image"] == "minik8s/busybox"
        # partition 0: web-0 follows, and the update revision becomes current
        await client.patch(sts_rt, "web", {"spec": {"updateStrategy": {"rollingUpdate": {"partition": 0}}}},
                           namespace)
        done = await asyncio.to_thread(kubectl.ok, "rollout", "status", "statefulset/web", "--timeout", "20s")
        assert done.lines[-1] == "partitioned roll out complete: 3 new pods have been updated..."
        final = await wait_for(lambda: status_with(client, namespace, updatedReplicas=3, currentReplicas=3,
                                                   readyReplicas=3), what="rollout complete")
        assert final["currentRevision"] == final["updateRevision"] == status["updateRevision"]
        assert timeline.of("terminating") == ["web-2", "web-1", "web-0", "web-0"]
        restarted = await asyncio.to_thread(kubectl.ok, "rollout", "restart", "sts/web")
        assert restarted.out.strip() == "statefulset.apps/web restarted"
        described = await asyncio.to_thread(kubectl.ok, "describe", "sts", "web")
        assert "web" in described.out


async def test_parallel_and_on_delete(client: Client, namespace: str) -> None:
    sts_rt = client.kind("apps/v1", "StatefulSet")
    async with running(client, namespace, node=False):
        body = statefulset(replicas=3, podManagementPolicy="Parallel", updateStrategy={"type": "OnDelete"})
        await client.create(sts_rt, body, namespace)
        # all three at once, none of them Ready
        found = await wait_for(lambda: names_are(client, namespace, {"web-0", "web-1", "web-2"}), what="3 pods")
        for pod in found.values():
            await mark_running(client, pod)
        await wait_for(lambda: status_with(client, namespace, readyReplicas=3), what="3 ready")
        # OnDelete: a template change replaces nothing until a pod is deleted
        await client.patch(sts_rt, "web", {"spec": {"template": {"metadata": {"labels": {"app": "web",
                                                                                          "v": "2"}}}}}, namespace)
        status = await wait_for(lambda: status_with(client, namespace, observedGeneration=2), what="generation 2")
        assert status["updatedReplicas"] == 0 and status["currentReplicas"] == 3
        assert all(not p["metadata"].get("deletionTimestamp") for p in await pods(client, namespace, False))
        # scaled to 0 in parallel: every pod starts terminating without waiting for the others
        await client.patch(sts_rt, "web", {"spec": {"replicas": 0}}, namespace, subresource="scale")

        async def all_terminating() -> list[Obj]:
            items = (await client.list(client.kind("v1", "Pod"), namespace))["items"]
            return items if len(items) == 3 and all(p["metadata"].get("deletionTimestamp") for p in items) else []

        for pod in await wait_for(all_terminating, what="3 pods terminating at once"):
            await finish_deletion(client, pod)
        await wait_for(lambda: status_with(client, namespace, replicas=0), what="status 0")


async def test_validation(client: Client, namespace: str) -> None:
    sts_rt = client.kind("apps/v1", "StatefulSet")
    bad = statefulset(podManagementPolicy="Sometimes",
                      updateStrategy={"type": "OnDelete", "rollingUpdate": {"partition": 1}})
    bad["spec"]["template"]["metadata"]["labels"] = {"app": "other"}
    try:
        await client.create(sts_rt, bad, namespace)
        raise AssertionError("created an invalid StatefulSet")
    except errors.Invalid as exc:
        causes = {(c["field"], c["message"]) for c in exc.details.get("causes") or []}
        assert ("spec.podManagementPolicy", "Invalid value: \"Sometimes\": must be 'OrderedReady' or 'Parallel'") \
            in causes, causes
        assert any(f == "spec.updateStrategy.rollingUpdate" and "only allowed for updateStrategy 'RollingUpdate'" in m
                   for f, m in causes), causes
        assert any(f == "spec.template.metadata.labels" for f, _ in causes), causes
    assert (await client.list(sts_rt, namespace))["items"] == []
    created = await client.create(sts_rt, statefulset(), namespace)
    spec = created["spec"]
    assert (spec["podManagementPolicy"], spec["updateStrategy"], spec["revisionHistoryLimit"]) == \
        ("OrderedReady", {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}, 10)
    assert spec["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Retain", "whenScaled": "Retain"}
    try:
        await client.patch(sts_rt, "web", {"spec": {"serviceName": "other"}}, namespace)
        raise AssertionError("changed serviceName")
    except errors.Invalid as exc:
        assert "updates to statefulset spec for fields other than 'replicas'" in exc.message


async def test_headless_service_endpoints_carry_pod_hostnames(client: Client, namespace: str) -> None:
    """What the per-pod DNS names (``web-0.web.<ns>.svc``) are made from: the Endpoints controller gives
    each StatefulSet pod's address its ``spec.hostname``, since its ``spec.subdomain`` is the Service."""
    sts_rt, pod_rt = client.kind("apps/v1", "StatefulSet"), client.kind("v1", "Pod")
    await client.create(client.kind("v1", "Service"), {
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
        "spec": {"clusterIP": "None", "selector": dict(LABELS), "ports": [{"name": "http", "port": 80}]}}, namespace)
    async with controller_manager(client, namespace, ["statefulset", "endpoint"]):
        await client.create(sts_rt, statefulset(replicas=2, podManagementPolicy="Parallel"), namespace)
        found = await wait_for(lambda: names_are(client, namespace, {"web-0", "web-1"}), what="2 pods")
        for i, name in enumerate(sorted(found)):
            live = await mark_running(client, found[name])
            live["status"]["podIP"] = f"10.244.9.{10 + i}"
            await client.update_status(pod_rt, live)

        async def hostnames() -> dict[str, str]:
            ep = await client.get(client.kind("v1", "Endpoints"), "web", namespace)
            addresses = [a for s in ep.get("subsets") or [] for a in s.get("addresses") or []]
            out = {a["ip"]: a.get("hostname", "") for a in addresses}
            return out if len(out) == 2 else {}

        assert await wait_for(hostnames, what="Endpoints with 2 addresses") == {"10.244.9.10": "web-0",
                                                                                 "10.244.9.11": "web-1"}


async def test_claim_templates_make_one_claim_per_pod(client: Client, namespace: str) -> None:
    """Each pod gets its own PersistentVolumeClaim ``<template>-<set>-<ordinal>`` (made before the pod,
    labelled with the set's selector), mounted as a persistentVolumeClaim volume; scaling down keeps
    the claims (``whenScaled: Retain``)."""
    sts_rt, pvc_rt = client.kind("apps/v1", "StatefulSet"), client.kind("v1", "PersistentVolumeClaim")
    body = statefulset(replicas=2, volumeClaimTemplates=[{"metadata": {"name": "data"}, "spec": {
        "accessModes": ["ReadWriteOnce"], "storageClassName": "manual",
        "resources": {"requests": {"storage": "1Gi"}}}}])
    body["spec"]["template"]["spec"]["containers"][0]["volumeMounts"] = [{"name": "data", "mountPath": "/data"}]
    async with running(client, namespace):
        await client.create(sts_rt, body, namespace)
        found = await wait_for(lambda: names_are(client, namespace, {"web-0", "web-1"}), what="web-0 and web-1")
        for ordinal in (0, 1):
            volumes = found[f"web-{ordinal}"]["spec"]["volumes"]
            assert volumes == [{"name": "data", "persistentVolumeClaim": {"claimName": f"data-web-{ordinal}"}}]
        claims = {c["metadata"]["name"]: c for c in (await client.list(pvc_rt, namespace=namespace))["items"]}
        assert set(claims) == {"data-web-0", "data-web-1"}
        for claim in claims.values():
            assert claim["metadata"]["labels"] == LABELS
            assert claim["spec"]["resources"]["requests"]["storage"] == "1Gi"
            assert claim["spec"]["storageClassName"] == "manual"
        await client.patch(sts_rt, "web", {"spec": {"replicas": 1}}, namespace)
        await wait_for(lambda: names_are(client, namespace, {"web-0"}), what="scaled down to web-0")
        left = {c["metadata"]["name"] for c in (await client.list(pvc_rt, namespace=namespace))["items"]}
        assert left == {"data-web-0", "data-web-1"}  # kept on scale-down


async def revisions_of(client: Client, ns: str, count: int | None = None) -> list[Obj]:
    """The namespace's ControllerRevisions by revision number ([] until there are ``count``)."""
    listed = await client.list(client.kind("apps/v1", "ControllerRevision"), ns)
    items = sorted(listed["items"], key=lambda r: r["revision"])
    return items if count is None or len(items) == count else []


async def test_controller_revisions_history_rollback_and_limit(client: Client, namespace: str,
                                                               kubectl: Kubectl) -> None:
    """The revisions are ControllerRevisions: ``<sts>-<hash>`` with the template patch as data, named by
    currentRevision/updateRevision and the pods' label; a rollback renumbers the matching revision;
    revisionHistoryLimit prunes the unused ones; ``kubectl rollout history/undo`` work from them."""
    sts_rt = client.kind("apps/v1", "StatefulSet")
    rev_rt = client.kind("apps/v1", "ControllerRevision")
    async with running(client, namespace):
        sts = await client.create(sts_rt, statefulset(replicas=2, revisionHistoryLimit=1), namespace)
        await wait_for(lambda: names_are(client, namespace, {"web-0", "web-1"}, ready=True), what="2 ready pods")
        [first] = await wait_for(lambda: revisions_of(client, namespace, 1), what="the first revision")
        name1 = first["metadata"]["name"]
        assert name1 == f"web-{first['metadata']['labels'][HASH]}" and first["revision"] == 1
        assert first["metadata"]["ownerReferences"][0] | {"uid": ""} == {
            "apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "uid": "", "controller": True,
            "blockOwnerDeletion": True}
        assert first["data"] == revision_data(sts)  # the template, as Go writes it, with $patch: replace
        assert revision_template(first)["spec"] == {**sts["spec"]["template"]["spec"], "containers": [
            {**c, "resources": {}} for c in sts["spec"]["template"]["spec"]["containers"]]}
        status = await wait_for(lambda: status_with(client, namespace, currentRevision=name1, updateRevision=name1,
                                                    readyReplicas=2), what="status names the revision")
        assert status["collisionCount"] == 0
        assert {p["metadata"]["labels"][HASH] for p in (await by_name(client, namespace)).values()} == {name1}
        # a new template: revision 2, rolled out
        await client.patch(sts_rt, "web", {"spec": {"template": {"spec": {"containers": [
            {"name": "main", "image": "minik8s/busybox:v2"}]}}}}, namespace)
        _, second = await wait_for(lambda: revisions_of(client, namespace, 2), what="a second revision")
        name2 = second["metadata"]["name"]
        await wait_for(lambda: status_with(client, namespace, currentRevision=name2, updateRevision=name2,
                                           updatedReplicas=2, readyReplicas=2), timeout=30, what="rolled to 2")
        table = (await asyncio.to_thread(kubectl.ok, "get", "controllerrevision")).table()
        assert sorted(row[:3] for row in table[1:]) == sorted([[name1, "statefulset.apps/web", "1"],
                                                              [name2, "statefulset.apps/web", "2"]])
        history = await asyncio.to_thread(kubectl.ok, "rollout", "history", "sts/web")
        assert history.out == "statefulset.apps/web \nREVISION  CHANGE-CAUSE\n1         <none>\n2         <none>\n\n"
        shown = await asyncio.to_thread(kubectl.ok, "rollout", "history", "sts/web", "--revision", "2")
        assert shown.lines[0] == "statefulset.apps/web with revision #2" and "minik8s/busybox:v2" in shown.out
        # undo: revision 1 comes back as revision 3, the same object
        assert (await asyncio.to_thread(kubectl.ok, "rollout", "undo", "sts/web")).out == \
            "statefulset.apps/web rolled back\n"

        async def renumbered() -> list[Obj]:
            items = await revisions_of(client, namespace, 2)
            return items if items and items[-1]["metadata"]["name"] == name1 and items[-1]["revision"] == 3 else []

        await wait_for(renumbered, what="revision 1 renumbered 3")
        await wait_for(lambda: status_with(client, namespace, currentRevision=name1, updateRevision=name1,
                                           updatedReplicas=2, readyReplicas=2), timeout=30, what="rolled back")
        images = {p["spec"]["containers"][0]["image"] for p in (await by_name(client, namespace)).values()}
        assert images == {"minik8s/busybox"}
        # the data of a revision is immutable; its number is not
        bad = await client.get(rev_rt, name2, namespace)
        bad["data"]["spec"]["template"]["spec"]["containers"][0]["image"] = "other"
        try:
            await client.update(rev_rt, bad)
            raise AssertionError("a revision's data changed")
        except errors.Invalid as exc:
            assert "data: Invalid value" in exc.message and "field is immutable" in exc.message
        # revisionHistoryLimit 1: a third template leaves one old revision, the newest
        await client.patch(sts_rt, "web", {"spec": {"template": {"spec": {"containers": [
            {"name": "main", "image": "minik8s/busybox:v3"}]}}}}, namespace)

        async def pruned() -> list[Obj]:
            items = await revisions_of(client, namespace)
            return items if [(r["metadata"]["name"] == name1, r["revision"]) for r in items] == [
                (True, 3), (False, 4)] else []

        await wait_for(pruned, timeout=30, what="revision 2 deleted")
