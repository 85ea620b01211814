"""The controller-manager: run the selected controllers over one set of shared informers.

Like kube-controller-manager: ``--controllers`` takes a comma list where ``*`` means every
controller, ``name`` enables one and ``-name`` disables one (default ``*``).  All
controllers share one :class:`~minik8s.client.factory.SharedInformerFactory`, so each kind
is listed and watched once.  On start every controller resyncs from the API (informers
list first), so restarting the controller-manager never duplicates work.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from minik8s.client.factory import SharedInformerFactory
from minik8s.client.rest import Client
from minik8s.controllers.base import Controller
from minik8s.controllers.deployment import DeploymentController
from minik8s.controllers.garbagecollector import GarbageCollector
from minik8s.controllers.replicaset import ReplicaSetController

log = logging.getLogger("controller-manager")

ControllerFactory = Callable[[Client, SharedInformerFactory], Controller]

#: Controller name (as ``--controllers`` spells it) → constructor.
CONTROLLERS: dict[str, ControllerFactory] = {
    "replicaset": ReplicaSetController,
    "deployment": DeploymentController,
    "garbagecollector": GarbageCollector,
}
#: Accepted aliases (Kubernetes' newer names).
ALIASES = {"replicaset-controller": "replicaset", "deployment-controller": "deployment",
           "garbage-collector-controller": "garbagecollector", "garbage-collector": "garbagecollector"}


def select_controllers(spec: str | None) -> list[str]:
    """Names enabled by a ``--controllers`` value (``"*"``, ``"replicaset,deployment"``, ``"*,-deployment"``).

    Raises ValueError for an unknown name.
    """
    items = [s.strip() for s in (spec or "*").split(",") if s.strip()] or ["*"]
    enabled: list[str] = []
    star = "*" in items
    disabled: set[str] = set()
    for item in items:
        if item == "*":
            continue
        negate = item.startswith("-")
        name = ALIASES.get(item.lstrip("-"), item.lstrip("-"))
        if name not in CONTROLLERS:
            raise ValueError(f'unknown controller "{item.lstrip("-")}" (known: {", ".join(CONTROLLERS)})')
        if negate:
            disabled.add(name)
        elif name not in enabled:
            enabled.append(name)
    if star:
        enabled = [n for n in CONTROLLERS if n not in disabled]
    return [n for n in enabled if n not in disabled]


class ControllerManager:
    """Builds and runs controllers; ``await run()`` until cancelled, then stops them cleanly.

    ``namespace`` limits every informer to one namespace (tests; None: the whole cluster).
    ``workers`` sync loops run per controller.  ``resync_period`` (seconds or None) replays
    the caches periodically.
    """

    def __init__(self, client: Client, controllers: list[str] | None = None, workers: int = 5,
                 namespace: str | None = None, resync_period: float | None = 300.0) -> None:
        self.client = client
        self.names = controllers if controllers is not None else list(CONTROLLERS)
        self.workers = workers
        self.factory = SharedInformerFactory(client, namespace=namespace, resync_period=resync_period)
        self.controllers: dict[str, Controller] = {}
        for name in self.names:
            ctor = CONTROLLERS[name]
            self.controllers[name] = ctor(client, self.factory)
        self.started = asyncio.Event()

    async def run(self) -> None:
        """Start informers, wait for their first lists, run every controller until cancelled."""
        self.factory.start()
        tasks: list[asyncio.Task[None]] = []
        try:
            while not await self.factory.wait_for_cache_sync(timeout=30):
                log.warning("controller-manager still waiting for informer caches to sync")
            log.info("controller-manager caches synced; running %s", ",".join(self.controllers))
            loop = asyncio.get_running_loop()
            tasks = [loop.create_task(c.run(self.workers), name=name) for name, c in self.controllers.items()]
            self.started.set()
            await asyncio.gather(*tasks)
        finally:
            for controller in self.controllers.values():
                controller.shutdown()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await self.factory.shutdown()

