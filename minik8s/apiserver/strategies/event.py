"""v1 Event: ``involvedObject`` required; as field selectors (Kubernetes' set): its ``kind``, ``name``,
``namespace``, ``uid``, ``apiVersion``, ``resourceVersion`` and ``fieldPath``, ``reason``, ``type``,
``source`` (the component) and ``reportingComponent``.

Validation follows kube-apiserver's (``pkg/apis/core/validation/events.go``), on the stored core form
(so errors name core fields, ``message`` for an events.k8s.io ``note``, as kube-apiserver's do):

* every write, through either group ("legacy" validation): an Event without ``eventTime`` must be in
  its involved object's namespace (``default`` too when that has none); one with ``eventTime`` needs
  ``reportingController`` (a qualified name), ``reportingInstance`` (≤ 128 characters), ``action`` and
  ``reason`` (≤ 128 each), a ``note`` of ≤ 1024 characters, and for a cluster-scoped object the
  ``default`` or ``kube-system`` namespace;
* writes through ``events.k8s.io/v1`` (the request's version, :data:`minik8s.apiserver.versions.REQUEST_VERSION`)
  also: creates need ``eventTime``, a ``type`` of Normal or Warning, and none of the deprecated
  fields (``firstTimestamp``, ``lastTimestamp``, ``count``, ``source``); a ``series`` needs a count of
  at least 2 and ``lastObservedTime`` (on update only when it changed); updates may change only
  ``series`` (and metadata).
"""

from __future__ import annotations

from minik8s.api import validation as v
from minik8s.api.base import parse_time
from minik8s.api.events_v1 import API_VERSION as EVENTS_V1
from minik8s.apiserver.strategies.base import REQUIRED, Cause, Obj, Strategy
from minik8s.apiserver.versions import REQUEST_VERSION

#: Kubernetes' limits on the v1 fields (characters).
REPORTING_INSTANCE_LIMIT = ACTION_LIMIT = REASON_LIMIT = 128
NOTE_LIMIT = 1024
TIMESTAMPS = frozenset({"firstTimestamp", "lastTimestamp", "eventTime"})
#: The core fields an events.k8s.io/v1 update may not change, in kube-apiserver's order of checks.
IMMUTABLE = ("involvedObject", "reason", "message", "source", "firstTimestamp", "lastTimestamp", "count",
             "type", "eventTime", "action", "related", "reportingComponent", "reportingInstance")


class EventStrategy(Strategy):
    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        if not obj.get("involvedObject"):
            causes.append(("involvedObject", None, REQUIRED))
        causes += legacy_errors(obj)
        if REQUEST_VERSION.get() == EVENTS_V1:
            causes += v1_create_errors(obj) if old is None else v1_update_errors(obj, old)
        return causes

    def fields(self, obj: Obj) -> dict[str, str]:
        f = super().fields(obj)
        inv = obj.get("involvedObject") or {}
        for k in ("kind", "name", "namespace", "uid", "apiVersion", "resourceVersion", "fieldPath"):
            f[f"involvedObject.{k}"] = inv.get(k) or ""
        f["reason"] = obj.get("reason") or ""
        f["type"] = obj.get("type") or ""
        f["source"] = (obj.get("source") or {}).get("component") or ""
        f["reportingComponent"] = obj.get("reportingComponent") or ""
        return f


def legacy_errors(obj: Obj) -> list[Cause]:
    """The checks of every Event write (``legacyValidateEvent``)."""
    namespace = (obj.get("metadata") or {}).get("namespace") or ""
    involved_ns = (obj.get("involvedObject") or {}).get("namespace") or ""
    mismatch = ("involvedObject.namespace", involved_ns, "does not match event.namespace")
    causes: list[Cause] = []
    if not obj.get("eventTime"):
        if (involved_ns and namespace != involved_ns) or (not involved_ns and namespace not in ("", "default")):
            causes.append(mismatch)
        return causes
    if not involved_ns and namespace not in ("default", "kube-system"):
        causes.append(mismatch)
    controller = str(obj.get("reportingComponent") or "")
    if not controller:
        causes.append(("reportingController", None, REQUIRED))
    causes += [("reportingController", controller, msg) for msg in v.qualified_name_errors(controller)]
    limits = (("reportingInstance", REPORTING_INSTANCE_LIMIT), ("action", ACTION_LIMIT), ("reason", REASON_LIMIT))
    for path, limit in limits:
        value = obj.get(path)
        if not value:
            causes.append((path, None, REQUIRED))
        elif len(str(value)) > limit:
            causes.append((path, "", f"can have at most {limit} characters"))
    if len(str(obj.get("message") or "")) > NOTE_LIMIT:
        causes.append(("message", "", f"can have at most {NOTE_LIMIT} characters"))
    return causes


def series_errors(obj: Obj) -> list[Cause]:
    """A ``series``: a count of at least 2 and a ``lastObservedTime``."""
    series = obj.get("series")
    if not isinstance(series, dict):
        return []
    causes: list[Cause] = []
    if int(series.get("count") or 0) < 2:
        causes.append(("series.count", "", "should be at least 2"))
    if not series.get("lastObservedTime"):
        causes.append(("series.lastObservedTime", None, REQUIRED))
    return causes


def v1_create_errors(obj: Obj) -> list[Cause]:
    """The checks an events.k8s.io/v1 create adds (the metadata's are the generic ones)."""
    causes = series_errors(obj)
    if not obj.get("eventTime"):
        causes.append(("eventTime", None, REQUIRED))
    if obj.get("type") not in ("Normal", "Warning"):
        causes.append(("type", "", f"has invalid value: {obj.get('type') or ''}"))
    for path in ("firstTimestamp", "lastTimestamp", "count", "source"):
        if obj.get(path):
            causes.append((path, "", "needs to be unset"))
    return causes


def v1_update_errors(new: Obj, old: Obj) -> list[Cause]:
    """The checks an events.k8s.io/v1 update adds: a changed series valid, the rest unchanged."""
    causes = series_errors(new) if new.get("series") != old.get("series") else []
    for path in IMMUTABLE:
        if _comparable(path, new.get(path)) != _comparable(path, old.get(path)):
            causes.append((path, new.get(path), "field is immutable"))
    return causes


def _comparable(path: str, value: object) -> object:
    """A field's value as kube-apiserver compares it: timestamps as instants (``Z`` or ``+00:00``,
    with or without a fraction), the rest as they are."""
    if path in TIMESTAMPS and isinstance(value, str):
        try:
            return parse_time(value)
        except ValueError:
            return value
    return value
