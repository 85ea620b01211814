"""This node's side of the pod network, kept right from the Node objects (level-triggered).

:class:`PodNetworkAgent` owns, on this host:

1. the ``blackhole`` route for the whole cluster CIDR (docs/network.md, "Network safety"): an
   address of the pod network that is not programmed fails here instead of following the
   default route off the machine; the local bridge's podCIDR and the peers' podCIDRs are
   more specific and win.  (The service CIDR is the proxy's: it routes it to a port-less
   bridge, because a blackhole would fail ``connect()`` before the nat OUTPUT DNAT);
2. the netfilter rules of :mod:`minik8s.kubelet.network.netfilter` (masquerade only what leaves
   the cluster CIDR; forward pod traffic past Docker's isolation);
3. the routes to every other Node's podCIDR (:mod:`minik8s.kubelet.network.routes`: host-gw,
   vxlan or both), added when a Node gets a podCIDR and an InternalIP, replaced when they
   change, removed when the Node is deleted;
4. hairpin mode on the pod bridge's ports.

Node events only trigger a sync; each sync reads the informer's cache and the host's
state and corrects every difference, so a missed event or a restart changes nothing
(the first sync after a start is the resync).  A sync also runs every
``resync_period`` seconds.  Stopping the kubelet leaves all of it in place (pods keep
working); :meth:`PodNetworkAgent.cleanup` removes it (``minik8s kubelet --cleanup-network``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from minik8s.api.base import Obj
from minik8s.host.commands import Runner
from minik8s.host.commands import run as host_runner
from minik8s.host.errors import CommandFailed
from minik8s.kubelet.network.bridge import set_hairpin
from minik8s.kubelet.network.netfilter import Netfilter
from minik8s.kubelet.network.routes import Routes, Vxlan, diff, node_peer, plan

log = logging.getLogger("kubelet.podnetwork")

RETRY_SECONDS = 2.0


@dataclass
class SyncReport:
    """What one sync did: routes replaced/deleted (destinations), peers not routed (name → why)."""

    replaced: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


class PodNetworkAgent:
    """Keeps the blackhole, netfilter rules, peer routes, VXLAN device and hairpin right.

    ``nodes()`` returns the current Node objects (the informer's cache); ``bridge()`` the
    pod bridge's name, or None (no hairpin to set).  ``pod_cidr`` is set by the kubelet once
    known; until then no peer route is programmed.  Commands go through ``runner``, so the
    agent can work in another network namespace.
    """

    def __init__(self, node_name: str, node_ip: str, cluster_cidr: str, service_cidr: str | None, backend: str,
                 nodes: Callable[[], list[Obj]], runner: Runner = host_runner, resync_period: float = 10.0,
                 bridge: Callable[[], str | None] = lambda: None) -> None:
        self.node_name = node_name
        self.node_ip = node_ip
        self.cluster_cidr = cluster_cidr
        self.service_cidr = service_cidr
        self.backend = backend
        self.nodes = nodes
        self.runner = runner
        self.resync_period = resync_period
        self.bridge = bridge
        self.pod_cidr: str | None = None
        self.routes = Routes(runner)
        self.netfilter = Netfilter(runner)
        self.vxlan = Vxlan(runner)
        self._wake = asyncio.Event()
        self._last_skipped: dict[str, str] = {}
        self._last_problems: list[str] = []
        self.syncs = 0

    # ------------------------------------------------------------------ events
    def trigger(self) -> None:
        """Ask for a sync soon (cheap; many calls make one sync)."""
        self._wake.set()

    def on_node_update(self, old: Obj, new: Obj) -> None:
        """Informer handler: sync when a Node's podCIDR or InternalIP changed (not on heartbeats)."""
        if node_peer(old) != node_peer(new):
            self.trigger()

    # ------------------------------------------------------------------ one sync
    def sync(self, nodes: list[Obj]) -> SyncReport:
        """Make the host match ``nodes`` (blocking: runs commands).  Raises CommandFailed when a
        command of the blackhole or netfilter part fails; route problems are reported per peer."""
        report = SyncReport()
        problem = self.routes.ensure_blackhole(self.cluster_cidr)
        if problem:
            report.problems.append(problem)
        self.netfilter.ensure(self.cluster_cidr, self.service_cidr)
        if self.pod_cidr:  # no route is planned (or removed) before this node's podCIDR is known
            self._sync_routes(self.pod_cidr, nodes, report)
        bridge = self.bridge()
        if bridge:
            set_hairpin(bridge, self.runner)
        self.syncs += 1
        self._log_news(report)
        return report

    def _sync_routes(self, pod_cidr: str, nodes: list[Obj], report: SyncReport) -> None:
        peers = [p for p in (node_peer(n) for n in nodes) if p is not None]
        wanted = plan(peers, self.node_name, pod_cidr, self.cluster_cidr, self.backend, self.routes.reach)
        report.skipped = dict(wanted.skipped)
        if wanted.vxlan_peers or self.backend == "vxlan":
            self.vxlan.ensure(self.node_ip, pod_cidr)
            self.vxlan.sync_peers(wanted.vxlan_peers)
        else:
            self.vxlan.remove()
        changes = diff(wanted, self.routes.table(), self.cluster_cidr)
        report.problems += list(changes.conflicts.values())
        self.routes.apply(changes)
        report.replaced = [r.dst for r in changes.replace]
        report.deleted = [str(r.get("dst")) for r in changes.delete]

    def _log_news(self, report: SyncReport) -> None:
        """Log skipped peers and problems when they change (not every period)."""
        if report.skipped != self._last_skipped:
            for name, why in sorted(report.skipped.items()):
                if self._last_skipped.get(name) != why:
                    log.info("kubelet no route to node %s: %s", name, why)
            self._last_skipped = dict(report.skipped)
        if report.problems != self._last_problems:
            for why in report.problems:
                log.warning("kubelet pod network: %s", why)
            self._last_problems = list(report.problems)

    def check_forwarding(self) -> bool:
        """Whether IPv4 forwarding is on (pods need it; Docker turns it on).  Logs a warning when off."""
        try:
            on = self.runner(["cat", "/proc/sys/net/ipv4/ip_forward"]).strip() == "1"
        except CommandFailed:
            return True
        if not on:
            log.warning("kubelet net.ipv4.ip_forward is 0: pods cannot reach other nodes (sysctl -w "
                        "net.ipv4.ip_forward=1)")
        return on

    # ------------------------------------------------------------------ the loop
    async def run(self) -> None:
        """Sync now, then on every trigger (debounced 0.1 s) and every ``resync_period`` seconds, forever.

        A failed sync is retried after 2 s, then less often (up to the resync period); the same
        error is logged once, not on every retry.  It never stops the kubelet.
        """
        await asyncio.to_thread(self.check_forwarding)
        last_error = ""
        retry = RETRY_SECONDS
        while True:
            self._wake.clear()
            delay = self.resync_period
            try:
                await asyncio.to_thread(self.sync, self.nodes())
                if last_error:
                    log.info("kubelet pod network sync works again")
                last_error, retry = "", RETRY_SECONDS
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - keep trying; pods keep running meanwhile
                if str(exc) != last_error:
                    log.warning("kubelet pod network sync failed (retrying): %s", exc)
                last_error, delay = str(exc), retry
                retry = min(retry * 2, self.resync_period)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), delay)
            await asyncio.sleep(0.1)

    # ------------------------------------------------------------------ removal
    def cleanup(self) -> dict[str, int]:
        """Remove everything the agent made for this cluster CIDR: routes (blackhole included),
        the VXLAN device and the netfilter rules.  Returns counts; raises CommandFailed."""
        vxlan = int(self.vxlan.remove())
        routes = self.routes.remove_all(self.cluster_cidr)
        rules = self.netfilter.remove(self.cluster_cidr)
        log.info("kubelet pod network removed: routes=%d vxlan=%d rules=%d", routes, vxlan, rules)
        return {"routes": routes, "vxlan": vxlan, "rules": rules}
