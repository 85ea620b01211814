"""Hollow nodes: a SIMULATOR of many kubelets in one asyncio process (kubemark / KWOK style).

Nothing runs: no containers, no network, no volumes.  What the rest of the cluster sees is
real API objects, written the way the kubelet writes them, so the apiserver, scheduler and
controllers can be measured at a scale one machine could never host:

- **Nodes** ``<prefix><i>`` (``hollow-0`` ... ``hollow-<N-1>``), labelled
  ``kubernetes.io/hostname``, ``kubernetes.io/os``/``arch`` and ``minik8s.io/hollow=true``,
  registered with the taint ``minik8s.io/hollow=true:NoSchedule`` so only pods that tolerate
  it land on them.  ``status``: ``capacity`` = ``allocatable`` (cpu, memory, pods;
  a kubemark node's 110 pods by default), ``nodeInfo`` (kubelet version
  ``<version>-hollow``, runtime ``hollow://``), an InternalIP from 198.18.0.0/15 (the
  benchmarking range of RFC 2544, never routed) and the conditions MemoryPressure,
  DiskPressure, PIDPressure (False) and Ready — False (``KubeletNotReady``) until the node
  IPAM controller gave the Node a ``spec.podCIDR``, then True (``KubeletReady``), as the real
  kubelet reports a node without a pod network.  Status is posted on registration, when the
  podCIDR arrives and every ``status_period`` seconds.
- **Leases** ``kube-node-lease/<node>``, renewed every quarter of their duration through the
  kubelet's own :class:`~minik8s.client.nodeheartbeat.NodeLease`: created right after the
  Node, then renewed on timers spread over one interval so N nodes do not renew in lock step.
- **Pods** bound to a hollow node are "run" by writing their status through the ``status``
  subresource: phase Running, PodReadyToStartContainers/Initialized/ContainersReady/Ready
  True, ``podIP`` the next free address of the node's podCIDR, ``hostIP`` the node's, each
  container running and ready with ``containerID`` ``hollow://<hex>`` (init containers
  terminated with reason Completed).  A pod being deleted (``deletionTimestamp``) has no
  containers to stop, so its termination finishes at once: DELETE with grace period 0 and a
  uid precondition, as the kubelet does once its containers are gone; its IP is released.

One shared pod informer watches every bound pod (``fieldSelector=spec.nodeName!=``) and one
Node informer the hollow Nodes (``labelSelector=minik8s.io/hollow=true``); handlers only
enqueue keys for a few workers.  Pods bound to other nodes are ignored.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import os
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from minik8s.api import errors
from minik8s.api.base import Obj, now_rfc3339, object_key
from minik8s.client.informer import Informer, pods_by_node
from minik8s.client.nodeheartbeat import DEFAULT_LEASE_DURATION_SECONDS, NodeLease, condition
from minik8s.client.rest import Client
from minik8s.client.workqueue import WorkQueue, run_workers

log = logging.getLogger("hollow-node")

HOLLOW_LABEL = "minik8s.io/hollow"
HOLLOW_TAINT = {"key": HOLLOW_LABEL, "value": "true", "effect": "NoSchedule"}
#: The Kubernetes version the hollow kubelets report (``nodeInfo.kubeletVersion``), marked as hollow.
HOLLOW_VERSION = "v1.32.0-minik8s-hollow"
NODE_IP_RANGE = ipaddress.IPv4Network("198.18.0.0/15")
DEFAULT_CAPACITY = {"cpu": "4", "memory": "16Gi", "pods": "110"}
#: simulated nodes sharing one heartbeat client, and that client's requests in flight
NODES_PER_CLIENT = 100
NODE_CLIENT_INFLIGHT = 8


@dataclass
class HollowConfig:
    """What :class:`HollowNodes` simulates.  ``capacity`` maps resource → quantity (cpu, memory,
    pods); periods are seconds."""

    count: int
    name_prefix: str = "hollow-"
    capacity: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_CAPACITY))
    lease_duration: int = DEFAULT_LEASE_DURATION_SECONDS
    status_period: float = 60.0
    workers: int = 8
    register_concurrency: int = 16


def node_ip(index: int) -> str:
    """The InternalIP of hollow node ``index``: 198.18.0.1 onwards (RFC 2544's benchmarking range)."""
    return str(NODE_IP_RANGE.network_address + 1 + index)


def pod_status(pod: Obj, pod_ip: str, host_ip: str, now: str) -> Obj:
    """The status a kubelet reports for ``pod`` once every container runs and is ready."""
    spec = pod.get("spec") or {}
    old = pod.get("status") or {}
    old_conds = old.get("conditions") or []
    conds = [c for c in old_conds if c.get("type") == "PodScheduled"]
    for ctype in ("PodReadyToStartContainers", "Initialized", "ContainersReady", "Ready"):
        prev = next((c for c in old_conds if c.get("type") == ctype), None)
        since = prev["lastTransitionTime"] if prev and prev.get("status") == "True" else now
        conds.append({"type": ctype, "status": "True", "lastProbeTime": None, "lastTransitionTime": since})
    uid = (pod.get("metadata") or {}).get("uid", "")

    def cid(name: str) -> str:
        return "hollow://" + (uid.replace("-", "") + name.encode().hex())[:64]

    status: Obj = {
        "phase": "Running", "conditions": conds, "hostIP": host_ip, "hostIPs": [{"ip": host_ip}],
        "podIP": pod_ip, "podIPs": [{"ip": pod_ip}], "startTime": old.get("startTime") or now,
        "containerStatuses": [
            {"name": c["name"], "image": c.get("image", ""), "imageID": "", "containerID": cid(c["name"]),
             "ready": True, "started": True, "restartCount": 0, "state": {"running": {"startedAt": now}},
             "lastState": {}}
            for c in spec.get("containers") or []],
    }
    if spec.get("initContainers"):
        status["initContainerStatuses"] = [
            {"name": c["name"], "image": c.get("image", ""), "imageID": "", "containerID": cid(c["name"]),
             "ready": True, "started": False, "restartCount": 0, "lastState": {},
             "state": {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": now, "finishedAt": now,
                                      "containerID": cid(c["name"])}}}
            for c in spec["initContainers"]]
    if old.get("qosClass"):
        status["qosClass"] = old["qosClass"]
    return status


def is_running(pod: Obj) -> bool:
    """Whether ``pod`` already shows what a hollow node reports (Running with a podIP)."""
    status = pod.get("status") or {}
    return status.get("phase") == "Running" and bool(status.get("podIP"))


class PodIPs:
    """Addresses handed out from one node's podCIDR (the network and first address skipped, as
    the bridge takes ``.1``); ``assign`` is idempotent per pod uid."""

    def __init__(self, cidr: str) -> None:
        self.network = ipaddress.ip_network(cidr, strict=False)
        self.by_uid: dict[str, str] = {}
        self.used: set[str] = set()
        self._next = 2

    def keep(self, uid: str, ip: str) -> bool:
        """Record an address a pod already has (after a restart); False when outside the CIDR."""
        try:
            if ipaddress.ip_address(ip) not in self.network:
                return False
        except ValueError:
            return False
        self.by_uid[uid] = ip
        self.used.add(ip)
        return True

    def assign(self, uid: str) -> str:
        """The pod's address; raises RuntimeError when the CIDR is full."""
        if uid in self.by_uid:
            return self.by_uid[uid]
        size = self.network.num_addresses
        for _ in range(size):
            if self._next >= size - 1:
                self._next = 2
            ip = str(self.network.network_address + self._next)
            self._next += 1
            if ip not in self.used:
                self.by_uid[uid] = ip
                self.used.add(ip)
                return ip
        raise RuntimeError(f"podCIDR {self.network} has no free address")

    def release(self, uid: str) -> None:
        ip = self.by_uid.pop(uid, None)
        if ip:
            self.used.discard(ip)


@dataclass
class HollowNode:
    """One simulated node's state; ``client`` is its share of the heartbeat clients."""

    name: str
    index: int
    ip: str
    lease: NodeLease
    client: Client
    node: Obj | None = None
    ips: PodIPs | None = None


def _uid_of(hollow: HollowNode) -> Callable[[], str | None]:
    def uid() -> str | None:
        value = ((hollow.node or {}).get("metadata") or {}).get("uid")
        return str(value) if value else None
    return uid


class HollowNodes:
    """``config.count`` simulated nodes on ``client``.  ``await run(stop)`` registers them and keeps
    them (and their pods) current until ``stop`` is set; :attr:`ready` is set once every Node
    is registered.  The Nodes stay behind when it stops (as a stopped kubelet's do)."""

    def __init__(self, client: Client, config: HollowConfig) -> None:
        self.client = client
        self.config = config
        self.nodes_rt = client.kind("v1", "Node")
        self.pods_rt = client.kind("v1", "Pod")
        self.nodes: dict[str, HollowNode] = {}
        #: the nodes' registrations, status posts and Lease renewals go through clients of their own,
        #: NODES_PER_CLIENT nodes each (a real kubelet has its own connection): one client for 1,000
        #: nodes would spend its CPU in its connection pool, and pod status writes (``client``) would
        #: wait behind the heartbeats
        self.node_clients = [Client(client.config, registry=client.registry, max_inflight=NODE_CLIENT_INFLIGHT)
                             for _ in range(-(-config.count // NODES_PER_CLIENT))]
        for i in range(config.count):
            name = f"{config.name_prefix}{i}"
            node_client = self.node_clients[i // NODES_PER_CLIENT]
            hollow = HollowNode(name, i, node_ip(i), NodeLease(node_client, name, config.lease_duration), node_client)
            hollow.lease.node_uid = _uid_of(hollow)
            self.nodes[name] = hollow
        self.node_informer = Informer(client, self.nodes_rt, label_selector=f"{HOLLOW_LABEL}=true")
        self.pod_informer = Informer(client, self.pods_rt, field_selector="spec.nodeName!=")
        self.queue = WorkQueue("hollow-pods", base_delay=0.2, max_delay=10.0)
        self.ready = asyncio.Event()
        self.stats = {"started": 0, "deleted": 0}
        self._posts: set[asyncio.Task[None]] = set()

    # ------------------------------------------------------------------ nodes
    def labels(self, hollow: HollowNode) -> dict[str, str]:
        return {"kubernetes.io/hostname": hollow.name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
                "beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64", HOLLOW_LABEL: "true"}

    def node_status(self, hollow: HollowNode) -> Obj:
        """The Node ``status`` to post: Ready once the Node has a podCIDR."""
        now = now_rfc3339()
        old = ((hollow.node or {}).get("status") or {}).get("conditions") or []
        cap = dict(self.config.capacity)
        conds = [
            condition(old, "MemoryPressure", "False", "KubeletHasSufficientMemory",
                      "kubelet has sufficient memory available", now),
            condition(old, "DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure", now),
            condition(old, "PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available",
                      now),
        ]
        if hollow.ips is None:
            conds.append(condition(old, "Ready", "False", "KubeletNotReady",
                                   "container runtime network not ready: NetworkReady=false "
                                   "reason:NetworkPluginNotReady message:waiting for the Node's spec.podCIDR "
                                   "(node IPAM controller)", now))
        else:
            conds.append(condition(old, "Ready", "True", "KubeletReady",
                                   "kubelet is posting ready status (hollow node: a simulator)", now))
        return {"capacity": cap, "allocatable": dict(cap), "conditions": conds,
                "addresses": [{"type": "InternalIP", "address": hollow.ip},
                              {"type": "Hostname", "address": hollow.name}],
                "daemonEndpoints": {"kubeletEndpoint": {"Port": 0}},
                "nodeInfo": {"machineID": "", "systemUUID": "", "bootID": "", "kernelVersion": "hollow",
                             "osImage": "minik8s hollow node (simulator)", "containerRuntimeVersion": "hollow://0",
                             "kubeletVersion": HOLLOW_VERSION, "kubeProxyVersion": HOLLOW_VERSION,
                             "operatingSystem": "linux", "architecture": "amd64"}}

    async def register(self, hollow: HollowNode) -> None:
        """Create the Node (or add the hollow labels to an existing one), then post its status."""
        body = {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": hollow.name, "labels": self.labels(hollow)},
                "spec": {"taints": [dict(HOLLOW_TAINT)]}}
        try:
            hollow.node = await hollow.client.create(self.nodes_rt, body)
        except errors.AlreadyExists:
            hollow.node = await hollow.client.patch(self.nodes_rt, hollow.name,
                                                  {"metadata": {"labels": self.labels(hollow)}})
        self._follow_cidr(hollow, hollow.node)
        await self.post_status(hollow)

    async def post_status(self, hollow: HollowNode) -> None:
        """Merge-patch the Node's status (re-registering it when it was deleted)."""
        try:
            hollow.node = await hollow.client.patch(self.nodes_rt, hollow.name, {"status": self.node_status(hollow)},
                                                    subresource="status")
        except errors.NotFound:
            log.warning("hollow node=%s was deleted; registering again", hollow.name)
            await self.register(hollow)

    def _follow_cidr(self, hollow: HollowNode, node: Obj | None) -> bool:
        """Adopt the Node's podCIDR when it first appears; True when it did."""
        spec = (node or {}).get("spec") or {}
        cidr = spec.get("podCIDR") or next(iter(spec.get("podCIDRs") or []), None)
        if not cidr or hollow.ips is not None:
            return False
        try:
            hollow.ips = PodIPs(cidr)
        except ValueError:
            log.warning("hollow node=%s ignores its podCIDR %r", hollow.name, cidr)
            return False
        for pod in self.pod_informer.by_index("node", hollow.name) if self.pod_informer.has_synced() else []:
            ip = (pod.get("status") or {}).get("podIP")
            if ip:
                hollow.ips.keep(pod["metadata"].get("uid", ""), ip)
            self.queue.add(object_key(pod))
        return True

    def _on_node(self, node: Obj) -> None:
        hollow = self.nodes.get(node["metadata"]["name"])
        if hollow is not None and self._follow_cidr(hollow, node):
            # Ready now: say so at once (retried: a 429 here would leave it NotReady a status period)
            task = asyncio.get_running_loop().create_task(self._post_quietly(hollow, attempts=5))
            self._posts.add(task)  # keep a reference until it is done
            task.add_done_callback(self._posts.discard)

    async def _post_quietly(self, hollow: HollowNode, attempts: int = 1) -> None:
        """Post the status, ``attempts`` times 1 s apart at most; failures are only logged (the
        status loop posts again)."""
        for attempt in range(attempts):
            try:
                await self.post_status(hollow)
                return
            except Exception as exc:  # noqa: BLE001 - the status loop tries again
                log.warning("hollow node=%s status update failed: %s", hollow.name, exc)
            if attempt + 1 < attempts:
                await asyncio.sleep(1.0)

    async def _status_loop(self, hollow: HollowNode, stop: asyncio.Event) -> None:
        period = self.config.status_period
        delay = random.uniform(0, period)
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), delay)
                return
            await self._post_quietly(hollow)
            delay = period

    async def _register_all(self, stop: asyncio.Event) -> None:
        gate = asyncio.Semaphore(self.config.register_concurrency)

        async def one(hollow: HollowNode) -> None:
            delay = 0.5
            async with gate:
                while not stop.is_set():
                    try:
                        await self.register(hollow)
                        await hollow.lease.renew()  # the Lease exists as soon as the Node does
                        return
                    except Exception as exc:  # noqa: BLE001 - retried with back-off
                        log.warning("hollow node=%s registration failed (retry in %.1fs): %s", hollow.name,
                                    delay, exc)
                        with contextlib.suppress(TimeoutError):
                            await asyncio.wait_for(stop.wait(), delay)
                        delay = min(delay * 2, 10.0)

        await asyncio.gather(*(one(h) for h in self.nodes.values()))

    # ------------------------------------------------------------------ pods
    def _pod_node(self, pod: Obj) -> HollowNode | None:
        return self.nodes.get((pod.get("spec") or {}).get("nodeName") or "")

    def _on_pod(self, pod: Obj) -> None:
        if self._pod_node(pod) is not None:
            self.queue.add(object_key(pod))

    def _on_pod_deleted(self, pod: Obj) -> None:
        hollow = self._pod_node(pod)
        if hollow is not None and hollow.ips is not None:
            hollow.ips.release(pod["metadata"].get("uid", ""))

    async def sync_pod(self, key: str) -> None:
        """Bring one pod to Running (or finish its deletion).  Raises API errors to be retried."""
        pod = self.pod_informer.get(key)
        if pod is None:
            return
        hollow = self._pod_node(pod)
        if hollow is None:
            return
        meta = pod["metadata"]
        uid = meta.get("uid", "")
        if meta.get("deletionTimestamp"):
            try:
                await self.client.delete(self.pods_rt, meta["name"], meta["namespace"], grace_period_seconds=0,
                                         preconditions={"uid": uid})
                self.stats["deleted"] += 1
            except (errors.NotFound, errors.Conflict):
                pass
            if hollow.ips is not None:
                hollow.ips.release(uid)
            return
        phase = (pod.get("status") or {}).get("phase")
        if phase in ("Succeeded", "Failed"):
            return
        if hollow.ips is None:
            self.queue.add_after(key, 1.0)  # no pod network yet: the pod waits, as on a real node
            return
        ip = (pod.get("status") or {}).get("podIP")
        if is_running(pod) and ip and hollow.ips.keep(uid, ip):
            return
        status = pod_status(pod, hollow.ips.assign(uid), hollow.ip, now_rfc3339())
        try:
            await self.client.patch(self.pods_rt, meta["name"], {"status": status}, meta["namespace"],
                                    subresource="status")
            self.stats["started"] += 1
        except errors.NotFound:
            hollow.ips.release(uid)

    # ------------------------------------------------------------------ run
    async def run(self, stop: asyncio.Event | None = None) -> None:
        """Run until ``stop`` is set (or forever)."""
        stop = stop or asyncio.Event()
        loop = asyncio.get_running_loop()
        self.pod_informer.add_indexer("node", pods_by_node)
        self.node_informer.add_handler(on_add=self._on_node, on_update=lambda _old, new: self._on_node(new))
        self.pod_informer.add_handler(on_add=self._on_pod, on_update=lambda _old, new: self._on_pod(new),
                                      on_delete=self._on_pod_deleted)
        tasks: list[asyncio.Task[Any]] = [
            loop.create_task(self.pod_informer.run(), name="hollow-pod-informer"),
        ]
        try:
            await self.pod_informer.wait_synced()
            await self._register_all(stop)
            if stop.is_set():
                return
            interval = max(self.config.lease_duration / 4, 0.5)
            tasks.append(loop.create_task(self.node_informer.run(), name="hollow-node-informer"))
            for hollow in self.nodes.values():
                tasks.append(loop.create_task(hollow.lease.run(stop, random.uniform(0, interval))))
                tasks.append(loop.create_task(self._status_loop(hollow, stop)))
            tasks.append(loop.create_task(run_workers(self.queue, self.sync_pod, self.config.workers,
                                                      "hollow-node")))
            self.ready.set()
            log.info("hollow-node: %d simulated nodes registered (%s0 ... %s%d), pid %d", len(self.nodes),
                     self.config.name_prefix, self.config.name_prefix, len(self.nodes) - 1, os.getpid())
            await stop.wait()
        finally:
            self.queue.shutdown()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for node_client in self.node_clients:
                await node_client.close()
            log.info("hollow-node: stopped (pods started %d, deletions finished %d)", self.stats["started"],
                     self.stats["deleted"])
