"""The proxy's own errors.  Everything it raises on purpose is a :class:`ProxyError` or one of
:mod:`minik8s.host.errors` (a failed command, a bad flag value)."""

from __future__ import annotations


class ProxyError(Exception):
    """Base class of the proxy's own errors (the message is one line, fit for a log or a terminal)."""


class IPVSUnavailable(ProxyError):
    """The kernel has no IPVS (no ``/proc/net/ip_vs`` and ``modprobe ip_vs`` fails)."""
