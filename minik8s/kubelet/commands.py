"""The host commands of the pod network (``ip``, ``bridge``, ``iptables``), bounded in time.

Everything the kubelet changes in the host's routing table, links and netfilter goes
through a :data:`Runner`, so the same code can be pointed at another network namespace
(:func:`netns_runner`, used by the tests to stand for a second machine) or at a fake.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from typing import Any

#: ``runner(argv) -> stdout``; raises :class:`CommandFailed` when the command fails.
Runner = Callable[[list[str]], str]
COMMAND_TIMEOUT_SECONDS = 20.0


class NetworkError(Exception):
    """The pod network cannot be set up (a subnet clash, a network in use, a failed command)."""


class CommandFailed(NetworkError):
    """A host command exited non-zero, was missing or timed out; ``stderr`` holds its message."""

    def __init__(self, argv: list[str], code: int, stderr: str) -> None:
        self.argv = list(argv)
        self.code = code
        self.stderr = stderr.strip()
        first = self.stderr.splitlines()[0] if self.stderr else "no message"
        super().__init__(f"`{' '.join(argv)}` exited {code}: {first}")


def host_runner(argv: list[str]) -> str:
    """Run ``argv`` on this host (at most :data:`COMMAND_TIMEOUT_SECONDS`); returns stdout.

    Raises CommandFailed (exit code 127 for a missing program, -1 for a time-out).
    """
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_SECONDS, check=False)
    except FileNotFoundError as exc:
        raise CommandFailed(argv, 127, str(exc)) from exc
    except subprocess.TimeoutExpired as exc:
        raise CommandFailed(argv, -1, f"timed out after {COMMAND_TIMEOUT_SECONDS:g}s") from exc
    if proc.returncode != 0:
        raise CommandFailed(argv, proc.returncode, proc.stderr or proc.stdout)
    return proc.stdout


def netns_runner(netns: str, inner: Runner = host_runner) -> Runner:
    """A runner that runs every command inside the named network namespace (``ip netns exec``)."""
    def run(argv: list[str]) -> str:
        return inner(["ip", "netns", "exec", netns, *argv])
    return run


def run_json(runner: Runner, argv: list[str]) -> list[dict[str, Any]]:
    """Run an iproute2 command with ``-j`` output; returns the parsed list (empty output → [])."""
    out = runner(argv).strip()
    if not out:
        return []
    data = json.loads(out)
    return [d for d in data if isinstance(d, dict)] if isinstance(data, list) else []
