"""``-o go-template``, ``-o template``, ``go-template-file``, ``templatefile`` and ``jsonpath-as-json``:
minik8s' kubectl against the official 1.32 and 1.37, byte for byte (stdout, stderr, exit code), on the
objects of client dry runs (no server needed), Go's builtin functions and kubectl's own (``exists``,
``base64decode``), ``fmt``'s printing of values, and the errors of templates that do not parse or fail."""

from __future__ import annotations

import os
from concurrent.futures import Future
from pathlib import Path

import pytest

from tests.realkubectl import CANDIDATES, find
from tests.support.kubectl import Result
from tests.support.kubectl_parity import Runs, tolerate

DEPLOY = ["create", "deployment", "web", "--image=nginx:1.25", "--replicas=3", "--port=8080", "--dry-run=client"]
CONFIGMAP = ["create", "configmap", "cfg", "--from-literal=b=2", "--from-literal=a=1",
             "--from-literal=secret=aGVsbG8=", "--from-literal=html=<a&b>", "--dry-run=client"]

TEMPLATES = [
    "{{.metadata.name}}",
    "{{.spec.replicas}} {{.spec.template.spec.containers}} {{.metadata.labels}} {{.spec.strategy}}",
    "{{range .spec.template.spec.containers}}{{.name}}={{.image}}{{range .ports}}:{{.containerPort}}{{end}}{{end}}",
    "{{range $i, $c := .spec.template.spec.containers}}{{$i}}/{{$c.name}}{{end}} {{$.kind}}",
    "{{if gt .spec.replicas 2}}big{{else if .spec.replicas}}small{{else}}none{{end}}",
    "{{with .spec.paused}}paused{{else}}running{{end}} {{not .spec.paused}} {{and 1 0 2}} {{or 0 \"\" \"z\"}}",
    "{{.metadata.creationTimestamp}} {{index .metadata \"creationTimestamp\"}} {{.nope}} {{print nil}}",
    "{{printf \"%5d|%-6s|%v|%q|%.2f|%x|%s\" .spec.replicas .kind .metadata.labels .metadata.name 3.14159 255 "
    ".spec.replicas}}",
    "{{print 1 2 \"a\" \"b\" 3 true}} {{println \"x\" 1}}{{len .metadata.labels}} {{slice .kind 1 4}}",
    "{{.spec.template.spec.containers | len | printf \"%03d\"}} {{(index .spec.template.spec.containers 0).image}}",
    "{{- \"  a  \" -}}   {{/* a comment */}}  {{- 1.5 }} {{1e6}} {{0.00001}} {{123456.0}} {{-3}}",
    "{{$x := 1}}{{range .spec.template.spec.containers}}{{$x = 2}}{{end}}{{$x}}",
    "{{range .spec.template.spec.containers}}{{break}}{{end}}a{{range .nope}}x{{else}}empty{{end}}",
    "{{eq .kind \"Deployment\" \"x\"}} {{ne 1 2}} {{lt \"a\" \"b\"}} {{ge 2 2}} {{html \"<a>'\"}} {{js \"a'b<\"}}",
    "{{urlquery \"a b&c\"}} {{exists . \"spec\" \"replicas\"}} {{exists . \"spec\" \"nope\"}}",
    # errors: parse, then execution (with kubectl's debugging help)
    "{{.metadata.name",
    "{{nope 1}}",
    "{{end}}",
    "{{.metadata.name.x}}",
    "{{.nope.x}}",
    "{{index .metadata 3}}",
    "{{len 3}}",
]
CONFIGMAP_TEMPLATES = [
    "{{range $k, $v := .data}}{{$k}}={{$v}};{{end}}",
    "{{base64decode .data.secret}} {{index .data \"html\"}} {{printf \"%q\" .data}}",
    "{{base64decode .data.b}}",
]
JSONPATH_AS_JSON = ["{.metadata.name}{.data}{.kind}", "{.nope}", "x{range .metadata}{.name}{end}",
                    "{.data.html}"]
VERSIONS = sorted(CANDIDATES)
Key = tuple[str, tuple[str, ...]]


def _cases(tmp_path: Path) -> list[list[str]]:
    template_file = tmp_path / "template"
    template_file.write_text("{{.metadata.name}}:{{range .spec.template.spec.containers}}{{.image}}{{end}}\n")
    cases = [[*DEPLOY, "-o", f"go-template={t}"] for t in TEMPLATES]
    cases += [[*CONFIGMAP, "-o", f"go-template={t}"] for t in CONFIGMAP_TEMPLATES]
    cases += [[*DEPLOY, "-o", "template={{.kind}}"], [*DEPLOY, "-o", f"go-template-file={template_file}"],
              [*DEPLOY, "-o", f"templatefile={template_file}"], [*DEPLOY, "-o", "go-template"],
              [*DEPLOY, "-o", "go-template-file=/nonexistent"]]
    cases += [[*CONFIGMAP, "-o", f"jsonpath-as-json={t}"] for t in JSONPATH_AS_JSON]
    return cases


@pytest.fixture(scope="module")
def results(runs: Runs, tmp_path_factory: pytest.TempPathFactory) -> dict[Key, Future[Result]]:
    tmp = tmp_path_factory.mktemp("templates")
    env = {**os.environ, "KUBECONFIG": str(tmp / "missing"), "HOME": str(tmp)}
    out: dict[Key, Future[Result]] = {}
    for args in _cases(tmp):
        out[("minik8s", tuple(args))] = runs.minik8s(args, env)
        for version in VERSIONS:
            path, _ = find(version)
            if path is not None:
                out[(version, tuple(args))] = runs.official(path, args, env)
    return out


@pytest.mark.parametrize("version", VERSIONS)
def test_templates_match_official(version: str, results: dict[Key, Future[Result]]) -> None:
    if find(version)[0] is None:
        pytest.skip(find(version)[1])
    differ = []
    for (who, args), future in results.items():
        if who != version:
            continue
        theirs, ours = tolerate(["1.37-creationTimestamp-null"], version, future.result(),
                                results[("minik8s", args)].result())
        if (ours.code, ours.out, ours.err) != (theirs.code, theirs.out, theirs.err):
            differ.append(f"{args[-1]}\n  minik8s: {ours}\n  {version}: {theirs}")
    assert not differ, "\n".join(differ)
