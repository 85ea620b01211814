"""minik8s' kubectl against the official kubectl (v1.32 and v1.37, :mod:`tests.realkubectl`): the same
invocations, against the same apiserver and objects, must print the same.

One apiserver and one namespace of objects for the module; each case runs through both CLIs with the
same kubeconfig and compares exit code, stdout and stderr's first line.  Normalised before comparing:

- ages (``AGE`` cells and ``...s``/``...m`` durations like ``12s``, ``3m4s``) → ``<age>``, as the two
  runs happen moments apart;
- the list of ``-o`` formats in the unknown-format error → ``<formats>`` (minik8s' kubectl lists only
  those it has: no ``go-template``/``template``/``jsonpath-as-json``);
- the apiserver URL's port is kept (both read the same kubeconfig), nothing else is rewritten:
  uids, resourceVersions and timestamps are printed by neither in the compared invocations
  (``-o json``/``yaml`` cases go through ``jsonpath``/``custom-columns`` of stable fields).

Cases where the official kubectl prints ANSI colours or reads its discovery cache differently are
not compared.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from minik8s.client.kubeconfig import render
from tests.realkubectl import CANDIDATES, RealKubectl, find
from tests.support.kubectl import Result
from tests.support.processes import ROOT, APIServer

NS = "parity"
AGE = re.compile(r"\b\d+(?:d\d*h?|h\d*m?|m\d*s?|s)\b")


def _post(h: httpx.Client, path: str, body: dict) -> None:
    r = h.post(path, json=body)
    assert r.status_code in (201, 409), r.text


@pytest.fixture(scope="module")
def objects(apiserver: APIServer) -> Iterator[None]:
    """A namespace of pods, config maps, a deployment and an HPA (Pending: no scheduler here)."""
    with httpx.Client(base_url=apiserver.url) as h:
        _post(h, "/api/v1/namespaces", {"metadata": {"name": NS}})
        for name, image, labels in (("web-10", "nginx", {"app": "web", "rank": "10"}),
                                    ("web-2", "busybox", {"app": "web", "rank": "2"}),
                                    ("db", "postgres", {"app": "db", "rank": "100m"})):
            _post(h, f"/api/v1/namespaces/{NS}/pods", {
                "metadata": {"name": name, "labels": labels},
                "spec": {"containers": [{"name": "c", "image": image, "ports": [{"containerPort": 80}]},
                                        {"name": "side", "image": "busybox"}]}})
        for i in range(3):
            _post(h, f"/api/v1/namespaces/{NS}/configmaps", {"metadata": {"name": f"cm{i}"}, "data": {"k": str(i)}})
        _post(h, f"/apis/apps/v1/namespaces/{NS}/deployments", {
            "metadata": {"name": "front"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "front"}},
                     "template": {"metadata": {"labels": {"app": "front"}},
                                  "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}})
        _post(h, f"/apis/autoscaling/v2/namespaces/{NS}/horizontalpodautoscalers", {
            "metadata": {"name": "front"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "front"},
                     "minReplicas": 1, "maxReplicas": 3,
                     "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                         "type": "Utilization", "averageUtilization": 80}}}]}})
    yield


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory, apiserver: APIServer) -> Path:
    """A folder with a kubeconfig for the apiserver (context ``parity``, namespace ``parity``), a second
    kubeconfig with another context (for merging) and template files."""
    d = tmp_path_factory.mktemp("parity")
    text = render(apiserver.url).replace("namespace: default", f"namespace: {NS}")
    (d / "kubeconfig").write_text(text)
    (d / "other").write_text(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: far\n  cluster:\n    server: https://10.0.0.9:6443\n"
        "    certificate-authority-data: QUJD\nusers:\n- name: bob\n  user:\n    token: secret\n"
        "    client-key-data: QUJD\ncontexts:\n- name: far\n  context: {cluster: far, user: bob, namespace: x}\n"
        "- name: minik8s\n  context: {cluster: far, user: bob}\ncurrent-context: far\n")
    (d / "columns").write_text("NAME   IMAGE\n.metadata.name   {.spec.containers[0].image}\n")
    (d / "template").write_text('{range .items[*]}{.metadata.name}{"\\n"}{end}')
    return d


def _normalise(text: str) -> str:
    text = re.sub(r"allowed formats are: \S+", "allowed formats are: <formats>", text)
    return AGE.sub("<age>", text)


def _run(argv: list[str], env: dict[str, str]) -> Result:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=ROOT, env=env)
    return Result(proc.returncode, _normalise(proc.stdout), _normalise(proc.stderr))


def both(version: str, workdir: Path, args: list[str], kubeconfig: str | None = None) -> tuple[Result, Result]:
    """(official, minik8s) results of ``kubectl ARGS`` with ``$KUBECONFIG`` = ``kubeconfig`` (default:
    the module's)."""
    path, why = find(version)
    if path is None:
        pytest.skip(why)
    env = {**os.environ, "HOME": str(workdir), "KUBECONFIG": kubeconfig or str(workdir / "kubeconfig"),
           "COLUMNS": "200"}
    real = RealKubectl(path, version, workdir / "kubeconfig", NS)
    official = _run([str(path), "--cache-dir", str(real.cache_dir), *args], env)
    ours = _ours(tuple(args), tuple(sorted(env.items())))
    return official, ours


@functools.cache
def _ours(args: tuple[str, ...], env: tuple[tuple[str, str], ...]) -> Result:
    """minik8s' result, once per invocation (both official versions compare with it)."""
    return _run([sys.executable, "-m", "minik8s.kubectl", *args], dict(env))


def compare_all(version: str, workdir: Path, cases: list[list[str]], kubeconfig: str | None = None) -> list[str]:
    """The mismatches of ``cases`` (run four at a time)."""
    def one(args: list[str]) -> str:
        official, ours = both(version, workdir, args, kubeconfig)
        try:
            assert_same(official, ours, args)
        except AssertionError as exc:
            return str(exc)
        return ""

    with ThreadPoolExecutor(4) as pool:
        return [f for f in pool.map(one, cases) if f]


def assert_same(official: Result, ours: Result, args: list[str]) -> None:
    assert ours.code == official.code, (args, official, ours)
    assert ours.out == official.out, (args, official.out, ours.out)
    first = (official.err.splitlines() or [""])[0]
    assert (ours.err.splitlines() or [""])[0] == first, (args, official.err, ours.err)


GET_CASES = [
    ["get", "pods"],
    ["get", "pods", "--no-headers"],
    ["get", "pods", "-o", "wide", "--no-headers"],
    ["get", "pods,cm", "--no-headers"],
    ["get", "all"],
    ["get", "all", "--no-headers"],
    ["get", "pods", "--sort-by=.metadata.name"],
    ["get", "pods", "--sort-by", ".metadata.labels.rank", "-o", "name"],
    ["get", "pods", "--sort-by={.metadata.labels.rank}", "-o", "name"],
    ["get", "cm", "--sort-by=.metadata.name", "--chunk-size=1", "-o", "name"],
    ["get", "pods", "--sort-by=.spec.nope", "-o", "name"],
    ["get", "pods", "--sort-by=.spec.nope"],
    ["get", "pods,cm", "--sort-by=.metadata.name"],
    ["get", "pods", "--chunk-size=1"],
    ["get", "pods", "--chunk-size=0", "-o", "name"],
    ["get", "pods", "-o", "custom-columns=NAME:.metadata.name,IMG:.spec.containers[*].image,X:.spec.nope"],
    ["get", "pods", "-o", "custom-columns=NAME:metadata.name,LABELS:.metadata.labels,P:{.spec.containers[0].ports}",
     "--no-headers"],
    ["get", "pod", "db", "-o", "custom-columns=N:.metadata.name,K:.kind"],
    ["get", "pods,cm", "-o", "custom-columns=N:.metadata.name,K:.kind", "--sort-by=.metadata.name"],
    ["get", "pods", "-l", "app=nope", "-o", "custom-columns=N:.metadata.name"],
    ["get", "pods", "-o", 'jsonpath={range .items[*]}{.metadata.name}{"\\t"}{.spec.containers[*].name}{"\\n"}{end}'],
    ["get", "pods", "-o", "jsonpath={.items[0].metadata.labels}"],
    ["get", "pods", "-o", "jsonpath={range .items[*]}{range .spec.containers[*]}[{.name}]{end};{end}"],
    ["get", "deploy", "front", "-o", "jsonpath={.spec.replicas} {.spec.template.spec.containers[0]}"],
    ["get", "--raw", "/api/v1/namespaces/parity/configmaps/cm1"],
    ["get", "--raw", "/nope"],
    ["get", "--raw", "/version", "pods"],
    # bad input
    ["get", "pods", "--bogus-flag"],
    ["get", "pods", "-o", "bogus"],
    ["get", "pods", "-o", "jsonpath"],
    ["get", "pods", "-o", "jsonpath={.a[}"],
    ["get", "pods", "-o", "jsonpath={.metadata.name"],
    ["get", "pods", "-o", "custom-columns=NAME"],
    ["get", "pods", "-o", "custom-columns=N:{.a[}"],
    ["get", "pods", "-o", "custom-columns-file=/nonexistent"],
    ["get", "pods", "-o", "jsonpath-file=/nonexistent"],
    ["--context", "nope", "get", "pods"],
    ["--user", "nope", "get", "pods"],
    ["--cluster", "nope", "get", "pods"],
]

OTHER_CASES = [
    ["api-versions"],
    ["api-versions", "extra"],
    ["cluster-info"],
    ["config", "view"],
    ["config", "view", "--minify"],
    ["config", "view", "-o", "json"],
    ["config", "view", "-o", "jsonpath={.contexts[*].name}"],
    ["config", "current-context"],
    ["config", "get-contexts"],
    ["config", "get-contexts", "-o", "name"],
    ["config", "get-contexts", "nope"],
    ["config", "use-context", "nope"],
    ["auth", "can-i", "get", "pods"],
    ["auth", "can-i", "create", "deployments.apps", "-A"],
    ["auth", "can-i", "get", "/logs"],
    ["auth", "can-i", "frob", "pods"],
    ["auth", "can-i", "get", "nopes"],
    ["auth", "can-i", "--list"],
    ["auth", "whoami"],
    ["auth", "whoami", "-o", "json"],
    ["auth", "whoami", "-o", "yaml"],
]

VERSIONS = sorted(CANDIDATES)


@pytest.mark.parametrize("version", VERSIONS)
def test_get_matches_official(version: str, objects: None, workdir: Path) -> None:
    failures = compare_all(version, workdir, GET_CASES)
    assert not failures, "\n\n".join(failures)


@pytest.mark.parametrize("version", VERSIONS)
def test_files_and_verbs_match_official(version: str, objects: None, workdir: Path) -> None:
    cases = OTHER_CASES + [
        ["get", "pods", "-o", f"custom-columns-file={workdir / 'columns'}"],
        ["get", "pods", "-o", f"jsonpath-file={workdir / 'template'}"],
    ]
    failures = compare_all(version, workdir, cases)
    merged = f"{workdir / 'kubeconfig'}:{workdir / 'other'}:{workdir / 'missing'}"
    failures += compare_all(version, workdir, [
        ["config", "view"], ["config", "view", "--raw"], ["config", "get-contexts"],
        ["config", "view", "--minify", "--context", "far"], ["config", "current-context"]], kubeconfig=merged)
    assert not failures, "\n\n".join(failures)


def test_use_context_writes_the_file_kubectl_writes(objects: None, workdir: Path, tmp_path: Path) -> None:
    """``config use-context`` changes the current context in the first file that sets one, as kubectl's."""
    results = []
    for version in ("1.32", "minik8s"):
        d = tmp_path / version
        d.mkdir()
        first, second = d / "a", d / "b"
        first.write_text((workdir / "kubeconfig").read_text().replace("current-context: minik8s\n", ""))
        second.write_text((workdir / "other").read_text())
        env = {**os.environ, "HOME": str(d), "KUBECONFIG": f"{first}:{second}"}
        if version == "minik8s":
            argv = [sys.executable, "-m", "minik8s.kubectl"]
        else:
            path, why = find(version)
            if path is None:
                pytest.skip(why)
            argv = [str(path)]
        res = _run(argv + ["config", "use-context", "minik8s"], env)
        current = _run(argv + ["config", "current-context"], env)
        results.append((res.code, res.out, current.out, "current-context: minik8s" in second.read_text()))
    assert results[0] == results[1]
