"""``minik8s scheduler``: place pending pods on nodes (flags named like kube-scheduler's)."""

from __future__ import annotations

import typer


def command(
    kubeconfig: str = typer.Option(None, help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config, "
                                              "~/.minik8s/kubeconfig)"),
    context: str = typer.Option(None, help="kubeconfig context to use"),
    scheduler_name: str = typer.Option("default-scheduler", help="schedule the pods whose "
                                                                 "spec.schedulerName is this"),
    v: bool = typer.Option(False, "-v", help="debug logging"),
) -> None:
    """Watch pending pods and bind each to the best node (kube-scheduler's framework plugins)."""
    import asyncio
    import logging
    import signal

    from minik8s import logs
    from minik8s.client.rest import Client
    from minik8s.scheduler.scheduler import Scheduler

    logs.setup("scheduler", v)
    log = logging.getLogger("scheduler")

    async def main() -> None:
        async with Client.from_kubeconfig(kubeconfig, context) as client:
            scheduler = Scheduler(client, scheduler_name)
            task = asyncio.get_running_loop().create_task(scheduler.run())
            for sig in (signal.SIGINT, signal.SIGTERM):
                asyncio.get_running_loop().add_signal_handler(sig, task.cancel)
            log.info("connecting scheduler=%s apiserver=%s", scheduler_name, client.config.server)
            try:
                await task
            except asyncio.CancelledError:
                log.info("stopping scheduler=%s scheduled=%d", scheduler_name, scheduler.stats["scheduled"])

    asyncio.run(main())
