"""kubectl's error type and the one-line rendering of every failure (exit code 1, no traceback)."""

from __future__ import annotations

import sys
from urllib.parse import urlparse

import httpx

from minik8s.api import errors
from minik8s.client.kubeconfig import InvalidConfiguration, KubeconfigError
from minik8s.client.rest import ServerUnavailable


class KubectlError(Exception):
    """A client-side failure, shown as ``error: <message>`` (exit code ``code``, default 1)."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class FlagError(KubectlError):
    """A flag value pflag cannot parse (``invalid argument "abc" for "--port" flag: ...``), shown as
    kubectl 1.32 shows cobra's flag errors: ``Error: <message>`` and ``See '<command> --help' for
    usage.``; ``command_path`` is the running command's (``kubectl create deployment``)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.command_path = _command_path()


def _command_path() -> str:
    """The running command's path (``kubectl create deployment``), or ``kubectl`` outside one."""
    try:  # typer runs its commands under the click it vendors
        from typer._click.globals import get_current_context
    except ImportError:  # pragma: no cover - a typer that uses click itself
        from click import get_current_context  # type: ignore[no-redef]
    ctx = get_current_context(silent=True)
    return ctx.command_path if ctx is not None else "kubectl"


def server_address(server: str) -> str:
    """``host:port`` of a server URL (``http://127.0.0.1:6443`` -> ``127.0.0.1:6443``)."""
    url = urlparse(server)
    if url.hostname is None:
        return server
    port = url.port or (443 if url.scheme == "https" else 80)
    host = f"[{url.hostname}]" if ":" in url.hostname else url.hostname
    return f"{host}:{port}"


def unreachable(server: str, cause: BaseException | None) -> str:
    """kubectl's words for a server that cannot be reached."""
    if isinstance(cause, httpx.ConnectError | ConnectionRefusedError) or \
            "refused" in str(cause or "").lower():
        return (f"The connection to the server {server_address(server)} was refused - "
                "did you specify the right host or port?")
    return f"Unable to connect to the server: {str(cause) or type(cause).__name__}"


def server_error(exc: errors.APIError) -> str:
    """``Error from server (Reason): message`` as kubectl prints a Status failure."""
    reason = type(exc).reason if type(exc) is not errors.APIError else ""
    if reason:
        return f"Error from server ({reason}): {exc.message}"
    return f"Error from server: {exc.message}"


def render(exc: BaseException, server: str | None = None) -> tuple[str, int]:
    """The single stderr line and the exit code for ``exc``."""
    if isinstance(exc, FlagError):
        return f"Error: {exc.message}\nSee '{exc.command_path} --help' for usage.", exc.code
    if isinstance(exc, KubectlError):
        return f"error: {exc.message}", exc.code
    if isinstance(exc, ServerUnavailable):
        return unreachable(server or "", exc.__cause__), 1
    if isinstance(exc, errors.APIError):
        return server_error(exc), 1
    if isinstance(exc, InvalidConfiguration):
        return f"Error in configuration: {exc}", 1
    if isinstance(exc, KubeconfigError):
        return f"error: {exc}", 1
    if isinstance(exc, httpx.TransportError | ConnectionError):
        return unreachable(server or "", exc), 1
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return f"error: {text}", 1


def report_failure(exc: errors.APIError, verb: str, source: str) -> None:
    """``Error from server (Reason): error when VERB "FILE": message`` on stderr."""
    prefix = server_error(exc).split(":", 1)[0]
    print(f'{prefix}: error when {verb} "{source}": {exc.message}', file=sys.stderr)
