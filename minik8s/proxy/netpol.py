"""NetworkPolicy enforcement: pods, namespaces and ``networking.k8s.io/v1`` NetworkPolicies → filter rules.

The proxy enforces NetworkPolicies on its node as a network plugin's agent does (kube-router runs
its firewall next to its service proxy in one agent; here kube-proxy is that agent): it already
watches the API, writes whole tables with ``iptables-restore`` and judges forwarded traffic after
the Service DNAT.  In the filter table (``<P>`` is ``--chain-prefix``):

``FORWARD`` → ``<P>-NETPOL`` (kept the first rule of ``FORWARD``, before Docker's and the pod
network's accepts; only other instances' ``…-NETPOL`` jumps may precede it)
    replies of allowed connections return at once (conntrack ``ESTABLISHED,RELATED``); then
    ``-s <podIP>`` → ``<P>-NPE-<hash>`` for each egress-isolated pod of the node and
    ``-d <podIP>`` → ``<P>-NPI-<hash>`` for each ingress-isolated one, so a connection between
    two isolated pods passes both.  Traffic bridged between two pods of one node is judged too:
    ``br_netfilter`` with ``net.bridge.bridge-nf-call-iptables=1`` sends it through ``FORWARD``.
``<P>-NPI-…`` / ``<P>-NPE-…`` (one per isolated pod and direction)
    one ``RETURN`` (allowed) per peer × port of every rule of every policy that selects the pod
    in that direction — the union of the rules — then ``REJECT`` (``icmp-port-unreachable``:
    clients see ``connection refused``).  A peer is a pod IP (``podSelector``,
    ``namespaceSelector``, or both), an ``ipBlock`` CIDR, or anything (no peers).  A port is a
    protocol, a number or a ``--dport N:M`` range (``endPort``); a named port is resolved from the
    destination pod's container ports (ingress: the pod itself; egress: each peer pod, so a named
    port never matches a non-pod address).
``<P>-NPB-…`` (one per ``ipBlock`` with ``except``)
    ``RETURN`` for each excepted CIDR, else set the policy mark bit; the caller then
    ``-g <P>-NPCLR`` (clear the bit, back to ``<P>-NETPOL``) when the bit is set.

A pod is isolated for a direction when any policy of its namespace selects it with that
``policyType`` (``policyTypes`` defaulting as Kubernetes does).  Only traffic that crosses
``FORWARD`` is judged: the node reaching its own pods (``OUTPUT``, kubelet probes) and pods reaching
their own node (``INPUT``, e.g. the node's DNS server) are not, as Kubernetes allows for the node.

Pure up to :class:`PolicyBackend` (the kernel) and :class:`PolicyEnforcer` (the informers and the
loop).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import ipaddress
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field

from minik8s.api.base import Obj
from minik8s.api.networking import policy_types
from minik8s.api.selectors import LabelSelector
from minik8s.client.factory import SharedInformerFactory
from minik8s.client.rest import Client
from minik8s.host.commands import Runner, run
from minik8s.host.iptables import Iptables
from minik8s.proxy import syncloop
from minik8s.proxy.config import ProxyConfig
from minik8s.proxy.iptables import FILTER, parse_save, rule_chain_and_target

log = logging.getLogger("proxy.netpol")

NAME_LABEL = "kubernetes.io/metadata.name"
REJECT = "REJECT --reject-with icmp-port-unreachable"


# ---------------------------------------------------------------------------- names
def _hash16(text: str) -> str:
    return base64.b32encode(hashlib.sha256(text.encode()).digest()).decode()[:16]


def main_chain(cfg: ProxyConfig) -> str:
    return cfg.chain("NETPOL")


def clear_chain(cfg: ProxyConfig) -> str:
    return cfg.chain("NPCLR")


def is_policy_chain(cfg: ProxyConfig, chain: str) -> bool:
    """The per-pod and per-ipBlock chains (``<P>-NPI-``, ``<P>-NPE-``, ``<P>-NPB-``)."""
    return chain.startswith((cfg.chain("NPI-"), cfg.chain("NPE-"), cfg.chain("NPB-")))


def policy_mark(cfg: ProxyConfig) -> str:
    """The mark bit of "inside an allowed ipBlock": ``0x10000`` for ``KUBE`` (kube-router's), else
    a bit of 16-27 other than the prefix's masquerade bit."""
    if cfg.default_prefix:
        return hex(1 << 16)
    return hex(1 << (16 + (cfg.masquerade_bit - 16 + 6) % 12))


def jump_spec(cfg: ProxyConfig) -> str:
    who = "kubernetes" if cfg.default_prefix else f"minik8s {cfg.chain_prefix}"
    return f'-m comment --comment "{who} network policies" -j {main_chain(cfg)}'


# ---------------------------------------------------------------------------- the cluster's view
@dataclass(frozen=True)
class PodInfo:
    """What enforcement needs of a pod."""

    namespace: str
    name: str
    ip: str
    node: str
    labels: dict[str, str]
    ports: tuple[tuple[str, str, int], ...]  # (name, protocol, containerPort) of every named container port

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def named_port(self, name: str, protocol: str) -> list[int]:
        return sorted({p for n, proto, p in self.ports if n == name and proto == protocol})


def pod_info(pod: Obj) -> PodInfo | None:
    """A pod with an IP on the pod network (not ``hostNetwork``, not finished); None otherwise."""
    meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    ip = status.get("podIP")
    if not ip or spec.get("hostNetwork") or status.get("phase") in ("Succeeded", "Failed"):
        return None
    try:
        if ipaddress.ip_address(ip).version != 4:
            return None
    except ValueError:
        return None
    ports = tuple((str(p["name"]), str(p.get("protocol") or "TCP"), int(p["containerPort"]))
                  for c in spec.get("containers") or [] for p in c.get("ports") or []
                  if p.get("name") and isinstance(p.get("containerPort"), int))
    return PodInfo(meta.get("namespace") or "", meta.get("name") or "", ip, spec.get("nodeName") or "",
                   dict(meta.get("labels") or {}), ports)


@dataclass
class PolicyView:
    """Pods (with IPs), namespace labels and policies, as the informers last saw them."""

    pods: list[PodInfo]
    namespaces: dict[str, dict[str, str]]
    policies: list[Obj]

    @classmethod
    def build(cls, pods: Iterable[Obj], namespaces: Iterable[Obj], policies: Iterable[Obj]) -> PolicyView:
        infos = sorted((i for i in (pod_info(p) for p in pods) if i is not None), key=lambda i: i.key)
        ns = {str((n.get("metadata") or {}).get("name")): dict((n.get("metadata") or {}).get("labels") or {})
              for n in namespaces}
        pols = sorted(policies, key=lambda p: ((p.get("metadata") or {}).get("namespace") or "",
                                               (p.get("metadata") or {}).get("name") or ""))
        return cls(infos, ns, pols)

    def namespace_labels(self, name: str) -> dict[str, str]:
        return self.namespaces.get(name) or {NAME_LABEL: name}

    def peer_pods(self, policy_ns: str, peer: Obj) -> list[PodInfo]:
        """The pods a ``podSelector``/``namespaceSelector`` peer names."""
        pod_sel = LabelSelector.from_dict(peer["podSelector"]) if peer.get("podSelector") is not None else None
        if peer.get("namespaceSelector") is not None:
            ns_sel = LabelSelector.from_dict(peer["namespaceSelector"])
            in_ns = [p for p in self.pods if ns_sel.matches(self.namespace_labels(p.namespace))]
        else:
            in_ns = [p for p in self.pods if p.namespace == policy_ns]
        return [p for p in in_ns if pod_sel is None or pod_sel.matches(p.labels)]


# ---------------------------------------------------------------------------- rendering
@dataclass(frozen=True)
class Port:
    """One port match: protocol, and a port or range (None: every port)."""

    protocol: str
    first: int | None = None
    last: int | None = None

    def spec(self) -> str:
        p = self.protocol.lower()
        if self.first is None:
            return f"-p {p}"
        dport = str(self.first) if self.last is None or self.last == self.first else f"{self.first}:{self.last}"
        return f"-p {p} -m {p} --dport {dport}"


@dataclass
class PolicyRules:
    """The filter chains and rules of the policies (declaration order), and how many pods are isolated."""

    chains: list[str] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)
    isolated: int = 0

    def text(self) -> str:
        return "\n".join([*(f":{c}" for c in self.chains), *self.rules])


def _ports(rule: Obj, target: PodInfo | None) -> list[tuple[Port, str | None]] | None:
    """A rule's ports: None for every port; else (port, named-port name) pairs — a named port is
    resolved against ``target`` when given (ingress), left for each destination otherwise (egress)."""
    out: list[tuple[Port, str | None]] = []
    if not rule.get("ports"):
        return None
    for port in rule["ports"]:
        proto = str(port.get("protocol") or "TCP")
        value = port.get("port")
        if value is None:
            out.append((Port(proto), None))
        elif isinstance(value, int):
            end = port.get("endPort")
            out.append((Port(proto, value, end if isinstance(end, int) else None), None))
        elif target is not None:
            out += [(Port(proto, n), None) for n in target.named_port(str(value), proto)]
        else:
            out.append((Port(proto), str(value)))
    return out


def _selector(policy: Obj) -> LabelSelector:
    return LabelSelector.from_dict((policy.get("spec") or {}).get("podSelector") or {})


def _comment(text: str) -> str:
    return f'-m comment --comment "{text}"'


def render(view: PolicyView, cfg: ProxyConfig, node: str | None = None) -> PolicyRules:
    """The chains and rules for ``view``: the pods of ``node`` (every pod when None) are enforced.

    Pure: the same view gives the same text."""
    main, clear, mark = main_chain(cfg), clear_chain(cfg), policy_mark(cfg)
    out = PolicyRules(chains=[main, clear])
    out.rules += [f"-A {clear} -j MARK --set-xmark 0x0/{mark}",
                  f"-A {main} {_comment('replies of allowed connections')} -m conntrack --ctstate "
                  "RELATED,ESTABLISHED -j RETURN"]
    if not view.policies:
        return out
    by_ns: dict[str, list[Obj]] = {}
    for pol in view.policies:
        by_ns.setdefault((pol.get("metadata") or {}).get("namespace") or "", []).append(pol)
    jumps_out: list[str] = []
    jumps_in: list[str] = []
    body: list[str] = []
    extra_chains: list[str] = []
    for pod in view.pods:
        if node is not None and pod.node != node:
            continue
        for direction, flag, peers_key in (("Egress", "-d", "to"), ("Ingress", "-s", "from")):
            selecting = [p for p in by_ns.get(pod.namespace, []) if direction in policy_types(p)
                         and _selector(p).matches(pod.labels)]
            if not selecting:
                continue
            out.isolated += 1
            tag = "NPE" if direction == "Egress" else "NPI"
            chain = cfg.chain(f"{tag}-{_hash16(pod.key + direction)}")
            extra_chains.append(chain)
            own = "-s" if direction == "Egress" else "-d"
            (jumps_out if direction == "Egress" else jumps_in).append(
                f"-A {main} {own} {pod.ip}/32 {_comment(f'{pod.key} {direction.lower()}')} -j {chain}")
            rules, blocks = _pod_chain(view, cfg, pod, chain, direction, flag, peers_key, selecting)
            if blocks:
                body.append(f"-A {chain} -j MARK --set-xmark 0x0/{mark}")
            body += rules
            body.append(f"-A {chain} {_comment(f'{pod.key}: no {direction.lower()} policy allows it')} -j {REJECT}")
            for block_chain, block_rules in blocks:
                if block_chain not in extra_chains:  # the same rule twice in one pod's policies
                    extra_chains.append(block_chain)
                    body += block_rules
    out.chains += extra_chains
    out.rules += jumps_out + jumps_in + body
    return out


def _pod_chain(view: PolicyView, cfg: ProxyConfig, pod: PodInfo, chain: str, direction: str, flag: str,
               peers_key: str, selecting: list[Obj]) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """The allow rules of one pod's chain, and the ``ipBlock`` sub-chains they use."""
    mark, clear = policy_mark(cfg), clear_chain(cfg)
    rules: list[str] = []
    blocks: list[tuple[str, list[str]]] = []
    for pol in selecting:
        pmeta = pol.get("metadata") or {}
        pname = f"{pmeta.get('namespace')}/{pmeta.get('name')}"
        for index, rule in enumerate((pol.get("spec") or {}).get(direction.lower()) or []):
            c = _comment(f"{pname} {direction.lower()}[{index}]")
            ports = _ports(rule, pod if direction == "Ingress" else None)
            if ports is not None and not ports:
                continue  # only named ports the pod does not have
            port_list: list[tuple[Port, str | None]] = ports if ports is not None else [(Port("any"), None)]
            peers = rule.get(peers_key) or []
            # (address match, destination pods for named ports or None for "any address")
            targets: list[tuple[str, list[PodInfo] | None, Obj | None]] = []
            if not peers:
                targets.append(("", None, None))
            for peer in peers:
                if peer.get("ipBlock"):
                    targets.append(("block", None, peer["ipBlock"]))
                else:
                    targets += [(f"{flag} {p.ip}/32 ", [p], None)
                                for p in view.peer_pods(pmeta.get("namespace") or "", peer)]
            for addr, pods, block in targets:
                for port, named in port_list:
                    specs = _port_specs(port, named, addr, pods, block, view, flag)
                    for match in specs:
                        if block is not None and block.get("except") and match.startswith(f"{flag} {block['cidr']} "):
                            sub = cfg.chain(f"NPB-{_hash16(chain + pname + str(index) + match)}")
                            excepts = [f"-A {sub} {flag} {e} -j RETURN" for e in block["except"]]
                            blocks.append((sub, [*excepts, f"-A {sub} -j MARK --set-xmark {mark}/{mark}"]))
                            rules.append(f"-A {chain} {match}{c} -j {sub}")
                            rules.append(f"-A {chain} -m mark --mark {mark}/{mark} -g {clear}")
                        else:
                            rules.append(f"-A {chain} {match}{c} -j RETURN")
    return rules, blocks


def _port_specs(port: Port, named: str | None, addr: str, pods: list[PodInfo] | None, block: Obj | None,
                view: PolicyView, flag: str) -> list[str]:
    """The address-and-port matches of one (peer, port) pair, each ending with a space."""
    ported = "" if port.protocol == "any" else port.spec() + " "
    if named is None:
        if block is not None:
            return [f"{flag} {block['cidr']} {ported}"]
        return [f"{addr}{ported}"]
    # a named port (egress): each destination pod's own number
    if pods is None:
        candidates = [p for p in view.pods if block is None or _in_block(p.ip, block)]
    else:
        candidates = pods
    return [f"{flag} {p.ip}/32 {Port(port.protocol, n).spec()} "
            for p in candidates for n in p.named_port(named, port.protocol)]


def _in_block(ip: str, block: Obj) -> bool:
    try:
        addr = ipaddress.ip_address(ip)
        if addr not in ipaddress.ip_network(block["cidr"], strict=False):
            return False
        return not any(addr in ipaddress.ip_network(e, strict=False) for e in block.get("except") or [])
    except ValueError:
        return False


# ---------------------------------------------------------------------------- the kernel
def jump_in_place(forward_rules: list[str], cfg: ProxyConfig) -> tuple[bool, bool]:
    """(present, first): whether ``FORWARD`` jumps to our chain, and whether only other instances'
    ``…-NETPOL`` jumps come before it."""
    main = main_chain(cfg)
    for line in forward_rules:
        _, target = rule_chain_and_target(line)
        if target == main:
            return True, True
        if not (target or "").endswith("-NETPOL"):
            return any(rule_chain_and_target(r)[1] == main for r in forward_rules), False
    return False, False


def restore_payload(rules: PolicyRules, cfg: ProxyConfig, stale: list[str], jump: str | None) -> str:
    """The ``iptables-restore --noflush`` input of the filter table: declare (= flush) our chains and
    the stale ones, (re)place the ``FORWARD`` jump (``"insert"`` or ``"move"``), write, delete stale chains."""
    lines = ["*filter", *(f":{c} - [0:0]" for c in [*rules.chains, *stale])]
    if jump == "move":
        lines.append(f"-D FORWARD {jump_spec(cfg)}")
    if jump in ("move", "insert"):
        lines.append(f"-I FORWARD 1 {jump_spec(cfg)}")
    lines += rules.rules
    lines += [f"-X {c}" for c in stale]
    lines.append("COMMIT")
    return "\n".join(lines) + "\n"


class PolicyBackend:
    """Keeps the policy chains equal to :func:`render` of the latest view (one restore per change).
    Raises CommandFailed."""

    def __init__(self, cfg: ProxyConfig, node: str | None = None, runner: Runner = run) -> None:
        self.cfg = cfg
        self.node = node
        self.iptables = Iptables(runner)
        self._last: str | None = None
        self._last_chains: set[str] = set()

    def sync(self, view: PolicyView, force: bool = False) -> PolicyRules | None:
        """Write the rules when they changed (or ``force``: re-read the table, put the jump first, drop
        every stale chain).  Returns the rules written, None when nothing was."""
        rules = render(view, self.cfg, self.node)
        text = rules.text()
        if not force and text == self._last:
            return None
        jump: str | None = None
        if force or self._last is None:
            saved = parse_save(self.iptables.save(FILTER)).get(FILTER)
            existing = saved.chains if saved else set()
            forward = [r for r in (saved.rules if saved else []) if r.split()[1] == "FORWARD"]
            present, first = jump_in_place(forward, self.cfg)
            jump = None if first else ("move" if present else "insert")
        else:
            existing = self._last_chains
        stale = sorted(c for c in existing if is_policy_chain(self.cfg, c) and c not in rules.chains)
        self._last = None
        self.iptables.restore(restore_payload(rules, self.cfg, stale, jump))
        self._last = text
        self._last_chains = set(rules.chains)
        return rules


# ---------------------------------------------------------------------------- the loop
class PolicyEnforcer:
    """Pod, Namespace and NetworkPolicy informers (a factory of their own, so Services are programmed
    whether or not these kinds answer) and a loop like the proxy's: changes coalesce, at least
    ``min_sync_period`` between syncs, a full resync every ``sync_period``, back-off after a failure.
    Nothing is written before the three have listed once."""

    def __init__(self, client: Client, backend: PolicyBackend, cfg: ProxyConfig) -> None:
        self.backend = backend
        self.cfg = cfg
        self.factory = SharedInformerFactory(client)
        self.pods = self.factory.for_kind("v1", "Pod")
        self.namespaces = self.factory.for_kind("v1", "Namespace")
        self.policies = self.factory.for_kind("networking.k8s.io/v1", "NetworkPolicy")
        self._dirty = asyncio.Event()
        self.syncs = 0
        self.failures = 0

    def mark_dirty(self, *_: object) -> None:
        self._dirty.set()

    async def run(self) -> None:
        for informer in (self.pods, self.namespaces, self.policies):
            informer.add_handler(self.mark_dirty, self.mark_dirty, self.mark_dirty)
        self.factory.start()
        try:
            while not await self.factory.wait_for_cache_sync(timeout=10):
                log.warning("network policies: waiting for pods, namespaces and networkpolicies to list")
            await self._loop()
        finally:
            await self.factory.shutdown()

    async def _loop(self) -> None:
        await syncloop.run(self._dirty, self._sync, self.cfg.sync_period, self.cfg.min_sync_period)

    async def _sync(self, full: bool) -> bool:
        view = PolicyView.build(self.pods.list(), self.namespaces.list(), self.policies.list())
        try:
            written = await asyncio.to_thread(self.backend.sync, view, full)
        except Exception as exc:  # noqa: BLE001 - keep the last rules, retry as a full rewrite
            self.failures += 1
            log.error("network policy sync failed: %s", exc)
            return False
        if written is not None:
            self.syncs += 1
            log.info("network policies synced policies=%d isolated=%d rules=%d full=%s", len(view.policies),
                     written.isolated, len(written.rules), full)
        return True
