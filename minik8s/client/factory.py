"""One shared informer per kind for every controller of a process (client-go's ``SharedInformerFactory``).

Controllers ask the factory for the informer of a kind instead of building their own, so a
controller-manager running the ReplicaSet, Deployment and garbage-collector controllers
lists and watches pods once, keeps one cache of them, and every controller's handlers see
the same events.  Indexers are added by name; asking twice for the same index is a no-op.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping

from minik8s.api.resourcetypes import ResourceType
from minik8s.client.informer import IndexFunc, Informer
from minik8s.client.rest import Client

log = logging.getLogger("informer")


class SharedInformerFactory:
    """Creates, shares, starts and stops informers over one :class:`Client`.

    ``namespace`` limits every informer to one namespace (None: all namespaces, what a
    cluster-wide controller-manager uses).  ``resync_period`` (seconds, None for never) makes
    each informer replay its cache to the update handlers periodically, so a controller
    re-checks every object even when nothing changes (level-triggered safety net).
    """

    def __init__(self, client: Client, namespace: str | None = None, resync_period: float | None = None) -> None:
        self.client = client
        self.namespace = namespace
        self.resync_period = resync_period
        self._informers: dict[tuple[str, str, str], Informer] = {}
        self._tasks: dict[tuple[str, str, str], asyncio.Task[None]] = {}

    @staticmethod
    def _id(rt: ResourceType) -> tuple[str, str, str]:
        return (rt.group, rt.version, rt.plural)

    def informer(self, rt: ResourceType, indexers: Mapping[str, IndexFunc] | None = None) -> Informer:
        """The shared informer of ``rt``, created on first use; ``indexers`` are added if missing.

        Cluster-scoped kinds are always watched cluster-wide.  Informers created after
        :meth:`start` are started by the next :meth:`start` call.
        """
        informer = self._informers.get(self._id(rt))
        if informer is None:
            informer = Informer(self.client, rt, self.namespace if rt.namespaced else None,
                                resync_period=self.resync_period)
            self._informers[self._id(rt)] = informer
        for name, fn in (indexers or {}).items():
            if name not in informer.indexers:
                informer.add_indexer(name, fn)
        return informer

    def for_kind(self, api_version: str, kind: str, indexers: Mapping[str, IndexFunc] | None = None) -> Informer:
        """The shared informer of ``apiVersion``/``kind`` (e.g. ``"apps/v1", "ReplicaSet"``).

        Raises NotFound when the client's registry does not know the kind.
        """
        return self.informer(self.client.kind(api_version, kind), indexers)

    def informers(self) -> list[Informer]:
        """Every informer created so far."""
        return list(self._informers.values())

    def start(self) -> None:
        """Start (on the running event loop) every informer that is not running yet."""
        loop = asyncio.get_running_loop()
        for key, informer in self._informers.items():
            task = self._tasks.get(key)
            if task is None or task.done():
                self._tasks[key] = loop.create_task(informer.run(), name=f"informer-{key[2]}")

    def stop(self, rt: ResourceType) -> None:
        """Stop and forget the informer of ``rt`` (its kind is no longer served: a CRD deleted)."""
        key = self._id(rt)
        self._informers.pop(key, None)
        task = self._tasks.pop(key, None)
        if task is not None:
            task.cancel()

    async def wait_for_cache_sync(self, timeout: float | None = None) -> bool:
        """Wait until every started informer has listed once; False after ``timeout`` seconds."""
        try:
            await asyncio.wait_for(asyncio.gather(*(i.wait_synced() for i in self._informers.values())), timeout)
        except TimeoutError:
            return False
        return True

    def has_synced(self) -> bool:
        return all(i.has_synced() for i in self._informers.values())

    async def shutdown(self) -> None:
        """Stop every informer and wait for them to end."""
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._tasks.clear()
