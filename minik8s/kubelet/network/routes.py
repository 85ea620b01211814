"""Routes between the nodes' podCIDRs (flannel's ``host-gw`` and ``vxlan`` backends, in the kubelet).

Every Node with a ``spec.podCIDR`` inside the cluster CIDR and an ``InternalIP`` is a
:class:`Peer`.  For each peer other than this node, :func:`plan` decides how its podCIDR
is reached:

* ``host-gw``: ``ip route replace <podCIDR> via <InternalIP>`` — only when the InternalIP
  is on a local link (``ip route get`` answers without a gateway), as flannel's host-gw
  requires;
* ``vxlan``: through the VXLAN device ``minik8s.1`` (VNI 1, UDP 8472, flannel's values):
  the peer's VTEP is the first address of its podCIDR (``10.244.2.0``) with a MAC derived
  from its InternalIP (:func:`vtep_mac`, so no annotation is needed); the route is
  ``<podCIDR> via <VTEP address> dev minik8s.1 onlink`` plus a permanent neighbour entry
  and a forwarding-database entry ``<MAC> dst <InternalIP>``;
* ``auto``: host-gw where the InternalIP is on a local link, vxlan elsewhere (flannel's
  vxlan ``DirectRouting``); ``none``: no routes (another component routes).

A peer whose InternalIP is an address of this host (several kubelets on one machine)
needs no route: its bridge is local.  Safety: a podCIDR outside the cluster CIDR, one
that overlaps this node's or an earlier peer's, or a wider one than the node subnets is
never routed; nothing is routed anywhere but to a peer's InternalIP.

Ownership: the kubelet marks every route it makes with ``proto 250``
(:data:`ROUTE_PROTO`) and only ever changes or deletes routes inside the cluster CIDR
that carry that mark.  A route for the same prefix made by someone else (the kernel's
route of a local bridge, an administrator's, flannel's) is left alone and reported.
Another cluster whose CIDR lies inside this one (a test cluster next to a real one on
one machine) is recognised by its own ``proto 250`` blackhole: routes inside it are that
cluster's.  The VXLAN device is one per host.
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from minik8s.api.base import Obj
from minik8s.host.commands import Runner, run_json
from minik8s.host.errors import CommandFailed

log = logging.getLogger("kubelet.routes")

#: ``proto`` of every route the kubelet makes (unassigned in iproute2's rt_protos).
ROUTE_PROTO = "250"
VXLAN_DEVICE = "minik8s.1"
VXLAN_VNI = 1
VXLAN_PORT = 8472
#: VXLAN adds 50 bytes (outer Ethernet 14 + IP 20 + UDP 8 + VXLAN 8) to every frame.
VXLAN_OVERHEAD = 50

#: reachability of a peer's InternalIP from this host
LOCAL, DIRECT, ROUTED, UNREACHABLE = "local", "direct", "routed", "unreachable"


@dataclass(frozen=True)
class Peer:
    """A Node as the pod network sees it: name, podCIDR (normalised) and InternalIP."""

    name: str
    pod_cidr: str
    node_ip: str


@dataclass(frozen=True)
class Route:
    """One route to a peer's podCIDR: ``dst via <via> [dev <dev> onlink]``."""

    dst: str
    via: str
    dev: str | None = None
    peer: str = ""

    def argv(self) -> list[str]:
        """``ip route replace`` arguments for this route (tagged with :data:`ROUTE_PROTO`)."""
        extra = ["dev", self.dev, "onlink"] if self.dev else []
        return ["ip", "route", "replace", self.dst, "via", self.via, *extra, "proto", ROUTE_PROTO]


@dataclass
class Plan:
    """What the routing table should hold: routes by destination, VXLAN peers, and why others are not routed."""

    routes: dict[str, Route] = field(default_factory=dict)
    vxlan_peers: list[Peer] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)


@dataclass
class RouteChanges:
    """The difference between a :class:`Plan` and the table: what to replace, delete, and leave alone."""

    replace: list[Route] = field(default_factory=list)
    delete: list[Obj] = field(default_factory=list)
    conflicts: dict[str, str] = field(default_factory=dict)


def node_peer(node: Obj) -> Peer | None:
    """The :class:`Peer` of a Node (``spec.podCIDRs[0]`` or ``spec.podCIDR``, the first
    ``InternalIP`` of ``status.addresses``); None when either is missing or not IPv4."""
    spec, status = node.get("spec") or {}, node.get("status") or {}
    cidrs = [c for c in spec.get("podCIDRs") or [] if c] or ([spec["podCIDR"]] if spec.get("podCIDR") else [])
    ip = next((a.get("address") for a in status.get("addresses") or [] if a.get("type") == "InternalIP"), None)
    name = (node.get("metadata") or {}).get("name") or ""
    if not cidrs or not ip or not name:
        return None
    try:
        net = ipaddress.ip_network(cidrs[0], strict=False)
        addr = ipaddress.ip_address(ip)
    except ValueError:
        return None
    if net.version != 4 or addr.version != 4:
        return None
    return Peer(name, str(net), str(addr))


def vtep_address(pod_cidr: str) -> str:
    """A node's VTEP address: the network address of its podCIDR (``10.244.2.0/24`` → ``10.244.2.0``)."""
    return str(ipaddress.ip_network(pod_cidr, strict=False).network_address)


def vtep_mac(node_ip: str) -> str:
    """A node's VTEP MAC, derived from its InternalIP: ``0a:6b:`` + the four octets in hex.

    Locally administered and unicast; every node computes every other node's MAC alone.
    """
    octets = ipaddress.IPv4Address(node_ip).packed
    return "0a:6b:" + ":".join(f"{b:02x}" for b in octets)


def plan(peers: Iterable[Peer], me: str, own_cidr: str | None, cluster_cidr: str, backend: str,
         reach: Callable[[str], str]) -> Plan:
    """The routes this node wants for ``peers`` (see the module docstring).

    ``reach(ip)`` classifies an InternalIP as :data:`LOCAL`, :data:`DIRECT`, :data:`ROUTED`
    or :data:`UNREACHABLE`.  Peers are taken by name order, so when two claim overlapping
    podCIDRs the first one wins on every node.  Pure apart from ``reach``.
    """
    out = Plan()
    cluster = _v4(cluster_cidr)
    if backend == "none" or cluster is None:
        return out
    own = _v4(own_cidr) if own_cidr else None
    taken = [own] if own else []
    for peer in sorted(peers, key=lambda p: p.name):
        if peer.name == me:
            continue
        net = _v4(peer.pod_cidr)
        if net is None or not _inside(peer.pod_cidr, cluster):
            out.skipped[peer.name] = f"podCIDR {peer.pod_cidr} is not a subnet of the cluster CIDR {cluster_cidr}"
            continue
        if any(net.overlaps(t) for t in taken):
            out.skipped[peer.name] = f"podCIDR {peer.pod_cidr} overlaps this node's or another node's"
            continue
        where = reach(peer.node_ip)
        if where == LOCAL:
            out.skipped[peer.name] = f"InternalIP {peer.node_ip} is this host's (its bridge is local)"
            continue
        taken.append(net)
        if where == UNREACHABLE:
            out.skipped[peer.name] = f"InternalIP {peer.node_ip} has no route"
        elif backend == "host-gw" and where != DIRECT:
            out.skipped[peer.name] = (f"InternalIP {peer.node_ip} is not on a local link "
                                      "(host-gw needs one; use --network-backend=vxlan or auto)")
        elif backend == "vxlan" or (backend == "auto" and where != DIRECT):
            out.routes[peer.pod_cidr] = Route(peer.pod_cidr, vtep_address(peer.pod_cidr), VXLAN_DEVICE, peer.name)
            out.vxlan_peers.append(peer)
        else:
            out.routes[peer.pod_cidr] = Route(peer.pod_cidr, peer.node_ip, None, peer.name)
    return out


def route_dst(route: Obj) -> str:
    """The destination of an ``ip -j route`` entry as a CIDR (``10.0.0.1`` → ``10.0.0.1/32``)."""
    dst = str(route.get("dst") or "")
    if dst == "default":
        return "0.0.0.0/0"
    return dst if "/" in dst else f"{dst}/32"


def _v4(cidr: str) -> ipaddress.IPv4Network | None:
    """``cidr`` as an IPv4 network (host bits allowed), or None for garbage and IPv6."""
    try:
        net = ipaddress.ip_network(cidr, strict=False)
    except ValueError:
        return None
    return net if isinstance(net, ipaddress.IPv4Network) else None


def _inside(cidr: str, outer: ipaddress.IPv4Network) -> bool:
    """Whether ``cidr`` lies strictly inside ``outer``."""
    net = _v4(cidr)
    return net is not None and net != outer and net.subnet_of(outer)


def nested_clusters(table: list[Obj], cluster_cidr: str) -> list[ipaddress.IPv4Network]:
    """Other clusters inside this one: ``proto 250`` blackholes strictly inside ``cluster_cidr``."""
    cluster = _v4(cluster_cidr)
    out = []
    for r in table:
        if r.get("type") == "blackhole" and str(r.get("protocol")) == ROUTE_PROTO and cluster is not None \
                and _inside(route_dst(r), cluster):
            out.append(_v4(route_dst(r)))
    return [n for n in out if n is not None]


def is_ours(route: Obj, cluster_cidr: str, nested: list[ipaddress.IPv4Network] | None = None) -> bool:
    """Whether an ``ip -j route`` entry is one of the kubelet's peer routes: ``proto 250``,
    main table, a unicast destination strictly inside the cluster CIDR and not inside one of
    the ``nested`` clusters (:func:`nested_clusters`)."""
    if str(route.get("protocol")) != ROUTE_PROTO or route.get("type", "unicast") != "unicast":
        return False
    if route.get("table") not in (None, "main"):
        return False
    cluster, net = _v4(cluster_cidr), _v4(route_dst(route))
    if cluster is None or net is None or not _inside(route_dst(route), cluster):
        return False
    return not any(net.subnet_of(other) for other in nested or [])


def matches(route: Obj, want: Route) -> bool:
    """Whether an ``ip -j route`` entry already is ``want`` (same gateway, device when given, onlink)."""
    if route.get("gateway") != want.via:
        return False
    if want.dev is not None:
        return bool(route.get("dev") == want.dev and "onlink" in (route.get("flags") or []))
    return True


def diff(desired: Plan, table: list[Obj], cluster_cidr: str) -> RouteChanges:
    """Compare ``desired`` with the main routing table (``ip -j route show table main``).

    Routes of others for a wanted prefix become ``conflicts`` (left alone); the kubelet's
    own routes (:func:`is_ours`) that are wrong are replaced, those not wanted deleted.
    """
    out = RouteChanges()
    nested = nested_clusters(table, cluster_cidr)
    by_dst: dict[str, list[Obj]] = {}
    for r in table:
        by_dst.setdefault(route_dst(r), []).append(r)
    for dst, want in desired.routes.items():
        present = by_dst.get(dst, [])
        foreign = [r for r in present if not is_ours(r, cluster_cidr, nested)]
        if foreign:
            r = foreign[0]
            how = r.get("type", "unicast") if r.get("type", "unicast") != "unicast" else f"dev {r.get('dev')}"
            out.conflicts[dst] = f"{dst} already routed ({how}, proto {r.get('protocol', 'boot')}) by someone else"
            continue
        if not any(matches(r, want) for r in present):
            out.replace.append(want)
    for r in table:
        if is_ours(r, cluster_cidr, nested) and route_dst(r) not in desired.routes:
            out.delete.append(r)
    return out


# ---------------------------------------------------------------------------- the host side
class Routes:
    """Reads and changes the routing table through a :data:`~minik8s.host.commands.Runner`.

    Raises :class:`~minik8s.host.errors.CommandFailed` when ``ip`` fails.
    """

    def __init__(self, runner: Runner) -> None:
        self.runner = runner

    def table(self) -> list[Obj]:
        """The IPv4 main table (``ip -j -4 route show table main``)."""
        return run_json(self.runner, ["ip", "-j", "-4", "route", "show", "table", "main"])

    def reach(self, ip: str) -> str:
        """How ``ip`` is reached from here (``ip -j route get``): LOCAL, DIRECT, ROUTED or UNREACHABLE."""
        try:
            found = run_json(self.runner, ["ip", "-j", "-4", "route", "get", ip])
        except CommandFailed:
            return UNREACHABLE
        if not found:
            return UNREACHABLE
        r = found[0]
        if r.get("type") == "local" or r.get("dev") == "lo":
            return LOCAL
        if r.get("type") in ("blackhole", "unreachable", "prohibit"):
            return UNREACHABLE
        return ROUTED if r.get("gateway") else DIRECT

    def apply(self, changes: RouteChanges) -> None:
        """Replace and delete as ``changes`` says (each change is one ``ip route`` command)."""
        for r in changes.delete:
            dst = route_dst(r)
            log.info("kubelet route del %s via %s (no such node any more)", dst, r.get("gateway"))
            try:
                self.runner(["ip", "route", "del", dst, "proto", ROUTE_PROTO])
            except CommandFailed as exc:
                if "No such process" not in exc.stderr:
                    raise
        for want in changes.replace:
            log.info("kubelet route %s via %s%s (node %s)", want.dst, want.via,
                     f" dev {want.dev} onlink" if want.dev else "", want.peer)
            self.runner(want.argv())

    def ensure_blackhole(self, cluster_cidr: str) -> str | None:
        """``blackhole <cluster CIDR> proto 250`` unless that exact prefix is routed by someone
        else; returns a message when it is (and nothing was changed), else None."""
        present = run_json(self.runner, ["ip", "-j", "-4", "route", "show", "table", "main", "exact", cluster_cidr])
        for r in present:
            if r.get("type") == "blackhole" and str(r.get("protocol")) == ROUTE_PROTO:
                return None
        foreign = [r for r in present if str(r.get("protocol")) != ROUTE_PROTO]
        if foreign:
            r = foreign[0]
            return (f"the cluster CIDR {cluster_cidr} is already routed ({r.get('type', 'unicast')}, "
                    f"proto {r.get('protocol', 'boot')}) by someone else; not adding the blackhole")
        self.runner(["ip", "route", "replace", "blackhole", cluster_cidr, "proto", ROUTE_PROTO])
        log.info("kubelet route blackhole %s (unprogrammed pod addresses fail on this host)", cluster_cidr)
        return None

    def remove_all(self, cluster_cidr: str) -> int:
        """Delete every route of the kubelet inside ``cluster_cidr`` and its blackhole; returns the count."""
        n = 0
        table = self.table()
        nested = nested_clusters(table, cluster_cidr)
        for r in table:
            dst = route_dst(r)
            ours_blackhole = r.get("type") == "blackhole" and dst == cluster_cidr and \
                str(r.get("protocol")) == ROUTE_PROTO
            if is_ours(r, cluster_cidr, nested) or ours_blackhole:
                kind = ["blackhole"] if ours_blackhole else []
                self.runner(["ip", "route", "del", *kind, dst, "proto", ROUTE_PROTO])
                n += 1
        return n


class Vxlan:
    """The VXLAN device :data:`VXLAN_DEVICE` and its per-peer neighbour and FDB entries.

    Raises :class:`~minik8s.host.errors.CommandFailed` when a command fails.
    """

    def __init__(self, runner: Runner, device: str = VXLAN_DEVICE) -> None:
        self.runner = runner
        self.device = device

    def _link(self) -> Obj | None:
        try:
            links = run_json(self.runner, ["ip", "-j", "-d", "link", "show", "dev", self.device])
        except CommandFailed:
            return None
        return links[0] if links else None

    def ensure(self, node_ip: str, pod_cidr: str) -> None:
        """Create (or fix) the device: VNI 1, ``local <node_ip>``, port 8472, no learning, the
        MAC :func:`vtep_mac` of ``node_ip``, MTU 50 below its uplink, up, with this node's
        VTEP address ``<podCIDR network>/32``."""
        link = self._link()
        mac = vtep_mac(node_ip)
        if link is not None:
            data = ((link.get("linkinfo") or {}).get("info_data")) or {}
            if (link.get("linkinfo") or {}).get("info_kind") != "vxlan" or data.get("id") != VXLAN_VNI \
                    or data.get("local") != node_ip or data.get("port") != VXLAN_PORT:
                log.warning("kubelet %s has other settings (%s); re-creating it", self.device, data)
                self.runner(["ip", "link", "del", "dev", self.device])
                link = None
        if link is None:
            self.runner(["ip", "link", "add", self.device, "type", "vxlan", "id", str(VXLAN_VNI), "local", node_ip,
                         "dstport", str(VXLAN_PORT), "nolearning"])
            log.info("kubelet created %s (vni %d, local %s, port %d)", self.device, VXLAN_VNI, node_ip, VXLAN_PORT)
            link = self._link() or {}
        if link.get("address") != mac:
            self.runner(["ip", "link", "set", "dev", self.device, "address", mac])
        mtu = self.uplink_mtu(node_ip) - VXLAN_OVERHEAD
        if link.get("mtu") != mtu:
            self.runner(["ip", "link", "set", "dev", self.device, "mtu", str(mtu)])
        if "UP" not in (link.get("flags") or []):
            self.runner(["ip", "link", "set", "dev", self.device, "up"])
        want = f"{vtep_address(pod_cidr)}/32"
        addrs = run_json(self.runner, ["ip", "-j", "-4", "addr", "show", "dev", self.device])
        have = {f"{a['local']}/{a['prefixlen']}" for link_ in addrs for a in link_.get("addr_info") or []
                if a.get("local")}
        for extra in have - {want}:
            self.runner(["ip", "addr", "del", extra, "dev", self.device])
        if want not in have:
            self.runner(["ip", "addr", "replace", want, "dev", self.device])

    def uplink_mtu(self, node_ip: str) -> int:
        """The MTU of the link that holds ``node_ip`` (1500 when it cannot be told)."""
        try:
            for link in run_json(self.runner, ["ip", "-j", "-4", "addr", "show"]):
                if any(a.get("local") == node_ip for a in link.get("addr_info") or []):
                    return int(link.get("mtu") or 1500)
        except (CommandFailed, ValueError):
            pass
        return 1500

    def sync_peers(self, peers: list[Peer]) -> None:
        """Make the neighbour and FDB entries of the device exactly those of ``peers``."""
        want_neigh = {vtep_address(p.pod_cidr): vtep_mac(p.node_ip) for p in peers}
        want_fdb = {(vtep_mac(p.node_ip), p.node_ip) for p in peers}
        for n in run_json(self.runner, ["ip", "-j", "-4", "neigh", "show", "dev", self.device]):
            dst = n.get("dst")
            if dst and want_neigh.get(dst) != n.get("lladdr"):
                self.runner(["ip", "neigh", "del", dst, "dev", self.device])
        for dst, mac in want_neigh.items():
            self.runner(["ip", "neigh", "replace", dst, "lladdr", mac, "dev", self.device, "nud", "permanent"])
        for entry in run_json(self.runner, ["bridge", "-j", "fdb", "show", "dev", self.device]):
            have = (str(entry.get("mac") or ""), str(entry.get("dst") or ""))
            if all(have) and have not in want_fdb:
                self.runner(["bridge", "fdb", "del", have[0], "dev", self.device, "dst", have[1], "self"])
        for mac, ip in sorted(want_fdb):
            self.runner(["bridge", "fdb", "replace", mac, "dev", self.device, "dst", ip, "self", "permanent"])

    def remove(self) -> bool:
        """Delete the device (its routes, neighbours and FDB go with it); False when there was none."""
        if self._link() is None:
            return False
        self.runner(["ip", "link", "del", "dev", self.device])
        log.info("kubelet removed %s", self.device)
        return True
