"""The health check node ports of LoadBalancer Services with ``externalTrafficPolicy: Local``
(kube-proxy's service health servers, ``pkg/proxy/healthcheck``).

A cloud load balancer sends such a Service's traffic only to nodes that have endpoints of it: it asks
every node ``GET http://<node>:<healthCheckNodePort>/`` and keeps the nodes that answer 200.  The proxy
runs one small HTTP server per health check node port (:class:`HealthCheckServers`), answering every
request, whatever its path, as kube-proxy does::

    200 (this node has ready endpoints of the Service) or 503 (none, or the proxy is not healthy)
    Content-Type: application/json
    X-Content-Type-Options: nosniff
    X-Load-Balancing-Endpoint-Weight: <local endpoints>

    {"service": {"namespace": "<ns>", "name": "<name>"}, "localEndpoints": <n>, "serviceProxyHealthy": <bool>}

(the body is indented with tabs, as kube-proxy writes it).  A server listens on the addresses the
NodePorts answer on (``--nodeport-addresses``; every address without it), opens when the Service gets
its port and closes when it loses it.  Hostile clients are bounded: a request head larger than
:data:`MAX_REQUEST_BYTES` or slower than :data:`REQUEST_TIMEOUT` seconds is dropped, and at most
:data:`MAX_CONNECTIONS` connections are served at once (others are closed at once).  A port that cannot
be opened (taken by someone else) is logged and tried again at the next sync.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from minik8s.proxy.servicemap import HealthCheck

log = logging.getLogger("proxy")

#: the largest request head read (request line and headers); a larger one is dropped
MAX_REQUEST_BYTES = 4096
#: seconds a client has to send its request head
REQUEST_TIMEOUT = 5.0
#: connections served at once over all health check ports
MAX_CONNECTIONS = 64


def response(check: HealthCheck, healthy: bool) -> bytes:
    """The whole HTTP/1.1 response for ``check`` (200 with local endpoints and a healthy proxy, else 503)."""
    ok = healthy and check.local_endpoints > 0
    body = json.dumps({"service": {"namespace": check.namespace, "name": check.name},
                       "localEndpoints": check.local_endpoints, "serviceProxyHealthy": healthy}, indent="\t")
    head = [f"HTTP/1.1 {'200 OK' if ok else '503 Service Unavailable'}",
            "Content-Type: application/json", "X-Content-Type-Options: nosniff",
            f"X-Load-Balancing-Endpoint-Weight: {check.local_endpoints}",
            f"Content-Length: {len(body.encode())}", "Connection: close"]
    return ("\r\n".join(head) + "\r\n\r\n" + body).encode()


@dataclass
class _Server:
    check: HealthCheck
    server: asyncio.Server


class HealthCheckServers:
    """One HTTP server per health check node port, on ``addresses`` (None: every address).

    :meth:`sync` opens and closes servers to match the latest health checks and updates what they
    answer; :meth:`close` stops them all.  Runs in the proxy's event loop.
    """

    def __init__(self) -> None:
        self.servers: dict[int, _Server] = {}
        self.healthy = False
        self._addresses: tuple[str, ...] | None = None
        self._slots = asyncio.Semaphore(MAX_CONNECTIONS)

    async def sync(self, checks: dict[int, HealthCheck], healthy: bool, addresses: list[str] | None) -> None:
        """Serve ``checks`` (keyed by port) on ``addresses``; ``healthy``: whether the proxy's last sync
        worked (kube-proxy's ``serviceProxyHealthy``)."""
        self.healthy = healthy
        bind = tuple(addresses) if addresses is not None else None
        if bind != self._addresses:  # the node's addresses changed: listen again everywhere
            await self.close()
            self._addresses = bind
        for port in [p for p in self.servers if p not in checks]:
            await self._stop(port)
        for port, check in checks.items():
            if port in self.servers:
                self.servers[port].check = check
                continue
            if bind == ():
                continue  # no address to listen on
            try:
                server = await asyncio.start_server(self._client_for(port), host=list(bind) if bind else None,
                                                    port=port, reuse_address=True, limit=MAX_REQUEST_BYTES)
            except OSError as exc:
                log.error("health check node port %d of service %s/%s: cannot listen: %s", port, check.namespace,
                          check.name, exc)
                continue
            self.servers[port] = _Server(check, server)
            log.info("health check node port %d of service %s/%s: listening", port, check.namespace, check.name)

    async def _stop(self, port: int) -> None:
        entry = self.servers.pop(port)
        entry.server.close()
        await entry.server.wait_closed()
        log.info("health check node port %d of service %s/%s: closed", port, entry.check.namespace,
                 entry.check.name)

    async def close(self) -> None:
        """Stop every server."""
        for port in list(self.servers):
            await self._stop(port)

    def _client_for(self, port: int) -> Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]:
        async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await self._serve(port, reader, writer)
        return client

    async def _serve(self, port: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._slots.locked():  # too many at once: close this one without reading it
            writer.close()
            return
        async with self._slots:
            try:
                await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), REQUEST_TIMEOUT)
                entry = self.servers.get(port)
                if entry is not None:
                    writer.write(response(entry.check, self.healthy))
                    await asyncio.wait_for(writer.drain(), REQUEST_TIMEOUT)
            except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
                pass  # slow, short, oversized or gone: dropped
            finally:
                writer.close()
