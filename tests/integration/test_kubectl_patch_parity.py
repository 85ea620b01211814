"""minik8s' kubectl against the official kubectl (v1.32 and v1.37, :mod:`tests.realkubectl`) for the verbs
that change objects: ``patch``, ``replace``, ``apply --dry-run``, ``diff`` and ``edit`` (driven by ``$EDITOR``
scripts).

Each CLI gets a namespace of its own, holding the same objects and events, and runs the same steps in
the same order in it (a step may depend on the previous ones: ``patched (no change)`` follows
``patched``); the three sequences run side by side.  Every step compares exit code, stdout and
stderr's first line after normalising what differs between two namespaces and two moments: the
namespace's name becomes ``<ns>``; ``uid``s, ``resourceVersion``s and timestamps
(``creationTimestamp``, managedFields' ``time``) become ``<uid>``, ``<rv>`` and ``<time>``; ages
(``events``' ``LAST SEEN``) ``<age>``; kubectl's temporary file names (``/tmp/kubectl-edit-123.yaml``)
``<tmp>`` (each CLI's ``$TMPDIR`` is a folder of its own, written ``/tmp``); ``diff``'s ``LIVE-123``/
``MERGED-456`` folders and file times ``LIVE-<n>``/``MERGED-<n>`` and ``<mtime>``.  Nothing else is
rewritten but the differences listed in :data:`tests.support.kubectl_parity.KNOWN_DIFFERENCES` named in
:data:`DIFFERENCES`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from minik8s.client.kubeconfig import render
from tests.realkubectl import CANDIDATES, find
from tests.support.kubectl import Result
from tests.support.kubectl_parity import Runs, run_process, tolerate
from tests.support.processes import APIServer

VERSIONS = sorted(CANDIDATES)
WHO = ["minik8s", *VERSIONS]
#: The listed differences (:data:`tests.support.kubectl_parity.KNOWN_DIFFERENCES`) these steps meet.
DIFFERENCES = ("1.37-kyaml", "1.37-flag-error-case", "1.37-deleted-from-namespace")

DEPLOYMENT = {
    "metadata": {"name": "web", "labels": {"app": "web"}},
    "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
             "template": {"metadata": {"labels": {"app": "web"}},
                          "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}}}}


def namespace_of(who: str) -> str:
    """The namespace ``who`` (``minik8s`` or an official version) works in."""
    return "patch-" + who.replace(".", "-")


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory, apiserver: APIServer) -> Path:
    """The manifests and patch files the steps read (shared, read only), one kubeconfig per CLI
    (namespace :func:`namespace_of`) and the ``$EDITOR`` scripts."""
    d = tmp_path_factory.mktemp("patch-parity")
    for who in WHO:
        text = render(apiserver.url).replace("namespace: default", f"namespace: {namespace_of(who)}")
        (d / f"kubeconfig-{who}").write_text(text)
    (d / "data.json").write_text('{"data":{"z":"1"}}')
    (d / "web.yaml").write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n")
    (d / "r1.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: r1\ndata:\n  k: replaced\n")
    (d / "r1-stale.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: r1\n"
                                     '  resourceVersion: "1"\ndata:\n  k: stale\n')
    (d / "r1-applied.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: r1\n  annotations:\n"
        "    kubectl.kubernetes.io/last-applied-configuration: '{}'\ndata:\n  k: annotated\n")
    (d / "missing.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: missing\n")
    (d / "ap.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ap1\ndata:\n  k: v\n")
    (d / "brand.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: brandnew\ndata:\n  k: v\n")
    (d / "brand-bad.yaml").write_text((d / "brand.yaml").read_text() + "---\napiVersion: apps/v1\nkind: Deployment\n"
                                      "metadata:\n  name: bad\nspec:\n  replicas: 1\n")
    (d / "ap2.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ap1\ndata:\n  k: w\n")
    for name, body in EDITORS.items():
        script = d / name
        script.write_text("#!/bin/sh\n" + body + "\n")
        script.chmod(0o755)
    return d


#: ``$EDITOR`` scripts (``$1``: the file to edit).
EDITORS = {
    "ed-noop": ": \"$1\"",
    "ed-change": "sed -i 's/^  k: .*/  k: edited/' \"$1\"",
    "ed-comment": "echo '# a comment' >> \"$1\"",
    "ed-rename": "sed -i 's/^  name: e1/  name: other/' \"$1\"",
    "ed-empty": ": > \"$1\"",
    "ed-badyaml": "sed -i 's/^  k: .*/  k: [/' \"$1\"",
    "ed-image": "sed -i 's/image: nginx.*/image: nginx:3/' \"$1\"",
    "ed-fail": "exit 3",
    "showdiff": 'echo "$@"; ls "$2" "$3"; exit 1',
}


def _objects(h: httpx.Client, ns: str) -> None:
    for path, body in (("/api/v1/namespaces", {"metadata": {"name": ns}}),
                       (f"/apis/apps/v1/namespaces/{ns}/deployments", DEPLOYMENT),
                       *((f"/api/v1/namespaces/{ns}/configmaps", {"metadata": {"name": n}, "data": {"k": "v"}})
                         for n in ("c1", "r1", "e1"))):
        r = h.post(path, json=body)
        assert r.status_code == 201, r.text
    for i, (kind, kind_type, count) in enumerate((("Pod", "Normal", 1), ("Pod", "Warning", 3),
                                                  ("ConfigMap", "Normal", 1))):
        r = h.post(f"/api/v1/namespaces/{ns}/events", json={
            "metadata": {"name": f"ev{i}"}, "involvedObject": {"kind": kind, "name": f"p{i % 2}", "namespace": ns,
                                                      **({"apiVersion": "v1"} if kind == "Pod" else {})},
            "reason": "Seen", "message": f" said {i} ", "type": kind_type, "count": count,
            "source": {"component": "test"}, "firstTimestamp": "2026-01-01T00:00:00Z",
            "lastTimestamp": f"2026-01-0{1 + i}T00:00:00Z"})
        assert r.status_code == 201, r.text


def ED(script: str) -> dict[str, str]:  # noqa: N802 - reads as a marker in STEPS
    """The environment of an ``edit`` step: ``$EDITOR`` is one of :data:`EDITORS`."""
    return {"EDITOR": "{files}/" + script}


#: The steps, in order: argv, and the environment variables a step adds (``{files}``: the files' folder).
STEPS: list[tuple[list[str], dict[str, str] | None]] = [
    # patch
    (["patch", "deploy", "web", "-p", '{"spec":{"replicas":3}}'], None),
    (["patch", "deploy", "web", "-p", '{"spec":{"replicas":3}}'], None),
    (["patch", "deploy", "web", "-p",
      '{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:2"}]}}}}'], None),
    (["patch", "deployment/web", "--type=merge", "-p", '{"metadata":{"labels":{"x":"y"}}}', "-o", "name"], None),
    (["patch", "deploy", "web", "--type", "json", "-p", '[{"op":"replace","path":"/spec/replicas","value":2}]'],
     None),
    (["patch", "deploy", "web", "-p", '{"spec":{"replicas":5}}', "--dry-run=server"], None),
    (["patch", "deploy", "web", "-p", '{"spec":{"replicas":5}}', "--dry-run=client"], None),
    (["get", "deploy", "web", "-o", "jsonpath={.spec.replicas} {.spec.template.spec.containers[0].image}"], None),
    (["patch", "deploy", "web", "-p", '{"spec":{"replicas":4}}', "--subresource=scale"], None),
    (["patch", "deploy", "web", "-p", '{"spec":{"replicas":4}}', "--subresource", "scale", "-o", "name"], None),
    (["patch", "deploy", "web", "--type=merge", "-p", '{"status":{"replicas":4}}', "--subresource=status"], None),
    (["patch", "cm", "c1", "-p", "data:\n  q: '2'"], None),
    (["patch", "cm", "c1", "--patch-file", "{files}/data.json"], None),
    (["patch", "cm", "c1", "--patch-file", "{files}/data.json", "-o", "yaml"], None),
    (["patch", "cm", "c1", "--type=merge", "-p", '{"data":{"q":null}}', "-o", "json"], None),
    (["patch", "cm", "c1", "--type=merge", "-p", '{"data":{"w":"3"}}', "--dry-run=client", "-o", "yaml"], None),
    (["patch", "-f", "{files}/web.yaml", "-p", '{"metadata":{"annotations":{"a":"b"}}}'], None),
    # patch: bad input
    (["patch", "deploy", "nope", "-p", "{}"], None),
    (["patch", "cm", "c1", "c2", "-p", '{"data":{"z":"1"}}'], None),
    (["patch", "deploy", "web", "-p", "{bad"], None),
    (["patch", "deploy", "web", "--type=bogus", "-p", "{}"], None),
    (["patch", "deploy", "web"], None),
    (["patch", "cm", "c1", "--patch-file", "{files}/nope.json"], None),
    (["patch", "deploy", "web", "-p", "{}", "--subresource=bogus"], None),
    (["patch", "cm", "c1", "--type=json", "-p", '[{"op":"bogus"}]'], None),
    (["patch", "cm", "c1", "--type=json", "-p", "{}"], None),
    (["patch", "cm", "c1", "-p", "[]"], None),
    (["patch", "cm", "-p", "{}"], None),
    (["patch", "-p", "{}"], None),
    (["patch", "cm", "c1", "-p", "{}", "-o", "wide"], None),
    (["patch", "cm", "c1", "-p", "{}", "--dry-run=bogus"], None),
    (["patch", "nopes", "x", "-p", "{}"], None),
    # replace
    (["replace", "-f", "{files}/r1.yaml"], None),
    (["replace", "-f", "{files}/r1.yaml", "-o", "name"], None),
    (["replace", "-f", "{files}/r1-stale.yaml"], None),
    (["replace", "-f", "{files}/r1.yaml", "--dry-run=server"], None),
    (["replace", "-f", "{files}/r1.yaml", "--save-config"], None),
    (["get", "cm", "r1", "-o", "jsonpath={.metadata.annotations}"], None),
    (["replace", "-f", "{files}/r1-applied.yaml"], None),
    (["get", "cm", "r1", "-o", "jsonpath={.metadata.annotations}"], None),
    (["replace", "-f", "{files}/r1.yaml", "--force"], None),
    (["get", "cm", "r1", "-o", "jsonpath={.data}"], None),
    (["replace", "-f", "{files}/missing.yaml", "--force"], None),
    (["get", "cm", "missing", "-o", "name"], None),
    (["replace", "-f", "{files}/r1.yaml", "-o", "yaml"], None),
    # replace: bad input
    (["replace", "-f", "{files}/missing.yaml", "--save-config"], None),
    (["replace", "-f", "{files}/r1.yaml", "--force", "--dry-run=server"], None),
    (["replace"], None),
    (["replace", "-f", "{files}/nope.yaml"], None),
    # apply --dry-run
    (["apply", "-f", "{files}/ap.yaml", "--dry-run=server"], None),
    (["apply", "-f", "{files}/ap.yaml", "--dry-run=client"], None),
    (["apply", "-f", "{files}/ap.yaml", "--dry-run=client", "-o", "yaml"], None),
    (["apply", "-f", "{files}/ap.yaml"], None),
    (["apply", "-f", "{files}/ap2.yaml", "--dry-run=server"], None),
    (["apply", "-f", "{files}/ap.yaml", "--dry-run=server"], None),
    (["apply", "-f", "{files}/ap2.yaml", "--dry-run=server", "-o", "yaml"], None),
    (["apply", "-f", "{files}/ap2.yaml", "--dry-run=server", "-o", "name"], None),
    (["apply", "-f", "{files}/ap2.yaml", "--dry-run=bogus"], None),
    (["get", "cm", "ap1", "-o", "jsonpath={.data}"], None),
    # diff
    (["diff", "-f", "{files}/ap2.yaml"], None),
    (["diff", "-f", "{files}/ap.yaml"], None),
    (["diff", "-f", "{files}/brand.yaml"], None),
    (["diff", "-f", "{files}/ap2.yaml"], {"KUBECTL_EXTERNAL_DIFF": "{files}/showdiff -x"}),
    (["diff", "-f", "{files}/ap2.yaml"], {"KUBECTL_EXTERNAL_DIFF": "false"}),
    (["get", "cm", "ap1", "brandnew", "-o", "name"], None),
    (["diff", "-f", "{files}/brand-bad.yaml"], None),
    (["diff"], None),
    (["diff", "-f", "{files}/nope.yaml"], None),
    # events
    (["events"], None),
    (["events", "--no-headers"], None),
    (["events", "--for", "pod/p1"], None),
    (["events", "--for=cm/p0"], None),
    (["events", "--types=Warning"], None),
    (["events", "--types", "normal,Warning", "--for", "pod/p0"], None),
    (["events", "-n", "kube-public"], None),
    # events: bad input
    (["events", "--types=Bogus"], None),
    (["events", "--for", "nopes/x"], None),
    (["events", "--for", "p1"], None),
    # edit
    (["edit", "cm", "e1"], ED("ed-noop")),
    (["edit", "cm", "e1"], ED("ed-comment")),
    (["edit", "cm", "e1"], ED("ed-change")),
    (["get", "cm", "e1", "-o", "jsonpath={.data}"], None),
    (["edit", "cm/e1"], ED("ed-change")),
    (["edit", "cm", "e1", "c1", "-o", "json"], ED("ed-noop")),
    (["edit", "deploy", "web"], ED("ed-image")),
    (["get", "deploy", "web", "-o", "jsonpath={.spec.template.spec.containers[0].image}"], None),
    # edit: bad input
    (["edit", "cm", "e1"], ED("ed-rename")),
    (["edit", "cm", "e1"], ED("ed-empty")),
    (["edit", "cm", "e1"], ED("ed-badyaml")),
    (["edit", "cm", "e1"], ED("ed-fail")),
    (["edit", "cm", "nope"], ED("ed-noop")),
    (["edit", "cm", "e1", "-o", "name"], ED("ed-noop")),
]


AGE = re.compile(r"\b\d+(?:d\d*h?|h\d*m?|m\d*s?|s|y)\b")


def _normalise(res: Result, ns: str, tmp: str = "\0") -> Result:
    def clean(text: str) -> str:
        text = text.replace(tmp, "/tmp").replace(ns, "<ns>")
        text = re.sub(r'(uid"?: "?)[0-9a-f-]{36}', r"\1<uid>", text)
        text = re.sub(r'(resourceVersion"?: )"\d+"', r"\1<rv>", text)
        text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "<time>", text)
        text = AGE.sub("<age>", text)
        text = re.sub(r"(?m)^((?:---|\+\+\+) .*)\t\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ [-+]\d{4}$", r"\1\t<mtime>", text)
        text = re.sub(r"/(LIVE|MERGED)-\d+", r"/\1-<n>", text)
        return re.sub(r"/tmp/kubectl-edit-\d+\.(yaml|json)", "<tmp>", text)

    return Result(res.code, clean(res.out), clean(res.err))


def _argv(step: list[str], files: Path) -> list[str]:
    return [a.replace("{files}", str(files)) for a in step]


@pytest.fixture(scope="module")
def sequences(apiserver: APIServer, files: Path) -> Iterator[dict[str, list[Result]]]:
    """Every CLI's results of :data:`STEPS`, each in its own namespace, the CLIs side by side."""
    runs = Runs(1)

    def sequence(who: str) -> list[Result]:
        ns = namespace_of(who)
        with httpx.Client(base_url=apiserver.url) as h:
            _objects(h, ns)
        tmp = files / f"tmp-{who}"  # edit's kept files and diff's folders stay in the test's folder
        tmp.mkdir()
        base = {**os.environ, "HOME": str(files), "KUBECONFIG": str(files / f"kubeconfig-{who}"),
                "COLUMNS": "200", "TMPDIR": str(tmp)}
        out: list[Result] = []
        path = None if who == "minik8s" else find(who)[0]
        for step, extra in STEPS:
            env = {**base, **{k: v.replace("{files}", str(files)) for k, v in (extra or {}).items()}}
            args = _argv(step, files)
            if path is None:
                res = runs.run_minik8s(args, env)
            else:
                res = run_process([str(path), "--cache-dir", str(files / f"cache-{who}"), *args], env)
            out.append(_normalise(res, ns, str(tmp)))
        return out

    present = [w for w in WHO if w == "minik8s" or find(w)[0] is not None]
    try:
        with ThreadPoolExecutor(len(present)) as pool:
            futures = {who: pool.submit(sequence, who) for who in present}
            yield {who: f.result() for who, f in futures.items()}
    finally:
        runs.close()


@pytest.mark.parametrize("version", VERSIONS)
def test_patch_and_replace_match_official(version: str, sequences: dict[str, list[Result]]) -> None:
    path, why = find(version)
    if path is None:
        pytest.skip(why)
    failures = []
    for (step, _), official, ours in zip(STEPS, sequences[version], sequences["minik8s"], strict=True):
        official, ours = tolerate(DIFFERENCES, version, official, ours)
        first = (official.err.splitlines() or [""])[0]
        if (ours.code, ours.out, (ours.err.splitlines() or [""])[0]) != (official.code, official.out, first):
            failures.append(f"{step}\nofficial: {official}\nminik8s:  {ours}")
    assert not failures, "\n\n".join(failures)


@pytest.mark.parametrize("version", VERSIONS)
def test_events_of_all_namespaces_match_official(version: str, sequences: dict[str, list[Result]],
                                                 files: Path) -> None:
    """``events -A`` lists every CLI's namespace: both run once the sequences are done, back to back."""
    path, why = find(version)
    if path is None:
        pytest.skip(why)
    env = {**os.environ, "HOME": str(files), "KUBECONFIG": str(files / "kubeconfig-minik8s")}
    runs = Runs(1)
    try:
        for args in (["events", "-A", "--types=Warning"], ["events", "-A", "--for", "configmap/p0"]):
            ours = _normalise(runs.run_minik8s(args, env), "\0")
            official = _normalise(run_process([str(path), "--cache-dir", str(files / f"cache-{version}"), *args],
                                              env), "\0")
            assert (ours.code, ours.out, ours.err) == (official.code, official.out, official.err), args
    finally:
        runs.close()
