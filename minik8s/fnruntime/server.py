"""The function runtime: a small HTTP server that runs one user handler inside a function pod.

It runs with the Python 3 of the ``minik8s/python`` image and the standard library only (the
function controller ships this file in the Function's ConfigMap, beside the user's code, as
``.minik8s-runtime.py``).  Configuration comes from the environment:

``MINIK8S_FUNCTION_DIR`` (the code; default: this file's directory), ``MINIK8S_HANDLER``
(``module.function``, default ``main.handler``), ``MINIK8S_TIMEOUT_SECONDS`` (30),
``MINIK8S_PORT`` (8080), ``MINIK8S_MAX_BODY_BYTES`` (6 MiB), ``MINIK8S_DEPS_DIR`` (installed
requirements, put on ``sys.path`` when present), ``MINIK8S_FUNCTION_NAME``,
``MINIK8S_FUNCTION_NAMESPACE``, ``MINIK8S_REVISION`` (for the context).

HTTP interface:

* ``POST /`` (any path): the body is JSON (empty body: ``null``); the handler is called as
  ``handler(event, context)`` and its return value is sent back as JSON (200).  CloudEvents
  attributes arriving as ``ce-*`` headers (binary mode) are in ``context.cloudevent``.
* Errors are JSON ``{"error": <type>, "message": <text>}``: the handler raised → 500 with the
  exception's type and message (plus ``stack``), the server keeps serving; the handler ran
  longer than the timeout → 504 (its thread is left to finish; when more than
  ``MAX_STUCK`` calls are stuck the server reports itself unhealthy so the kubelet restarts
  it); a body over the limit → 413; a body that is not JSON → 400; a chunked body → 411;
  a result that is not JSON-serialisable → 500.
* ``GET /healthz``: 200 ``{"status": "ok"}`` once the handler is loaded (the readiness and
  liveness probes, and the gateway's own check), 503 when too many calls are stuck.

Hostile input: request line and headers are bounded by ``http.server`` (64 KiB lines, 100
headers); reading one request (line, headers and body) must finish within
``MINIK8S_READ_TIMEOUT_SECONDS`` (30) or the connection is closed; at most
``MAX_CONNECTIONS`` connections are served at once (others are closed at once).

On SIGTERM the server drains, as a pod being deleted must: ``/healthz`` answers 503 at once,
new calls are still served for ``MINIK8S_DRAIN_SECONDS`` (1; the gateway stops routing to a
terminating pod when it sees the deletion), and the process exits once no call is in flight
(at the latest after the timeout).

``python3 .minik8s-runtime.py --unpack PARTS_DIR TARGET`` is the init container of Functions
with requirements: it joins the parts of the requirements archive (``PARTS_DIR/<i>/deps.part``,
in order of ``i``) and unpacks the tar.gz into ``TARGET``.

Loading the handler happens before the server listens.  If it fails (a syntax error, an
import error, a missing function), one line ``minik8s-runtime: load failed: <Type>: <msg>``
(with ``line N`` for syntax errors) goes to stderr, the details to
``/dev/termination-log`` when writable, and the process exits with status 3.
"""

from __future__ import annotations

import http.server
import importlib
import io
import json
import os
import signal
import socket
import sys
import tarfile
import threading
import time
import traceback
import uuid
from typing import Any

EXIT_LOAD_FAILED = 3
MAX_STUCK = 16
MAX_CONNECTIONS = 256


def _env_number(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return default


class Context:
    """What a handler gets besides the event: the function's identity, the request id, the
    deadline (``remaining_seconds()``), the request headers and the CloudEvent attributes."""

    def __init__(self, request_id: str, timeout: float, headers: dict[str, str]) -> None:
        self.function_name = os.environ.get("MINIK8S_FUNCTION_NAME", "")
        self.namespace = os.environ.get("MINIK8S_FUNCTION_NAMESPACE", "")
        self.revision = os.environ.get("MINIK8S_REVISION", "")
        self.request_id = request_id
        self.timeout_seconds = timeout
        self.deadline = time.monotonic() + timeout
        self.headers = headers
        ce = {k[3:]: v for k, v in headers.items() if k.startswith("ce-")}
        self.cloudevent: dict[str, str] | None = ce or None

    def remaining_seconds(self) -> float:
        return max(0.0, self.deadline - time.monotonic())


def load_handler(code_dir: str, handler: str, deps_dir: str | None = None) -> Any:
    """Import ``module.function`` from ``code_dir`` (``deps_dir`` on the path as well); raises
    whatever importing raises, or AttributeError/TypeError for a missing or non-callable name."""
    module_name, _, func_name = handler.rpartition(".")
    if not module_name or not func_name:
        raise ValueError(f"handler {handler!r} is not module.function")
    for path in (deps_dir, code_dir):
        if path and os.path.isdir(path) and path not in sys.path:
            sys.path.insert(0, path)
    module = importlib.import_module(module_name)
    func = getattr(module, func_name, None)
    if func is None:
        raise AttributeError(f"module {module_name!r} has no function {func_name!r}")
    if not callable(func):
        raise TypeError(f"{handler} is not callable")
    return func


def describe_load_error(exc: BaseException) -> str:
    """One line: ``SyntaxError: invalid syntax (main.py, line 3)`` / ``ModuleNotFoundError: ...``."""
    if isinstance(exc, SyntaxError):
        where = f" ({os.path.basename(exc.filename or '?')}, line {exc.lineno})"
        return f"SyntaxError: {exc.msg}{where}"
    return f"{type(exc).__name__}: {exc}"


class _DeadlineSocketIO(io.RawIOBase):
    """Reads from a socket, never past ``deadline`` (monotonic seconds): bounds the total time
    spent reading one request, however slowly the client sends it."""

    def __init__(self, sock: socket.socket) -> None:
        super().__init__()
        self.sock = sock
        self.deadline = time.monotonic() + 3600

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("request not received in time")
        self.sock.settimeout(remaining)
        return self.sock.recv_into(buffer)


class Runtime:
    """The loaded handler plus the counters the health check reads."""

    def __init__(self, func: Any, timeout: float, max_body: int, read_timeout: float) -> None:
        self.func = func
        self.timeout = timeout
        self.max_body = max_body
        self.read_timeout = read_timeout
        self.lock = threading.Lock()
        self.stuck = 0
        self.connections = 0
        self.in_flight = 0
        self.draining = False

    def call(self, event: Any, context: Context) -> tuple[int, Any]:
        """Run the handler in a thread of its own; (status, JSON body)."""
        outcome: dict[str, Any] = {}
        done = threading.Event()

        def run() -> None:
            try:
                outcome["result"] = self.func(event, context)
            except BaseException as exc:  # noqa: BLE001 - reported to the caller
                outcome["error"] = exc
                outcome["stack"] = traceback.format_exc(limit=-8)
            finally:
                done.set()
                with self.lock:
                    if outcome.get("late"):
                        self.stuck -= 1

        with self.lock:
            self.in_flight += 1
        try:
            return self._wait(run, done, outcome, context)
        finally:
            with self.lock:
                self.in_flight -= 1

    def _wait(self, run: Any, done: threading.Event, outcome: dict[str, Any], context: Context) -> tuple[int, Any]:
        threading.Thread(target=run, name=f"call-{context.request_id}", daemon=True).start()
        if not done.wait(self.timeout):
            with self.lock:
                if not done.is_set():
                    outcome["late"] = True
                    self.stuck += 1
            if outcome.get("late"):
                return 504, {"error": "Timeout", "message": f"the handler ran longer than {self.timeout:g}s"}
        if "error" in outcome:
            exc = outcome["error"]
            sys.stderr.write(f"minik8s-runtime: request {context.request_id} failed:\n{outcome['stack']}")
            sys.stderr.flush()
            return 500, {"error": type(exc).__name__, "message": str(exc), "stack": outcome["stack"]}
        return 200, outcome.get("result")

    def healthy(self) -> bool:
        return self.stuck <= MAX_STUCK and not self.draining

    def drain(self, grace: float) -> None:
        """SIGTERM: report unhealthy, keep serving for ``grace`` seconds, exit when idle."""
        self.draining = True

        def wait_and_exit() -> None:
            time.sleep(grace)
            deadline = time.monotonic() + self.timeout
            while self.in_flight > self.stuck and time.monotonic() < deadline:
                time.sleep(0.05)
            sys.stderr.write("minik8s-runtime: drained, exiting\n")
            sys.stderr.flush()
            os._exit(0)

        threading.Thread(target=wait_and_exit, daemon=True).start()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "minik8s-function"
    runtime: Runtime

    def setup(self) -> None:
        super().setup()
        # headers and body leave in two writes: without TCP_NODELAY, Nagle's algorithm holds the
        # body until the client's delayed ACK (40 ms on Linux) for every keep-alive response
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._reader = _DeadlineSocketIO(self.connection)
        self.rfile = io.BufferedReader(self._reader, 65536)

    def handle_one_request(self) -> None:
        self._reader.deadline = time.monotonic() + self.runtime.read_timeout
        try:
            super().handle_one_request()
        except (TimeoutError, OSError):
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        """Quiet: one line per failed request is written by :meth:`Runtime.call`."""

    def _send(self, status: int, body: Any, close: bool = False) -> None:
        try:
            data = json.dumps(body).encode()
        except (TypeError, ValueError) as exc:
            status, data = 500, json.dumps({"error": "TypeError", "message": "the handler returned a value that "
                                            f"is not JSON serialisable: {exc}"}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        if self.path.split("?")[0] in ("/healthz", "/readyz"):
            if self.runtime.healthy():
                self._send(200, {"status": "ok"})
            elif self.runtime.draining:
                self._send(503, {"status": "draining", "message": "the instance is shutting down"})
            else:
                self._send(503, {"status": "unhealthy", "message": f"{self.runtime.stuck} calls are stuck"})
            return
        self._send(405, {"error": "MethodNotAllowed", "message": "call the function with POST"})

    do_HEAD = do_GET  # noqa: N815

    def do_POST(self) -> None:  # noqa: N802
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            self._send(411, {"error": "LengthRequired", "message": "send the body with a Content-Length"}, close=True)
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
            if length < 0:
                raise ValueError
        except ValueError:
            self._send(400, {"error": "BadRequest", "message": "invalid Content-Length"}, close=True)
            return
        if length > self.runtime.max_body:
            self._send(413, {"error": "PayloadTooLarge",
                             "message": f"the body has {length} bytes; the limit is {self.runtime.max_body}"},
                       close=True)
            return
        body = self.rfile.read(length) if length else b""
        if len(body) < length:
            self.close_connection = True
            return
        try:
            event = json.loads(body) if body.strip() else None
        except ValueError as exc:
            self._send(400, {"error": "BadRequest", "message": f"the body is not JSON: {exc}"})
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        request_id = headers.get("x-request-id") or uuid.uuid4().hex
        status, result = self.runtime.call(event, Context(request_id, self.runtime.timeout, headers))
        self._send(status, result)

    def do_PUT(self) -> None:  # noqa: N802
        self._send(405, {"error": "MethodNotAllowed", "message": "call the function with POST"})

    do_DELETE = do_PATCH = do_PUT  # noqa: N815


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128
    runtime: Runtime

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.runtime.lock:
            if self.runtime.connections >= MAX_CONNECTIONS:
                self.shutdown_request(request)
                return
            self.runtime.connections += 1
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self.runtime.lock:
                self.runtime.connections -= 1


def serve(host: str = "0.0.0.0", port: int | None = None, ready: threading.Event | None = None) -> None:
    """Load the handler from the environment's settings, then serve forever (exit 3 on a load failure)."""
    code_dir = os.environ.get("MINIK8S_FUNCTION_DIR") or os.path.dirname(os.path.abspath(__file__))
    handler = os.environ.get("MINIK8S_HANDLER") or "main.handler"
    try:
        func = load_handler(code_dir, handler, os.environ.get("MINIK8S_DEPS_DIR"))
    except BaseException as exc:  # noqa: BLE001 - any load failure ends the process with a clear line
        line = describe_load_error(exc)
        sys.stderr.write(traceback.format_exc())
        sys.stderr.write(f"minik8s-runtime: load failed: {line}\n")
        sys.stderr.flush()
        try:
            with open("/dev/termination-log", "w") as f:
                f.write(line)
        except OSError:
            pass
        sys.exit(EXIT_LOAD_FAILED)
    runtime = Runtime(func, _env_number("MINIK8S_TIMEOUT_SECONDS", 30), int(_env_number("MINIK8S_MAX_BODY_BYTES",
                                                                                          6 * 1024 * 1024)),
                      _env_number("MINIK8S_READ_TIMEOUT_SECONDS", 30))
    Handler.runtime = runtime
    Server.runtime = runtime
    listen_port = port if port is not None else int(_env_number("MINIK8S_PORT", 8080))
    httpd = Server((host, listen_port), Handler)
    grace = _env_number("MINIK8S_DRAIN_SECONDS", 1)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda signum, frame: runtime.drain(grace))
    sys.stderr.write(f"minik8s-runtime: serving {handler} from {code_dir} on {host}:{httpd.server_address[1]}\n")
    sys.stderr.flush()
    if ready is not None:
        ready.set()
    httpd.serve_forever(poll_interval=0.5)


def unpack(parts_dir: str, target: str) -> None:
    """Join ``parts_dir/<i>/deps.part`` (i = 0, 1, ...) and unpack the tar.gz into ``target``."""
    parts = sorted((int(d), d) for d in os.listdir(parts_dir) if d.isdigit())
    os.makedirs(target, exist_ok=True)
    archive = os.path.join(target, ".deps.tar.gz")
    with open(archive, "wb") as out:
        for _, d in parts:
            with open(os.path.join(parts_dir, d, "deps.part"), "rb") as part:
                out.write(part.read())
    with tarfile.open(archive, "r:gz") as tar:
        try:
            tar.extractall(target, filter="data")
        except TypeError:  # a Python without extraction filters (before 3.11.4): check by hand
            for member in tar.getmembers():
                if member.name.startswith("/") or ".." in member.name.split("/") or not (
                        member.isfile() or member.isdir() or member.issym()):
                    raise ValueError(f"unsafe member {member.name!r} in the requirements archive") from None
            tar.extractall(target)
    os.unlink(archive)
    sys.stderr.write(f"minik8s-runtime: unpacked {len(parts)} part(s) of requirements into {target}\n")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--unpack":
        unpack(sys.argv[2], sys.argv[3])
    else:
        serve()
