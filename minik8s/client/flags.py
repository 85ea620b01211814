"""Flags of the shared client machinery that several components take, named as Kubernetes names them.

The ``--leader-elect*`` flags of kube-scheduler and kube-controller-manager (client-go's
``LeaderElectionConfiguration``): declare them with these options and turn their values into a
:class:`~minik8s.client.leaderelection.LeaderElectionConfig` with :func:`election_config`.
"""

from __future__ import annotations

from typing import Any

import typer

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
