"""``kubectl events [--for TYPE/NAME] [-A] [--types=Normal,Warning] [--no-headers] [-w]``.

As kubectl's ``events.go`` and ``event_printer.go``: the core/v1 Events of the namespace (all of them
with ``-A``), listed in pages of 500, those about ``--for``'s object chosen by the server (the field
selector ``involvedObject.kind=K,involvedObject.apiVersion=V,involvedObject.name=N``, the type resolved
through discovery), those of ``--types`` here, sorted by when they were last seen, printed as
``[NAMESPACE] LAST SEEN TYPE REASON OBJECT MESSAGE``.  ``LAST SEEN`` is the age of the last
occurrence, with ``(xCOUNT over AGE-OF-FIRST)`` for repeated events.  ``-w`` then prints each event
as the watch delivers it.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import sys
from typing import Annotated

import typer

from minik8s.api.base import Obj, parse_time
from minik8s.api.columns import human_duration
from minik8s.kubectl import printing
from minik8s.kubectl.errors import KubectlError
from minik8s.kubectl.session import GlobalOptions, Session

TYPES = ("Normal", "Warning")


def since(timestamp: str | None, now: dt.datetime) -> str:
    """kubectl's ``translateTimestampSince``: ``<unknown>`` for a zero time, else the human age."""
    when = parse_time(timestamp)
    if when is None:
        return "<unknown>"
    return human_duration((now - when).total_seconds())


def interval(event: Obj, now: dt.datetime) -> str:
    """The ``LAST SEEN`` cell (kubectl's ``getInterval``)."""
    first = since(event.get("eventTime"), now) if event.get("eventTime") else since(event.get("firstTimestamp"), now)
    series = event.get("series")
    if isinstance(series, dict):
        return f"{since(series.get('lastObservedTime'), now)} (x{series.get('count', 0)} over {first})"
    count = int(event.get("count") or 0)
    if count > 1:
        return f"{since(event.get('lastTimestamp'), now)} (x{count} over {first})"
    return first


def sort_time(event: Obj) -> dt.datetime:
    """When an event was last seen (series, else lastTimestamp, else eventTime), for sorting."""
    series = event.get("series")
    for value in ((series or {}).get("lastObservedTime") if isinstance(series, dict) else None,
                  event.get("lastTimestamp"), event.get("eventTime")):
        when = parse_time(value)
        if when is not None:
            return when
    return dt.datetime.min.replace(tzinfo=dt.UTC)


def row(event: Obj, now: dt.datetime, all_namespaces: bool) -> list[str]:
    """One table row of ``event``."""
    involved = event.get("involvedObject") or {}
    cells = [interval(event, now), str(event.get("type") or ""), str(event.get("reason") or ""),
             f"{involved.get('kind', '')}/{involved.get('name', '')}", str(event.get("message") or "").strip()]
    if all_namespaces:
        cells.insert(0, str((event.get("metadata") or {}).get("namespace") or ""))
    return cells


def header(all_namespaces: bool) -> list[str]:
    """The table's header row."""
    return (["NAMESPACE"] if all_namespaces else []) + ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]


class Filter:
    """Which events are shown: those about ``kind``/``name`` (when given) of the ``types`` (when given)."""

    def __init__(self, kind: str, name: str, types: list[str]) -> None:
        self.kind, self.name, self.types = kind, name, [t.lower() for t in types]

    def __call__(self, event: Obj) -> bool:
        involved = event.get("involvedObject") or {}
        if self.name and (involved.get("kind") != self.kind or involved.get("name") != self.name):
            return False
        return not self.types or str(event.get("type") or "").lower() in self.types


async def run_events(opts: GlobalOptions, for_object: str, all_namespaces: bool, types: list[str],
                     no_headers: bool, watch: bool) -> None:
    """List (and with ``watch``, follow) the events; prints the table."""
    async with Session(opts) as s:
        kind = name = field_selector = ""
        if for_object:
            type_name, _, name = for_object.partition("/")
            rt = s.registry.resolve(type_name)
            if rt is None:
                print(f'the server doesn\'t have a resource type "{type_name}"', file=sys.stderr)
                raise typer.Exit(1)
            kind = rt.kind
            api_version = f"{rt.group}/{rt.version}" if rt.group else rt.version
            field_selector = (f"involvedObject.kind={kind},involvedObject.apiVersion={api_version},"
                              f"involvedObject.name={name}")
        keep = Filter(kind, name, types)
        rt_events = s.registry.by_kind("v1", "Event")
        if rt_events is None:
            raise KubectlError('the server doesn\'t have a resource type "events"')
        namespace = None if all_namespaces else s.namespace
        listed = await s.client.list_all(rt_events, namespace, field_selector=field_selector or None)
        items = sorted((e for e in listed.get("items") or [] if keep(e)), key=sort_time)
        now = printing.now()
        if not items and not watch:
            where = "." if all_namespaces else f" in {s.namespace} namespace."
            print(f"No events found{where}", file=sys.stderr)
            return
        rows = [row(e, now, all_namespaces) for e in items]
        # kubectl's tabwriter sees no header row with --no-headers: the columns are as wide as the rows
        lines = printing.tabwrite(rows, 6, 3) if no_headers else printing.table(header(all_namespaces), rows)
        printing.write_lines(lines)
        if not watch:
            return
        rv = (listed.get("metadata") or {}).get("resourceVersion")
        async for change in s.client.watch(rt_events, namespace, resource_version=rv,
                                           field_selector=field_selector or None):
            event = change.get("object") or {}
            if change.get("type") in ("ADDED", "MODIFIED") and keep(event):
                printing.write_lines(printing.table(header(all_namespaces), [row(event, printing.now(),
                                                                                 all_namespaces)])[1:])


def events(
    ctx: typer.Context,
    args: Annotated[list[str] | None, typer.Argument(hidden=True)] = None,
    for_object: Annotated[str, typer.Option("--for", help="only the events about this TYPE/NAME")] = "",
    all_namespaces: Annotated[bool, typer.Option("-A", "--all-namespaces", help="events of every namespace")] = False,
    types: Annotated[list[str] | None, typer.Option("--types", help="Normal and/or Warning (comma-separated)")] = None,
    no_headers: Annotated[bool, typer.Option("--no-headers", help="no header row")] = False,
    watch: Annotated[bool, typer.Option("-w", "--watch/--no-watch", help="then print events as they come")] = False,
) -> None:
    """List events."""
    wanted = [t for value in types or [] for t in value.split(",") if t]
    for t in wanted:
        if t.lower() not in ("normal", "warning"):
            raise KubectlError("valid --types are Normal or Warning")
    if for_object and (for_object.count("/") != 1 or not all(for_object.split("/"))):
        raise KubectlError("--for must be in resource/name form")
    asyncio.run(run_events(ctx.obj, for_object, all_namespaces, wanted, no_headers, watch))
