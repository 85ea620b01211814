"""The shared informer: a local cache of one kind, kept current by list + watch.

Kubernetes' client-go reflector/informer pattern: list (remember the list's
resourceVersion), then watch from it; on 410 Gone or a broken stream, relist
and replay the differences, so handlers never miss the final state.  Handlers
run on the event loop and should only enqueue keys (docs/architecture.md: level-triggered
controllers).  Indexers map an object to index values, e.g. pods by node.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass

from minik8s.api import errors
from minik8s.api.base import Obj, ObjList, object_key
from minik8s.api.resourcetypes import ResourceType
from minik8s.client.rest import Client

log = logging.getLogger("informer")
KeyList = list[str]
HandlerList = list["Handler"]
IndexFunc = Callable[[Obj], list[str]]


@dataclass
class Handler:
    on_add: Callable[[Obj], None] | None = None
    on_update: Callable[[Obj, Obj], None] | None = None
    on_delete: Callable[[Obj], None] | None = None


def pods_by_node(pod: Obj) -> list[str]:
    """Index function: the node a pod is bound to (``spec.nodeName``)."""
    node = (pod.get("spec") or {}).get("nodeName")
    return [node] if node else []


#: The name of the index :func:`by_namespace` fills (client-go's ``cache.NamespaceIndex``).
NAMESPACE_INDEX = "namespace"


def by_namespace(obj: Obj) -> list[str]:
    """Index function: the object's namespace, ``""`` for cluster-scoped objects
    (client-go's ``MetaNamespaceIndexFunc``)."""
    return [(obj.get("metadata") or {}).get("namespace") or ""]


class Informer:
    """Cache of ``rt`` objects (optionally one namespace / selectors), with event handlers.

    ``await informer.run()`` runs forever; ``await informer.wait_synced()`` returns once the
    first list is in the cache.  ``resync_period`` (seconds) replays every cached object as an
    update so controllers re-check the world even without changes.
    """

    def __init__(self, client: Client, rt: ResourceType, namespace: str | None = None, *,
                 label_selector: str | None = None, field_selector: str | None = None,
                 resync_period: float | None = None, indexers: dict[str, IndexFunc] | None = None) -> None:
        self.client = client
        self.rt = rt
        self.namespace = namespace
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.resync_period = resync_period
        self.indexers: dict[str, IndexFunc] = dict(indexers or {})
        self._items: dict[str, Obj] = {}
        self._indices: dict[str, dict[str, set[str]]] = {name: {} for name in self.indexers}
        self._handlers: HandlerList = []
        self._synced = asyncio.Event()
        self.resource_version: str | None = None
        self.relists = 0

    # ------------------------------------------------------------------ reading the cache
    def get(self, key: str) -> Obj | None:
        """The cached object for ``namespace/name`` (or ``name``), or None."""
        return self._items.get(key)

    def list(self) -> ObjList:
        return list(self._items.values())

    def keys(self) -> KeyList:
        return list(self._items)

    def by_index(self, index: str, value: str) -> ObjList:
        """Objects whose ``index`` function returned ``value``."""
        return [self._items[k] for k in self._indices[index].get(value, ()) if k in self._items]

    def has_synced(self) -> bool:
        return self._synced.is_set()

    async def wait_synced(self, timeout: float | None = None) -> None:
        await asyncio.wait_for(self._synced.wait(), timeout)

    def add_handler(self, on_add: Callable[[Obj], None] | None = None,
                    on_update: Callable[[Obj, Obj], None] | None = None,
                    on_delete: Callable[[Obj], None] | None = None) -> None:
        """Register handlers; objects already cached are replayed to ``on_add``."""
        h = Handler(on_add, on_update, on_delete)
        self._handlers.append(h)
        if on_add:
            for obj in list(self._items.values()):
                on_add(obj)

    def add_indexer(self, name: str, fn: IndexFunc) -> None:
        self.indexers[name] = fn
        self._indices[name] = {}
        for key, obj in self._items.items():
            self._index(key, obj)

    # ------------------------------------------------------------------ cache upkeep
    def _index(self, key: str, obj: Obj) -> None:
        for name, fn in self.indexers.items():
            for value in fn(obj):
                self._indices[name].setdefault(value, set()).add(key)

    def _unindex(self, key: str, obj: Obj) -> None:
        for name, fn in self.indexers.items():
            for value in fn(obj):
                keys = self._indices[name].get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del self._indices[name][value]

    def _dispatch(self, kind: str, obj: Obj, old: Obj | None = None) -> None:
        for h in self._handlers:
            try:
                if kind == "add" and h.on_add:
                    h.on_add(obj)
                elif kind == "update" and h.on_update:
                    h.on_update(old or obj, obj)
                elif kind == "delete" and h.on_delete:
                    h.on_delete(obj)
            except Exception:  # noqa: BLE001 - one bad handler must not stop the informer
                log.exception("informer %s handler failed", self.rt.plural)

    def _upsert(self, obj: Obj) -> None:
        key = object_key(obj)
        old = self._items.get(key)
        if old is not None:
            self._unindex(key, old)
        self._items[key] = obj
        self._index(key, obj)
        self._dispatch("update" if old is not None else "add", obj, old)

    def _remove(self, obj: Obj) -> None:
        key = object_key(obj)
        old = self._items.pop(key, None)
        if old is not None:
            self._unindex(key, old)
        self._dispatch("delete", obj if old is None else obj)

    def _replace(self, items: ObjList) -> None:
        fresh = {object_key(o): o for o in items}
        for key in list(self._items):
            if key not in fresh:
                self._remove(self._items[key])
        for key, obj in fresh.items():
            old = self._items.get(key)
            if old is not None and old.get("metadata", {}).get("resourceVersion") == \
                    obj.get("metadata", {}).get("resourceVersion"):
                continue
            self._upsert(obj)

    # ------------------------------------------------------------------ list + watch
    async def _list(self) -> None:
        listed = await self.client.list_all(self.rt, self.namespace, label_selector=self.label_selector,
                                            field_selector=self.field_selector)
        self._replace(listed.get("items") or [])
        self.resource_version = (listed.get("metadata") or {}).get("resourceVersion")
        self.relists += 1
        self._synced.set()

    async def _watch(self) -> None:
        async for ev in self.client.watch(self.rt, self.namespace, resource_version=self.resource_version,
                                          label_selector=self.label_selector,
                                          field_selector=self.field_selector, timeout_seconds=300):
            etype, obj = ev.get("type"), ev.get("object") or {}
            if etype == "ERROR":
                code = obj.get("code")
                if code == 410:
                    raise errors.Gone(obj.get("message") or "watch expired")
                raise errors.from_status(code or 500, obj)
            rv = (obj.get("metadata") or {}).get("resourceVersion")
            if rv:
                self.resource_version = rv
            if etype in ("ADDED", "MODIFIED"):
                self._upsert(obj)
            elif etype == "DELETED":
                self._remove(obj)

    async def run(self) -> None:
        """List, then watch forever; relist on 410 or errors with back-off (max 30 s)."""
        delay = 0.2
        need_list = True
        resync_task = None
        if self.resync_period:
            resync_task = asyncio.get_running_loop().create_task(self._resync_loop())
        try:
            while True:
                try:
                    if need_list:
                        await self._list()
                        need_list = False
                    await self._watch()
                    delay = 0.2  # the server closed a healthy watch (timeout): watch again from rv
                except asyncio.CancelledError:
                    raise
                except errors.Gone:
                    log.info("informer %s: resourceVersion %s expired, relisting", self.rt.plural,
                             self.resource_version)
                    need_list = True
                except Exception as exc:  # noqa: BLE001 - the apiserver may be away; keep the cache
                    log.warning("informer %s: %s; retrying in %.1fs", self.rt.plural, exc, delay)
                    need_list = True
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, 30.0)
        finally:
            if resync_task:
                resync_task.cancel()

    async def _resync_loop(self) -> None:
        assert self.resync_period
        while True:
            await asyncio.sleep(self.resync_period)
            for obj in list(self._items.values()):
                self._dispatch("update", obj, obj)
