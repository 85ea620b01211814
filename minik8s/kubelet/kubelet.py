"""The kubelet process: wires the node agent, the pod informer, the pod workers and the server.

Start-up order (Kubernetes' kubelet does the same in spirit):

1. connect to Docker and start the HTTP server (logs/exec keep working for running pods);
2. register the Node (retrying while the apiserver is away), start the Lease and
   node-status loops and the Node informer;
3. pick the pod CIDR: the Node's ``spec.podCIDR`` when set; else ``--pod-cidr`` when given
   (registration published it); else wait for the node IPAM controller to set it (the Node
   is NotReady meanwhile, and the wait is logged every 10 s); create the pod network
   (:mod:`~minik8s.kubelet.network.bridge`) and start the pod network agent
   (:mod:`~minik8s.kubelet.network.podnetwork`: blackhole, netfilter, routes to the other Nodes);
4. start the pod informer (field selector ``spec.nodeName=<node>``), the ConfigMap and Secret
   informers (a change queues the pods that use the object), the pod workers, the
   Docker event watcher (container ``start``/``die``/``oom`` events queue their pod at once)
   and the housekeeping loop that, once the informer has synced, queues pods that have
   containers but no Pod object and removes pod directories nobody owns.

A later change of this Node's podCIDR re-creates the pod network when no pod uses it
(otherwise it is logged and the old subnet kept).  Stopping the kubelet (SIGTERM) leaves
every pod, route and rule in place; a new kubelet adopts them.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
from typing import Any
from urllib.parse import quote

from minik8s.api import errors
from minik8s.api.base import Obj, object_key
from minik8s.api.storage import pod_claim_names
from minik8s.client.events import EventRecorder
from minik8s.client.informer import Informer
from minik8s.client.kubeconfig import load
from minik8s.client.rest import Client
from minik8s.client.workqueue import WorkQueue, run_workers
from minik8s.host.errors import CommandFailed, HostError
from minik8s.kubelet import naming
from minik8s.kubelet.backoff import Backoff
from minik8s.kubelet.certrotation import ClientCertificateRotator, current_pair
from minik8s.kubelet.config import KubeletConfig, check_cidr
from minik8s.kubelet.configsources import ConfigSources, references
from minik8s.kubelet.hooks import LifecycleHooks
from minik8s.kubelet.images import ImageManager
from minik8s.kubelet.network.bridge import bridge_of, ensure_pod_network, set_hairpin
from minik8s.kubelet.network.podnetwork import PodNetworkAgent
from minik8s.kubelet.network.routes import VXLAN_OVERHEAD
from minik8s.kubelet.node import NodeAgent, capacity, read_meminfo
from minik8s.kubelet.probes import ProbeManager
from minik8s.kubelet.recording import PodEvents
from minik8s.kubelet.runtime import DockerRuntime, RuntimeErrorBase
from minik8s.kubelet.server import create_app, make_server
from minik8s.kubelet.stats import StatsProvider
from minik8s.kubelet.storage import StorageSources
from minik8s.kubelet.sync import PodSyncer
from minik8s.kubelet.tokens import TokenManager
from minik8s.kubelet.volumes import VolumeManager

log = logging.getLogger("kubelet")

HOUSEKEEPING_SECONDS = 10.0
POD_CIDR_PROGRESS_SECONDS = 10.0


def spec_changed(old: Obj, new: Obj) -> bool:
    """Whether two versions of a pod differ in more than ``status`` and ``resourceVersion``."""
    def strip(obj: Obj) -> Obj:
        meta = {k: v for k, v in (obj.get("metadata") or {}).items()
                if k not in ("resourceVersion", "managedFields")}
        return {**{k: v for k, v in obj.items() if k != "status"}, "metadata": meta}
    return strip(old) != strip(new)


def gate_conditions(pod: Obj) -> list[str | None]:
    """The statuses of the pod's ``readinessGates`` conditions, in gate order (None: absent)."""
    conds = {c.get("type"): c.get("status") for c in (pod.get("status") or {}).get("conditions") or []}
    return [conds.get(g.get("conditionType")) for g in (pod.get("spec") or {}).get("readinessGates") or []]


class Kubelet:
    """One node agent.  ``await Kubelet(cfg).run(stop)`` runs until ``stop`` is set."""

    def __init__(self, cfg: KubeletConfig, client: Client | None = None) -> None:
        self.cfg = cfg
        self.client = client or Client(load(cfg.kubeconfig), retries=3)
        self.rotator: ClientCertificateRotator | None = None
        if cfg.rotate_certificates and self.client.config.cert_file:
            current = current_pair(cfg.cert_dir)
            if current is not None:  # the last rotated pair, as the kubelet restarts with it
                self.client.use_client_certificate(str(current), str(current))
            self.rotator = ClientCertificateRotator(self.client, cfg.node_name, cfg.cert_dir,
                                                    str(current or self.client.config.cert_file))
        self.pods_rt = self.client.kind("v1", "Pod")
        self.queue = WorkQueue("kubelet-pods", base_delay=0.5, max_delay=30.0)
        self.informer = Informer(self.client, self.pods_rt, None, field_selector=f"spec.nodeName={cfg.node_name}")
        self.nodes = Informer(self.client, self.client.kind("v1", "Node"))
        self.config_sources = ConfigSources(self.client, self._on_config_change)
        self.storage = StorageSources(self.client, cfg.node_name, cfg.local_path_root, self._on_claim_change)
        self.pod_cidr = cfg.pod_cidr
        self.pod_cidr_known = asyncio.Event()
        self.bridge: str | None = None
        self.runtime: DockerRuntime | None = None
        self.syncer: PodSyncer | None = None
        self.node_agent: NodeAgent | None = None
        self.network_agent = PodNetworkAgent(
            cfg.node_name, cfg.node_ip, cfg.cluster_cidr, cfg.service_cidr, cfg.network_backend, self.nodes.list,
            resync_period=cfg.network_sync_period, bridge=lambda: self.bridge)
        self._network_lock = asyncio.Lock()

    # ------------------------------------------------------------------ PodSource (for the server)
    def pod(self, namespace: str, name: str) -> Obj | None:
        """The cached Pod ``namespace/name`` bound to this node, or None."""
        return self.informer.get(f"{namespace}/{name}")

    def pods(self) -> list[Obj]:
        """Every cached Pod bound to this node."""
        return self.informer.list()

    def pod_status(self, pod: Obj) -> Obj:
        """The freshest status of ``pod``: the last one computed by its worker, else the API's."""
        if self.syncer is not None:
            seen = self.syncer.views.get(pod["metadata"].get("uid", ""))
            if seen is not None:
                return seen[2]
        return pod.get("status") or {}

    # ------------------------------------------------------------------ run
    async def run(self, stop: asyncio.Event | None = None) -> None:
        """Run until ``stop`` is set (or forever).  Raises on fatal start-up errors (Docker, network)."""
        stop = stop or asyncio.Event()
        loop = asyncio.get_running_loop()
        loop.set_default_executor(concurrent.futures.ThreadPoolExecutor(max_workers=64,
                                                                        thread_name_prefix="kubelet"))
        cfg = self.cfg
        cfg.root_dir.mkdir(parents=True, exist_ok=True)
        runtime = await DockerRuntime.connect(cfg.network_name, cfg.image_pull_progress_deadline)
        self.runtime = runtime
        log.info("kubelet node=%s docker=%s root=%s", cfg.node_name, await runtime.version(), cfg.root_dir)

        recorder = EventRecorder(self.client, "kubelet", cfg.node_name)
        events = PodEvents(recorder)
        crash_backoff = Backoff(cfg.crashloop_backoff_base, cfg.crashloop_backoff_max)
        image_backoff = Backoff(cfg.crashloop_backoff_base, cfg.crashloop_backoff_max)
        probes = ProbeManager(runtime, self.queue.add, events.emit)
        self.syncer = PodSyncer(cfg, runtime, self.client, self.queue, self.informer.get,
                                VolumeManager(cfg.root_dir, self.config_sources.get,
                                              lambda: capacity(cfg.root_dir, cfg.max_pods),
                                              TokenManager(self._request_token),
                                              self.storage.claim, self.storage.volume,
                                              local_path=self.storage.local_path),
                                ImageManager(runtime, image_backoff, events.emit, self.config_sources.get),
                                probes, events, crash_backoff, read_meminfo().get("MemTotal", 0),
                                LifecycleHooks(runtime, probes.http, events.emit),
                                lambda: self.informer.has_synced() and self.config_sources.has_synced()
                                and self.storage.has_synced(), self.config_sources.services)

        stats = StatsProvider(runtime, cfg.node_name, self.pods, self.pod_status)
        server = make_server(create_app(self, runtime, stats), cfg.bind_address, cfg.port,
                             cfg.tls_cert_file, cfg.tls_private_key_file, cfg.client_ca_file)
        tasks: list[asyncio.Task[Any]] = [loop.create_task(server.serve(), name="kubelet-server")]
        if self.rotator is not None:
            tasks.append(loop.create_task(self.rotator.run(), name="kubelet-certificate-rotation"))
        docker_stop = threading.Event()
        watcher = None
        try:
            self.node_agent = NodeAgent(cfg, self.client, runtime)
            await self._register(stop)
            if stop.is_set():
                return
            self.nodes.add_handler(on_add=self._on_node, on_update=self._on_node_update, on_delete=self._on_node)
            tasks += [
                loop.create_task(self.node_agent.run_lease(), name="kubelet-lease"),
                loop.create_task(self.node_agent.run_status(), name="kubelet-node-status"),
                loop.create_task(self.nodes.run(), name="kubelet-node-informer"),
            ]
            cidr = await self._await_pod_cidr(stop, tasks)
            if cidr is None:
                return
            self.pod_cidr = cidr
            await self.ensure_network()
            self.syncer.ensure_network = self.ensure_network
            self.syncer.set_hairpin = self._set_hairpin
            self.network_agent.pod_cidr = self.pod_cidr
            if self.node_agent.network_not_ready:
                self.node_agent.network_not_ready = None
                await self._post_status()
            self.informer.add_handler(
                on_add=lambda obj: self.queue.add(object_key(obj)),
                on_update=self._on_pod_update,
                on_delete=lambda obj: self.queue.add(object_key(obj)),
            )
            tasks += [
                loop.create_task(self.network_agent.run(), name="kubelet-pod-network"),
                loop.create_task(self.informer.run(), name="kubelet-informer"),
                loop.create_task(self.config_sources.run(), name="kubelet-config-informers"),
                loop.create_task(self.storage.run(), name="kubelet-storage-informers"),
                loop.create_task(run_workers(self.queue, self.syncer.sync, cfg.workers, "kubelet"),
                                 name="kubelet-workers"),
                loop.create_task(self._housekeeping(), name="kubelet-housekeeping"),
            ]

            def on_event(event: Obj) -> None:
                loop.call_soon_threadsafe(self._on_docker_event, event)

            watcher = runtime.watch_events(naming.node_filter(cfg.node_name), on_event, docker_stop)
            log.info("kubelet node=%s running (podCIDR %s, network %s, bridge %s, backend %s, server %s:%d)",
                     cfg.node_name, self.pod_cidr, cfg.network_name, self.bridge, cfg.network_backend,
                     cfg.bind_address, cfg.port)
            stopper = loop.create_task(stop.wait())
            done, _ = await asyncio.wait([stopper, *tasks], return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if task is not stopper and not task.cancelled() and task.exception() is not None:
                    raise task.exception()  # type: ignore[misc]
            stopper.cancel()
        finally:
            log.info("kubelet node=%s stopping (pods keep running)", cfg.node_name)
            docker_stop.set()
            if watcher is not None:
                watcher.close_stream()  # type: ignore[attr-defined]
            server.should_exit = True
            self.queue.shutdown()
            for task in tasks[1:]:
                task.cancel()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 5)
            await probes.close()
            await events.drain(1.0)
            await self.client.close()

    async def _register(self, stop: asyncio.Event) -> None:
        """Register the Node, retrying (with back-off up to 10 s) until the apiserver answers."""
        assert self.node_agent is not None
        delay = 0.5
        while not stop.is_set():
            try:
                await self.node_agent.register()
                break
            except (errors.ServiceUnavailable, errors.InternalError, errors.Conflict, errors.Timeout) as exc:
                log.warning("kubelet node=%s registration failed (retrying in %.1fs): %s",
                            self.cfg.node_name, delay, exc)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), delay)
                delay = min(delay * 2, 10.0)

    # ------------------------------------------------------------------ the pod CIDR and network
    def _pod_cidr_of(self, node: Obj | None) -> str | None:
        """``spec.podCIDR`` (or ``spec.podCIDRs[0]``) of ``node``, normalised; None when unset or invalid."""
        spec = (node or {}).get("spec") or {}
        cidr = spec.get("podCIDR") or next(iter(spec.get("podCIDRs") or []), None)
        if not cidr:
            return None
        try:
            return check_cidr(cidr, "spec.podCIDR")
        except ValueError as exc:
            log.warning("kubelet node=%s ignores its podCIDR: %s", self.cfg.node_name, exc)
            return None

    def _own_pod_cidr(self) -> str | None:
        """This Node's podCIDR as the informer or the last status post saw it (None when unset)."""
        assert self.node_agent is not None
        return self._pod_cidr_of(self.nodes.get(self.cfg.node_name)) or self._pod_cidr_of(self.node_agent.node)

    async def _await_pod_cidr(self, stop: asyncio.Event, tasks: list[asyncio.Task[Any]]) -> str | None:
        """The podCIDR to use: the Node's, else an explicit ``--pod-cidr``, else wait for the node
        IPAM controller to set ``spec.podCIDR`` (NotReady meanwhile; progress logged every 10 s).
        None when ``stop`` was set first.  Raises when a background task (the lease, status or
        informer loop) failed."""
        assert self.node_agent is not None
        cidr = self._own_pod_cidr()
        if cidr or self.cfg.pod_cidr_explicit:
            return cidr or self.cfg.pod_cidr
        loop = asyncio.get_running_loop()
        started = loop.time()
        self.node_agent.network_not_ready = "waiting for the Node's spec.podCIDR (node IPAM controller)"
        await self._post_status()
        log.info("kubelet node=%s waiting for spec.podCIDR (allocated by the node IPAM controller; "
                 "or start the kubelet with --pod-cidr)", self.cfg.node_name)
        next_report = started + POD_CIDR_PROGRESS_SECONDS
        while not stop.is_set():
            for task in tasks:
                if task.done() and not task.cancelled() and task.exception() is not None:
                    raise task.exception()  # type: ignore[misc]
            cidr = self._own_pod_cidr()
            if cidr:
                log.info("kubelet node=%s podCIDR %s (after %.1fs)", self.cfg.node_name, cidr, loop.time() - started)
                return cidr
            if loop.time() >= next_report:
                log.info("kubelet node=%s still waiting for spec.podCIDR (%.0fs; is the controller-manager "
                         "running with the node IPAM controller?)", self.cfg.node_name, loop.time() - started)
                next_report += POD_CIDR_PROGRESS_SECONDS
            self.pod_cidr_known.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.pod_cidr_known.wait(), 1.0)
        return None

    async def _request_token(self, namespace: str, account: str, body: Obj) -> Obj:
        """TokenRequest for ServiceAccount ``namespace/account`` (projected token volumes)."""
        path = f"/api/v1/namespaces/{quote(namespace)}/serviceaccounts/{quote(account)}/token"
        answer: Obj = await self.client.request("POST", path, body=body)
        return answer

    async def _post_status(self) -> None:
        """Post the node status now (failures are only logged: the status loop retries)."""
        assert self.node_agent is not None
        try:
            await self.node_agent.update_status()
        except Exception as exc:  # noqa: BLE001 - the apiserver may be away
            log.warning("kubelet node=%s status update failed: %s", self.cfg.node_name, exc)

    async def ensure_network(self) -> None:
        """Create (or check) the pod network for :attr:`pod_cidr` and learn its bridge.

        Raises NetworkError (subnet clash, network in use with another subnet), CommandFailed or a
        runtime error.
        """
        assert self.runtime is not None
        mtu = None
        if self.cfg.network_backend in ("vxlan", "auto"):
            mtu = await asyncio.to_thread(self.network_agent.vxlan.uplink_mtu, self.cfg.node_ip) - VXLAN_OVERHEAD
        async with self._network_lock:
            await ensure_pod_network(self.runtime, self.cfg.network_name, self.pod_cidr, mtu)
            info = await self.runtime.inspect_network(self.cfg.network_name)
            self.bridge = bridge_of(info) if info else None

    def _set_hairpin(self) -> None:
        """Hairpin mode on the pod bridge's ports (blocking; failures are logged, the agent retries)."""
        if not self.bridge:
            return
        try:
            set_hairpin(self.bridge)
        except CommandFailed as exc:
            log.warning("kubelet cannot set hairpin mode on %s: %s", self.bridge, exc)

    def _on_node(self, node: Obj) -> None:
        """Informer handler (added/deleted Nodes): re-sync the pod network; follow this Node's podCIDR."""
        self.network_agent.trigger()
        self._follow_own(node)

    def _on_node_update(self, old: Obj, new: Obj) -> None:
        """Informer handler: as :meth:`_on_node`, but only when a podCIDR or InternalIP changed."""
        self.network_agent.on_node_update(old, new)
        if self._pod_cidr_of(old) != self._pod_cidr_of(new):
            self._follow_own(new)

    def _follow_own(self, node: Obj) -> None:
        """Wake the podCIDR wait for this Node; re-create the network when its podCIDR changed."""
        if (node.get("metadata") or {}).get("name") != self.cfg.node_name:
            return
        self.pod_cidr_known.set()
        cidr = self._pod_cidr_of(node)
        if cidr and self.network_agent.pod_cidr and cidr != self.pod_cidr:
            asyncio.get_running_loop().create_task(self._change_pod_cidr(cidr))

    async def _change_pod_cidr(self, cidr: str) -> None:
        """Follow a new ``spec.podCIDR``: re-create the pod network when no pod uses it, else keep the old one."""
        old = self.pod_cidr
        self.pod_cidr = cidr
        try:
            await self.ensure_network()
        except (HostError, RuntimeErrorBase) as exc:
            self.pod_cidr = old
            log.warning("kubelet node=%s spec.podCIDR is now %s but pods use %s; keeping %s until they are "
                        "gone and the kubelet restarts (%s)", self.cfg.node_name, cidr, old, old, exc)
            return
        log.info("kubelet node=%s podCIDR changed %s -> %s; pod network re-created", self.cfg.node_name, old, cidr)
        self.network_agent.pod_cidr = cidr
        self.network_agent.trigger()

    def _on_pod_update(self, old: Obj, new: Obj) -> None:
        """Queue the pod unless only its status changed (mostly the kubelet's own writes); a change
        of a ``readinessGates`` condition is queued too (Kubernetes' ``NeedToReconcilePodReadiness``)."""
        if old is new or spec_changed(old, new) or gate_conditions(old) != gate_conditions(new):
            self.queue.add(object_key(new))

    def _on_config_change(self, kind: str, namespace: str, name: str) -> None:
        """A ConfigMap or Secret changed: queue this node's pods that use it."""
        for pod in self.informer.list():
            if (pod.get("metadata") or {}).get("namespace") == namespace and (kind, name) in references(pod):
                self.queue.add(object_key(pod))

    def _on_claim_change(self, namespace: str, name: str) -> None:
        """A PersistentVolumeClaim changed (bound, say): queue this node's pods that use it."""
        for pod in self.informer.list():
            if (pod.get("metadata") or {}).get("namespace") == namespace and name in pod_claim_names(pod):
                self.queue.add(object_key(pod))

    def _on_docker_event(self, event: Obj) -> None:
        attrs = (event.get("Actor") or {}).get("Attributes") or {}
        ns, name = attrs.get(naming.POD_NAMESPACE), attrs.get(naming.POD_NAME)
        status = event.get("status") or event.get("Action") or ""
        if ns and name and status in ("start", "die", "oom", "destroy"):
            self.queue.add(naming.pod_key(ns, name))

    async def _housekeeping(self) -> None:
        """Every 10 s after the informer synced: queue pods with containers but no Pod, drop stray pod dirs."""
        assert self.runtime is not None and self.syncer is not None
        await self.informer.wait_synced()
        while True:
            try:
                await self._sweep()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001
                log.warning("kubelet housekeeping failed: %s", exc)
            await asyncio.sleep(HOUSEKEEPING_SECONDS)

    async def _sweep(self) -> None:
        assert self.runtime is not None and self.syncer is not None
        containers = await self.runtime.list_containers(naming.node_filter(self.cfg.node_name))
        known = {o["metadata"].get("uid"): object_key(o) for o in self.informer.list()}
        owned_uids = set()
        for c in containers:
            owned_uids.add(c.pod_uid)
            key = naming.pod_key(c.pod_namespace, c.pod_name)
            if known.get(c.pod_uid) != key:
                self.queue.add(key)
        for uid in self.syncer.volumes.known_uids():
            if uid not in known and uid not in owned_uids:
                log.info("kubelet removing the directory of gone pod uid=%s", uid)
                await self.syncer.volumes.cleanup(uid)
        self.syncer.crash_backoff.gc()
