"""Kubernetes' JSONPath: kubectl's ``-o jsonpath`` expressions, ``additionalPrinterColumns`` and
the scale subresource's paths (not the workflows' reference paths: :mod:`minik8s.api.jsonpath`).

Kubernetes writes the latter without braces: ``.spec.replicas``, ``.status.conditions[0].type``,
``.metadata.labels['app\\.kubernetes\\.io/name']``, ``.items[*].name`` and filters
``.status.conditions[?(@.type=="Ready")].status``.  :func:`parse` checks one (ValueError with
a message), :func:`find` evaluates it to every value it names.
"""

from __future__ import annotations

import re
from typing import Any

Step = tuple[str, Any]  # ("field", name) | ("index", int) | ("all", None) | ("filter", (path, value))

_FIELD = re.compile(r"\.([A-Za-z0-9_$@-]+)")
_INDEX = re.compile(r"\[(-?\d+)\]")
_ALL = re.compile(r"\[\*\]|\.\*")
_QUOTED = re.compile(r"\[['\"]((?:[^'\"\\]|\\.)*)['\"]\]")
_FILTER = re.compile(r"\[\?\(@((?:\.[A-Za-z0-9_-]+)+)\s*==\s*(?:\"([^\"]*)\"|'([^']*)'|(-?\d+))\)\]")


def parse(path: str) -> list[Step]:
    """The steps of ``path``; ValueError when it is not a path of this form."""
    text = path.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    if text.startswith("$"):
        text = text[1:]
    if not text.startswith((".", "[")):
        raise ValueError("must be a simple json path starting with .")
    steps: list[Step] = []
    pos = 0
    while pos < len(text):
        m = _ALL.match(text, pos)
        if m:
            steps.append(("all", None))
        elif (m := _FIELD.match(text, pos)) is not None:
            steps.append(("field", m.group(1)))
        elif (m := _INDEX.match(text, pos)) is not None:
            steps.append(("index", int(m.group(1))))
        elif (m := _QUOTED.match(text, pos)) is not None:
            steps.append(("field", re.sub(r"\\(.)", r"\1", m.group(1))))
        elif (m := _FILTER.match(text, pos)) is not None:
            value: Any = m.group(2) if m.group(2) is not None else m.group(3)
            if value is None:
                value = int(m.group(4))
            steps.append(("filter", (m.group(1)[1:].split("."), value)))
        else:
            raise ValueError(f"unexpected {text[pos:]!r} in json path {path!r}")
        pos = m.end()
    return steps


def find(obj: Any, path: str) -> list[Any]:
    """Every value ``path`` names in ``obj`` (empty when none; a bad path names none)."""
    try:
        return evaluate(obj, path)
    except ValueError:
        return []


def evaluate(obj: Any, path: str) -> list[Any]:
    """Every value ``path`` names in ``obj``; ValueError when ``path`` is not a JSONPath."""
    steps = parse(path)
    current = [obj]
    for kind, arg in steps:
        nxt: list[Any] = []
        for value in current:
            if kind == "field" and isinstance(value, dict) and arg in value:
                nxt.append(value[arg])
            elif kind == "index" and isinstance(value, list) and -len(value) <= arg < len(value):
                nxt.append(value[arg])
            elif kind == "all":
                nxt += list(value.values()) if isinstance(value, dict) else list(value) if isinstance(value, list) \
                    else []
            elif kind == "filter" and isinstance(value, list):
                keys, wanted = arg
                for item in value:
                    got: Any = item
                    for key in keys:
                        got = got.get(key) if isinstance(got, dict) else None
                    if got == wanted or (got is not None and str(got) == str(wanted)):
                        nxt.append(item)
        current = nxt
    return current


def simple_fields(path: str) -> list[str] | None:
    """The field names of a path made only of fields (``.spec.replicas`` → ``["spec", "replicas"]``),
    else None."""
    try:
        steps = parse(path)
    except ValueError:
        return None
    if not steps or any(kind != "field" for kind, _ in steps):
        return None
    return [str(arg) for _, arg in steps]
