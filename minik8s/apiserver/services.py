"""Services: ClusterIP and NodePort allocation, defaults and validation (``corev1.Service``).

Allocations are etcd keys created atomically (``/registry/ranges/serviceips/<ip>``,
``/registry/ranges/servicenodeports/<port>``), so two concurrent creates can never
get the same ClusterIP or nodePort; deleting the Service releases them.  Defaults:
service CIDR 10.96.0.0/16, node ports 30000-32767 (kube-apiserver's
``--service-cluster-ip-range`` / ``--service-node-port-range``).
"""

from __future__ import annotations

import ipaddress
import random
from typing import Any

from minik8s.api import errors
from minik8s.api import validation as v
from minik8s.apiserver.storage import Store
from minik8s.apiserver.strategy import PROTOCOLS, Cause, Obj, Strategy, _supported

SERVICE_TYPES = ("ClusterIP", "NodePort", "LoadBalancer", "ExternalName")
IP_KEY = "/registry/ranges/serviceips/"
PORT_KEY = "/registry/ranges/servicenodeports/"


class ServiceStrategy(Strategy):
    """Defaults, validation and IP/port allocation for Services."""

    has_status = True
    name_check = staticmethod(v.dns1035_label_errors)

    def __init__(self, service_cidr: str = "10.96.0.0/16", node_port_range: tuple[int, int] = (30000, 32767)) -> None:
        self.network = ipaddress.ip_network(service_cidr)
        self.node_ports = node_port_range

    # ------------------------------------------------------------------ defaults and validation
    def default(self, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        spec.setdefault("type", "ClusterIP")
        spec.setdefault("sessionAffinity", "None")
        if spec["type"] != "ExternalName":
            spec.setdefault("ipFamilies", ["IPv4"])
            spec.setdefault("ipFamilyPolicy", "SingleStack")
            spec.setdefault("internalTrafficPolicy", "Cluster")
        if spec["type"] in ("NodePort", "LoadBalancer"):
            spec.setdefault("externalTrafficPolicy", "Cluster")
        for port in spec.get("ports") or []:
            port.setdefault("protocol", "TCP")
            if port.get("targetPort") in (None, 0, ""):
                port["targetPort"] = port.get("port")

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        spec = obj.get("spec") or {}
        stype = spec.get("type")
        if stype not in SERVICE_TYPES:
            causes.append(("spec.type", None, _supported(stype, SERVICE_TYPES)))
        ports = spec.get("ports") or []
        headless = spec.get("clusterIP") == "None"
        if not ports and stype != "ExternalName" and not headless:
            causes.append(("spec.ports", None, "Required value"))
        names: set[str] = set()
        for i, p in enumerate(ports):
            path = f"spec.ports[{i}]"
            name = p.get("name")
            if len(ports) > 1 and not name:
                causes.append((f"{path}.name", None, "Required value"))
            if name:
                causes += [(f"{path}.name", name, m) for m in v.dns1123_label_errors(name)]
                if name in names:
                    causes.append((f"{path}.name", None, f'Duplicate value: "{name}"'))
                names.add(name)
            port = p.get("port")
            if not isinstance(port, int):
                causes.append((f"{path}.port", None, "Required value"))
            else:
                causes += [(f"{path}.port", port, m) for m in v.port_number_errors(port)]
            if p.get("protocol") not in PROTOCOLS:
                causes.append((f"{path}.protocol", None, _supported(p.get("protocol"), PROTOCOLS)))
            target = p.get("targetPort")
            if isinstance(target, int):
                causes += [(f"{path}.targetPort", target, m) for m in v.port_number_errors(target)]
            elif isinstance(target, str):
                causes += [(f"{path}.targetPort", target, m) for m in v.iana_svc_name_errors(target)]
            node_port = p.get("nodePort")
            if node_port:
                if stype not in ("NodePort", "LoadBalancer"):
                    causes.append((f"{path}.nodePort", None, "Forbidden: may not be used when `type` is 'ClusterIP'"))
                elif not self.node_ports[0] <= node_port <= self.node_ports[1]:
                    causes.append((f"{path}.nodePort", node_port,
                                   f"provided port is not in the valid range. The range of valid ports is "
                                   f"{self.node_ports[0]}-{self.node_ports[1]}"))
        ip = spec.get("clusterIP")
        if ip not in (None, "", "None"):
            try:
                if ipaddress.ip_address(ip) not in self.network:
                    raise ValueError
            except ValueError:
                causes.append(("spec.clusterIPs[0]", ip, f"failed to allocate IP {ip}: provided IP is not in the "
                               f"valid range. The range of valid IPs is {self.network}"))
        if old is not None:
            old_ip = (old.get("spec") or {}).get("clusterIP")
            external = "ExternalName" in (stype, (old.get("spec") or {}).get("type"))
            if old_ip and ip != old_ip and not external:
                causes.append(("spec.clusterIPs[0]", ip, "field is immutable"))
        for key, val in (spec.get("selector") or {}).items():
            causes += [("spec.selector", key, m) for m in v.qualified_name_errors(key)]
            causes += [("spec.selector", val, m) for m in v.label_value_errors(val)]
        return causes

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        super().prepare_for_update(new, old)
        spec, old_spec = new.setdefault("spec", {}), old.get("spec") or {}
        if not spec.get("clusterIP") and old_spec.get("clusterIP"):
            spec["clusterIP"] = old_spec["clusterIP"]
            spec["clusterIPs"] = old_spec.get("clusterIPs") or [old_spec["clusterIP"]]
        if spec.get("type") in ("NodePort", "LoadBalancer"):
            previous = {(p.get("port"), p.get("protocol", "TCP")): p.get("nodePort")
                        for p in old_spec.get("ports") or []}
            for p in spec.get("ports") or []:
                if not p.get("nodePort"):
                    kept = previous.get((p.get("port"), p.get("protocol", "TCP")))
                    if kept:
                        p["nodePort"] = kept

    def fields(self, obj: Obj) -> dict[str, str]:
        f = super().fields(obj)
        f["spec.clusterIP"] = (obj.get("spec") or {}).get("clusterIP") or ""
        f["spec.type"] = (obj.get("spec") or {}).get("type") or ""
        return f

    # ------------------------------------------------------------------ allocation
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
                for i, p in enumerate(spec.get("ports") or []):
                    if not p.get("nodePort"):
                        p["nodePort"] = await self._allocate_port(store, owner, taken)
                    elif p["nodePort"] not in old_ports:
                        await self._reserve(store, PORT_KEY + str(p["nodePort"]), owner, taken,
                                            f"spec.ports[{i}].nodePort: Invalid value: {p['nodePort']}: "
                                            "provided port is already allocated")
        except BaseException:
            await self.release_keys(store, taken)
            raise
        return taken

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

    async def _allocate_port(self, store: Store, owner: str, taken: list[str]) -> int:
        low, high = self.node_ports
        for _ in range(64):
            port = random.randint(low, high)
            try:
                await store.create(PORT_KEY + str(port), {"service": owner})
            except errors.AlreadyExists:
                continue
            taken.append(PORT_KEY + str(port))
            return port
        raise errors.InternalError(f"failed to allocate a nodePort: range {low}-{high} is full")

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
        return keys

    @staticmethod
    async def release_keys(store: Store, keys: Any) -> None:
        for key in keys:
            try:
                await store.delete(key)
            except errors.NotFound:
                pass
