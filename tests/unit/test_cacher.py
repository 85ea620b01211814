"""The watch cache's bookkeeping without etcd: window, selection changes, backlog, slow watchers, bookmarks."""

from __future__ import annotations

from typing import Any

import pytest

from minik8s.api import errors
from minik8s.apiserver import cacher
from minik8s.apiserver.storage import WatchEvent


def _obj(name: str, rv: int, ns: str = "a", **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": ns, "resourceVersion": str(rv), "labels": labels}}


def _cache(capacity: int | None = 3, buffer: int = 100) -> cacher.ResourceCache:
    cache = cacher.ResourceCache(None, "/registry/things/", "things", capacity, buffer)  # type: ignore[arg-type]
    cache._replace([_obj("x", 5)], 10)
    return cache


async def test_window_slides_and_older_rv_is_gone() -> None:
    cache = _cache(capacity=3)
    for rv in range(11, 16):
        cache._apply(WatchEvent("MODIFIED", _obj("x", rv), _obj("x", rv - 1), rv))
    assert [ev.revision for ev, _ in cache.window] == [13, 14, 15]
    assert cache.oldest == 12 and cache.rv == 15
    w = cache.watch(None, lambda o: True, 12)  # resumes: 13, 14, 15 replayed
    assert [e["object"]["metadata"]["resourceVersion"] for e in w.queue] == ["13", "14", "15"]
    with pytest.raises(errors.Gone, match=r"too old resource version: 11 \(12\)"):
        cache.watch(None, lambda o: True, 11)


async def test_dynamic_window_keeps_fresh_events() -> None:
    cache = _cache(capacity=None)
    for rv in range(11, 11 + cacher.DEFAULT_CAPACITY + 50):
        cache._apply(WatchEvent("ADDED", _obj(f"o{rv}", rv), None, rv))
    assert len(cache.window) == cacher.DEFAULT_CAPACITY + 50 and cache.oldest == 10


async def test_selection_changes_and_namespaces() -> None:
    cache = _cache()
    w = cache.watch("a", lambda o: o["metadata"]["labels"].get("app") == "web", cache.rv)
    cache._apply(WatchEvent("ADDED", _obj("p", 11, app="db"), None, 11))
    cache._apply(WatchEvent("MODIFIED", _obj("p", 12, app="web"), _obj("p", 11, app="db"), 12))
    cache._apply(WatchEvent("ADDED", _obj("q", 13, ns="b", app="web"), None, 13))
    cache._apply(WatchEvent("MODIFIED", _obj("p", 14, app="web"), _obj("p", 12, app="web"), 14))
    cache._apply(WatchEvent("MODIFIED", _obj("p", 15, app="db"), _obj("p", 14, app="web"), 15))
    assert [(e["type"], e["object"]["metadata"]["resourceVersion"]) for e in w.queue] == [
        ("ADDED", "12"), ("MODIFIED", "14"), ("DELETED", "15")]
    items, rv = cache.list("a", lambda o: True)
    assert [o["metadata"]["name"] for o in items] == ["p", "x"] and rv == 15


async def test_slow_watcher_closed_and_events_shared() -> None:
    cache = _cache(buffer=2)
    slow = cache.watch(None, lambda o: True, cache.rv)
    other = cache.watch(None, lambda o: True, cache.rv)
    other.buffer = 100
    for rv in range(11, 14):
        cache._apply(WatchEvent("ADDED", _obj(f"o{rv}", rv), None, rv))
    assert slow.closed and slow not in cache.watchers and cache.terminated == 1
    assert list(slow.queue)[-1] is None
    assert len(other.queue) == 3 and not other.closed
    assert slow.queue[0] is other.queue[0]  # one event object for every watcher: serialised once
    assert other.queue[0].encoded().endswith(b"\n")  # type: ignore[union-attr]


def test_bookmark_times() -> None:
    assert cacher._next_bookmark(100.0, 30.0, None) == 130.0
    assert cacher._next_bookmark(100.0, 30.0, 110.0) == 108.0  # 2 s before the deadline
    assert cacher._next_bookmark(100.0, 30.0, 101.0) is None
