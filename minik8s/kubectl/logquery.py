"""The query of the ``pods/log`` subresource, as ``kubectl logs`` and ``kubectl function logs`` send it."""

from __future__ import annotations

from typing import Any


def log_params(container: str | None, follow: bool, tail: int, timestamps: bool, previous: bool,
               since_seconds: int | None = None, limit_bytes: int | None = None,
               since_time: str | None = None) -> dict[str, Any]:
    """The query of the log subresource (``tailLines`` only when ``tail`` >= 0; ``since_time`` is RFC 3339)."""
    params: dict[str, Any] = {"container": container, "follow": follow or None, "timestamps": timestamps or None,
                              "previous": previous or None, "sinceSeconds": since_seconds,
                              "sinceTime": since_time, "limitBytes": limit_bytes}
    if tail >= 0:
        params["tailLines"] = tail
    return {k: v for k, v in params.items() if v is not None}
