"""kubectl's transport (the standard library's ``http.client``) against a real HTTP/1.1 server on
loopback: queries and headers as sent, kept-alive connections and the resend on one the server
closed, the failures the client tells apart, and streams (lines, UTF-8 text, leaving early)."""

from __future__ import annotations

import asyncio
import json
import select
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from minik8s.client import transport
from minik8s.client.kubeconfig import ClientConfig
from minik8s.client.rest import Client, ServerUnavailable
from minik8s.client.stdlibtransport import StdlibTransport


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen: list[dict[str, object]] = []
    release = threading.Event()

    def log_message(self, *args: object) -> None:
        pass

    def _reply(self, status: int, body: bytes, ctype: str = "application/json",
               extra: list[tuple[str, str]] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for name, value in extra or []:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _chunks(self, parts: list[bytes], hold: bool = False) -> None:
        self.send_response(200)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for part in parts:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.flush()
        if hold:  # a watch with no more events: the client leaves
            Handler.release.wait(10)
            return
        self.wfile.write(b"0\r\n\r\n")

    def _record(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        Handler.seen.append({"method": self.command, "path": self.path, "body": self.rfile.read(length),
                             "groups": self.headers.get_all("Impersonate-Group"),
                             "accept": self.headers.get("Accept"), "port": self.client_address[1]})

    def do_GET(self) -> None:
        self._record()
        if self.path.startswith("/watch"):
            self._chunks([b'{"type":"ADDED"}\n{"type":', b'"MODIFIED"}\n'], hold="hold" in self.path)
        elif self.path == "/text":
            self._chunks(["héllo ".encode()[:2], "héllo ".encode()[2:], "wörld".encode()])
        elif self.path == "/slow":
            Handler.release.wait(10)
            self._reply(200, b"{}")
        elif self.path == "/missing":
            self._reply(404, json.dumps({"kind": "Status", "code": 404, "reason": "NotFound",
                                         "message": 'pods "x" not found'}).encode())
        elif self.path == "/close":
            self._reply(200, b"{}", extra=[("Connection", "close")])
            self.close_connection = True
        elif self.path == "/drop":  # kept alive as far as the client knows, then closed (an idle timeout)
            self._reply(200, b"{}")
            self.close_connection = True
        else:
            self._reply(200, b'{"ok":true}', extra=[("Warning", '299 - "first"'), ("Warning", '299 - "second"')])

    def do_POST(self) -> None:
        self._record()
        self._reply(201, b'{"created":true}')


@pytest.fixture
def server() -> Iterator[str]:
    Handler.seen = []
    Handler.release = threading.Event()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    Handler.release.set()
    httpd.shutdown()
    httpd.server_close()


def make(url: str, timeout: float = 10.0) -> StdlibTransport:
    return StdlibTransport(url, [("Accept", "application/json"), ("Impersonate-Group", "a"),
                                 ("Impersonate-Group", "b")], True, timeout)


async def test_request_query_headers_and_kept_alive_connection(server: str) -> None:
    t = make(server)
    resp = await t.request("GET", "/api/v1/pods", params={"labelSelector": "app in (a,b)", "limit": 5})
    again = await t.request("POST", "/api/v1/pods", content=b'{"x":1}', headers={"Accept": "text/plain"})
    await t.aclose()
    assert resp.status_code == 200 and resp.json() == {"ok": True}
    assert resp.header_list("warning") == ['299 - "first"', '299 - "second"']
    assert resp.header("Content-Type") == "application/json"
    first, second = Handler.seen
    assert first["path"] == "/api/v1/pods?labelSelector=app%20in%20%28a%2Cb%29&limit=5"
    assert first["groups"] == ["a", "b"] and first["accept"] == "application/json"
    assert second["body"] == b'{"x":1}' and second["accept"] == "text/plain"  # the request's header wins
    assert first["port"] == second["port"]  # one kept-alive connection
    assert again.status_code == 201


async def test_a_closed_connection_is_not_reused(server: str) -> None:
    t = make(server)
    await t.request("GET", "/close")
    await t.request("GET", "/x")
    await t.aclose()
    assert Handler.seen[0]["port"] != Handler.seen[1]["port"]


async def test_an_idle_connection_the_server_closed_is_not_used(server: str) -> None:
    t = make(server)
    await t.request("GET", "/drop")
    (_, idle), = t._idle  # noqa: SLF001 - wait until the server's close reaches the idle connection
    for _ in range(200):
        if select.select([idle.sock], [], [], 0.05)[0]:
            break
    resp = await t.request("POST", "/y", content=b"{}")
    await t.aclose()
    assert resp.status_code == 201 and [s["method"] for s in Handler.seen] == ["GET", "POST"]
    assert Handler.seen[0]["port"] != Handler.seen[1]["port"]


async def test_failures_are_the_transports() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, not listening: refused
        with pytest.raises(transport.ConnectError) as info:
            await make(f"http://127.0.0.1:{port}").request("GET", "/")
    assert isinstance(info.value.__cause__, ConnectionRefusedError)


async def test_a_response_that_does_not_come_is_a_read_timeout(server: str) -> None:
    t = make(server, timeout=0.3)
    with pytest.raises(transport.ReadTimeout):
        await t.request("GET", "/slow")
    await t.aclose()


async def test_the_client_names_an_unreachable_server_and_decodes_status() -> None:
    client = Client(ClientConfig(server="http://127.0.0.1:9"), retries=0, transport="stdlib")
    with pytest.raises(ServerUnavailable, match="cannot reach the apiserver at http://127.0.0.1:9: "
                                                "ConnectionRefusedError"):
        await client.request("GET", "/api")
    await client.close()


async def test_client_decodes_a_status_and_passes_warnings(server: str) -> None:
    from minik8s.api import errors

    warnings: list[str] = []
    client = Client(ClientConfig(server=server), transport="stdlib", warning_handler=warnings.append)
    assert await client.request("GET", "/ok") == {"ok": True}
    with pytest.raises(errors.NotFound, match='pods "x" not found'):
        await client.request("GET", "/missing")
    await client.close()
    assert warnings == ["first", "second"]


async def test_stream_lines_and_text(server: str) -> None:
    t = make(server)
    async with t.stream("GET", "/watch") as resp:
        lines = [line async for line in resp.aiter_lines()]
    async with t.stream("GET", "/text") as resp:
        text = "".join([chunk async for chunk in resp.aiter_text()])
    async with t.stream("GET", "/missing") as resp:
        whole = await resp.read()
    assert lines == ['{"type":"ADDED"}', '{"type":"MODIFIED"}']
    assert text == "héllo wörld"
    assert whole.status_code == 404 and whole.json()["reason"] == "NotFound"


async def test_leaving_a_stream_ends_its_blocked_read(server: str) -> None:
    t = make(server)

    def streams() -> list[threading.Thread]:
        return [th for th in threading.enumerate() if th.name.startswith("minik8s-stream")]

    async with t.stream("GET", "/watch-hold") as resp:
        lines = resp.aiter_lines()
        assert await lines.__anext__() == '{"type":"ADDED"}'
        assert await lines.__anext__() == '{"type":"MODIFIED"}'
        pending = asyncio.ensure_future(lines.__anext__())  # blocks: no more events
        done, _ = await asyncio.wait([pending], timeout=0.2)
        assert not done
        pending.cancel()
        assert streams()
    for _ in range(100):  # the stream's thread returns once its socket is shut down
        if not streams():
            break
        await asyncio.sleep(0.05)
    assert not streams()
