"""Unit tests for minik8s.api.selectors (Kubernetes label and field selectors)."""

from __future__ import annotations

from typing import Any

import pytest

from minik8s.api.selectors import FieldSelector, LabelSelector, Requirement

# --------------------------------------------------------------------------------------
# LabelSelector.parse


def test_empty_string_matches_everything() -> None:
    for text in ("", "   ", "\t\n"):
        selector = LabelSelector.parse(text)
        assert selector.is_empty()
        assert not selector.matches_nothing()
        assert selector.requirements == []
        assert selector.matches({})
        assert selector.matches(None)
        assert selector.matches({"any": "thing"})
        assert str(selector) == ""


@pytest.mark.parametrize(
    ("text", "requirements"),
    [
        ("a=b", [Requirement("a", "=", ("b",))]),
        ("a==b", [Requirement("a", "=", ("b",))]),
        ("a!=b", [Requirement("a", "!=", ("b",))]),
        ("a in (x,y)", [Requirement("a", "in", ("x", "y"))]),
        ("a notin (y,x,y)", [Requirement("a", "notin", ("x", "y"))]),
        ("a", [Requirement("a", "exists")]),
        ("!a", [Requirement("a", "!")]),
        ("a=", [Requirement("a", "=", ("",))]),
        ("a!=", [Requirement("a", "!=", ("",))]),
        ("a in ()", [Requirement("a", "in", ("",))]),
        ("a in (x,)", [Requirement("a", "in", ("", "x"))]),
        ("a in (,x)", [Requirement("a", "in", ("", "x"))]),
        ("a in (x,,y)", [Requirement("a", "in", ("", "x", "y"))]),
        ("a=in", [Requirement("a", "=", ("in",))]),
        ("a in (in,notin)", [Requirement("a", "in", ("in", "notin"))]),
        ("app.kubernetes.io/name=web", [Requirement("app.kubernetes.io/name", "=", ("web",))]),
        ("  a  =  b  ,  c  ", [Requirement("a", "=", ("b",)), Requirement("c", "exists")]),
        ("! a", [Requirement("a", "!")]),
        ("a\tin\t(x)", [Requirement("a", "in", ("x",))]),
        ("b=1,a=2", [Requirement("a", "=", ("2",)), Requirement("b", "=", ("1",))]),
        ("a=1,a=2", [Requirement("a", "=", ("1",)), Requirement("a", "=", ("2",))]),
        ("Key_1.x=V-1.x_Y", [Requirement("Key_1.x", "=", ("V-1.x_Y",))]),
    ],
)
def test_parse(text: str, requirements: list[Requirement]) -> None:
    assert LabelSelector.parse(text).requirements == requirements


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("a==b", "a=b"),
        (" a != b ", "a!=b"),
        ("z,y in (b, a),!x", "!x,y in (a,b),z"),
        ("a notin ( c,b )", "a notin (b,c)"),
        ("a in ()", "a in ()"),
        ("a in (x,)", "a in (,x)"),
        ("a=", "a="),
        ("k8s.io/a=b,b", "b,k8s.io/a=b"),
    ],
)
def test_canonical_string_round_trips(text: str, canonical: str) -> None:
    selector = LabelSelector.parse(text)
    assert str(selector) == canonical
    assert LabelSelector.parse(str(selector)) == selector


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("a b", "found 'b'"),
        ("a=b=c", "found '='"),
        ("a=b c", "found 'c'"),
        ("a in b", "expected: '('"),
        ("a in (b", "found 'end of string'"),
        ("a in (b c)", "found 'c'"),
        ("a in (b))", "found ')'"),
        ("a in (=)", "found '='"),
        (",", "found ','"),
        ("a,", "identifier after ','"),
        ("a,,b", "identifier after ','"),
        ("!", "expected: identifier"),
        ("!=a", "found '!='"),
        ("!a=b", "found '='"),
        ("=b", "found '='"),
        ("a!", "found '!'"),
        ("a>1", "not supported"),
        ("a<1", "not supported"),
        ("(a)", "found '('"),
        ("a=(b)", "found '('"),
        ("in=1", "found 'in'"),
        ("notin", "found 'notin'"),
        ("a notin", "expected: '('"),
    ],
)
def test_parse_syntax_errors(text: str, fragment: str) -> None:
    with pytest.raises(ValueError) as info:
        LabelSelector.parse(text)
    assert fragment in str(info.value)
    assert repr(text) in str(info.value)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("-a=b", "invalid label key '-a'"),
        ("a/b/c=d", "invalid label key 'a/b/c'"),
        ("Example.com/a=b", "invalid label key 'Example.com/a'"),
        ("a/=b", "invalid label key 'a/'"),
        ("k" * 64 + "=v", "must be no more than 63 characters"),
        ("a=-b", "invalid label value '-b' for key 'a'"),
        ("a=b_", "invalid label value 'b_'"),
        ("a in (ok,bad-)", "invalid label value 'bad-'"),
        ("a=" + "v" * 64, "must be no more than 63 characters"),
        ("!-a", "invalid label key '-a'"),
        ("a=b/c", "invalid label value 'b/c'"),
    ],
)
def test_parse_invalid_keys_and_values(text: str, fragment: str) -> None:
    with pytest.raises(ValueError, match="invalid label") as info:
        LabelSelector.parse(text)
    assert fragment in str(info.value)


def test_parse_rejects_non_string() -> None:
    with pytest.raises(ValueError):
        LabelSelector.parse(None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "labels", "expected"),
    [
        ("a=b", {"a": "b"}, True),
        ("a=b", {"a": "c"}, False),
        ("a=b", {}, False),
        ("a=b", None, False),
        ("a=", {"a": ""}, True),
        ("a=", {}, False),
        ("a!=b", {"a": "c"}, True),
        ("a!=b", {"a": "b"}, False),
        ("a!=b", {}, True),  # absent key satisfies !=
        ("a in (x,y)", {"a": "y"}, True),
        ("a in (x,y)", {"a": "z"}, False),
        ("a in (x,y)", {}, False),
        ("a in ()", {"a": ""}, True),
        ("a notin (x,y)", {"a": "z"}, True),
        ("a notin (x,y)", {"a": "x"}, False),
        ("a notin (x,y)", {}, True),  # absent key satisfies notin
        ("a", {"a": ""}, True),
        ("a", {"b": "a"}, False),
        ("!a", {"b": "x"}, True),
        ("!a", {"a": ""}, False),
        ("!a", None, True),
        ("app=web,tier!=db", {"app": "web", "tier": "cache"}, True),
        ("app=web,tier!=db", {"app": "web", "tier": "db"}, False),
        ("app=web,tier!=db", {"app": "api"}, False),
        ("a=1,a=2", {"a": "1"}, False),
        ("A=b", {"a": "b"}, False),  # keys are case-sensitive
    ],
)
def test_matches(text: str, labels: dict[str, str] | None, expected: bool) -> None:
    assert LabelSelector.parse(text).matches(labels) is expected


def test_requirement_str_and_matches() -> None:
    assert str(Requirement("a", "exists")) == "a"
    assert str(Requirement("a", "!")) == "!a"
    assert str(Requirement("a", "=", ("b",))) == "a=b"
    assert str(Requirement("a", "!=", ("b",))) == "a!=b"
    assert str(Requirement("a", "in", ("x", "y"))) == "a in (x,y)"
    assert str(Requirement("a", "notin", ("x",))) == "a notin (x)"
    assert Requirement("a", "in", ("x",)).matches({"a": "x"})
    with pytest.raises(AttributeError):
        Requirement("a", "exists").key = "b"  # type: ignore[misc]


def test_requirements_is_a_copy() -> None:
    selector = LabelSelector.parse("a=b")
    selector.requirements.append(Requirement("c", "exists"))
    assert selector.requirements == [Requirement("a", "=", ("b",))]


def test_equality_and_hash() -> None:
    assert LabelSelector.parse("a=b,c") == LabelSelector.parse("c, a==b")
    assert hash(LabelSelector.parse("a=b,c")) == hash(LabelSelector.parse("c,a=b"))
    assert LabelSelector.parse("a=b") != LabelSelector.parse("a!=b")
    assert LabelSelector.everything() != LabelSelector.nothing()
    assert LabelSelector.parse("") == LabelSelector.everything()
    assert LabelSelector.parse("a") != "a"
    assert len({LabelSelector.parse("a"), LabelSelector.parse(" a ")}) == 1


def test_repr() -> None:
    assert repr(LabelSelector.parse("a=b")) == "LabelSelector.parse('a=b')"
    assert repr(LabelSelector.nothing()) == "LabelSelector.nothing()"


def test_value_for() -> None:
    selector = LabelSelector.parse("a=b,c!=d,e in (f),g=")
    assert selector.value_for("a") == "b"
    assert selector.value_for("c") is None
    assert selector.value_for("e") is None
    assert selector.value_for("g") == ""
    assert selector.value_for("zzz") is None


# --------------------------------------------------------------------------------------
# LabelSelector.from_dict / from_set


def test_from_dict_none_matches_nothing() -> None:
    selector = LabelSelector.from_dict(None)
    assert selector.matches_nothing()
    assert not selector.is_empty()
    assert not selector.matches({})
    assert not selector.matches({"a": "b"})
    assert str(selector) == ""  # as in Kubernetes; callers must check matches_nothing()
    assert selector == LabelSelector.nothing()


@pytest.mark.parametrize(
    "empty",
    [{}, {"matchLabels": {}}, {"matchExpressions": []}, {"matchLabels": None, "matchExpressions": None}],
)
def test_from_dict_empty_matches_everything(empty: dict[str, Any]) -> None:
    selector = LabelSelector.from_dict(empty)
    assert selector.is_empty()
    assert selector.matches({"x": "y"})
    assert selector.matches(None)


def test_from_dict_full() -> None:
    selector = LabelSelector.from_dict(
        {
            "matchLabels": {"app": "web", "tier": "frontend"},
            "matchExpressions": [
                {"key": "env", "operator": "In", "values": ["prod", "staging", "prod"]},
                {"key": "track", "operator": "NotIn", "values": ["canary"]},
                {"key": "release", "operator": "Exists"},
                {"key": "legacy", "operator": "DoesNotExist", "values": []},
            ],
        }
    )
    assert str(selector) == "app=web,env in (prod,staging),!legacy,release,tier=frontend,track notin (canary)"
    assert LabelSelector.parse(str(selector)) == selector
    good = {"app": "web", "tier": "frontend", "env": "prod", "release": "1"}
    assert selector.matches(good)
    assert selector.matches({**good, "track": "stable"})
    assert not selector.matches({**good, "track": "canary"})
    assert not selector.matches({**good, "legacy": "yes"})
    assert not selector.matches({**good, "env": "dev"})
    assert not selector.matches({k: v for k, v in good.items() if k != "release"})


@pytest.mark.parametrize(
    ("selector", "fragment"),
    [
        (
            {"matchExpressions": [{"key": "a", "operator": "Foo"}]},
            '"Foo" is not a valid label selector operator',
        ),
        (
            {"matchExpressions": [{"key": "a", "operator": "in", "values": ["x"]}]},
            "not a valid label selector",
        ),
        ({"matchExpressions": [{"key": "a"}]}, "not a valid label selector operator"),
        ({"matchExpressions": [{"key": "a", "operator": "In"}]}, "values set can't be empty"),
        (
            {"matchExpressions": [{"key": "a", "operator": "NotIn", "values": []}]},
            "values set can't be empty",
        ),
        (
            {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]},
            "values set must be empty",
        ),
        ({"matchExpressions": [{"key": "a", "operator": "DoesNotExist", "values": ["x"]}]}, "must be empty"),
        ({"matchExpressions": [{"operator": "Exists"}]}, "matchExpressions[0].key"),
        ({"matchExpressions": [{"key": "-a", "operator": "Exists"}]}, "invalid label key '-a'"),
        (
            {"matchExpressions": [{"key": "a", "operator": "In", "values": ["-x"]}]},
            "invalid label value '-x'",
        ),
        ({"matchExpressions": [{"key": "a", "operator": "In", "values": "x"}]}, "must be a list"),
        ({"matchExpressions": [{"key": "a", "operator": "In", "values": [1]}]}, "must be a list of strings"),
        ({"matchExpressions": ["a=b"]}, "matchExpressions[0] must be an object"),
        ({"matchExpressions": "a=b"}, "matchExpressions must be a list"),
        ({"matchLabels": ["a"]}, "matchLabels must be an object"),
        ({"matchLabels": {"a": 1}}, "must be a string"),
        ({"matchLabels": {"a b": "c"}}, "invalid label key 'a b'"),
        ({"matchLabels": {"a": "c d"}}, "invalid label value 'c d'"),
        (
            {"matchExpressions": [{"key": "ok", "operator": "Exists"}, {"key": "a", "operator": "Nope"}]},
            "matchExpressions[1].operator",
        ),
    ],
)
def test_from_dict_errors(selector: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ValueError) as info:
        LabelSelector.from_dict(selector)
    assert fragment in str(info.value)


def test_from_dict_rejects_non_mapping() -> None:
    with pytest.raises(ValueError, match="must be an object"):
        LabelSelector.from_dict("app=web")  # type: ignore[arg-type]


def test_from_set() -> None:
    selector = LabelSelector.from_set({"b": "2", "a": "1"})
    assert str(selector) == "a=1,b=2"
    assert selector.matches({"a": "1", "b": "2", "c": "3"})
    assert not selector.matches({"a": "1"})
    assert LabelSelector.from_set({}).is_empty()
    assert LabelSelector.from_set(None).is_empty()
    with pytest.raises(ValueError, match="invalid label value"):
        LabelSelector.from_set({"a": "not valid"})


def test_from_dict_does_not_mutate_input() -> None:
    source = {
        "matchLabels": {"a": "b"},
        "matchExpressions": [{"key": "c", "operator": "In", "values": ["y", "x"]}],
    }
    snapshot = {
        "matchLabels": {"a": "b"},
        "matchExpressions": [{"key": "c", "operator": "In", "values": ["y", "x"]}],
    }
    LabelSelector.from_dict(source)
    assert source == snapshot


# --------------------------------------------------------------------------------------
# FieldSelector


def test_field_selector_empty() -> None:
    for text in ("", ",", " , "):
        selector = FieldSelector.parse(text)
        assert selector.is_empty()
        assert selector.matches({})
        assert str(selector) == ""
    assert FieldSelector.everything().is_empty()


@pytest.mark.parametrize(
    ("text", "requirements"),
    [
        ("spec.nodeName=node-1", [Requirement("spec.nodeName", "=", ("node-1",))]),
        ("spec.nodeName==node-1", [Requirement("spec.nodeName", "=", ("node-1",))]),
        ("status.phase!=Running", [Requirement("status.phase", "!=", ("Running",))]),
        ("spec.nodeName=", [Requirement("spec.nodeName", "=", ("",))]),
        ("a=1,,b=2,", [Requirement("a", "=", ("1",)), Requirement("b", "=", ("2",))]),
        (" a = 1 ", [Requirement("a", "=", ("1",))]),
        ("b!=2,a=1", [Requirement("a", "=", ("1",)), Requirement("b", "!=", ("2",))]),
        ("a=x\\,y", [Requirement("a", "=", ("x,y",))]),
        ("a=x\\=y", [Requirement("a", "=", ("x=y",))]),
        ("a=x\\\\y", [Requirement("a", "=", ("x\\y",))]),
        ("metadata.name=my pod", [Requirement("metadata.name", "=", ("my pod",))]),
        ("a!=", [Requirement("a", "!=", ("",))]),
    ],
)
def test_field_selector_parse(text: str, requirements: list[Requirement]) -> None:
    assert FieldSelector.parse(text).requirements == requirements


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("a", "can't understand 'a'"),
        ("a=1,b", "can't understand 'b'"),
        ("=x", "has no field name"),
        (" =x", "has no field name"),
        ("a=b=c", "unescaped '='"),
        ("a==b=c", "unescaped '='"),
        ("a!==b", "unescaped '='"),
        ("a=b,c", "can't understand 'c'"),
        ("a=b\\", "invalid escape sequence"),
        ("a=b\\x", "invalid escape sequence '\\x'"),
        ("a in (b)", "can't understand"),
        ("a<1", "can't understand"),
    ],
)
def test_field_selector_errors(text: str, fragment: str) -> None:
    with pytest.raises(ValueError) as info:
        FieldSelector.parse(text)
    assert fragment in str(info.value)


def test_field_selector_rejects_non_string() -> None:
    with pytest.raises(ValueError):
        FieldSelector.parse(3)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "fields", "expected"),
    [
        ("spec.nodeName=n1", {"spec.nodeName": "n1"}, True),
        ("spec.nodeName=n1", {"spec.nodeName": "n2"}, False),
        ("spec.nodeName=n1", {}, False),
        ("spec.nodeName=", {}, True),  # absent counts as ""
        ("spec.nodeName=", {"spec.nodeName": ""}, True),
        ("spec.nodeName=", {"spec.nodeName": "n1"}, False),
        ("spec.nodeName!=", {"spec.nodeName": "n1"}, True),
        ("spec.nodeName!=", {}, False),
        ("status.phase!=Running", {"status.phase": "Pending"}, True),
        ("status.phase!=Running", {"status.phase": "Running"}, False),
        ("status.phase!=Running", {}, True),
        ("a=1,b!=2", {"a": "1", "b": "3"}, True),
        ("a=1,b!=2", {"a": "1", "b": "2"}, False),
        ("metadata.name=x\\,y", {"metadata.name": "x,y"}, True),
    ],
)
def test_field_selector_matches(text: str, fields: dict[str, str], expected: bool) -> None:
    assert FieldSelector.parse(text).matches(fields) is expected


def test_field_selector_matches_none_value_as_empty() -> None:
    assert FieldSelector.parse("spec.nodeName=").matches({"spec.nodeName": None})  # type: ignore[dict-item]


def test_field_selector_value_for() -> None:
    selector = FieldSelector.parse("spec.nodeName=node-1,status.phase!=Failed")
    assert selector.value_for("spec.nodeName") == "node-1"
    assert selector.value_for("status.phase") is None
    assert selector.value_for("metadata.name") is None
    assert FieldSelector.parse("spec.nodeName=").value_for("spec.nodeName") == ""


def test_field_selector_str_round_trips_with_escapes() -> None:
    selector = FieldSelector.parse("b!=x\\,y,a==p\\=q\\\\r")
    assert str(selector) == "a=p\\=q\\\\r,b!=x\\,y"
    assert FieldSelector.parse(str(selector)) == selector
    assert repr(selector) == f"FieldSelector.parse({str(selector)!r})"


def test_field_selector_equality_and_from_set() -> None:
    assert FieldSelector.parse("a=1,b=2") == FieldSelector.parse("b==2,a=1")
    assert hash(FieldSelector.parse("a=1,b=2")) == hash(FieldSelector.parse("b=2,a=1"))
    assert FieldSelector.parse("a=1") != FieldSelector.parse("a!=1")
    assert FieldSelector.parse("a=1") != "a=1"
    assert FieldSelector.from_set({"metadata.name": "x"}) == FieldSelector.parse("metadata.name=x")
    assert FieldSelector.from_set(None).is_empty()


def test_field_selector_requirements_is_a_copy() -> None:
    selector = FieldSelector.parse("a=1")
    selector.requirements.clear()
    assert selector.requirements == [Requirement("a", "=", ("1",))]
