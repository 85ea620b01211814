"""Bounded JSON and YAML decoding (minik8s.api.decoding): depth and alias expansion."""

from __future__ import annotations

import time

import pytest

from minik8s.api.decoding import MAX_DEPTH, DecodeError, load_json, load_yaml, load_yaml_all

# A "billion laughs": each level doubles... here 9 levels of 9 aliases each.
ALIAS_BOMB = "a: &a [" + ",".join(["'lol'"] * 9) + "]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9) + "]\n" for i in range(8))


def test_ordinary_documents_decode() -> None:
    assert load_json(b'{"a": [1, {"b": null}]}') == {"a": [1, {"b": None}]}
    assert load_yaml("a:\n  - 1\n  - b: null\n") == {"a": [1, {"b": None}]}
    assert load_yaml(b"") is None
    assert load_yaml_all("a: 1\n---\nb: 2\n") == [{"a": 1}, {"b": 2}]
    # modest use of anchors and merge keys, as in hand-written manifests
    doc = load_yaml("base: &base {image: x, ports: [1, 2]}\nc1: {<<: *base, name: a}\nc2: {<<: *base, name: b}\n")
    assert doc["c2"] == {"image": "x", "ports": [1, 2], "name": "b"}
    nested = "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)
    assert load_json(nested) and load_yaml(nested)


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 5_000, 100_000])
def test_deep_nesting_is_refused_quickly(depth: int) -> None:
    for load in (load_json, load_yaml):
        started = time.monotonic()
        with pytest.raises(DecodeError):  # JSON: a syntax error or too deep, whichever comes first
            load("[" * depth)
        with pytest.raises(DecodeError, match="nested more than 100 levels"):
            load("[" * depth + "]" * depth)
        assert time.monotonic() - started < 1.0
    with pytest.raises(DecodeError, match="nested more than"):
        load_json('{"a":' * depth + "1" + "}" * depth)
    with pytest.raises(DecodeError, match="nested more than"):
        load_yaml_all("a: 1\n---\n" + "[" * depth)


def test_alias_bombs_are_refused_before_expansion() -> None:
    started = time.monotonic()
    with pytest.raises(DecodeError, match="aliases expand it beyond"):
        load_yaml(ALIAS_BOMB)
    with pytest.raises(DecodeError, match="aliases expand it beyond"):
        load_yaml_all("a: 1\n---\n" + ALIAS_BOMB)
    assert time.monotonic() - started < 1.0
    # one long string repeated through aliases counts by its length
    long = "s: &s '" + "x" * 4000 + "'\nl: [" + ",".join(["*s"] * 40) + "]\n"
    with pytest.raises(DecodeError, match="aliases expand"):
        load_yaml(long)


def test_recursive_aliases_are_refused() -> None:
    with pytest.raises(DecodeError, match="recursive alias"):
        load_yaml("a: &a [*a]\n")
    with pytest.raises(DecodeError, match="recursive alias"):
        load_yaml("a: &a {b: {c: *a}}\n")


def test_invalid_documents_say_why() -> None:
    with pytest.raises(DecodeError, match="Expecting"):
        load_json(b"{")
    with pytest.raises(DecodeError):
        load_json(b"\xff\xfe")
    with pytest.raises(DecodeError):
        load_yaml("a: [1\n")
