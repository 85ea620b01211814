"""Pure parts of kubectl's output: JSONPath templates with range/end, ``--sort-by`` ordering,
custom-columns specs and kubeconfig merging."""

from __future__ import annotations

from pathlib import Path

import pytest

from minik8s.api import kubejsonpath
from minik8s.client.kubeconfig import merge
from minik8s.kubectl import customcolumns, sorting
from minik8s.kubectl.config import view_document
from minik8s.kubectl.errors import KubectlError

LIST = {"items": [{"metadata": {"name": "a", "labels": {"x": "1"}}, "spec": {"c": [{"n": "p"}, {"n": "q"}]}},
                  {"metadata": {"name": "b"}, "spec": {"c": [{"n": "r"}]}}]}


def test_template_range_nests_and_joins_values() -> None:
    assert kubejsonpath.template('{range .items[*]}{.metadata.name}{"\\n"}{end}', LIST) == "a\nb\n"
    assert kubejsonpath.template("{range .items[*]}{range .spec.c[*]}[{.n}]{end};{end}", LIST) == "[p][q];[r];"
    assert kubejsonpath.template("{.items[*].metadata.name}", LIST) == "a b"
    assert kubejsonpath.template("{.items[0].metadata.labels}", LIST) == '{"x":"1"}'
    assert kubejsonpath.template("x{.nope}y", LIST) == "xy"


@pytest.mark.parametrize(("template", "error"), [("{.a[}", "unterminated array"), ("{.a", "unclosed action"),
                                                 ("{end}", "not in range, nothing to end")])
def test_template_errors_in_client_go_words(template: str, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        kubejsonpath.parse_template(template)


def test_go_formatting() -> None:
    assert kubejsonpath.go_sprint({"b": [1, True], "a": None}) == "map[a:<nil> b:[1 true]]"
    assert kubejsonpath.go_float(1e21) == "1e+21" and kubejsonpath.go_float(0.5) == "0.5"


def test_sort_by_orders_as_kubectl() -> None:
    objs = [{"n": "web-2", "q": "10"}, {"n": "web-10", "q": "100m"}, {"n": "db"}]
    assert [o["n"] for o in sorting.sort_objects(objs, ".n")] == ["db", "web-10", "web-2"]
    assert [o["n"] for o in sorting.sort_objects(objs, "{.q}")] == ["db", "web-10", "web-2"]
    assert sorting.natural_less("web-2", "web-10")
    with pytest.raises(KubectlError):
        sorting.check("{.a[}x{")


def test_custom_columns_spec_and_file() -> None:
    cols = customcolumns.parse_spec("NAME:.metadata.name,L:metadata.labels")
    assert cols == [customcolumns.Column("NAME", "{.metadata.name}"), customcolumns.Column("L", "{.metadata.labels}")]
    assert customcolumns.render(cols, LIST["items"], False) == ["NAME   L", "a      map[x:1]", "b      <none>"]
    with pytest.raises(KubectlError, match="expected <header>:<json-path-expr>"):
        customcolumns.parse_spec("NAME")
    assert customcolumns.parse_file_text("A  B\n.x {.y}\n") == [customcolumns.Column("A", "{.x}"),
                                                                 customcolumns.Column("B", "{.y}")]
    with pytest.raises(KubectlError, match="don't match"):
        customcolumns.parse_file_text("A B\n.x\n")


def test_kubeconfig_merge_first_wins(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "sub" / "two"
    two.parent.mkdir()
    one.write_text("clusters:\n- name: c\n  cluster: {server: http://a}\n"
                   "contexts:\n- name: x\n  context: {cluster: c}\n")
    two.write_text("current-context: y\nclusters:\n- name: c\n  cluster: {server: http://b}\n"
                   "- name: d\n  cluster: {server: http://d, certificate-authority: ca.crt}\n"
                   "users:\n- name: u\n  user: {token: t}\n"
                   "contexts:\n- name: y\n  context: {cluster: d, user: u}\n")
    config = merge([one, two])
    assert config.doc["current-context"] == "y"
    assert config.entries("clusters")["c"]["server"] == "http://a"
    assert config.bases[("clusters", "d")] == two.parent
    doc = view_document(config, minify=True)
    assert [c["name"] for c in doc["clusters"]] == ["d"] and doc["users"][0]["user"]["token"] == "REDACTED"
