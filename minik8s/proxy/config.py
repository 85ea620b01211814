"""Proxy settings (``minik8s proxy`` flags) and every name derived from ``--chain-prefix``.

The prefix makes an instance self-contained: with the default ``KUBE`` the chains are
Kubernetes' own (``KUBE-SERVICES``, ``KUBE-SVC-<hash>``, ``KUBE-MARK-MASQ`` with mark
``0x4000``, bridge ``minik8s-svc0``); any other prefix gives other chain names, another mark
bit and other interface names, so a test instance can run next to a real cluster's proxy
without either touching the other's rules.
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass

from minik8s.host.errors import ConfigError

#: iptables chain names are at most 28 characters (XT_EXTENSION_MAXNAMELEN - 1).
MAX_CHAIN_NAME = 28
#: ``<prefix>-SVC-`` + 16 hash characters must fit in :data:`MAX_CHAIN_NAME`.
MAX_PREFIX = MAX_CHAIN_NAME - len("-SVC-") - 16
PREFIX_RE = re.compile(r"^[A-Za-z][A-Za-z0-9]*$")
MODES = ("iptables", "ipvs", "auto")


@dataclass(frozen=True)
class ProxyConfig:
    """What one proxy instance programs.

    ``cluster_cidr``: the pod network; traffic to a ClusterIP from outside it is
    masqueraded (so host-originated connections get replies).  ``service_cidr``: the
    ClusterIP range, routed to :attr:`service_bridge`.  ``node_ip``: this node's address
    (logs, IPVS NodePort virtual servers).  ``localhost_nodeports``: NodePorts answer on
    127.0.0.1 too (kube-proxy's ``--iptables-localhost-nodeports``, iptables mode only).
    ``sync_period`` / ``min_sync_period``: seconds between forced full resyncs / at least
    between two syncs.  ``node_name``: this node's name (kube-proxy's ``--hostname-override``, else
    the lower-cased host name): endpoints whose ``nodeName`` it is are local, for the traffic policies
    ``Local``.  ``nodeport_addresses``: kube-proxy's ``--nodeport-addresses``, IPv4 CIDRs (or
    ``primary``: ``node_ip``) whose local addresses NodePorts and health check node ports answer on;
    empty: every local address.
    Raises :class:`ConfigError` from :meth:`validate`.
    """

    chain_prefix: str = "KUBE"
    cluster_cidr: str = "10.244.0.0/16"
    service_cidr: str = "10.96.0.0/16"
    node_ip: str | None = None
    sync_period: float = 30.0
    min_sync_period: float = 0.1
    node_port_range: tuple[int, int] = (30000, 32767)
    localhost_nodeports: bool = True
    node_name: str = ""
    nodeport_addresses: tuple[str, ...] = ()

    def validate(self) -> ProxyConfig:
        """Check every field; returns ``self`` so calls chain.  Raises ConfigError (one line)."""
        if not PREFIX_RE.match(self.chain_prefix) or len(self.chain_prefix) > MAX_PREFIX:
            raise ConfigError(f"--chain-prefix {self.chain_prefix!r}: 1-{MAX_PREFIX} letters/digits starting "
                              f"with a letter (iptables chain names are at most {MAX_CHAIN_NAME} characters)")
        for flag, value in (("--cluster-cidr", self.cluster_cidr), ("--service-cluster-ip-range", self.service_cidr)):
            if flag == "--cluster-cidr" and not value:
                continue  # no cluster CIDR: no masquerade rule for off-cluster sources (Kubernetes' behaviour)
            try:
                net = ipaddress.ip_network(value)
            except ValueError as exc:
                raise ConfigError(f"{flag} {value!r}: {exc}") from None
            if net.version != 4:
                raise ConfigError(f"{flag} {value!r}: only IPv4 is supported")
        if self.node_ip:
            try:
                ipaddress.IPv4Address(self.node_ip)
            except ValueError as exc:
                raise ConfigError(f"--node-ip {self.node_ip!r}: {exc}") from None
        for cidr in self.nodeport_addresses:
            if cidr == "primary":
                continue
            try:
                if ipaddress.ip_network(cidr).version != 4:
                    raise ValueError("only IPv4 is supported")
            except ValueError as exc:
                raise ConfigError(f"--nodeport-addresses {cidr!r}: {exc}") from None
        if self.sync_period <= 0 or self.min_sync_period < 0 or self.min_sync_period > self.sync_period:
            raise ConfigError("need 0 <= --min-sync-period <= --sync-period and --sync-period > 0")
        return self

    def nodeport_ips(self, local_addresses: Iterable[str]) -> list[str]:
        """The addresses among ``local_addresses`` that NodePorts answer on with ``nodeport_addresses``
        set (sorted; ``primary`` is ``node_ip``)."""
        nets = [ipaddress.ip_network(c) for c in self.nodeport_addresses if c != "primary"]
        want = {a for a in local_addresses if any(ipaddress.ip_address(a) in n for n in nets)}
        if "primary" in self.nodeport_addresses and self.node_ip:
            want.add(self.node_ip)
        return sorted(want, key=lambda a: ipaddress.ip_address(a))

    # ------------------------------------------------------------------ derived names
    def chain(self, suffix: str) -> str:
        """``<prefix>-<suffix>``, e.g. ``chain("SERVICES")`` → ``KUBE-SERVICES``."""
        return f"{self.chain_prefix}-{suffix}"

    @property
    def default_prefix(self) -> bool:
        return self.chain_prefix == "KUBE"

    @property
    def masquerade_bit(self) -> int:
        """Bit of the packet mark meaning "masquerade me": 14 for ``KUBE`` (Kubernetes'
        ``--iptables-masquerade-bit``), else 16-27 chosen by a hash of the prefix."""
        if self.default_prefix:
            return 14
        return 16 + hashlib.sha256(self.chain_prefix.encode()).digest()[0] % 12

    @property
    def mark(self) -> str:
        """The mark value/mask as iptables writes it (``0x4000``)."""
        return hex(1 << self.masquerade_bit)

    @property
    def service_bridge(self) -> str:
        """Port-less bridge the service CIDR is routed to (``minik8s-svc0`` for ``KUBE``)."""
        return "minik8s-svc0" if self.default_prefix else f"msvc-{self.chain_prefix.lower()}"

    @property
    def ipvs_interface(self) -> str:
        """Link the ClusterIPs are bound to in IPVS mode (``minik8s-proxy0`` for ``KUBE``)."""
        return "minik8s-proxy0" if self.default_prefix else f"mipvs-{self.chain_prefix.lower()}"
