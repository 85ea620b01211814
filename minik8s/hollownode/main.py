"""``minik8s hollow-node``: N simulated nodes in one process (a SIMULATOR, kubemark / KWOK style)."""

from __future__ import annotations

import typer


def command(
    count: int = typer.Option(10, "--count", min=1, max=100000, help="how many hollow Nodes to simulate"),
    kubeconfig: str = typer.Option(None, help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config, "
                                              "~/.minik8s/kubeconfig)"),
    context: str = typer.Option(None, help="kubeconfig context to use"),
    name_prefix: str = typer.Option("hollow-", help="Node names are <prefix><i>, i = 0 .. count-1"),
    capacity: str = typer.Option("cpu=4,memory=16Gi,pods=110",
                                 help="capacity (= allocatable) of each Node: cpu=..,memory=..,pods=.."),
    node_lease_duration_seconds: int = typer.Option(40, min=1, help="Lease duration; renewed every quarter of it"),
    node_status_update_frequency: float = typer.Option(60.0, min=0.5, help="seconds between node status posts"),
    workers: int = typer.Option(8, min=1, help="concurrent pod status writers"),
    v: bool = typer.Option(False, "-v", help="debug logging"),
) -> None:
    """SIMULATOR: register COUNT hollow Nodes (labelled and tainted minik8s.io/hollow=true:NoSchedule)
    that renew Leases and report pods bound to them Running with IPs from their podCIDR, without
    running any container.  For scale tests of the control plane (benchmarks/density.py), not workloads."""
    import asyncio
    import signal

    from minik8s import logs
    from minik8s.api.quantity import parse_cpu, parse_memory
    from minik8s.client.rest import Client
    from minik8s.hollownode.hollow import DEFAULT_CAPACITY, HollowConfig, HollowNodes

    logs.setup("hollow-node", v)
    cap = dict(DEFAULT_CAPACITY)
    for item in filter(None, (p.strip() for p in capacity.split(","))):
        key, sep, value = item.partition("=")
        if not sep or key not in ("cpu", "memory", "pods", "ephemeral-storage"):
            raise typer.BadParameter(f"{item!r}: expected cpu=, memory=, pods= or ephemeral-storage=",
                                     param_hint="--capacity")
        try:
            if key == "cpu":
                parse_cpu(value)
            elif key == "pods":
                if int(value) < 0:
                    raise ValueError("negative")
            else:
                parse_memory(value)
        except ValueError as exc:
            raise typer.BadParameter(f"{item!r}: {exc}", param_hint="--capacity") from exc
        cap[key] = value
    config = HollowConfig(count=count, name_prefix=name_prefix, capacity=cap,
                          lease_duration=node_lease_duration_seconds,
                          status_period=node_status_update_frequency, workers=workers)

    async def main() -> None:
        async with Client.from_kubeconfig(kubeconfig, context) as client:
            stop = asyncio.Event()
            for sig in (signal.SIGINT, signal.SIGTERM):
                asyncio.get_running_loop().add_signal_handler(sig, stop.set)
            await HollowNodes(client, config).run(stop)

    asyncio.run(main())
