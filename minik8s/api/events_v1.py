"""``events.k8s.io/v1`` Event: the newer view of the stored core ``v1`` Events, served by converting
to and from them (kube-apiserver stores both versions as one resource, ``/registry/events``).

The v1 form renames and regroups the core fields (``pkg/apis/events/v1/conversion.go``)::

    events.k8s.io/v1             core v1
    regarding                    involvedObject
    note                         message
    reportingController          reportingComponent
    deprecatedSource             source
    deprecatedFirstTimestamp     firstTimestamp
    deprecatedLastTimestamp      lastTimestamp
    deprecatedCount              count
    eventTime, series, related, action, reason, type, reportingInstance: the same names

So an Event written through either group is listed, watched, read, patched and deleted through
both.  The checks kube-apiserver adds to writes through this group (``eventTime``,
``reportingController``, ``series`` ...) are in :mod:`minik8s.apiserver.strategies.event`.
"""

from __future__ import annotations

import copy
from typing import Any

from minik8s.api.base import Obj
from minik8s.api.core import EventSeries, EventSource, ObjectReference
from minik8s.api.meta import TypedObject

API_VERSION = "events.k8s.io/v1"
CORE_API_VERSION = "v1"

#: (events.k8s.io/v1 name, core v1 name), in the v1 type's field order; same-named fields map to themselves.
FIELDS = (
    ("eventTime", "eventTime"), ("series", "series"), ("reportingController", "reportingComponent"),
    ("reportingInstance", "reportingInstance"), ("action", "action"), ("reason", "reason"),
    ("regarding", "involvedObject"), ("related", "related"), ("note", "message"), ("type", "type"),
    ("deprecatedSource", "source"), ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"), ("deprecatedCount", "count"),
)


class Event(TypedObject):
    """events.k8s.io/v1 Event: what ``reportingController`` saw happen to ``regarding``."""

    event_time: str | None = None
    series: EventSeries | None = None
    reporting_controller: str | None = None
    reporting_instance: str | None = None
    action: str | None = None
    reason: str | None = None
    regarding: ObjectReference | None = None
    related: ObjectReference | None = None
    note: str | None = None
    type: str | None = None
    deprecated_source: EventSource | None = None
    deprecated_first_timestamp: str | None = None
    deprecated_last_timestamp: str | None = None
    deprecated_count: int | None = None


def to_v1(obj: Obj) -> Obj:
    """The events.k8s.io/v1 form of a stored core Event (core ``series.state`` has no v1 field).
    ``eventTime`` is always there, ``null`` for an Event recorded without one, as Go writes the field
    (no ``omitempty``)."""
    out: Obj = {"kind": "Event", "apiVersion": API_VERSION, "metadata": copy.deepcopy(obj.get("metadata") or {})}
    for v1_name, core_name in FIELDS:
        if obj.get(core_name) is not None or v1_name == "eventTime":
            out[v1_name] = copy.deepcopy(obj.get(core_name))
    if isinstance(out.get("series"), dict):
        out["series"].pop("state", None)
    return out


def from_v1(obj: Any, stored: Obj | None = None) -> Any:
    """The core v1 form of an events.k8s.io/v1 Event (anything but an object is returned as is, for
    the apiserver to reject; fields of neither form are passed on, for field validation to report;
    the core names of renamed fields are not v1 fields and are dropped).
    ``stored`` is unused: every v1 field has a core one."""
    if not isinstance(obj, dict):
        return obj
    renamed: dict[str, str] = dict(FIELDS)
    core_only = {core for v1, core in FIELDS if v1 != core}
    out: Obj = {renamed.get(str(key), str(key)): copy.deepcopy(value) for key, value in obj.items()
                if key not in core_only}
    if out.get("apiVersion") in (None, API_VERSION):
        out["apiVersion"] = CORE_API_VERSION
    return out
