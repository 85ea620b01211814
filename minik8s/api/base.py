"""Base classes for API objects: camelCase on the wire, snake_case in Python.

Every model accepts both spellings on input (``populate_by_name``) and drops
unknown fields, as kube-apiserver does with its default field validation.
Use :func:`to_dict` to serialise for the wire (aliases, ``None`` omitted).  :data:`Obj` is the
plain-JSON form of an object that the components pass around.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

M = TypeVar("M", bound="Model")

#: An API object, or a part of one, as plain JSON (what travels on the wire and sits in
#: informer caches): ``{"apiVersion": ..., "kind": ..., "metadata": {...}, ...}``.
Obj = dict[str, Any]
#: A list of them (``items`` of a list response).
ObjList = list[Obj]


class Model(BaseModel):
    """A Kubernetes-style structure: camelCase aliases, unknown fields ignored."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="ignore",
        validate_assignment=False,
    )

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready wire form (camelCase keys, unset/None fields omitted)."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")

    @classmethod
    def from_dict(cls: type[M], data: Any) -> M:
        """Parse wire data; raises ``pydantic.ValidationError`` on type errors."""
        return cls.model_validate(data)


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
