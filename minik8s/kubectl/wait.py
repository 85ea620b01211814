"""``kubectl wait``: block until objects meet a condition, are deleted, or a field has a value.

``--for=condition=Complete`` (``condition=NAME[=VALUE]``: the ``status.conditions`` entry of that
type, matched case-insensitively, has status VALUE, default ``True``), ``--for=delete``, or
``--for=jsonpath={.status.phase}=Running``; the objects are ``TYPE/NAME...``, ``TYPE NAME...``,
or ``TYPE`` with ``-l``/``--all``.  Each object that meets it prints ``<type>/<name> condition met``
(kubectl's text); at ``--timeout`` (a duration, default 30s; 0 checks once) the command fails
with ``timed out waiting for the condition on <plural>/<name>``.  Objects are polled.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

import typer

from minik8s.api import errors, jsonpath
from minik8s.api.base import Obj
from minik8s.api.resourcetypes import ResourceType
from minik8s.kubectl.errors import KubectlError
from minik8s.kubectl.options import duration_flag
from minik8s.kubectl.resolve import object_ref, parse_targets, plural_ref
from minik8s.kubectl.session import GlobalOptions, Session


@dataclass
class Waited:
    """One object waited for; ``uid`` once it has been seen (an object never seen is not reported
    deleted, as kubectl reports nothing for it)."""

    rt: ResourceType
    name: str
    namespace: str | None
    uid: str | None = None


def condition_check(spec: str) -> Callable[[Obj], bool]:
    """The test of ``condition=NAME[=VALUE]``."""
    name, eq, value = spec.partition("=")
    if not name:
        raise KubectlError(f"invalid condition: {spec}")
    wanted = value if eq else "True"

    def met(obj: Obj) -> bool:
        for c in (obj.get("status") or {}).get("conditions") or []:
            if str(c.get("type", "")).lower() == name.lower():
                return str(c.get("status", "")).lower() == wanted.lower()
        return False

    return met


def jsonpath_check(spec: str) -> Callable[[Obj], bool]:
    """The test of ``jsonpath={.a.b}=VALUE`` (without ``=VALUE``: the field exists and is not empty)."""
    if spec.startswith("'") and spec.endswith("'"):
        spec = spec[1:-1]
    if not spec.startswith("{") or "}" not in spec:
        raise KubectlError(f"jsonpath {spec} must be of the form {{.field}}=value")
    close = spec.index("}")
    path, rest = spec[1:close].strip(), spec[close + 1:]
    if not path.startswith("."):
        raise KubectlError(f"unrecognized jsonpath {spec}")
    expected = rest[1:] if rest.startswith("=") else None
    try:
        jsonpath.parse("$" + path)
    except ValueError as exc:
        raise KubectlError(f"invalid jsonpath {spec}: {exc}") from None

    def met(obj: Obj) -> bool:
        found, value = jsonpath.lookup(obj, "$" + path)
        if not found:
            return False
        if expected is None:
            return value not in (None, "", [], {})
        text = value if isinstance(value, str) else str(value).lower() if isinstance(value, bool) else str(value)
        return text == expected

    return met


async def _targets(s: Session, args: list[str], selector: str, all_: bool) -> list[Waited]:
    found: list[Waited] = []
    for t in parse_targets(s.registry, args):
        ns = s.namespace if t.rt.namespaced else None
        if t.names:
            found += [Waited(t.rt, n, ns) for n in t.names]
            continue
        if not selector and not all_:
            raise KubectlError("resource(s) were provided, but no name was specified")
        listed = await s.client.list_all(t.rt, ns, label_selector=selector or None)
        found += [Waited(t.rt, o["metadata"]["name"], ns, o["metadata"].get("uid")) for o in listed.get("items") or []]
    if not found:
        raise KubectlError("no matching resources found")
    return found


async def run_wait(opts: GlobalOptions, args: list[str], for_: str, timeout: float, selector: str,
                   all_: bool) -> int:
    """Poll every target until it meets ``for_``; returns 1 at the timeout."""
    kind, eq, rest = for_.partition("=")
    check: Callable[[Obj], bool] | None
    if kind.lower() == "delete" and not eq:
        check = None
    elif kind.lower() == "condition" and eq:
        check = condition_check(rest)
    elif kind.lower() == "jsonpath" and eq:
        check = jsonpath_check(rest)
    else:
        raise KubectlError(f"unrecognized condition: {for_!r}")
    async with Session(opts) as s:
        pending = await _targets(s, args, selector, all_)
        deadline = time.monotonic() + timeout
        delay = 0.1
        while True:
            still: list[Waited] = []
            for w in pending:
                if await _met(s, w, check):
                    if check is not None or w.uid:  # an object that never was is not reported deleted
                        print(f"{object_ref(w.rt, w.name)} condition met", flush=True)
                else:
                    still.append(w)
            pending = still
            if not pending:
                return 0
            if time.monotonic() >= deadline:
                for w in pending:
                    print(f"error: timed out waiting for the condition on {w.rt.plural}/{w.name}",
                          file=sys.stderr)
                return 1
            await asyncio.sleep(min(delay, max(deadline - time.monotonic(), 0)))
            delay = min(delay * 1.5, 1.0)


async def _met(s: Session, w: Waited, check: Callable[[Obj], bool] | None) -> bool:
    try:
        obj: Any = await s.client.get(w.rt, w.name, w.namespace)
    except errors.NotFound:
        if check is None:
            return True
        raise KubectlError(f'{plural_ref(w.rt)} "{w.name}" not found') from None
    if check is None:
        if not w.uid:  # seen for the first time: its uid tells a replacement from it
            w.uid = obj["metadata"].get("uid")
            return False
        return obj["metadata"].get("uid") != w.uid
    return check(obj)


def wait(
    ctx: typer.Context,
    args: Annotated[list[str] | None, typer.Argument(metavar="TYPE/NAME... | TYPE [NAME...]",
                                                     help="what to wait for")] = None,
    for_: Annotated[str, typer.Option("--for", help="delete, condition=NAME[=VALUE] or jsonpath={.f}=VALUE")] = "",
    timeout: Annotated[str, typer.Option("--timeout", help="how long to wait (a duration, e.g. 60s)")] = "30s",
    selector: Annotated[str, typer.Option("-l", "--selector", help="label selector")] = "",
    all_: Annotated[bool, typer.Option("--all", help="every object of the type")] = False,
) -> None:
    """Wait for a specific condition on one or many resources."""
    if not for_:
        raise KubectlError("--for must be specified")
    seconds = duration_flag(timeout, "--timeout")
    code = asyncio.run(run_wait(ctx.obj, list(args or []), for_, seconds, selector, all_))
    if code:
        raise typer.Exit(code)
