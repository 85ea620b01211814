"""Go ``time.Duration`` flag values (``--timeout 5m``, ``1h30m``, ``500ms``, ``0s``) as kubectl takes them."""

from __future__ import annotations

import re

from minik8s.kubectl.errors import KubectlError

#: Seconds per unit of Go's ``time.ParseDuration``.
UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_TERM = re.compile(r"(\d+\.?\d*|\.\d+)([^\d.]*)")


def parse_duration(text: str, flag: str = "--timeout") -> float:
    """Seconds of a Go duration string (``"5m"`` → 300.0, ``"0"`` → 0.0, ``"1h2m3.5s"`` → 3723.5).

    Raises KubectlError with pflag's wording for values Go would reject, e.g.
    ``invalid argument "5" for "--timeout" flag: time: missing unit in duration "5"``.
    """
    def fail(reason: str) -> KubectlError:
        return KubectlError(f'invalid argument "{text}" for "{flag}" flag: time: {reason}')

    body = text[1:] if text[:1] in "+-" else text
    if body == "0":
        return 0.0
    if not body:
        raise fail(f'invalid duration "{text}"')
    total = 0.0
    pos = 0
    while pos < len(body):
        match = _TERM.match(body, pos)
        if match is None:
            raise fail(f'invalid duration "{text}"')
        number, unit = match.groups()
        if not unit:
            raise fail(f'missing unit in duration "{text}"')
        if unit not in UNITS:
            raise fail(f'unknown unit "{unit}" in duration "{text}"')
        total += float(number) * UNITS[unit]
        pos = match.end()
    return -total if text.startswith("-") else total
