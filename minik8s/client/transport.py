"""What the REST client needs from an HTTP library, and the failures it tells apart.

:class:`~minik8s.client.rest.Client` speaks to the apiserver through a :class:`Transport`:
one request answered whole (:meth:`Transport.request`) or a response read as it arrives
(:meth:`Transport.stream`: watches, logs).  Two implement it:

* :class:`~minik8s.client.httpxtransport.HttpxTransport` (httpx's pooled async client): the
  components, which keep watches open for days and send hundreds of requests at once;
* :class:`~minik8s.client.stdlibtransport.StdlibTransport` (the standard library's
  ``http.client`` in worker threads): kubectl, which sends a handful of requests and exits, and
  so should not spend a third of its run importing httpx, httpcore and anyio.

Each maps its library's failures to the classes below, so the client's retry and fail-over
rules (and kubectl's "The connection to the server ... was refused") read the same with both:
a :class:`ConnectError` never reached the server, a :class:`ReadError` may have.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol


class TransportError(Exception):
    """The request failed below HTTP (no response, or a broken one)."""


class ConnectError(TransportError):
    """No connection could be opened (refused, unreachable, TLS handshake failed): nothing was sent."""


class ConnectTimeout(ConnectError):
    """Opening the connection took longer than the connect timeout: nothing was sent."""


class PoolTimeout(TransportError):
    """No connection of the pool became free in time: nothing was sent."""


class ReadError(TransportError):
    """The connection broke while the response was awaited or read: the server may have acted."""


class ReadTimeout(ReadError):
    """The response did not come within the timeout."""


class WriteError(TransportError):
    """The connection broke while the request was sent."""


class ProtocolError(ReadError):
    """The server closed the connection or answered something that is not HTTP/1.1."""


#: failures after which a request that never reached the server may be sent again
NEVER_SENT = (ConnectError, PoolTimeout)
#: failures the client retries (any request when NEVER_SENT, idempotent ones otherwise)
RETRIABLE = (ConnectError, PoolTimeout, ReadError, WriteError)


@dataclass
class Response:
    """A whole response: status, headers (names lower-case, in the order received) and body bytes."""

    status_code: int
    headers: list[tuple[str, str]] = field(default_factory=list)
    content: bytes = b""

    def header(self, name: str, default: str = "") -> str:
        """The first value of header ``name`` (case-insensitive), else ``default``."""
        name = name.lower()
        return next((v for k, v in self.headers if k == name), default)

    def header_list(self, name: str) -> list[str]:
        """Every value of header ``name`` (``Warning`` may come several times)."""
        name = name.lower()
        return [v for k, v in self.headers if k == name]

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")

    def json(self) -> Any:
        """The body as JSON; raises ValueError when it is not."""
        return json.loads(self.content)


class StreamResponse(Protocol):
    """A response whose body is read as it arrives (``Transfer-Encoding: chunked`` bodies)."""

    status_code: int

    async def read(self) -> Response:
        """The rest of the body, as a whole :class:`Response` (for an error status)."""

    def aiter_lines(self) -> AsyncIterator[str]:
        """The body line by line (watch events), without line ends."""

    def aiter_text(self) -> AsyncIterator[str]:
        """The body in UTF-8 text chunks as they come (logs)."""


class Transport(Protocol):
    """HTTP/1.1 to one apiserver at a time (:attr:`base_url`, which fail-over changes); every
    request carries the headers the transport was built with (credentials, ``Accept``)."""

    base_url: str

    async def request(self, method: str, path: str, *, params: dict[str, Any] | None = None,
                      content: bytes | None = None, headers: dict[str, str] | None = None,
                      timeout: float | None = None) -> Response:
        """Send one request and read the whole response; ``timeout`` (seconds) overrides the
        transport's for this request.  Raises :class:`TransportError` subclasses."""

    def stream(self, method: str, path: str, *, params: dict[str, Any] | None = None,
               headers: dict[str, str] | None = None) -> AbstractAsyncContextManager[StreamResponse]:
        """Send a request whose body is read as it arrives, with no read timeout (a watch waits for
        events indefinitely).  Raises :class:`TransportError` subclasses when entered or read."""

    async def aclose(self) -> None:
        """Close every connection."""
