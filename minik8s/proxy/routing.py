"""Links and the service CIDR route (iproute2's ``ip`` command).

Network safety (docs/network.md): every ClusterIP must die on this machine unless the proxy has
programmed it.  The whole service CIDR is routed to a local bridge with no ports
(``minik8s-svc0``): connect() to a ClusterIP then succeeds in choosing a route, so the
``OUTPUT`` nat DNAT can rewrite programmed ClusterIPs to pod IPs (and re-route them), while
packets to unprogrammed ones go to a bridge with nothing behind it and fail locally
(``No route to host`` once ARP gives up).  A ``blackhole`` route would make connect() fail
before netfilter sees the packet; a missing route would let it follow the default route
off the machine.
"""

from __future__ import annotations

from typing import Any

from minik8s.host.commands import Runner, run, run_json
from minik8s.host.errors import CommandFailed
from minik8s.proxy.config import ProxyConfig


class Links:
    """Small wrappers over ``ip link`` / ``ip addr``.  Errors raise CommandFailed."""

    def __init__(self, runner: Runner = run) -> None:
        self.runner = runner

    def _json(self, argv: list[str]) -> list[dict[str, Any]]:
        return run_json(self.runner, ["ip", "-j", *argv])

    def exists(self, name: str) -> bool:
        try:
            return bool(self._json(["link", "show", "dev", name]))
        except CommandFailed:
            return False

    def ensure(self, name: str, kinds: tuple[str, ...] = ("bridge",)) -> str | None:
        """Create ``name`` with the first link kind the kernel accepts (unless it exists) and set it
        up; returns the kind created, or None when it already existed.  Raises CommandFailed when
        no kind works (e.g. ``dummy`` on kernels without it and no fallback)."""
        created = None
        if not self.exists(name):
            errors: list[str] = []
            for kind in kinds:
                try:
                    self.runner(["ip", "link", "add", name, "type", kind])
                except CommandFailed as exc:
                    errors.append(f"{kind}: {exc}")
                    continue
                created = kind
                break
            else:
                raise CommandFailed(["ip", "link", "add", name], 2, "; ".join(errors))
        self.runner(["ip", "link", "set", "dev", name, "up"])
        return created

    def delete(self, name: str) -> bool:
        """Delete the link (its addresses and routes go with it); False when it did not exist."""
        if not self.exists(name):
            return False
        self.runner(["ip", "link", "del", "dev", name])
        return True

    def addresses(self, name: str) -> set[str]:
        """IPv4 addresses on ``name`` (without prefix length)."""
        try:
            links = self._json(["-4", "addr", "show", "dev", name])
        except CommandFailed:
            return set()
        return {a["local"] for link in links for a in link.get("addr_info") or [] if a.get("local")}

    def all_addresses(self) -> set[str]:
        """Every IPv4 address of this network namespace (loopback included)."""
        links = self._json(["-4", "addr", "show"])
        return {a["local"] for link in links for a in link.get("addr_info") or [] if a.get("local")}

    def add_address(self, name: str, ip: str) -> None:
        self.runner(["ip", "addr", "replace", f"{ip}/32", "dev", name])

    def del_address(self, name: str, ip: str) -> None:
        self.runner(["ip", "addr", "del", f"{ip}/32", "dev", name])


class ServiceRoute:
    """The route ``<service CIDR> dev <service bridge>`` (``10.96.0.0/16 dev minik8s-svc0``)."""

    def __init__(self, cfg: ProxyConfig, runner: Runner = run) -> None:
        self.cfg = cfg
        self.links = Links(runner)
        self.runner = runner

    def current(self) -> list[dict[str, Any]]:
        """The main-table routes for exactly the service CIDR (``ip -j route show exact``)."""
        return self.links._json(["route", "show", "exact", self.cfg.service_cidr])

    def ensure(self) -> bool:
        """Create the bridge if missing and route the CIDR to it (replacing any other route for
        exactly that prefix, a blackhole included); returns True when something changed."""
        created = self.links.ensure(self.cfg.service_bridge, ("bridge",)) is not None
        routes = self.current()
        if len(routes) == 1 and routes[0].get("dev") == self.cfg.service_bridge \
                and routes[0].get("type", "unicast") == "unicast":
            return created
        self.runner(["ip", "route", "replace", self.cfg.service_cidr, "dev", self.cfg.service_bridge])
        return True

    def remove(self) -> bool:
        """Delete the route and the bridge; returns True when something existed."""
        removed = False
        for r in self.current():
            if r.get("dev") == self.cfg.service_bridge:
                self.runner(["ip", "route", "del", self.cfg.service_cidr, "dev", self.cfg.service_bridge])
                removed = True
        return self.links.delete(self.cfg.service_bridge) or removed


def default_node_ip(runner: Runner = run) -> str | None:
    """This machine's primary IPv4 address: the source address of the default route (read from
    the routing table; nothing is sent), or None when there is no default route."""
    links = Links(runner)
    try:
        routes = links._json(["-4", "route", "show", "default"])
    except CommandFailed:
        return None
    for r in routes:
        if r.get("prefsrc"):
            return str(r["prefsrc"])
        if r.get("dev"):
            addrs = sorted(links.addresses(r["dev"]))
            if addrs:
                return addrs[0]
    return None
