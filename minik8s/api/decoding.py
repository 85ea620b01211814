"""JSON and YAML documents decoded within bounds: nesting depth and YAML alias expansion.

A small hostile document can cost a decoder far more than its size: ``[`` repeated 100,000
times exhausts Python's recursion limit, and a few hundred bytes of YAML anchors and aliases
(``&a [*b, *b, ...]``, the "billion laughs") expand to megabytes.  Kubernetes bounds both
(kube-apiserver converts YAML to JSON of bounded size and nesting); so does this module,
before any expensive work:

- nesting deeper than :data:`MAX_DEPTH` levels of mappings/sequences is refused;
- YAML whose aliases would expand the document beyond ``2 × its size + ALIAS_BUDGET_BYTES``
  (counted as the JSON it becomes: scalars' lengths plus one byte per node) is refused,
  and so are recursive aliases (``&a [*a]``), which have no JSON form.

Both raise :class:`DecodeError` (a ValueError) with a one-line reason; callers turn it into
their own error (the apiserver: 400 BadRequest; kubectl: ``error parsing FILE``).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import yaml

#: Levels of nested mappings and sequences a document may have (Kubernetes objects need < 30).
MAX_DEPTH = 100
#: Bytes (of the JSON form) that aliases may add to a YAML document beyond twice its own size.
ALIAS_BUDGET_BYTES = 64 * 1024


class DecodeError(ValueError):
    """A document that does not decode, or exceeds the bounds (the message says which)."""


def _too_deep() -> DecodeError:
    return DecodeError(f"the document is nested more than {MAX_DEPTH} levels deep")


_SURROGATE = re.compile("[\ud800-\udfff]")


def check_document(doc: Any) -> None:
    """Check a decoded document in place, iteratively (a value nested thousands deep is measured
    without recursion): DecodeError when it nests deeper than :data:`MAX_DEPTH` or holds a
    non-finite number (YAML's ``.inf``, ``.nan``: not JSON); lone UTF-16 surrogates in strings
    (``"\\ud800"``, which UTF-8 cannot encode) become U+FFFD, as Go's decoder (and so
    kube-apiserver) reads them."""
    stack: list[tuple[Any, int]] = [(doc, 0)]
    while stack:
        value, depth = stack.pop()
        if depth >= MAX_DEPTH:
            raise _too_deep()
        if isinstance(value, dict):
            for key in [k for k in value if not isinstance(k, str) or not k.isascii() and _SURROGATE.search(k)]:
                value[_json_key(key)] = value.pop(key)
            items: Any = value.items()
        elif isinstance(value, list):
            items = enumerate(value)
        else:
            continue
        for key, child in items:
            if isinstance(child, dict | list):
                stack.append((child, depth + 1))
            elif isinstance(child, str):
                if not child.isascii() and _SURROGATE.search(child):
                    value[key] = _SURROGATE.sub("\ufffd", child)
            elif isinstance(child, float) and not math.isfinite(child):
                raise DecodeError(f"{child} is not a JSON number")
            elif child is not None and not isinstance(child, bool | int | float):
                raise DecodeError(f"a value of type {type(child).__name__} has no JSON form")


def _json_key(key: Any) -> str:
    """A mapping key as JSON has it: YAML's scalar keys as sigs.k8s.io/yaml writes them."""
    if isinstance(key, str):
        return _SURROGATE.sub("\ufffd", key)
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "null"
    if isinstance(key, int | float):
        return str(key)
    raise DecodeError(f"a mapping key of type {type(key).__name__} has no JSON form")


def load_json(raw: bytes | str) -> Any:
    """``raw`` decoded as JSON; DecodeError for invalid JSON (the decoder's message; the
    ``json.JSONDecodeError`` is its ``__cause__``) or too deep nesting."""
    try:
        doc = json.loads(raw, parse_float=_finite_float, parse_constant=_no_constant)
    except RecursionError:
        raise _too_deep() from None
    except DecodeError:
        raise
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        raise DecodeError(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from exc
    check_document(doc)
    return doc


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (math.inf, -math.inf):
        raise DecodeError(f"the number {text[:40]} is out of range")
    return value


def _no_constant(text: str) -> float:
    raise DecodeError(f"{text} is not a JSON value")


# libyaml's C parser where PyYAML has it (pip wheels and Debian's python3-yaml do): ten times
# faster than the pure-Python one, which also scans deep flow nesting in quadratic time.
_SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_SafeLoader):  # type: ignore[misc,valid-type]
    """The safe loader, with timestamps left as strings (Kubernetes' YAML-to-JSON conversion)."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}


def _check_events(stream: bytes | str) -> None:
    """One pass over the YAML event stream, before anything is composed or constructed: raise
    DecodeError when collections nest deeper than :data:`MAX_DEPTH`, when an alias refers to a
    collection that contains it, or when the documents with every alias expanded would exceed
    ``2 × len(stream) + ALIAS_BUDGET_BYTES`` bytes of JSON (scalars' lengths plus one byte per node)."""
    budget = 2 * len(stream) + ALIAS_BUDGET_BYTES
    sizes: dict[str, int] = {}  # anchor -> the expanded size of what it names
    stack: list[list[Any]] = []  # open collections: [expanded size so far, anchor]
    total = 0

    def add(size: int) -> None:
        nonlocal total
        if stack:
            stack[-1][0] += size
            grown = stack[-1][0]
        else:
            total += size
            grown = total
        if grown > budget:
            raise DecodeError(f"the document's aliases expand it beyond {budget} bytes")

    for event in yaml.parse(stream, Loader=_SafeLoader):
        if isinstance(event, yaml.CollectionStartEvent):
            if len(stack) >= MAX_DEPTH:
                raise _too_deep()
            stack.append([1, event.anchor])
        elif isinstance(event, yaml.CollectionEndEvent):
            size, anchor = stack.pop()
            if anchor is not None:
                sizes[anchor] = size
            add(size)
        elif isinstance(event, yaml.ScalarEvent):
            size = 1 + len(event.value)
            if event.anchor is not None:
                sizes[event.anchor] = size
            add(size)
        elif isinstance(event, yaml.AliasEvent):
            if any(anchor == event.anchor for _, anchor in stack):
                raise DecodeError("the document has a recursive alias")
            add(sizes.get(event.anchor or "", 0))  # an undefined alias: the composer says so


def _yaml_error(exc: yaml.YAMLError) -> DecodeError:
    """The DecodeError for a YAML parser error: libyaml (0.2.6 on, bundled with PyYAML 6.0.3 and
    later) stops at 1,000 nested flow collections by itself, before :data:`MAX_DEPTH` is checked;
    that is reported like any document nested too deep."""
    if "maximum nesting depth" in str(exc):
        return _too_deep()
    return DecodeError(str(exc).splitlines()[0])


def load_yaml(raw: bytes | str) -> Any:
    """The single YAML document in ``raw`` (None when empty); DecodeError for invalid YAML, too deep
    nesting or too much alias expansion (see the module docstring)."""
    try:
        _check_events(raw)
        doc = yaml.load(raw, Loader=_Loader)  # noqa: S506 - a safe loader
        check_document(doc)
        return doc
    except yaml.YAMLError as exc:
        raise _yaml_error(exc) from exc
    except RecursionError:
        raise _too_deep() from None


def load_yaml_all(text: str) -> list[Any]:
    """Every document in a multi-document YAML stream, each bounded as :func:`load_yaml`'s.

    Raises :class:`DecodeError`; a YAML syntax error keeps its ``yaml.YAMLError`` as ``__cause__``
    (with the line it was found on)."""
    try:
        _check_events(text)
        docs = list(yaml.load_all(text, Loader=_Loader))  # noqa: S506 - a safe loader
        check_document(docs)
        return docs
    except yaml.YAMLError as exc:
        raise _yaml_error(exc) from exc
    except RecursionError:
        raise _too_deep() from None
