"""kubectl's error type and the one-line rendering of every failure (exit code 1, no traceback)."""

from __future__ import annotations

import sys
from urllib.parse import urlparse

from minik8s.api import errors
from minik8s.client.kubeconfig import InvalidConfiguration, KubeconfigError
from minik8s.client.rest import ServerUnavailable
from minik8s.client.transport import ConnectError, TransportError

#: client-go's words for an error answer that is not a Status (``NewGenericServerResponse``)
GENERIC_MESSAGES = {
    400: "the server rejected our request for an unknown reason",
    401: "the server has asked for the client to provide credentials",
    403: "the server does not allow access to the requested resource",
    404: "the server could not find the requested resource",
    405: "the server does not allow this method on the requested resource",
    409: "the server reported a conflict",
    422: "the server rejected our request due to an error in our request",
    429: "the server has received too many requests and has asked us to try again later",
    503: "the server is currently unable to handle the request",
    504: "the server was unable to return a response in the time allotted, but may still be processing the request",
}


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
    if isinstance(cause, ConnectError | ConnectionRefusedError) or \
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
    if isinstance(exc, TransportError | ConnectionError):
        return unreachable(server or "", exc), 1
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return f"error: {text}", 1


def report_failure(exc: errors.APIError, verb: str, source: str) -> None:
    """``Error from server (Reason): error when VERB "FILE": message`` on stderr."""
    prefix = server_error(exc).split(":", 1)[0]
    print(f'{prefix}: error when {verb} "{source}": {exc.message}', file=sys.stderr)


def invalid_message(exc: errors.Invalid) -> str:
    """kubectl's ``CheckErr`` words for a 422 Invalid: ``The request is invalid: MESSAGE`` without
    details, ``The KIND "NAME" is invalid: cause, ...`` with them (``Error from server`` is not said)."""
    details = exc.details or {}
    if not details:
        return f"The request is invalid: {exc.message}" if exc.message else "The request is invalid"
    head = "The request is invalid"
    if details.get("kind") or details.get("name"):
        head = f'The {details.get("kind", "")} "{details.get("name", "")}" is invalid'
    causes = [c for c in details.get("causes") or [] if isinstance(c, dict)]
    if not causes:
        return head
    texts = [f'{c["field"]}: {c.get("message", "")}' if c.get("field") else str(c.get("message", ""))
             for c in causes]
    if len(texts) == 1:
        return f"{head}: {texts[0]}"
    return f"{head}: \n" + "\n".join(f"* {t}" for t in texts)


def failure_line(exc: BaseException) -> str:
    """The stderr line(s) kubectl prints for one object's failure."""
    if isinstance(exc, errors.Invalid):
        return invalid_message(exc)
    return render(exc)[0]
