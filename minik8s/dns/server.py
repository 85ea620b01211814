"""The DNS server: UDP and TCP on one address and port, packets parsed and built by dnslib.

Each query (opcode QUERY, one question) is answered by a :class:`~minik8s.dns.records.ClusterZone`
(authoritative answer, ``AA`` set).  A name that is not the zone's is REFUSED, or — only
with forwarding enabled (``minik8s dns --forward``) — relayed unchanged to the upstream
resolvers (``/etc/resolv.conf``'s ``nameserver`` lines or ``--upstream``), tried in order
with a timeout each, over the transport the client used; SERVFAIL when none answers.
Forwarding is off by default: nothing leaves the machine unless asked for.

UDP replies larger than the client's limit (512 bytes, or its EDNS0 payload size) are
truncated with ``TC`` set, so the client retries over TCP (RFC 1035, RFC 6891).  TCP
messages carry a 2-byte length prefix (RFC 1035 4.2.2); a connection serves queries until
the client closes it or is idle for ``tcp_idle_timeout`` seconds.  Unparseable packets get
FORMERR when their header can be read, other opcodes NOTIMP.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import ipaddress
import logging
import struct
from pathlib import Path

from dnslib import EDNS0, OPCODE, QTYPE, RCODE, DNSError, DNSHeader, DNSRecord
from dnslib.buffer import Buffer

from minik8s.dns.records import ClusterZone

log = logging.getLogger("dns")

UDP_LIMIT = 512
MAX_UDP_LIMIT = 4096


def parse_resolv_conf(text: str) -> list[str]:
    """The ``nameserver`` addresses of a resolv.conf text, in order (invalid ones skipped)."""
    servers = []
    for line in text.splitlines():
        parts = line.split("#", 1)[0].split(";", 1)[0].split()
        if len(parts) >= 2 and parts[0] == "nameserver":
            try:
                servers.append(str(ipaddress.ip_address(parts[1])))
            except ValueError:
                continue
    return servers


def parse_upstream(value: str, default_port: int = 53) -> tuple[str, int]:
    """``1.2.3.4`` or ``1.2.3.4:5353`` → ``(host, port)``; raises ValueError."""
    host, sep, port = value.rpartition(":")
    if not sep or "." not in host:
        host, port = value, str(default_port)
    ipaddress.ip_address(host)
    number = int(port)
    if not 0 < number < 65536:
        raise ValueError(f"port {number} out of range")
    return host, number


def upstreams_from(resolv_conf: str | Path, exclude: set[str]) -> list[tuple[str, int]]:
    """Upstream resolvers from a resolv.conf file, without the addresses in ``exclude`` (this
    server's own, the cluster DNS IP: forwarding to them would loop).  Missing file: []."""
    try:
        text = Path(resolv_conf).read_text()
    except OSError as exc:
        log.warning("dns cannot read %s: %s", resolv_conf, exc)
        return []
    return [(ip, 53) for ip in parse_resolv_conf(text) if ip not in exclude]


def _udp_limit(request: DNSRecord) -> int:
    """The reply size the client accepts over UDP (EDNS0 OPT's payload size, at least 512)."""
    for rr in request.ar:
        if rr.rtype == QTYPE.OPT:
            return max(UDP_LIMIT, min(int(rr.rclass), MAX_UDP_LIMIT))
    return UDP_LIMIT


class DNSServer:
    """Serves ``zone`` on ``host:port`` over UDP and TCP.

    ``upstreams`` (``(ip, port)`` pairs) are used only when ``forward`` is True; each is
    given ``forward_timeout`` seconds.  ``queries`` counts answered queries (tests, logs).
    """

    def __init__(self, zone: ClusterZone, host: str = "127.0.0.1", port: int = 53, *, forward: bool = False,
                 upstreams: list[tuple[str, int]] | None = None, forward_timeout: float = 2.0,
                 tcp_idle_timeout: float = 10.0) -> None:
        self.zone = zone
        self.host = host
        self.port = port
        self.forward = forward
        self.upstreams = list(upstreams or [])
        self.forward_timeout = forward_timeout
        self.tcp_idle_timeout = tcp_idle_timeout
        self.queries = 0
        self._transport: asyncio.DatagramTransport | None = None
        self._tcp: asyncio.Server | None = None

    # ------------------------------------------------------------------ lifecycle
    async def start(self, attempts: int = 20) -> None:
        """Bind UDP and TCP on the same port (port 0: an ephemeral UDP port whose number is also
        free for TCP, tried up to ``attempts`` times); raises OSError (e.g. EADDRNOTAVAIL,
        EADDRINUSE) when it cannot."""
        loop = asyncio.get_running_loop()
        wanted = self.port
        for attempt in range(attempts):
            transport, _ = await loop.create_datagram_endpoint(lambda: _UDPProtocol(self),
                                                               local_addr=(self.host, wanted))
            port = transport.get_extra_info("sockname")[1]
            try:
                self._tcp = await asyncio.start_server(self._serve_tcp, self.host, port, reuse_address=True)
            except OSError as exc:
                transport.close()
                if wanted != 0 or exc.errno != errno.EADDRINUSE or attempt == attempts - 1:
                    raise
                continue  # the ephemeral UDP port is taken for TCP: another one
            self._transport, self.port = transport, port
            break
        log.info("dns serving %s:%d (udp, tcp) forward=%s", self.host, self.port,
                 ",".join(f"{h}:{p}" for h, p in self.upstreams) if self.forward else "off")

    async def start_retrying(self, stop: asyncio.Event, delay: float = 1.0) -> bool:
        """:meth:`start`, retried every ``delay`` seconds while the address does not exist yet
        (the pod bridge appears when the kubelet creates it); False when ``stop`` was set first.
        Other bind errors are raised."""
        warned = False
        while not stop.is_set():
            try:
                await self.start()
                return True
            except OSError as exc:
                if exc.errno != errno.EADDRNOTAVAIL:
                    raise
                if not warned:
                    log.warning("dns address %s does not exist yet; retrying every %.0fs", self.host, delay)
                    warned = True
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), delay)
        return False

    async def close(self) -> None:
        if self._transport is not None:
            self._transport.close()
        if self._tcp is not None:
            self._tcp.close()
            await self._tcp.wait_closed()

    # ------------------------------------------------------------------ queries
    async def handle(self, data: bytes, tcp: bool) -> bytes | None:
        """The reply to one query message (None: drop it, its header cannot even be read)."""
        try:
            request = DNSRecord.parse(data)
        except (DNSError, struct.error, IndexError, ValueError):
            try:
                header = DNSHeader.parse(Buffer(data))
            except Exception:  # noqa: BLE001 - garbage: drop
                return None
            return DNSRecord(DNSHeader(id=header.id, qr=1, rcode=RCODE.FORMERR)).pack()  # type: ignore[no-any-return]
        reply = request.reply(ra=1 if self.forward else 0, aa=1)
        if request.header.opcode != OPCODE.QUERY:
            reply.header.aa = 0
            reply.header.rcode = RCODE.NOTIMP
            return self._pack(request, reply, tcp)
        if len(request.questions) != 1:
            reply.header.aa = 0
            reply.header.rcode = RCODE.FORMERR
            return self._pack(request, reply, tcp)
        question = request.q
        answer = self.zone.answer(str(question.qname), question.qtype)
        self.queries += 1
        if answer is None:
            if self.forward and self.upstreams:
                return await self._forward(data, request, tcp)
            reply.header.aa = 0
            reply.header.rcode = RCODE.REFUSED
            return self._pack(request, reply, tcp)
        reply.header.rcode = answer.rcode
        for rr in answer.answers:
            reply.add_answer(rr)
        for rr in answer.authority:
            reply.add_auth(rr)
        for rr in answer.additional:
            reply.add_ar(rr)
        if any(rr.rtype == QTYPE.OPT for rr in request.ar):
            reply.add_ar(EDNS0(udp_len=MAX_UDP_LIMIT))  # RFC 6891: answer EDNS with EDNS
        log.debug("dns %s %s -> %s (%d answers)", question.qname, QTYPE.get(question.qtype),
                  RCODE.get(answer.rcode), len(answer.answers))
        return self._pack(request, reply, tcp)

    @staticmethod
    def _pack(request: DNSRecord, reply: DNSRecord, tcp: bool) -> bytes:
        packed: bytes = reply.pack()
        if tcp or len(packed) <= _udp_limit(request):
            return packed
        truncated = reply.truncate()
        result: bytes = truncated.pack()
        return result

    async def _forward(self, data: bytes, request: DNSRecord, tcp: bool) -> bytes:
        """Relay the raw query to each upstream in turn; SERVFAIL when none answers in time."""
        for host, port in self.upstreams:
            try:
                if tcp:
                    return await asyncio.wait_for(_tcp_exchange(host, port, data), self.forward_timeout)
                return await asyncio.wait_for(_udp_exchange(host, port, data), self.forward_timeout)
            except (TimeoutError, OSError, asyncio.IncompleteReadError) as exc:
                log.warning("dns upstream %s:%d failed for %s: %s", host, port, request.q.qname,
                            type(exc).__name__)
        reply = request.reply(ra=1)
        reply.header.rcode = RCODE.SERVFAIL
        return self._pack(request, reply, tcp)

    async def _serve_tcp(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                try:
                    head = await asyncio.wait_for(reader.readexactly(2), self.tcp_idle_timeout)
                    (length,) = struct.unpack("!H", head)
                    data = await asyncio.wait_for(reader.readexactly(length), self.tcp_idle_timeout)
                except (TimeoutError, asyncio.IncompleteReadError, ConnectionError):
                    return
                reply = await self.handle(data, tcp=True)
                if reply is None:
                    return
                writer.write(struct.pack("!H", len(reply)) + reply)
                await writer.drain()
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()


class _UDPProtocol(asyncio.DatagramProtocol):
    def __init__(self, server: DNSServer) -> None:
        self.server = server
        self.transport: asyncio.DatagramTransport | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        task = asyncio.get_running_loop().create_task(self._reply(data, addr))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _reply(self, data: bytes, addr: tuple[str, int]) -> None:
        try:
            reply = await self.server.handle(data, tcp=False)
        except Exception:  # noqa: BLE001 - one bad query must not stop the server
            log.exception("dns failed to answer a query from %s", addr[0])
            return
        if reply is not None and self.transport is not None:
            self.transport.sendto(reply, addr)


class _Exchange(asyncio.DatagramProtocol):
    def __init__(self) -> None:
        self.reply: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        if not self.reply.done():
            self.reply.set_result(data)

    def error_received(self, exc: Exception) -> None:
        if not self.reply.done():
            self.reply.set_exception(exc)


async def _udp_exchange(host: str, port: int, data: bytes) -> bytes:
    transport, protocol = await asyncio.get_running_loop().create_datagram_endpoint(
        _Exchange, remote_addr=(host, port))
    try:
        transport.sendto(data)
        return await protocol.reply
    finally:
        transport.close()


async def _tcp_exchange(host: str, port: int, data: bytes) -> bytes:
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(struct.pack("!H", len(data)) + data)
        await writer.drain()
        (length,) = struct.unpack("!H", await reader.readexactly(2))
        return await reader.readexactly(length)
    finally:
        writer.close()
