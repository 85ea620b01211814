"""minik8s' kubectl against the official kubectl (v1.32 and v1.37, :mod:`tests.realkubectl`): the same
invocations, against the same apiserver and objects, must print the same.

One apiserver and one namespace of objects for the module; each case runs through both CLIs with the
same kubeconfig and compares exit code, stdout and stderr's first line.  Ages (``AGE`` cells and
durations like ``12s``, ``3m4s``) become ``<age>`` in both, as the runs happen moments apart (and the
padding after an age or the ``AGE`` header one space, as its width follows the age's); the
apiserver URL's port is kept (both read the same kubeconfig); uids, resourceVersions and timestamps
are printed by neither in the compared invocations.  Nothing else is rewritten but the differences
listed in :data:`tests.support.kubectl_parity.KNOWN_DIFFERENCES` named in :data:`DIFFERENCES`.

Speed: the objects never change, so every case is submitted at once when the module starts —
minik8s' kubectl once per case (both official versions compare with it), the official binaries
for each version — and run four at a time (:class:`~tests.support.kubectl_parity.Runs`).

Cases where the official kubectl prints ANSI colours or reads its discovery cache differently are
not compared.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path

import httpx
import pytest

from minik8s.client.kubeconfig import render
from tests.realkubectl import CANDIDATES, find
from tests.support.kubectl import Result
from tests.support.kubectl_parity import Runs, run_process, tolerate
from tests.support.processes import APIServer

NS = "parity"
AGE = re.compile(r"\b\d+(?:d\d*h?|h\d*m?|m\d*s?|s)\b")
#: An age cell or the AGE header with the padding after it: its width follows the age's (``59s``, ``1m``).
AGE_PADDED = re.compile(r"(\b\d+(?:d\d*h?|h\d*m?|m\d*s?|s)\b|\bAGE) +(?=\S)")


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
        # the cluster-scoped kinds' tables (IngressClass, RuntimeClass, the CSI kinds)
        _post(h, "/apis/networking.k8s.io/v1/ingressclasses", {"metadata": {"name": "parity-ic"}, "spec": {
            "controller": "example.com/parity", "parameters": {"kind": "Params", "name": "p", "apiGroup": "x.io"}}})
        _post(h, "/apis/node.k8s.io/v1/runtimeclasses", {"metadata": {"name": "parity-rc"}, "handler": "runc"})
        _post(h, "/apis/storage.k8s.io/v1/csidrivers", {"metadata": {"name": "parity.csi.example.com"},
                                                         "spec": {"tokenRequests": [{"audience": "a"}]}})
        _post(h, "/apis/storage.k8s.io/v1/csinodes", {"metadata": {"name": "parity-node"}, "spec": {
            "drivers": [{"name": "parity.csi.example.com", "nodeID": "n1"}]}})
        _post(h, "/apis/storage.k8s.io/v1/volumeattachments", {"metadata": {"name": "parity-va"}, "spec": {
            "attacher": "parity.csi.example.com", "nodeName": "n1", "source": {"persistentVolumeName": "pv1"}}})
        _post(h, f"/apis/storage.k8s.io/v1/namespaces/{NS}/csistoragecapacities", {
            "metadata": {"name": "cap"}, "storageClassName": "fast", "capacity": "10Gi"})
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


def _normalise(res: Result) -> Result:
    def ages(text: str) -> str:
        return AGE.sub("<age>", AGE_PADDED.sub(lambda m: m.group(1) + " ", text))
    return Result(res.code, ages(res.out), ages(res.err))


#: The listed differences (:data:`tests.support.kubectl_parity.KNOWN_DIFFERENCES`) these cases meet.
DIFFERENCES = ("1.37-kyaml", "1.37-flag-error-case", "1.37-config-preferences", "1.37-whoami-metadata")


def assert_same(version: str, official: Result, ours: Result, args: list[str]) -> None:
    official, ours = tolerate(DIFFERENCES, version, _normalise(official), _normalise(ours))
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
    ["get", "pods", "-o", "go-template={{range .items}}{{.metadata.name}}:{{len .spec.containers}} {{end}}"],
    ["get", "pod", "db", "-o", "template={{.kind}}/{{.metadata.name}} {{.metadata.labels}}"],
    ["get", "pods", "-o", "jsonpath-as-json={.items[*].metadata.name}"],
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
    # nothing found: a namespaced kind says its namespace, other lists do not; delete says it on stdout
    ["get", "pods", "-l", "nosuch=x"],
    ["get", "pods", "-A", "-l", "nosuch=x"],
    ["get", "namespaces", "-l", "nosuch=x"],
    ["delete", "pods", "-l", "nosuch=x"],
    # the system PriorityClasses every apiserver makes (a boolean cell: GLOBAL-DEFAULT)
    ["get", "priorityclasses", "system-node-critical", "system-cluster-critical"],
    ["get", "pc", "system-node-critical", "-o", "wide"],
    ["get", "ingressclass", "parity-ic"],
    ["get", "runtimeclasses", "parity-rc"],
    ["get", "csidrivers", "parity.csi.example.com"],
    ["get", "csinode", "parity-node"],
    ["get", "volumeattachments", "parity-va", "-o", "wide"],
    ["get", "csistoragecapacities"],
    # API Priority and Fairness' bootstrap objects (MISSINGPL from the Dangling condition; <none> cells)
    ["get", "flowschemas", "exempt", "catch-all", "global-default"],
    ["get", "prioritylevelconfigurations", "exempt", "catch-all", "workload-low"],
    # pflag's shorthand with "=": -o=name, -l=sel
    ["get", "namespaces", "-o=name"],
    ["get", "pods", "-l=nosuch=x"],
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
    ["wait", "pod/nope", "--for=delete", "--timeout=5"],  # a duration without its unit
    ["wait", "pod/nope", "--for=delete", "--timeout=1s"],
    ["plugin", "list"],
]

VERSIONS = sorted(CANDIDATES)
#: The cases run with ``$KUBECONFIG`` = the module's kubeconfig, another file and a missing one.
MERGED_CASES = [["config", "view"], ["config", "view", "--raw"], ["config", "get-contexts"],
                ["config", "view", "--minify", "--context", "far"], ["config", "current-context"]]
Key = tuple[str, str, tuple[str, ...]]  # (suite, "minik8s" or the official version, argv)


@pytest.fixture(scope="module")
def results(objects: None, workdir: Path, runs: Runs) -> dict[Key, Future[Result]]:
    """Every case of every suite (``get``, ``other``, ``merged``) submitted at once, for minik8s and
    each installed official version."""
    file_cases = [["get", "pods", "-o", f"custom-columns-file={workdir / 'columns'}"],
                  ["get", "pods", "-o", f"jsonpath-file={workdir / 'template'}"]]
    merged = f"{workdir / 'kubeconfig'}:{workdir / 'other'}:{workdir / 'missing'}"
    suites = {"get": (GET_CASES, None), "other": (OTHER_CASES + file_cases, None), "merged": (MERGED_CASES, merged)}
    out: dict[Key, Future[Result]] = {}
    for suite, (cases, kubeconfig) in suites.items():
        env = {**os.environ, "HOME": str(workdir), "KUBECONFIG": kubeconfig or str(workdir / "kubeconfig"),
               "COLUMNS": "200"}
        for args in cases:
            out[(suite, "minik8s", tuple(args))] = runs.minik8s(args, env)
            for version in VERSIONS:
                path, _ = find(version)
                if path is not None:
                    cache = ["--cache-dir", str(workdir / f"kubectl-cache-{version}")]
                    out[(suite, version, tuple(args))] = runs.official(path, [*cache, *args], env)
    return out


def compare_suite(version: str, suite: str, results: dict[Key, Future[Result]]) -> list[str]:
    """The mismatches of ``suite``'s cases between the official ``version`` and minik8s."""
    path, why = find(version)
    if path is None:
        pytest.skip(why)
    failures = []
    for (name, who, args), future in results.items():
        if name != suite or who != version:
            continue
        try:
            assert_same(version, future.result(), results[(suite, "minik8s", args)].result(), list(args))
        except AssertionError as exc:
            failures.append(str(exc))
    return failures


@pytest.mark.parametrize("version", VERSIONS)
def test_get_matches_official(version: str, results: dict[Key, Future[Result]]) -> None:
    failures = compare_suite(version, "get", results)
    assert not failures, "\n\n".join(failures)


@pytest.mark.parametrize("version", VERSIONS)
def test_files_and_verbs_match_official(version: str, results: dict[Key, Future[Result]]) -> None:
    failures = compare_suite(version, "other", results) + compare_suite(version, "merged", results)
    assert not failures, "\n\n".join(failures)


def test_forked_runs_are_plain_runs(results: dict[Key, Future[Result]], runs: Runs, workdir: Path) -> None:
    """minik8s' invocations fork from a process that imported the CLI: a plain ``python -m
    minik8s.kubectl`` prints the same (a table, a usage error, a file-reading verb)."""
    env = {**os.environ, "HOME": str(workdir), "KUBECONFIG": str(workdir / "kubeconfig"), "COLUMNS": "200"}
    for args in (["get", "pods", "-o", "wide"], ["get", "pods", "--bogus-flag"], ["config", "view"]):
        key = ("get" if args[0] == "get" else "other", "minik8s", tuple(args))
        forked = results[key].result() if key in results else runs.run_minik8s(args, env)
        plain = runs.run_minik8s(args, env, subprocess_only=True)
        assert _normalise(forked) == _normalise(plain), args


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
        res = run_process(argv + ["config", "use-context", "minik8s"], env)
        current = run_process(argv + ["config", "current-context"], env)
        results.append((res.code, res.out, current.out, "current-context: minik8s" in second.read_text()))
    assert results[0] == results[1]
