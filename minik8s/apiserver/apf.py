"""API Priority and Fairness' configuration: the FlowSchemas and PriorityLevelConfigurations the
apiserver keeps and classifies requests by (kube-apiserver's ``apf_controller`` and its
``priority-and-fairness-config-producer`` post-start hook).

* At start-up (retried while etcd is away) the mandatory objects (``exempt``, ``catch-all``) and
  the suggested ones (:mod:`minik8s.api.flowcontrol`) are created when missing; an existing one
  whose ``apf.kubernetes.io/autoupdate-spec`` annotation is ``true`` gets its spec put back.
* Both kinds are listed once and then watched (one etcd watch each, as the RBAC cache does), so
  classifying a request reads memory only.
* Each FlowSchema's ``Dangling`` condition says whether its priority level exists (``True``,
  reason ``NotFound``) or not (``False``, ``Found``); it is written through the ``status``
  subresource when that changes.
* :meth:`FlowControl.classify` is ``matchingPrecedence`` order (lowest first, then name): the first
  schema matching the request whose level exists decides; none: ``catch-all``.
  :mod:`minik8s.apiserver.inflight` gives each ``Limited`` level its turns.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import datetime as dt
import logging
import math
from dataclasses import dataclass
from typing import Any

from minik8s.api import errors
from minik8s.api import flowcontrol as fc
from minik8s.api.base import Obj
from minik8s.api.resourcetypes import Registry

log = logging.getLogger("apiserver")

KINDS = ("FlowSchema", "PriorityLevelConfiguration")
#: How many classifications :meth:`FlowControl.classify` remembers (all are forgotten when full).
CLASSIFIED = 4096


@dataclass(frozen=True)
class Classification:
    """The FlowSchema a request matched and its priority level."""

    flow_schema: str
    flow_schema_uid: str
    priority_level: str
    priority_level_uid: str
    exempt: bool


def concurrency_limits(levels: dict[str, Obj], total: int) -> dict[str, int]:
    """Each ``Limited`` level's turns out of the server's ``total``: ``ceil(total * shares / sum)``,
    the sum over every Limited level (APF's nominal concurrency limits)."""
    shares = {name: int(((pl.get("spec") or {}).get("limited") or {}).get("nominalConcurrencyShares") or 0)
              for name, pl in levels.items() if (pl.get("spec") or {}).get("type") == fc.LIMITED}
    total_shares = sum(shares.values())
    if total_shares <= 0:
        return {name: 1 for name in shares}
    return {name: max(1, math.ceil(total * s / total_shares)) for name, s in shares.items()}


def dangling_condition(schema: Obj, levels: dict[str, Obj]) -> tuple[str, str, str]:
    """The ``Dangling`` condition's status, reason and message for ``schema``."""
    level = ((schema.get("spec") or {}).get("priorityLevelConfiguration") or {}).get("name") or ""
    if level in levels:
        return "False", "Found", (f"This FlowSchema references the PriorityLevelConfiguration object named "
                                  f'"{level}" and it exists')
    return "True", "NotFound", (f"This FlowSchema references the PriorityLevelConfiguration object named "
                                f'"{level}" but there is no such object')


class FlowControl:
    """The configuration in memory (see the module docstring).  ``generation`` grows with every
    change of the priority levels; ``synced`` is set once both kinds have been listed."""

    def __init__(self, api: Any, registry: Registry) -> None:
        self.api = api
        self.rts = {k: registry.by_kind(fc.GROUP_VERSION, k) for k in KINDS}
        self.schemas: dict[str, Obj] = {}
        self.levels: dict[str, Obj] = {}
        self.generation = 0
        self.synced = asyncio.Event()
        self._synced: set[str] = set()
        self._ordered: list[Obj] = []
        self._changed = asyncio.Event()
        self._classified: dict[tuple[Any, ...], Classification | None] = {}

    # ---- reading
    def classify(self, user: str, groups: tuple[str, ...], info: Any) -> Classification | None:
        """The first matching schema whose level exists (None before the first list).  Answers are
        remembered per (user, groups, what the request asks) until the configuration changes, at
        most :data:`CLASSIFIED` of them (matching every schema costs ~0.1 ms a request)."""
        if not self.synced.is_set():
            return None
        key = (user, groups, info.verb, info.resource_request, info.api_group, info.resource, info.subresource,
               info.namespace, "" if info.resource_request else info.path)
        if key not in self._classified:
            if len(self._classified) >= CLASSIFIED:
                self._classified.clear()
            self._classified[key] = self._match(user, groups, info)
        return self._classified[key]

    def _match(self, user: str, groups: tuple[str, ...], info: Any) -> Classification | None:
        for schema in self._ordered:
            spec = schema.get("spec") or {}
            level = self.levels.get((spec.get("priorityLevelConfiguration") or {}).get("name") or "")
            if level is not None and fc.schema_matches(spec, user, groups, info):
                return self._result(schema, level)
        catch_all, catch_all_level = self.schemas.get("catch-all"), self.levels.get("catch-all")
        if catch_all is None or catch_all_level is None:
            return None
        return self._result(catch_all, catch_all_level)

    @staticmethod
    def _result(schema: Obj, level: Obj) -> Classification:
        return Classification((schema.get("metadata") or {}).get("name") or "",
                              (schema.get("metadata") or {}).get("uid") or "",
                              (level.get("metadata") or {}).get("name") or "",
                              (level.get("metadata") or {}).get("uid") or "",
                              (level.get("spec") or {}).get("type") == fc.EXEMPT)

    def limits(self, total: int) -> dict[str, int]:
        """Each Limited level's turns out of ``total`` (:func:`concurrency_limits`)."""
        return concurrency_limits(self.levels, total)

    # ---- writing
    def apply(self, kind: str, event: str, obj: Obj) -> None:
        """Take one object (``event`` ADDED, MODIFIED or DELETED) into memory."""
        name = (obj.get("metadata") or {}).get("name") or ""
        table = self.schemas if kind == "FlowSchema" else self.levels
        if event == "DELETED":
            table.pop(name, None)
        else:
            table[name] = obj
        if kind == "FlowSchema":
            self._order()
        else:
            self.generation += 1
            self._classified.clear()
        self._changed.set()

    def _order(self) -> None:
        self._classified.clear()
        self._ordered = sorted(self.schemas.values(), key=lambda s: (
            (s.get("spec") or {}).get("matchingPrecedence") or 0, (s.get("metadata") or {}).get("name") or ""))

    # ---- the loops
    async def run(self, stop: asyncio.Event) -> None:
        """Create the bootstrap objects, list and watch both kinds, keep the conditions, until ``stop``."""
        tasks = [asyncio.create_task(self._reflect(kind)) for kind in KINDS]
        tasks.append(asyncio.create_task(self._bootstrap(stop)))
        tasks.append(asyncio.create_task(self._conditions()))
        await stop.wait()
        for t in tasks:
            t.cancel()
        for t in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await t

    async def _bootstrap(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                await self.ensure()
                return
            except errors.APIError as exc:
                log.debug("apf bootstrap: %s; retrying", exc.message)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), 1.0)

    async def ensure(self) -> None:
        """Create the mandatory and suggested objects that are missing; put back the spec of those
        marked ``apf.kubernetes.io/autoupdate-spec: "true"``."""
        levels = fc.MANDATORY_PRIORITY_LEVELS + fc.SUGGESTED_PRIORITY_LEVELS
        for kind, objects in (("PriorityLevelConfiguration", levels),
                              ("FlowSchema", fc.MANDATORY_FLOW_SCHEMAS + fc.SUGGESTED_FLOW_SCHEMAS)):
            rt = self.rts[kind]
            assert rt is not None
            for wanted in objects:
                name = wanted["metadata"]["name"]
                try:
                    current = await self.api.get(rt, None, name)
                except errors.NotFound:
                    with contextlib.suppress(errors.AlreadyExists):
                        await self.api.create(rt, None, copy.deepcopy(wanted))
                    continue
                annotations = (current.get("metadata") or {}).get("annotations") or {}
                if annotations.get(fc.AUTOUPDATE_ANNOTATION) == "true" and not _spec_matches(current, wanted):
                    updated = copy.deepcopy(current)
                    updated["spec"] = copy.deepcopy(wanted["spec"])
                    with contextlib.suppress(errors.Conflict, errors.NotFound):
                        await self.api.update(rt, None, name, updated)

    async def _reflect(self, kind: str) -> None:
        rt = self.rts[kind]
        assert rt is not None

        def listed(items: list[Obj]) -> None:
            table = self.schemas if kind == "FlowSchema" else self.levels
            table.clear()
            for obj in items:
                self.apply(kind, "ADDED", obj)
            self._order()
            self.generation += 1
            self._synced.add(kind)
            if len(self._synced) == len(KINDS):
                self.synced.set()

        await self.api.store.reflect(rt.storage_prefix(), listed, lambda event, obj: self.apply(kind, event, obj),
                                     f"apf config: {kind}")

    async def _conditions(self) -> None:
        """Write each FlowSchema's ``Dangling`` condition when it changes."""
        rt = self.rts["FlowSchema"]
        while True:
            await self._changed.wait()
            self._changed.clear()
            if not self.synced.is_set():
                continue
            for name, schema in list(self.schemas.items()):
                status, reason, message = dangling_condition(schema, self.levels)
                conditions = list((schema.get("status") or {}).get("conditions") or [])
                current = next((c for c in conditions if c.get("type") == "Dangling"), None)
                if current is not None and (current.get("status"), current.get("reason"), current.get("message")) \
                        == (status, reason, message):
                    continue
                now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
                cond = {"type": "Dangling", "status": status, "lastTransitionTime": now, "reason": reason,
                        "message": message}
                body = copy.deepcopy(schema)
                body["status"] = {**(schema.get("status") or {}),
                                  "conditions": [c for c in conditions if c.get("type") != "Dangling"] + [cond]}
                try:
                    await self.api.update(rt, None, name, body, subresource="status")
                except errors.APIError as exc:  # changed or gone meanwhile: its watch event comes next
                    log.debug("apf config: FlowSchema %s status: %s", name, exc.message)
                    self._changed.set()
                    await asyncio.sleep(0.1)


def _spec_matches(current: Obj, wanted: Obj) -> bool:
    """Whether ``current``'s spec holds ``wanted``'s (defaults added by the apiserver aside)."""
    def within(want: Any, have: Any) -> bool:
        if isinstance(want, dict):
            return isinstance(have, dict) and all(within(v, have.get(k)) for k, v in want.items())
        return bool(want == have)
    return within(wanted.get("spec"), current.get("spec"))
