"""Kubernetes' WebSocket channel protocol (``v5.channel.k8s.io``, ``v4.channel.k8s.io``): the
streams of ``exec`` and ``attach``, shared by the verbs that run them (``exec``, ``attach``, ``cp``).

Every binary frame starts with its channel byte: 0 stdin, 1 stdout, 2 stderr, 3 error (a JSON
``metav1.Status`` once the command ended), 4 resize (``{"Width": .., "Height": ..}``). In v5 the
client closes stdin by sending ``[255, 0]``. :func:`run_stream` relays a stream to and from local
files and returns the remote exit code.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import Iterator
from typing import IO, Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from minik8s.api import errors
from minik8s.client.kubeconfig import ClientConfig
from minik8s.client.rest import ServerUnavailable
from minik8s.kubectl.errors import KubectlError

STDIN, STDOUT, STDERR, ERROR, RESIZE = 0, 1, 2, 3, 4
CLOSE = 255
PROTOCOLS = ["v5.channel.k8s.io", "v4.channel.k8s.io"]


# ------------------------------------------------------------------ pure helpers
def ws_base(server: str) -> str:
    """The WebSocket form of the server URL: ``http`` → ``ws``, ``https`` → ``wss``."""
    parts = urlsplit(server.rstrip("/"))
    scheme = {"http": "ws", "https": "wss"}.get(parts.scheme, parts.scheme)
    return urlunsplit((scheme, parts.netloc, parts.path, "", ""))


def exec_url(server: str, namespace: str, pod: str, command: list[str], container: str | None = None,
             stdin: bool = False, tty: bool = False) -> str:
    """The exec URL: one ``command=`` per argument, then container, stdout/stderr/stdin/tty flags."""
    query: list[tuple[str, str]] = [("command", c) for c in command]
    if container:
        query.append(("container", container))
    query.append(("stdout", "true"))
    query.append(("stderr", "false" if tty else "true"))
    if stdin:
        query.append(("stdin", "true"))
    if tty:
        query.append(("tty", "true"))
    return f"{ws_base(server)}/api/v1/namespaces/{namespace}/pods/{pod}/exec?{urlencode(query)}"


def connect_options(config: ClientConfig) -> dict[str, Any]:
    """Keyword arguments for ``websockets`` connect: TLS context, bearer token and impersonation
    like the REST client."""
    kwargs: dict[str, Any] = {"subprotocols": list(PROTOCOLS), "max_size": None, "open_timeout": 10,
                              "compression": None}
    headers = [("Authorization", f"Bearer {config.token}")] if config.token else []
    headers += config.impersonation_headers()
    if headers:
        kwargs["additional_headers"] = headers
    if config.server.startswith("https"):
        kwargs["ssl"] = config.ssl_context()
    return kwargs


def parse_frame(data: bytes | str) -> tuple[int, bytes]:
    """``(channel, payload)`` of one binary frame (text frames count as stdout)."""
    if isinstance(data, str):
        return STDOUT, data.encode()
    if not data:
        return -1, b""
    return data[0], bytes(data[1:])


def stdin_frame(data: bytes) -> bytes:
    """A frame carrying ``data`` to the command's stdin."""
    return bytes([STDIN]) + data


def close_frame(channel: int = STDIN) -> bytes:
    """v5's close-channel frame (``[255, channel]``)."""
    return bytes([CLOSE, channel])


def resize_frame(width: int, height: int) -> bytes:
    """A terminal-size frame for channel 4."""
    return bytes([RESIZE]) + json.dumps({"Width": width, "Height": height}).encode()


def exit_code(payload: bytes) -> int:
    """The remote exit code from the error channel's Status.

    ``Success`` → 0; ``Failure`` with reason ``NonZeroExitCode`` → the ``ExitCode`` cause.
    Any other failure raises the matching APIError (or KubectlError for a non-JSON message).
    """
    text = payload.decode(errors="replace").strip()
    if not text:
        return 0
    try:
        status = json.loads(text)
    except ValueError:
        raise KubectlError(text) from None
    if not isinstance(status, dict):
        raise KubectlError(text)
    if status.get("status") == "Success":
        return 0
    if status.get("reason") == "NonZeroExitCode":
        for cause in (status.get("details") or {}).get("causes") or []:
            if cause.get("reason") == "ExitCode":
                try:
                    return int(cause.get("message"))
                except (TypeError, ValueError):
                    break
        return 1
    raise errors.from_status(int(status.get("code") or 500), {**status, "kind": "Status"})


# ------------------------------------------------------------------ terminal
@contextlib.contextmanager
def raw_terminal(fd: int, enabled: bool) -> Iterator[None]:
    """Put the terminal in raw mode for ``-it`` and restore it afterwards."""
    if not enabled or not os.isatty(fd):
        yield
        return
    import termios
    import tty

    saved = termios.tcgetattr(fd)
    try:
        tty.setraw(fd)
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def terminal_size() -> tuple[int, int] | None:
    """(columns, rows) of the controlling terminal, if there is one."""
    for fd in (1, 0, 2):
        try:
            size = os.get_terminal_size(fd)
            if size.columns and size.lines:
                return size.columns, size.lines
        except OSError:
            continue
    return None


# ------------------------------------------------------------------ session
async def _send_stdin(ws: Any, data: bytes) -> None:
    for start in range(0, len(data), 65536):
        await ws.send(stdin_frame(data[start:start + 65536]))
    if ws.subprotocol == "v5.channel.k8s.io":
        await ws.send(close_frame(STDIN))


async def _pump_stdin(ws: Any, protocol: str | None) -> None:
    loop = asyncio.get_running_loop()
    fd = sys.stdin.fileno()
    queue: asyncio.Queue[bytes] = asyncio.Queue()

    def readable() -> None:
        try:
            data = os.read(fd, 65536)
        except OSError:
            data = b""
        if not data:
            loop.remove_reader(fd)
        queue.put_nowait(data)

    try:
        loop.add_reader(fd, readable)
    except (PermissionError, OSError, ValueError):  # a regular file: read it whole
        data = sys.stdin.buffer.read()
        for start in range(0, len(data), 65536):
            await ws.send(stdin_frame(data[start:start + 65536]))
    else:
        try:
            while True:
                chunk = await queue.get()
                if not chunk:
                    break
                await ws.send(stdin_frame(chunk))
        finally:
            loop.remove_reader(fd)
    if protocol == "v5.channel.k8s.io":
        await ws.send(close_frame(STDIN))


async def run_stream(config: ClientConfig, url: str, stdin: bool | bytes, tty: bool,
                     stdout: IO[bytes] | None = None, stderr: IO[bytes] | None = None) -> int:
    """Run the stream of ``url`` (exec or attach), relaying stdin (``True``: this process' stdin;
    bytes: these, then stdin closed) and writing stdout and stderr to ``stdout`` and ``stderr``
    (default: this process'); returns the remote exit code (0 for an attach that ends)."""
    out = stdout if stdout is not None else sys.stdout.buffer
    err = stderr if stderr is not None else sys.stderr.buffer
    from websockets.asyncio.client import connect
    from websockets.exceptions import InvalidStatus, WebSocketException

    try:
        ws = await connect(url, **connect_options(config))
    except InvalidStatus as exc:
        raise KubectlError(f"unable to upgrade connection: HTTP {exc.response.status_code}") from None
    except (TimeoutError, OSError) as exc:
        raise ServerUnavailable(f"cannot reach {config.server}: {exc}") from exc
    except WebSocketException as exc:
        raise KubectlError(f"unable to upgrade connection: {exc}") from None
    code = 0
    tasks: list[asyncio.Task[Any]] = []
    loop = asyncio.get_running_loop()
    try:
        if isinstance(stdin, bytes):
            tasks.append(asyncio.create_task(_send_stdin(ws, stdin)))
        elif stdin:
            tasks.append(asyncio.create_task(_pump_stdin(ws, ws.subprotocol)))
        if tty:
            size = terminal_size()
            if size:
                await ws.send(resize_frame(*size))

            def resized() -> None:
                new = terminal_size()
                if new:
                    tasks.append(asyncio.create_task(ws.send(resize_frame(*new))))

            with contextlib.suppress(ValueError, RuntimeError):
                loop.add_signal_handler(signal.SIGWINCH, resized)
        try:
            async for message in ws:
                channel, payload = parse_frame(message)
                if channel == STDOUT:
                    out.write(payload)
                    out.flush()
                elif channel == STDERR:
                    err.write(payload)
                    err.flush()
                elif channel == ERROR:
                    code = exit_code(payload)
        except WebSocketException:
            pass
    finally:
        if tty:
            with contextlib.suppress(ValueError, RuntimeError):
                loop.remove_signal_handler(signal.SIGWINCH)
        for t in tasks:
            t.cancel()
        for t in tasks:
            with contextlib.suppress(BaseException):
                await t
        await ws.close()
    return code
