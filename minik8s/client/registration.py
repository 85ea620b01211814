"""A component that is not a pod, published in the cluster as a selector-less Service.

Kubernetes reaches servers outside pods (kube-apiserver's ``default/kubernetes``, an external
database) through a Service **without a selector** whose Endpoints someone else keeps.  minik8s'
host processes that pods call (the cluster DNS server, the serverless gateway) publish themselves
that way: :class:`ServiceRegistration` creates the Service when it is missing (with a fixed
``clusterIP`` when one is well known, as ``kube-dns``' 10.96.0.10 is) and adds this instance's
address (with its ``nodeName``) to the Endpoints, and takes it out again when the instance stops.
Every write is a read-modify-write on resourceVersion (409 → read again), so instances on several
nodes never drop each other's address.  kube-proxy then DNATs the ClusterIP to the instances,
and the cluster DNS answers ``<name>.<namespace>.svc.<domain>``.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
from collections.abc import Callable

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.client.rest import Client

log = logging.getLogger("registration")


def endpoint_ports(service_ports: list[Obj]) -> list[Obj]:
    """The Endpoints ports of ``service_ports``: each one's name, target port and protocol."""
    return [{"name": p["name"], "port": p.get("targetPort", p["port"]), "protocol": p.get("protocol", "TCP")}
            for p in service_ports]


def with_address(endpoints: Obj, ip: str, node_name: str | None, ports: list[Obj]) -> Obj:
    """``endpoints`` with ``ip`` among the ready addresses of the subset of ``ports`` (idempotent)."""
    out = copy.deepcopy(endpoints)
    subsets = out.setdefault("subsets", []) or []
    out["subsets"] = subsets
    subset = next((s for s in subsets if s.get("ports") == ports), None)
    if subset is None:
        subset = {"addresses": [], "ports": ports}
        subsets.append(subset)
    addresses = [a for a in subset.get("addresses") or [] if a.get("ip") != ip]
    address: Obj = {"ip": ip}
    if node_name:
        address["nodeName"] = node_name
    addresses.append(address)
    subset["addresses"] = sorted(addresses, key=lambda a: str(a.get("ip")))
    return out


def without_address(endpoints: Obj, ip: str, ports: list[Obj]) -> Obj:
    """``endpoints`` without ``ip`` in the subset of ``ports`` (empty subsets dropped)."""
    out = copy.deepcopy(endpoints)
    subsets = []
    for subset in out.get("subsets") or []:
        if subset.get("ports") == ports:
            subset["addresses"] = [a for a in subset.get("addresses") or [] if a.get("ip") != ip]
            if not subset["addresses"]:
                subset.pop("addresses")
        if subset.get("addresses") or subset.get("notReadyAddresses"):
            subsets.append(subset)
    out["subsets"] = subsets
    return out


class ServiceRegistration:
    """Keeps Service ``namespace/name`` (ports ``service_ports``: ``name``, ``port``, ``targetPort``,
    ``protocol``; ``labels``; ``cluster_ip`` None: allocated) and this instance's ``advertise`` IP in
    its Endpoints.  Raises API errors (other than a retried 409) from :meth:`ensure` and
    :meth:`withdraw`; :meth:`run` logs them and tries again next period."""

    def __init__(self, client: Client, namespace: str, name: str, service_ports: list[Obj], advertise: str,
                 labels: dict[str, str], cluster_ip: str | None = None, node_name: str | None = None,
                 component: str = "registration") -> None:
        self.client = client
        self.namespace = namespace
        self.name = name
        self.service_ports = service_ports
        self.ports = endpoint_ports(service_ports)
        self.advertise = advertise
        self.labels = labels
        self.cluster_ip = cluster_ip
        self.node_name = node_name
        self.component = component
        self.svc_rt = client.kind("v1", "Service")
        self.ep_rt = client.kind("v1", "Endpoints")

    def service_body(self) -> Obj:
        spec: Obj = {"type": "ClusterIP", "ports": copy.deepcopy(self.service_ports)}
        if self.cluster_ip:
            spec["clusterIP"] = self.cluster_ip
        return {"apiVersion": "v1", "kind": "Service",
                "metadata": {"name": self.name, "namespace": self.namespace, "labels": dict(self.labels)},
                "spec": spec}

    async def ensure(self) -> None:
        """Create the Service if missing, then add this instance's address to the Endpoints."""
        await self.ensure_service()
        await self._edit(lambda ep: with_address(ep, self.advertise, self.node_name, self.ports))

    async def ensure_service(self) -> Obj:
        try:
            service: Obj = await self.client.get(self.svc_rt, self.name, self.namespace)
        except errors.NotFound:
            try:
                created: Obj = await self.client.create(self.svc_rt, self.service_body(), self.namespace)
            except errors.AlreadyExists:
                return await self.ensure_service()
            log.info("%s created service %s/%s clusterIP %s", self.component, self.namespace, self.name,
                     (created.get("spec") or {}).get("clusterIP"))
            return created
        ip = (service.get("spec") or {}).get("clusterIP")
        if self.cluster_ip and ip != self.cluster_ip:
            log.warning("%s service %s/%s has clusterIP %s, not %s", self.component, self.namespace, self.name,
                        ip, self.cluster_ip)
        return service

    async def withdraw(self) -> None:
        """Remove this instance's address from the Endpoints (on shutdown)."""
        await self._edit(lambda ep: without_address(ep, self.advertise, self.ports))

    async def run(self, stop: asyncio.Event, period: float, registered: Callable[[], None] | None = None) -> None:
        """:meth:`ensure` every ``period`` seconds until ``stop`` is set (``registered`` is called
        after the first try), then :meth:`withdraw` (best effort, 5 s)."""
        try:
            while not stop.is_set():
                try:
                    await self.ensure()
                except Exception as exc:  # noqa: BLE001 - the apiserver may be away: retried next period
                    log.warning("%s could not register %s in %s/%s: %s", self.component, self.advertise,
                                self.namespace, self.name, exc)
                if registered is not None:
                    registered()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), period)
        finally:
            try:
                await asyncio.wait_for(asyncio.shield(self.withdraw()), 5)
            except Exception as exc:  # noqa: BLE001 - best effort on the way out
                log.warning("%s could not withdraw %s from %s/%s: %s", self.component, self.advertise,
                            self.namespace, self.name, exc)

    async def _edit(self, change: Callable[[Obj], Obj], attempts: int = 5) -> None:
        for attempt in range(attempts):
            try:
                current: Obj | None = await self.client.get(self.ep_rt, self.name, self.namespace)
            except errors.NotFound:
                current = None
            base = current or {"apiVersion": "v1", "kind": "Endpoints",
                               "metadata": {"name": self.name, "namespace": self.namespace,
                                            "labels": dict(self.labels)}, "subsets": []}
            wanted = change(base)
            if current is not None and (wanted.get("subsets") or []) == (current.get("subsets") or []):
                return
            try:
                if current is None:
                    await self.client.create(self.ep_rt, wanted, self.namespace)
                else:
                    await self.client.update(self.ep_rt, wanted)
                return
            except (errors.Conflict, errors.AlreadyExists, errors.NotFound):
                if attempt == attempts - 1:
                    raise
