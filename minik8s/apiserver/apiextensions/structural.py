"""STAND-IN for the schema engine (written in parallel; replaced at merge).

Only the interface and a tiny subset: type and required checks, ``default:``, pruning.
"""

from __future__ import annotations

import copy
from typing import Any

Cause = tuple[str, Any, str]
_TYPES: dict[str, Any] = {"object": dict, "array": list, "string": str, "boolean": bool, "number": (int, float),
                         "integer": int}
_ROOT_META = ("apiVersion", "kind", "metadata")


def structural_errors(schema: dict[str, Any], path: str) -> list[Cause]:
    """Causes why ``schema`` is not a structural schema (stand-in: the root needs a type)."""
    if not isinstance(schema, dict):
        return [(path, None, "Required value: must be an object")]
    if schema.get("type") != "object":
        return [(f"{path}.type", schema.get("type"), "must be object at the root")]
    return []


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def validate(schema: dict[str, Any], obj: Any, old: Any | None = None, path: str = "") -> list[Cause]:
    """Causes why ``obj`` does not match ``schema`` (stand-in: type and required)."""
    causes: list[Cause] = []
    typ = schema.get("type")
    if schema.get("x-kubernetes-int-or-string") and isinstance(obj, int | str):
        return causes
    if typ in _TYPES and not (isinstance(obj, _TYPES[typ]) and not (typ != "boolean" and isinstance(obj, bool))):
        return [(path, obj, f'Invalid value: "{type(obj).__name__}": {path} in body must be of type {typ}: '
                            f'"{type(obj).__name__}"')]
    if isinstance(obj, dict):
        for req in schema.get("required") or []:
            if req not in obj:
                causes.append((_join(path, req), None, "Required value"))
        for key, sub in (schema.get("properties") or {}).items():
            if key in obj and not (not path and key in _ROOT_META):
                causes += validate(sub, obj[key], None, _join(path, key))
    if isinstance(obj, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(obj):
            causes += validate(schema["items"], item, None, f"{path}[{i}]")
    return causes


def default(schema: dict[str, Any], obj: Any) -> None:
    """Apply ``default:`` values in place (stand-in: properties only)."""
    if isinstance(obj, dict):
        for key, sub in (schema.get("properties") or {}).items():
            if key not in obj and "default" in sub:
                obj[key] = copy.deepcopy(sub["default"])
            if key in obj:
                default(sub, obj[key])
    elif isinstance(obj, list) and isinstance(schema.get("items"), dict):
        for item in obj:
            default(schema["items"], item)


def prune(schema: dict[str, Any], obj: Any, path: str = "") -> list[str]:
    """Remove fields ``schema`` does not know, in place; their paths (stand-in)."""
    out: list[str] = []
    if schema.get("x-kubernetes-preserve-unknown-fields"):
        return out
    if isinstance(obj, dict):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        for key in list(obj):
            if not path and key in _ROOT_META:
                continue
            if key in props:
                out += prune(props[key], obj[key], _join(path, key))
            elif isinstance(extra, dict):
                out += prune(extra, obj[key], _join(path, key))
            elif extra is not True:
                out.append(_join(path, key))
                del obj[key]
    elif isinstance(obj, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(obj):
            out += prune(schema["items"], item, f"{path}[{i}]")
    return out
