"""The proxy's control loop: informers mark the state dirty, one loop syncs it to the kernel.

Kubernetes' kube-proxy shape (``BoundedFrequencyRunner``): Service and EndpointSlice informers
(shared, cluster-wide) only set a *dirty* flag; a single loop syncs when the flag is set,
but never sooner than ``min_sync_period`` after the previous sync started, and at least
every ``sync_period`` seconds (a forced full resync, which also re-checks the jumps from
the built-in chains and the service CIDR route).  Nothing is programmed before both
informers have listed once, so a proxy started while the apiserver is away keeps the rules
it (or its predecessor) left; an informer keeps its cache when the apiserver goes away, so
the rules never flush on API errors either.  A failed sync is retried with back-off
(0.5 s doubling to ``sync_period``) and as a full rewrite.  After every sync the health check node
ports (:mod:`minik8s.proxy.healthcheck`) are opened, closed and updated to match the state.
NetworkPolicies (:mod:`minik8s.proxy.netpol`) run in a loop of their own, started after the first
Service sync.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from typing import Protocol

from minik8s.client.factory import SharedInformerFactory
from minik8s.client.informer import Informer
from minik8s.client.rest import Client
from minik8s.host.errors import CommandFailed
from minik8s.proxy import syncloop
from minik8s.proxy.config import ProxyConfig
from minik8s.proxy.healthcheck import HealthCheckServers
from minik8s.proxy.iptables import SyncResult
from minik8s.proxy.netpol import PolicyEnforcer
from minik8s.proxy.routing import Links, ServiceRoute
from minik8s.proxy.servicemap import ProxyState, build_state

log = logging.getLogger("proxy")


class Backend(Protocol):
    """A proxy mode: makes the kernel match a :class:`ProxyState`."""

    mode: str

    def sync(self, state: ProxyState, force: bool = False) -> SyncResult: ...

    def cleanup(self) -> int: ...


class Proxier:
    """Runs the informers and the sync loop for one backend (iptables or IPVS).

    ``route`` (None to skip) is ensured at start and on every full resync.
    ``last_sync_seconds`` is the duration of the last sync that wrote rules; ``syncs``
    counts syncs that wrote, ``state`` is the last state programmed.
    """

    def __init__(self, client: Client, backend: Backend, cfg: ProxyConfig, route: ServiceRoute | None = None,
                 policies: PolicyEnforcer | None = None) -> None:
        self.client = client
        self.policies = policies
        self.backend = backend
        self.cfg = cfg
        self.route = route
        self.factory = SharedInformerFactory(client)
        self.services: Informer = self.factory.for_kind("v1", "Service")
        self.slices: Informer = self.factory.for_kind("discovery.k8s.io/v1", "EndpointSlice")
        self._dirty = asyncio.Event()
        self.syncs = 0
        self.failures = 0
        self.last_sync_seconds: float | None = None
        self.state: ProxyState | None = None
        self.synced = asyncio.Event()
        self.health = HealthCheckServers()
        self._node_port_ips: list[str] | None = None

    def mark_dirty(self, *_: object) -> None:
        """Informer handler: something changed; the loop will resync (coalesced)."""
        self._dirty.set()

    def _ensure_route(self) -> None:
        if self.route is None:
            return
        try:
            if self.route.ensure():
                log.info("route service-cidr=%s dev=%s", self.cfg.service_cidr, self.cfg.service_bridge)
        except Exception as exc:  # noqa: BLE001 - keep proxying; retried at the next full resync
            log.error("route service-cidr=%s failed: %s", self.cfg.service_cidr, exc)

    async def run(self) -> None:
        """Run until cancelled (the rules stay in place after it ends, as kube-proxy's do)."""
        await asyncio.to_thread(self._ensure_route)
        for informer in (self.services, self.slices):
            informer.add_handler(self.mark_dirty, self.mark_dirty, self.mark_dirty)
        self.factory.start()
        try:
            while not await self.factory.wait_for_cache_sync(timeout=10):
                log.warning("waiting for the apiserver at %s; keeping the current rules", self.client.config.server)
            log.info("informers synced services=%d endpointslices=%d", len(self.services.keys()),
                     len(self.slices.keys()))
            if self.policies is None:
                await self._loop()
                return
            services = asyncio.get_running_loop().create_task(self._loop())
            # the policy chain's FORWARD jump goes in after the first service sync, so it lands above the
            # proxy's own FORWARD jumps
            await self.synced.wait()
            policies = asyncio.get_running_loop().create_task(self.policies.run())
            try:
                await asyncio.gather(services, policies)
            finally:
                for task in (services, policies):
                    task.cancel()
        finally:
            await self.health.close()
            await self.factory.shutdown()

    async def _loop(self) -> None:
        await syncloop.run(self._dirty, self._sync, self.cfg.sync_period, self.cfg.min_sync_period)

    async def _sync(self, full: bool) -> bool:
        if full:
            await asyncio.to_thread(self._ensure_route)
        return await self.sync_once(full)

    def _read_node_port_ips(self) -> list[str] | None:
        """With ``--nodeport-addresses``, this node's addresses in it (the last ones read when ``ip``
        fails); None without it (every address)."""
        if not self.cfg.nodeport_addresses:
            return None
        try:
            self._node_port_ips = self.cfg.nodeport_ips(Links().all_addresses())
        except CommandFailed as exc:
            log.error("reading the node's addresses failed: %s", exc)
        return self._node_port_ips or []

    async def sync_once(self, force: bool = False) -> bool:
        """Build the state from the caches and apply it; returns False (and logs) on failure."""
        state = build_state(self.services.list(), self.slices.list(), self.cfg.node_name)
        node_port_ips = await asyncio.to_thread(self._read_node_port_ips)
        if node_port_ips is not None:
            state = dataclasses.replace(state, node_port_ips=tuple(node_port_ips))
        t0 = time.perf_counter()
        try:
            result = await asyncio.to_thread(self.backend.sync, state, force)
        except Exception as exc:  # noqa: BLE001 - keep the last rules, retry
            self.failures += 1
            log.error("sync failed mode=%s error=%s", self.backend.mode, exc)
            await self.health.sync(state.health_checks, False, node_port_ips)
            return False
        await self.health.sync(state.health_checks, True, node_port_ips)
        elapsed = time.perf_counter() - t0
        self.state = state
        if result.changed:
            self.syncs += 1
            self.last_sync_seconds = elapsed
            log.info("synced mode=%s full=%s services=%d endpoints=%d rules=%d stale_chains_deleted=%d "
                     "duration_ms=%.1f", self.backend.mode, force, len(state.services), state.endpoint_count,
                     result.rules, result.deleted_chains, elapsed * 1000)
        else:
            log.debug("sync unchanged mode=%s duration_ms=%.1f", self.backend.mode, elapsed * 1000)
        self.synced.set()
        return True
