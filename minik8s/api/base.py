"""The plain-JSON form of API objects and their timestamps, without pydantic.

:data:`Obj` is the plain-JSON form of an object that the components pass around; the
timestamp helpers write and read Kubernetes' RFC 3339 times.  The pydantic base of the
validation models is :mod:`minik8s.api.model` (kept apart so that what imports only this
module -- kubectl -- starts without pydantic).
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

#: An API object, or a part of one, as plain JSON (what travels on the wire and sits in
#: informer caches): ``{"apiVersion": ..., "kind": ..., "metadata": {...}, ...}``.
Obj = dict[str, Any]
#: A list of them (``items`` of a list response).
ObjList = list[Obj]


def object_key(obj: dict[str, Any]) -> str:
    """``namespace/name`` (or ``name``) of a wire-form object dict."""
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace")
    return f"{ns}/{meta.get('name')}" if ns else str(meta.get("name"))


def now_rfc3339() -> str:
    """The current UTC time as RFC 3339 with second precision (``2026-01-02T03:04:05Z``)."""
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def now_rfc3339_micro() -> str:
    """The current UTC time as RFC 3339 with microseconds (Kubernetes ``MicroTime``)."""
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(value: str | None) -> _dt.datetime | None:
    """Parse an RFC 3339 timestamp (``Z`` or offset, optional fraction) to an aware datetime."""
    if not value:
        return None
    text = value.replace("Z", "+00:00")
    return _dt.datetime.fromisoformat(text)
