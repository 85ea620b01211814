"""uvicorn servers for minik8s' HTTP listeners: bounded request heads, optional TLS.

uvicorn's own protocols bound neither the size of a request head nor the time a client may
take to send it: one client trickling an endless header holds a connection and its memory
forever.  :class:`BoundedHttpProtocol` (uvicorn's httptools protocol) adds both, as Go's
``net/http`` server does for Kubernetes' components:

- a request head (request line and headers) larger than ``max_head_bytes`` is answered
  ``431 Request Header Fields Too Large`` and the connection is closed (Go:
  ``MaxHeaderBytes``);
- a connection whose request head is not complete ``header_timeout`` seconds after the
  connection was accepted, or after the head's first byte arrived on a kept-alive
  connection, is closed (Go: ``ReadHeaderTimeout``).  An idle kept-alive connection is closed
  by uvicorn's ``timeout_keep_alive`` as before.

Bodies are bounded by the applications (the apiserver reads at most 3 MiB).
:func:`tls_serving_options` turns the ``--tls-cert-file``/``--tls-private-key-file``/
``--client-ca-file`` flags into settings, and :func:`server_config` builds the
``uvicorn.Config`` every listener uses.
"""

from __future__ import annotations

import asyncio
import ssl
from typing import Any

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.datastructures import Headers
from websockets.server import ServerProtocol
from websockets.typing import Subprotocol

#: Seconds a client has to send a complete request head (kube-apiserver uses 32 s; minik8s' clients are near).
HEADER_TIMEOUT = 10.0
#: Bytes a request head may have (request line and headers; Go's default is 1 MiB, nginx's 32 KiB).
MAX_HEAD_BYTES = 32 * 1024

_LINGER = 1.0  # seconds a refused head's connection is read (and dropped) before it is closed
_TOO_LARGE = b"431 Request Header Fields Too Large"


class BoundedHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a request-head size limit (431) and deadline (close).

    Class attributes ``header_timeout`` (seconds) and ``max_head_bytes`` are set per server by
    :func:`server_config`.
    """

    header_timeout: float = HEADER_TIMEOUT
    max_head_bytes: int = MAX_HEAD_BYTES

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._head_deadline: asyncio.TimerHandle | None = None
        self._in_head = False
        self._head_bytes = 0  # bytes received while the head is incomplete
        self._head_size = 0  # bytes of the head parsed
        self._refused = False
        super().connection_made(transport)
        self._arm_head_deadline()

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return  # the rest of a refused head, read and dropped until the connection closes
        super().data_received(data)
        if self._in_head and not self.transport.is_closing():
            # The head is still incomplete after this chunk: httptools holds what it has read of it.
            self._head_bytes += len(data)
            if self._head_bytes > self.max_head_bytes:
                self._refuse_head()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_head = True
        self._head_bytes = 0
        self._head_size = 0
        if self._head_deadline is None:
            self._arm_head_deadline()

    def on_url(self, url: bytes) -> None:
        if not self._refused:
            super().on_url(url)
            self._head_size += len(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        if not self._refused:
            super().on_header(name, value)
            self._head_size += len(name) + len(value) + 4

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._disarm_head_deadline()
        if self._refused:
            return
        if self._head_size > self.max_head_bytes:  # a whole head that arrived at once
            self._refuse_head()
            return
        super().on_headers_complete()

    def on_body(self, body: bytes) -> None:
        if not self._refused:
            super().on_body(body)

    def on_message_complete(self) -> None:
        if not self._refused:
            super().on_message_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_head_deadline()
        super().connection_lost(exc)

    def _arm_head_deadline(self) -> None:
        self._head_deadline = self.loop.call_later(self.header_timeout, self._head_deadline_passed)

    def _disarm_head_deadline(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None

    def _head_deadline_passed(self) -> None:
        self._head_deadline = None
        self._close()

    def _refuse_head(self) -> None:
        """Answer 431, then read and drop what the client still sends for a moment before closing:
        closing a socket with unread data would reset the connection, and the client would lose
        the answer (Go's ``closeWriteAndWait``)."""
        self._in_head = False
        self._refused = True
        self._disarm_head_deadline()
        self.transport.write(b"HTTP/1.1 " + _TOO_LARGE + b"\r\ncontent-type: text/plain; charset=utf-8\r\n"
                             b"content-length: " + str(len(_TOO_LARGE)).encode() + b"\r\n"
                             b"connection: close\r\n\r\n" + _TOO_LARGE)
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(_LINGER, self._close)

    def _close(self) -> None:
        if not self.transport.is_closing():
            self.transport.close()


class TLSInfoProtocol(BoundedHttpProtocol):
    """:class:`BoundedHttpProtocol`, plus the verified client certificate in ``scope["extensions"]["tls"]``.

    The TLS layer already verified the certificate against ``--client-ca-file``
    (``CERT_OPTIONAL``); this only exposes who it names to the application
    (:class:`minik8s.auth.Authenticator` reads it).
    """

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.scope["extensions"] = {"tls": {"client_cert": peer_certificate(self.transport)}}  # type: ignore[typeddict-unknown-key]


class _AnySubprotocolServer(ServerProtocol):
    """websockets' handshake without its check of ``Sec-WebSocket-Protocol``: the ASGI app reads
    the offered names (uvicorn splits them on commas) and names the chosen one when it accepts."""

    def process_subprotocol(self, headers: Headers) -> Subprotocol | None:
        return None


class KubeWebSocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's WebSocket protocol, taking Kubernetes' subprotocol names as kubectl sends them:
    ``SPDY/3.1+portforward.k8s.io`` (port-forward, kubectl >= 1.31) has a ``/``, which the
    RFC 6455 token grammar refuses (the handshake would fail with 400)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.conn.__class__ = _AnySubprotocolServer


class TLSInfoWebSocketProtocol(KubeWebSocketProtocol):
    """The same for WebSocket upgrades (``pods/exec``), whose scope uvicorn builds separately."""

    async def run_asgi(self) -> None:
        extensions = dict(self.scope.get("extensions") or {})
        extensions["tls"] = {"client_cert": peer_certificate(self.transport)}
        self.scope["extensions"] = extensions  # type: ignore[typeddict-item]
        await super().run_asgi()


def peer_certificate(transport: Any) -> dict[str, Any] | None:
    """The client certificate the TLS layer verified (``ssl.SSLSocket.getpeercert`` shape), if any."""
    ssl_object = transport.get_extra_info("ssl_object") if transport is not None else None
    return ssl_object.getpeercert() if ssl_object is not None else None


def tls_serving_options(tls_cert_file: str | None, tls_private_key_file: str | None,
                        client_ca_file: str | None) -> dict[str, Any]:
    """``uvicorn.Config`` keyword arguments for the flags ``--tls-cert-file``,
    ``--tls-private-key-file`` and ``--client-ca-file`` (same names in kube-apiserver and the kubelet).

    Without a certificate: ``{}`` (plain HTTP).  With one: HTTPS, the protocols that expose
    the client certificate, and with a client CA ``CERT_OPTIONAL`` verification (a client
    without a certificate still connects and is answered 401 by :class:`minik8s.auth.AuthMiddleware`).
    The files are loaded once here, so a missing or unreadable file is reported at start.
    Raises ValueError naming the flag.
    """
    if not tls_cert_file and not tls_private_key_file:
        if client_ca_file:
            raise ValueError("--client-ca-file needs --tls-cert-file and --tls-private-key-file")
        return {}
    if not (tls_cert_file and tls_private_key_file):
        raise ValueError("--tls-cert-file and --tls-private-key-file go together")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        ctx.load_cert_chain(tls_cert_file, tls_private_key_file)
    except (OSError, ssl.SSLError) as exc:
        raise ValueError(f"--tls-cert-file/--tls-private-key-file: cannot load {tls_cert_file} and "
                         f"{tls_private_key_file}: {exc}") from exc
    if client_ca_file:
        try:
            ctx.load_verify_locations(client_ca_file)
        except (OSError, ssl.SSLError) as exc:
            raise ValueError(f"--client-ca-file: cannot load {client_ca_file}: {exc}") from exc
    return {
        "ssl_certfile": tls_cert_file,
        "ssl_keyfile": tls_private_key_file,
        "ssl_ca_certs": client_ca_file,
        "ssl_cert_reqs": ssl.CERT_OPTIONAL if client_ca_file else ssl.CERT_NONE,
        "http": TLSInfoProtocol,
        "ws": TLSInfoWebSocketProtocol,
    }


def server_config(app: Any, host: str, port: int, tls: dict[str, Any] | None = None,
                  header_timeout: float = HEADER_TIMEOUT, max_head_bytes: int = MAX_HEAD_BYTES,
                  **options: Any) -> uvicorn.Config:
    """The ``uvicorn.Config`` of a minik8s listener for ``app`` on ``host:port``.

    ``tls``: :func:`tls_serving_options` (``{}``/None: plain HTTP).  Request heads are bounded
    by ``max_head_bytes`` (431 beyond) and ``header_timeout`` seconds (see the module
    docstring).  ``options`` are further ``uvicorn.Config`` settings (``timeout_keep_alive``,
    ``lifespan``...); there is no access log and uvicorn logs warnings only.
    """
    settings = dict(tls or {})
    base: type[BoundedHttpProtocol] = settings.pop("http", BoundedHttpProtocol)
    protocol = type(base.__name__, (base,), {"header_timeout": header_timeout, "max_head_bytes": max_head_bytes})
    settings.setdefault("ws", KubeWebSocketProtocol)
    return uvicorn.Config(app, host=host, port=port, http=protocol, log_level="warning", access_log=False,
                          **settings, **options)
