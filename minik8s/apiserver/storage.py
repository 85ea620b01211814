"""Object storage over etcd: JSON values, resourceVersion = etcd revision, CAS updates.

Only the apiserver imports this module (docs/architecture.md: only the apiserver touches
etcd).  Values are the object's wire JSON without ``metadata.resourceVersion``;
reads set it from the key's ``mod_revision``, lists from the read revision.  With an
:class:`~minik8s.apiserver.encryption.EncryptionConfig`, the values of the resources it lists
are encrypted on the way in and decrypted on the way out, here and only here (get, list,
watch and the reads inside update/delete all decode through :meth:`Store._from_storage`).
"""

from __future__ import annotations

import asyncio
import builtins
import json
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import aetcd
import aetcd.exceptions
import aetcd.rpc as rpc
import grpc
from aetcd import utils as etcd_utils

from minik8s.api import errors
from minik8s.apiserver.encryption import EncryptionConfig, TransformError
from minik8s.apiserver.etcd_client import EtcdEndpoint, EtcdTLS, etcd_client
from minik8s.apiserver.wireorder import in_wire_order, with_resource_version

log = logging.getLogger("apiserver.storage")


@dataclass
class WatchEvent:
    """One change: ``type`` ADDED, MODIFIED or DELETED; ``object`` the new (or last) state;
    ``prev`` the state before (None for ADDED); ``revision`` the etcd revision of the change."""

    type: str
    object: dict[str, Any]
    prev: dict[str, Any] | None
    revision: int


def _with_revision(obj: dict[str, Any], revision: int) -> dict[str, Any]:
    out = dict(obj)
    out["metadata"] = with_resource_version(obj.get("metadata") or {}, str(revision))
    return out


def _encode(obj: dict[str, Any]) -> bytes:
    meta = obj.get("metadata") or {}
    stored = dict(obj)
    stored["metadata"] = {k: v for k, v in meta.items() if k != "resourceVersion"}
    return json.dumps(stored, separators=(",", ":")).encode()


def _is_compacted(exc: BaseException) -> bool:
    text = str(exc).lower()
    return isinstance(exc, aetcd.exceptions.RevisionCompactedError) or "compacted" in text


class Store:
    """The etcd-backed object store.

    Errors: :class:`~minik8s.api.errors.NotFound`, ``AlreadyExists``, ``Conflict``
    (stale resourceVersion), ``Gone`` (compacted revision), ``ServiceUnavailable``
    (etcd unreachable), ``InternalError`` (a stored value that cannot be decrypted: Kubernetes'
    ``unable to transform key "..."``; a list that meets one fails whole, as kube-apiserver's does).
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 2379, timeout: float = 10.0,
                 tls: EtcdTLS | None = None, encryption: EncryptionConfig | None = None) -> None:
        """Talk to etcd at ``host:port`` (``timeout``: seconds per call), over TLS when ``tls`` is given
        (see :mod:`minik8s.apiserver.etcd_client`; EtcdConfigError for unreadable files).
        ``encryption``: which resources are encrypted at rest, and how (None: none)."""
        self.client = etcd_client(EtcdEndpoint(host, port, tls), timeout)
        self.encryption = encryption
        #: etcd watches open now (``/metrics``: ``apiserver_storage_etcd_watches``)
        self.open_watches = 0

    # ------------------------------------------------------------ values
    def _to_storage(self, key: bytes, obj: dict[str, Any]) -> bytes:
        """The etcd value of ``obj`` at ``key``: its JSON, encrypted when the resource is configured so."""
        data = _encode(obj)
        transformer = self.encryption.for_key(key.decode()) if self.encryption else None
        return transformer.to_storage(data, key) if transformer else data

    def _from_storage(self, key: bytes, value: bytes, revision: int) -> dict[str, Any]:
        """The object stored as ``value`` at ``key``, with ``revision`` as its resourceVersion.

        Raises InternalError when the value cannot be decrypted (or is not JSON)."""
        transformer = self.encryption.for_key(key.decode()) if self.encryption else None
        try:
            data = transformer.from_storage(value, key) if transformer else value
            obj: dict[str, Any] = json.loads(data)
        except (TransformError, ValueError) as exc:
            log.error("cannot read %s: %s", key.decode(errors="replace"), exc)
            raise errors.InternalError(f'unable to transform key "{key.decode(errors="replace")}": {exc}') from None
        obj["metadata"] = with_resource_version(obj.get("metadata") or {}, str(revision))
        return obj

    async def close(self) -> None:
        await self.client.close()

    async def healthy(self) -> bool:
        """True when etcd answers a read within 2 s."""
        return await self.health_error() is None

    async def health_error(self) -> str | None:
        """None when etcd answers a read within 2 s, else why not (``context deadline exceeded``
        when it does not answer in time, as Go's etcd prober says)."""
        try:
            await asyncio.wait_for(self.client.get(b"/registry/health"), 2.0)
            return None
        except TimeoutError:
            return "context deadline exceeded"
        except Exception as exc:
            return str(exc) or type(exc).__name__

    async def revision(self) -> int:
        """The current etcd revision."""
        resp = await self._range(b"/registry/health", count_only=True)
        return int(resp.header.revision)

    # ------------------------------------------------------------ basic ops
    async def _call(self, coro: Any) -> Any:
        try:
            return await coro
        except errors.APIError:
            raise
        except aetcd.exceptions.ConnectionFailedError as exc:
            raise errors.ServiceUnavailable(f"etcd is unavailable: {exc}") from exc
        except aetcd.exceptions.ConnectionTimeoutError as exc:
            raise errors.Timeout(f"etcd did not answer in time: {exc}") from exc
        except (aetcd.exceptions.ClientError, grpc.RpcError) as exc:
            if _is_compacted(exc):
                raise errors.Gone("the requested resourceVersion has been compacted") from exc
            if isinstance(exc, grpc.aio.AioRpcError) and exc.code() in (
                    grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                raise errors.ServiceUnavailable(f"etcd is unavailable: {exc.details()}") from exc
            raise errors.InternalError(f"etcd error: {exc}") from exc

    async def _range(
        self,
        key: bytes,
        range_end: bytes | None = None,
        limit: int = 0,
        revision: int = 0,
        count_only: bool = False,
    ) -> Any:
        await self._call(self.client.connect())
        req = rpc.RangeRequest(key=key, limit=limit, revision=revision, count_only=count_only)
        if range_end is not None:
            req.range_end = range_end
        return await self._call(self.client.kvstub.Range(req, timeout=self.client._timeout,
                                                        metadata=self.client.metadata))

    async def get(self, key: str) -> dict[str, Any]:
        """The object at ``key``; raises NotFound (message filled in by the caller)."""
        kv = await self._call(self.client.get(key.encode()))
        if kv is None:
            raise errors.NotFound(key)
        return self._from_storage(key.encode(), kv.value, kv.mod_revision)

    async def create(self, key: str, obj: dict[str, Any]) -> dict[str, Any]:
        """Store a new object; raises AlreadyExists when ``key`` exists. Returns it with its resourceVersion,
        in Kubernetes' field order (:func:`~minik8s.apiserver.wireorder.in_wire_order`), as stored."""
        k = key.encode()
        obj = in_wire_order(obj)
        tx = self.client.transactions
        ok, responses = await self._call(self.client.transaction(
            compare=[tx.create(k) == 0], success=[tx.put(k, self._to_storage(k, obj))], failure=[]))
        if not ok:
            raise errors.AlreadyExists(key)
        return _with_revision(obj, responses[0].response_put.header.revision)

    async def update(self, key: str, obj: dict[str, Any], expected_revision: int) -> dict[str, Any]:
        """Compare-and-swap: write ``obj`` only if the key's mod_revision is ``expected_revision``.

        Raises Conflict when it is not (a stale resourceVersion), NotFound when the key is gone.
        """
        k = key.encode()
        obj = in_wire_order(obj)
        tx = self.client.transactions
        ok, responses = await self._call(self.client.transaction(
            compare=[tx.mod(k) == expected_revision],
            success=[tx.put(k, self._to_storage(k, obj))],
            failure=[tx.get(k)],
        ))
        if not ok:
            if not responses or not responses[0]:
                raise errors.NotFound(key)
            raise errors.Conflict(key)
        return _with_revision(obj, responses[0].response_put.header.revision)

    async def delete(self, key: str, expected_revision: int | None = None) -> dict[str, Any]:
        """Delete ``key`` (only at ``expected_revision`` when given). Returns the last state."""
        k = key.encode()
        tx = self.client.transactions
        compare = [tx.mod(k) == expected_revision] if expected_revision else [tx.version(k) > 0]
        current = await self.get(key)
        ok, _ = await self._call(self.client.transaction(
            compare=compare, success=[tx.delete(k)], failure=[]))
        if not ok:
            exists = await self._call(self.client.get(k))
            if exists is None:
                raise errors.NotFound(key)
            raise errors.Conflict(key)
        return current

    async def list(
        self,
        prefix: str,
        limit: int = 0,
        start_key: str | None = None,
        revision: int = 0,
    ) -> tuple[list[dict[str, Any]], int, str | None]:
        """Objects under ``prefix`` in key order, read at ``revision`` (0 = latest).

        Returns ``(items, read_revision, next_key)``: ``next_key`` is where the next
        page starts when ``limit`` cut the range, else None. Raises Gone when
        ``revision`` is compacted.
        """
        p = prefix.encode()
        start = start_key.encode() if start_key else p
        resp = await self._range(start, etcd_utils.prefix_range_end(p), limit=limit, revision=revision)
        items = [self._from_storage(kv.key, kv.value, kv.mod_revision) for kv in resp.kvs]
        read_rev = revision or int(resp.header.revision)
        next_key = None
        if resp.more and resp.kvs:
            next_key = resp.kvs[-1].key.decode() + "\x00"
        return items, read_rev, next_key

    async def changes_since(self, prefix: str, revision: int) -> tuple[int, int, int]:
        """``(current revision, keys under prefix, newest mod revision of a key written after
        revision, 0 when none)``, read from etcd at one revision without values: one keys-only
        range with ``min_mod_revision``, whose ``count`` is every key of the range and whose keys
        are those written after ``revision`` (deleted keys are not there: a deletion shows only
        as a smaller count)."""
        p = prefix.encode()
        await self._call(self.client.connect())
        req = rpc.RangeRequest(key=p, range_end=etcd_utils.prefix_range_end(p), keys_only=True,
                               min_mod_revision=revision + 1)
        resp = await self._call(self.client.kvstub.Range(req, timeout=self.client._timeout,
                                                         metadata=self.client.metadata))
        latest = max((int(kv.mod_revision) for kv in resp.kvs), default=0)
        return int(resp.header.revision), int(resp.count), latest

    async def watch(self, prefix: str, from_revision: int) -> AsyncIterator[WatchEvent]:
        """Open a watch on changes under ``prefix`` with revision > ``from_revision``.

        The etcd watch exists when this returns; raises Gone now when ``from_revision``
        is compacted.  Iterate the result for the events, in revision order.
        """
        await self._call(self.client.connect())
        current = await self.revision()
        if from_revision < current:
            # etcd answers a compacted start revision only on the stream; ask up front so the
            # client gets a plain 410 before any event.
            try:
                await self._range(prefix.encode(), etcd_utils.prefix_range_end(prefix.encode()),
                                  revision=from_revision + 1, count_only=True)
            except errors.Gone:
                raise errors.Gone(f"too old resource version: {from_revision} ({current})") from None
        try:
            w = await self.client.watch_prefix(prefix.encode(), start_revision=from_revision + 1,
                                               prev_kv=True)
        except Exception as exc:  # compacted revisions surface as errors at creation
            if _is_compacted(exc):
                raise errors.Gone(f"too old resource version: {from_revision}") from exc
            raise errors.ServiceUnavailable(f"etcd watch failed: {exc}") from exc
        self.open_watches += 1
        return self._events(w, from_revision)

    async def reflect(self, prefix: str, listed: Callable[[builtins.list[dict[str, Any]]], None],
                      changed: Callable[[str, dict[str, Any]], None], what: str) -> None:
        """Keep a copy in memory of everything under ``prefix``, until cancelled (client-go's
        reflector, over etcd): list, hand the objects to ``listed``, then hand each change from the
        list's revision on to ``changed`` (``ADDED``, ``MODIFIED`` or ``DELETED`` and the object).
        When etcd is away or the revision is compacted, list again a second later (``what`` names
        the copy in the debug log)."""
        while True:
            try:
                items, revision, _ = await self.list(prefix)
                listed(items)
                async for event in await self.watch(prefix, revision):
                    changed(event.type, event.object)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - etcd away or compacted: list again
                log.debug("%s: %s; relisting", what, exc)
                await asyncio.sleep(1.0)

    async def _events(self, w: Any, from_revision: int) -> AsyncIterator[WatchEvent]:
        try:
            async for ev in w:
                rev = ev.kv.mod_revision
                has_prev = ev.prev_kv is not None and ev.prev_kv.create_revision > 0
                prev = self._from_storage(ev.kv.key, ev.prev_kv.value, ev.prev_kv.mod_revision) if has_prev else None
                if ev.kind == "PUT":
                    yield WatchEvent("ADDED" if ev.kv.version == 1 else "MODIFIED",
                                     self._from_storage(ev.kv.key, ev.kv.value, rev), prev, rev)
                elif prev is not None:
                    yield WatchEvent("DELETED", _with_revision(prev, rev), prev, rev)
        except Exception as exc:
            if _is_compacted(exc):
                raise errors.Gone(f"too old resource version: {from_revision}") from exc
            raise
        finally:
            self.open_watches -= 1
            await w.cancel()
