"""The proxy's error hierarchy: everything it raises on purpose is a :class:`ProxyError`."""

from __future__ import annotations


class ProxyError(Exception):
    """Base class of the proxy's own errors (the message is one line, fit for a log or a terminal)."""


class ConfigError(ProxyError):
    """A flag value is invalid (bad CIDR, chain prefix too long for iptables' 28-character names, ...)."""


class CommandError(ProxyError):
    """A system command (``iptables-restore``, ``ip``, ``modprobe``) failed; carries its argv and stderr."""

    def __init__(self, argv: list[str], returncode: int, stderr: str) -> None:
        self.argv = argv
        self.returncode = returncode
        self.stderr = stderr
        first = next((line for line in stderr.splitlines() if line.strip()), "").strip()
        super().__init__(f"{' '.join(argv[:3])} exited {returncode}: {first or 'no message'}")


class IPVSUnavailable(ProxyError):
    """The kernel has no IPVS (no ``/proc/net/ip_vs`` and ``modprobe ip_vs`` fails)."""
