"""The kubelet's Node: registration, Lease heartbeats and node status.

- :meth:`NodeAgent.register` creates the Node (labels ``kubernetes.io/hostname``,
  ``kubernetes.io/os``, ``kubernetes.io/arch`` plus ``--node-labels``; taints from
  ``--register-with-taints``; ``spec.podCIDR`` when ``--pod-cidr`` was given) or, when it
  exists, adds the kubelet's labels and leaves the rest of its spec (podCIDR,
  unschedulable, taints) to whoever set it — as Kubernetes does, registration taints
  are applied only when the Node is created.
- :meth:`NodeAgent.renew_lease` keeps Lease ``kube-node-lease/<node>`` fresh
  (``holderIdentity``, ``leaseDurationSeconds``, ``renewTime`` as MicroTime), every
  quarter of the lease duration (10 s for 40 s).
- :meth:`NodeAgent.update_status` posts ``status`` (capacity/allocatable — cpu cores,
  memory in Ki, pods —, addresses, nodeInfo, daemonEndpoints, images and the
  Ready/MemoryPressure/DiskPressure/PIDPressure conditions) through the status
  subresource every ``--node-status-update-frequency`` seconds.
- :meth:`NodeAgent.ensure_csi_node` creates the node's ``storage.k8s.io/v1`` CSINode (same name,
  an ownerReference to the Node, no drivers: a node without CSI plugins, and the
  ``storage.alpha.kubernetes.io/migrated-plugins`` annotation Kubernetes 1.32's kubelet writes) after
  registration and again with each status update when it is missing or owned by an older Node.
"""

from __future__ import annotations

import asyncio
import logging
import os
import platform
import shutil
from pathlib import Path

from minik8s.api import errors
from minik8s.api.base import Obj, now_rfc3339
from minik8s.api.csi import MIGRATED_PLUGINS, MIGRATED_PLUGINS_ANNOTATION
from minik8s.client.nodeheartbeat import NodeLease, condition
from minik8s.client.rest import Client
from minik8s.kubelet.config import KUBELET_VERSION, KubeletConfig
from minik8s.kubelet.runtime import DockerRuntime

log = logging.getLogger("kubelet.node")

ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64", "armv7l": "arm",
        "ppc64le": "ppc64le", "s390x": "s390x"}
MEMORY_PRESSURE_BYTES = 100 * 1024 * 1024  # Kubernetes' default memory.available<100Mi
DISK_PRESSURE_FRACTION = 0.10  # nodefs.available<10%
PID_PRESSURE_FRACTION = 0.05


def read_meminfo() -> dict[str, int]:
    """``/proc/meminfo`` in bytes (``MemTotal``, ``MemAvailable``, ...)."""
    out: dict[str, int] = {}
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            key, _, rest = line.partition(":")
            parts = rest.split()
            if parts and parts[0].isdigit():
                out[key] = int(parts[0]) * (1024 if len(parts) > 1 and parts[1] == "kB" else 1)
    except OSError:
        pass
    return out


def os_image() -> str:
    """``PRETTY_NAME`` of ``/etc/os-release`` (Node ``nodeInfo.osImage``)."""
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.partition("=")[2].strip().strip('"')
    except OSError:
        pass
    return platform.platform()


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip() or None
    except OSError:
        return None


def capacity(root_dir: Path, max_pods: int) -> dict[str, str]:
    """Node capacity: ``cpu`` (cores), ``memory`` (``<n>Ki``), ``pods``, ``ephemeral-storage`` (``<n>Ki``)."""
    mem = read_meminfo().get("MemTotal", 0)
    out = {"cpu": str(os.cpu_count() or 1), "memory": f"{mem // 1024}Ki", "pods": str(max_pods)}
    probe = root_dir if root_dir.exists() else Path("/")
    try:
        out["ephemeral-storage"] = f"{shutil.disk_usage(probe).total // 1024}Ki"
    except OSError:
        pass
    return out


class NodeAgent:
    """Registers the Node and keeps its Lease and status current."""

    def __init__(self, cfg: KubeletConfig, client: Client, runtime: DockerRuntime) -> None:
        self.cfg = cfg
        self.client = client
        self.runtime = runtime
        self.nodes_rt = client.kind("v1", "Node")
        self.csinodes_rt = client.kind("storage.k8s.io/v1", "CSINode")
        self.lease = NodeLease(client, cfg.node_name, cfg.node_lease_duration_seconds,
                               lambda: ((self.node or {}).get("metadata") or {}).get("uid"))
        self.runtime_version = "unknown"
        self.node: Obj | None = None
        self.registered = asyncio.Event()
        #: None while the pod network is ready, else why not (Ready=False, as Kubernetes'
        #: "container runtime network not ready" while a node has no podCIDR)
        self.network_not_ready: str | None = None

    # ------------------------------------------------------------------ description
    def labels(self) -> dict[str, str]:
        """The well-known node labels (hostname, os, arch) plus ``--node-labels``."""
        arch = ARCH.get(platform.machine(), platform.machine())
        labels = {"kubernetes.io/hostname": self.cfg.node_name, "kubernetes.io/os": "linux",
                  "kubernetes.io/arch": arch, "beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": arch}
        labels.update(self.cfg.node_labels)
        return labels

    def node_info(self) -> Obj:
        """``status.nodeInfo`` (kernel, OS image, runtime and kubelet versions, ids)."""
        info = {
            "machineID": _read("/etc/machine-id") or "",
            "systemUUID": _read("/sys/class/dmi/id/product_uuid") or "",
            "bootID": _read("/proc/sys/kernel/random/boot_id") or "",
            "kernelVersion": platform.release(),
            "osImage": os_image(),
            "containerRuntimeVersion": f"docker://{self.runtime_version}",
            "kubeletVersion": KUBELET_VERSION,
            "operatingSystem": "linux",
            "architecture": ARCH.get(platform.machine(), platform.machine()),
        }
        return info

    def conditions(self, old: list[Obj], runtime_ok: bool) -> list[Obj]:
        """Memory/Disk/PID pressure (free memory < 100Mi, free disk < 10%, free PIDs < 5%) and Ready.

        Ready is False (``KubeletNotReady``) while the Docker Engine does not answer or the pod
        network is not ready (:attr:`network_not_ready`, e.g. no ``spec.podCIDR`` yet).
        """
        now = now_rfc3339()
        mem = read_meminfo()
        available = mem.get("MemAvailable", mem.get("MemFree", 0))
        memory_pressure = bool(mem) and available < MEMORY_PRESSURE_BYTES
        disk_pressure = False
        try:
            probe = self.cfg.root_dir if self.cfg.root_dir.exists() else Path("/")
            usage = shutil.disk_usage(probe)
            disk_pressure = usage.total > 0 and usage.free / usage.total < DISK_PRESSURE_FRACTION
        except OSError:
            pass
        pid_pressure = False
        try:
            pid_max = int(Path("/proc/sys/kernel/pid_max").read_text())
            procs = sum(1 for p in os.listdir("/proc") if p.isdigit())
            pid_pressure = pid_max > 0 and (pid_max - procs) / pid_max < PID_PRESSURE_FRACTION
        except (OSError, ValueError):
            pass
        conds = [
            condition(old, "MemoryPressure", "True" if memory_pressure else "False",
                       "KubeletHasInsufficientMemory" if memory_pressure else "KubeletHasSufficientMemory",
                       "kubelet has insufficient memory available" if memory_pressure
                       else "kubelet has sufficient memory available", now),
            condition(old, "DiskPressure", "True" if disk_pressure else "False",
                       "KubeletHasDiskPressure" if disk_pressure else "KubeletHasNoDiskPressure",
                       "kubelet has disk pressure" if disk_pressure else "kubelet has no disk pressure", now),
            condition(old, "PIDPressure", "True" if pid_pressure else "False",
                       "KubeletHasInsufficientPID" if pid_pressure else "KubeletHasSufficientPID",
                       "kubelet has insufficient PID available" if pid_pressure
                       else "kubelet has sufficient PID available", now),
        ]
        if not runtime_ok:
            conds.append(condition(old, "Ready", "False", "KubeletNotReady",
                                    "container runtime is down: the Docker Engine does not answer", now))
        elif self.network_not_ready:
            conds.append(condition(old, "Ready", "False", "KubeletNotReady",
                                    "container runtime network not ready: NetworkReady=false "
                                    f"reason:NetworkPluginNotReady message:{self.network_not_ready}", now))
        else:
            conds.append(condition(old, "Ready", "True", "KubeletReady", "kubelet is posting ready status", now))
        return conds

    async def status(self, old: Obj | None) -> Obj:
        """The Node ``status`` to post (``old`` is the current status, for transition times)."""
        runtime_ok = await self.runtime.ping()
        if runtime_ok:
            try:
                self.runtime_version = await self.runtime.version()
            except Exception:  # noqa: BLE001
                pass
        cap = capacity(self.cfg.root_dir, self.cfg.max_pods)
        status: Obj = {
            "capacity": cap,
            "allocatable": dict(cap),
            "conditions": self.conditions((old or {}).get("conditions") or [], runtime_ok),
            "addresses": [{"type": "InternalIP", "address": self.cfg.node_ip},
                          {"type": "Hostname", "address": self.cfg.node_name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": self.cfg.port}},
            "nodeInfo": self.node_info(),
        }
        if runtime_ok:
            try:
                status["images"] = (await self.runtime.images())[:50]
            except Exception:  # noqa: BLE001
                pass
        return status

    # ------------------------------------------------------------------ registration
    async def register(self) -> Obj:
        """Create or update the Node object; returns it.  Raises APIError when the apiserver refuses."""
        try:
            self.runtime_version = await self.runtime.version()
        except Exception:  # noqa: BLE001
            pass
        name = self.cfg.node_name
        spec: Obj = {}
        if self.cfg.register_with_taints:
            spec["taints"] = [dict(t) for t in self.cfg.register_with_taints]
        if self.cfg.pod_cidr_explicit:
            spec["podCIDR"] = self.cfg.pod_cidr
            spec["podCIDRs"] = [self.cfg.pod_cidr]
        body = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": self.labels()},
                "spec": spec, "status": await self.status(None)}
        try:
            node = await self.client.create(self.nodes_rt, body)
            log.info("kubelet node=%s registered", name)
        except errors.AlreadyExists:
            node = await self._update_existing()
            log.info("kubelet node=%s already registered; updated", name)
        self.node = node
        node = await self.update_status()
        self.registered.set()
        await self._ensure_csi_node_logged()
        return node

    async def _update_existing(self) -> Obj:
        for _ in range(10):
            node = await self.client.get(self.nodes_rt, self.cfg.node_name)
            labels = dict(node["metadata"].get("labels") or {})
            wanted = {**labels, **self.labels()}
            spec = node.setdefault("spec", {})
            changed = wanted != labels
            if self.cfg.pod_cidr_explicit and not spec.get("podCIDR"):
                spec["podCIDR"] = self.cfg.pod_cidr
                spec["podCIDRs"] = [self.cfg.pod_cidr]
                changed = True
            if not changed:
                return node
            node["metadata"]["labels"] = wanted
            try:
                return await self.client.update(self.nodes_rt, node)
            except errors.Conflict:
                continue
        raise errors.Conflict(f"node {self.cfg.node_name} kept changing while the kubelet updated it")

    async def update_status(self) -> Obj:
        """Post the node status (merge patch of ``status``); returns the Node."""
        old = (self.node or {}).get("status")
        status = await self.status(old)
        try:
            node = await self.client.patch(self.nodes_rt, self.cfg.node_name, {"status": status},
                                           subresource="status")
        except errors.NotFound:
            log.warning("kubelet node=%s was deleted; registering again", self.cfg.node_name)
            self.node = None
            return await self.register()
        self.node = node
        return node

    async def ensure_csi_node(self) -> Obj | None:
        """Create this node's CSINode when it is missing, or point its ownerReference at the current
        Node when the Node was re-created (Kubernetes' ``nodeinfomanager.InitializeCSINodeWithAnnotation``);
        returns the CSINode (None before the Node is registered).  Raises APIError when the apiserver
        refuses."""
        node_meta = (self.node or {}).get("metadata") or {}
        if not node_meta.get("uid"):
            return None
        owner = {"apiVersion": "v1", "kind": "Node", "name": node_meta["name"], "uid": node_meta["uid"]}
        try:
            current: Obj = await self.client.get(self.csinodes_rt, self.cfg.node_name)
        except errors.NotFound:
            body = {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
                    "metadata": {"name": self.cfg.node_name, "ownerReferences": [owner],
                                 "annotations": {MIGRATED_PLUGINS_ANNOTATION: ",".join(MIGRATED_PLUGINS)}},
                    "spec": {"drivers": []}}
            created: Obj = await self.client.create(self.csinodes_rt, body)
            log.info("kubelet node=%s created CSINode", self.cfg.node_name)
            return created
        refs = current["metadata"].get("ownerReferences") or []
        if any(r.get("uid") == owner["uid"] for r in refs):
            return current
        current["metadata"]["ownerReferences"] = [r for r in refs if r.get("kind") != "Node"] + [owner]
        updated: Obj = await self.client.update(self.csinodes_rt, current)
        return updated

    async def _ensure_csi_node_logged(self) -> None:
        try:
            await self.ensure_csi_node()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - retried with the next status update
            log.warning("kubelet node=%s cannot keep its CSINode: %s", self.cfg.node_name, exc)

    # ------------------------------------------------------------------ heartbeats
    async def renew_lease(self) -> None:
        """Create or renew ``kube-node-lease/<node>`` (see :class:`~minik8s.client.nodeheartbeat.NodeLease`)."""
        await self.lease.renew()

    async def run_lease(self) -> None:
        """Renew the Lease every quarter of its duration, forever (errors are logged and retried)."""
        await self.lease.run()

    async def run_status(self) -> None:
        """Post node status every ``node_status_update_frequency`` seconds, forever."""
        while True:
            await asyncio.sleep(self.cfg.node_status_update_frequency)
            try:
                await self.update_status()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - the apiserver may be away
                log.warning("kubelet node=%s status update failed: %s", self.cfg.node_name, exc)
                continue
            await self._ensure_csi_node_logged()
