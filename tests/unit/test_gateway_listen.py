"""The gateway's listening sockets: connections they accept send small writes at once
(TCP_NODELAY), so a response's head and body never wait out a delayed ACK (40 ms a call)."""

from __future__ import annotations

import socket

from minik8s.gateway.server import listen_socket


def test_accepted_connections_have_tcp_nodelay() -> None:
    server = listen_socket("127.0.0.1", 0)
    try:
        client = socket.create_connection(server.getsockname()[:2], timeout=5)
        conn, _ = server.accept()
        with client, conn:
            assert conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    finally:
        server.close()


def test_freebind_binds_an_address_that_does_not_exist_yet() -> None:
    server = listen_socket("10.255.254.1", 0, freebind=True)  # bound, never connected to
    try:
        assert server.getsockname()[0] == "10.255.254.1"
    finally:
        server.close()
