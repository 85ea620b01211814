"""The apiserver's watch cache: one etcd watch per resource feeding every client watch of it.

kube-apiserver's ``Cacher``/``watchCache``, in small:

- **One etcd watch per resource** (storage prefix such as ``/registry/pods/``).  A
  :class:`ResourceCache` lists the prefix once, then watches it from that revision; it keeps the
  current objects (``key → object``) and a **sliding window** of recent events.  Every client
  watch of the resource is a :class:`CacheWatcher` fed from it: no client watch opens its own.
- **Window**: at least ``capacity`` events (kube-apiserver's ``--default-watch-cache-size``,
  100), and without a fixed size also every event younger than :data:`EVENT_FRESH_SECONDS`
  (75 s, kube-apiserver's ``eventFreshDuration``) up to :data:`UPPER_CAPACITY` (100 × 1024), as
  kube-apiserver's dynamic sizing.  A watch may start from any resourceVersion not older than the
  window's start; an older one is answered 410 Gone ``too old resource version: RV (OLDEST)``
  and the client relists.  A resourceVersion etcd has compacted is refused the same way, so a
  watch never resumes from history etcd no longer holds (kube-apiserver would serve it from the
  window; minik8s keeps the behaviour clients had before the cache).
- **Consistent lists from the cache** (kube-apiserver's ConsistentListFromCache, KEP-2340): a
  list without a resourceVersion must reflect every write done before it.  Instead of reading
  every object from etcd, :meth:`ResourceCache.fresh_revision` asks etcd for its current
  revision together with how many keys the prefix has and the newest revision at which one of
  them was written since the cache's revision (keys only, no values).  Once the cache has seen
  that write and holds as many objects, it holds etcd's current state (kube-apiserver gets the
  same answer from etcd's watch progress notifications, which the etcd client used here cannot
  request); until then the request waits for the cache's etcd watch (at most
  :data:`CONSISTENT_READ_WAIT_SECONDS`, then the list is read from etcd, as kube-apiserver falls
  back).  Lists with ``limit`` or ``continue`` still page through etcd (as in Kubernetes 1.32).
- **Selectors in the cache**: each watcher's namespace, label and field selectors are applied
  when an event is dispatched (an object entering the selection is ADDED, leaving it DELETED),
  so a watcher only queues what it will send.
- **Slow watchers**: a watcher's queue holds at most :data:`WATCHER_BUFFER` live events beyond
  the ones it started with; a watcher that falls further behind is closed (its stream ends, as
  kube-apiserver's "forcing watcher close due to unresponsiveness") and counted in
  ``apiserver_terminated_watchers_total``: the client rewatches from its last resourceVersion.
  Dispatch never waits on a watcher.
- **Restarts**: a broken etcd watch (etcd restarted or unreachable) is reopened from the last
  revision seen, with backoff, keeping the window and the watchers (nothing is missed: etcd
  replays from that revision).  When etcd no longer has that revision (compacted) the cache
  relists: the window restarts at the new list's revision and every watcher is closed, so
  clients rewatch and, from an older resourceVersion, get 410 and relist.  An apiserver restart
  starts with empty caches: clients' watches from before it get 410 and relist.
- **Created at start for every kind the registry has** (:meth:`Cacher.start`, as kube-apiserver
  does), and ``/readyz`` waits for their first lists: a client's first list (from etcd) is then
  never older than the window, so its watch is served instead of answered 410.  A kind added at
  run time (a CustomResourceDefinition) gets its cache on the first request that needs it
  (:meth:`Cacher.get`; call it when the kind starts being served to close the short window in
  which a watch from an earlier list would get 410).  :meth:`Cacher.drop` stops one (a kind no
  longer served).  While a cache cannot list (etcd down, a value it cannot decrypt) requests
  are served from etcd directly, as before the cache.

Only the apiserver uses this module; events and objects are shared between watchers and must
not be mutated by readers.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from minik8s.api import errors
from minik8s.api.encoding import encode_json
from minik8s.apiserver.storage import Store, WatchEvent

log = logging.getLogger("apiserver.cacher")

Obj = dict[str, Any]

#: Events the window keeps at least (kube-apiserver's ``--default-watch-cache-size`` default).
DEFAULT_CAPACITY = 100
#: The most events a dynamically sized window keeps (kube-apiserver's upper bound, 100 × 1024).
UPPER_CAPACITY = 100 * 1024
#: Seconds an event stays in a dynamically sized window (kube-apiserver's ``eventFreshDuration``).
EVENT_FRESH_SECONDS = 75.0
#: Live events a watcher may have queued and unsent before it is closed as too slow.
WATCHER_BUFFER = 1000
#: Seconds a request waits for a new cache's first list before going to etcd directly.
READY_WAIT_SECONDS = 5.0
#: Seconds a consistent list waits for the cache to reach etcd's revision before reading etcd.
CONSISTENT_READ_WAIT_SECONDS = 3.0
#: Longest pause between attempts to list or watch etcd again (seconds).
MAX_BACKOFF_SECONDS = 2.0


class SharedEvent(dict[str, Any]):
    """A ``{"type", "object"}`` event sent to many watchers: :meth:`encoded` serialises it once
    for all of them (kube-apiserver's ``cachingObject``)."""

    __slots__ = ("_encoded",)

    def encoded(self) -> bytes:
        """The event as one line of JSON (newline included), computed on first use."""
        try:
            return self._encoded
        except AttributeError:
            self._encoded: bytes = encode_json(self)
            return self._encoded


def object_key(obj: Obj) -> str:
    """``namespace/name`` (``name`` for cluster-scoped objects): the cache's key of ``obj``."""
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace")
    return f"{ns}/{meta.get('name')}" if ns else str(meta.get("name"))


class CacheWatcher:
    """One client watch fed by a :class:`ResourceCache`.

    ``namespace``: only objects there (None: all); ``matches``: the label/field selection;
    ``start``: events with a larger revision are sent.  Iterate :meth:`events` for
    ``{"type", "object"}`` dicts; an ERROR event or the end of the iteration closes it.
    """

    def __init__(self, cache: ResourceCache, namespace: str | None, matches: Callable[[Obj], bool],
                 start: int, buffer: int) -> None:
        self.cache = cache
        self.namespace = namespace
        self.matches = matches
        self.start = start
        self.buffer = buffer
        self.queue: collections.deque[Obj | None] = collections.deque()
        self.wakeup = asyncio.Event()
        self.closed = False

    def _selected(self, obj: Obj | None) -> bool:
        if obj is None:
            return False
        if self.namespace is not None and (obj.get("metadata") or {}).get("namespace") != self.namespace:
            return False
        return self.matches(obj)

    def convert(self, ev: WatchEvent, shared: dict[str, SharedEvent] | None = None) -> Obj | None:
        """What this watcher sends for ``ev`` (None: nothing): selection changes become ADDED/DELETED.
        ``shared``: the events already made for ``ev`` by type, reused (and added to)."""
        if ev.revision <= self.start:
            return None
        was = self._selected(ev.prev)
        if ev.type == "DELETED":
            etype = "DELETED" if was else None
        elif self._selected(ev.object):
            etype = "MODIFIED" if was else "ADDED"
        else:
            etype = "DELETED" if was else None
        if etype is None:
            return None
        if shared is None:
            return SharedEvent(type=etype, object=ev.object)
        out = shared.get(etype)
        if out is None:
            out = shared[etype] = SharedEvent(type=etype, object=ev.object)
        return out

    def offer(self, ev: WatchEvent, shared: dict[str, SharedEvent] | None = None) -> bool:
        """Queue ``ev`` if selected; False when the watcher is too far behind (then it is closed)."""
        out = self.convert(ev, shared)
        if out is None:
            return True
        if len(self.queue) >= self.buffer:
            return False
        self.queue.append(out)
        self.wakeup.set()
        return True

    def close(self, final: Obj | None = None) -> None:
        """End the stream (after ``final``, e.g. an ERROR event, when given)."""
        if self.closed:
            return
        self.closed = True
        if final is not None:
            self.queue.append(final)
        self.queue.append(None)
        self.wakeup.set()
        self.cache.watchers.discard(self)

    async def next(self, timeout: float | None) -> Obj | None:
        """The next event; None when closed; raises TimeoutError after ``timeout`` seconds without one."""
        while not self.queue:
            self.wakeup.clear()
            await asyncio.wait_for(self.wakeup.wait(), timeout)
        return self.queue.popleft()


class ResourceCache:
    """The cache of one storage prefix (all namespaces): objects, window, watchers, one etcd watch.

    ``capacity``: a fixed window size; None sizes it dynamically (module docstring).
    """

    def __init__(self, store: Store, prefix: str, resource: str, capacity: int | None = None,
                 buffer: int = WATCHER_BUFFER) -> None:
        self.store = store
        self.prefix = prefix
        self.resource = resource
        self.fixed = capacity is not None
        self.capacity = capacity if capacity is not None else DEFAULT_CAPACITY
        self.buffer = buffer
        self.objects: dict[str, Obj] = {}
        self.window: collections.deque[tuple[WatchEvent, float]] = collections.deque()
        #: the newest revision the cache reflects
        self.rv = 0
        #: watches may start from this revision or later
        self.oldest = 0
        self.watchers: set[CacheWatcher] = set()
        self.ready = asyncio.Event()
        self.error: errors.APIError | None = None
        self.attempted = asyncio.Event()  # the first list has succeeded or failed
        # counters for /metrics
        self.etcd_watches = 0
        self.initializations = 0
        self.events_received = 0
        self.terminated = 0
        self.lists = 0
        #: consistent lists: served from the cache at once / after waiting for it / read from etcd
        self.consistent_reads = {"fresh": 0, "waited": 0, "fallback": 0}
        self._task: asyncio.Task[None] | None = None
        #: (condition, future) of consistent lists waiting for the cache to catch up
        self._waiters: list[tuple[Callable[[], bool], asyncio.Future[None]]] = []

    # ------------------------------------------------------------ feeding
    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        """Stop feeding; every watcher is closed and consistent lists waiting on it read etcd."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
        self.ready.clear()
        self._terminate_all()
        for _, fut in self._waiters:
            if not fut.done():
                fut.set_result(None)
        self._waiters = []

    async def _run(self) -> None:
        backoff = 0.1
        while True:
            try:
                items, revision, _ = await self.store.list(self.prefix)
            except errors.APIError as exc:
                self.error = exc
                self.ready.clear()
                self.attempted.set()
                log.warning("watch cache %s: list failed: %s", self.resource, exc.message)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_SECONDS)
                continue
            self._replace(items, revision)
            backoff = 0.1
            relist = await self._watch_loop()
            if relist:
                continue

    async def _watch_loop(self) -> bool:
        """Feed from etcd until a relist is needed (True)."""
        backoff = 0.1
        while True:
            try:
                source = await self.store.watch(self.prefix, self.rv)
                self.etcd_watches += 1
                backoff = 0.1
                async for ev in source:
                    self._apply(ev)
                raise errors.ServiceUnavailable("etcd watch ended")
            except errors.Gone:
                log.info("watch cache %s: revision %d compacted: relisting", self.resource, self.rv)
                return True
            except errors.InternalError as exc:  # a value that cannot be read: watchers see why, then relist
                log.error("watch cache %s: %s", self.resource, exc.message)
                self._terminate_all(final={"type": "ERROR", "object": exc.to_status()})
                self.ready.clear()
                self.error = exc
                await asyncio.sleep(backoff)
                return True
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - etcd away: rewatch from the last revision
                log.warning("watch cache %s: etcd watch broke at revision %d (%s); rewatching",
                            self.resource, self.rv, exc)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_SECONDS)

    def _replace(self, items: list[Obj], revision: int) -> None:
        """A fresh list: the window restarts at ``revision``; watchers are closed (they rewatch)."""
        self._terminate_all()
        self.objects = {object_key(o): o for o in items}
        self.window.clear()
        self.rv = self.oldest = revision
        self.error = None
        self.initializations += 1
        self.ready.set()
        self.attempted.set()
        self._wake_waiters()
        log.info("watch cache %s: %d objects at revision %d", self.resource, len(items), revision)

    def _apply(self, ev: WatchEvent) -> None:
        self.events_received += 1
        key = object_key(ev.object)
        if ev.type == "DELETED":
            self.objects.pop(key, None)
        else:
            self.objects[key] = ev.object
        now = time.monotonic()
        self.window.append((ev, now))
        self.rv = ev.revision
        if self._waiters:
            self._wake_waiters()
        shared: dict[str, SharedEvent] = {}
        slow = [w for w in self.watchers if not w.offer(ev, shared)]
        for w in slow:
            log.warning("watch cache %s: closing a watcher %d events behind", self.resource, len(w.queue))
            self.terminated += 1
            w.close()
        self._trim(now)

    def _trim(self, now: float) -> None:
        while len(self.window) > self.capacity:
            if not self.fixed and len(self.window) <= UPPER_CAPACITY and \
                    now - self.window[0][1] < EVENT_FRESH_SECONDS:
                break
            ev, _ = self.window.popleft()
            self.oldest = ev.revision

    def _wake_waiters(self) -> None:
        still = []
        for caught_up, fut in self._waiters:
            if fut.done():
                continue
            if caught_up():
                fut.set_result(None)
            else:
                still.append((caught_up, fut))
        self._waiters = still

    def _terminate_all(self, final: Obj | None = None) -> None:
        for w in list(self.watchers):
            w.close(final)

    # ------------------------------------------------------------ serving
    async def wait_ready(self, timeout: float = READY_WAIT_SECONDS) -> bool:
        """Whether the cache has its objects, waiting up to ``timeout`` for a new one's first list
        (not at all when its last list failed)."""
        if self.ready.is_set():
            return True
        if self.attempted.is_set():
            return False
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.ready.wait(), timeout)
        return self.ready.is_set()

    async def fresh_revision(self, timeout: float = CONSISTENT_READ_WAIT_SECONDS) -> int | None:
        """For a consistent list (module docstring): a revision, at least etcd's current one, whose
        state of the prefix the cache holds now -- list it at once, without awaiting anything
        between.  None when the cache is not ready or did not get there within ``timeout``
        seconds: read etcd instead.  Errors talking to etcd are raised (as a list from etcd
        would).

        etcd says, at its current revision ``current``, how many keys the prefix has (``total``)
        and the newest revision at which one of them was written after the cache's revision
        (``latest``).  The cache holds the state at ``current`` once it has seen ``current``, or
        once it has seen ``latest`` and holds ``total`` objects: every later change up to
        ``current`` can only be a deletion, and one not seen yet would leave it with more."""
        if not self.ready.is_set():
            return None
        base = self.rv
        current, total, latest = await self.store.changes_since(self.prefix, base)
        target = max(base, latest)

        def caught_up() -> bool:
            return self.rv >= current or (self.rv >= target and len(self.objects) == total)

        if not caught_up():
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append((caught_up, fut))
            try:
                await asyncio.wait_for(fut, timeout)
            except TimeoutError:
                self.consistent_reads["fallback"] += 1
                return None
            self.consistent_reads["waited"] += 1
        else:
            self.consistent_reads["fresh"] += 1
        if not self.ready.is_set():  # stopped or relisting meanwhile
            return None
        return max(self.rv, current)

    def list(self, namespace: str | None, matches: Callable[[Obj], bool]) -> tuple[list[Obj], int]:
        """The cached objects in ``namespace`` (None: all) that ``matches``, in key order, and the
        cache's revision."""
        self.lists += 1
        items = []
        for key in sorted(self.objects):
            obj = self.objects[key]
            if namespace is not None and (obj.get("metadata") or {}).get("namespace") != namespace:
                continue
            if matches(obj):
                items.append(obj)
        return items, self.rv

    async def check_compacted(self, start: int) -> None:
        """Raise Gone when etcd has compacted revision ``start + 1`` (a watch resuming from ``start``)."""
        if start >= self.rv:
            return
        try:
            await self.store.list(self.prefix, limit=1, revision=start + 1)
        except errors.Gone:
            raise errors.Gone(f"too old resource version: {start} ({self.oldest})") from None

    def watch(self, namespace: str | None, matches: Callable[[Obj], bool], start: int) -> CacheWatcher:
        """A watcher sent every selected event after revision ``start``, the window's first.

        Raises Gone when ``start`` is older than the window."""
        if start < self.oldest:
            raise errors.Gone(f"too old resource version: {start} ({self.oldest})")
        w = CacheWatcher(self, namespace, matches, start, self.buffer)
        backlog = []
        for ev, _ in reversed(self.window):
            if ev.revision <= start:
                break
            backlog.append(ev)
        for ev in reversed(backlog):
            out = w.convert(ev)
            if out is not None:
                w.queue.append(out)
        w.buffer += len(w.queue)
        self.watchers.add(w)
        return w


class Cacher:
    """The watch caches of one apiserver, one :class:`ResourceCache` per storage prefix, made on first use.

    ``capacity``: a fixed window size for every resource (None: dynamic sizing).
    """

    def __init__(self, store: Store, capacity: int | None = None, buffer: int = WATCHER_BUFFER) -> None:
        self.store = store
        self.capacity = capacity
        self.buffer = buffer
        self.caches: dict[str, ResourceCache] = {}
        #: watches served straight from etcd (no ready cache)
        self.direct_watches = 0
        self._stopping: set[asyncio.Task[None]] = set()

    def get(self, prefix: str, resource: str) -> ResourceCache:
        """The cache of ``prefix`` (``/registry/pods/``), started now if it is new."""
        cache = self.caches.get(prefix)
        if cache is None:
            cache = self.caches[prefix] = ResourceCache(self.store, prefix, resource, self.capacity, self.buffer)
            cache.start()
        return cache

    def start(self, resources: list[tuple[str, str]]) -> None:
        """Start the caches of ``resources`` (``(prefix, resource name)`` pairs) now."""
        for prefix, resource in resources:
            self.get(prefix, resource)

    def unready(self) -> list[str]:
        """The resources whose cache has not listed yet (one that cannot decrypt a value is not waited for)."""
        return sorted(c.resource for c in self.caches.values()
                      if not c.ready.is_set() and not isinstance(c.error, errors.InternalError))

    def release(self, prefix: str) -> None:
        """Forget the cache of ``prefix`` now (a kind no longer served: a CRD deleted); it stops, closing
        its watchers, in the background, and a cache asked for later starts afresh."""
        cache = self.caches.pop(prefix, None)
        if cache is not None:
            task = asyncio.get_running_loop().create_task(cache.stop())
            self._stopping.add(task)
            task.add_done_callback(self._stopping.discard)

    async def drop(self, prefix: str) -> None:
        """Stop and forget the cache of ``prefix`` (a kind that is no longer served)."""
        cache = self.caches.pop(prefix, None)
        if cache is not None:
            await cache.stop()

    async def close(self) -> None:
        for prefix in list(self.caches):
            await self.drop(prefix)

    def metrics(self) -> list[str]:
        """Prometheus text lines for the caches (kube-apiserver's ``apiserver_watch_cache_*`` names
        where it has one)."""
        series: list[tuple[str, str, str, Callable[[ResourceCache], float]]] = [
            ("apiserver_watch_cache_etcd_watches_total", "counter",
             "etcd watches the watch cache opened, per resource", lambda c: c.etcd_watches),
            ("apiserver_watch_cache_initializations_total", "counter",
             "lists that (re)filled the watch cache, per resource", lambda c: c.initializations),
            ("apiserver_watch_cache_events_received_total", "counter",
             "etcd events received by the watch cache, per resource", lambda c: c.events_received),
            ("apiserver_watch_cache_resource_version", "gauge",
             "the newest resourceVersion in the watch cache", lambda c: c.rv),
            ("apiserver_watch_cache_capacity", "gauge",
             "events the watch cache's window holds now", lambda c: len(c.window)),
            ("apiserver_watch_cache_lists_total", "counter",
             "lists served from the watch cache", lambda c: c.lists),
            ("apiserver_terminated_watchers_total", "counter",
             "watchers closed because they fell too far behind", lambda c: c.terminated),
            ("apiserver_registered_watchers", "gauge",
             "client watches served by the watch cache", lambda c: len(c.watchers)),
        ]
        lines = []
        for name, kind, text, value in series:
            lines += [f"# HELP {name} {text}", f"# TYPE {name} {kind}"]
            lines += [f'{name}{{resource="{c.resource}"}} {value(c)}' for c in self.caches.values()]
        name = "apiserver_watch_cache_consistent_read_total"
        lines += [f"# HELP {name} consistent lists: served from the cache (fresh at once, or after waiting for "
                  "it) or read from etcd (fallback)", f"# TYPE {name} counter"]
        lines += [f'{name}{{resource="{c.resource}",outcome="{outcome}"}} {n}'
                  for c in self.caches.values() for outcome, n in c.consistent_reads.items()]
        lines += ["# HELP apiserver_watch_cache_direct_watches_total watches served from etcd without the cache",
                  "# TYPE apiserver_watch_cache_direct_watches_total counter",
                  f"apiserver_watch_cache_direct_watches_total {self.direct_watches}",
                  "# HELP apiserver_storage_etcd_watches open etcd watches of the apiserver",
                  "# TYPE apiserver_storage_etcd_watches gauge",
                  f"apiserver_storage_etcd_watches {self.store.open_watches}"]
        return lines


async def stream(cache: ResourceCache, w: CacheWatcher, kind: str, api_version: str,
                 initial: list[Obj], initial_end: dict[str, str] | None, deadline: float | None,
                 bookmarks: bool, bookmark_interval: float) -> AsyncIterator[Obj]:
    """The events of one watch: ``initial`` objects as ADDED, the BOOKMARK ending them when
    ``initial_end`` (its annotations) is given, then ``w``'s events until ``deadline`` (loop time).

    With ``bookmarks``, a BOOKMARK carrying the cache's resourceVersion every
    ``bookmark_interval`` seconds of quiet and 2 s before the deadline (kube-apiserver's
    ``cacheWatcher``); sent only when nothing is queued, so every event up to it was sent."""
    loop = asyncio.get_running_loop()
    try:
        for obj in initial:
            yield {"type": "ADDED", "object": obj}
        if initial_end is not None:
            yield {"type": "BOOKMARK", "object": {"kind": kind, "apiVersion": api_version, "metadata": {
                "resourceVersion": str(w.start), "annotations": initial_end}}}
        last_sent = w.start
        next_bookmark = _next_bookmark(loop.time(), bookmark_interval, deadline) if bookmarks else None
        while True:
            now = loop.time()
            if deadline is not None and now >= deadline:
                return
            waits = [t - now for t in (deadline, next_bookmark) if t is not None]
            try:
                item = await w.next(max(min(waits), 0) if waits else None)
            except TimeoutError:
                if next_bookmark is not None and loop.time() >= next_bookmark:
                    rv = max(cache.rv, last_sent) if not w.queue else last_sent
                    yield {"type": "BOOKMARK", "object": {"kind": kind, "apiVersion": api_version,
                                                          "metadata": {"resourceVersion": str(rv)}}}
                    next_bookmark = _next_bookmark(loop.time(), bookmark_interval, deadline)
                continue
            if item is None:
                return
            yield item
            if item.get("type") == "ERROR":
                return
            last_sent = int((item["object"].get("metadata") or {}).get("resourceVersion") or last_sent)
    finally:
        w.close()


def _next_bookmark(now: float, interval: float, deadline: float | None) -> float | None:
    """When the next BOOKMARK is due: after ``interval``, or 2 s before ``deadline`` if sooner
    (None when that has passed)."""
    due = now + interval
    if deadline is not None:
        due = min(due, deadline - 2.0)
        if due < now:
            return None
    return due
