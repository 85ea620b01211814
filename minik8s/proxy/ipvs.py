"""IPVS mode: a :class:`ProxyState` → IPVS virtual servers (round robin) and real servers.

Following kube-proxy's IPVS mode: one virtual server per ClusterIP:port/protocol (and per
``--node-ip``:nodePort) with scheduler ``rr`` and masquerading forwarding, one real server
per ready endpoint; every ClusterIP is bound to a local link (``minik8s-proxy0``; Kubernetes
uses a ``dummy`` link, kernels without ``dummy`` get a port-less bridge) so the kernel
accepts the packets for IPVS.  Netfilter still does what IPVS cannot: masquerade marks for
off-cluster sources and NodePorts, REJECT for Services without endpoints, and FORWARD
accepts (:func:`~minik8s.proxy.iptables.render` with ``mode="ipvs"``).

Planning is pure (:func:`desired_table`, :func:`plan`); the kernel sits behind
:class:`IPVSKernel` (real implementation: :class:`Pyroute2Kernel`, pyroute2's generic
netlink IPVS client).  :func:`ipvs_unavailable_reason` detects kernels without IPVS.

Not done: ``sessionAffinity: ClientIP``, which kube-proxy's IPVS mode turns into persistent
virtual servers (``persistence_timeout`` = ``timeoutSeconds``).  The development kernels have no
IPVS to check that against, so such Services are balanced round robin here, with one warning a
Service; the iptables mode honours the affinity.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import socket
from dataclasses import dataclass, field
from typing import Any, Protocol

from minik8s.host.commands import Runner, run
from minik8s.host.errors import CommandFailed
from minik8s.proxy.config import ProxyConfig
from minik8s.proxy.errors import IPVSUnavailable
from minik8s.proxy.iptables import IptablesBackend, SyncResult
from minik8s.proxy.routing import Links
from minik8s.proxy.servicemap import ProxyState, ServicePortName

log = logging.getLogger("proxy")

PROC_IP_VS = "/proc/net/ip_vs"
SCHEDULER = "rr"
PROTO_NUMBERS = {"TCP": socket.IPPROTO_TCP, "UDP": socket.IPPROTO_UDP, "SCTP": 132}


@dataclass(frozen=True, order=True)
class VirtualServer:
    """An IPVS service: ``protocol address:port``."""

    address: str
    port: int
    protocol: str = "TCP"

    def __str__(self) -> str:
        return f"{self.protocol} {self.address}:{self.port}"


@dataclass(frozen=True, order=True)
class RealServer:
    """An IPVS destination (pod IP and target port), weight 1."""

    address: str
    port: int

    def __str__(self) -> str:
        return f"{self.address}:{self.port}"


IPVSTable = dict[VirtualServer, frozenset[RealServer]]


def desired_table(state: ProxyState, cfg: ProxyConfig) -> tuple[IPVSTable, set[str]]:
    """The virtual servers (with their real servers) and the ClusterIPs to bind for ``state``.

    Services without endpoints keep their virtual server (with no real servers), as in
    Kubernetes; their clients are REJECTed by the filter rules.  A traffic policy ``Local`` gives the
    ClusterIP (``internalTrafficPolicy``) or NodePort (``externalTrafficPolicy``) virtual server only
    this node's endpoints, as kube-proxy's IPVS mode does.
    """
    table: IPVSTable = {}
    addresses: set[str] = set()
    for sp in state.services.values():
        cluster = frozenset(RealServer(e.ip, e.port) for e in state.endpoints.get(sp.name, ()))
        local = frozenset(RealServer(e.ip, e.port) for e in state.local_endpoints.get(sp.name, ()))
        table[VirtualServer(sp.cluster_ip, sp.port, sp.protocol)] = local if sp.internal_local else cluster
        addresses.add(sp.cluster_ip)
        if sp.node_port and cfg.node_ip:
            table[VirtualServer(cfg.node_ip, sp.node_port, sp.protocol)] = local if sp.external_local else cluster
    return table, addresses


def owned(vs: VirtualServer, cfg: ProxyConfig) -> bool:
    """Whether this proxy manages ``vs``: a ClusterIP in the service CIDR, or ``--node-ip`` with a
    port in the node-port range.  Virtual servers of anyone else are never deleted."""
    try:
        if ipaddress.ip_address(vs.address) in ipaddress.ip_network(cfg.service_cidr):
            return True
    except ValueError:
        return False
    low, high = cfg.node_port_range
    return bool(cfg.node_ip) and vs.address == cfg.node_ip and low <= vs.port <= high


@dataclass
class Plan:
    """Kernel operations taking the current IPVS table to the desired one, in a safe order:
    add virtual servers, add real servers, bind addresses, then remove real servers, unbind,
    remove virtual servers."""

    add_services: list[VirtualServer] = field(default_factory=list)
    add_destinations: list[tuple[VirtualServer, RealServer]] = field(default_factory=list)
    bind_addresses: list[str] = field(default_factory=list)
    delete_destinations: list[tuple[VirtualServer, RealServer]] = field(default_factory=list)
    unbind_addresses: list[str] = field(default_factory=list)
    delete_services: list[VirtualServer] = field(default_factory=list)

    def __len__(self) -> int:
        return sum(len(v) for v in (self.add_services, self.add_destinations, self.bind_addresses,
                                    self.delete_destinations, self.unbind_addresses, self.delete_services))


def plan(desired: IPVSTable, current: IPVSTable, desired_addresses: set[str], current_addresses: set[str],
         cfg: ProxyConfig) -> Plan:
    """Diff ``desired`` against ``current`` (the kernel's table).  Current virtual servers this
    proxy does not own (:func:`owned`) are left alone; deleting a virtual server drops its real
    servers with it, so those are not listed separately."""
    p = Plan()
    for vs in sorted(desired):
        want = desired[vs]
        have = current.get(vs)
        if have is None:
            p.add_services.append(vs)
            have = frozenset()
        p.add_destinations += [(vs, rs) for rs in sorted(want - have)]
        p.delete_destinations += [(vs, rs) for rs in sorted(have - want)]
    p.delete_services = sorted(vs for vs in current if vs not in desired and owned(vs, cfg))
    p.bind_addresses = sorted(desired_addresses - current_addresses)
    p.unbind_addresses = sorted(current_addresses - desired_addresses)
    return p


class IPVSKernel(Protocol):
    """What the IPVS backend needs from the kernel (fakeable in unit tests)."""

    def prepare(self) -> None:
        """Create/up the link the ClusterIPs are bound to and set IPVS sysctls."""

    def virtual_servers(self) -> IPVSTable:
        """Every virtual server in the kernel with its real servers."""

    def add_virtual_server(self, vs: VirtualServer) -> None: ...

    def delete_virtual_server(self, vs: VirtualServer) -> None: ...

    def add_real_server(self, vs: VirtualServer, rs: RealServer) -> None: ...

    def delete_real_server(self, vs: VirtualServer, rs: RealServer) -> None: ...

    def bound_addresses(self) -> set[str]: ...

    def bind_address(self, ip: str) -> None: ...

    def unbind_address(self, ip: str) -> None: ...

    def remove_interface(self) -> None: ...


def ipvs_unavailable_reason(runner: Runner = run, proc_path: str = PROC_IP_VS) -> str | None:
    """None when the kernel has IPVS (``/proc/net/ip_vs`` exists, possibly after
    ``modprobe ip_vs``), else a one-line reason."""
    if os.path.exists(proc_path):
        return None
    try:
        runner(["modprobe", "ip_vs"])
    except CommandFailed as exc:
        detail = next((line.strip() for line in exc.stderr.splitlines() if line.strip()), f"exit {exc.code}")
        return f"the kernel has no IPVS ({proc_path} is missing and modprobe ip_vs failed: {detail})"
    if os.path.exists(proc_path):
        return None
    return f"the kernel has no IPVS ({proc_path} is still missing after modprobe ip_vs)"


def require_ipvs(runner: Runner = run, proc_path: str = PROC_IP_VS) -> None:
    """Raise :class:`IPVSUnavailable` (one-line message) unless the kernel has IPVS."""
    reason = ipvs_unavailable_reason(runner, proc_path)
    if reason:
        raise IPVSUnavailable(f"IPVS proxy mode is not available: {reason}; use --proxy-mode=iptables")


class Pyroute2Kernel:
    """:class:`IPVSKernel` over pyroute2 (generic netlink ``IPVS`` family) and ``ip`` for addresses."""

    def __init__(self, cfg: ProxyConfig, runner: Runner = run) -> None:
        from pyroute2 import IPVS  # lazy: only IPVS mode needs pyroute2

        self.cfg = cfg
        self.links = Links(runner)
        self.ipvs: Any = IPVS()

    @staticmethod
    def _service(vs: VirtualServer) -> Any:
        from pyroute2 import IPVSService

        return IPVSService(addr=vs.address, port=vs.port, protocol=PROTO_NUMBERS[vs.protocol], sched_name=SCHEDULER)

    def prepare(self) -> None:
        self.links.ensure(self.cfg.ipvs_interface, ("dummy", "bridge"))
        for key, value in (("net/ipv4/vs/conntrack", "1"), ("net/ipv4/ip_forward", "1")):
            path = f"/proc/sys/{key}"
            if os.path.exists(path):
                with open(path, "w") as fh:
                    fh.write(value)

    def virtual_servers(self) -> IPVSTable:
        from pyroute2 import IPVSDest, IPVSService

        names = {v: k for k, v in PROTO_NUMBERS.items()}
        table: IPVSTable = {}
        for msg in self.ipvs.service("dump"):
            svc = IPVSService.from_message(msg)
            if not svc.get("addr") or svc.get("protocol") not in names:
                continue  # fwmark services are not ours
            vs = VirtualServer(str(svc["addr"]), int(svc["port"]), names[svc["protocol"]])
            reals = set()
            for d in self.ipvs.dest("dump", service=svc):
                dest = IPVSDest.from_message(d)
                reals.add(RealServer(str(dest["addr"]), int(dest["port"])))
            table[vs] = frozenset(reals)
        return table

    def add_virtual_server(self, vs: VirtualServer) -> None:
        self.ipvs.service("add", service=self._service(vs))

    def delete_virtual_server(self, vs: VirtualServer) -> None:
        self.ipvs.service("del", service=self._service(vs))

    def add_real_server(self, vs: VirtualServer, rs: RealServer) -> None:
        from pyroute2 import IPVSDest

        self.ipvs.dest("add", service=self._service(vs), dest=IPVSDest(addr=rs.address, port=rs.port))

    def delete_real_server(self, vs: VirtualServer, rs: RealServer) -> None:
        from pyroute2 import IPVSDest

        self.ipvs.dest("del", service=self._service(vs), dest=IPVSDest(addr=rs.address, port=rs.port))

    def bound_addresses(self) -> set[str]:
        return self.links.addresses(self.cfg.ipvs_interface)

    def bind_address(self, ip: str) -> None:
        self.links.add_address(self.cfg.ipvs_interface, ip)

    def unbind_address(self, ip: str) -> None:
        self.links.del_address(self.cfg.ipvs_interface, ip)

    def remove_interface(self) -> None:
        self.links.delete(self.cfg.ipvs_interface)


class IPVSBackend:
    """Keeps the kernel's IPVS table (virtual servers this proxy owns) equal to ``state``, plus the
    netfilter rules IPVS mode needs.  Skips the kernel when nothing changed since the last
    sync unless ``force``.  Kernel errors propagate (the next sync retries in full)."""

    mode = "ipvs"

    def __init__(self, cfg: ProxyConfig, kernel: IPVSKernel, netfilter: IptablesBackend | None = None) -> None:
        self.cfg = cfg
        self.kernel = kernel
        self.netfilter = netfilter or IptablesBackend(cfg, render_mode="ipvs")
        self._last: tuple[IPVSTable, set[str]] | None = None
        self.last_plan: Plan | None = None
        self.affinity_ignored: set[ServicePortName] = set()

    def sync(self, state: ProxyState, force: bool = False) -> SyncResult:
        """Apply ``state``; returns whether the kernel or netfilter changed."""
        sticky = {name for name, sp in state.services.items() if sp.sticky_max_age_seconds}
        for name in sorted(sticky - self.affinity_ignored):
            log.warning("service %s: sessionAffinity ClientIP is not honoured in IPVS mode (round robin); "
                        "use --proxy-mode iptables", name)
        self.affinity_ignored = sticky
        result = self.netfilter.sync(state, force)
        want = desired_table(state, self.cfg)
        if not force and want == self._last:
            return result
        self._last = None
        self.kernel.prepare()
        current = {vs: rs for vs, rs in self.kernel.virtual_servers().items() if owned(vs, self.cfg)}
        p = plan(want[0], current, want[1], self.kernel.bound_addresses(), self.cfg)
        self.execute(p)
        self.last_plan = p
        self._last = want
        result.changed = result.changed or len(p) > 0
        return result

    def execute(self, p: Plan) -> None:
        """Run a plan's operations in :class:`Plan`'s order."""
        for vs in p.add_services:
            self.kernel.add_virtual_server(vs)
        for vs, rs in p.add_destinations:
            self.kernel.add_real_server(vs, rs)
        for ip in p.bind_addresses:
            self.kernel.bind_address(ip)
        for vs, rs in p.delete_destinations:
            self.kernel.delete_real_server(vs, rs)
        for ip in p.unbind_addresses:
            self.kernel.unbind_address(ip)
        for vs in p.delete_services:
            self.kernel.delete_virtual_server(vs)

    def cleanup(self) -> int:
        """Delete every owned virtual server, the ClusterIP link and the netfilter chains;
        returns how many virtual servers and chains were removed."""
        removed = 0
        for vs in self.kernel.virtual_servers():
            if owned(vs, self.cfg):
                self.kernel.delete_virtual_server(vs)
                removed += 1
        self.kernel.remove_interface()
        self._last = None
        return removed + self.netfilter.cleanup()
