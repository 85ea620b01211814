"""Jinja filters for the verify playbooks: read `kubectl get -o json` output safely.

A verify step polls the cluster while it is changing, so it meets half-built objects: a
pod the ReplicaSet just created but the scheduler has not bound (no ``spec.nodeName``), a
pod without ``status.podIP`` or ``containerStatuses`` yet, Endpoints without ``subsets``, a
Node without ``podCIDR``, or no JSON at all while the apiserver restarts. Jinja's
``selectattr``/``rejectattr``/``map(attribute=...)`` raise on a missing attribute, which
ends an ``until:`` loop with an error instead of another try. These filters treat a
missing field as "not there yet", so a condition keeps waiting:

- ``stdout | kube_items``: the ``items`` of a List (or ``[obj]`` for one object); ``[]``
  when the output is empty or not JSON.
- ``stdout | kube_object``: the object, ``{}`` when the output is empty or not JSON.
- ``items | kube_live``: those without ``metadata.deletionTimestamp``.
- ``items | kube_ready``: those with a ``Ready`` condition whose status is ``"True"``.
- ``obj | kube_condition('Reachable')``: that condition's status, ``""`` while missing.
- ``items | kube_bound``: pods with a ``spec.nodeName``.
- ``items | kube_on_node(name)`` / ``kube_off_node(name)``: bound pods on / not on a node
  (an unbound pod is on neither).
- ``items | kube_pluck('spec.nodeName')``: that field of each object, ``None`` where
  missing (``kube_pluck('...', default)`` for another stand-in).
- ``obj | kube_dig('status.conditions', [])``: one field, or the default.
- ``endpoints | kube_addresses``: the ready addresses of an Endpoints object.
- ``items | kube_names``: ``metadata.name`` of each.
- ``items | kube_labelled(key, value)``: those whose label ``key`` is ``value``.
- ``'2024-05-01T10:00:00.123456Z' | kube_time``: a Time/MicroTime as seconds since the epoch
  (float), ``0.0`` when missing or unreadable.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

_MISSING = object()


def kube_dig(obj: Any, path: str, default: Any = None) -> Any:
    """The value at a dotted ``path`` of nested dicts, or ``default`` where any part is missing."""
    value = obj
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value or value[part] is None:
            return default
        value = value[part]
    return value


def kube_object(stdout: Any) -> dict[str, Any]:
    """One object from ``kubectl get -o json`` output; ``{}`` if empty or not JSON."""
    if isinstance(stdout, dict):
        return stdout
    try:
        parsed = json.loads(stdout or "{}")
    except (TypeError, ValueError):
        return {}
    return parsed if isinstance(parsed, dict) else {}


def kube_items(stdout: Any) -> list[dict[str, Any]]:
    """The objects of a List from ``kubectl get -o json`` output; ``[]`` if empty or not JSON."""
    obj = kube_object(stdout)
    if "items" in obj:
        return [item for item in obj.get("items") or [] if isinstance(item, dict)]
    return [obj] if obj.get("kind") else []


def kube_live(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Objects not being deleted (no ``metadata.deletionTimestamp``)."""
    return [item for item in items if not kube_dig(item, "metadata.deletionTimestamp")]


def kube_condition(obj: Any, ctype: str) -> str:
    """The status (``"True"``, ``"False"``, ``"Unknown"``) of the condition ``ctype`` of one
    object, ``""`` while it has none."""
    conditions = kube_dig(obj, "status.conditions", []) if isinstance(obj, dict) else []
    for c in conditions if isinstance(conditions, list) else []:
        if isinstance(c, dict) and c.get("type") == ctype:
            return str(c.get("status") or "")
    return ""


def kube_ready(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Objects (pods, nodes) whose ``Ready`` condition is ``"True"``."""
    return [item for item in items if kube_condition(item, "Ready") == "True"]


def kube_bound(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Pods the scheduler has bound (a non-empty ``spec.nodeName``)."""
    return [item for item in items if kube_dig(item, "spec.nodeName")]


def kube_on_node(items: list[dict[str, Any]], node: str) -> list[dict[str, Any]]:
    """Bound pods on ``node``."""
    return [item for item in items if kube_dig(item, "spec.nodeName") == node]


def kube_off_node(items: list[dict[str, Any]], node: str) -> list[dict[str, Any]]:
    """Bound pods on any node but ``node`` (unbound pods are left out)."""
    return [item for item in kube_bound(items) if kube_dig(item, "spec.nodeName") != node]


def kube_labelled(items: list[dict[str, Any]], key: str, value: str) -> list[dict[str, Any]]:
    """Objects whose label ``key`` is ``value``."""
    return [item for item in items if kube_dig(item, "metadata.labels", {}).get(key) == value]


def kube_pluck(items: list[dict[str, Any]], path: str, default: Any = None) -> list[Any]:
    """The field at ``path`` of each object, ``default`` where it is missing."""
    return [kube_dig(item, path, default) for item in items]


def kube_names(items: list[dict[str, Any]]) -> list[str]:
    """``metadata.name`` of each object."""
    return [name for name in kube_pluck(items, "metadata.name") if name]


def kube_addresses(endpoints: Any) -> list[dict[str, Any]]:
    """The ready ``addresses`` of every subset of an Endpoints object (``[]`` if none yet)."""
    obj = kube_object(endpoints)
    return [
        address
        for subset in obj.get("subsets") or [] if isinstance(subset, dict)
        for address in subset.get("addresses") or [] if isinstance(address, dict)
    ]


def kube_time(value: Any) -> float:
    """An RFC 3339 Time or MicroTime (``...Z`` or with an offset) as epoch seconds; 0.0 if absent."""
    if not isinstance(value, str) or not value:
        return 0.0
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return 0.0
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed.timestamp()


class FilterModule:
    """Ansible's entry point for filter plugins."""

    def filters(self) -> dict[str, Any]:
        return {
            "kube_addresses": kube_addresses,
            "kube_bound": kube_bound,
            "kube_condition": kube_condition,
            "kube_dig": kube_dig,
            "kube_items": kube_items,
            "kube_labelled": kube_labelled,
            "kube_live": kube_live,
            "kube_names": kube_names,
            "kube_object": kube_object,
            "kube_off_node": kube_off_node,
            "kube_on_node": kube_on_node,
            "kube_pluck": kube_pluck,
            "kube_time": kube_time,
            "kube_ready": kube_ready,
        }
