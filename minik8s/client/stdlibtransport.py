"""kubectl's transport: the standard library's ``http.client``, each blocking exchange in a worker
thread, so a one-shot command starts without importing httpx, httpcore and anyio (about a third
of its run).  See :mod:`minik8s.client.transport`.

Requests share kept-alive connections (one per request in flight, at most the default
executor's threads); an idle connection that has become readable (the server closed it, as
uvicorn does after its keep-alive timeout) is dropped instead of used, as httpcore does.  A stream (a watch,
``logs -f``) gets its own connection and thread, with no read timeout; leaving the stream shuts
the socket down, which ends the thread's blocking read.
"""

from __future__ import annotations

import asyncio
import codecs
import http.client
import select
import socket
import ssl
import threading
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any, TypeVar
from urllib.parse import quote, urlencode, urlsplit

from minik8s.client import transport
from minik8s.client.transport import Response

T = TypeVar("T")

#: seconds to open a connection (TCP and TLS), as the httpx transport's
CONNECT_TIMEOUT = 5.0


def _reading(call: Callable[[], T]) -> T:
    """``call()`` with the failures of reading a response mapped to the transport's."""
    try:
        return call()
    except TimeoutError as exc:
        raise transport.ReadTimeout("timed out waiting for the response") from exc
    except http.client.HTTPException as exc:  # RemoteDisconnected, IncompleteRead, BadStatusLine
        raise transport.ProtocolError(str(exc) or type(exc).__name__) from exc
    except (OSError, ValueError) as exc:  # ValueError: the stream was closed under the read
        raise transport.ReadError(str(exc) or type(exc).__name__) from exc


def _abort(conn: http.client.HTTPConnection) -> None:
    """Close ``conn`` so that a read blocked on it in another thread returns at once."""
    sock = conn.sock
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
    conn.close()


def _response(resp: http.client.HTTPResponse, body: bytes) -> Response:
    return Response(resp.status, [(k.lower(), v) for k, v in resp.getheaders()], body)


class _Stream:
    """A response read in its stream's own thread (:class:`~minik8s.client.transport.StreamResponse`)."""

    def __init__(self, resp: http.client.HTTPResponse, pool: ThreadPoolExecutor) -> None:
        self._resp = resp
        self._pool = pool
        self.status_code = resp.status

    async def _run(self, call: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._pool, _reading, call)

    async def read(self) -> Response:
        return _response(self._resp, await self._run(self._resp.read))

    async def aiter_lines(self) -> AsyncIterator[str]:
        while line := await self._run(self._resp.readline):
            yield line.decode("utf-8", errors="replace").rstrip("\r\n")

    async def aiter_text(self) -> AsyncIterator[str]:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        while chunk := await self._run(lambda: self._resp.read1(65536)):
            if text := decoder.decode(chunk):
                yield text
        if tail := decoder.decode(b"", final=True):
            yield tail


class StdlibTransport:
    """:class:`~minik8s.client.transport.Transport` over ``http.client``.

    ``verify``: an ``SSLContext`` (CA, client certificate) or True for the system CAs (ignored
    for ``http://``); ``timeout``: seconds a request may wait for its response; the connection is
    opened within :data:`CONNECT_TIMEOUT`.
    """

    def __init__(self, base_url: str, headers: list[tuple[str, str]], verify: ssl.SSLContext | bool,
                 timeout: float) -> None:
        self.base_url = base_url.rstrip("/")
        self._headers = headers
        self._context = verify if isinstance(verify, ssl.SSLContext) else None
        self._timeout = timeout
        self._idle: list[tuple[str, http.client.HTTPConnection]] = []
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ connections
    def _connect(self) -> http.client.HTTPConnection:
        url = urlsplit(self.base_url)
        host = url.hostname or "localhost"
        conn: http.client.HTTPConnection
        if url.scheme == "https":
            context = self._context or ssl.create_default_context()
            conn = http.client.HTTPSConnection(host, url.port or 443, timeout=CONNECT_TIMEOUT, context=context)
        else:
            conn = http.client.HTTPConnection(host, url.port or 80, timeout=CONNECT_TIMEOUT)
        try:
            conn.connect()
        except TimeoutError as exc:
            conn.close()
            raise transport.ConnectTimeout(f"connecting to {self.base_url} timed out") from exc
        except OSError as exc:  # refused, unreachable, ssl.SSLError
            conn.close()
            raise transport.ConnectError(str(exc) or type(exc).__name__) from exc
        return conn

    def _checkout(self) -> http.client.HTTPConnection:
        """A kept-alive connection to the current server that is still open, else a new one."""
        while True:
            with self._lock:
                found = next((i for i, (url, _) in enumerate(self._idle) if url == self.base_url), None)
                if found is None:
                    return self._connect()
                _, conn = self._idle.pop(found)
            if conn.sock is not None and not select.select([conn.sock], [], [], 0)[0]:
                return conn
            conn.close()  # readable while idle: the server closed it (or sent what nobody asked for)

    def _checkin(self, conn: http.client.HTTPConnection, url: str) -> None:
        with self._lock:
            self._idle.append((url, conn))

    def _target(self, path: str, params: dict[str, Any] | None) -> str:
        if not params:
            return path
        query = urlencode(params, doseq=True, quote_via=quote)
        return f"{path}{'&' if '?' in path else '?'}{query}"

    def _send(self, conn: http.client.HTTPConnection, method: str, target: str, content: bytes | None,
              headers: dict[str, str] | None) -> None:
        try:
            conn.putrequest(method, target, skip_accept_encoding=True)
            extra = headers or {}
            for name, value in self._headers:  # a request's own header replaces the transport's
                if name not in extra:
                    conn.putheader(name, value)
            for name, value in extra.items():
                conn.putheader(name, value)
            if content is not None or method in ("POST", "PUT", "PATCH"):
                conn.putheader("Content-Length", str(len(content or b"")))
            conn.endheaders(content)
        except TimeoutError as exc:
            raise transport.WriteError("timed out sending the request") from exc
        except OSError as exc:
            raise transport.WriteError(str(exc) or type(exc).__name__) from exc

    def _exchange(self, method: str, target: str, content: bytes | None, headers: dict[str, str] | None,
                  timeout: float) -> Response:
        url = self.base_url
        conn = self._checkout()
        try:
            if conn.sock is not None:
                conn.sock.settimeout(timeout)
            self._send(conn, method, target, content, headers)
            resp = _reading(conn.getresponse)
            body = _reading(resp.read)
        except transport.TransportError:
            conn.close()
            raise
        if resp.will_close:
            conn.close()
        else:
            self._checkin(conn, url)
        return _response(resp, body)

    # ------------------------------------------------------------------ Transport
    async def request(self, method: str, path: str, *, params: dict[str, Any] | None = None,
                      content: bytes | None = None, headers: dict[str, str] | None = None,
                      timeout: float | None = None) -> Response:
        return await asyncio.to_thread(self._exchange, method, self._target(path, params), content, headers,
                                       self._timeout if timeout is None else timeout)

    @asynccontextmanager
    async def stream(self, method: str, path: str, *, params: dict[str, Any] | None = None,
                     headers: dict[str, str] | None = None) -> AsyncIterator[_Stream]:
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="minik8s-stream")
        conn: http.client.HTTPConnection | None = None
        target = self._target(path, params)

        def start() -> http.client.HTTPResponse:
            nonlocal conn
            conn = self._connect()
            if conn.sock is not None:
                conn.sock.settimeout(None)  # a watch waits for its next event as long as it takes
            self._send(conn, method, target, None, headers)
            return _reading(conn.getresponse)

        try:
            resp = await asyncio.get_running_loop().run_in_executor(pool, start)
            yield _Stream(resp, pool)
        finally:
            if conn is not None:
                _abort(conn)
            pool.shutdown(wait=False)

    async def aclose(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for _, conn in idle:
            conn.close()
