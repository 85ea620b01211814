"""The JSONPath subset of the Amazon States Language's ``Reference Paths``.

A path starts at ``$`` (the whole document) and names one node by fields and list
indices: ``$``, ``$.order.total``, ``$.items[0].id``, ``$['odd key']``.  No wildcards,
filters or slices: a reference path always names a single value, so it can be read
(Choice ``variable``, ``inputPath``, ``outputPath``) and written (``resultPath``).
"""

from __future__ import annotations

import copy
import re
from typing import Any

Segment = str | int

_FIELD = re.compile(r"\.([A-Za-z_$@][A-Za-z0-9_$@:-]*)")
_INDEX = re.compile(r"\[(\d+)\]")
_QUOTED = re.compile(r"\[(?:'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\")\]")


def parse(path: str) -> list[Segment]:
    """The segments of ``path`` (``"$.a[0]['b c']"`` → ``["a", 0, "b c"]``).

    Raises ValueError with a readable message for anything else (no leading ``$``,
    wildcards, filters, a trailing dot ...).
    """
    if not isinstance(path, str) or not path.startswith("$"):
        raise ValueError("must be a JSONPath that starts with '$'")
    segments: list[Segment] = []
    pos = 1
    while pos < len(path):
        for regex in (_FIELD, _INDEX, _QUOTED):
            m = regex.match(path, pos)
            if m:
                break
        else:
            raise ValueError(f"must be a JSONPath of fields and indices ($.a.b, $.a[0], $['a b']); "
                             f"unexpected {path[pos:]!r}")
        if regex is _INDEX:
            segments.append(int(m.group(1)))
        elif regex is _QUOTED:
            raw = m.group(1) if m.group(1) is not None else m.group(2)
            segments.append(re.sub(r"\\(.)", r"\1", raw))
        else:
            segments.append(m.group(1))
        pos = m.end()
    return segments


def errors(path: Any) -> list[str]:
    """Messages why ``path`` is not a reference path (empty when it is one)."""
    try:
        parse(path)
    except ValueError as exc:
        return [str(exc)]
    return []


_MISSING = object()


def lookup(document: Any, path: str) -> tuple[bool, Any]:
    """``(found, value)`` of ``path`` in ``document``; ``(False, None)`` when a field or index
    along the way is missing.  Raises ValueError for a malformed path."""
    node = document
    for seg in parse(path):
        if isinstance(seg, int):
            if not isinstance(node, list) or seg >= len(node):
                return False, None
            node = node[seg]
        else:
            if not isinstance(node, dict) or seg not in node:
                return False, None
            node = node[seg]
    return True, node


def get(document: Any, path: str) -> Any:
    """The value at ``path``; raises KeyError naming the path when it is missing."""
    found, value = lookup(document, path)
    if not found:
        raise KeyError(f"{path} is not present in the input")
    return value


def put(document: Any, path: str, value: Any) -> Any:
    """A copy of ``document`` with ``value`` at ``path`` (ASL ``resultPath``): ``$`` replaces the
    whole document; missing objects along the way are created; a list index must exist.
    Raises KeyError when the path runs through a non-object or a missing index."""
    segments = parse(path)
    if not segments:
        return copy.deepcopy(value)
    root = copy.deepcopy(document) if isinstance(document, dict | list) else {}
    node = root
    for i, seg in enumerate(segments):
        last = i == len(segments) - 1
        if isinstance(seg, int):
            if not isinstance(node, list) or seg >= len(node):
                raise KeyError(f"{path}: no list element {seg} to write to")
            if last:
                node[seg] = value
            else:
                node = node[seg]
            continue
        if not isinstance(node, dict):
            raise KeyError(f"{path}: cannot write a field into a {type(node).__name__}")
        if last:
            node[seg] = value
        else:
            child = node.get(seg, _MISSING)
            if child is _MISSING or not isinstance(child, dict | list):
                child = node[seg] = {}
            node = child
    return root
