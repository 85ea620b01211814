"""The three PATCH types of the Kubernetes API, applied to plain JSON values.

* ``application/merge-patch+json`` -- :func:`json_merge_patch` (RFC 7386).
* ``application/json-patch+json`` -- :func:`json_patch` (RFC 6902, via ``jsonpatch``).
* ``application/strategic-merge-patch+json`` -- :func:`strategic_merge_patch`, Kubernetes'
  merge patch that merges known lists item by item by a merge key.

Plus :func:`create_merge_patch` and :func:`create_three_way_merge_patch`, which compute
merge patches the way ``kubectl apply`` does.

JSON values are ``dict`` / ``list`` / ``str`` / ``int`` / ``float`` / ``bool`` / ``None``.
No function mutates its arguments, and results never share mutable parts with them.
Errors are :class:`ValueError`; the API server answers them with 422 (Invalid) or
400 (BadRequest) ``Status`` bodies.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

import jsonpatch
import jsonpointer

from minik8s.api.k8sopenapi import PatchSchema

__all__ = [
    "MERGE_KEYS",
    "create_merge_patch",
    "create_three_way_merge_patch",
    "json_merge_patch",
    "json_patch",
    "strategic_merge_patch",
]

#: A JSON value (object, array, string, number, boolean or null).
JSON = Any

#: Field name -> merge key for the lists that strategic merge patch merges item by item when
#: the object's kind has no schema to say it (minik8s' own kinds; with a
#: :class:`~minik8s.api.k8sopenapi.PatchSchema` the schema's ``x-kubernetes-patch-merge-key``
#: decides). ``ports`` is special: it is keyed by ``containerPort`` when its items have one
#: (Container ports) and by ``port`` otherwise (Service ports). Every other list is replaced whole.
MERGE_KEYS: dict[str, str] = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "env": "name",
    "volumes": "name",
    "imagePullSecrets": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "ports": "containerPort",
    "conditions": "type",
    "hostAliases": "ip",
}

_PATCH = "$patch"
_RETAIN_KEYS = "$retainKeys"
_SET_ELEMENT_ORDER = "$setElementOrder/"
_DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList/"


# ---------------------------------------------------------------------------------------
# RFC 7386 JSON merge patch


def json_merge_patch(target: JSON, patch: JSON) -> JSON:
    """Apply an RFC 7386 JSON merge patch (``application/merge-patch+json``).

    A dict patch is merged key by key into the target (a non-dict target is first
    replaced by ``{}``): a ``None`` value deletes the key, a dict value merges
    recursively, anything else (lists included) replaces. A non-dict patch replaces the
    target whole. ``json_merge_patch({"a": 1, "b": {"c": 2}}, {"a": None, "b": {"d": 3}})``
    -> ``{"b": {"c": 2, "d": 3}}``. Returns a new value; nothing is mutated.
    """
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    _merge_into(result, patch)
    return result


def _merge_into(result: dict[str, Any], patch: dict[str, Any]) -> None:
    """RFC 7386 on ``result``, which the caller owns (already a copy)."""
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        elif isinstance(value, dict):
            existing = result.get(key)
            merged = existing if isinstance(existing, dict) else {}
            _merge_into(merged, value)
            result[key] = merged
        else:
            result[key] = copy.deepcopy(value)


# ---------------------------------------------------------------------------------------
# RFC 6902 JSON patch


def json_patch(target: JSON, operations: list[dict[str, Any]]) -> JSON:
    """Apply an RFC 6902 JSON patch (``application/json-patch+json``) with ``jsonpatch``.

    ``operations`` is a list of ``{"op": "add"|"remove"|"replace"|"move"|"copy"|"test",
    "path": "/json/pointer", ...}``; they apply in order and all or nothing. Returns a new
    value; neither ``target`` nor ``operations`` is mutated or shared with the result.

    Raises:
        ValueError: when ``operations`` is not a list of objects, an operation is
            malformed (unknown ``op``, missing ``path``/``value``/``from``), a path does
            not exist, or a ``test`` fails -- carrying ``jsonpatch``'s message.
    """
    if not isinstance(operations, list):
        raise ValueError(f"a JSON patch must be a list of operations, got {type(operations).__name__}")
    for index, operation in enumerate(operations):
        if not isinstance(operation, dict):
            raise ValueError(f"JSON patch operation {index} must be an object, got {operation!r}")
    document = copy.deepcopy(target)
    # One operation at a time, so that the error can say which one failed; the work is
    # done on a copy, so a failure part-way leaves nothing half-applied.
    for index, operation in enumerate(operations):
        where = f"JSON patch operation {index} ({operation.get('op')!r} at {operation.get('path')!r})"
        try:
            document = jsonpatch.JsonPatch([copy.deepcopy(operation)]).apply(document, in_place=True)
        except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as exc:
            message = str(exc) or type(exc).__name__
            if isinstance(exc, jsonpatch.JsonPatchConflict) and message.startswith("'"):
                message = f"path not found: {message}"
            raise ValueError(f"{where}: {message}") from exc
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            # jsonpatch lets some malformed operations escape as built-in errors.
            raise ValueError(f"{where}: malformed operation: {type(exc).__name__}: {exc}") from exc
    return document


# ---------------------------------------------------------------------------------------
# Kubernetes strategic merge patch


def strategic_merge_patch(target: dict[str, Any], patch: dict[str, Any],
                          schema: PatchSchema | None = None) -> dict[str, Any]:
    """Apply a Kubernetes strategic merge patch (``application/strategic-merge-patch+json``).

    ``schema``: the kind's schema (:class:`~minik8s.api.k8sopenapi.PatchSchema`).  With it, the
    lists its ``x-kubernetes-patch-merge-key``/``x-kubernetes-patch-strategy: merge`` mark merge
    item by item on that key, lists of values marked ``merge`` (``finalizers``) merge as sets,
    and every other list is replaced whole — Kubernetes' ``patchMergeKey``/``patchStrategy``
    tags, as published in its OpenAPI.  Without it, :data:`MERGE_KEYS` decides by field name.

    Works like :func:`json_merge_patch` (``None`` deletes a key, dicts merge recursively,
    scalars replace) except for the merged lists; without a schema these are:
    ``containers``, ``initContainers``, ``ephemeralContainers``,
    ``env``, ``volumes``, ``imagePullSecrets`` by ``name``; ``volumeMounts`` by
    ``mountPath``; ``volumeDevices`` by ``devicePath``; ``ports`` by ``containerPort``
    (``port`` for Service ports); ``conditions`` by ``type``; ``hostAliases`` by ``ip``.
    A patch item whose key matches an existing item is merged into it (strategically,
    recursively); a new one is appended in patch order; existing items not mentioned stay.
    For ``ports``, a patch item that names a ``protocol`` only matches an item with the
    same protocol (absent means TCP), so ``53/TCP`` and ``53/UDP`` stay distinct. All
    other lists (``tolerations``, ``args``, ``command``, ...) are replaced whole.

    Directives:

    * list item ``{"$patch": "delete", "<mergeKey>": v}`` removes the matching items;
    * list item ``{"$patch": "replace"}`` makes the other items replace the whole list;
    * ``"$patch": "replace"`` in a dict replaces the dict instead of merging it;
      ``"$patch": "delete"`` empties it; ``"$patch": "merge"`` is the default;
    * ``"$retainKeys": [..]`` drops the target keys not listed (``kubectl apply`` uses it
      to switch a Deployment's strategy);
    * ``"$deleteFromPrimitiveList/<field>": [..]`` removes those values from the list;
    * ``"$setElementOrder/<field>"`` is accepted and ignored.

    No directive survives into the result. Returns a new dict; nothing is mutated.

    Raises:
        ValueError: when ``target`` or ``patch`` is not a dict, a ``$patch`` value is
            unknown, a merge-keyed list item is not an object or lacks its merge key, a
            ``{"$patch": "replace"}`` list marker carries other fields, a ``$patch``
            directive appears in a list without merge key, ``$retainKeys`` is not a list
            of strings or does not list every patched field, or a
            ``$setElementOrder``/``$deleteFromPrimitiveList`` value is not a list.
    """
    if not isinstance(target, dict):
        raise ValueError(f"strategic merge patch target must be an object, got {type(target).__name__}")
    if not isinstance(patch, dict):
        raise ValueError(f"strategic merge patch must be an object, got {type(patch).__name__}")
    return _smp_map(copy.deepcopy(target), patch, "", _Where(schema, schema is not None))


@dataclass(frozen=True)
class _Where:
    """The schema at a position of a patch (``schema`` None: not known there) and whether the
    patched object has a schema at all (``typed``: else :data:`MERGE_KEYS` decides)."""

    schema: PatchSchema | None
    typed: bool

    def field(self, name: str) -> _Where:
        return _Where(self.schema.field(name) if self.schema is not None else None, self.typed)

    def items(self) -> _Where:
        return _Where(self.schema.items() if self.schema is not None else None, self.typed)

    def list_merge(self, field: str, items: list[Any]) -> tuple[str | None, bool]:
        """(the merge key of list ``field`` here, whether it is a set of values merged as one)."""
        if not self.typed:
            return _merge_key(field, items), False
        if self.schema is None:
            return None, False
        return self.schema.merge_key, self.schema.merge_key is None and "merge" in self.schema.strategies


_UNTYPED = _Where(None, False)


def _smp_map(result: dict[str, Any], patch: dict[str, Any], path: str, where: _Where = _UNTYPED) -> dict[str, Any]:
    """Merge ``patch`` into ``result`` (owned by the caller, mutated) and return it."""
    if _PATCH in patch:
        directive = patch[_PATCH]
        if directive == "replace":
            rest = {key: value for key, value in patch.items() if key != _PATCH}
            return _smp_map({}, rest, path, where)
        if directive == "delete":
            return {}
        if directive != "merge":
            raise ValueError(f"{path or '<root>'}: unknown $patch directive {directive!r}")

    if _RETAIN_KEYS in patch:
        retain = patch[_RETAIN_KEYS]
        if not isinstance(retain, list) or not all(isinstance(key, str) for key in retain):
            raise ValueError(f"{path or '<root>'}: $retainKeys must be a list of field names")
        for key, value in patch.items():
            if key.startswith("$") or value is None:
                continue
            if key not in retain:
                raise ValueError(
                    f"{path or '<root>'}: field {key!r} is patched but not listed in $retainKeys"
                )
        for key in list(result):
            if key not in retain:
                del result[key]

    deletions: list[tuple[str, list[Any]]] = []
    for key, value in patch.items():
        if key in (_PATCH, _RETAIN_KEYS):
            continue
        if key.startswith(_SET_ELEMENT_ORDER):
            if not isinstance(value, list):
                raise ValueError(f"{_join(path, key)}: must be a list")
            continue
        if key.startswith(_DELETE_FROM_PRIMITIVE_LIST):
            if not isinstance(value, list):
                raise ValueError(f"{_join(path, key)}: must be a list")
            deletions.append((key[len(_DELETE_FROM_PRIMITIVE_LIST) :], value))
            continue
        if value is None:
            result.pop(key, None)
            continue
        result[key] = _smp_value(key, result.get(key), value, _join(path, key), where.field(key))

    for field, values in deletions:
        existing = result.get(field)
        if isinstance(existing, list):
            result[field] = [item for item in existing if item not in values]
    return result


def _smp_value(field: str, existing: Any, value: Any, path: str, where: _Where = _UNTYPED) -> Any:
    """The merged value of ``field``; ``existing`` is owned by the caller."""
    if isinstance(value, dict):
        return _smp_map(existing if isinstance(existing, dict) else {}, value, path, where)
    if isinstance(value, list):
        old = existing if isinstance(existing, list) else []
        merge_key, as_set = where.list_merge(field, [*old, *value])
        if as_set:
            fresh = _atomic_list(value, path, where.items())
            return old + [item for item in fresh if not any(_json_equal(item, o) for o in old)]
        if merge_key is None:
            return _atomic_list(value, path, where.items())
        return _smp_list(old, value, merge_key, field == "ports", path, where.items())
    return value


def _merge_key(field: str, items: list[Any]) -> str | None:
    if field == "ports":
        if any("containerPort" in item for item in items if isinstance(item, dict)):
            return "containerPort"
        return "port"
    return MERGE_KEYS.get(field)


def _atomic_list(items: list[Any], path: str, where: _Where = _UNTYPED) -> list[Any]:
    """A list without merge key: replaced whole (a ``{"$patch": "replace"}`` marker is dropped)."""
    result: list[Any] = []
    for index, item in enumerate(items):
        if isinstance(item, dict) and _PATCH in item:
            if item == {_PATCH: "replace"}:
                continue
            raise ValueError(f"{path}[{index}]: $patch directive in a list that has no merge key")
        result.append(_fresh(item, path, where))
    return result


def _fresh(value: Any, path: str, where: _Where = _UNTYPED) -> Any:
    """A new value built from a patch value alone (nulls dropped, directives applied)."""
    if isinstance(value, dict):
        return _smp_map({}, value, path, where)
    if isinstance(value, list):
        return [_fresh(item, f"{path}[{index}]", where.items()) for index, item in enumerate(value)]
    return value


def _smp_list(
    existing: list[Any], patch: list[Any], merge_key: str, by_protocol: bool, path: str,
    where: _Where = _UNTYPED,
) -> list[Any]:
    """Merge a merge-keyed list; ``existing`` is owned by the caller."""
    replace = False
    operations: list[tuple[str, dict[str, Any], str]] = []
    for index, item in enumerate(patch):
        at = f"{path}[{index}]"
        if not isinstance(item, dict):
            raise ValueError(f"{at}: items of {path} must be objects with merge key {merge_key!r}")
        operation = "merge"
        if _PATCH in item:
            directive = item[_PATCH]
            if directive == "replace":
                if len(item) != 1:
                    raise ValueError(
                        f"{at}: a {{'$patch': 'replace'}} list marker must have no other fields"
                    )
                replace = True
                continue
            if directive == "delete":
                operation = "delete"
            elif directive == "merge":
                item = {key: value for key, value in item.items() if key != _PATCH}
            else:
                raise ValueError(f"{at}: unknown $patch directive {directive!r}")
        if merge_key not in item:
            raise ValueError(f"{at}: item does not contain declared merge key {merge_key!r}")
        operations.append((operation, item, at))

    if replace:
        return [_smp_map({}, item, at, where) for operation, item, at in operations if operation == "merge"]

    result = list(existing)
    for operation, item, at in operations:
        if operation == "delete":
            result = [old for old in result if not _same_item(old, item, merge_key, by_protocol)]
            continue
        for index, old in enumerate(result):
            if _same_item(old, item, merge_key, by_protocol):
                result[index] = _smp_map(old, item, at, where)
                break
        else:
            result.append(_smp_map({}, item, at, where))
    return result


def _same_item(old: Any, item: dict[str, Any], merge_key: str, by_protocol: bool) -> bool:
    if not isinstance(old, dict) or merge_key not in old:
        return False
    if not _json_equal(old[merge_key], item[merge_key]):
        return False
    if by_protocol and item.get("protocol") is not None:
        return (old.get("protocol") or "TCP") == item["protocol"]
    return True


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


# ---------------------------------------------------------------------------------------
# Computing merge patches (kubectl apply)


def _json_equal(left: Any, right: Any) -> bool:
    """Equality as JSON sees it: ``True`` is not ``1``, but ``1`` equals ``1.0``."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(_json_equal(left[k], right[k]) for k in left)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(_json_equal(a, b) for a, b in zip(left, right, strict=True))
    if isinstance(left, dict | list) or isinstance(right, dict | list):
        return False
    return bool(left == right)


def create_merge_patch(original: dict[str, Any], modified: dict[str, Any]) -> dict[str, Any]:
    """Compute the JSON merge patch that turns ``original`` into ``modified``.

    Keys missing from ``modified`` become ``None`` (delete), keys whose values are both
    dicts are diffed recursively (omitted when equal), and any other differing value --
    lists and scalars included -- is replaced whole. So
    ``json_merge_patch(original, create_merge_patch(original, modified)) == modified``
    whenever ``modified`` holds no ``None`` values (merge patch cannot set a null).
    ``{}`` means no change. Like ``jsonmergepatch.CreateMergePatch``, which ``kubectl
    apply`` uses for types without a strategic schema.

    Raises:
        ValueError: when either argument is not a dict.
    """
    if not isinstance(original, dict) or not isinstance(modified, dict):
        raise ValueError("create_merge_patch needs two objects (dicts)")
    return _diff(original, modified, deletions=True, changes=True)


def _diff(
    original: dict[str, Any], modified: dict[str, Any], *, deletions: bool, changes: bool
) -> dict[str, Any]:
    patch: dict[str, Any] = {}
    if deletions:
        for key in original:
            if key not in modified:
                patch[key] = None
    for key, new in modified.items():
        if key not in original:
            if changes:
                patch[key] = copy.deepcopy(new)
            continue
        old = original[key]
        if isinstance(old, dict) and isinstance(new, dict):
            nested = _diff(old, new, deletions=deletions, changes=changes)
            if nested:
                patch[key] = nested
        elif changes and not _json_equal(old, new):
            patch[key] = copy.deepcopy(new)
    return patch


def _union(left: dict[str, Any], right: dict[str, Any]) -> dict[str, Any]:
    """Deep union of two patches; ``right`` wins on conflicting non-dict values."""
    result = dict(left)
    for key, value in right.items():
        if isinstance(result.get(key), dict) and isinstance(value, dict):
            result[key] = _union(result[key], value)
        else:
            result[key] = value
    return result


def create_three_way_merge_patch(
    original: dict[str, Any] | None, modified: dict[str, Any], current: dict[str, Any]
) -> dict[str, Any]:
    """Compute the merge patch ``kubectl apply`` sends (``CreateThreeWayMergePatch``).

    ``original`` is the last-applied configuration (the
    ``kubectl.kubernetes.io/last-applied-configuration`` annotation; None when there is
    none), ``modified`` the new configuration, ``current`` the live object. The patch
    sets every field of ``modified`` that differs from ``current`` (recursing into dicts,
    replacing lists and scalars whole) and deletes (``None``) the fields that were in
    ``original`` but are gone from ``modified``. Fields only the server or other actors
    set (in ``current`` but never in ``original``) are left alone. ``{}`` means no change.

    Raises:
        ValueError: when an argument is not a dict (``original`` may be None).
    """
    if original is None:
        original = {}
    if not all(isinstance(value, dict) for value in (original, modified, current)):
        raise ValueError("create_three_way_merge_patch needs objects (dicts)")
    deletions = _diff(original, modified, deletions=True, changes=False)
    changes = _diff(current, modified, deletions=False, changes=True)
    return _union(deletions, changes)


# ------------------------------------------------------------------ strategic two-way diff (client side)
def _diff_item_id(item: dict[str, Any], key: str, by_protocol: bool) -> tuple[Any, ...]:
    return (json.dumps(item.get(key)), (item.get("protocol") or "TCP") if by_protocol else "")


def _diff_list_patch(field: str, old: list[Any], new: list[Any], where: _Where) -> list[Any] | None:
    """Strategic patch of a merge-keyed list, or None when it cannot be keyed (replace whole)."""
    key, _ = where.list_merge(field, old + new)
    if key is None or not all(isinstance(i, dict) and key in i for i in old + new):
        return None
    by_protocol = field == "ports"
    olds = {_diff_item_id(i, key, by_protocol): i for i in old}
    if len(olds) != len(old) or len({_diff_item_id(i, key, by_protocol) for i in new}) != len(new):
        return None
    patch: list[Any] = []
    news = set()
    for item in new:
        ident = _diff_item_id(item, key, by_protocol)
        news.add(ident)
        if ident not in olds:
            patch.append(copy.deepcopy(item))
            continue
        diff = _strategic_diff(olds[ident], item, where.items())
        if diff:
            entry = {key: item[key], **diff}
            if by_protocol and item.get("protocol"):
                entry["protocol"] = item["protocol"]
            patch.append(entry)
    for ident, item in olds.items():
        if ident not in news:
            entry = {"$patch": "delete", key: item[key]}
            if by_protocol:
                entry["protocol"] = item.get("protocol") or "TCP"
            patch.append(entry)
    return patch


def strategic_diff(original: dict[str, Any], modified: dict[str, Any],
                   schema: PatchSchema | None = None) -> dict[str, Any]:
    """The patch that turns ``original`` into ``modified`` under strategic merge patch.

    Like :func:`minik8s.api.patch.create_merge_patch` (removed keys become ``None``,
    dicts diff recursively, other changed values replace), except that lists merged by
    key on the server (containers, env, ports, volumes, ...: the kind's ``schema``, else
    :data:`MERGE_KEYS`) are diffed item by item: changed items carry their merge key and the
    changes, removed items become ``{"$patch": "delete", key: value}``. ``{}`` means no change.
    """
    return _strategic_diff(original, modified, _Where(schema, schema is not None))


def _strategic_diff(original: dict[str, Any], modified: dict[str, Any], where: _Where) -> dict[str, Any]:
    patch = create_merge_patch(original, modified)
    for field, value in list(patch.items()):
        old, new = original.get(field), modified.get(field)
        if isinstance(old, dict) and isinstance(new, dict) and isinstance(value, dict):
            patch[field] = _strategic_diff(old, new, where.field(field))
            if not patch[field]:
                del patch[field]
        elif isinstance(old, list) and isinstance(new, list):
            if where.field(field).list_merge(field, old + new)[1]:  # a set of values (finalizers)
                _diff_set(patch, field, old, new)
                continue
            items = _diff_list_patch(field, old, new, where.field(field))
            if items is not None:
                if items:
                    patch[field] = items
                else:
                    del patch[field]
    return patch


def _diff_set(patch: dict[str, Any], field: str, old: list[Any], new: list[Any]) -> None:
    """The patch of a list the server merges as a set: the values added, and the values removed
    under ``$deleteFromPrimitiveList/<field>`` (a plain list would only ever add)."""
    added = [item for item in new if not any(_json_equal(item, o) for o in old)]
    removed = [item for item in old if not any(_json_equal(item, n) for n in new)]
    if added:
        patch[field] = added
    else:
        del patch[field]
    if removed:
        patch[_DELETE_FROM_PRIMITIVE_LIST + field] = removed
