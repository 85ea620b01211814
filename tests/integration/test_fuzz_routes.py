"""Property-based fuzzing of every resource route of the real apiserver: no input answers 5xx.

Hypothesis draws a kind (every kind of the registry, Kubernetes' and minik8s'), a verb (list,
get, create, update, the three patch types, delete, deletecollection in the test's namespace),
query parameters and a body — arbitrary JSON, object-shaped JSON with hostile metadata and
numbers, or raw bytes under a random media type — for a bounded number of examples
(``FUZZ_EXAMPLES``, 400 by default: about 15 s; a fixed seed unless ``FUZZ_RANDOM=1``).
Every answer must be below 500 (but kube-apiserver's own 500 for a ComponentStatus it does not probe)
and, when it is an error, a ``kind: Status``.  Cluster-scoped
objects only get the names ``fz-a`` and ``fz-b`` and are deleted afterwards; deletecollection
runs only in the test's namespace.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from minik8s.api.registry import default_registry
from minik8s.api.resourcetypes import ResourceType
from tests.support.processes import APIServer

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "400"))
KINDS = [rt for rt in default_registry().types]
NAMES = ["fz-a", "fz-b"]
HOSTILE_NAMES = ["", "FZ_bad", "fz-" + "a" * 300, "fz\u00e9", "fz\ud800", "../fz", "fz%2F", "fz a"]

scalars = (st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12)
           | st.sampled_from(["", "1", "-1", "100m", "1Gi", "TCP", "Always", "x" * 70, "a=b", "\ud800"]))
json_values = st.recursive(scalars, lambda children: st.lists(children, max_size=4)
                           | st.dictionaries(st.text(max_size=8), children, max_size=4), max_leaves=16)
fields = st.sampled_from(["spec", "status", "data", "stringData", "binaryData", "subsets", "type", "rules",
                          "involvedObject", "reason", "immutable", "secrets", "roleRef", "x"])


def metadata(names: list[str]) -> st.SearchStrategy[Any]:
    valid = st.fixed_dictionaries({"name": st.sampled_from(names)},
                                  optional={"labels": st.just({"app": "fz"}), "annotations": st.just({"a": "b"})})
    hostile = st.fixed_dictionaries(
        {"name": st.sampled_from(names + HOSTILE_NAMES)},
        optional={"labels": json_values, "annotations": json_values, "finalizers": json_values,
                  "ownerReferences": json_values, "resourceVersion": json_values, "uid": json_values,
                  "generateName": json_values, "namespace": json_values, "deletionTimestamp": json_values})
    return st.one_of(valid, valid, hostile)


def objects(rt: ResourceType, names: list[str]) -> st.SearchStrategy[Any]:
    shaped = st.fixed_dictionaries(
        {"apiVersion": st.sampled_from([rt.api_version] * 8 + ["v1", "bogus/v9"]),
         "kind": st.sampled_from([rt.kind] * 8 + ["Pod", "Nope"]),
         "metadata": st.one_of(*[metadata(names)] * 8, json_values)},
        optional={"spec": json_values, "status": json_values, "data": json_values})
    bare = st.fixed_dictionaries({"apiVersion": st.just(rt.api_version), "kind": st.just(rt.kind),
                                  "metadata": metadata(names)})
    extra = st.dictionaries(fields, json_values, max_size=2)
    return st.one_of(json_values, bare, shaped, shaped, st.builds(lambda a, b: {**b, **a}, shaped, extra))


PATCH_TYPES = ["application/merge-patch+json", "application/strategic-merge-patch+json",
               "application/json-patch+json", "application/apply-patch+yaml"]
MEDIA_TYPES = ["application/json", "application/yaml", "text/plain", "application/vnd.kubernetes.protobuf",
               "application/x-www-form-urlencoded", "", "application/json; charset=utf-8"]
json_patch_ops = st.lists(st.fixed_dictionaries(
    {"op": st.sampled_from(["add", "remove", "replace", "move", "copy", "test", "bogus"]),
     "path": st.sampled_from(["/metadata", "/metadata/name", "/metadata/uid", "/metadata/labels/a", "/spec",
                              "/spec/replicas", "/status", "/", "", "/x/y/z", "/metadata/annotations"])},
    optional={"value": json_values, "from": st.sampled_from(["/metadata", "/spec", "/nope"])}), max_size=3)
query = st.dictionaries(
    st.sampled_from(["labelSelector", "fieldSelector", "limit", "continue", "resourceVersion",
                     "resourceVersionMatch", "dryRun", "fieldValidation", "gracePeriodSeconds",
                     "propagationPolicy", "fieldManager", "pretty"]),
    st.sampled_from(["", "a=b", "a in (b", "metadata.name=fz-a", "spec.bogus=1", "1", "-1", "99999999999",
                     "x" * 300, "Exact", "NotOlderThan", "Bogus", "All", "Strict", "Warn", "Orphan", "\u00e9"]),
    max_size=3)


@st.composite
def requests(draw: st.DrawFn, namespace: str) -> tuple[str, str, dict[str, str], bytes | None, str]:
    rt: ResourceType = draw(st.sampled_from(KINDS))
    prefix = f"/api/{rt.version}" if not rt.group else f"/apis/{rt.group}/{rt.version}"
    collection = f"{prefix}/namespaces/{namespace}/{rt.plural}" if rt.namespaced else f"{prefix}/{rt.plural}"
    names = NAMES if not rt.namespaced else NAMES + ["fz-c"]
    name = draw(st.sampled_from(names))
    verbs = ["list", "get", "create", "update", "patch", "delete"] + (["deletecollection"] if rt.namespaced else [])
    verb = draw(st.sampled_from(verbs))
    params = draw(st.one_of(st.just({}), st.just({}), query))
    method, path, body, ctype = "GET", collection, None, "application/json"
    if verb == "get":
        path = f"{collection}/{name}"
    elif verb in ("create", "update"):
        method, path = ("POST", collection) if verb == "create" else ("PUT", f"{collection}/{name}")
        body, ctype = draw(_bodies(objects(rt, names)))
    elif verb == "patch":
        method, path = "PATCH", f"{collection}/{name}"
        ctype = draw(st.sampled_from(PATCH_TYPES))
        value = draw(json_patch_ops if ctype.startswith("application/json-patch") else objects(rt, names))
        body = json.dumps(value).encode()
    elif verb in ("delete", "deletecollection"):
        method = "DELETE"
        path = f"{collection}/{name}" if verb == "delete" else collection
        body = json.dumps(draw(json_values | st.fixed_dictionaries(
            {}, optional={"gracePeriodSeconds": json_values, "propagationPolicy": json_values,
                          "preconditions": json_values, "dryRun": json_values}))).encode()
    return method, path, params, body, ctype


def _bodies(values: st.SearchStrategy[Any]) -> st.SearchStrategy[tuple[bytes, str]]:
    as_json = values.map(lambda v: (json.dumps(v).encode(), "application/json"))
    raw = st.tuples(st.binary(max_size=64), st.sampled_from(MEDIA_TYPES))
    return st.one_of(as_json, as_json, raw, values.map(lambda v: (json.dumps(v).encode(), "application/yaml")))


@pytest.fixture(scope="module")
def fuzz_namespace(apiserver: APIServer) -> Iterator[str]:
    name = f"fz-{os.urandom(3).hex()}"
    with httpx.Client(base_url=apiserver.url, timeout=30) as http:
        http.post("/api/v1/namespaces", json={"metadata": {"name": name}}).raise_for_status()
        for kind in ("configmaps", "secrets", "endpoints"):  # objects for updates, patches and deletes to find
            for obj_name in [*NAMES, "fz-c"]:
                http.post(f"/api/v1/namespaces/{name}/{kind}", json={"metadata": {"name": obj_name}})
        yield name
        http.delete(f"/api/v1/namespaces/{name}")
        for rt in KINDS:  # the cluster-scoped objects the fuzzer may have created
            if not rt.namespaced:
                prefix = f"/api/{rt.version}" if not rt.group else f"/apis/{rt.group}/{rt.version}"
                for obj_name in NAMES:
                    http.request("DELETE", f"{prefix}/{rt.plural}/{obj_name}",
                                 json={"gracePeriodSeconds": 0, "propagationPolicy": "Background"})


def test_no_route_answers_5xx(apiserver: APIServer, fuzz_namespace: str) -> None:
    http = httpx.Client(base_url=apiserver.url, timeout=30)
    answered: Counter[tuple[str, int]] = Counter()
    cms = f"/api/v1/namespaces/{fuzz_namespace}/configmaps"

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=os.environ.get("FUZZ_RANDOM") is None,
              database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.function_scoped_fixture])
    @given(requests(fuzz_namespace))
    @example(("POST", cms, {}, b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fz-d"}}',
              "application/json"))  # the success paths are always among the examples
    @example(("PATCH", f"{cms}/fz-d", {}, b'{"data":{"a":"b"}}', "application/merge-patch+json"))
    def check(request: tuple[str, str, dict[str, str], bytes | None, str]) -> None:
        method, path, params, body, ctype = request
        headers = {"content-type": ctype} if ctype else {}
        r = http.request(method, path, params=params, content=body, headers=headers)
        answered[(method, r.status_code)] += 1
        if r.status_code == 500 and "/componentstatuses/" in path and method == "GET":
            # kube-apiserver's own answer for a component it does not probe (an error, not a NotFound)
            assert r.json()["message"].startswith("Component not found: "), r.text[:300]
            return
        assert r.status_code < 500, (method, path, params, body[:300] if body else None, ctype,
                                     r.status_code, r.text[:500])
        if r.status_code >= 400:
            assert r.json()["kind"] == "Status", r.text[:300]

    try:
        check()
    finally:
        http.close()
    # the fuzzer reached the handlers' success paths too, not only the refusals
    assert answered[("POST", 201)] and answered[("PATCH", 200)] + answered[("PUT", 200)], answered
