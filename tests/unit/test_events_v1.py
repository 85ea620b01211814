"""events.k8s.io/v1 Event <-> the stored core Event, and the validation of writes through each group."""

from __future__ import annotations

import datetime as dt
from typing import Any

from minik8s.api.columns import cells, definitions
from minik8s.api.events_v1 import from_v1, to_v1
from minik8s.apiserver.componentstatus import component_status, lease_health
from minik8s.apiserver.strategies.event import EventStrategy
from minik8s.apiserver.versions import REQUEST_VERSION

REF = {"kind": "Pod", "name": "web", "namespace": "ns"}
V1: dict[str, Any] = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e", "namespace": "ns"},
      "eventTime": "2026-01-01T00:00:00.000000Z", "series": {"count": 2, "lastObservedTime": "2026-01-01T00:01:00Z"},
      "reportingController": "example.com/c", "reportingInstance": "c-1", "action": "Act", "reason": "Why",
      "regarding": REF, "related": {"kind": "Node", "name": "n1"}, "note": "hello", "type": "Normal",
      "deprecatedSource": {"component": "kubelet"}, "deprecatedFirstTimestamp": "2026-01-01T00:00:00Z",
      "deprecatedLastTimestamp": "2026-01-01T00:02:00Z", "deprecatedCount": 4}
CORE: dict[str, Any] = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e", "namespace": "ns"},
        "eventTime": "2026-01-01T00:00:00.000000Z", "series": {"count": 2, "lastObservedTime": "2026-01-01T00:01:00Z"},
        "reportingComponent": "example.com/c", "reportingInstance": "c-1", "action": "Act", "reason": "Why",
        "involvedObject": REF, "related": {"kind": "Node", "name": "n1"}, "message": "hello", "type": "Normal",
        "source": {"component": "kubelet"}, "firstTimestamp": "2026-01-01T00:00:00Z",
        "lastTimestamp": "2026-01-01T00:02:00Z", "count": 4}


def test_every_field_converts_both_ways() -> None:
    assert from_v1(V1) == CORE
    assert to_v1(CORE) == V1
    assert list(to_v1(CORE))[2:] == list(V1)[2:]  # the v1 type's field order (after kind, apiVersion)
    assert to_v1({**CORE, "series": {**CORE["series"], "state": "Ongoing"}})["series"] == V1["series"]
    assert from_v1({**V1, "message": "a core name is no v1 field"})["message"] == "hello"
    assert from_v1("not an object") == "not an object"
    legacy = to_v1({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "old"}, "message": "m"})
    assert legacy == {"kind": "Event", "apiVersion": "events.k8s.io/v1", "metadata": {"name": "old"},
                      "eventTime": None, "note": "m"}  # as Go writes it: no omitempty


def _errors(obj: dict, old: dict | None = None, version: str | None = None) -> list[str]:
    token = REQUEST_VERSION.set(version)
    try:
        return [f"{path}: {msg}" for path, _, msg in EventStrategy().validate(obj, old)]
    finally:
        REQUEST_VERSION.reset(token)


def test_legacy_checks_apply_to_both_groups() -> None:
    legacy = {"metadata": {"name": "e", "namespace": "ns"}, "involvedObject": {"kind": "Pod", "name": "p"}}
    assert _errors(legacy) == ["involvedObject.namespace: does not match event.namespace"]
    assert _errors({**legacy, "metadata": {"name": "e", "namespace": "default"}}) == []
    assert _errors(from_v1(V1)) == []
    long_note = {**from_v1(V1), "message": "x" * 1025, "action": ""}
    assert _errors(long_note) == ["action: Required value", "message: can have at most 1024 characters"]


def test_v1_writes_are_stricter() -> None:
    core = from_v1({**V1, "deprecatedCount": None, "deprecatedSource": None, "deprecatedFirstTimestamp": None,
                    "deprecatedLastTimestamp": None})
    core = {k: v for k, v in core.items() if v is not None}
    assert _errors(core, version="events.k8s.io/v1") == []
    assert _errors(from_v1(V1), version="events.k8s.io/v1") == [
        "firstTimestamp: needs to be unset", "lastTimestamp: needs to be unset", "count: needs to be unset",
        "source: needs to be unset"]
    assert _errors(from_v1(V1)) == []  # core v1: no further checks
    bad_series = {**core, "series": {"count": 1}}
    assert _errors(bad_series, version="events.k8s.io/v1") == ["series.count: should be at least 2",
                                                              "series.lastObservedTime: Required value"]
    # updates: the series may change, not the rest; timestamps compare as instants
    moved = {**core, "series": {"count": 3, "lastObservedTime": "2026-01-01T00:03:00Z"},
             "eventTime": "2026-01-01T00:00:00+00:00"}
    assert _errors(moved, core, version="events.k8s.io/v1") == []
    assert _errors({**core, "message": "new"}, core, version="events.k8s.io/v1") == ["message: field is immutable"]


def test_tables_read_the_v1_form_as_the_core_one() -> None:
    at = dt.datetime(2026, 1, 1, 0, 3, tzinfo=dt.UTC)
    assert cells(definitions("Event"), V1, at) == cells(definitions("Event"), CORE, at)


def test_component_status_from_lease() -> None:
    now = dt.datetime(2026, 1, 1, 0, 0, 10, tzinfo=dt.UTC)
    lease = {"spec": {"holderIdentity": "h", "leaseDurationSeconds": 15, "renewTime": "2026-01-01T00:00:00.000000Z"}}
    assert lease_health(lease, "kube-scheduler", now) == (True, "ok")
    assert lease_health(lease, "kube-scheduler", now + dt.timedelta(seconds=10)) == (
        False, "Lease kube-system/kube-scheduler: leader h not renewed within 15s")
    assert lease_health(None, "kube-scheduler", now) == (False, "Lease kube-system/kube-scheduler not found: no leader")
    assert component_status("etcd-0", False, error="context deadline exceeded")["conditions"] == [
        {"type": "Healthy", "status": "False", "error": "context deadline exceeded"}]
    assert cells(definitions("ComponentStatus"), component_status("etcd-0", True, "ok"), now) == \
        ["etcd-0", "Healthy", "ok", ""]
