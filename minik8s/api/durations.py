"""Go ``time.Duration`` strings, as Kubernetes reads and writes them (flags such as
``--horizontal-pod-autoscaler-sync-period 15s`` or ``kubectl --timeout 5m``, and the
``window`` of ``metrics.k8s.io`` objects).

:func:`parse_duration` follows Go's ``time.ParseDuration``: a possibly signed sequence of
decimal numbers, each with an optional fraction and a unit (``ns``, ``us``/``µs``/``μs``,
``ms``, ``s``, ``m``, ``h``), like ``300ms``, ``-1.5h`` or ``2h45m``; ``0`` alone needs no unit.
:func:`format_duration` prints seconds the way Go's ``Duration.String`` does, rounded to the
millisecond.
"""

from __future__ import annotations

import re

#: Seconds per unit of Go's ``time.ParseDuration``.
UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_TERM = re.compile(r"(\d+\.?\d*|\.\d+)([^\d.]*)")


def parse_duration(text: str) -> float:
    """Seconds of a Go duration string (``"5m"`` → 300.0, ``"0"`` → 0.0, ``"1h2m3.5s"`` → 3723.5).

    Raises ValueError with Go's message for what Go rejects: ``time: missing unit in duration
    "5"``, ``time: unknown unit "x" in duration "5x"``, ``time: invalid duration "m"``.
    """
    if not isinstance(text, str):
        raise ValueError(f"time: invalid duration {text!r}")
    body = text[1:] if text[:1] in "+-" else text
    if body == "0":
        return 0.0
    if not body:
        raise ValueError(f'time: invalid duration "{text}"')
    total = 0.0
    pos = 0
    while pos < len(body):
        match = _TERM.match(body, pos)
        if match is None:
            raise ValueError(f'time: invalid duration "{text}"')
        number, unit = match.groups()
        if not unit:
            raise ValueError(f'time: missing unit in duration "{text}"')
        if unit not in UNITS:
            raise ValueError(f'time: unknown unit "{unit}" in duration "{text}"')
        total += float(number) * UNITS[unit]
        pos = match.end()
    return -total if text.startswith("-") else total


def format_duration(seconds: float) -> str:
    """Seconds as Go prints a ``time.Duration`` (``15.0`` → ``"15s"``, ``2.5`` → ``"2.5s"``,
    ``90`` → ``"1m30s"``, ``0.25`` → ``"250ms"``); rounded to the millisecond."""
    ms = int(round(seconds * 1000))
    if ms == 0:
        return "0s"
    if ms < 1000:
        return f"{ms}ms"
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    secs = f"{rest / 1000:.3f}".rstrip("0").rstrip(".")
    out = (f"{hours}h" if hours else "") + (f"{minutes}m" if hours or minutes else "")
    return out + f"{secs}s"
