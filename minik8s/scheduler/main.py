"""``minik8s scheduler``: place pending pods on nodes (flags named like kube-scheduler's)."""

from __future__ import annotations

import typer

from minik8s.client import flags


def command(
    kubeconfig: str = typer.Option(None, help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config, "
                                              "~/.minik8s/kubeconfig)"),
    context: str = typer.Option(None, help="kubeconfig context to use"),
    scheduler_name: str = typer.Option("default-scheduler", help="schedule the pods whose "
                                                                 "spec.schedulerName is this"),
    leader_elect: bool = flags.LEADER_ELECT,
    leader_elect_lease_duration: str = flags.LEASE_DURATION,
    leader_elect_renew_deadline: str = flags.RENEW_DEADLINE,
    leader_elect_retry_period: str = flags.RETRY_PERIOD,
    leader_elect_resource_namespace: str = flags.RESOURCE_NAMESPACE,
    leader_elect_resource_name: str = flags.resource_name("kube-scheduler"),
    v: bool = typer.Option(False, "-v", help="debug logging"),
) -> None:
    """Watch pending pods and bind each to the best node (kube-scheduler's framework plugins).

    With ``--leader-elect`` (the default) only the holder of Lease ``kube-system/kube-scheduler``
    schedules; a leader that loses the lease exits (code 1) to be restarted as a candidate."""
    import asyncio
    import logging
    import signal

    from minik8s import logs
    from minik8s.client.leaderelection import LeadershipLost, run_elected
    from minik8s.client.rest import Client
    from minik8s.scheduler.scheduler import Scheduler

    logs.setup("scheduler", v)
    log = logging.getLogger("scheduler")
    election = flags.election_config(leader_elect, leader_elect_resource_name, leader_elect_resource_namespace,
                                     leader_elect_lease_duration, leader_elect_renew_deadline,
                                     leader_elect_retry_period)

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
