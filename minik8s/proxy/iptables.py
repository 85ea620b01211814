"""iptables mode: a :class:`ProxyState` → Kubernetes' chain structure, applied with ``iptables-restore``.

The generated rules follow kube-proxy's iptables mode (``<P>`` is ``--chain-prefix``, ``KUBE``
by default; ``M`` the masquerade mark, ``0x4000`` by default):

nat table
    ``PREROUTING``/``OUTPUT`` → ``<P>-SERVICES``: one rule per ClusterIP:port/protocol with
    endpoints → ``<P>-SVC-<hash16>``; its last rule sends traffic to any *local* address
    (``-m addrtype --dst-type LOCAL``, loopback excluded) to ``<P>-NODEPORTS``.
    ``<P>-SVC-…``: marks traffic from outside ``--cluster-cidr`` for masquerade (so the host
    itself can use ClusterIPs), then picks an endpoint at random — rule *i* of *n* matches
    with probability ``1/(n-i)`` (``-m statistic --mode random``), the last one always —
    and jumps to ``<P>-SEP-<hash16>``, which marks hairpin traffic (source == endpoint)
    and DNATs to the endpoint.  (A pod reaching itself also needs ``hairpin_mode`` on its
    bridge port, which is the pod network's job, as with CNI's ``hairpinMode``.)
    ``<P>-NODEPORTS``: ``--dport nodePort`` → ``<P>-EXT-<hash16>``, which (``externalTrafficPolicy:
    Cluster``) marks for masquerade and jumps to the service chain (so a NodePort reached from
    127.0.0.1 leaves masqueraded); see :func:`external_rules` for ``Local``.
    Traffic policy ``Local`` (kube-proxy 1.32): ``<P>-SVL-<hash16>`` picks among this node's
    endpoints as ``<P>-SVC-…`` does among all; ``internalTrafficPolicy: Local`` sends ClusterIP traffic
    there, ``externalTrafficPolicy: Local`` the NodePort traffic from outside the node and the
    cluster; a chain is written only when something jumps to it.  With ``--nodeport-addresses``,
    ``<P>-SERVICES`` jumps to ``<P>-NODEPORTS`` once per matching node address instead.
    ``sessionAffinity: ClientIP`` (kube-proxy's rules): the DNAT rule of each ``<P>-SEP-…`` also
    records the client's source address in the ``recent`` list named after the chain
    (``-m recent --name <P>-SEP-… --set``), and the service chain first sends a client found in
    one of its endpoints' lists, seen within ``timeoutSeconds``, back to that endpoint
    (``--rcheck --seconds T --reap``); only new clients reach the random rules.  ClusterIP and
    NodePort traffic share the service chain, so they share the affinity.  The lists live in
    the kernel (``/proc/net/xt_recent/``), survive rewrites of the chains, and go with the last
    rule that names them.
    ``<P>-MARK-MASQ`` ors ``M`` into the packet mark; ``POSTROUTING`` → ``<P>-POSTROUTING``
    clears it and MASQUERADEs marked packets.
filter table
    ``OUTPUT``/``FORWARD`` (new connections) → ``<P>-SERVICES``: a REJECT per Service port
    without endpoints (``"ns/svc:port has no endpoints"``), so clients fail fast with
    ``connection refused``, and a DROP per port whose policy ``Local`` finds no endpoint on this
    node while others have some (``"… has no local endpoints"``); ``INPUT`` →
    ``<P>-EXTERNAL-SERVICES``: the same for NodePorts; ``INPUT`` → ``<P>-NODEPORTS``: ACCEPT the
    health check node ports;
    ``FORWARD`` → ``<P>-FORWARD``: accept marked and established/related traffic (Docker
    sets the FORWARD policy to DROP); ``INPUT``/``OUTPUT`` → ``<P>-FIREWALL``: with localhost
    NodePorts, drop new connections to 127.0.0.0/8 that do not come from it.

NodePorts answer on every local address, 127.0.0.1 included, as kube-proxy's iptables mode does
by default (``--iptables-localhost-nodeports``): a connection from 127.0.0.1 DNATed to a pod
leaves the host only with ``net.ipv4.conf.all.route_localnet=1``, which ``minik8s proxy`` sets
as kube-proxy does, and the ``<P>-FIREWALL`` rule closes what that sysctl opens (packets from
outside addressed to 127.0.0.0/8, https://issue.k8s.io/90259).  Without localhost NodePorts
(``--iptables-localhost-nodeports=false``, and in IPVS mode) loopback is excluded.

Only the proxy's own chains are ever written: one ``iptables-restore --noflush`` declares
(and so flushes) each of them and refills it, and deletes ``<P>-SVC-``/``SVL-``/``EXT-``/``SEP-`` chains
no longer wanted, atomically per table.  The jump rules from the built-in chains are
inserted once, when ``iptables-save`` shows them missing.  A ruleset equal to the last one
applied is not written again (except on a forced full resync).
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import shlex
from dataclasses import dataclass, field

from minik8s.host.commands import Runner, run
from minik8s.host.iptables import Iptables
from minik8s.proxy.config import ProxyConfig
from minik8s.proxy.servicemap import Endpoint, ProxyState, ServicePort, ServicePortName

NAT = "nat"
FILTER = "filter"
TABLES = (FILTER, NAT)
BUILTIN_CHAINS = {"PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"}


# ---------------------------------------------------------------------------- names
def _hash16(text: str) -> str:
    return base64.b32encode(hashlib.sha256(text.encode()).digest()).decode()[:16]


def svc_chain(cfg: ProxyConfig, name: ServicePortName, protocol: str) -> str:
    """``<P>-SVC-<16 base32 chars of sha256("ns/svc:port" + protocol)>``: stable across restarts."""
    return cfg.chain(f"SVC-{_hash16(str(name) + protocol.lower())}")


def svl_chain(cfg: ProxyConfig, name: ServicePortName, protocol: str) -> str:
    """``<P>-SVL-<hash16>``: the chain of the Service port's endpoints on this node (traffic policy ``Local``)."""
    return cfg.chain(f"SVL-{_hash16(str(name) + protocol.lower())}")


def ext_chain_name(cfg: ProxyConfig, name: ServicePortName, protocol: str) -> str:
    """``<P>-EXT-<hash16>``: where NodePort traffic of the Service port goes first."""
    return cfg.chain(f"EXT-{_hash16(str(name) + protocol.lower())}")


def sep_chain(cfg: ProxyConfig, name: ServicePortName, protocol: str, endpoint: Endpoint) -> str:
    """``<P>-SEP-<16 base32 chars of sha256("ns/svc:port" + protocol + "ip:port")>``."""
    return cfg.chain(f"SEP-{_hash16(str(name) + protocol.lower() + str(endpoint))}")


def fixed_chains(cfg: ProxyConfig) -> dict[str, list[str]]:
    """The proxy's always-present chains per table."""
    return {
        NAT: [cfg.chain("SERVICES"), cfg.chain("NODEPORTS"), cfg.chain("POSTROUTING"), cfg.chain("MARK-MASQ")],
        FILTER: [cfg.chain("SERVICES"), cfg.chain("EXTERNAL-SERVICES"), cfg.chain("FORWARD"), cfg.chain("FIREWALL"),
                 cfg.chain("NODEPORTS")],
    }


def is_dynamic_chain(cfg: ProxyConfig, chain: str) -> bool:
    """True for per-service/per-endpoint chains (``<P>-SVC-…``, ``<P>-SVL-…``, ``<P>-EXT-…``, ``<P>-SEP-…``)."""
    return chain.startswith(tuple(cfg.chain(kind) for kind in ("SVC-", "SVL-", "EXT-", "SEP-")))


def owns_chain(cfg: ProxyConfig, chain: str) -> bool:
    """True for every chain of this instance (``<P>-`` and anything after it)."""
    return chain.startswith(cfg.chain(""))


@dataclass(frozen=True)
class Jump:
    """A rule in a built-in chain that sends packets into one of the proxy's chains."""

    table: str
    chain: str
    spec: str  # everything after "-A <chain> "

    @property
    def target(self) -> str:
        words = shlex.split(self.spec)
        return words[words.index("-j") + 1]


def jumps(cfg: ProxyConfig) -> list[Jump]:
    """The jump rules, in the order they should appear at the top of each built-in chain."""
    who = "kubernetes" if cfg.default_prefix else f"minik8s {cfg.chain_prefix}"
    new = "-m conntrack --ctstate NEW"
    portals = f'-m comment --comment "{who} service portals"'
    return [
        Jump(NAT, "PREROUTING", f"{portals} -j {cfg.chain('SERVICES')}"),
        Jump(NAT, "OUTPUT", f"{portals} -j {cfg.chain('SERVICES')}"),
        Jump(NAT, "POSTROUTING", f'-m comment --comment "{who} postrouting rules" -j {cfg.chain("POSTROUTING")}'),
        Jump(FILTER, "INPUT", f'{new} -m comment --comment "{who} externally-visible service portals" '
                              f'-j {cfg.chain("EXTERNAL-SERVICES")}'),
        Jump(FILTER, "FORWARD", f'-m comment --comment "{who} forwarding rules" -j {cfg.chain("FORWARD")}'),
        Jump(FILTER, "FORWARD", f"{new} {portals} -j {cfg.chain('SERVICES')}"),
        Jump(FILTER, "OUTPUT", f"{new} {portals} -j {cfg.chain('SERVICES')}"),
        Jump(FILTER, "INPUT", f'-m comment --comment "{who} health check service ports" -j {cfg.chain("NODEPORTS")}'),
        Jump(FILTER, "INPUT", f"-j {cfg.chain('FIREWALL')}"),
        Jump(FILTER, "OUTPUT", f"-j {cfg.chain('FIREWALL')}"),
    ]


# ---------------------------------------------------------------------------- rendering
@dataclass
class TableRules:
    """The proxy's chains of one table (declaration order) and their rules (``-A …`` lines)."""

    chains: list[str] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)


@dataclass
class Ruleset:
    """The whole desired state of the proxy's chains in the nat and filter tables."""

    tables: dict[str, TableRules]

    def text(self) -> str:
        """A canonical text of the ruleset, for "did anything change?" comparisons."""
        out = []
        for table in TABLES:
            tr = self.tables[table]
            out += [f"*{table}", *(f":{c}" for c in tr.chains), *tr.rules]
        return "\n".join(out)

    def chains(self, table: str) -> set[str]:
        return set(self.tables[table].chains)


def _port_match(sp: ServicePort, comment: str, dport: int | None = None) -> str:
    """``-p tcp -m comment --comment "…" -m tcp [--dport N]`` (iptables-save's own order)."""
    p = sp.protocol.lower()
    return f"-p {p} {_comment(comment)} -m {p}" + (f" --dport {dport}" if dport else "")


def _comment(text: str) -> str:
    return f'-m comment --comment "{text}"'


def localhost_nodeports(cfg: ProxyConfig, mode: str = "iptables") -> bool:
    """Whether NodePorts answer on 127.0.0.1 (iptables mode with ``cfg.localhost_nodeports``)."""
    return cfg.localhost_nodeports and mode == "iptables"


def external_rules(cfg: ProxyConfig, sp: ServicePort, chain: str, cluster_chain: str, local_chain: str,
                   has_external: bool) -> list[str]:
    """The rules of the ``<P>-EXT-…`` chain of a Service port with a NodePort (kube-proxy's).  Traffic
    policy ``Cluster``: masquerade, then the cluster-wide chain.  ``Local``: the client's address is kept;
    traffic from this node's pods (``--cluster-cidr``) and from the node itself (masqueraded: its source
    is a local address) short-circuits to the cluster-wide chain, as if it had gone out to a load
    balancer and come back; the rest goes to the local chain — when this node has no endpoints, it falls
    through to the filter table's DROP."""
    name, masq = sp.name, cfg.chain("MARK-MASQ")
    if not sp.external_local:
        return [f"-A {chain} {_comment(f'masquerade traffic for {name} external destinations')} -j {masq}",
                f"-A {chain} -j {cluster_chain}"]
    rules = []
    if cfg.cluster_cidr:
        rules.append(f"-A {chain} -s {cfg.cluster_cidr} {_comment(f'pod traffic for {name} external destinations')} "
                     f"-j {cluster_chain}")
    rules += [f"-A {chain} {_comment(f'masquerade LOCAL traffic for {name} external destinations')} "
              f"-m addrtype --src-type LOCAL -j {masq}",
              f"-A {chain} {_comment(f'route LOCAL traffic for {name} external destinations')} "
              f"-m addrtype --src-type LOCAL -j {cluster_chain}"]
    if has_external:
        rules.append(f"-A {chain} -j {local_chain}")
    return rules


def render(state: ProxyState, cfg: ProxyConfig, mode: str = "iptables") -> Ruleset:
    """The rules for ``state``.  ``mode="ipvs"`` renders only what IPVS mode needs from
    netfilter (masquerade marks, no-endpoint REJECTs, forwarding) — no SVC/SEP chains.

    Pure: the same state and config always give the same text (services and endpoints are
    sorted), which is what makes "unchanged → don't rewrite" work.
    """
    fixed = fixed_chains(cfg)
    nat = TableRules(chains=list(fixed[NAT]))
    flt = TableRules(chains=list(fixed[FILTER]))
    services, nodeports, masq = cfg.chain("SERVICES"), cfg.chain("NODEPORTS"), cfg.chain("MARK-MASQ")
    ext, fwd = cfg.chain("EXTERNAL-SERVICES"), cfg.chain("FORWARD")
    post, mark = cfg.chain("POSTROUTING"), cfg.mark
    who = "kubernetes" if cfg.default_prefix else f"minik8s {cfg.chain_prefix}"

    nat.rules += [
        f"-A {post} -m mark ! --mark {mark}/{mark} -j RETURN",
        f"-A {post} -j MARK --xor-mark {mark}",
        f"-A {post} {_comment(who + ' service traffic requiring SNAT')} -j MASQUERADE --random-fully",
        f"-A {masq} -j MARK --or-mark {mark}",
    ]
    flt.rules += [
        f"-A {fwd} {_comment(who + ' forwarding rules')} -m mark --mark {mark}/{mark} -j ACCEPT",
        f"-A {fwd} {_comment(who + ' forwarding conntrack rule')} -m conntrack --ctstate RELATED,ESTABLISHED "
        "-j ACCEPT",
    ]
    svc_chains: list[str] = []
    sep_chains: dict[str, None] = {}  # (ordered, no duplicates: an endpoint may be in SVC and SVL)
    svc_rules: list[str] = []
    sep_rules: list[str] = []
    off_cluster = f"! -s {cfg.cluster_cidr} " if cfg.cluster_cidr else None
    for name, sp in state.services.items():
        eps = state.endpoints.get(name, ())
        local_eps = state.local_endpoints.get(name, ())
        dst = f"-d {sp.cluster_ip}/32"
        ip_match = _port_match(sp, f"{name} cluster IP", sp.port)
        np_match = _port_match(sp, str(name), sp.node_port)
        # kube-proxy's categories: any usable endpoint in the cluster; endpoints for ClusterIP traffic
        # (internal) and for NodePort traffic (external) under their traffic policies
        has_internal = bool(eps) and (not sp.internal_local or bool(local_eps))
        has_external = bool(eps) and (not sp.external_local or bool(local_eps))
        drop = f"{name} has no local endpoints"
        if not eps:
            none = f"{name} has no endpoints"
            flt.rules.append(f"-A {services} {dst} {_port_match(sp, none, sp.port)} "
                             "-j REJECT --reject-with icmp-port-unreachable")
            if sp.node_port:
                flt.rules.append(f"-A {ext} -m addrtype --dst-type LOCAL {_port_match(sp, none, sp.node_port)} "
                                 "-j REJECT --reject-with icmp-port-unreachable")
            continue
        if not has_internal:
            flt.rules.append(f"-A {services} {dst} {_port_match(sp, drop, sp.port)} -j DROP")
        if sp.node_port and not has_external:
            flt.rules.append(f"-A {ext} -m addrtype --dst-type LOCAL {_port_match(sp, drop, sp.node_port)} -j DROP")
        if mode == "ipvs":
            # IPVS does the balancing; netfilter only marks what must be masqueraded.
            if off_cluster:
                nat.rules.append(f"-A {services} {off_cluster}{dst} {ip_match} -j {masq}")
            if sp.node_port and not sp.external_local:
                nat.rules.append(f"-A {nodeports} {np_match} -j {masq}")
            continue
        cluster_chain, local_chain = svc_chain(cfg, name, sp.protocol), svl_chain(cfg, name, sp.protocol)
        external = sp.node_port is not None  # (kube-proxy's ExternallyAccessible: NodePorts are what we capture)
        uses_cluster = bool(eps) and (not sp.internal_local or external)
        uses_local = bool(local_eps) and (sp.internal_local or (sp.external_local and external))
        internal_chain = local_chain if sp.internal_local else cluster_chain
        chain_rules: dict[str, list[str]] = {c: [] for c in (cluster_chain, local_chain)}
        if has_internal:
            nat.rules.append(f"-A {services} {dst} {ip_match} -j {internal_chain}")
            if off_cluster:
                chain_rules[internal_chain].append(f"-A {internal_chain} {off_cluster}{dst} {ip_match} -j {masq}")
        if external:
            ext_chain = ext_chain_name(cfg, name, sp.protocol)
            svc_chains.append(ext_chain)
            nat.rules.append(f"-A {nodeports} {np_match} -j {ext_chain}")
            svc_rules += external_rules(cfg, sp, ext_chain, cluster_chain, local_chain, has_external)
        for chain, used, chosen in ((cluster_chain, uses_cluster, eps), (local_chain, uses_local, local_eps)):
            if not used:
                continue
            svc_chains.append(chain)
            seps = [sep_chain(cfg, name, sp.protocol, ep) for ep in chosen]
            rules = chain_rules[chain]
            if sp.sticky_max_age_seconds:
                # ClientIP affinity: a client seen by an endpoint's chain within the timeout goes back to it
                # (its source address is in that chain's ``recent`` list), before any random pick
                for ep, sep in zip(chosen, seps, strict=True):
                    rules.append(f"-A {chain} {_comment(f'{name} -> {ep}')} -m recent --name {sep} --rcheck "
                                 f"--seconds {sp.sticky_max_age_seconds} --reap -j {sep}")
            n = len(chosen)
            for i, (ep, sep) in enumerate(zip(chosen, seps, strict=True)):
                pick = "" if i == n - 1 else f"-m statistic --mode random --probability {1.0 / (n - i):.10f} "
                rules.append(f"-A {chain} {_comment(f'{name} -> {ep}')} {pick}-j {sep}")
                if sep in sep_chains:
                    continue
                sep_chains[sep] = None
                sep_rules.append(f"-A {sep} -s {ep.ip}/32 {_comment(str(name))} -j {masq}")
                remember = f"-m recent --name {sep} --set " if sp.sticky_max_age_seconds else ""
                sep_rules.append(f"-A {sep} {_port_match(sp, str(name))} {remember}-j DNAT --to-destination {ep}")
            svc_rules += rules
    for check in state.health_checks.values():
        # the health check servers answer whether or not this node has endpoints
        flt.rules.append(f"-A {cfg.chain('NODEPORTS')} "
                         f"{_comment(f'{check.namespace}/{check.name} health check node port')} "
                         f"-m tcp -p tcp --dport {check.port} -j ACCEPT")
    last = _comment(f"{who} service nodeports; NOTE: this must be the last rule in this chain")
    loopback = [ip for ip in state.node_port_ips if ipaddress.ip_address(ip).is_loopback]
    if cfg.nodeport_addresses:  # kube-proxy's --nodeport-addresses: one jump per matching local address
        for ip in state.node_port_ips:
            if ip not in loopback or localhost_nodeports(cfg, mode):
                nat.rules.append(f"-A {services} -d {ip}/32 {last} -j {nodeports}")
    elif localhost_nodeports(cfg, mode):
        nat.rules.append(f"-A {services} {last} -m addrtype --dst-type LOCAL -j {nodeports}")
    else:
        nat.rules.append(f"-A {services} {last} ! -d 127.0.0.0/8 -m addrtype --dst-type LOCAL -j {nodeports}")
    if localhost_nodeports(cfg, mode) and (loopback or not cfg.nodeport_addresses):
        flt.rules.append(f"-A {cfg.chain('FIREWALL')} -d 127.0.0.0/8 ! -s 127.0.0.0/8 "
                         f"{_comment('block incoming localnet connections')} "
                         "-m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP")
    nat.chains += svc_chains + list(sep_chains)
    nat.rules += svc_rules + sep_rules
    return Ruleset({NAT: nat, FILTER: flt})


# ---------------------------------------------------------------------------- reading iptables-save
@dataclass
class SavedTable:
    """One table of ``iptables-save`` output: every chain name and every ``-A`` line."""

    chains: set[str] = field(default_factory=set)
    rules: list[str] = field(default_factory=list)


def parse_save(text: str) -> dict[str, SavedTable]:
    """Parse ``iptables-save`` output into tables (only those present in ``text``)."""
    tables: dict[str, SavedTable] = {}
    current: SavedTable | None = None
    for line in text.splitlines():
        if line.startswith("*"):
            current = tables.setdefault(line[1:].strip(), SavedTable())
        elif current is None:
            continue
        elif line.startswith(":"):
            current.chains.add(line[1:].split()[0])
        elif line.startswith("-A "):
            current.rules.append(line)
    return tables


def rule_chain_and_target(line: str) -> tuple[str, str | None]:
    """(chain, ``-j`` target or None) of one ``-A`` line."""
    words = shlex.split(line)
    target = words[words.index("-j") + 1] if "-j" in words and words.index("-j") + 1 < len(words) else None
    return words[1], target


def missing_jumps(saved: dict[str, SavedTable], cfg: ProxyConfig) -> list[Jump]:
    """The jump rules of :func:`jumps` that ``saved`` does not show (matched on table, built-in
    chain and target: each built-in chain jumps at most once into each of our chains)."""
    present = set()
    for table, st in saved.items():
        for line in st.rules:
            chain, target = rule_chain_and_target(line)
            if chain in BUILTIN_CHAINS and target and owns_chain(cfg, target):
                present.add((table, chain, target))
    return [j for j in jumps(cfg) if (j.table, j.chain, j.target) not in present]


def stale_chains(saved: dict[str, SavedTable], ruleset: Ruleset, cfg: ProxyConfig) -> dict[str, list[str]]:
    """Per table, this instance's SVC/SEP chains that exist but are no longer wanted (sorted)."""
    return {table: sorted(c for c in (saved.get(table) or SavedTable()).chains
                          if is_dynamic_chain(cfg, c) and c not in ruleset.chains(table))
            for table in TABLES}


def restore_payload(ruleset: Ruleset, stale: dict[str, list[str]] | None = None,
                    add_jumps: list[Jump] | None = None) -> str:
    """The ``iptables-restore --noflush`` input: per table, declare (= flush) every chain of
    the ruleset and every stale chain, insert missing jumps, write the rules, delete stale
    chains, COMMIT.  Nothing else in the tables is touched."""
    stale = stale or {}
    lines: list[str] = []
    for table in TABLES:
        tr = ruleset.tables[table]
        gone = stale.get(table, [])
        lines.append(f"*{table}")
        lines += [f":{c} - [0:0]" for c in [*tr.chains, *gone]]
        # "-I chain 1" puts each rule on top: insert in reverse to keep jumps()' order
        lines += [f"-I {j.chain} 1 {j.spec}" for j in reversed(add_jumps or []) if j.table == table]
        lines += tr.rules
        lines += [f"-X {c}" for c in gone]
        lines.append("COMMIT")
    return "\n".join(lines) + "\n"


def cleanup_payload(saved: dict[str, SavedTable], cfg: ProxyConfig) -> str | None:
    """The restore input removing every chain of this instance and every rule that jumps into
    one of them (from any other chain), or None when there is nothing to remove."""
    lines: list[str] = []
    for table in TABLES:
        st = saved.get(table)
        if st is None:
            continue
        ours = sorted(c for c in st.chains if owns_chain(cfg, c))
        refs = []
        for line in st.rules:
            chain, target = rule_chain_and_target(line)
            if not owns_chain(cfg, chain) and target and owns_chain(cfg, target):
                refs.append("-D" + line[2:])
        if not ours and not refs:
            continue
        # flush ours, drop the references to them, then delete them
        lines += [f"*{table}", *(f":{c} - [0:0]" for c in ours), *refs, *(f"-X {c}" for c in ours), "COMMIT"]
    return "\n".join(lines) + "\n" if lines else None


def programmed_endpoints(nat_save: str, cfg: ProxyConfig) -> dict[str, list[str]]:
    """What the kernel's nat table actually does for each ClusterIP: ``"ip:port/proto"`` →
    sorted ``"podIP:port"`` endpoints, read back from ``iptables-save -t nat`` output.

    Service ports without endpoints (REJECTed in filter) are absent.  Used to observe
    programming latency and for debugging.
    """
    st = parse_save(nat_save).get(NAT) or SavedTable()
    svc_of: dict[str, str] = {}
    seps: dict[str, list[str]] = {}
    dest: dict[str, str] = {}
    services = cfg.chain("SERVICES")
    svc_kinds = (cfg.chain("SVC-"), cfg.chain("SVL-"))  # (internalTrafficPolicy Local: the local chain)
    for line in st.rules:
        words = shlex.split(line)
        chain, target = rule_chain_and_target(line)
        if chain == services and target and target.startswith(svc_kinds) and "-d" in words:
            ip = words[words.index("-d") + 1].removesuffix("/32")
            port = words[words.index("--dport") + 1]
            proto = words[words.index("-p") + 1]
            svc_of[target] = f"{ip}:{port}/{proto}"
        elif chain.startswith(svc_kinds) and target and target.startswith(cfg.chain("SEP-")):
            targets = seps.setdefault(chain, [])
            if target not in targets:  # (a ClientIP Service's chain jumps to each endpoint twice)
                targets.append(target)
        elif chain.startswith(cfg.chain("SEP-")) and "--to-destination" in words:
            dest[chain] = words[words.index("--to-destination") + 1]
    return {key: sorted(dest[s] for s in seps.get(chain, []) if s in dest) for chain, key in svc_of.items()}


# ---------------------------------------------------------------------------- applying
@dataclass
class SyncResult:
    """What one sync did: whether anything was written, and how many stale chains were deleted."""

    changed: bool = False
    deleted_chains: int = 0
    added_jumps: int = 0
    rules: int = 0


class IptablesBackend:
    """Keeps the proxy's chains equal to :func:`render` of the latest state.

    ``runner(argv, stdin=None)`` runs a command and returns stdout (raising
    :class:`~minik8s.host.errors.CommandFailed`); ``render_mode`` is ``"ipvs"`` when used by the
    IPVS backend for its masquerade rules.  Not thread-safe: one sync at a time.
    """

    mode = "iptables"

    def __init__(self, cfg: ProxyConfig, runner: Runner = run, render_mode: str = "iptables") -> None:
        self.cfg = cfg
        self.iptables = Iptables(runner)
        self.render_mode = render_mode
        self._last: str | None = None
        self._last_chains: dict[str, set[str]] | None = None

    def read(self) -> dict[str, SavedTable]:
        """``iptables-save`` of the nat and filter tables, parsed."""
        out: dict[str, SavedTable] = {}
        for table in TABLES:
            out.update(parse_save(self.iptables.save(table)))
        return out

    def apply(self, payload: str) -> None:
        """One atomic ``iptables-restore --noflush`` (per table) of ``payload``."""
        self.iptables.restore(payload)

    def sync(self, state: ProxyState, force: bool = False) -> SyncResult:
        """Make the kernel's rules match ``state``.  Skips all system calls when the rendered
        ruleset equals the last one applied, unless ``force``.  A changed ruleset is written
        in one ``iptables-restore``; the chains to delete are those written last time and no
        longer wanted.  A forced (full) sync, the first one and any after a failure first
        read ``iptables-save`` instead: they delete every stale chain of the prefix and
        re-insert missing jumps from the built-in chains.

        Raises CommandFailed when iptables fails; the next sync then rewrites everything.
        """
        ruleset = render(state, self.cfg, self.render_mode)
        text = ruleset.text()
        nrules = sum(len(t.rules) for t in ruleset.tables.values())
        if not force and text == self._last:
            return SyncResult(changed=False, rules=nrules)
        add: list[Jump] = []
        if force or self._last is None or self._last_chains is None:
            saved = self.read()
            stale = stale_chains(saved, ruleset, self.cfg)
            add = missing_jumps(saved, self.cfg)
        else:  # partial sync: what we wrote last time is what exists (kube-proxy's partial syncs)
            stale = {t: sorted(c for c in self._last_chains[t] if is_dynamic_chain(self.cfg, c)
                               and c not in ruleset.chains(t)) for t in TABLES}
        self._last = None
        self.apply(restore_payload(ruleset, stale, add))
        self._last = text
        self._last_chains = {t: ruleset.chains(t) for t in TABLES}
        return SyncResult(changed=True, deleted_chains=sum(len(v) for v in stale.values()), added_jumps=len(add),
                          rules=nrules)

    def cleanup(self) -> int:
        """Remove every chain of this instance and the jumps into them; returns the chains removed."""
        saved = self.read()
        payload = cleanup_payload(saved, self.cfg)
        self._last = None
        if payload is None:
            return 0
        self.apply(payload)
        return sum(1 for st in saved.values() for c in st.chains if owns_chain(self.cfg, c))
