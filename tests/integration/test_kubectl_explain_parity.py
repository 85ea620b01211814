"""``kubectl explain``: minik8s' kubectl against the official 1.32 and 1.37
(:mod:`tests.realkubectl`) on the same apiserver, byte for byte (stdout, stderr, exit code), up to
the differences listed in :data:`tests.support.kubectl_parity.KNOWN_DIFFERENCES`.

The invocations cover built-in kinds named by plural, singular, short name, kind and
``resource.group``; nested field paths through objects, arrays of objects and maps; a custom
resource of a CRD made for the module (descriptions, an enum, a required field, an array of
objects, a map) and a second one sharing its short name (kubectl's warning); ``--recursive`` on
small objects; ``--api-version``; ``-o plaintext-openapiv2``; and bad input (a missing field, an
unknown type, no argument, two arguments, an unknown format, a group/version that does not serve
the resource, a malformed ``--api-version``).

Every invocation changes nothing, so minik8s runs each once and all run concurrently
(:class:`~tests.support.kubectl_parity.Runs`); the CRDs are made, and served, before any runs
(each official kubectl has a cache directory of its own, made afresh).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from concurrent.futures import Future

import httpx
import pytest

from minik8s.client.kubeconfig import render
from tests.realkubectl import CANDIDATES, find
from tests.support.kubectl import Result
from tests.support.kubectl_parity import Runs, tolerate
from tests.support.processes import APIServer

VERSIONS = sorted(CANDIDATES)
GROUP = "explain.example.com"
CRD_NAME = f"explainedtabs.{GROUP}"
#: A CronTab-like custom resource with what explain shows: descriptions long enough to wrap, a
#: required field, an enum, an array of objects, a map, a field without a description.
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": CRD_NAME},
    "spec": {
        "group": GROUP, "scope": "Namespaced",
        "names": {"plural": "explainedtabs", "singular": "explainedtab", "kind": "ExplainedTab",
                  "shortNames": ["xtab"]},
        "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
            "type": "object",
            "description": "ExplainedTab runs a command on a schedule. Its description is long enough that "
                           "kubectl has to wrap it at eighty columns, twice over if need be.",
            "properties": {
                "spec": {"type": "object", "description": "The desired schedule.", "required": ["cronSpec"],
                         "properties": {
                             "cronSpec": {"type": "string", "description": "A cron expression, as cron(8) reads "
                                                                            "it: minute, hour, day of month, month "
                                                                            "and day of week."},
                             "image": {"type": "string"},
                             "mode": {"type": "string", "enum": ["Fast", "Slow", ""], "description": "How fast."},
                             "level": {"type": "string", "enum": ["a", "b", "c", "d", "e"]},
                             "replicas": {"type": "integer", "default": 1, "description": "How many at once."},
                             "tags": {"type": "array", "items": {"type": "string"}},
                             "extra": {"type": "object", "additionalProperties": {"type": "string"},
                                       "description": "Anything else."},
                             "ports": {"type": "array", "description": "The ports to open.", "items": {
                                 "type": "object", "required": ["port"], "description": "One port.",
                                 "properties": {"port": {"type": "integer", "description": "The port number."},
                                                "name": {"type": "string"}}}}}},
                "status": {"type": "object", "properties": {"phase": {"type": "string"}}}}}}}],
    },
}

#: A second custom resource sharing the short name ``xtab``: kubectl expands it to the first and
#: warns about the other (``Warning: short name "xtab" could also match lower priority resource ...``).
OTHER_GROUP = f"other.{GROUP}"
OTHER_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": f"explainedtabz.{OTHER_GROUP}"},
    "spec": {
        "group": OTHER_GROUP, "scope": "Cluster",
        "names": {"plural": "explainedtabz", "singular": "explainedtabzz", "kind": "ExplainedTabZ",
                  "shortNames": ["xtab"]},
        "versions": [{"name": "v2", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
            "type": "object", "x-kubernetes-preserve-unknown-fields": True,
            "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}}],
    },
}
SERVED = [(GROUP, "v1", "ExplainedTab"), (OTHER_GROUP, "v2", "ExplainedTabZ")]

V2 = ("-o", "plaintext-openapiv2")
#: The invocations that explain something (arguments after ``kubectl explain``).
GOOD: list[list[str]] = [
    ["pods"],
    ["po.spec.containers"],  # a short name; an array of objects
    ["deployment.spec.strategy"],  # a singular name
    ["deploy.spec.template.spec"],
    ["Service.spec.type"],  # a kind
    ["svc.spec.ports"],
    ["cronjobs.batch.spec.jobTemplate"],  # resource.group
    ["pods.spec.containers.resources.limits"],  # a map
    ["configmaps"],
    ["nodes.status.conditions"],
    ["xtab"],  # the custom resource, by short name
    ["xtab.spec"],  # a required field, enums, an array of objects, a map
    ["xtab.spec.mode"],  # a field's enum, "" among its values
    ["xtab.spec.ports"],
    [f"explainedtabs.{GROUP}.spec.ports.port"],
    ["explainedtab.spec.extra"],
    ["explainedtabz"],  # preserved unknown fields
    ["explainedtabz.spec", *V2],
    ["xtab.spec", "--recursive"],
    ["pods.spec.securityContext.seLinuxOptions", "--recursive"],
    ["deploy.spec.strategy", "--recursive"],
    ["hpa.spec", "--api-version=autoscaling/v1"],
    ["hpa", "--api-version", "autoscaling/v2"],
    ["deploy.spec.strategy", *V2],
    ["pods.spec.containers.ports", "--output=plaintext-openapiv2"],
    ["xtab.spec", *V2, "--recursive"],
    ["svc.spec.type", *V2],
    ["pods.metadata.name.deeper", *V2],  # the v2 explainer stops at a primitive, whatever follows
]
#: Bad input: kubectl's error and exit code 1.
BAD: list[list[str]] = [
    ["pods.spec.nope"],
    ["pods.spec.nope.deeper"],
    ["nosuchthing"],
    ["nosuchthing.spec"],
    [],
    ["pods", "nodes"],
    ["pods", "-o", "yaml"],
    ["pods", "--api-version=apps/v1"],
    ["pods", "--api-version=v9"],
    ["pods", "--api-version=a/b/c"],
    ["podlist"],
    ["pods.nope", *V2],
    ["pods", *V2, "--api-version=v9"],
]
CASES = GOOD + BAD
Key = tuple[str, tuple[str, ...]]


def _served(url: str) -> bool:
    """Whether the CRDs' kinds are in discovery and in the OpenAPI v3 and v2 documents."""
    with httpx.Client(base_url=url) as h:
        found = [h.get(f"/apis/{group}/{version}").status_code == 200 for group, version, _ in SERVED]
        v3 = h.get("/openapi/v3").json().get("paths") or {}
        v2 = h.get("/openapi/v2").json().get("definitions") or {}
    return all(found) and all(f"apis/{group}/{version}" in v3 and any(name.endswith(f".{kind}") for name in v2)
                              for group, version, kind in SERVED)


@pytest.fixture(scope="module")
def results(apiserver: APIServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[Key, Future[Result]]]:
    """The CRD made and served, then every invocation of every CLI submitted at once."""
    home = tmp_path_factory.mktemp("explain")
    kubeconfig = home / "kubeconfig"
    kubeconfig.write_text(render(apiserver.url))
    with httpx.Client(base_url=apiserver.url) as h:
        for crd in (CRD, OTHER_CRD):
            r = h.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd)
            assert r.status_code in (201, 409), r.text
    deadline = time.monotonic() + 30
    while not _served(apiserver.url):
        assert time.monotonic() < deadline, "the CRD is not served"
        time.sleep(0.2)
    env = {**os.environ, "KUBECONFIG": "/nonexistent", "HOME": str(home)}
    runs = Runs(4)
    out: dict[Key, Future[Result]] = {}
    try:
        for args in CASES:
            out[("minik8s", tuple(args))] = runs.minik8s(["--kubeconfig", str(kubeconfig), "explain", *args], env)
            for version in VERSIONS:
                path, _ = find(version)
                if path is not None:
                    cache = home / f"kubectl-cache-{version}"
                    out[(version, tuple(args))] = runs.official(
                        path, ["--kubeconfig", str(kubeconfig), "--cache-dir", str(cache), "explain", *args], env)
        yield out
    finally:
        runs.close()
        with httpx.Client(base_url=apiserver.url) as h:
            for crd in (CRD, OTHER_CRD):
                h.delete(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd['metadata']['name']}")


@pytest.mark.parametrize("version", VERSIONS)
def test_explain_matches_official(version: str, results: dict[Key, Future[Result]]) -> None:
    if find(version)[0] is None:
        pytest.skip(find(version)[1])
    differ = []
    for args in CASES:
        theirs, ours = tolerate([], version, results[(version, tuple(args))].result(),
                                results[("minik8s", tuple(args))].result())
        if (ours.code, ours.out, ours.err) != (theirs.code, theirs.out, theirs.err):
            differ.append(f"explain {' '.join(args)}\n  minik8s: {ours}\n  {version}: {theirs}")
    assert not differ, "\n\n".join(differ)


def test_explain_explains_or_fails_as_expected(results: dict[Key, Future[Result]]) -> None:
    """The good invocations print a page and exit 0, the bad ones fail with exit code 1 (so the
    comparison compares explanations, not the same failure twice)."""
    for args in GOOD:
        ours = results[("minik8s", tuple(args))].result()
        warning = ('Warning: short name "xtab" could also match lower priority resource '
                   f"explainedtabz.{OTHER_GROUP}\n" if args[0].startswith("xtab") else "")
        assert (ours.code, ours.err) == (0, warning), args
        assert "KIND:" in ours.out and "DESCRIPTION:" in ours.out, args
    for args in BAD:
        ours = results[("minik8s", tuple(args))].result()
        assert ours.code == 1 and ours.err, args
