"""ClusterIP, nodePort and healthCheckNodePort allocation for Services (kube-apiserver's ``ipallocator``
and ``portallocator``).

Allocations are etcd keys created atomically (``/registry/ranges/serviceips/<ip>``,
``/registry/ranges/servicenodeports/<port>``), so two concurrent creates can never
get the same ClusterIP or nodePort; deleting the Service releases them.  A LoadBalancer Service with
``externalTrafficPolicy: Local`` also holds a ``spec.healthCheckNodePort`` from the node-port range
(asked for or allocated), released when the Service no longer needs it.  Defaults:
service CIDR 10.96.0.0/16, node ports 30000-32767 (kube-apiserver's
``--service-cluster-ip-range`` / ``--service-node-port-range``).
"""

from __future__ import annotations

import ipaddress
import random
from typing import Any

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.apiserver.storage import Store

IP_KEY = "/registry/ranges/serviceips/"
PORT_KEY = "/registry/ranges/servicenodeports/"


def needs_health_check(spec: Obj) -> bool:
    """Kubernetes' ``NeedsHealthCheck``: a LoadBalancer Service with ``externalTrafficPolicy: Local``."""
    return spec.get("type") == "LoadBalancer" and spec.get("externalTrafficPolicy") == "Local"


class ServiceAllocator:
    """Reserves ClusterIPs in ``service_cidr`` and nodePorts in ``node_port_range`` (inclusive)."""

    def __init__(self, service_cidr: str = "10.96.0.0/16", node_port_range: tuple[int, int] = (30000, 32767)) -> None:
        self.network = ipaddress.ip_network(service_cidr)
        self.node_ports = node_port_range

    async def allocate(self, store: Store, obj: Obj, old: Obj | None) -> list[str]:
        """Reserve the ClusterIP and nodePorts ``obj`` needs (new ones only); returns the keys taken.

        Raises Invalid when a requested IP/port is taken, or the range is full.
        """
        spec = obj.setdefault("spec", {})
        owner = f'{obj["metadata"].get("namespace")}/{obj["metadata"]["name"]}'
        taken: list[str] = []
        try:
            if spec.get("type") != "ExternalName" and spec.get("clusterIP") != "None":
                old_ip = ((old or {}).get("spec") or {}).get("clusterIP")
                if not spec.get("clusterIP"):
                    spec["clusterIP"] = await self._allocate_ip(store, owner, taken)
                elif spec["clusterIP"] != old_ip:
                    await self._reserve(store, IP_KEY + spec["clusterIP"], owner, taken,
                                        f"spec.clusterIPs[0]: Invalid value: \"{spec['clusterIP']}\": failed to "
                                        f"allocate IP {spec['clusterIP']}: provided IP is already allocated")
                spec["clusterIPs"] = [spec["clusterIP"]]
            if spec.get("type") in ("NodePort", "LoadBalancer"):
                old_ports = {p.get("nodePort") for p in ((old or {}).get("spec") or {}).get("ports") or []}
                # a LoadBalancer with allocateLoadBalancerNodePorts false keeps only the ones it asks for
                allocate = spec.get("type") == "NodePort" or spec.get("allocateLoadBalancerNodePorts") is not False
                for i, p in enumerate(spec.get("ports") or []):
                    if not p.get("nodePort"):
                        if allocate:
                            p["nodePort"] = await self._allocate_port(store, owner, taken)
                    elif p["nodePort"] not in old_ports:
                        await self._reserve(store, PORT_KEY + str(p["nodePort"]), owner, taken,
                                            f"spec.ports[{i}].nodePort: Invalid value: {p['nodePort']}: "
                                            "provided port is already allocated")
            if needs_health_check(spec):
                await self._allocate_health_check_port(store, spec, old, owner, taken)
        except BaseException:
            await self.release(store, taken)
            raise
        return taken

    async def _allocate_health_check_port(self, store: Store, spec: Obj, old: Obj | None, owner: str,
                                          taken: list[str]) -> None:
        """Reserve the requested ``healthCheckNodePort`` or allocate one (kube-apiserver's
        ``allocHealthCheckNodePort``; its failures are internal errors there too).  A port the old
        object already held stays held."""
        old_spec = (old or {}).get("spec") or {}
        port = spec.get("healthCheckNodePort")
        if not port:
            spec["healthCheckNodePort"] = await self._allocate_port(store, owner, taken, "a HealthCheck NodePort")
            return
        if needs_health_check(old_spec) and old_spec.get("healthCheckNodePort") == port:
            return
        low, high = self.node_ports
        problem = f"failed to allocate requested HealthCheck NodePort {port}: "
        if not low <= port <= high:
            raise errors.InternalError(f"Internal error occurred: {problem}provided port is not in the valid range. "
                                       f"The range of valid ports is {low}-{high}")
        try:
            await store.create(PORT_KEY + str(port), {"service": owner})
        except errors.AlreadyExists:
            raise errors.InternalError(f"Internal error occurred: {problem}provided port is already allocated") \
                from None
        taken.append(PORT_KEY + str(port))

    async def _reserve(self, store: Store, key: str, owner: str, taken: list[str], message: str) -> None:
        try:
            await store.create(key, {"service": owner})
        except errors.AlreadyExists:
            raise errors.Invalid(f'Service "{owner.split("/")[-1]}" is invalid: {message}') from None
        taken.append(key)

    async def _allocate_ip(self, store: Store, owner: str, taken: list[str]) -> str:
        hosts = self.network.num_addresses - 2
        # Like kube-apiserver, dynamic allocation stays out of the low band (16..256 addresses) so
        # well-known static ClusterIPs such as kube-dns' 10.96.0.10 are free when asked for.
        low_band = min(max(16, hosts // 16), 256) if hosts > 32 else 1
        for _ in range(64):
            ip = str(self.network.network_address + random.randint(low_band + 1, hosts))
            try:
                await store.create(IP_KEY + ip, {"service": owner})
            except errors.AlreadyExists:
                continue
            taken.append(IP_KEY + ip)
            return ip
        raise errors.InternalError(f"failed to allocate a serviceIP: range {self.network} is full")

    async def _allocate_port(self, store: Store, owner: str, taken: list[str], what: str = "a nodePort") -> int:
        low, high = self.node_ports
        for _ in range(64):
            port = random.randint(low, high)
            try:
                await store.create(PORT_KEY + str(port), {"service": owner})
            except errors.AlreadyExists:
                continue
            taken.append(PORT_KEY + str(port))
            return port
        raise errors.InternalError(f"failed to allocate {what}: range {low}-{high} is full")

    @staticmethod
    def keys_of(obj: Obj | None) -> set[str]:
        """The allocation keys a Service holds."""
        if not obj:
            return set()
        spec = obj.get("spec") or {}
        keys = set()
        if spec.get("clusterIP") not in (None, "", "None"):
            keys.add(IP_KEY + spec["clusterIP"])
        for p in spec.get("ports") or []:
            if p.get("nodePort"):
                keys.add(PORT_KEY + str(p["nodePort"]))
        if needs_health_check(spec) and spec.get("healthCheckNodePort"):
            keys.add(PORT_KEY + str(spec["healthCheckNodePort"]))
        return keys

    @staticmethod
    async def release(store: Store, keys: Any) -> None:
        """Delete the allocation keys ``keys`` (those already gone are skipped)."""
        for key in keys:
            try:
                await store.delete(key)
            except errors.NotFound:
                pass
