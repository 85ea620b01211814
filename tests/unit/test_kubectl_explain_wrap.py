"""The word wrappers of ``kubectl explain`` (:mod:`minik8s.kubectl.explain.wrap`), and the small
pieces of the explainers that follow Go's formatting and kubectl's guesses."""

from __future__ import annotations

import pytest

from minik8s.kubectl.explain.mapping import go_quote, guess_resource, parse_group_version
from minik8s.kubectl.explain.plaintext import go_value, indent
from minik8s.kubectl.explain.wrap import reflow, wordwrap


@pytest.mark.parametrize(("text", "limit", "expected"), [
    ("foo bar baz", 3, "foo\nbar\nbaz"),  # the blanks where a line breaks are dropped
    ("foo bar baz", 7, "foo bar\nbaz"),
    ("foo bar baz", 11, "foo bar baz"),
    ("a verylongword b", 4, "a\nverylongword\nb"),  # a word longer than the limit stays whole
    ("one two\nthree four", 9, "one two\nthree\nfour"),  # the text's own line breaks are kept
    ("ab  \ncd", 10, "ab  \ncd"),  # blanks before a line break are kept when they fit
    ("ab  \ncd", 3, "ab\ncd"),  # and dropped when they do not
    ("a\u00a0b c", 3, "a\u00a0b\nc"),  # a non-breaking space belongs to its word
    ("h\u00e9llo w\u00f6rld", 5, "h\u00e9llo\nw\u00f6rld"),  # characters are counted, not bytes
    ("trailing  ", 20, "trailing  "),
    ("text\n", 76, "text\n"),
    ("anything at all", 0, "anything at all"),  # no limit: unchanged
])
def test_wordwrap_follows_go_wordwrap(text: str, limit: int, expected: str) -> None:
    assert wordwrap(text, limit) == expected


@pytest.mark.parametrize(("text", "width", "expected"), [
    ("a b c", 3, ["a b", "c"]),
    ("one\ntwo", 80, ["one two"]),  # lines are joined into paragraphs
    ("one   two", 80, ["one two"]),  # one space between words
    ("Values:\nA\nB", 80, ["Values:", "A B"]),  # a line ending in ':' ends its line
    ("Items\n- a\n- b\n1. c", 80, ["Items", "- a", "- b", "1. c"]),  # lists start new lines
    ("text\n    code  here\nmore", 80, ["text", "    code  here", "more"]),  # code blocks stay as they are
    ("Title:\nx\n\ny", 80, ["Title:", "x", "", "y"]),  # empty lines are kept once a line is written...
    ("a\n\nb", 80, ["a", "b"]),  # ...not before
    ("\na", 80, ["a"]),
    ("a verylongword b", 4, ["a", "verylongword", "b"]),
    ("\u00e9 \u00e9", 3, ["\u00e9", "\u00e9"]),  # widths in UTF-8 bytes
    ("", 75, []),
])
def test_reflow_follows_kubectl_v2_formatter(text: str, width: int, expected: list[str]) -> None:
    assert reflow(text, width) == expected


@pytest.mark.parametrize(("value", "expected"), [
    (3, "3"), (1.5, "1.5"), (123456, "123456"), (1000000, "1e+06"), (1234567, "1.234567e+06"),
    (0.0001, "0.0001"), (0.00001, "1e-05"), (-2, "-2"), (True, "true"), (None, "<nil>"),
    ("x", "x"), ({"b": 1, "a": "x"}, "map[a:x b:1]"), ([1, "a"], "[1 a]"),
])
def test_go_value_prints_as_go_fmt_prints_decoded_json(value: object, expected: str) -> None:
    assert go_value(value) == expected


def test_indent_pads_every_line_even_an_empty_last_one() -> None:
    assert indent(2, "a\nb\n") == "  a\n  b\n  "


@pytest.mark.parametrize(("kind", "expected"), [
    ("Pod", ("pods", "pod")), ("NetworkPolicy", ("networkpolicies", "networkpolicy")),
    ("Ingress", ("ingresses", "ingress")), ("Endpoints", ("endpoints", "endpoints")),
    ("PodList", ("podlists", "podlist")),
])
def test_guess_resource_pluralises_as_kubectl(kind: str, expected: tuple[str, str]) -> None:
    assert guess_resource(kind) == expected


def test_parse_group_version_and_go_quote() -> None:
    assert parse_group_version("v1") == ("", "v1")
    assert parse_group_version("apps/v1") == ("apps", "v1")
    assert parse_group_version("") == ("", "")
    with pytest.raises(ValueError, match="unexpected GroupVersion string: a/b/c"):
        parse_group_version("a/b/c")
    assert go_quote('a"b\\c\n') == '"a\\"b\\\\c\\n"'
