"""iptables programming through a :data:`~minik8s.host.commands.Runner`.

Two ways, both waiting at most 5 s for the xtables lock (``-w 5``) so that agents sharing a
host never fail on each other's writes:

* rule by rule in one table (``iptables -t TABLE ...``): check, append, insert, delete,
  list a chain (``-S``), create and delete chains — the kubelet's few pod-network rules;
* whole tables: ``iptables-save -t TABLE`` to read, one ``iptables-restore --noflush`` to
  write many chains atomically — kube-proxy's Service chains.
"""

from __future__ import annotations

from minik8s.host.commands import Runner, run
from minik8s.host.errors import CommandFailed

LOCK_WAIT_SECONDS = "5"


class Iptables:
    """The host's iptables (IPv4), through ``runner``.  Every method raises CommandFailed
    when iptables fails, except where it says otherwise."""

    def __init__(self, runner: Runner = run) -> None:
        self.runner = runner

    # ------------------------------------------------------------ rule by rule
    def command(self, table: str, *args: str) -> str:
        """``iptables -w 5 -t TABLE ARGS...``; returns its output."""
        return self.runner(["iptables", "-w", LOCK_WAIT_SECONDS, "-t", table, *args])

    def exists(self, table: str, chain: str, spec: tuple[str, ...] | list[str]) -> bool:
        """Whether ``chain`` has the rule ``spec`` (``-C``; False also when the chain is missing)."""
        try:
            self.command(table, "-C", chain, *spec)
            return True
        except CommandFailed:
            return False

    def rules(self, table: str, chain: str) -> list[str] | None:
        """The chain's ``-A`` lines as ``iptables -S`` prints them; None when the chain does not exist."""
        try:
            out = self.command(table, "-S", chain)
        except CommandFailed:
            return None
        return [line for line in out.splitlines() if line.startswith("-A ")]

    def ensure_chain(self, table: str, chain: str) -> bool:
        """Create ``chain`` unless it exists; returns True when it was created."""
        if self.rules(table, chain) is not None:
            return False
        self.command(table, "-N", chain)
        return True

    # ------------------------------------------------------------ whole tables
    def save(self, table: str) -> str:
        """``iptables-save -t TABLE``: the table's chains and rules as restore text."""
        return self.runner(["iptables-save", "-t", table])

    def restore(self, payload: str) -> None:
        """One ``iptables-restore --noflush`` of ``payload``: each table in it is written atomically,
        and chains not declared in it are left alone."""
        self.runner(["iptables-restore", "-w", LOCK_WAIT_SECONDS, "--noflush"], stdin=payload)
