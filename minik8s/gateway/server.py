"""Serving the gateway with uvicorn, hostile-input safe.

h11 bounds the size of a request head (``h11_max_incomplete_event_size``, 16 KiB here: a
larger head is refused); :class:`DeadlineH11Protocol` adds what uvicorn lacks, a deadline for
receiving a request head (``header_timeout`` seconds from the connection, or from the end
of the previous response), after which the connection is closed — a client that trickles
its headers byte by byte cannot hold a connection forever.  Bodies are bounded in size and
time by the application (:func:`minik8s.gateway.app.create_app`).
"""

from __future__ import annotations

import asyncio
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

HEADER_TIMEOUT = 10.0
MAX_HEAD_BYTES = 16 * 1024


class DeadlineH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a request-head deadline."""

    header_timeout = HEADER_TIMEOUT

    def connection_made(self, transport: Any) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._deadline: asyncio.TimerHandle | None = None
        self._armed_for: Any = self.cycle
        self._arm()

    def _arm(self) -> None:
        self._disarm()
        self._armed_for = self.cycle
        self._deadline = self.loop.call_later(self.header_timeout, self._expired)

    def _disarm(self) -> None:
        deadline = getattr(self, "_deadline", None)
        if deadline is not None:
            deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        if self.cycle is self._armed_for and not self.transport.is_closing():
            self.transport.close()

    def handle_events(self) -> None:
        super().handle_events()
        if self.cycle is not self._armed_for:
            self._disarm()  # a complete request head arrived

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)


def serve(app: Any, host: str, port: int, header_timeout: float = HEADER_TIMEOUT) -> uvicorn.Server:
    """A uvicorn server for ``app`` on ``host:port`` with the bounded protocol (not started)."""
    protocol = type("BoundedH11Protocol", (DeadlineH11Protocol,), {"header_timeout": header_timeout})
    config = uvicorn.Config(app, host=host, port=port, http=protocol, log_level="warning", access_log=False,
                            timeout_keep_alive=5, timeout_graceful_shutdown=5,
                            h11_max_incomplete_event_size=MAX_HEAD_BYTES, backlog=2048)
    return uvicorn.Server(config)
