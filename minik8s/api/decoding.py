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
from collections.abc import Iterator
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

#: Levels of nested mappings and sequences a document may have (Kubernetes objects need < 30).
MAX_DEPTH = 100
#: Bytes (of the JSON form) that aliases may add to a YAML document beyond twice its own size.
ALIAS_BUDGET_BYTES = 64 * 1024


class DecodeError(ValueError):
    """A document that does not decode, or exceeds the bounds (the message says which)."""


def _too_deep() -> DecodeError:
    return DecodeError(f"the document is nested more than {MAX_DEPTH} levels deep")


def check_depth(doc: Any) -> None:
    """Raise :class:`DecodeError` when ``doc`` (decoded JSON) nests deeper than :data:`MAX_DEPTH`.

    Iterative: a value nested thousands deep is measured without recursion."""
    stack: list[tuple[Any, int]] = [(doc, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children: Any = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth >= MAX_DEPTH:
            raise _too_deep()
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))


def load_json(raw: bytes | str) -> Any:
    """``raw`` decoded as JSON; DecodeError for invalid JSON (the decoder's message; the
    ``json.JSONDecodeError`` is its ``__cause__``) or too deep nesting."""
    try:
        doc = json.loads(raw)
    except RecursionError:
        raise _too_deep() from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        raise DecodeError(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from exc
    check_depth(doc)
    return doc


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing too deep nesting while composing and alias bombs before constructing."""

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self._depth = 0
        size = len(stream) if isinstance(stream, str | bytes) else 0
        self._budget = 2 * size + ALIAS_BUDGET_BYTES

    def fetch_flow_collection_start(self, TokenClass: Any) -> None:
        # The scanner looks ahead over every "[" or "{" that may start a key, at a cost that grows
        # with the nesting: refuse deep flow nesting as it is scanned, before the composer sees it.
        if self.flow_level >= MAX_DEPTH:
            raise _too_deep()
        super().fetch_flow_collection_start(TokenClass)  # type: ignore[misc]

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:  # type: ignore[override]
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise _too_deep()
            return super().compose_node(parent, index)  # type: ignore[no-any-return]
        finally:
            self._depth -= 1

    def construct_document(self, node: Node) -> Any:
        _check_expansion(node, self._budget)
        return super().construct_document(node)


def _check_expansion(root: Node, budget: int) -> None:
    """Raise DecodeError when the node graph, with every alias expanded, would exceed ``budget``
    bytes of JSON, or when an alias refers to a node that contains it."""
    size: dict[int, int] = {}  # id(node) -> its expanded size, once known
    open_nodes: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            open_nodes.discard(key)
            total = 1 + sum(size[id(child)] for child in _children(node))
            if total > budget:
                raise DecodeError(f"the document's aliases expand it beyond {budget} bytes")
            size[key] = total
            continue
        if key in size:
            continue
        if isinstance(node, ScalarNode):
            size[key] = 1 + len(str(node.value))
            continue
        if key in open_nodes:
            raise DecodeError("the document has a recursive alias")
        open_nodes.add(key)
        stack.append((node, True))
        for child in _children(node):
            if id(child) in open_nodes:
                raise DecodeError("the document has a recursive alias")
            if id(child) not in size:
                stack.append((child, False))


def _children(node: Node) -> Iterator[Node]:
    if isinstance(node, SequenceNode):
        yield from node.value
    elif isinstance(node, MappingNode):
        for key, value in node.value:
            yield key
            yield value


def load_yaml(raw: bytes | str) -> Any:
    """The single YAML document in ``raw`` (None when empty); DecodeError for invalid YAML, too deep
    nesting or too much alias expansion (see the module docstring)."""
    try:
        return yaml.load(raw, Loader=_BoundedLoader)  # noqa: S506 - a SafeLoader
    except yaml.YAMLError as exc:
        raise DecodeError(str(exc).splitlines()[0]) from exc
    except RecursionError:
        raise _too_deep() from None


def load_yaml_all(text: str) -> list[Any]:
    """Every document in a multi-document YAML stream, each bounded as :func:`load_yaml`'s.

    Raises :class:`DecodeError`; a YAML syntax error keeps its ``yaml.YAMLError`` as ``__cause__``
    (with the line it was found on)."""
    try:
        return list(yaml.load_all(text, Loader=_BoundedLoader))  # noqa: S506 - a SafeLoader
    except yaml.YAMLError as exc:
        raise DecodeError(str(exc).splitlines()[0]) from exc
    except RecursionError:
        raise _too_deep() from None
