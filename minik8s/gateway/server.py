"""Serving the gateway with uvicorn, hostile-input safe, on one or more listening sockets.

Request heads are bounded in size (431) and time (the connection is closed) by
:func:`minik8s.serving.http.server_config`, as on every minik8s listener; bodies are bounded
in size and time by the application (:func:`minik8s.gateway.app.create_app`).  The gateway
listens on ``--bind-address`` and, for pods, on ``--pod-address`` (:func:`listen_socket`), and
publishes itself as the Service :data:`SERVICE_NAMESPACE`/:data:`SERVICE_NAME`
(:mod:`minik8s.client.registration`), re-checked every :data:`REGISTER_PERIOD` seconds.
"""

from __future__ import annotations

import socket
from typing import Any

import uvicorn

from minik8s.serving.http import HEADER_TIMEOUT, server_config

SERVICE_NAMESPACE = "kube-system"
SERVICE_NAME = "minik8s-gateway"
REGISTER_PERIOD = 30.0
BACKLOG = 2048


def serve(app: Any, host: str, port: int, header_timeout: float = HEADER_TIMEOUT) -> uvicorn.Server:
    """A uvicorn server for ``app`` on ``host:port`` with bounded request heads (not started;
    ``serve(sockets=...)`` serves on sockets of :func:`listen_socket` instead)."""
    config = server_config(app, host, port, header_timeout=header_timeout, timeout_keep_alive=5,
                           timeout_graceful_shutdown=5, backlog=BACKLOG)
    return uvicorn.Server(config)


def listen_socket(host: str, port: int, freebind: bool = False) -> socket.socket:
    """A listening TCP socket on ``host:port`` (SO_REUSEADDR, TCP_NODELAY).  ``freebind``: bind even while the
    address does not exist yet (Linux ``IP_FREEBIND``, systemd's ``FreeBind=``): the pod bridge's
    address appears when the kubelet creates the pod network.  OSError when it cannot bind."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # accepted connections inherit it: uvloop sets TCP_NODELAY only on sockets it made itself,
        # and without it a response's head and body (two writes) wait out the peer's delayed
        # ACK — 40 ms a call
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if freebind:
            sock.setsockopt(socket.SOL_IP, getattr(socket, "IP_FREEBIND", 15), 1)
        sock.bind((host, port))
        sock.listen(BACKLOG)
        sock.set_inheritable(True)
    except OSError:
        sock.close()
        raise
    return sock
