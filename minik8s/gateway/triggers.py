"""Event delivery for Triggers: CloudEvents in, matching, retries, schedules, object changes.

* **Events**: ``POST /events/{namespace}`` accepts a CloudEvent in binary or structured HTTP
  content mode (the ``cloudevents`` package's 2.x bindings).  Every Trigger of the namespace
  without a ``schedule`` or ``objects`` source whose ``filter.attributes`` all equal the
  event's attributes (exact match, as Knative's Trigger filter) gets it.
* **Schedules**: a Trigger with ``spec.schedule`` (cron, five fields or six with seconds,
  optional ``timeZone``) gets an event of type ``dev.minik8s.schedule`` with ``spec.data`` at
  every tick.
* **Object changes**: a Trigger with ``spec.objects`` gets ``dev.minik8s.object.added``,
  ``.modified`` and ``.deleted`` events (data: the object; subject: its name) for changes of
  those objects after the Trigger appeared (Knative's ApiServerSource in Resource mode).
* **Delivery** to the subscriber (a Function: the data as body, the attributes as ``ce-``
  headers; a Workflow: the data as its input) is retried ``delivery.retry`` times with
  exponential or linear back-off from ``backoffDelaySeconds``.  ``status.delivered`` and
  ``status.failed`` count the outcomes (written at most once a second per Trigger); a
  delivery that failed for good also records a Warning Event ``DeliveryFailed``.

The gateway is the only writer of Trigger status: it starts its counters from the stored
status, so a restart continues the counts.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import uuid
import zoneinfo
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from cloudevents.core.bindings.http import HTTPMessage, from_http_event
from croniter import croniter

from minik8s.api import errors
from minik8s.api import serverless as s
from minik8s.api.base import Obj, now_rfc3339, object_key
from minik8s.client.events import EventRecorder
from minik8s.client.informer import Informer
from minik8s.client.rest import Client

log = logging.getLogger("gateway")
#: Delivers one event (attributes, data) to a subscriber; returns None on success or an error text.
Deliver = Callable[[str, Obj, dict[str, Any], Any], Awaitable[str | None]]

_HEADER_SAFE = " !\"#$&'()*+,-./:;<=>?@[\\]^_`{|}~"
SCHEDULE_TYPE = "dev.minik8s.schedule"
OBJECT_TYPE = "dev.minik8s.object"


class BadEvent(ValueError):
    """The request is not a valid CloudEvent."""


def parse_event(headers: dict[str, str], body: bytes) -> tuple[dict[str, Any], Any]:
    """``(attributes, data)`` of a CloudEvent sent over HTTP in binary or structured mode.

    Raises :class:`BadEvent` with a readable message (missing ``ce-id``, bad JSON ...).
    """
    try:
        event = from_http_event(HTTPMessage(headers={k.lower(): v for k, v in headers.items()}, body=body))
    except Exception as exc:  # noqa: BLE001 - the SDK raises several kinds of errors for bad input
        raise BadEvent(f"not a CloudEvent: {exc}") from None
    attributes = {k: (v.isoformat() if isinstance(v, dt.datetime) else v) for k, v in event.get_attributes().items()}
    data = event.get_data()
    if isinstance(data, bytes):
        data = data.decode(errors="replace")
    return attributes, data


def matches(trigger: Obj, attributes: dict[str, Any]) -> bool:
    """Whether an HTTP event with ``attributes`` goes to ``trigger`` (exact match of every filter attribute)."""
    spec = trigger.get("spec") or {}
    if spec.get("schedule") or spec.get("objects"):
        return False
    wanted = (spec.get("filter") or {}).get("attributes") or {}
    return all(str(attributes.get(k, "")) == str(v) for k, v in wanted.items())


def backoff_delays(delivery: Obj) -> list[float]:
    """Delays before each retry (``retry`` of them)."""
    retries = int(delivery["retry"]) if delivery.get("retry") is not None else s.DEFAULT_RETRY
    base = float(delivery.get("backoffDelaySeconds") or s.DEFAULT_BACKOFF_DELAY_SECONDS)
    if delivery.get("backoffPolicy") == "linear":
        return [base * (i + 1) for i in range(retries)]
    return [base * 2 ** i for i in range(retries)]


def next_fire(schedule: str, after: dt.datetime, tz: str | None) -> dt.datetime:
    """The first tick of ``schedule`` after ``after`` (aware datetimes; ``tz`` an IANA zone or None for UTC)."""
    zone = zoneinfo.ZoneInfo(tz) if tz else dt.UTC
    it = croniter(schedule, after.astimezone(zone))
    nxt: dt.datetime = it.get_next(dt.datetime)
    return nxt.astimezone(dt.UTC)


@dataclass
class Counts:
    delivered: int = 0
    failed: int = 0
    last_delivery_time: str | None = None
    last_schedule_time: str | None = None
    last_failure: str | None = None
    dirty: bool = False


@dataclass
class TriggerRunner:
    """Delivers events of all Triggers (given their informer) and keeps their status counters."""

    client: Client
    triggers: Informer
    deliver: Deliver
    recorder: EventRecorder
    counts: dict[str, Counts] = field(default_factory=dict)
    schedules: dict[str, tuple[str, dt.datetime]] = field(default_factory=dict)
    sources: dict[str, tuple[str, Informer, asyncio.Task[None]]] = field(default_factory=dict)
    tasks: set[asyncio.Task[None]] = field(default_factory=set)

    def _counts(self, trigger: Obj) -> Counts:
        key = object_key(trigger)
        c = self.counts.get(key)
        if c is None:
            st = trigger.get("status") or {}
            c = self.counts[key] = Counts(int(st.get("delivered") or 0), int(st.get("failed") or 0),
                                          st.get("lastDeliveryTime"), st.get("lastScheduleTime"), st.get("lastFailure"))
        return c

    def spawn(self, coro: Awaitable[None]) -> None:
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(coro)  # type: ignore[arg-type]
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    # ------------------------------------------------------------------ events
    def publish(self, namespace: str, attributes: dict[str, Any], data: Any) -> list[str]:
        """Deliver an HTTP event to the matching Triggers of ``namespace`` (in the background);
        returns their names."""
        names = []
        for trigger in self.triggers.list():
            if (trigger.get("metadata") or {}).get("namespace") == namespace and matches(trigger, attributes):
                names.append(trigger["metadata"]["name"])
                self.spawn(self.deliver_with_retries(trigger, attributes, data))
        return sorted(names)

    async def deliver_with_retries(self, trigger: Obj, attributes: dict[str, Any], data: Any) -> None:
        spec = trigger.get("spec") or {}
        ref = (spec.get("subscriber") or {}).get("ref") or {}
        namespace = trigger["metadata"]["namespace"]
        error: str | None = None
        for delay in [0.0, *backoff_delays(spec.get("delivery") or {})]:
            if delay:
                await asyncio.sleep(delay)
            error = await self.deliver(namespace, ref, attributes, data)
            if error is None:
                break
            log.info("gateway trigger=%s delivery to %s/%s failed: %s", object_key(trigger), ref.get("kind"),
                     ref.get("name"), error)
        live = self.triggers.get(object_key(trigger)) or trigger
        counts = self._counts(live)
        if error is None:
            counts.delivered += 1
            counts.last_delivery_time = now_rfc3339()
        else:
            counts.failed += 1
            counts.last_failure = f"{ref.get('kind')}/{ref.get('name')}: {error}"[:1024]
            await self.recorder.record(live, "Warning", "DeliveryFailed",
                                       f"event {attributes.get('id')} to {ref.get('kind')}/{ref.get('name')} failed "
                                       f"after {len(backoff_delays(spec.get('delivery') or {})) + 1} attempts: {error}")
        counts.dirty = True

    async def flush(self) -> None:
        """Write changed counters to the Triggers' status."""
        rt = self.triggers.rt
        for key, c in list(self.counts.items()):
            if not c.dirty:
                continue
            trigger = self.triggers.get(key)
            if trigger is None:
                self.counts.pop(key, None)
                continue
            status = {"observedGeneration": trigger["metadata"].get("generation"), "delivered": c.delivered,
                      "failed": c.failed, "lastDeliveryTime": c.last_delivery_time,
                      "lastScheduleTime": c.last_schedule_time, "lastFailure": c.last_failure}
            try:
                await self.client.patch(rt, trigger["metadata"]["name"],
                                        {"status": {k: v for k, v in status.items() if v is not None}},
                                        trigger["metadata"]["namespace"], subresource="status")
                c.dirty = False
            except errors.NotFound:
                self.counts.pop(key, None)
            except errors.APIError as exc:
                log.warning("gateway trigger=%s status write failed: %s", key, exc)

    async def run(self) -> None:
        """Fire schedules, keep object sources in step with the Triggers, flush counters; forever."""
        while True:
            try:
                self._schedule_tick()
                self._sync_sources()
                await self.flush()
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - keep the loop alive
                log.exception("gateway trigger loop failed")
            await asyncio.sleep(0.5)

    # ------------------------------------------------------------------ schedules
    def _schedule_tick(self) -> None:
        now = dt.datetime.now(dt.UTC)
        seen = set()
        for trigger in self.triggers.list():
            spec = trigger.get("spec") or {}
            schedule = spec.get("schedule")
            if not schedule or trigger["metadata"].get("deletionTimestamp"):
                continue
            key = object_key(trigger)
            seen.add(key)
            sig = f"{schedule}|{spec.get('timeZone') or ''}"
            known = self.schedules.get(key)
            if known is None or known[0] != sig:
                try:
                    self.schedules[key] = (sig, next_fire(schedule, now, spec.get("timeZone")))
                except (ValueError, KeyError, zoneinfo.ZoneInfoNotFoundError) as exc:
                    log.warning("gateway trigger=%s bad schedule %r: %s", key, schedule, exc)
                continue
            if now >= known[1]:
                self.schedules[key] = (sig, next_fire(schedule, now, spec.get("timeZone")))
                counts = self._counts(trigger)
                counts.last_schedule_time = now_rfc3339()
                counts.dirty = True
                attributes = {"specversion": "1.0", "id": str(uuid.uuid4()), "type": SCHEDULE_TYPE,
                              "source": f"/apis/{s.API_VERSION}/namespaces/{trigger['metadata']['namespace']}"
                                        f"/triggers/{trigger['metadata']['name']}",
                              "time": now.isoformat()}
                self.spawn(self.deliver_with_retries(trigger, attributes, spec.get("data")))
        for key in set(self.schedules) - seen:
            self.schedules.pop(key, None)

    # ------------------------------------------------------------------ object changes
    def _sync_sources(self) -> None:
        wanted: dict[str, Obj] = {}
        for trigger in self.triggers.list():
            objects = (trigger.get("spec") or {}).get("objects")
            if objects and not trigger["metadata"].get("deletionTimestamp"):
                wanted[object_key(trigger)] = trigger
        for key in list(self.sources):
            sig = self.sources[key][0]
            trig = wanted.get(key)
            if trig is None or repr(trig["spec"]["objects"]) != sig:
                self.sources.pop(key)[2].cancel()
        for key, trigger in wanted.items():
            if key in self.sources:
                continue
            objects = trigger["spec"]["objects"]
            try:
                rt = self.client.kind(objects.get("apiVersion"), objects.get("kind"))
            except errors.NotFound:
                continue
            informer = Informer(self.client, rt, trigger["metadata"]["namespace"] if rt.namespaced else None,
                                label_selector=objects.get("labelSelector") or None)
            source = f"/apis/{objects.get('apiVersion')}/namespaces/{trigger['metadata']['namespace']}/{rt.plural}"

            on_add, on_update, on_delete = self._object_handlers(key, informer, source)
            informer.add_handler(on_add, on_update, on_delete)
            task = asyncio.get_running_loop().create_task(informer.run())
            self.sources[key] = (repr(objects), informer, task)

    def _object_handlers(self, key: str, informer: Informer, source: str
                         ) -> tuple[Callable[[Obj], None], Callable[[Obj, Obj], None], Callable[[Obj], None]]:
        """Informer handlers turning changes into events for the Trigger ``key``."""

        def emit(kind: str, obj: Obj) -> None:
            if not informer.has_synced():
                return  # the initial list: only changes after the Trigger started are events
            trig = self.triggers.get(key)
            if trig is None:
                return
            attributes = {"specversion": "1.0", "id": str(uuid.uuid4()), "type": f"{OBJECT_TYPE}.{kind}",
                          "source": source, "subject": (obj.get("metadata") or {}).get("name") or "",
                          "time": dt.datetime.now(dt.UTC).isoformat()}
            self.spawn(self.deliver_with_retries(trig, attributes, obj))

        def on_update(old: Obj, new: Obj) -> None:
            if old is not new:  # a resync replays the same object: not a change
                emit("modified", new)

        return (lambda o: emit("added", o)), on_update, (lambda o: emit("deleted", o))

    def shutdown(self) -> None:
        for _, _, task in self.sources.values():
            task.cancel()
        for task in list(self.tasks):
            task.cancel()


def cloudevent_headers(attributes: dict[str, Any]) -> dict[str, str]:
    """Binary-mode ``ce-`` headers for delivering an event's attributes to a Function (values
    percent-encoded where HTTP headers need it, as the CloudEvents HTTP binding says)."""
    return {f"ce-{k}": quote(str(v), safe=_HEADER_SAFE) for k, v in attributes.items()
            if k != "datacontenttype" and v is not None}
