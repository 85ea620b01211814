"""Running system commands (iptables, ip, modprobe) with bounded time and one error type."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable

from minik8s.proxy.errors import CommandError

#: ``runner(argv, stdin=None) -> stdout``: how the proxy runs commands (tests pass fakes).
Runner = Callable[..., str]


def ensure_sysctl(key: str, value: str) -> str | None:
    """Set ``/proc/sys/<key>`` (``net/ipv4/conf/all/route_localnet``) to ``value`` unless it already
    is; returns None when it is set, else why it could not be (missing, not writable)."""
    path = f"/proc/sys/{key}"
    try:
        with open(path) as fh:
            if fh.read().strip() == value:
                return None
        with open(path, "w") as fh:
            fh.write(value)
    except OSError as exc:
        return f"{key.replace('/', '.')}: {exc.strerror or exc}"
    return None


def run(argv: list[str], stdin: str | None = None, timeout: float = 30.0) -> str:
    """Run ``argv`` to completion (at most ``timeout`` seconds); return its stdout.

    Raises :class:`CommandError` when the command is missing, times out or exits non-zero.
    """
    if shutil.which(argv[0]) is None:
        raise CommandError(argv, 127, f"{argv[0]}: command not found")
    try:
        proc = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        raise CommandError(argv, -1, f"timed out after {timeout:.0f}s") from exc
    if proc.returncode != 0:
        raise CommandError(argv, proc.returncode, proc.stderr or proc.stdout)
    return proc.stdout
