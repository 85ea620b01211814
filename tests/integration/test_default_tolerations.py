"""The DefaultTolerationSeconds admission plugin through the real apiserver: a pod created through
the API gets the not-ready and unreachable NoExecute tolerations for 300 s (a pod with its own
keeps its own), a JSON patch that appends to ``spec.tolerations`` works on a fresh pod, and
tolerations may only be added to (Kubernetes' ``validateOnlyAddedTolerations``)."""

from __future__ import annotations

import pytest

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.api.taints import TAINT_NOT_READY, TAINT_UNREACHABLE
from minik8s.client.rest import Client

NOT_READY_300 = {"key": TAINT_NOT_READY, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
UNREACHABLE_300 = {"key": TAINT_UNREACHABLE, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}


def pod(name: str, tolerations: list[Obj] | None = None) -> Obj:
    spec: Obj = {"containers": [{"name": "c", "image": "busybox"}]}
    if tolerations is not None:
        spec["tolerations"] = tolerations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


async def test_a_created_pod_has_the_default_tolerations(client: Client, namespace: str) -> None:
    pod_rt = client.kind("v1", "Pod")
    created = await client.create(pod_rt, pod("plain"), namespace)
    assert created["spec"]["tolerations"] == [NOT_READY_300, UNREACHABLE_300]
    stored = await client.get(pod_rt, "plain", namespace)
    assert stored["spec"]["tolerations"] == [NOT_READY_300, UNREACHABLE_300]

    own = {"key": TAINT_UNREACHABLE, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5}
    created = await client.create(pod_rt, pod("own", [own]), namespace)
    assert created["spec"]["tolerations"] == [own, NOT_READY_300]
    everything = {"operator": "Exists"}
    created = await client.create(pod_rt, pod("all", [everything]), namespace)
    assert created["spec"]["tolerations"] == [everything]


async def test_json_patch_appends_a_toleration_to_a_fresh_pod(client: Client, namespace: str) -> None:
    pod_rt = client.kind("v1", "Pod")
    await client.create(pod_rt, pod("p"), namespace)
    extra = {"key": "maintenance", "operator": "Exists", "effect": "NoSchedule"}
    patched = await client.patch(pod_rt, "p", [{"op": "add", "path": "/spec/tolerations/-", "value": extra}],
                                 namespace, patch_type="json")
    assert patched["spec"]["tolerations"] == [NOT_READY_300, UNREACHABLE_300, extra]


async def test_tolerations_may_only_be_added(client: Client, namespace: str) -> None:
    pod_rt = client.kind("v1", "Pod")
    maintenance = {"key": "maintenance", "operator": "Exists", "effect": "NoSchedule"}
    await client.create(pod_rt, pod("p", [maintenance]), namespace)
    with pytest.raises(errors.Invalid, match="existing toleration can not be modified except its tolerationSeconds"):
        await client.patch(pod_rt, "p", [{"op": "remove", "path": "/spec/tolerations/0"}], namespace,
                           patch_type="json")
    with pytest.raises(errors.Invalid, match="existing toleration can not be modified"):
        await client.patch(pod_rt, "p", [{"op": "replace", "path": "/spec/tolerations/0/key", "value": "other"}],
                           namespace, patch_type="json")
    patched = await client.patch(pod_rt, "p", [{"op": "replace", "path": "/spec/tolerations/2/tolerationSeconds",
                                                "value": 30}], namespace, patch_type="json")
    assert patched["spec"]["tolerations"][2]["tolerationSeconds"] == 30
