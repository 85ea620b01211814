"""Host commands (``ip``, ``bridge``, ``iptables``, ``modprobe``), bounded in time.

Everything an agent changes in the host's routing table, links and netfilter goes through a
:data:`Runner`, so the same code can be pointed at another network namespace
(:func:`netns_runner`, used by the tests to stand for a second machine) or at a fake.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from typing import Any

from minik8s.host.errors import CommandFailed

#: ``runner(argv, stdin=None) -> stdout``; raises :class:`~minik8s.host.errors.CommandFailed`.
Runner = Callable[..., str]
COMMAND_TIMEOUT_SECONDS = 30.0


def run(argv: list[str], stdin: str | None = None, timeout: float = COMMAND_TIMEOUT_SECONDS) -> str:
    """Run ``argv`` on this host to completion (at most ``timeout`` seconds), feeding it ``stdin``;
    returns its stdout.

    Raises CommandFailed: exit code 127 for a missing program, -1 for a time-out, else the
    command's own exit code.
    """
    try:
        proc = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=timeout, check=False)
    except FileNotFoundError as exc:
        raise CommandFailed(argv, 127, f"{argv[0]}: command not found") from exc
    except subprocess.TimeoutExpired as exc:
        raise CommandFailed(argv, -1, f"timed out after {timeout:g}s") from exc
    if proc.returncode != 0:
        raise CommandFailed(argv, proc.returncode, proc.stderr or proc.stdout)
    return proc.stdout


def netns_runner(netns: str, inner: Runner = run) -> Runner:
    """A runner that runs every command inside the named network namespace (``ip netns exec``)."""
    def run_in(argv: list[str], stdin: str | None = None) -> str:
        wrapped = ["ip", "netns", "exec", netns, *argv]
        return inner(wrapped) if stdin is None else inner(wrapped, stdin=stdin)
    return run_in


def run_json(runner: Runner, argv: list[str]) -> list[dict[str, Any]]:
    """Run an iproute2 command with ``-j`` output; returns the parsed list (empty output → [])."""
    out = runner(argv).strip()
    if not out:
        return []
    data = json.loads(out)
    return [d for d in data if isinstance(d, dict)] if isinstance(data, list) else []
