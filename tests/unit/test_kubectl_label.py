"""kubectl label / annotate argument parsing, overwrite checks and result words (pure parts)."""

from __future__ import annotations

import pytest

from minik8s.kubectl.app import normalize_argv
from minik8s.kubectl.errors import KubectlError
from minik8s.kubectl.label import (
    ANNOTATIONS,
    LABELS,
    change,
    is_pair,
    overwrite_conflicts,
    parse_pairs,
    result_word,
)
from minik8s.kubectl.selection import split_changes


def test_split_args() -> None:
    assert split_changes(["pods", "p1", "a=b", "c-"], is_pair, "label") == (["pods", "p1"], ["a=b", "c-"])
    assert split_changes(["pod/p1", "=x", "-"], is_pair, "label") == (["pod/p1", "=x", "-"], [])
    with pytest.raises(KubectlError, match="all resources must be specified before label changes: p2"):
        split_changes(["pods", "p1", "a=b", "p2"], is_pair, "label")


def test_parse_pairs() -> None:
    assert parse_pairs(["a=b", "c-", "d="], LABELS) == ({"a": "b", "d": ""}, ["c"])
    assert parse_pairs(["note=x=y z"], ANNOTATIONS) == ({"note": "x=y z"}, [])
    with pytest.raises(KubectlError, match='invalid label value: "a=x=y"'):
        parse_pairs(["a=x=y"], LABELS)
    with pytest.raises(KubectlError, match="invalid label key: '-a'"):
        parse_pairs(["-a=b"], LABELS)
    with pytest.raises(KubectlError, match="can not both modify and remove labels in the same command"):
        parse_pairs(["a=b", "a-"], LABELS)


def test_overwrite_conflicts() -> None:
    assert overwrite_conflicts({"a": "1"}, {"a": "1", "b": "2"}, LABELS) is None
    assert overwrite_conflicts({"a": "1"}, {"a": "2"}, LABELS) == \
        "'a' already has a value (1), and --overwrite is false"
    assert overwrite_conflicts({"n": "x"}, {"n": "y"}, ANNOTATIONS) == \
        "--overwrite is false but found the following declared annotation(s): 'n' already has a value (x)"
    assert overwrite_conflicts({"kubernetes.io/change-cause": "x"}, {"kubernetes.io/change-cause": "y"},
                               ANNOTATIONS) is None


def test_change_and_words() -> None:
    patch = change({"a": "1", "b": "2"}, {"a": "1", "c": "3"}, ["b", "zz"])
    assert patch == {"c": "3", "b": None}
    assert result_word(LABELS, patch, False) == "labeled"
    assert result_word(LABELS, {"b": None}, False) == "unlabeled"
    assert result_word(LABELS, {}, False) == "not labeled"
    assert result_word(ANNOTATIONS, {}, False) == "annotated"


def test_normalize_bool_forms() -> None:
    assert normalize_argv(["rollout", "status", "deploy/web", "--watch=false", "-n", "x"]) == \
        ["-n", "x", "rollout", "status", "deploy/web", "--no-watch"]
    assert normalize_argv(["label", "pods", "p", "a=b", "--overwrite=true"]) == \
        ["label", "pods", "p", "a=b", "--overwrite"]
