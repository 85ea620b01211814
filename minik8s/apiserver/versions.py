"""Versions served by converting to and from the version a kind is stored in.

Each :class:`ServedVersion` is a discovery/OpenAPI row of its own (its model describes it) whose
requests the generic handlers serve with the stored kind's row: bodies are converted to the
stored form before create/update (and patches applied to the served form, see
``ResourceAPI.patch(view=...)``), answers and watch events back.  Objects are stored once, under
the stored kind's key, as kube-apiserver stores every version of a kind in one.

Today: ``autoscaling/v1`` HorizontalPodAutoscaler over the stored ``autoscaling/v2`` one (what
kubectl 1.32's ``kubectl autoscale`` creates), and ``events.k8s.io/v1`` Event over the core ``v1``
one (:mod:`minik8s.api.events_v1`).

A kind whose validation depends on the version a write came through (Event: kube-apiserver's
``requestVersion``) reads it from :data:`REQUEST_VERSION`, which the apiserver sets around the writes
of a served version.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from minik8s.api import autoscaling_v1, events_v1
from minik8s.api.base import Obj
from minik8s.api.resourcetypes import ResourceType

#: The ``group/version`` a request came through, when it is a version served by conversion (else None).
REQUEST_VERSION: ContextVar[str | None] = ContextVar("REQUEST_VERSION", default=None)


@dataclass(frozen=True)
class ServedVersion:
    """``rt`` (served, e.g. autoscaling/v1) over ``storage`` (the registry's group/version of the kind).

    ``to_storage(served_body, stored_or_None)`` → stored form; ``from_storage(stored)`` → served form.
    """

    rt: ResourceType
    storage: tuple[str, str]
    to_storage: Callable[[Any, Obj | None], Any]
    from_storage: Callable[[Obj], Obj]

    @property
    def view(self) -> tuple[Callable[[Obj], Obj], Callable[[Any, Obj | None], Any]]:
        """The (show, store) pair ``ResourceAPI.patch`` applies a patch through."""
        return self.from_storage, self.to_storage

    def out_list(self, listed: Obj) -> Obj:
        """A stored list as this version's list."""
        return {**listed, "apiVersion": self.rt.api_version, "kind": self.rt.list_kind,
                "items": [self.from_storage(o) for o in listed.get("items") or []]}

    def out_event(self, event: Obj) -> Obj:
        """A watch event with its object in this version (ERROR and BOOKMARK objects keep theirs
        but for apiVersion)."""
        obj = event.get("object") or {}
        if event.get("type") in ("ADDED", "MODIFIED", "DELETED"):
            return {**event, "object": self.from_storage(obj)}
        if event.get("type") == "BOOKMARK":
            return {**event, "object": {**obj, "apiVersion": self.rt.api_version}}
        return event


SERVED_VERSIONS = [
    ServedVersion(
        ResourceType("autoscaling", "v1", "HorizontalPodAutoscaler", "horizontalpodautoscalers",
                     "horizontalpodautoscaler", True, autoscaling_v1.HorizontalPodAutoscaler, short_names=("hpa",),
                     subresources=frozenset({"status"}), categories=("all",)),
        ("autoscaling", "v2"), autoscaling_v1.from_v1, autoscaling_v1.to_v1),
    ServedVersion(
        ResourceType("events.k8s.io", "v1", "Event", "events", "event", True, events_v1.Event, short_names=("ev",)),
        ("", "v1"), events_v1.from_v1, events_v1.to_v1),
]


def served_version(group: str, version: str, plural: str) -> ServedVersion | None:
    """The ServedVersion of a request path's group/version/plural, if it is one."""
    for sv in SERVED_VERSIONS:
        if (sv.rt.group, sv.rt.version, sv.rt.plural) == (group, version, plural):
            return sv
    return None
