"""``minik8s scheduler``: place pending pods on nodes (flags named like kube-scheduler's)."""

from __future__ import annotations

import typer


def command(
    kubeconfig: str = typer.Option(None, help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config, "
                                              "~/.minik8s/kubeconfig)"),
    context: str = typer.Option(None, help="kubeconfig context to use"),
    scheduler_name: str = typer.Option("default-scheduler", help="schedule the pods whose "
                                                                 "spec.schedulerName is this"),
    leader_elect: bool = typer.Option(True, "--leader-elect/--no-leader-elect",
                                      help="run only while holding the leader Lease (for several copies)"),
    leader_elect_lease_duration: str = typer.Option(
        "15s", "--leader-elect-lease-duration",
        help="how long followers wait after the leader's last renewal before taking over (duration)"),
    leader_elect_renew_deadline: str = typer.Option(
        "10s", "--leader-elect-renew-deadline",
        help="how long the leader retries renewing before it stops leading (duration)"),
    leader_elect_retry_period: str = typer.Option(
        "2s", "--leader-elect-retry-period", help="how often candidates try to acquire or renew (duration)"),
    leader_elect_resource_namespace: str = typer.Option("kube-system", "--leader-elect-resource-namespace",
                                                        help="namespace of the leader Lease"),
    leader_elect_resource_name: str = typer.Option("kube-scheduler", "--leader-elect-resource-name",
                                                   help="name of the leader Lease"),
    v: bool = typer.Option(False, "-v", help="debug logging"),
) -> None:
    """Watch pending pods and bind each to the best node (kube-scheduler's framework plugins).

    With ``--leader-elect`` (the default) only the holder of Lease ``kube-system/kube-scheduler``
    schedules; a leader that loses the lease exits (code 1) to be restarted as a candidate."""
    import asyncio
    import logging
    import signal

    from minik8s import logs
    from minik8s.client.leaderelection import LeadershipLost, config_from_flags, run_elected
    from minik8s.client.rest import Client
    from minik8s.scheduler.scheduler import Scheduler

    logs.setup("scheduler", v)
    log = logging.getLogger("scheduler")
    election = None
    if leader_elect:
        try:
            election = config_from_flags(leader_elect_resource_name, leader_elect_resource_namespace,
                                         leader_elect_lease_duration, leader_elect_renew_deadline,
                                         leader_elect_retry_period)
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="--leader-elect-*") from exc

    async def main() -> None:
        async with Client.from_kubeconfig(kubeconfig, context) as client:
            scheduler = Scheduler(client, scheduler_name)
            task = asyncio.get_running_loop().create_task(run_elected(client, election, scheduler.run,
                                                                      "scheduler"))
            for sig in (signal.SIGINT, signal.SIGTERM):
                asyncio.get_running_loop().add_signal_handler(sig, task.cancel)
            log.info("connecting scheduler=%s apiserver=%s", scheduler_name, client.config.server)
            try:
                await task
            except asyncio.CancelledError:
                log.info("stopping scheduler=%s scheduled=%d", scheduler_name, scheduler.stats["scheduled"])
            except LeadershipLost as exc:
                log.error("leaderelection lost: %s", exc)
                raise SystemExit(1) from exc

    asyncio.run(main())
