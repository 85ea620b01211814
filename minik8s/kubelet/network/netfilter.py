"""The kubelet's netfilter rules for the pod network: keep pod source addresses, let pods through.

Docker masquerades what leaves its bridge networks and isolates its bridges from each
other; a Kubernetes pod network must do neither between pods (the server sees the
client's pod IP, docs/network.md "Pod network").  The pod network is therefore created with
``enable_ip_masquerade=false`` and the kubelet adds, in chains of its own:

* nat ``MINIK8S-POSTROUTING`` (jumped from ``POSTROUTING``): traffic from the cluster CIDR
  to the cluster CIDR, to the service CIDR or to multicast keeps its source (``RETURN``);
  the rest from the cluster CIDR — leaving the pod network — is masqueraded to the
  node's address (what flannel's ``--ip-masq`` and ip-masq-agent do);
* filter ``MINIK8S-FORWARD`` (jumped from ``DOCKER-USER``, which Docker evaluates before
  its isolation rules, or from ``FORWARD`` when Docker has no such chain): forwarding
  from and to the cluster CIDR is accepted (flannel's ``FLANNEL-FWD``; the FORWARD
  policy is DROP under Docker).

Every rule carries the comment ``minik8s pod network <cluster CIDR>: ...``, and a sync
touches only rules with its own cluster CIDR's comment, so two clusters' kubelets on one
machine (tests) do not undo each other.  The jumps carry ``minik8s pod network``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from minik8s.host.commands import Runner
from minik8s.host.iptables import Iptables

log = logging.getLogger("kubelet.netfilter")

NAT_CHAIN = "MINIK8S-POSTROUTING"
FILTER_CHAIN = "MINIK8S-FORWARD"
JUMP_COMMENT = "minik8s pod network"
MULTICAST = "224.0.0.0/4"


@dataclass(frozen=True)
class Rule:
    """One rule: ``iptables -t <table> -A <chain> <spec...>``."""

    table: str
    chain: str
    spec: tuple[str, ...]


def tag(cluster_cidr: str) -> str:
    """The comment prefix of one cluster's rules (``minik8s pod network 10.244.0.0/16``)."""
    return f"{JUMP_COMMENT} {cluster_cidr}"


def rules(cluster_cidr: str, service_cidr: str | None) -> list[Rule]:
    """The rules of the two chains for one cluster, in order (see the module docstring)."""
    t = tag(cluster_cidr)

    def nat(*spec: str, why: str, target: list[str]) -> Rule:
        return Rule("nat", NAT_CHAIN, (*spec, "-m", "comment", "--comment", f"{t}: {why}", "-j", *target))

    def fwd(*spec: str, why: str) -> Rule:
        return Rule("filter", FILTER_CHAIN, (*spec, "-m", "comment", "--comment", f"{t}: {why}", "-j", "ACCEPT"))

    out = [nat("-s", cluster_cidr, "-d", cluster_cidr, why="pod to pod keeps its source", target=["RETURN"])]
    if service_cidr:
        out.append(nat("-s", cluster_cidr, "-d", service_cidr, why="services are kube-proxy work",
                       target=["RETURN"]))
    out += [
        nat("-s", cluster_cidr, "-d", MULTICAST, why="multicast keeps its source", target=["RETURN"]),
        nat("-s", cluster_cidr, why="leaving the pod network", target=["MASQUERADE", "--random-fully"]),
        fwd("-s", cluster_cidr, why="from pods"),
        fwd("-d", cluster_cidr, why="to pods"),
    ]
    return out


def _tagged(line: str, cluster_cidr: str) -> bool:
    """Whether an ``iptables -S`` line carries ``cluster_cidr``'s comment."""
    return f'--comment "{tag(cluster_cidr)}: ' in line


def jump(table: str, parent: str, chain: str) -> Rule:
    """The rule in ``parent`` that sends packets into ``chain``."""
    return Rule(table, parent, ("-m", "comment", "--comment", JUMP_COMMENT, "-j", chain))


class Netfilter:
    """Programs :func:`rules` with ``iptables -w`` (:class:`~minik8s.host.iptables.Iptables`) through a
    runner.  Raises CommandFailed."""

    def __init__(self, runner: Runner) -> None:
        self.iptables = Iptables(runner)

    def _ipt(self, table: str, *args: str) -> str:
        return self.iptables.command(table, *args)

    def _exists(self, rule: Rule) -> bool:
        return self.iptables.exists(rule.table, rule.chain, rule.spec)

    def _chain_lines(self, table: str, chain: str) -> list[str] | None:
        """``iptables -S chain`` lines after the ``-N`` line; None when the chain does not exist."""
        return self.iptables.rules(table, chain)

    def _ensure_chain(self, table: str, chain: str) -> None:
        self.iptables.ensure_chain(table, chain)

    def _delete_tagged(self, table: str, chain: str, lines: list[str], cluster_cidr: str) -> int:
        """Delete the rules of ``lines`` (``-S`` order) tagged for ``cluster_cidr``, by number, last first."""
        numbers = [i + 1 for i, line in enumerate(lines) if _tagged(line, cluster_cidr)]
        for number in reversed(numbers):
            self._ipt(table, "-D", chain, str(number))
        return len(numbers)

    def _forward_parent(self) -> str:
        return "DOCKER-USER" if self._chain_lines("filter", "DOCKER-USER") is not None else "FORWARD"

    def ensure(self, cluster_cidr: str, service_cidr: str | None) -> bool:
        """Make this cluster's rules and the two jumps exactly right; returns True when anything changed."""
        changed = False
        wanted = rules(cluster_cidr, service_cidr)
        for table, chain in (("nat", NAT_CHAIN), ("filter", FILTER_CHAIN)):
            self._ensure_chain(table, chain)
            mine = [r for r in wanted if r.chain == chain]
            lines = self._chain_lines(table, chain) or []
            ours = [line for line in lines if _tagged(line, cluster_cidr)]
            if len(ours) != len(mine) or not all(self._exists(r) for r in mine):
                self._delete_tagged(table, chain, lines, cluster_cidr)
                for r in mine:
                    self._ipt(table, "-A", chain, *r.spec)
                log.info("kubelet netfilter %s/%s rules for %s written", table, chain, cluster_cidr)
                changed = True
        for j in (jump("nat", "POSTROUTING", NAT_CHAIN), jump("filter", self._forward_parent(), FILTER_CHAIN)):
            if not self._exists(j):
                self._ipt(j.table, "-I", j.chain, "1", *j.spec)
                log.info("kubelet netfilter jump %s/%s -> %s added", j.table, j.chain, j.spec[-1])
                changed = True
        return changed

    def remove(self, cluster_cidr: str) -> int:
        """Delete this cluster's rules; a chain left empty goes with its jumps.  Returns rules removed."""
        n = 0
        for table, chain, parents in (("nat", NAT_CHAIN, ("POSTROUTING",)),
                                      ("filter", FILTER_CHAIN, ("DOCKER-USER", "FORWARD"))):
            lines = self._chain_lines(table, chain)
            if lines is None:
                continue
            n += self._delete_tagged(table, chain, lines, cluster_cidr)
            if self._chain_lines(table, chain):
                continue  # another cluster's rules remain
            for parent in parents:
                j = jump(table, parent, chain)
                for _ in range(10):  # bounded: a jump added twice by hand goes too
                    if not self._exists(j):
                        break
                    self._ipt(table, "-D", parent, *j.spec)
            self._ipt(table, "-X", chain)
        return n
