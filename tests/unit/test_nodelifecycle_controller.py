"""The node lifecycle controller's sync on a fake clock, against an in-memory stand-in for the API.

The stand-in answers the four writes the controller makes (Node status and taint patches,
pod status updates, pod deletes) and feeds the results back into the informer caches, as
the watch would.  Events are captured instead of sent.  No service is involved.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Any

import pytest

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.api.patch import json_merge_patch
from minik8s.api.resourcetypes import ResourceType
from minik8s.apiserver.defaulttolerationseconds import DefaultTolerationSeconds
from minik8s.client.factory import SharedInformerFactory
from minik8s.client.kubeconfig import ClientConfig
from minik8s.client.rest import Client
from minik8s.controllers.nodelifecycle import (
    TAINT_UNREACHABLE,
    NodeLifecycleController,
    NodeLifecycleOptions,
    format_time,
)

T0 = dt.datetime(2026, 1, 2, 3, 4, 0, tzinfo=dt.UTC)


class FakeClock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> dt.datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += dt.timedelta(seconds=seconds)


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []

    async def record(self, obj: Obj, type_: str, reason: str, message: str, field_path: str | None = None) -> None:
        self.events.append((obj["metadata"]["name"], reason, message))


class MemoryAPI(Client):
    """Writes land in the controller's informers (what the watch would deliver); nothing goes on the wire."""

    def __init__(self) -> None:
        super().__init__(ClientConfig(server="http://127.0.0.1:9"))
        self.factory = SharedInformerFactory(self)
        self.deleted: list[str] = []
        self.rv = 1
        self.down = False  # the apiserver does not answer

    def put(self, obj: Obj) -> Obj:
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)
        informer = self.factory.for_kind(obj["apiVersion"], obj["kind"])
        informer._upsert(obj)  # the watch event
        return obj

    def check(self) -> None:
        if self.down:
            raise errors.ServiceUnavailable("cannot reach the apiserver")

    async def get(self, rt: ResourceType, name: str, namespace: str | None = None,
                  subresource: str | None = None) -> dict[str, Any]:
        self.check()
        found = self.factory.informer(rt).get(f"{namespace}/{name}" if namespace else name)
        if found is None:
            raise errors.NotFound(f"{name} not found")
        return found

    async def patch(self, rt: ResourceType, name: str, patch: Any, namespace: str | None = None,
                    patch_type: str = "merge", subresource: str | None = None) -> dict[str, Any]:
        self.check()
        current = self.factory.informer(rt).get(f"{namespace}/{name}" if namespace else name)
        assert current is not None
        if patch_type == "strategic":  # a pod's condition (by type) before its eviction, UID as precondition
            assert subresource == "status" and patch["metadata"] == {"uid": current["metadata"]["uid"]}
            added = {c["type"]: c for c in patch["status"]["conditions"]}
            conditions = [c for c in (current.get("status") or {}).get("conditions") or [] if c["type"] not in added]
            return self.put({**current, "status": {**(current.get("status") or {}),
                                                   "conditions": conditions + list(added.values())}})
        assert patch["metadata"]["resourceVersion"] == current["metadata"]["resourceVersion"]
        body = dict(patch)
        body.pop("metadata")
        assert set(body) == ({"status"} if subresource == "status" else {"spec"})
        return self.put(json_merge_patch(current, body))

    async def update(self, rt: ResourceType, obj: dict[str, Any], subresource: str | None = None) -> dict[str, Any]:
        assert subresource == "status"
        return self.put(obj)

    async def delete(self, rt: ResourceType, name: str, namespace: str | None = None, *,
                     grace_period_seconds: int | None = None, propagation_policy: str | None = None,
                     preconditions: dict[str, str] | None = None) -> dict[str, Any]:
        pod = self.factory.informer(rt).get(f"{namespace}/{name}")
        assert pod is not None and preconditions == {"uid": pod["metadata"]["uid"]}
        self.deleted.append(name)
        pod = {**pod, "metadata": {**pod["metadata"], "deletionTimestamp": "2026-01-02T00:00:00Z"}}
        return self.put(pod)


class Controller(NodeLifecycleController):
    """Records requeue delays instead of arming timers; :meth:`sync` lets the event tasks run."""

    requeues: list[float]

    def enqueue_after(self, key: str, delay: float) -> None:
        self.requeues.append(delay)

    async def sync(self, key: str) -> None:
        await super().sync(key)
        await asyncio.sleep(0)


def make(rate: float = 0.1) -> tuple[MemoryAPI, Controller, FakeClock, Recorder, Recorder]:
    api, clock, node_events, pod_events = MemoryAPI(), FakeClock(), Recorder(), Recorder()
    options = NodeLifecycleOptions(node_monitor_grace_period=40, node_eviction_rate=rate)
    controller = Controller(api, api.factory, options, recorder=node_events, clock=clock)  # type: ignore[arg-type]
    controller.eviction_recorder = pod_events  # type: ignore[assignment]
    controller.requeues = []
    return api, controller, clock, node_events, pod_events


def add_node(api: MemoryAPI, name: str, clock: FakeClock) -> None:
    api.put({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "uid": f"uid-{name}"},
             "spec": {}, "status": {"conditions": [
                 {"type": "Ready", "status": "True", "reason": "KubeletReady",
                  "lastHeartbeatTime": format_time(clock()), "lastTransitionTime": format_time(clock())}]}})
    renew(api, name, clock)


def renew(api: MemoryAPI, name: str, clock: FakeClock) -> None:
    api.put({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
             "metadata": {"name": name, "namespace": "kube-node-lease"},
             "spec": {"holderIdentity": name, "renewTime": clock().strftime("%Y-%m-%dT%H:%M:%S.%fZ")}})


def add_pod(api: MemoryAPI, name: str, node: str, tolerations: list[Obj] | None = None,
            admitted: bool = True) -> None:
    """A Running pod on ``node``; ``admitted``: with the tolerations the apiserver's
    DefaultTolerationSeconds plugin adds to every pod created through it (300 s)."""
    pod: Obj = {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"},
                "spec": {"nodeName": node, "tolerations": tolerations or []},
                "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}
    if admitted:
        DefaultTolerationSeconds().admit(pod)
    api.put(pod)


def node_of(api: MemoryAPI, name: str) -> Obj:
    node = api.factory.for_kind("v1", "Node").get(name)
    assert node is not None
    return node


def pod_ready(api: MemoryAPI, name: str) -> str:
    pod = api.factory.for_kind("v1", "Pod").get(f"ns/{name}")
    assert pod is not None
    return next(c["status"] for c in pod["status"]["conditions"] if c["type"] == "Ready")


def toleration(seconds: int | None) -> Obj:
    t: Obj = {"key": TAINT_UNREACHABLE, "operator": "Exists", "effect": "NoExecute"}
    if seconds is not None:
        t["tolerationSeconds"] = seconds
    return t


async def test_a_silent_node_is_marked_tainted_and_emptied_on_schedule() -> None:
    api, controller, clock, node_events, pod_events = make()
    add_node(api, "n1", clock)
    add_pod(api, "plain", "n1")
    add_pod(api, "none", "n1", [{"key": TAINT_UNREACHABLE, "operator": "Exists", "effect": "NoSchedule"}])
    add_pod(api, "five", "n1", [toleration(5)])
    add_pod(api, "forever", "n1", [toleration(None)])
    add_pod(api, "bare", "n1", admitted=False)  # DefaultTolerationSeconds disabled: no tolerations
    await controller.sync("n1")
    assert controller.requeues[-1] == 5  # --node-monitor-period

    clock.advance(30)
    renew(api, "n1", clock)
    await controller.sync("n1")
    clock.advance(39)
    await controller.sync("n1")
    assert controller.requeues[-1] == 1  # exactly when the grace period runs out
    assert not (node_of(api, "n1")["spec"].get("taints"))

    clock.advance(1)
    await controller.sync("n1")
    node = node_of(api, "n1")
    ready = next(c for c in node["status"]["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"]) == ("Unknown", "NodeStatusUnknown")
    assert [(t["key"], t["effect"]) for t in node["spec"]["taints"]] == [
        (TAINT_UNREACHABLE, "NoSchedule"), (TAINT_UNREACHABLE, "NoExecute")]
    assert ("n1", "NodeNotReady", "Node n1 status is now: NodeNotReady") in node_events.events
    assert all(pod_ready(api, p) == "False" for p in ("plain", "none", "five", "forever"))
    # only the pod's own tolerations count: one without any goes at once (Kubernetes without the plugin)
    assert api.deleted == ["bare"] and controller.requeues[-1] == 5
    bare = api.factory.for_kind("v1", "Pod").get("ns/bare")
    assert bare is not None  # given the DisruptionTarget condition before the delete
    assert [(c["status"], c["reason"]) for c in bare["status"]["conditions"]
            if c["type"] == "DisruptionTarget"] == [("True", "DeletionByTaintManager")]

    clock.advance(5)
    await controller.sync("n1")
    assert api.deleted == ["bare", "five"]
    assert ("five", "TaintManagerEviction", "Marking for deletion Pod ns/five") in pod_events.events
    clock.advance(294)
    await controller.sync("n1")
    assert controller.requeues[-1] == 1 and api.deleted == ["bare", "five"]
    clock.advance(1)
    await controller.sync("n1")
    # the admitted pods' default 300 s unreachable toleration runs out
    assert sorted(api.deleted) == ["bare", "five", "none", "plain"]

    # the kubelet comes back: renews its Lease and posts Ready=True
    clock.advance(10)
    renew(api, "n1", clock)
    node = node_of(api, "n1")
    node["status"]["conditions"] = [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                     "lastHeartbeatTime": format_time(clock()),
                                     "lastTransitionTime": format_time(clock())}]
    api.put(node)
    await controller.sync("n1")
    assert not node_of(api, "n1")["spec"].get("taints")
    assert sorted(api.deleted) == ["bare", "five", "none", "plain"]  # "forever" stays


async def test_pending_evictions_are_cancelled_when_the_node_comes_back() -> None:
    api, controller, clock, _, pod_events = make()
    add_node(api, "n1", clock)
    add_pod(api, "plain", "n1")
    await controller.sync("n1")
    clock.advance(41)
    await controller.sync("n1")
    assert controller.requeues[-1] == 5 and not api.deleted
    renew(api, "n1", clock)
    node = node_of(api, "n1")
    node["status"]["conditions"][0].update(status="True", lastHeartbeatTime=format_time(clock()))
    api.put(node)
    await controller.sync("n1")
    assert ("plain", "TaintManagerEviction", "Cancelling deletion of Pod ns/plain") in pod_events.events
    assert not api.deleted and not node_of(api, "n1")["spec"].get("taints")


async def test_the_eviction_rate_spaces_out_new_no_execute_taints() -> None:
    api, controller, clock, _, _ = make(rate=0.1)
    for name in ("a", "b"):
        add_node(api, name, clock)
        await controller.sync(name)
    clock.advance(41)
    await controller.sync("a")
    await controller.sync("b")

    def effects(name: str) -> list[str]:
        return [t["effect"] for t in node_of(api, name)["spec"].get("taints") or []]

    assert effects("a") == ["NoSchedule", "NoExecute"]
    assert effects("b") == ["NoSchedule"] and controller.requeues[-1] == 5
    clock.advance(9)
    await controller.sync("b")
    assert effects("b") == ["NoSchedule"] and controller.requeues[-1] == pytest.approx(1)
    clock.advance(1)
    await controller.sync("b")
    assert effects("b") == ["NoSchedule", "NoExecute"]


async def test_pods_not_tolerating_a_no_execute_taint_go_at_once() -> None:
    api, controller, clock, _, pod_events = make()
    add_node(api, "n1", clock)
    add_pod(api, "plain", "n1")
    add_pod(api, "tolerant", "n1", [{"key": "maintenance", "operator": "Exists"}])
    await controller.sync("n1")
    node = node_of(api, "n1")
    node["spec"]["taints"] = [{"key": "maintenance", "effect": "NoExecute"}]  # kubectl taint, no timeAdded
    api.put(node)
    await controller.sync("n1")
    assert api.deleted == ["plain"] and pod_ready(api, "tolerant") == "True"  # the node itself is fine
    assert ("plain", "TaintManagerEviction", "Marking for deletion Pod ns/plain") in pod_events.events
    assert node_of(api, "n1")["spec"]["taints"] == [{"key": "maintenance", "effect": "NoExecute"}]


async def test_an_apiserver_outage_does_not_make_every_node_look_dead() -> None:
    api, controller, clock, node_events, _ = make()
    add_node(api, "n1", clock)
    add_pod(api, "plain", "n1")
    await controller.sync("n1")
    clock.advance(10)
    api.down = True  # the kubelet cannot renew its Lease from now on, nor can the controller write
    clock.advance(35)
    with pytest.raises(errors.ServiceUnavailable):
        await controller.sync("n1")
    clock.advance(20)
    api.down = False  # back at t=65; the kubelet renews within its next 10 s
    await controller.sync("n1")
    node = node_of(api, "n1")
    assert node["status"]["conditions"][0]["status"] == "True" and not node["spec"].get("taints")
    assert controller.requeues[-1] == 5 and pod_ready(api, "plain") == "True" and not node_events.events
    clock.advance(5)
    renew(api, "n1", clock)
    await controller.sync("n1")
    clock.advance(39)
    await controller.sync("n1")
    assert not node_of(api, "n1")["spec"].get("taints")
    clock.advance(1)  # a node that stays silent is judged again on a whole grace period
    await controller.sync("n1")
    assert node_of(api, "n1")["status"]["conditions"][0]["status"] == "Unknown"
