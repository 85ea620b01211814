"""``minik8s controller-manager``: run the ReplicaSet, Deployment and garbage-collector controllers.

Flags are named like kube-controller-manager's (``--kubeconfig``, ``--controllers``,
``--concurrent-workers`` standing in for the per-controller ``--concurrent-*-syncs``,
``--min-resync-period``).
"""

from __future__ import annotations

import typer


def command(
    kubeconfig: str = typer.Option(None, help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config, "
                                              "~/.minik8s/kubeconfig)"),
    context: str = typer.Option(None, help="kubeconfig context to use"),
    controllers: str = typer.Option("*", help="comma list of controllers to run: '*' for all, 'name' to "
                                              "enable, '-name' to disable (replicaset, deployment, "
                                              "garbagecollector)"),
    concurrent_workers: int = typer.Option(5, "--concurrent-workers", min=1,
                                           help="sync loops per controller"),
    min_resync_period: float = typer.Option(300.0, "--min-resync-period", min=0,
                                            help="seconds between informer resyncs (0: never)"),
    v: bool = typer.Option(False, "-v", help="debug logging"),
) -> None:
    """Run the controllers that reconcile ReplicaSets, Deployments and owner references."""
    import asyncio
    import logging
    import signal

    from minik8s import logging as mlog
    from minik8s.client.rest import Client
    from minik8s.controllers.manager import ControllerManager, select_controllers

    mlog.setup("controller-manager", v)
    log = logging.getLogger("controller-manager")
    try:
        names = select_controllers(controllers)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--controllers") from exc

    async def main() -> None:
        async with Client.from_kubeconfig(kubeconfig, context) as client:
            manager = ControllerManager(client, names, workers=concurrent_workers,
                                        resync_period=min_resync_period or None)
            task = asyncio.get_running_loop().create_task(manager.run())
            for sig in (signal.SIGINT, signal.SIGTERM):
                asyncio.get_running_loop().add_signal_handler(sig, task.cancel)
            log.info("controller-manager controllers=%s apiserver=%s", ",".join(names), client.config.server)
            try:
                await task
            except asyncio.CancelledError:
                log.info("controller-manager stopping")

    asyncio.run(main())
