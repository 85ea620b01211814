"""Flags of the shared client machinery that several components take, named as Kubernetes names them.

The ``--leader-elect*`` flags of kube-scheduler and kube-controller-manager (client-go's
``LeaderElectionConfiguration``): declare them with these options and turn their values into a
:class:`~minik8s.client.leaderelection.LeaderElectionConfig` with :func:`election_config`.

:class:`GoBoolFlagsCommand`: the command class of the components, whose ``--x/--no-x`` boolean
flags also take Go's ``--x=true`` / ``--x=false``, as the Kubernetes components' flags do.
"""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperCommand, TyperOption

from minik8s.client.leaderelection import LeaderElectionConfig, config_from_flags

LEADER_ELECT = typer.Option(True, "--leader-elect/--no-leader-elect",
                            help="run only while holding the leader Lease (for several copies)")
LEASE_DURATION = typer.Option(
    "15s", "--leader-elect-lease-duration",
    help="how long followers wait after the leader's last renewal before taking over (duration)")
RENEW_DEADLINE = typer.Option(
    "10s", "--leader-elect-renew-deadline",
    help="how long the leader retries renewing before it stops leading (duration)")
RETRY_PERIOD = typer.Option("2s", "--leader-elect-retry-period",
                            help="how often candidates try to acquire or renew (duration)")
RESOURCE_NAMESPACE = typer.Option("kube-system", "--leader-elect-resource-namespace",
                                  help="namespace of the leader Lease")


def resource_name(default: str) -> Any:
    """``--leader-elect-resource-name``, defaulting to the component's Lease (``kube-scheduler``)."""
    return typer.Option(default, "--leader-elect-resource-name", help="name of the leader Lease")


def election_config(leader_elect: bool, name: str, namespace: str, lease_duration: str, renew_deadline: str,
                    retry_period: str) -> LeaderElectionConfig | None:
    """The election the flags ask for (None with ``--no-leader-elect``); a bad value is a usage
    error naming its flag (exit code 2)."""
    if not leader_elect:
        return None
    try:
        return config_from_flags(name, namespace, lease_duration, renew_deadline, retry_period)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--leader-elect-*") from exc


#: the spellings Go's strconv.ParseBool (and so a Kubernetes component's boolean flag) accepts
GO_TRUE = frozenset({"1", "t", "T", "true", "TRUE", "True"})
GO_FALSE = frozenset({"0", "f", "F", "false", "FALSE", "False"})


class GoBoolFlagsCommand(TyperCommand):
    """A command whose boolean flags declared ``--x/--no-x`` also take a value, as a Kubernetes
    component's (Go pflag) boolean flags do: ``--x=true`` is ``--x``, ``--x=false`` is ``--no-x``
    (any spelling of Go's ``strconv.ParseBool``: 1/t/true/TRUE/True, 0/f/false/FALSE/False).
    Another value is a usage error naming the flag (exit code 2).  Arguments after ``--`` are
    left alone."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:  # ctx: typer's (vendored) click Context
        negations = {name: param.secondary_opts[0] for param in self.params
                     if isinstance(param, TyperOption) and param.is_bool_flag and param.secondary_opts
                     for name in param.opts}
        out: list[str] = []
        for i, arg in enumerate(args):
            if arg == "--":
                out += args[i:]
                break
            name, eq, value = arg.partition("=")
            if not eq or name not in negations:
                out.append(arg)
            elif value in GO_TRUE:
                out.append(name)
            elif value in GO_FALSE:
                out.append(negations[name])
            else:
                raise typer.BadParameter(f"{value!r} is not a boolean (true or false)", ctx=ctx, param_hint=f"'{name}'")
        return super().parse_args(ctx, out)
