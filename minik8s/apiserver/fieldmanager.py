"""Server-side apply and ``metadata.managedFields``, as kube-apiserver's field manager.

A *field set* is a set of paths; a path is a tuple of Kubernetes' FieldsV1 elements:
``f:<field>`` for a field of an object or map, ``k:{"name":"web"}`` for an item of a list
with ``x-kubernetes-list-map-keys`` (the key fields as compact JSON, keys sorted).  A set is
stored as the FieldsV1 tree (``{"f:spec": {"f:replicas": {}}}``), where ``"."`` marks a
list-map item that is itself a member besides its fields.  The granularity follows the
kind's OpenAPI schema (:class:`minik8s.api.schema.Schemas`): objects and maps are merged
field by field, list-maps item by item on their keys, every other list is atomic (one leaf).

* :func:`record_update` — a create, update or patch: its manager (operation ``Update``)
  gets the fields whose values it changed, which every other manager loses.
* :func:`apply` — ``application/apply-patch+yaml``: the applied configuration is merged
  into the live object; its fields become the manager's ``Apply`` set; fields this manager
  applied before and no longer applies are removed unless another manager owns them.
  Changing a field another manager owns is a conflict (409, reason Conflict, one cause
  ``FieldManagerConflict`` per field, Kubernetes' message; a manager is its name, operation and
  subresource, so the same name's ``Update`` entry conflicts too) unless ``force`` is given,
  which moves the field to the applier.  Applying the value already there shares it.

Not tracked, as in Kubernetes: ``apiVersion``, ``kind`` and the metadata the server owns
(name, namespace, uid, resourceVersion, generation, timestamps, managedFields); ``status``
belongs to writes of the status subresource only.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from minik8s.api import errors
from minik8s.api.base import Obj, now_rfc3339
from minik8s.api.schema import REF_PREFIX, Schemas

Path = tuple[str, ...]

APPLY, UPDATE = "Apply", "Update"
#: Metadata fields no manager owns.
IGNORED_METADATA = frozenset({"name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
                              "deletionTimestamp", "deletionGracePeriodSeconds", "managedFields", "selfLink"})
#: Defaults of list-map key fields (the schema default of ports' ``protocol``).
KEY_DEFAULTS = {"protocol": "TCP"}
_MISSING = object()


def manager_from_user_agent(user_agent: str) -> str:
    """Kubernetes' default manager of a write without ``fieldManager``: the User-Agent up to its
    first ``/`` (``kubectl/v1.32.0 (linux/amd64)`` → ``kubectl``), at most 128 characters."""
    return user_agent.split("/", 1)[0].strip()[:128]


def _item_key(item: Obj, keys: Iterable[str]) -> str:
    values = {k: item.get(k, KEY_DEFAULTS.get(k)) for k in sorted(keys)}
    return "k:" + json.dumps({k: v for k, v in values.items() if v is not None}, separators=(",", ":"),
                             sort_keys=True)


def _matches(item: Any, element: str) -> bool:
    if not isinstance(item, dict):
        return False
    try:
        wanted = json.loads(element[2:])
    except ValueError:
        return False
    return all(item.get(k, KEY_DEFAULTS.get(k)) == v for k, v in wanted.items())


def path_string(path: Path) -> str:
    """Kubernetes' text of a path: ``.spec.containers[name="web"].image``."""
    out = ""
    for element in path:
        if element.startswith("f:"):
            out += "." + element[2:]
        elif element.startswith("k:"):
            keys = json.loads(element[2:])
            out += "[" + ",".join(f"{k}={json.dumps(v)}" for k, v in keys.items()) + "]"
    return out


# ------------------------------------------------------------------ FieldsV1
def to_fields_v1(paths: set[Path]) -> Obj:
    """The FieldsV1 tree of ``paths``."""
    parents = {p[:i] for p in paths for i in range(1, len(p))}
    tree: Obj = {}
    for path in sorted(paths | parents):
        node = tree
        for element in path:
            node = node.setdefault(element, {})
        if path in paths and path in parents:
            node.setdefault(".", {})
    return tree


def from_fields_v1(tree: Any, prefix: Path = ()) -> set[Path]:
    """The paths of a FieldsV1 tree (an empty node is a member; ``"."`` makes its parent one)."""
    out: set[Path] = set()
    if not isinstance(tree, dict):
        return out
    if not tree and prefix:
        out.add(prefix)
    for element, sub in tree.items():
        if element == ".":
            out.add(prefix)
        else:
            out |= from_fields_v1(sub, prefix + (element,))
    return out


# ------------------------------------------------------------------ the schema walk
class FieldPaths:
    """The field paths, merge and removal of one kind's objects, following its OpenAPI schema
    (an unknown kind is walked as free-form maps with atomic lists)."""

    def __init__(self, schemas: Schemas, group: str, version: str, kind: str) -> None:
        self.definitions = schemas.definitions
        name = schemas.kind_names.get((group, version, kind))
        self.root: Obj = {"$ref": REF_PREFIX + name} if name else {}

    def _resolve(self, schema: Any) -> Obj:
        if not isinstance(schema, dict):
            return {}
        ref = schema.get("$ref")
        return self.definitions.get(ref[len(REF_PREFIX):], {}) if isinstance(ref, str) else schema

    def _child(self, schema: Obj, key: str) -> Obj | None:
        """The schema of field ``key`` of an object of ``schema`` (None: a field it does not know)."""
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        if key in props:
            return self._resolve(props[key])
        if isinstance(extra, dict):
            return self._resolve(extra)
        return {} if not props else None

    def leaves(self, obj: Obj | None, subresource: str | None = None) -> dict[Path, Any]:
        """Every member path of ``obj`` → its value (a list-map item → its key), within the part of
        the object a write of ``subresource`` owns."""
        out: dict[Path, Any] = {}
        if not obj:
            return out
        root = self._resolve(self.root)
        for key, value in obj.items():
            if key in ("apiVersion", "kind") or (key == "status") != (subresource == "status"):
                continue
            if key == "metadata" and isinstance(value, dict):
                value = {k: v for k, v in value.items() if k not in IGNORED_METADATA}
                if not value:
                    continue
            schema = self._child(root, key)
            if schema is not None:
                self._walk(schema, value, ("f:" + key,), out)
        return out

    def _walk(self, schema: Obj, value: Any, path: Path, out: dict[Path, Any]) -> None:
        if isinstance(value, dict) and value:
            for key, item in value.items():
                sub = self._child(schema, key)
                if sub is not None:
                    self._walk(sub, item, path + ("f:" + key,), out)
            return
        keys = schema.get("x-kubernetes-list-map-keys")
        if keys and isinstance(value, list):
            items = self._resolve(schema.get("items"))
            for item in value:
                if isinstance(item, dict):
                    element = _item_key(item, keys)
                    out[path + (element,)] = element
                    self._walk(items, item, path + (element,), out)
            return
        out[path] = value

    def merge(self, live: Obj, config: Obj) -> Obj:
        """``config`` merged into a copy of ``live``: its fields overwrite, maps and objects merge
        field by field, list-maps item by item (new items appended), other lists are replaced."""
        return self._merge(self._resolve(self.root), live, config)

    def _merge(self, schema: Obj, live: Any, config: Any) -> Any:
        if isinstance(live, dict) and isinstance(config, dict):
            out = dict(live)
            for key, item in config.items():
                if item is None:
                    out.pop(key, None)
                elif key in live:
                    out[key] = self._merge(self._child(schema, key) or {}, live[key], item)
                else:
                    out[key] = copy.deepcopy(item)
            return out
        keys = schema.get("x-kubernetes-list-map-keys")
        if keys and isinstance(live, list) and isinstance(config, list):
            merged = list(live)
            index = {_item_key(i, keys): n for n, i in enumerate(live) if isinstance(i, dict)}
            items = self._resolve(schema.get("items"))
            for item in config:
                at = index.get(_item_key(item, keys)) if isinstance(item, dict) else None
                if at is None:
                    merged.append(copy.deepcopy(item))
                else:
                    merged[at] = self._merge(items, merged[at], item)
            return merged
        return copy.deepcopy(config)

    @staticmethod
    def remove(obj: Obj, paths: Iterable[Path]) -> None:
        """Remove the fields and list-map items at ``paths`` from ``obj``, in place (absent ones are skipped)."""
        doomed = set(paths)
        for path in doomed:
            if any(path[:i] in doomed for i in range(1, len(path))):
                continue  # goes with its parent
            parent: Any = obj
            for element in path[:-1]:
                if element.startswith("f:") and isinstance(parent, dict):
                    parent = parent.get(element[2:])
                elif element.startswith("k:") and isinstance(parent, list):
                    parent = next((i for i in parent if _matches(i, element)), None)
                else:
                    parent = None
                if parent is None:
                    break
            last = path[-1]
            if last.startswith("f:") and isinstance(parent, dict):
                parent.pop(last[2:], None)
            elif last.startswith("k:") and isinstance(parent, list):
                parent[:] = [i for i in parent if not _matches(i, last)]


# ------------------------------------------------------------------ managedFields
@dataclass
class Entry:
    """One ``metav1.ManagedFieldsEntry`` with its field set decoded."""

    manager: str
    operation: str
    api_version: str
    time: str | None
    subresource: str
    fields: set[Path] = field(default_factory=set)

    def same_owner(self, manager: str, operation: str, subresource: str) -> bool:
        return (self.manager, self.operation, self.subresource) == (manager, operation, subresource)

    def to_dict(self) -> Obj:
        out: Obj = {"manager": self.manager, "operation": self.operation, "apiVersion": self.api_version}
        if self.time:
            out["time"] = self.time
        out["fieldsType"] = "FieldsV1"
        out["fieldsV1"] = to_fields_v1(self.fields)
        if self.subresource:
            out["subresource"] = self.subresource
        return out


def entries(obj: Obj | None) -> list[Entry]:
    """The decoded ``metadata.managedFields`` of ``obj``."""
    raw = ((obj or {}).get("metadata") or {}).get("managedFields") or []
    return [Entry(str(e.get("manager") or ""), str(e.get("operation") or UPDATE), str(e.get("apiVersion") or ""),
                  e.get("time"), str(e.get("subresource") or ""), from_fields_v1(e.get("fieldsV1")))
            for e in raw if isinstance(e, dict)]


def _store(obj: Obj, owners: list[Entry], before: list[Entry]) -> None:
    """Write ``owners`` (without empty sets) to ``obj``'s managedFields; an entry whose fields did
    not change keeps its time."""
    kept = {(e.manager, e.operation, e.subresource, frozenset(e.fields)): e.time for e in before}
    out = []
    for entry in owners:
        if not entry.fields:
            continue
        entry.time = kept.get((entry.manager, entry.operation, entry.subresource, frozenset(entry.fields)),
                              entry.time)
        out.append(entry.to_dict())
    meta = obj.setdefault("metadata", {})
    if out:
        meta["managedFields"] = out
    else:
        meta.pop("managedFields", None)


def record_update(paths: FieldPaths, old: Obj | None, new: Obj, manager: str, api_version: str,
                  subresource: str | None = None) -> None:
    """Record a non-apply write of ``new`` (over ``old``; None for a create) by ``manager``, in place:
    the manager's ``Update`` entry gains the fields whose values changed; other managers lose
    them, and every manager loses the fields that are gone."""
    before = entries(new) if "managedFields" in (new.get("metadata") or {}) else entries(old)
    old_leaves, new_leaves = paths.leaves(old, subresource), paths.leaves(new, subresource)
    changed = {p for p, v in new_leaves.items() if old_leaves.get(p, _MISSING) != v}
    gone = set(old_leaves) - set(new_leaves)
    owners = copy.deepcopy(before)
    if changed or gone:
        for entry in owners:
            entry.fields -= changed | gone
        sub = subresource or ""
        mine = next((e for e in owners if e.same_owner(manager, UPDATE, sub)), None)
        if mine is None and changed:
            mine = Entry(manager, UPDATE, api_version, None, sub)
            owners.append(mine)
        if mine is not None:
            mine.fields |= changed
            mine.api_version, mine.time = api_version, now_rfc3339()
    _store(new, owners, entries(old))


def _conflict(conflicts: list[tuple[Entry, Path]]) -> errors.Conflict:
    def who(entry: Entry) -> str:
        text = json.dumps(entry.manager)
        if entry.subresource:
            text += f" with subresource {json.dumps(entry.subresource)}"
        return text + (f" using {entry.api_version}" if entry.operation == UPDATE else "")

    causes = [{"type": "FieldManagerConflict", "message": f"conflict with {who(e)}", "field": path_string(p)}
              for e, p in conflicts]
    if len(conflicts) == 1:
        entry, path = conflicts[0]
        message = f"Apply failed with 1 conflict: conflict with {who(entry)}: {path_string(path)}"
    else:
        lines: dict[str, list[str]] = {}
        for entry, path in conflicts:
            lines.setdefault(who(entry), []).append(f"- {path_string(path)}")
        parts = [line for owner in sorted(lines) for line in [f"conflicts with {owner}:", *lines[owner]]]
        message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(parts)
    return errors.Conflict(message, {"causes": causes})


def apply(paths: FieldPaths, live: Obj | None, config: Obj, manager: str, api_version: str,
          force: bool = False, subresource: str | None = None) -> Obj:
    """The object after ``manager`` applies ``config`` (an object in wire form) to ``live`` (None:
    absent), with its managedFields; 409 Conflict (see the module) unless ``force``.  With
    ``subresource`` ``"status"`` only ``status`` is applied and owned (an entry of that subresource)."""
    before = entries(live)
    owners = copy.deepcopy(before)
    base = live or {}
    sub = subresource or ""
    applied = set(paths.leaves(config, subresource))
    merged = paths.merge(base, config)
    live_leaves, merged_leaves = paths.leaves(base, subresource), paths.leaves(merged, subresource)
    changed = {p for p in applied if live_leaves.get(p, _MISSING) != merged_leaves.get(p, _MISSING)}
    mine = next((e for e in owners if e.same_owner(manager, APPLY, sub)), None)
    others = [e for e in owners if e is not mine]  # managers are (name, operation, subresource), as in Kubernetes
    conflicts = [(e, p) for e in others for p in sorted(changed & e.fields)]
    if conflicts and not force:
        raise _conflict(conflicts)
    for entry in others:
        entry.fields -= changed
    if mine is not None:
        kept = {p[:i] for e in owners if e is not mine for p in e.fields for i in range(1, len(p) + 1)}
        kept |= {p[:i] for p in applied for i in range(1, len(p) + 1)}
        paths.remove(merged, [p for p in mine.fields - applied if p not in kept])
    else:
        mine = Entry(manager, APPLY, api_version, None, sub)
        owners.append(mine)
    mine.fields, mine.api_version, mine.time = applied, api_version, now_rfc3339()
    _store(merged, owners, before)
    return merged
