"""The ``default/kubernetes`` Endpoints kept by apiserver leases (kube-apiserver's ``lease`` reconciler).

Several apiservers serve one etcd; pods reach "the apiserver" through the ``kubernetes`` Service,
so its Endpoints must list exactly the apiservers that are alive.  As kube-apiserver's
``--endpoint-reconciler-type=lease`` does, each apiserver:

* renews a lease of its own every ``interval`` seconds (10 s) with a time to live ``ttl`` (15 s).
  Kubernetes keeps these as TTL keys under ``/masterleases/<ip>`` in etcd; minik8s keeps them as
  ``coordination.k8s.io/v1`` Leases ``kube-system/apiserver-endpoint-<ip>`` (label
  ``minik8s.io/apiserver-endpoint=true``, ``holderIdentity`` = the address, ``renewTime``,
  ``leaseDurationSeconds`` = the TTL), so ``kubectl get lease -n kube-system`` shows them;
* lists those leases and writes the Endpoints with the addresses of the unexpired ones (its own
  always included), sorted, port ``https`` = its own port; expired leases are deleted (with a
  resourceVersion precondition, so a lease renewed meanwhile stays);
* on a clean stop deletes its lease and takes its address out at once (kube-apiserver's
  RemoveEndpoints at shutdown).

An apiserver killed outright stays listed until its lease has not been renewed for ``ttl``
seconds and another apiserver's next pass.  Expiry compares ``renewTime`` with the reading
apiserver's clock (etcd's TTLs need no clocks): control-plane hosts are expected to keep time (NTP).
Only an IP advertise address that pods can reach is published (not loopback, not unspecified).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as _dt
import logging
from typing import Any

from minik8s.api import errors
from minik8s.api.base import Obj, now_rfc3339_micro, parse_time
from minik8s.api.resourcetypes import Registry
from minik8s.apiserver.resources import DeleteOptions, ListOptions
from minik8s.host.addresses import publishable

log = logging.getLogger("apiserver")

LEASE_NAMESPACE = "kube-system"
LEASE_LABEL = "minik8s.io/apiserver-endpoint"
SERVICE_NAMESPACE = "default"
SERVICE_NAME = "kubernetes"
#: kube-apiserver's DefaultEndpointReconcilerTTL and DefaultEndpointReconcilerInterval (seconds).
DEFAULT_TTL = 15.0
DEFAULT_INTERVAL = 10.0


def lease_name(ip: str) -> str:
    """``apiserver-endpoint-<ip>`` with ``.`` and ``:`` as ``-`` (a valid object name)."""
    return "apiserver-endpoint-" + ip.replace(".", "-").replace(":", "-")


def lease_live(lease: Obj, now: _dt.datetime) -> bool:
    """Whether ``lease`` was renewed less than ``leaseDurationSeconds`` before ``now``."""
    spec = lease.get("spec") or {}
    renewed = parse_time(spec.get("renewTime"))
    if renewed is None:
        return False
    return renewed + _dt.timedelta(seconds=float(spec.get("leaseDurationSeconds") or 0)) > now


class LeaseEndpointReconciler:
    """Keeps ``default/kubernetes`` Endpoints = the live apiservers (see the module docstring).

    ``api`` is the apiserver's ResourceAPI; ``advertise_host`` this apiserver's IP, ``port`` its
    port; ``ttl`` and ``interval`` in seconds.  :meth:`reconcile` raises API errors (etcd away);
    :meth:`run` logs them and tries again next interval."""

    def __init__(self, api: Any, registry: Registry, advertise_host: str, port: int,
                 ttl: float = DEFAULT_TTL, interval: float = DEFAULT_INTERVAL) -> None:
        self.api = api
        self.advertise_host = advertise_host
        self.port = port
        self.ttl = ttl
        self.interval = interval
        lease_rt, ep_rt = registry.by_kind("coordination.k8s.io/v1", "Lease"), registry.by_kind("v1", "Endpoints")
        assert lease_rt is not None and ep_rt is not None
        self.lease_rt, self.ep_rt = lease_rt, ep_rt
        self.enabled = publishable(advertise_host)

    async def run(self, stop: asyncio.Event) -> None:
        """Reconcile every ``interval`` seconds until ``stop`` is set, then :meth:`remove` (best effort)."""
        if not self.enabled:
            return
        warned = False
        while not stop.is_set():
            try:
                await self.reconcile()
                warned = False
            except errors.APIError as exc:
                if not warned:
                    log.warning("apiserver endpoint reconciler: %s (retrying every %.0fs)", exc.message,
                                self.interval)
                    warned = True
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.interval)
        try:
            await asyncio.wait_for(self.remove(), 5)
        except (errors.APIError, TimeoutError) as exc:
            log.warning("apiserver endpoint reconciler: could not remove %s: %s", self.advertise_host, exc)

    async def reconcile(self) -> list[str]:
        """One pass: renew this apiserver's lease, write the live addresses; returns them."""
        if not self.enabled:
            return []
        await self._renew()
        now = _dt.datetime.now(_dt.UTC)
        leases = await self.api.list(self.lease_rt, LEASE_NAMESPACE, ListOptions(label_selector=f"{LEASE_LABEL}=true"))
        live = {self.advertise_host}
        for lease in leases.get("items") or []:
            ip = str((lease.get("spec") or {}).get("holderIdentity") or "")
            if lease_live(lease, now):
                if publishable(ip):
                    live.add(ip)
                continue
            meta = lease.get("metadata") or {}
            with contextlib.suppress(errors.NotFound, errors.Conflict):  # renewed or removed meanwhile
                await self.api.delete(self.lease_rt, LEASE_NAMESPACE, meta["name"],
                                      DeleteOptions(precondition_resource_version=meta.get("resourceVersion")))
                log.info("apiserver endpoint reconciler: lease of %s expired; removing it", ip)
        addresses = sorted(live, key=_ip_key)
        await self._write(addresses)
        return addresses

    async def remove(self) -> None:
        """Delete this apiserver's lease and take its address out of the Endpoints (clean stop)."""
        if not self.enabled:
            return
        with contextlib.suppress(errors.NotFound):
            await self.api.delete(self.lease_rt, LEASE_NAMESPACE, lease_name(self.advertise_host), DeleteOptions())
        for _ in range(5):
            try:
                ep = await self.api.get(self.ep_rt, SERVICE_NAMESPACE, SERVICE_NAME)
            except errors.NotFound:
                return
            ips = [a.get("ip") for s in ep.get("subsets") or [] for a in s.get("addresses") or []]
            if self.advertise_host not in ips:
                return
            remaining = [str(ip) for ip in ips if ip != self.advertise_host]
            ep["subsets"] = self._subsets(remaining)
            try:
                await self.api.update(self.ep_rt, SERVICE_NAMESPACE, SERVICE_NAME, ep)
                log.info("apiserver endpoint reconciler: removed %s from %s/%s", self.advertise_host,
                         SERVICE_NAMESPACE, SERVICE_NAME)
                return
            except errors.Conflict:
                continue

    def _subsets(self, addresses: list[str]) -> list[Obj]:
        if not addresses:
            return []
        return [{"addresses": [{"ip": ip} for ip in addresses],
                 "ports": [{"name": "https", "port": self.port, "protocol": "TCP"}]}]

    async def _renew(self) -> None:
        name = lease_name(self.advertise_host)
        now = now_rfc3339_micro()
        spec = {"holderIdentity": self.advertise_host, "leaseDurationSeconds": max(1, round(self.ttl)),
                "renewTime": now}
        try:
            lease = await self.api.get(self.lease_rt, LEASE_NAMESPACE, name)
        except errors.NotFound:
            with contextlib.suppress(errors.AlreadyExists):
                await self.api.create(self.lease_rt, LEASE_NAMESPACE, {
                    "metadata": {"name": name, "labels": {LEASE_LABEL: "true"}},
                    "spec": {**spec, "acquireTime": now}})
            return
        lease["spec"] = {**(lease.get("spec") or {}), **spec}
        lease.setdefault("metadata", {}).setdefault("labels", {})[LEASE_LABEL] = "true"
        with contextlib.suppress(errors.Conflict):  # written by someone else meanwhile: next pass
            await self.api.update(self.lease_rt, LEASE_NAMESPACE, name, lease)

    async def _write(self, addresses: list[str]) -> None:
        wanted = self._subsets(addresses)
        try:
            ep = await self.api.get(self.ep_rt, SERVICE_NAMESPACE, SERVICE_NAME)
        except errors.NotFound:
            with contextlib.suppress(errors.AlreadyExists):
                await self.api.create(self.ep_rt, SERVICE_NAMESPACE, {
                    "metadata": {"name": SERVICE_NAME}, "subsets": wanted})
            return
        if (ep.get("subsets") or []) == wanted:
            return
        ep["subsets"] = wanted
        with contextlib.suppress(errors.Conflict):  # another apiserver wrote first: next pass
            await self.api.update(self.ep_rt, SERVICE_NAMESPACE, SERVICE_NAME, ep)
            log.info("apiserver endpoint reconciler: %s/%s now %s", SERVICE_NAMESPACE, SERVICE_NAME,
                     ",".join(addresses))


def _ip_key(ip: str) -> tuple[int, ...]:
    import ipaddress

    parsed = ipaddress.ip_address(ip)
    return (parsed.version, int(parsed))
