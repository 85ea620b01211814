"""The pod worker: reconcile one pod's Docker containers with its spec, then report status.

``PodSyncer.sync("namespace/name")`` is the work queue's sync function.  Each call:

1. lists the node's containers labelled with that pod name and namespace;
2. removes containers of other pod UIDs (a deleted or re-created pod) — this is also how
   containers of pods that no longer exist are cleaned up;
3. for a pod with ``deletionTimestamp``: stops its containers (preStop hook, SIGTERM,
   SIGKILL after ``deletionGracePeriodSeconds``, at least 2 s), removes them and its
   emptyDirs, and deletes the Pod with ``gracePeriodSeconds=0`` and a UID precondition;
4. otherwise: kills containers whose liveness/startup probe failed or whose image changed,
   (re)creates the pause container when it is missing, and starts the next init container
   (one at a time, each must exit 0) or else the containers the restart policy wants
   running — after the crash-loop back-off, once their image is there, with the pod's
   resolv.conf and hosts files (:mod:`minik8s.kubelet.network.dnsconfig`) mounted, then their
   postStart hook; a pod's ``runtimeClassName`` picks the Docker runtime (``--runtime``) its sandbox
   and containers run with: the RuntimeClass's ``handler``, which must be one of Docker's runtimes
   (else the sandbox is not created: Warning ``FailedCreatePodSandBox`` ``RuntimeHandler "x" not
   supported``, as cri-dockerd answers, retried with back-off) — and garbage-collects dead
   containers (keeping the newest dead one of each container for ``lastState`` and ``previous`` logs);
5. computes the pod status and writes it (``PUT pods/{name}/status``) when it changed.

The pod is queued again after ``sync_frequency`` seconds, earlier when a back-off expires.
Nothing here ever stops a pod because the apiserver cannot be reached: failed status
writes are logged and retried.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from minik8s.api import errors
from minik8s.api.base import Obj, parse_time
from minik8s.client.rest import Client
from minik8s.client.workqueue import WorkQueue
from minik8s.host.errors import HostError
from minik8s.kubelet import naming
from minik8s.kubelet.backoff import Backoff
from minik8s.kubelet.config import KubeletConfig
from minik8s.kubelet.configsources import ContainerConfigError
from minik8s.kubelet.container_spec import (
    command_and_args,
    container_env,
    needs_image_user,
    oom_score_adj_floor,
    port_bindings,
    resource_config,
    security_config,
    verify_run_as_non_root,
)
from minik8s.kubelet.hooks import LifecycleHooks
from minik8s.kubelet.images import ImageManager, ImagePullError
from minik8s.kubelet.network.dnsconfig import PodFiles, effective_policy, pod_domain, pod_hostname
from minik8s.kubelet.probes import ProbeManager, ProbeTarget
from minik8s.kubelet.recording import PodEvents
from minik8s.kubelet.runtime import ContainerInfo, DockerRuntime, RuntimeErrorBase, RuntimeFailure
from minik8s.kubelet.serviceenv import service_env
from minik8s.kubelet.status import (
    ContainerView,
    PodView,
    compute_pod_status,
    is_terminal,
    normalise,
)
from minik8s.kubelet.volumes import VolumeError, VolumeManager

log = logging.getLogger("kubelet.sync")

MIN_GRACE_SECONDS = 2
LOG_CONFIG = {"type": "json-file", "config": {"max-size": "10m", "max-file": "5"}}


def should_restart(policy: str, info: ContainerInfo) -> bool:
    """Kubernetes' restart rule for a finished container."""
    if policy == "Always":
        return True
    if policy == "OnFailure":
        return info.exit_code != 0 or info.oom_killed or not info.ever_started
    return False


def _first(items: list[ContainerInfo] | None) -> ContainerInfo | None:
    return items[0] if items else None


def newest_first(items: list[ContainerInfo]) -> list[ContainerInfo]:
    """Sort by restart count (the attempt), then creation time, newest first."""
    return sorted(items, key=lambda c: (c.restart_count, c.created_ts or 0.0), reverse=True)


class PodSyncer:
    """Reconciles pods bound to this node (see the module docstring)."""

    def __init__(self, cfg: KubeletConfig, runtime: DockerRuntime, client: Client, queue: WorkQueue,
                 get_pod: Callable[[str], Obj | None], volumes: VolumeManager, images: ImageManager,
                 probes: ProbeManager, events: PodEvents, crash_backoff: Backoff, memory_capacity: int,
                 hooks: LifecycleHooks, has_synced: Callable[[], bool] = lambda: True,
                 services: Callable[[str], list[Obj]] | None = None) -> None:
        self.cfg = cfg
        self.runtime = runtime
        self.client = client
        self.queue = queue
        self.get_pod = get_pod
        self.volumes = volumes
        self.images = images
        self.probes = probes
        self.events = events
        self.crash_backoff = crash_backoff
        self.memory_capacity = memory_capacity
        self.hooks = hooks
        #: (re)creates the pod network (set by the kubelet); used when Docker lost it
        self.ensure_network: Callable[[], Awaitable[None]] | None = None
        #: turns hairpin mode on for the pod bridge's ports (set by the kubelet)
        self.set_hairpin: Callable[[], object] | None = None
        self.files = PodFiles(cfg.root_dir, cfg.cluster_dns, cfg.cluster_domain, cfg.resolv_conf)
        self.has_synced = has_synced
        #: the Services of a namespace and of ``default`` (containers' Service variables)
        self.services = services or (lambda namespace: [])
        self.pods_rt = client.kind("v1", "Pod")
        self.started_at = time.time()
        #: lowest oom_score_adj containers may get (without CAP_SYS_RESOURCE: the kubelet's own)
        self.oom_score_adj_floor = oom_score_adj_floor()
        self.sandbox_failed_at: dict[str, float] = {}
        self.sandbox_errors: dict[str, str] = {}
        #: the Docker runtime of each pod (by uid) that names a RuntimeClass
        self.runtime_handlers: dict[str, str] = {}
        #: uid → (pod, view, status) of the last sync; the HTTP server reads it
        self.views: dict[str, tuple[Obj, PodView, Obj]] = {}

    # ================================================================== entry point
    async def sync(self, key: str) -> None:
        """Reconcile the pod ``namespace/name`` (the work queue's sync function)."""
        namespace, _, name = key.partition("/")
        if not self.has_synced():
            # an empty cache would make every container look orphaned: wait for the first list
            self.queue.add_after(key, 1.0)
            return
        pod = self.get_pod(key)
        found = await self.runtime.list_containers(naming.node_filter(
            self.cfg.node_name, **{naming.POD_NAMESPACE: namespace, naming.POD_NAME: name}))
        uid = (pod or {}).get("metadata", {}).get("uid")
        stale = [c for c in found if c.pod_uid != uid]
        if stale:
            await self._remove_orphans(stale)
        if pod is None:
            return
        mine = [c for c in found if c.pod_uid == uid]
        if pod["metadata"].get("deletionTimestamp"):
            await self._terminate(key, pod, mine)
            return
        await self._sync_running(key, pod, mine)
        self.queue.add_after(key, self.cfg.sync_frequency)

    # ================================================================== orphans
    async def _remove_orphans(self, containers: list[ContainerInfo]) -> None:
        """Stop and remove containers whose pod (UID) is gone; clean its volumes."""
        apps = [c for c in containers if not c.is_sandbox and c.running]
        await asyncio.gather(*(self.runtime.stop(c.id, max(c.grace_period, MIN_GRACE_SECONDS)) for c in apps))
        for c in containers:
            if c.is_sandbox and c.running:
                await self.runtime.stop(c.id, MIN_GRACE_SECONDS)
        for c in containers:
            await self.runtime.remove(c.id, force=True)
        for uid in {c.pod_uid for c in containers}:
            log.info("kubelet removed containers of gone pod %s/%s uid=%s", containers[0].pod_namespace,
                     containers[0].pod_name, uid)
            await self.forget_pod(uid)

    async def forget_pod(self, uid: str) -> None:
        """Drop every trace of pod ``uid`` on this node (volumes, probes, back-offs, views)."""
        if uid:
            await self.volumes.cleanup(uid)
        self.probes.remove_pod(uid)
        self.crash_backoff.forget_prefix(f"{uid}/")
        self.images.forget_pod(uid)
        self.views.pop(uid, None)
        self.sandbox_failed_at.pop(uid, None)
        self.sandbox_errors.pop(uid, None)
        self.runtime_handlers.pop(uid, None)

    # ================================================================== deletion
    async def _terminate(self, key: str, pod: Obj, containers: list[ContainerInfo]) -> None:
        """Graceful deletion: SIGTERM, wait the grace period, SIGKILL, remove, then DELETE the Pod."""
        meta, spec = pod["metadata"], pod.get("spec") or {}
        grace = meta.get("deletionGracePeriodSeconds")
        if grace is None:
            grace = spec.get("terminationGracePeriodSeconds", 30)
        grace = max(int(grace), MIN_GRACE_SECONDS)
        running = [c for c in containers if not c.is_sandbox and c.running]
        for c in running:
            self.events.emit(pod, "Normal", "Killing", f"Stopping container {c.container_name}", c.container_name)
        if running:
            log.info("kubelet pod=%s stopping %d container(s) grace=%ss", key, len(running), grace)
        pod_ip = self._pod_ip(pod, self._sandbox(containers))
        await asyncio.gather(*(self._kill(pod, c, grace, pod_ip) for c in running))
        for c in containers:
            if c.is_sandbox and c.running:
                await self.runtime.stop(c.id, MIN_GRACE_SECONDS)
        uid = meta["uid"]
        if containers:
            refreshed = await self._refresh(containers)
            view = self._view(pod, refreshed, {})
            view.terminating = True
            await self._write_status(key, pod, view)
        for c in containers:
            await self.runtime.remove(c.id, force=True)
        await self.forget_pod(uid)
        try:
            await self.client.delete(self.pods_rt, meta["name"], meta["namespace"], grace_period_seconds=0,
                                     preconditions={"uid": uid})
            log.info("kubelet pod=%s deleted", key)
        except errors.NotFound:
            pass
        except errors.Conflict:
            pass  # another pod with that name now exists: not ours to delete

    async def _refresh(self, containers: list[ContainerInfo]) -> list[ContainerInfo]:
        out = []
        for c in containers:
            try:
                out.append(await self.runtime.inspect(c.id))
            except RuntimeErrorBase:
                continue
        return out

    # ================================================================== running pods
    async def _sync_running(self, key: str, pod: Obj, containers: list[ContainerInfo]) -> None:
        spec = pod.get("spec") or {}
        policy = spec.get("restartPolicy") or "Always"
        waiting: dict[str, tuple[str, str]] = {}
        deadline = self._deadline_exceeded(pod)

        if is_terminal(pod) or deadline:
            await self._stop_all(pod, containers, reason="DeadlineExceeded" if deadline else None)
            containers = await self._refresh(containers)
            view = self._view(pod, containers, waiting)
            view.deadline_exceeded = deadline
            await self._write_status(key, pod, view)
            return

        by_name = self._group(containers)
        # 1. kill what must not keep running
        for c in spec.get("containers") or []:
            current = _first(by_name.get(c["name"]))
            if current is None or not current.running:
                continue
            reason = None
            if current.labels.get(naming.CONTAINER_HASH) not in (None, naming.spec_hash(c)):
                reason = f"Container {c['name']} definition changed, will be restarted"
            else:
                failed = self.probes.failed(c, current.id)
                if failed:
                    reason = f"Container {c['name']} failed {failed} probe, will be restarted"
            if reason:
                self.events.emit(pod, "Normal", "Killing", reason, c["name"])
                log.info("kubelet pod=%s %s", key, reason)
                await self._kill(pod, current, self._kill_grace(pod, c), self._pod_ip(pod, self._sandbox(containers)))
                self.probes.forget_container(current.id)
                containers = await self._refresh(containers)
                by_name = self._group(containers)

        # 2. decide which containers to (re)start
        sandbox = self._sandbox(containers)
        to_start = self._to_start(spec, by_name, policy)
        sandbox_ok = sandbox is not None and sandbox.running and (bool(sandbox.ip) or bool(spec.get("hostNetwork")))
        if not sandbox_ok and (to_start or any(c.running for c in containers if not c.is_sandbox)):
            ever_ran = any(not c.is_sandbox for c in containers)
            if not (policy == "Never" and ever_ran and not to_start):
                if sandbox is not None and sandbox.ever_started:
                    self.events.emit(pod, "Normal", "SandboxChanged",
                                     "Pod sandbox changed, it will be killed and re-created.")
                    await self._stop_all(pod, containers)
                    containers = await self._refresh(containers)
                    by_name = self._group(containers)
                    to_start = self._to_start(spec, by_name, policy)
                if to_start:
                    created = await self._ensure_sandbox(key, pod, sandbox)
                    if created is None:
                        msg = self.sandbox_errors.get(pod["metadata"]["uid"], "")
                        for c in to_start:
                            waiting[c["name"]] = ("ContainerCreating", msg)
                        to_start = []
                    else:
                        sandbox = created
                    containers = await self._relist(pod)
                    by_name = self._group(containers)

        # 3. volumes, then start containers
        if to_start:
            try:
                paths = await self.volumes.setup(pod)
            except VolumeError as exc:
                msg = f"MountVolume.SetUp failed: {exc}"
                self.events.emit(pod, "Warning", "FailedMount", msg)
                for c in to_start:
                    waiting[c["name"]] = ("ContainerCreating", msg)
                to_start, paths = [], {}
            started_any = False
            for c in to_start:
                started_any |= await self._start_container(key, pod, c, by_name.get(c["name"]) or [],
                                                           sandbox, paths, waiting)
            if started_any:
                containers = await self._relist(pod)
        elif any(c.running for c in containers if not c.is_sandbox):
            # running containers see ConfigMap/Secret changes (Kubernetes: within its sync period)
            for failure in await self.volumes.refresh(pod):
                self.events.emit(pod, "Warning", "FailedMount", f"MountVolume.SetUp failed: {failure}")

        # 3b. ephemeral containers: each started once, in a running pod, never restarted
        new_ephemeral = [ec for ec in spec.get("ephemeralContainers") or [] if not by_name.get(ec["name"])]
        if new_ephemeral and sandbox is not None and sandbox.running:
            started_any = False
            for ec in new_ephemeral:
                started_any |= await self._start_ephemeral(key, pod, ec, sandbox, by_name, waiting)
            if started_any:
                containers = await self._relist(pod)

        # 4. garbage-collect dead containers, then report
        containers = await self._gc(containers)
        view = self._view(pod, containers, waiting)
        status = await self._write_status(key, pod, view)
        if status.get("phase") in ("Succeeded", "Failed"):
            await self._stop_all(pod, containers)

    def _to_start(self, spec: Obj, by_name: dict[str, list[ContainerInfo]], policy: str) -> list[Obj]:
        """Containers to (re)start now: the next init container while initialising, else the app
        containers the restart policy wants running (back-off is applied when starting)."""
        apps = spec.get("containers") or []
        if not any(by_name.get(c["name"]) for c in apps):
            for ic in spec.get("initContainers") or []:
                current = _first(by_name.get(ic["name"]))
                if current is None:
                    return [ic]
                if current.running:
                    return []
                if current.ever_started and current.exit_code == 0 and not current.oom_killed:
                    continue
                # a failed init container: retried unless the pod never restarts anything
                return [] if policy == "Never" else [ic]
        out = []
        for c in apps:
            current = _first(by_name.get(c["name"]))
            if current is None:
                out.append(c)
            elif not current.running and (should_restart(policy, current) or
                                          (current.state == "created" and not current.error)):
                out.append(c)
        return out

    @staticmethod
    def _group(containers: list[ContainerInfo]) -> dict[str, list[ContainerInfo]]:
        by_name: dict[str, list[ContainerInfo]] = {}
        for c in containers:
            if not c.is_sandbox:
                by_name.setdefault(c.container_name, []).append(c)
        return {name: newest_first(items) for name, items in by_name.items()}

    @staticmethod
    def _sandbox(containers: list[ContainerInfo]) -> ContainerInfo | None:
        boxes = newest_first([c for c in containers if c.is_sandbox])
        running = [b for b in boxes if b.running]
        return _first(running or boxes)

    def _kill_grace(self, pod: Obj, container: Obj) -> int:
        grace = (pod.get("spec") or {}).get("terminationGracePeriodSeconds", 30)
        for kind in ("liveness", "startup"):
            probe = container.get(f"{kind}Probe") or {}
            if probe.get("terminationGracePeriodSeconds") is not None:
                grace = probe["terminationGracePeriodSeconds"]
        return max(int(grace), MIN_GRACE_SECONDS)

    def _deadline_exceeded(self, pod: Obj) -> bool:
        """``activeDeadlineSeconds`` passed since ``startTime`` (the pod is queued for that moment)."""
        ads = (pod.get("spec") or {}).get("activeDeadlineSeconds")
        start = parse_time((pod.get("status") or {}).get("startTime"))
        if ads is None or start is None:
            return False
        left = start.timestamp() + int(ads) - time.time()
        if left > 0:
            meta = pod["metadata"]
            self.queue.add_after(naming.pod_key(meta["namespace"], meta["name"]), left + 0.05)
        return left <= 0

    async def _relist(self, pod: Obj) -> list[ContainerInfo]:
        meta = pod["metadata"]
        found = await self.runtime.list_containers(naming.node_filter(
            self.cfg.node_name, **{naming.POD_NAMESPACE: meta["namespace"], naming.POD_NAME: meta["name"],
                                   naming.POD_UID: meta["uid"]}))
        return found

    async def _stop_all(self, pod: Obj, containers: list[ContainerInfo], reason: str | None = None) -> None:
        """Stop every running container of the pod (apps with the grace period, then the sandbox)."""
        apps = [c for c in containers if not c.is_sandbox and c.running]
        grace = max(int((pod.get("spec") or {}).get("terminationGracePeriodSeconds", 30)), MIN_GRACE_SECONDS)
        for c in apps:
            self.events.emit(pod, "Normal", "Killing", f"Stopping container {c.container_name}", c.container_name)
        if reason == "DeadlineExceeded" and apps:
            self.events.emit(pod, "Warning", "DeadlineExceeded",
                             "Pod was active on the node longer than the specified deadline")
        pod_ip = self._pod_ip(pod, self._sandbox(containers))
        await asyncio.gather(*(self._kill(pod, c, grace, pod_ip) for c in apps))
        for c in containers:
            if c.is_sandbox and c.running:
                await self.runtime.stop(c.id, MIN_GRACE_SECONDS)

    async def _kill(self, pod: Obj, info: ContainerInfo, grace: float, pod_ip: str) -> None:
        """Stop one container: its preStop hook within the grace period, then SIGTERM, SIGKILL when it ends."""
        if info.running:
            spec = pod.get("spec") or {}
            container = next((c for c in (spec.get("containers") or []) + (spec.get("initContainers") or [])
                              if c.get("name") == info.container_name), None)
            if container is not None:
                grace = await self.hooks.pre_stop(pod, container, info.id, pod_ip, grace)
        await self.runtime.stop(info.id, max(int(round(grace)), MIN_GRACE_SECONDS))

    def _pod_ip(self, pod: Obj, sandbox: ContainerInfo | None) -> str:
        """The pod's IP its containers see: the node's with ``hostNetwork``, else the running
        sandbox's (``""`` without one)."""
        if (pod.get("spec") or {}).get("hostNetwork"):
            return self.cfg.node_ip
        return (sandbox.ip or "") if sandbox is not None and sandbox.running else ""

    # ================================================================== sandbox
    async def _ensure_sandbox(self, key: str, pod: Obj, old: ContainerInfo | None) -> ContainerInfo | None:
        """Create the pause container unless its creation is backing off; None when there is none."""
        uid = pod["metadata"]["uid"]
        bkey = f"{uid}/{naming.SANDBOX}"
        last = self.sandbox_failed_at.get(uid)
        if last is not None:
            remaining = self.crash_backoff.remaining(bkey, last)
            if remaining > 0:
                self.queue.add_after(key, remaining + 0.05)
                return None
        try:
            info = await self._create_sandbox(pod, old)
        except RuntimeErrorBase as exc:
            if self.cfg.network_name in exc.message and "not found" in exc.message and self.ensure_network:
                # someone removed the pod network: make it again for the next attempt
                try:
                    await self.ensure_network()
                except (HostError, RuntimeErrorBase) as net_exc:
                    log.warning("kubelet cannot re-create the pod network: %s", net_exc)
            now = time.time()
            self.sandbox_failed_at[uid] = now
            delay = self.crash_backoff.next(bkey, now)
            msg = f"Failed to create pod sandbox: {exc.message}"
            self.sandbox_errors[uid] = msg
            log.warning("kubelet pod=%s %s (retry in %gs)", key, msg, delay)
            self.events.emit(pod, "Warning", "FailedCreatePodSandBox", msg[:1024])
            self.queue.add_after(key, delay + 0.05)
            return None
        self.sandbox_failed_at.pop(uid, None)
        self.sandbox_errors.pop(uid, None)
        return info

    async def _runtime_handler(self, pod: Obj) -> dict[str, str]:
        """The host-config argument that runs ``pod``'s containers with its RuntimeClass's handler
        (``{}`` for a pod without one, or with Docker's default runtime), as the kubelet's
        ``runtimeClassManager.LookupRuntimeHandler`` then the runtime's check of the handler.

        Raises:
            RuntimeFailure: the RuntimeClass does not exist (``runtimeclass.node.k8s.io "x" not found``)
                or Docker has no runtime of that name (``RuntimeHandler "x" not supported``).
        """
        uid = pod["metadata"]["uid"]
        name = (pod.get("spec") or {}).get("runtimeClassName")
        if not name:
            return {}
        handler = self.runtime_handlers.get(uid)
        if handler is None:
            try:
                runtime_class = await self.client.get(self.client.kind("node.k8s.io/v1", "RuntimeClass"), name)
            except errors.NotFound:  # the kubelet's lister error, singular resource and all
                raise RuntimeFailure(f'runtimeclass.node.k8s.io "{name}" not found') from None
            handler = str(runtime_class.get("handler") or "")
            available, default = await self.runtime.runtimes()
            if handler not in available:
                raise RuntimeFailure(f'RuntimeHandler "{handler}" not supported')
            self.runtime_handlers[uid] = handler if handler != default else ""
            handler = self.runtime_handlers[uid]
        return {"runtime": handler} if handler else {}

    async def _create_sandbox(self, pod: Obj, old: ContainerInfo | None) -> ContainerInfo:
        """Create and start the pause container that owns the pod's network (and IPC) namespace."""
        meta, spec = pod["metadata"], pod.get("spec") or {}
        handler = await self._runtime_handler(pod)
        attempt = old.restart_count + 1 if old is not None else 0
        image = self.cfg.pod_infra_container_image
        if await self.runtime.image_id(image) is None:
            await self.runtime.pull(image)
        host_network = bool(spec.get("hostNetwork"))
        exposed, bindings = port_bindings(spec)
        host_kwargs: dict[str, Any] = {
            "network_mode": "host" if host_network else self.cfg.network_name,
            "ipc_mode": "host" if spec.get("hostIPC") else "shareable",
            "cpu_shares": 2,
            "oom_score_adj": max(-998, self.oom_score_adj_floor),
            "log_config": LOG_CONFIG,
            **handler,
        }
        if bindings and not host_network:
            host_kwargs["port_bindings"] = bindings
        if spec.get("hostPID"):
            host_kwargs["pid_mode"] = "host"
        sysctls = {s["name"]: str(s.get("value", "")) for s in (spec.get("securityContext") or {}).get("sysctls") or []
                   if s.get("name") and not (host_network and s["name"].startswith("net."))}
        if sysctls:  # namespaced sysctls belong to the sandbox, whose namespaces the containers join
            host_kwargs["sysctls"] = sysctls
        kwargs: dict[str, Any] = {"labels": naming.labels(self.cfg.node_name, pod, naming.SANDBOX, attempt)}
        _, missing_dns = effective_policy(pod, self.cfg.cluster_dns)
        if missing_dns:
            self.events.emit(pod, "Warning", "MissingClusterDNS", missing_dns)
        if not host_network:
            domain = pod_domain(pod, self.cfg.cluster_domain)
            kwargs["hostname"] = pod_hostname(pod)
            if domain and spec.get("setHostnameAsFQDN"):
                kwargs["hostname"] = f"{pod_hostname(pod)}.{domain}"[:64]
            elif domain:
                kwargs["domainname"] = domain
            kwargs["networking_config"] = self.runtime.networking_config(self.cfg.network_name)
            if exposed:
                kwargs["ports"] = exposed
        name = naming.container_name(naming.SANDBOX, meta["name"], meta["namespace"], meta["uid"], attempt)
        cid = await self.runtime.create_container(name, image, host_config=self.runtime.host_config(**host_kwargs),
                                                  **kwargs)
        try:
            await self.runtime.start(cid)
        except RuntimeErrorBase:
            await self.runtime.remove(cid, force=True)
            raise
        info = await self.runtime.inspect(cid)
        log.info("kubelet pod=%s/%s sandbox %s ip=%s", meta["namespace"], meta["name"], cid[:12], info.ip)
        if self.set_hairpin is not None and not host_network:
            await asyncio.to_thread(self.set_hairpin)
        return info

    # ================================================================== app containers
    async def _start_container(self, key: str, pod: Obj, container: Obj, history: list[ContainerInfo],
                               sandbox: ContainerInfo | None, paths: dict[str, str],
                               waiting: dict[str, tuple[str, str]]) -> bool:
        """Start one container (after back-off and image checks); returns True when one was started."""
        meta = pod["metadata"]
        name = container["name"]
        if sandbox is None or not sandbox.running:
            waiting[name] = ("ContainerCreating", "")
            return False
        current = history[0] if history else None
        if current is not None and current.state == "created" and not current.error:
            # created but never started (the kubelet stopped in between): start it now
            try:
                await self.runtime.start(current.id)
                self.events.emit(pod, "Normal", "Started", f"Started container {name}", name)
                return True
            except RuntimeErrorBase as exc:
                waiting[name] = ("RunContainerError", exc.message)
                self.events.emit(pod, "Warning", "Failed", f"Error: {exc.message}", name)
                return False
        if current is not None:
            bkey = f"{meta['uid']}/{name}"
            finished = current.finished_ts or current.created_ts or time.time()
            remaining = self.crash_backoff.remaining(bkey, finished)
            if remaining > 0:
                delay = self.crash_backoff.delay(bkey)
                waiting[name] = ("CrashLoopBackOff", f"back-off {delay:g}s restarting failed container={name} "
                                                     f"pod={meta['name']}_{meta['namespace']}({meta['uid']})")
                self.events.emit(pod, "Warning", "BackOff", "Back-off restarting failed container "
                                 f"{name} in pod {meta['name']}_{meta['namespace']}({meta['uid']})", name)
                self.queue.add_after(key, remaining + 0.05)
                return False
            self.crash_backoff.next(bkey, finished)
        if not await self._pull(key, pod, container, waiting):
            return False
        attempt = current.restart_count + 1 if current is not None else 0
        pod_ip = self._pod_ip(pod, sandbox)
        cid = await self._create(pod, container, attempt, sandbox, paths, pod_ip, waiting)
        if cid is None:
            return False
        try:
            await self.runtime.start(cid)
        except RuntimeErrorBase as exc:
            waiting[name] = ("RunContainerError", exc.message)
            self.events.emit(pod, "Warning", "Failed", f"Error: {exc.message}"[:1024], name)
            return True
        self.events.emit(pod, "Normal", "Started", f"Started container {name}", name)
        log.info("kubelet pod=%s container=%s started id=%s restartCount=%d", key, name, cid[:12], attempt)
        failure = await self.hooks.post_start(pod, container, cid, pod_ip)
        if failure is not None:
            self.events.emit(pod, "Normal", "Killing", f"Container {name} failed its postStart hook, "
                             "will be killed", name)
            await self.runtime.stop(cid, self._kill_grace(pod, container))
        return True

    async def _start_ephemeral(self, key: str, pod: Obj, container: Obj, sandbox: ContainerInfo,
                               by_name: dict[str, list[ContainerInfo]], waiting: dict[str, tuple[str, str]]) -> bool:
        """Create and start an ephemeral container (Kubernetes' ``startContainer`` for one): in the
        pod's network and IPC namespaces like the others, in the PID namespace of its
        ``targetContainerName`` when that one runs; no probes, hooks nor restarts. True when created."""
        name = container["name"]
        target = container.get("targetContainerName")
        pid_of = None
        if target:
            current = _first(by_name.get(target))
            if current is None or not current.running:
                waiting[name] = ("ContainerCreating", f"target container {target} is not running")
                return False
            pid_of = current.id
        if not await self._pull(key, pod, container, waiting):
            return False
        cid = await self._create(pod, container, 0, sandbox, None, self._pod_ip(pod, sandbox), waiting, pid_of)
        if cid is None:
            return False
        try:
            await self.runtime.start(cid)
        except RuntimeErrorBase as exc:
            self.events.emit(pod, "Warning", "Failed", f"Error: {exc.message}"[:1024], name)
            return True
        self.events.emit(pod, "Normal", "Started", f"Started container {name}", name)
        log.info("kubelet pod=%s ephemeral container=%s started id=%s", key, name, cid[:12])
        return True

    async def _pull(self, key: str, pod: Obj, container: Obj, waiting: dict[str, tuple[str, str]]) -> bool:
        """The container's image present (pulled per its policy); False, with the reason in
        ``waiting`` and a retry queued after an ``ErrImagePull``, when it is not."""
        try:
            await self.images.ensure(pod, container)
        except ImagePullError as exc:
            waiting[container["name"]] = (exc.reason, exc.message)
            if exc.reason == "ErrImagePull":
                self.queue.add_after(key, self.crash_backoff.initial)
            return False
        return True

    async def _create(self, pod: Obj, container: Obj, attempt: int, sandbox: ContainerInfo,
                      paths: dict[str, str] | None, pod_ip: str, waiting: dict[str, tuple[str, str]],
                      pid_of: str | None = None) -> str | None:
        """:meth:`_create_app` with the ``Created`` event; a failure is the container's waiting
        reason (``CreateContainerConfigError``, ``CreateContainerError``) and a ``Failed`` event, and
        None.  ``paths`` None: the container's volumes are set up here (an ephemeral container's)."""
        name = container["name"]
        try:
            if paths is None:
                paths = await self.volumes.setup(pod) if container.get("volumeMounts") else {}
            cid = await self._create_app(pod, container, attempt, sandbox, paths, pod_ip, pid_of)
        except ContainerConfigError as exc:
            waiting[name] = ("CreateContainerConfigError", str(exc))
            self.events.emit(pod, "Warning", "Failed", f"Error: {exc}"[:1024], name)
            return None
        except (RuntimeErrorBase, VolumeError, ValueError) as exc:
            msg = getattr(exc, "message", None) or str(exc)
            waiting[name] = ("CreateContainerError", msg)
            self.events.emit(pod, "Warning", "Failed", f"Error: {msg}"[:1024], name)
            return None
        self.events.emit(pod, "Normal", "Created", f"Created container {name}", name)
        return cid

    async def _create_app(self, pod: Obj, container: Obj, attempt: int, sandbox: ContainerInfo,
                          paths: dict[str, str], pod_ip: str, pid_of: str | None = None) -> str:
        """Create (not start) one container of the pod; ``pid_of``: a container id whose PID
        namespace it joins (an ephemeral container's target), else the sandbox's with
        ``shareProcessNamespace`` (one PID namespace for the pod, the pause process its PID 1).
        ``hostPID`` / ``hostIPC``: the host's PID / IPC namespace (``--pid=host``, ``--ipc=host``),
        for the sandbox too."""
        meta, spec = pod["metadata"], pod.get("spec") or {}
        warnings: list[str] = []
        env = container_env(pod, container, host_ip=self.cfg.node_ip, pod_ip=pod_ip, lookup=self.volumes.lookup,
                            warnings=warnings, allocatable=self.volumes.allocatable(),
                            services=service_env(pod, self.services(meta.get("namespace") or "")))
        for warning in warnings:
            self.events.emit(pod, "Warning", "InvalidEnvironmentVariableNames", warning, container["name"])
        entrypoint, cmd = command_and_args(container, env)
        image_user = await self.runtime.image_user(container["image"]) if needs_image_user(container, spec) else None
        verify_run_as_non_root(pod, container, image_user)
        security, user = security_config(container, spec, image_user, self.cfg.root_dir / "seccomp")
        try:
            files = await asyncio.to_thread(self.files.write, pod, pod_ip)
        except OSError as exc:
            raise VolumeError(f"cannot write the pod's resolv.conf and hosts files: {exc}") from exc
        host_config = self.runtime.host_config(
            network_mode=f"container:{sandbox.id}",
            ipc_mode="host" if spec.get("hostIPC") else f"container:{sandbox.id}",
            **({"pid_mode": "host"} if spec.get("hostPID") else
               {"pid_mode": f"container:{pid_of}"} if pid_of else
               {"pid_mode": f"container:{sandbox.id}"} if spec.get("shareProcessNamespace") else {}),
            binds=VolumeManager.binds(container, paths, VolumeManager.read_only_volumes(pod), env)
            + PodFiles.binds(container, files) or None,
            log_config=LOG_CONFIG,
            **await self._runtime_handler(pod),
            **resource_config(pod, container, self.memory_capacity, self.oom_score_adj_floor),
            **security,
        )
        kwargs: dict[str, Any] = {
            "labels": naming.labels(self.cfg.node_name, pod, container["name"], attempt, naming.spec_hash(container)),
            "environment": env or None,
            "command": cmd,
            "entrypoint": entrypoint,
            "working_dir": container.get("workingDir") or None,
            "tty": bool(container.get("tty")),
            "stdin_open": bool(container.get("stdin")),
        }
        if user:
            kwargs["user"] = user
        name = naming.container_name(container["name"], meta["name"], meta["namespace"], meta["uid"], attempt)
        return await self.runtime.create_container(name, container["image"], host_config=host_config, **kwargs)

    # ================================================================== garbage collection
    async def _gc(self, containers: list[ContainerInfo]) -> list[ContainerInfo]:
        """Keep the newest two containers per app container and the newest sandbox; remove the rest."""
        keep: list[ContainerInfo] = []
        drop: list[ContainerInfo] = []
        for items in self._group(containers).values():
            keep += items[:2]
            drop += [c for c in items[2:]]
        boxes = newest_first([c for c in containers if c.is_sandbox])
        chosen = self._sandbox(containers)
        for b in boxes:
            (keep if b is chosen else drop).append(b)
        for c in drop:
            if c.running:
                await self.runtime.stop(c.id, MIN_GRACE_SECONDS)
            await self.runtime.remove(c.id, force=True)
        return keep

    # ================================================================== status
    def _view(self, pod: Obj, containers: list[ContainerInfo], waiting: dict[str, tuple[str, str]]) -> PodView:
        spec = pod.get("spec") or {}
        view = PodView(waiting=dict(waiting))
        view.sandbox = self._sandbox(containers)
        if spec.get("hostNetwork"):
            view.pod_ip = self.cfg.node_ip if view.sandbox is not None and view.sandbox.running else ""
        elif view.sandbox is not None and view.sandbox.running:
            view.pod_ip = view.sandbox.ip or ""
        by_name = self._group(containers)
        for c in spec.get("initContainers") or []:
            items = by_name.get(c["name"]) or []
            view.init_containers[c["name"]] = ContainerView(
                _first(items), next((x for x in items[1:] if not x.running), None))
        for c in spec.get("ephemeralContainers") or []:
            items = by_name.get(c["name"]) or []
            view.ephemeral_containers[c["name"]] = ContainerView(_first(items), None)
        previous_status = {s.get("name"): s for s in (pod.get("status") or {}).get("containerStatuses") or []}
        for c in spec.get("containers") or []:
            items = by_name.get(c["name"]) or []
            current = items[0] if items else None
            prev = next((x for x in items[1:] if not x.running), None)
            view.containers[c["name"]] = ContainerView(current, prev)
            if current is not None and current.running:
                old = previous_status.get(c["name"]) or {}
                inherited = bool(old.get("ready")) and old.get("containerID") == f"docker://{current.id}" and \
                    (current.started_ts or 0) < self.started_at
                self.probes.update(pod, c, ProbeTarget(pod=pod, container=c, container_id=current.id,
                                                       started_at=current.started_ts or time.time(),
                                                       pod_ip=view.pod_ip, initial_ready=inherited))
                view.ready[c["name"]] = self.probes.ready(c, current.id)
                view.started[c["name"]] = self.probes.started(c, current.id)
            else:
                self.probes.update(pod, c, None)
        return view

    async def _write_status(self, key: str, pod: Obj, view: PodView) -> Obj:
        """PUT the pod's status when it differs from what the apiserver has; returns the status."""
        status = compute_pod_status(pod, view, self.cfg.node_ip)
        self.views[pod["metadata"]["uid"]] = (pod, view, status)
        if normalise(status) == normalise(pod.get("status")):
            return status
        body = copy.deepcopy(pod)
        body["status"] = status
        body.setdefault("apiVersion", "v1")
        body.setdefault("kind", "Pod")
        try:
            try:
                await self.client.update_status(self.pods_rt, body)
            except errors.Conflict:
                fresh = await self.client.get(self.pods_rt, pod["metadata"]["name"], pod["metadata"]["namespace"])
                if fresh["metadata"].get("uid") != pod["metadata"]["uid"]:
                    return status
                status = compute_pod_status(fresh, view, self.cfg.node_ip)
                self.views[pod["metadata"]["uid"]] = (fresh, view, status)
                if normalise(status) != normalise(fresh.get("status")):
                    fresh["status"] = status
                    await self.client.update_status(self.pods_rt, fresh)
        except errors.NotFound:
            pass
        except errors.APIError as exc:
            log.warning("kubelet pod=%s status update failed (will retry): %s", key, exc)
            self.queue.add_after(key, 2.0)
        return status
