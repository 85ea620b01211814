"""minik8s' kubectl against the official kubectl 1.32 (:mod:`tests.realkubectl`) for ``describe`` (pod,
node, namespace, service, configmap, secret, job, cronjob, deployment, replicaset, hpa, serviceaccount,
role, clusterrole), ``logs`` and ``exec``: the same
invocations, against the same apiserver and objects, must print the same (exit code, stdout and the
whole of stderr).

One apiserver (the session's) and one namespace for the module: two Deployments (one with an old and a
new ReplicaSet it controls, one with none), their ReplicaSets and pods, two HPAs (Resource metrics,
the only type minik8s serves; a behavior), two ServiceAccounts (pull, mountable and token secrets), a
Role and a ClusterRole, a two-container pod, one whose ``kubectl.kubernetes.io/default-container``
annotation names its second container, a one-container pod and a Job with a pod.  The pods are bound
to a Node whose kubelet is the stand-in :class:`tests.support.stream_kubelet.FakeKubelet` (every
container's log is ``line 1`` .. ``line 5``; exec prints ``ran CMD`` and ``to stderr``), so ``logs``
and ``exec`` reach a kubelet without containers.
No controller runs: the objects never change, and every case is submitted at once when the module
starts (:class:`~tests.support.kubectl_parity.Runs`).

Normalisation: both runs get ``TZ=UTC`` (describe prints CreationTimestamp in the local zone);
ages become ``<age>`` as in the ``get`` parity test (no case prints one today).  Nothing prints uids,
IPs or resourceVersions.  Where the official kubectl walks a Go map (``logs -l``: the pods' and
containers' requests, and their ``Defaulted container`` lines), the order is random, so those cases
compare stdout's and stderr's lines sorted.  Nothing else is rewritten but the differences listed in
:data:`tests.support.kubectl_parity.KNOWN_DIFFERENCES` named in :data:`DIFFERENCES`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from concurrent.futures import Future

import httpx
import pytest

from minik8s.client.kubeconfig import render
from tests.realkubectl import find
from tests.support.kubectl import Result
from tests.support.kubectl_parity import Runs, tolerate
from tests.support.processes import APIServer
from tests.support.stream_kubelet import FakeKubelet

NS = "dparity"
VERSION = "1.32"
AGE = re.compile(r"\b\d+(?:d\d*h?|h\d*m?|m\d*s?|s)\b")
TEMPLATE = {"metadata": {"labels": {"app": "front"}},
            "spec": {"containers": [{"name": "web", "image": "nginx", "ports": [{"containerPort": 80}],
                                     "env": [{"name": "MODE", "value": "prod"}]},
                                    {"name": "side", "image": "busybox", "command": ["sleep", "3600"]}]}}


def _post(h: httpx.Client, path: str, body: dict) -> dict:
    r = h.post(path, json=body)
    assert r.status_code == 201, r.text
    return r.json()


def _owner(obj: dict) -> dict:
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": obj["metadata"]["name"],
            "uid": obj["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}


def _pod(h: httpx.Client, node: str, name: str, containers: list[str], labels: dict | None = None,
         owner: dict | None = None, annotations: dict | None = None, running: bool = False) -> None:
    meta: dict = {"name": name, "labels": labels or {}, "annotations": annotations or {}}
    if owner:
        meta["ownerReferences"] = [owner]
    _post(h, f"/api/v1/namespaces/{NS}/pods",
          {"metadata": meta, "spec": {"containers": [{"name": c, "image": "busybox"} for c in containers]}})
    _post(h, f"/api/v1/namespaces/{NS}/pods/{name}/binding",
          {"metadata": {"name": name}, "target": {"kind": "Node", "name": node}})
    if running:
        pod = h.get(f"/api/v1/namespaces/{NS}/pods/{name}").json()
        pod["status"] = {**(pod.get("status") or {}), "phase": "Running"}
        r = h.put(f"/api/v1/namespaces/{NS}/pods/{name}/status", json=pod)
        assert r.status_code == 200, r.text


@pytest.fixture(scope="module")
def kubelet() -> Iterator[FakeKubelet]:
    """The stand-in kubelet the module's Node points at."""
    fake = FakeKubelet()
    yield fake
    fake.stop()


@pytest.fixture(scope="module")
def objects(apiserver: APIServer, kubelet: FakeKubelet) -> Iterator[None]:
    """The module's namespace, Node, Deployments, ReplicaSets, Job and pods (see the module's docstring)."""
    node = f"dparity-{os.urandom(3).hex()}"
    with httpx.Client(base_url=apiserver.url) as h:
        _post(h, "/api/v1/namespaces", {"metadata": {"name": NS}})
        created = _post(h, "/api/v1/nodes", {"metadata": {"name": node}})
        created["status"] = {"addresses": [{"type": "InternalIP", "address": "127.0.0.1"}],
                             "daemonEndpoints": {"kubeletEndpoint": {"Port": kubelet.port}}}
        assert h.put(f"/api/v1/nodes/{node}/status", json=created).status_code == 200
        front = _post(h, f"/apis/apps/v1/namespaces/{NS}/deployments", {
            "metadata": {"name": "front", "labels": {"tier": "web"}, "annotations": {"team": "a"}},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "front"}}, "template": TEMPLATE}})
        _post(h, f"/apis/apps/v1/namespaces/{NS}/deployments", {
            "metadata": {"name": "lone"},
            "spec": {"selector": {"matchLabels": {"app": "lone"}}, "minReadySeconds": 5,
                     "strategy": {"type": "Recreate"},
                     "template": {"metadata": {"labels": {"app": "lone"}},
                                  "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}})
        old_template = {"metadata": {"labels": {"app": "front", "pod-template-hash": "old"}},
                        "spec": {"containers": [{"name": "web", "image": "nginx:1.0"}]}}
        _post(h, f"/apis/apps/v1/namespaces/{NS}/replicasets", {
            "metadata": {"name": "front-old", "labels": {"app": "front", "pod-template-hash": "old"},
                         "ownerReferences": [_owner(front)]},
            "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "front", "pod-template-hash": "old"}},
                     "template": old_template}})
        new_template = {**TEMPLATE, "metadata": {"labels": {"app": "front", "pod-template-hash": "new"}}}
        new = _post(h, f"/apis/apps/v1/namespaces/{NS}/replicasets", {
            "metadata": {"name": "front-new", "labels": {"app": "front", "pod-template-hash": "new"},
                         "annotations": {"deployment.kubernetes.io/revision": "2"},
                         "ownerReferences": [_owner(front)]},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "front", "pod-template-hash": "new"}},
                     "template": new_template}})
        labels = {"app": "front", "pod-template-hash": "new"}
        _pod(h, node, "front-new-a", ["web", "side"], labels, _owner(new), running=True)
        _pod(h, node, "front-new-b", ["web", "side"], labels, _owner(new))
        _pod(h, node, "two", ["c1", "c2"])
        _pod(h, node, "anno", ["c1", "c2"], annotations={"kubectl.kubernetes.io/default-container": "c2"})
        _pod(h, node, "solo", ["only"])
        job = _post(h, f"/apis/batch/v1/namespaces/{NS}/jobs", {
            "metadata": {"name": "j"},
            "spec": {"manualSelector": True, "selector": {"matchLabels": {"job": "j"}},
                     "template": {"metadata": {"labels": {"job": "j"}},
                                  "spec": {"restartPolicy": "Never",
                                           "containers": [{"name": "work", "image": "busybox"}]}}}})
        _pod(h, node, "j-pod", ["work"], {"job": "j"}, _owner(job))
        _post(h, f"/api/v1/namespaces/{NS}/configmaps", {"metadata": {"name": "cm"}})
        _post(h, f"/api/v1/namespaces/{NS}/configmaps", {
            "metadata": {"name": "settings", "labels": {"app": "front"}},
            "data": {"multi": "a\nb\n"}, "binaryData": {"blob": "AAEC"}})
        _post(h, f"/api/v1/namespaces/{NS}/secrets", {
            "metadata": {"name": "creds"}, "type": "Opaque",
            "data": {"password": "c2VjcmV0"}})
        _post(h, f"/api/v1/namespaces/{NS}/services", {
            "metadata": {"name": "web", "labels": {"app": "front"}},
            "spec": {"selector": {"app": "front"},
                     "ports": [{"name": "http", "port": 80, "targetPort": 8080},
                               {"name": "metrics", "port": 9090, "protocol": "TCP"}]}})
        _post(h, f"/api/v1/namespaces/{NS}/services", {
            "metadata": {"name": "np"},
            "spec": {"type": "NodePort", "selector": {"app": "lone"}, "ports": [{"port": 443}]}})
        _post(h, f"/apis/batch/v1/namespaces/{NS}/cronjobs", {
            "metadata": {"name": "nightly", "labels": {"tier": "batch"}},
            "spec": {"schedule": "0 3 * * *", "concurrencyPolicy": "Forbid", "startingDeadlineSeconds": 30,
                     "jobTemplate": {"spec": {"backoffLimit": 2, "template": {"spec": {
                         "restartPolicy": "OnFailure",
                         "containers": [{"name": "backup", "image": "busybox", "args": ["run"]}]}}}}}})
        _post(h, f"/apis/autoscaling/v2/namespaces/{NS}/horizontalpodautoscalers", {
            "metadata": {"name": "front", "labels": {"tier": "web"}},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "front"},
                     "minReplicas": 1, "maxReplicas": 5, "metrics": [
                         {"type": "Resource", "resource": {"name": "cpu", "target": {
                             "type": "Utilization", "averageUtilization": 80}}},
                         {"type": "Resource", "resource": {"name": "memory", "target": {
                             "type": "AverageValue", "averageValue": "100Mi"}}}],
                     "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60, "policies": [
                         {"type": "Pods", "value": 1, "periodSeconds": 30},
                         {"type": "Percent", "value": 10, "periodSeconds": 60}], "selectPolicy": "Min"}}}})
        _post(h, f"/apis/autoscaling/v1/namespaces/{NS}/horizontalpodautoscalers", {
            "metadata": {"name": "plain"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "lone"},
                     "maxReplicas": 3}})
        sa = _post(h, f"/api/v1/namespaces/{NS}/serviceaccounts", {
            "metadata": {"name": "robot", "annotations": {"note": "x"}},
            "imagePullSecrets": [{"name": "pull-a"}, {"name": "pull-b"}],
            "secrets": [{"name": "mounted"}, {"name": "gone"}]})
        _post(h, f"/api/v1/namespaces/{NS}/secrets", {"metadata": {"name": "mounted"}})
        _post(h, f"/api/v1/namespaces/{NS}/secrets", {
            "metadata": {"name": "robot-token", "annotations": {
                "kubernetes.io/service-account.name": "robot",
                "kubernetes.io/service-account.uid": sa["metadata"]["uid"]}},
            "type": "kubernetes.io/service-account-token"})
        _post(h, f"/api/v1/namespaces/{NS}/serviceaccounts", {"metadata": {"name": "bare"}})
        rules = [{"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": ["get", "list"]},
                 {"apiGroups": [""], "resources": ["pods"], "verbs": ["watch", "get"]},
                 {"apiGroups": ["apps", "batch"], "resources": ["deployments", "jobs"], "verbs": ["*"]},
                 {"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["a", "b"], "verbs": ["update"]}]
        _post(h, f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NS}/roles",
              {"metadata": {"name": "reader", "labels": {"team": "a"}}, "rules": rules})
        _post(h, "/apis/rbac.authorization.k8s.io/v1/clusterroles", {
            "metadata": {"name": f"{NS}-urls"},
            "rules": [*rules, {"nonResourceURLs": ["/healthz", "/version"], "verbs": ["get"]}]})
    yield


DESCRIBE_CASES = [
    ["describe", "deployment", "front"],
    ["describe", "deploy"],
    ["describe", "rs"],
    ["describe", "replicaset", "front-new"],
    ["describe", "replicasets.apps/front-old"],
    ["describe", "deployment", "nope"],
    ["describe", "hpa"],
    ["describe", "horizontalpodautoscalers.v1.autoscaling", "plain"],
    ["describe", "sa", "robot"],
    ["describe", "serviceaccount", "bare"],
    ["describe", "role", "reader"],
    ["describe", "clusterrole", f"{NS}-urls"],
    ["describe", "pod", "front-new-a"],
    ["describe", "pods"],
    ["describe", "pod", "nope"],
    ["describe", "node"],
    ["describe", "namespace", NS],
    ["describe", "ns", "nope"],
    ["describe", "service"],
    ["describe", "svc", "web"],
    ["describe", "configmap"],
    ["describe", "cm", "settings"],
    ["describe", "secret", "creds"],
    ["describe", "secrets"],
    ["describe", "job", "j"],
    ["describe", "jobs"],
    ["describe", "cronjob", "nightly"],
    ["describe", "cj"],
]
LOGS_CASES = [
    ["logs", "two"],
    ["logs", "anno"],
    ["logs", "solo"],
    ["logs", "two", "-c", "c2"],
    ["logs", "two", "c2"],
    ["logs", "two", "-c", "nope"],
    ["logs", "nope"],
    ["logs", "two", "--since=10s"],
    ["logs", "two", "--since", "5m", "-c", "c1"],
    ["logs", "solo", "--since-time=2026-01-01T00:00:00Z"],
    ["logs", "solo", "--since=10s", "--since-time=2026-01-01T00:00:00Z"],
    ["logs", "solo", "--since=-5s"],
    ["logs", "solo", "--since=5"],
    ["logs", "solo", "--tail", "2"],
    ["logs", "deploy/front"],
    ["logs", "deployment/lone", "--pod-running-timeout=1s"],
    ["logs", "rs/front-new", "-c", "side"],
    ["logs", "job/j"],
    ["logs", "cm/cm"],
    ["logs", "solo", "--all-containers"],
    ["logs", "-l", "app=nope"],
    ["logs"],
    ["logs", "-l", "job=j", "-f", "--max-log-requests=0"],
]
#: Cases whose official output comes in Go map order (compared as sorted lines).
UNORDERED_CASES = [
    ["logs", "-l", "app=front"],
    ["logs", "-l", "app=front", "--prefix"],
    ["logs", "-l", "app=front", "--all-containers", "--prefix", "--tail=1"],
    ["logs", "two", "--all-containers", "--prefix"],
    ["logs", "-l", "app=front", "-f", "--max-log-requests=3"],
    ["logs", "-l", "app=front", "-f", "--all-containers"],
]
EXEC_CASES = [
    ["exec", "two", "--", "ls"],
    ["exec", "anno", "--", "ls", "-l"],
    ["exec", "solo", "--", "ls"],
    ["exec", "two", "-c", "nope", "--", "ls"],
    ["exec", "deploy/front", "--", "ls"],
    ["exec", "job/j", "--", "ls"],
    ["exec", "cm/cm", "--", "ls"],
    ["exec", "nope", "--", "ls"],
]
CASES = DESCRIBE_CASES + LOGS_CASES + UNORDERED_CASES + EXEC_CASES

#: The listed differences (:data:`tests.support.kubectl_parity.KNOWN_DIFFERENCES`) these cases meet.
DIFFERENCES: tuple[str, ...] = ()


@pytest.fixture(scope="module")
def results(objects: None, apiserver: APIServer, runs: Runs, tmp_path_factory: pytest.TempPathFactory,
            ) -> dict[tuple[str, tuple[str, ...]], Future[Result]]:
    """Every case submitted at once, for minik8s and the official kubectl 1.32."""
    path, why = find(VERSION)
    if path is None:
        pytest.skip(why)
    d = tmp_path_factory.mktemp("dparity")
    (d / "kubeconfig").write_text(render(apiserver.url).replace("namespace: default", f"namespace: {NS}"))
    env = {**os.environ, "HOME": str(d), "KUBECONFIG": str(d / "kubeconfig"), "TZ": "UTC", "COLUMNS": "200"}
    out: dict[tuple[str, tuple[str, ...]], Future[Result]] = {}
    for args in CASES:
        out[("minik8s", tuple(args))] = runs.minik8s(args, env)
        out[(VERSION, tuple(args))] = runs.official(path, ["--cache-dir", str(d / "cache"), *args], env)
    return out


def _normalise(res: Result, unordered: bool) -> Result:
    out, err = AGE.sub("<age>", res.out), AGE.sub("<age>", res.err)
    if unordered:
        out, err = "".join(sorted(out.splitlines(True))), "".join(sorted(err.splitlines(True)))
    return Result(res.code, out, err)


def _mismatches(cases: list[list[str]], results: dict[tuple[str, tuple[str, ...]], Future[Result]],
                unordered: bool = False) -> list[str]:
    failures = []
    for args in cases:
        official = _normalise(results[(VERSION, tuple(args))].result(), unordered)
        ours = _normalise(results[("minik8s", tuple(args))].result(), unordered)
        official, ours = tolerate(DIFFERENCES, VERSION, official, ours)
        if (official.code, official.out, official.err) != (ours.code, ours.out, ours.err):
            failures.append(f"{args}\n--- official {official.code}\n{official.out}{official.err}"
                            f"--- minik8s {ours.code}\n{ours.out}{ours.err}")
    return failures


def test_describe_matches_official(results: dict) -> None:
    failures = _mismatches(DESCRIBE_CASES, results)
    assert not failures, "\n\n".join(failures)


def test_logs_match_official(results: dict, kubelet: FakeKubelet) -> None:
    failures = _mismatches(LOGS_CASES, results) + _mismatches(UNORDERED_CASES, results, unordered=True)
    assert not failures, "\n\n".join(failures)
    # both sent --since as sinceSeconds (the stand-in kubelet ignores it)
    assert sum("/two/c1?" in p and "sinceSeconds=300" in p for p in kubelet.requests) == 2, kubelet.requests


def test_exec_matches_official(results: dict) -> None:
    failures = _mismatches(EXEC_CASES, results)
    assert not failures, "\n\n".join(failures)
