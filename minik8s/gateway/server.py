"""Serving the gateway with uvicorn, hostile-input safe.

Request heads are bounded in size (431) and time (the connection is closed) by
:func:`minik8s.serving.http.server_config`, as on every minik8s listener; bodies are bounded
in size and time by the application (:func:`minik8s.gateway.app.create_app`).
"""

from __future__ import annotations

from typing import Any

import uvicorn

from minik8s.serving.http import HEADER_TIMEOUT, server_config


def serve(app: Any, host: str, port: int, header_timeout: float = HEADER_TIMEOUT) -> uvicorn.Server:
    """A uvicorn server for ``app`` on ``host:port`` with bounded request heads (not started)."""
    config = server_config(app, host, port, header_timeout=header_timeout, timeout_keep_alive=5,
                           timeout_graceful_shutdown=5, backlog=2048)
    return uvicorn.Server(config)
