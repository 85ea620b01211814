"""Kernel parameters under ``/proc/sys`` as the node agents need them."""

from __future__ import annotations


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
