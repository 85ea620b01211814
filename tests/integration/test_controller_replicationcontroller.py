"""ReplicationControllers (core/v1) against a real apiserver, kept by the ReplicaSet controller's code
(controller-manager in-process, pods simulated as in the ReplicaSet tests)."""

from __future__ import annotations

import pytest

from minik8s.api import errors
from minik8s.client.rest import Client
from tests.support.controllers import controller_manager, mark_running, pod_template, pods
from tests.support.waiting import wait_for

LABELS = {"app": "legacy"}


def rc(name: str, replicas: int, **spec: object) -> dict:
    return {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": name},
            "spec": {"replicas": replicas, "template": pod_template(LABELS), **spec}}


async def test_selector_and_labels_default_from_the_template(client: Client, namespace: str) -> None:
    rc_rt = client.kind("v1", "ReplicationController")
    created = await client.create(rc_rt, rc("legacy", 0), namespace)
    assert created["spec"]["selector"] == LABELS and created["metadata"]["labels"] == LABELS
    assert created["status"] == {"replicas": 0}
    with pytest.raises(errors.Invalid) as exc:
        await client.create(rc_rt, rc("mismatch", 1, selector={"app": "other"}), namespace)
    assert "`selector` does not match template `labels`" in exc.value.message
    with pytest.raises(errors.Invalid):
        await client.create(rc_rt, {"metadata": {"name": "empty"}, "spec": {"replicas": 1}}, namespace)
    scale = await client.get(rc_rt, "legacy", namespace, subresource="scale")
    assert scale["status"]["selector"] == "app=legacy"


async def test_keeps_replicas_and_status(client: Client, namespace: str) -> None:
    rc_rt, rs_rt = client.kind("v1", "ReplicationController"), client.kind("apps/v1", "ReplicaSet")
    async with controller_manager(client, namespace, ["replicationcontroller", "replicaset"]):
        created = await client.create(rc_rt, rc("legacy", 3), namespace)

        async def count(n: int) -> list[dict]:
            found = await pods(client, namespace)
            return found if len(found) == n else []

        made = await wait_for(lambda: count(3), what="3 pods")
        for pod in made:
            assert pod["metadata"]["name"].startswith("legacy-")
            assert pod["metadata"]["ownerReferences"] == [{
                "apiVersion": "v1", "kind": "ReplicationController", "name": "legacy",
                "uid": created["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]
        for pod in made:
            await mark_running(client, pod)

        async def status_ready() -> bool:
            status = (await client.get(rc_rt, "legacy", namespace)).get("status") or {}
            return status.get("replicas") == 3 and status.get("readyReplicas") == 3 and \
                status.get("observedGeneration") == 1

        await wait_for(status_ready, what="status of 3 ready replicas")
        await client.patch(rc_rt, "legacy", {"spec": {"replicas": 1}}, namespace)
        await wait_for(lambda: count(1), what="scaled down to 1")
        assert (await client.list(rs_rt, namespace))["items"] == []  # no ReplicaSet involved
