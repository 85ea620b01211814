"""IngressClass, RuntimeClass and the CSI kinds (CSIDriver, CSINode, CSIStorageCapacity,
VolumeAttachment) against a real apiserver and etcd: CRUD and Kubernetes' validation messages, the
DefaultIngressClass and RuntimeClass admission, the DNS controller's IngressClass, and a real kubelet
(Docker) keeping its CSINode and refusing a runtime handler Docker does not have.

Most kinds here are cluster-scoped: each test names its objects with a random suffix and deletes them.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any

import pytest

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.client.rest import Client
from tests.support.controllers import controller_manager
from tests.support.kubelet import BUSYBOX, KubeletProcess, create_pod, events_of, get_pod, pod_body, wait_phase
from tests.support.waiting import wait_for


class Objects:
    """Cluster-scoped objects one test makes (random suffix), deleted afterwards."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.id = os.urandom(3).hex()
        self.made: list[tuple[Any, str]] = []

    def name(self, short: str) -> str:
        return f"{short}-{self.id}"

    async def create(self, api_version: str, kind: str, short: str, **fields: Any) -> Obj:
        rt = self.client.kind(api_version, kind)
        meta = fields.pop("metadata", None) or {}
        body = {"apiVersion": api_version, "kind": kind, "metadata": {"name": self.name(short), **meta}, **fields}
        created: Obj = await self.client.create(rt, body)
        self.made.append((rt, created["metadata"]["name"]))
        return created

    async def close(self) -> None:
        for rt, name in reversed(self.made):
            try:
                await self.client.delete(rt, name)
            except errors.NotFound:
                pass


@pytest.fixture
async def objs(client: Client) -> AsyncIterator[Objects]:
    o = Objects(client)
    yield o
    await o.close()


async def invalid(objs: Objects, api_version: str, kind: str, short: str, **fields: Any) -> str:
    with pytest.raises(errors.Invalid) as caught:
        await objs.create(api_version, kind, short, **fields)
    return caught.value.message


# ---------------------------------------------------------------- IngressClass
NET = "networking.k8s.io/v1"


async def test_ingress_class_defaults_validation_and_immutable_controller(client: Client, objs: Objects) -> None:
    ic = await objs.create(NET, "IngressClass", "ic", spec={
        "controller": "example.com/ingress", "parameters": {"kind": "Params", "name": "p", "apiGroup": "x.io"}})
    assert ic["spec"]["parameters"]["scope"] == "Cluster"
    name = ic["metadata"]["name"]
    message = await invalid(objs, NET, "IngressClass", "bad", spec={"controller": "nodomain"})
    assert message == (f'IngressClass.networking.k8s.io "{objs.name("bad")}" is invalid: spec.controller: '
                       'Invalid value: "nodomain": must be a domain-prefixed path (such as "acme.io/foo")')
    message = await invalid(objs, NET, "IngressClass", "ns", spec={
        "controller": "a.io/b", "parameters": {"kind": "K", "name": "n", "scope": "Namespace"}})
    assert message.endswith("spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace'")
    message = await invalid(objs, NET, "IngressClass", "cl", spec={
        "controller": "a.io/b", "parameters": {"kind": "K", "name": "n", "namespace": "x"}})
    assert message.endswith("spec.parameters.namespace: Forbidden: `parameters.scope` is set to 'Cluster'")
    rt = client.kind(NET, "IngressClass")
    ic["spec"]["controller"] = "example.com/other"
    with pytest.raises(errors.Invalid) as caught:
        await client.update(rt, ic)
    assert caught.value.message == (f'IngressClass.networking.k8s.io "{name}" is invalid: spec.controller: '
                                    'Invalid value: "example.com/other": field is immutable')


async def test_default_ingress_class_names_new_ingresses(client: Client, namespace: str, objs: Objects) -> None:
    ing_rt = client.kind(NET, "Ingress")
    default = {"annotations": {"ingressclass.kubernetes.io/is-default-class": "true"}}
    await objs.create(NET, "IngressClass", "first", metadata=default, spec={"controller": "example.com/a"})

    def ingress(name: str, **spec: Any) -> Obj:
        return {"apiVersion": NET, "kind": "Ingress", "metadata": {"name": name},
                "spec": {"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}, **spec}}

    got = await client.create(ing_rt, ingress("a"), namespace)
    assert got["spec"]["ingressClassName"] == objs.name("first")
    # more than one default: the newest wins, as Kubernetes' admission picks
    await objs.create(NET, "IngressClass", "second", metadata=default, spec={"controller": "example.com/b"})
    got = await client.create(ing_rt, ingress("b"), namespace)
    assert got["spec"]["ingressClassName"] == objs.name("second")
    # a class the client names, or the legacy annotation, is left as it is
    got = await client.create(ing_rt, ingress("c", ingressClassName="mine"), namespace)
    assert got["spec"]["ingressClassName"] == "mine"
    legacy = ingress("d")
    legacy["metadata"]["annotations"] = {"kubernetes.io/ingress.class": "nginx"}
    got = await client.create(ing_rt, legacy, namespace)
    assert "ingressClassName" not in got["spec"]


async def test_dns_controller_owns_its_ingress_class_and_ignores_others(client: Client, namespace: str,
                                                                         objs: Objects) -> None:
    ing_rt, svc_rt, ic_rt = client.kind(NET, "Ingress"), client.kind("v1", "Service"), client.kind(NET, "IngressClass")
    await client.create(svc_rt, {"metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}}, namespace)
    await objs.create(NET, "IngressClass", "other", spec={"controller": "example.com/other"})
    await objs.create(NET, "IngressClass", "alias", spec={"controller": "minik8s.io/nginx"})

    def ingress(name: str, cls: str) -> Obj:
        return {"apiVersion": NET, "kind": "Ingress", "metadata": {"name": name},
                "spec": {"ingressClassName": cls,
                         "defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}}}

    async with controller_manager(client, namespace, ["dns"]):
        ours = await wait_for(lambda: _get_or_none(client, ic_rt, "minik8s"), what="IngressClass minik8s")
        assert ours["spec"] == {"controller": "minik8s.io/nginx"}
        await client.create(ing_rt, ingress("foreign", objs.name("other")), namespace)
        await client.create(ing_rt, ingress("aliased", objs.name("alias")), namespace)
        await client.create(ing_rt, ingress("own", "minik8s"), namespace)
        for name in ("aliased", "own"):
            await wait_for(lambda n=name: _get_or_none(client, svc_rt, f"ingress-{n}", namespace),  # type: ignore[misc]
                           what=f"nginx Service of Ingress {name}")
        # the controller has handled the later Ingresses; the foreign one got nothing
        with pytest.raises(errors.NotFound):
            await client.get(svc_rt, "ingress-foreign", namespace)
        assert not (await client.get(ing_rt, "foreign", namespace)).get("status", {}).get("loadBalancer", {}).get(
            "ingress")
        # deleted, the class comes back
        await client.delete(ic_rt, "minik8s")
        await wait_for(lambda: _get_or_none(client, ic_rt, "minik8s"), what="IngressClass minik8s re-created")


async def _get_or_none(client: Client, rt: Any, name: str, namespace: str | None = None) -> Obj | None:
    try:
        got: Obj = await client.get(rt, name, namespace)
        return got
    except errors.NotFound:
        return None


# ---------------------------------------------------------------- RuntimeClass
NODE = "node.k8s.io/v1"


async def test_runtime_class_validation(client: Client, objs: Objects) -> None:
    rc = await objs.create(NODE, "RuntimeClass", "rc", handler="runc")
    message = await invalid(objs, NODE, "RuntimeClass", "bad", handler="Not_A_Label",
                            overhead={"podFixed": {"cpu": "-1"}})
    assert message.startswith(f'RuntimeClass.node.k8s.io "{objs.name("bad")}" is invalid: [handler: Invalid value: '
                              '"Not_A_Label": a lowercase RFC 1123 label must consist of')
    assert 'overhead.podFixed[cpu]: Invalid value: "-1": must be greater than or equal to 0' in message
    rc["handler"] = "other"
    with pytest.raises(errors.Invalid) as caught:
        await client.update(client.kind(NODE, "RuntimeClass"), rc)
    assert caught.value.message.endswith('handler: Invalid value: "other": field is immutable')


async def test_runtime_class_admission(client: Client, namespace: str, objs: Objects) -> None:
    toleration = {"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"}
    await objs.create(NODE, "RuntimeClass", "fat", handler="runc",
                      overhead={"podFixed": {"cpu": "250m", "memory": "64Mi"}},
                      scheduling={"nodeSelector": {"sandbox": "true"}, "tolerations": [toleration]})
    pod_rt = client.kind("v1", "Pod")

    def pod(name: str, **spec: Any) -> Obj:
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec}}

    got = await client.create(pod_rt, pod("a", runtimeClassName=objs.name("fat"), nodeSelector={"zone": "z1"},
                                          tolerations=[{"key": "sandbox", "operator": "Exists"}]), namespace)
    assert got["spec"]["overhead"] == {"cpu": "250m", "memory": "64Mi"}
    assert got["spec"]["nodeSelector"] == {"zone": "z1", "sandbox": "true"}
    # the pod's own toleration covers the class's (any effect): MergeTolerations keeps the wider one
    assert [t for t in got["spec"]["tolerations"] if t["key"] == "sandbox"] == [{"key": "sandbox",
                                                                                "operator": "Exists"}]
    with pytest.raises(errors.Forbidden) as caught:
        await client.create(pod_rt, pod("b", runtimeClassName="nosuch"), namespace)
    assert caught.value.message == 'pods "b" is forbidden: pod rejected: RuntimeClass "nosuch" not found'
    with pytest.raises(errors.Forbidden) as caught:
        await client.create(pod_rt, pod("c", runtimeClassName=objs.name("fat"), nodeSelector={"sandbox": "no"}),
                            namespace)
    assert caught.value.message == ('pods "c" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] '
                                    '= true; pod.spec.nodeSelector[sandbox] = no')
    with pytest.raises(errors.Forbidden) as caught:
        await client.create(pod_rt, pod("d", runtimeClassName=objs.name("fat"), overhead={"cpu": "1"}), namespace)
    assert caught.value.message == ('pods "d" is forbidden: pod rejected: Pod\'s Overhead doesn\'t match '
                                    'RuntimeClass\'s defined Overhead')
    with pytest.raises(errors.Forbidden) as caught:
        await client.create(pod_rt, pod("e", overhead={"cpu": "1"}), namespace)
    assert caught.value.message == ('pods "e" is forbidden: pod rejected: Pod Overhead set without corresponding '
                                    'RuntimeClass defined Overhead')


# ---------------------------------------------------------------- CSI kinds
STORAGE = "storage.k8s.io/v1"


async def test_csi_driver_defaults_and_validation(client: Client, objs: Objects) -> None:
    driver = await objs.create(STORAGE, "CSIDriver", "csi.example.com", spec={})
    assert driver["spec"] == {"attachRequired": True, "podInfoOnMount": False, "storageCapacity": False,
                              "fsGroupPolicy": "ReadWriteOnceWithFSType", "volumeLifecycleModes": ["Persistent"],
                              "requiresRepublish": False, "seLinuxMount": False}
    long_name = "d" * 60
    message = await invalid(objs, STORAGE, "CSIDriver", long_name, spec={"fsGroupPolicy": "Sometimes"})
    assert message == (f'CSIDriver.storage.k8s.io "{objs.name(long_name)}" is invalid: [name: Too long: '
                       'may not be more than 63 bytes, spec.fsGroupPolicy: Unsupported value: "Sometimes": '
                       'supported values: "ReadWriteOnceWithFSType", "File", "None"]')
    driver["spec"]["attachRequired"] = False
    with pytest.raises(errors.Invalid) as caught:
        await client.update(client.kind(STORAGE, "CSIDriver"), driver)
    assert caught.value.message.endswith("spec.attachRequired: Invalid value: false: field is immutable")


async def test_csi_node_storage_capacity_and_volume_attachment(client: Client, namespace: str,
                                                               objs: Objects) -> None:
    node = await objs.create(STORAGE, "CSINode", "n", spec={"drivers": [
        {"name": "csi.example.com", "nodeID": "n-1", "topologyKeys": ["topology.example.com/zone"]}]})
    assert node["spec"]["drivers"][0]["nodeID"] == "n-1"
    message = await invalid(objs, STORAGE, "CSINode", "m", spec={"drivers": [{"name": "csi.example.com"}]})
    assert message.endswith("spec.drivers[0].nodeID: Required value: nodeID of csi.example.com must be provided")

    cap_rt = client.kind(STORAGE, "CSIStorageCapacity")
    cap = await client.create(cap_rt, {"metadata": {"name": "cap"}, "storageClassName": "fast",
                                       "capacity": "10Gi", "nodeTopology": {"matchLabels": {"zone": "a"}}}, namespace)
    cap["capacity"] = "5Gi"
    assert (await client.update(cap_rt, cap))["capacity"] == "5Gi"
    with pytest.raises(errors.Invalid) as caught:
        await client.create(cap_rt, {"metadata": {"name": "neg"}, "storageClassName": "fast", "capacity": "-1"},
                            namespace)
    assert caught.value.message == ('CSIStorageCapacity.storage.k8s.io "neg" is invalid: capacity: '
                                    'Invalid value: "-1": must be greater than or equal to 0')

    va = await objs.create(STORAGE, "VolumeAttachment", "va", spec={
        "attacher": "csi.example.com", "nodeName": "n1", "source": {"persistentVolumeName": "pv1"}})
    va_rt = client.kind(STORAGE, "VolumeAttachment")
    va["status"] = {"attached": True, "attachmentMetadata": {"dev": "/dev/sdb"}}
    updated = await client.update(va_rt, va, subresource="status")
    assert updated["status"]["attached"] is True
    message = await invalid(objs, STORAGE, "VolumeAttachment", "nosrc", spec={"attacher": "csi.example.com",
                                                                            "nodeName": "n1", "source": {}})
    assert message.endswith("spec.source: Required value: must specify exactly one of inlineVolumeSpec and "
                            "persistentVolumeName")
    updated["spec"]["nodeName"] = "n2"
    with pytest.raises(errors.Invalid) as caught:
        await client.update(va_rt, updated)
    assert caught.value.message.endswith("spec: Invalid value: field is immutable")


# ---------------------------------------------------------------- the kubelet
@pytest.mark.docker
async def test_kubelet_keeps_its_csi_node(kubelet: KubeletProcess, client: Client) -> None:
    rt = client.kind(STORAGE, "CSINode")
    node = await client.get(client.kind("v1", "Node"), kubelet.node)
    csi_node = await wait_for(lambda: _get_or_none(client, rt, kubelet.node), what="the kubelet's CSINode")
    assert csi_node["spec"] == {"drivers": []}
    assert csi_node["metadata"]["ownerReferences"] == [{"apiVersion": "v1", "kind": "Node", "name": kubelet.node,
                                                        "uid": node["metadata"]["uid"]}]
    assert "kubernetes.io/gce-pd" in csi_node["metadata"]["annotations"][
        "storage.alpha.kubernetes.io/migrated-plugins"]
    await client.delete(rt, kubelet.node)
    await wait_for(lambda: _get_or_none(client, rt, kubelet.node), timeout=30, what="the CSINode re-created")


@pytest.mark.docker
async def test_kubelet_runs_known_handlers_and_refuses_unknown_ones(kubelet: KubeletProcess, client: Client,
                                                                    namespace: str, objs: Objects) -> None:
    await objs.create(NODE, "RuntimeClass", "runc", handler="runc")
    await objs.create(NODE, "RuntimeClass", "kata", handler="kata")
    sleeper = [{"name": "main", "image": BUSYBOX, "command": ["sleep", "3600"]}]
    await create_pod(client, namespace, pod_body("good", kubelet.node, sleeper, runtimeClassName=objs.name("runc")))
    await create_pod(client, namespace, pod_body("bad", kubelet.node, sleeper, runtimeClassName=objs.name("kata")))
    await wait_phase(client, namespace, "good", "Running")

    async def refused() -> Obj | None:
        return next((e for e in await events_of(client, namespace, "bad")
                     if e["reason"] == "FailedCreatePodSandBox"), None)

    event = await wait_for(refused, what="FailedCreatePodSandBox")
    assert event["type"] == "Warning"
    assert event["message"] == 'Failed to create pod sandbox: RuntimeHandler "kata" not supported'
    pod = await get_pod(client, namespace, "bad")
    assert pod["status"]["phase"] == "Pending"
    waiting = pod["status"]["containerStatuses"][0]["state"]["waiting"]
    assert waiting["reason"] == "ContainerCreating"
