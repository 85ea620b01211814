"""The components' transport: httpx's pooled async client (keep-alive connections, as many
requests in flight as the pool allows, watches that stay open).  See :mod:`minik8s.client.transport`."""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import httpx

from minik8s.client import transport
from minik8s.client.transport import Response

#: httpx's failures and the transport's names for them, most specific first
_FAILURES: tuple[tuple[type[httpx.TransportError], type[transport.TransportError]], ...] = (
    (httpx.ConnectTimeout, transport.ConnectTimeout),
    (httpx.ConnectError, transport.ConnectError),
    (httpx.PoolTimeout, transport.PoolTimeout),
    (httpx.ReadTimeout, transport.ReadTimeout),
    (httpx.RemoteProtocolError, transport.ProtocolError),
    (httpx.ReadError, transport.ReadError),
    (httpx.WriteError, transport.WriteError),
)


@contextmanager
def _mapped() -> Iterator[None]:
    try:
        yield
    except httpx.TransportError as exc:
        kind = next((ours for theirs, ours in _FAILURES if isinstance(exc, theirs)), transport.TransportError)
        raise kind(str(exc) or type(exc).__name__) from exc


class _Stream:
    def __init__(self, resp: httpx.Response) -> None:
        self._resp = resp
        self.status_code = resp.status_code

    async def read(self) -> Response:
        with _mapped():
            content = await self._resp.aread()
        return Response(self.status_code, list(self._resp.headers.multi_items()), content)

    async def aiter_lines(self) -> AsyncIterator[str]:
        with _mapped():
            async for line in self._resp.aiter_lines():
                yield line

    async def aiter_text(self) -> AsyncIterator[str]:
        with _mapped():
            async for chunk in self._resp.aiter_text():
                yield chunk


class HttpxTransport:
    """:class:`~minik8s.client.transport.Transport` over ``httpx.AsyncClient``.

    ``verify``: an ``SSLContext`` (CA, client certificate) or True for the system CAs;
    ``timeout``: seconds per request (connect: 5 s); ``max_keepalive``: idle connections kept
    (as many as requests may be in flight: no connect/close churn).  ``mock``: an
    ``httpx.MockTransport`` for unit tests.
    """

    def __init__(self, base_url: str, headers: list[tuple[str, str]], verify: ssl.SSLContext | bool,
                 timeout: float, max_keepalive: int, mock: httpx.AsyncBaseTransport | None = None) -> None:
        self._http = httpx.AsyncClient(
            base_url=base_url, headers=headers, verify=verify, timeout=httpx.Timeout(timeout, connect=5.0),
            limits=httpx.Limits(max_connections=max(200, max_keepalive), max_keepalive_connections=max_keepalive),
            transport=mock)

    @property
    def base_url(self) -> str:
        return str(self._http.base_url).rstrip("/")

    @base_url.setter
    def base_url(self, url: str) -> None:
        self._http.base_url = httpx.URL(url)

    async def request(self, method: str, path: str, *, params: dict[str, Any] | None = None,
                      content: bytes | None = None, headers: dict[str, str] | None = None,
                      timeout: float | None = None) -> Response:
        with _mapped():
            resp = await self._http.request(method, path, params=params, content=content, headers=headers,
                                            timeout=timeout if timeout is not None else httpx.USE_CLIENT_DEFAULT)
        return Response(resp.status_code, list(resp.headers.multi_items()), resp.content)

    @asynccontextmanager
    async def stream(self, method: str, path: str, *, params: dict[str, Any] | None = None,
                     headers: dict[str, str] | None = None) -> AsyncIterator[_Stream]:
        with _mapped():
            async with self._http.stream(method, path, params=params, headers=headers,
                                         timeout=httpx.Timeout(30.0, connect=5.0, read=None)) as resp:
                yield _Stream(resp)

    async def aclose(self) -> None:
        await self._http.aclose()
