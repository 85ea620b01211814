"""The node agents' error hierarchy: everything :mod:`minik8s.host` raises is a :class:`HostError`."""

from __future__ import annotations


class HostError(Exception):
    """Base class: something on this host is not as an agent needs it (the message is one line)."""


class ConfigError(HostError, ValueError):
    """A flag value an agent cannot use (the message names the flag)."""


class CommandFailed(HostError):
    """A host command exited non-zero, was missing (``code`` 127) or timed out (``code`` -1).

    ``argv`` is the command, ``stderr`` its message (stripped; stdout when stderr was empty).
    """

    def __init__(self, argv: list[str], code: int, stderr: str) -> None:
        self.argv = list(argv)
        self.code = code
        self.stderr = stderr.strip()
        first = next((line.strip() for line in self.stderr.splitlines() if line.strip()), "no message")
        super().__init__(f"`{' '.join(argv)}` exited {code}: {first}")
