"""Ephemeral containers end to end: the ``pods/ephemeralcontainers`` subresource and its validation
(through HTTP, with Kubernetes' messages), a real kubelet starting them in a running pod (the pod's
network; ``targetContainerName``'s processes), their ``ephemeralContainerStatuses``, and
``kubectl debug`` by the official kubectls (v1.32 and v1.37, see :mod:`tests.realkubectl`) and by
minik8s' own. One kubelet, namespace and app pod serve the module; each test adds its own
ephemeral containers (they cannot be removed) or its own pods."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from minik8s.client.kubeconfig import render
from tests.realkubectl import CANDIDATES, RealKubectl, find
from tests.support.kubectl import Result
from tests.support.kubectl_parity import tolerate
from tests.support.kubelet import BUSYBOX, KubeletProcess, running_kubelet
from tests.support.processes import APIServer
from tests.support.waiting import wait_for_sync

pytestmark = pytest.mark.docker

VERSIONS = sorted(CANDIDATES)
PAGE = "hello from the app container"
SMP = {"Content-Type": "application/strategic-merge-patch+json"}


@dataclass
class Env:
    apiserver: APIServer
    kubelet: KubeletProcess
    namespace: str
    kubeconfig: Path
    http: httpx.Client

    def path(self, pod: str, sub: str = "") -> str:
        return f"/api/v1/namespaces/{self.namespace}/pods/{pod}" + (f"/{sub}" if sub else "")

    def pod(self, name: str) -> dict[str, Any]:
        r = self.http.get(self.path(name))
        assert r.status_code == 200, r.text
        return r.json()  # type: ignore[no-any-return]

    def make_pod(self, name: str, command: str = "exec sleep 3600") -> None:
        """A running pod: container ``c`` serving PAGE on :8080 (busybox httpd) unless ``command``."""
        body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                "spec": {"nodeName": self.kubelet.node, "terminationGracePeriodSeconds": 1,
                         "containers": [{"name": "c", "image": BUSYBOX, "command": ["sh", "-c", command]}]}}
        r = self.http.post(f"/api/v1/namespaces/{self.namespace}/pods", json=body)
        assert r.status_code == 201, r.text
        wait_for_sync(lambda: (self.pod(name).get("status") or {}).get("phase") == "Running", 60,
                      what=f"pod {name} Running")

    def add_ephemeral(self, pod: str, container: dict[str, Any]) -> httpx.Response:
        """A strategic merge patch of the subresource, as kubectl debug sends it."""
        patch = {"spec": {"ephemeralContainers": [container]}}
        return self.http.patch(self.path(pod, "ephemeralcontainers"), json=patch, headers=SMP)

    def ephemeral_status(self, pod: str, name: str) -> dict[str, Any]:
        statuses = (self.pod(pod).get("status") or {}).get("ephemeralContainerStatuses") or []
        return next((s for s in statuses if s["name"] == name), {})

    def log(self, pod: str, container: str) -> str:
        r = self.http.get(self.path(pod, "log"), params={"container": container})
        return r.text if r.status_code == 200 else ""


APP = f"mkdir -p /www && echo '{PAGE}' > /www/index.html && exec httpd -f -p 8080 -h /www"


@pytest.fixture(scope="module")
def env(apiserver: APIServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    workdir = tmp_path_factory.mktemp("debug")
    kubeconfig = workdir / "kubeconfig"
    kubeconfig.write_text(render(apiserver.url))
    namespace = f"t-{os.urandom(4).hex()}"
    http = httpx.Client(base_url=apiserver.url, timeout=10)
    assert http.post("/api/v1/namespaces", json={"metadata": {"name": namespace}}).status_code == 201
    try:
        with running_kubelet(apiserver, workdir) as kubelet:
            e = Env(apiserver, kubelet, namespace, kubeconfig, http)
            e.make_pod("app", APP)
            yield e
            http.delete(f"/api/v1/namespaces/{namespace}/pods", params={"gracePeriodSeconds": "0"})
    finally:
        http.delete(f"/api/v1/namespaces/{namespace}")
        http.close()


# ---------------------------------------------------------------------------- the subresource
def _invalid(r: httpx.Response) -> str:
    assert r.status_code == 422, r.text
    body = r.json()
    assert body["reason"] == "Invalid" and body["details"]["kind"] == "Pod"
    return str(body["message"])


def test_create_with_ephemeral_containers_is_refused(env: Env) -> None:
    body = {"metadata": {"name": "born-with-one"},
            "spec": {"containers": [{"name": "c", "image": BUSYBOX}],
                     "ephemeralContainers": [{"name": "d", "image": BUSYBOX}]}}
    r = env.http.post(f"/api/v1/namespaces/{env.namespace}/pods", json=body)
    assert _invalid(r) == 'Pod "born-with-one" is invalid: spec.ephemeralContainers: Forbidden: cannot be set on create'


def test_plain_update_cannot_add_one(env: Env) -> None:
    pod = env.pod("app")
    pod["spec"]["ephemeralContainers"] = [{"name": "sneaky", "image": BUSYBOX}]
    msg = _invalid(env.http.put(env.path("app"), json=pod))
    assert msg.startswith('Pod "app" is invalid: spec: Forbidden: pod updates may not change fields other than ')
    r = env.http.patch(env.path("app"), json={"spec": {"ephemeralContainers": [{"name": "s", "image": BUSYBOX}]}},
                       headers=SMP)
    assert "pod updates may not change fields other than" in _invalid(r)


def test_subresource_get_and_discovery(env: Env) -> None:
    r = env.http.get(env.path("app", "ephemeralcontainers"))
    assert r.status_code == 200 and r.json()["kind"] == "Pod" and r.json()["metadata"]["name"] == "app"
    resources = {x["name"]: x for x in env.http.get("/api/v1").json()["resources"]}
    assert resources["pods/ephemeralcontainers"] == {"name": "pods/ephemeralcontainers", "singularName": "",
                                                     "namespaced": True, "kind": "Pod",
                                                     "verbs": ["get", "patch", "update"]}


def test_missing_pod_is_a_404_with_details(env: Env) -> None:
    for r in (env.http.get(env.path("nope", "ephemeralcontainers")),
              env.add_ephemeral("nope", {"name": "d", "image": BUSYBOX})):
        assert r.status_code == 404
        assert r.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                            "message": 'pods "nope" not found', "reason": "NotFound",
                            "details": {"name": "nope", "kind": "pods"}, "code": 404}
    # a path the server does not serve: details {}, as kube-apiserver's
    r = env.http.get(env.path("app", "nosuchsub"))
    assert r.status_code == 404 and r.json()["details"] == {}


def test_forbidden_fields_and_targets(env: Env) -> None:
    bad = {"name": "bad", "image": BUSYBOX, "ports": [{"containerPort": 80}],
           "resources": {"limits": {"cpu": "1"}}, "lifecycle": {"postStart": {"exec": {"command": ["true"]}}},
           "readinessProbe": {"exec": {"command": ["true"]}}, "targetContainerName": "missing"}
    msg = _invalid(env.add_ephemeral("app", bad))
    for part in ("spec.ephemeralContainers[0].targetContainerName: Not found: \"missing\"",
                 "spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container",
                 "spec.ephemeralContainers[0].resources: Forbidden: cannot be set for an Ephemeral Container",
                 "spec.ephemeralContainers[0].readinessProbe: Forbidden: cannot be set for an Ephemeral Container",
                 "spec.ephemeralContainers[0].lifecycle: Forbidden: cannot be set for an Ephemeral Container"):
        assert part in msg, msg
    msg = _invalid(env.add_ephemeral("app", {"name": "c", "image": BUSYBOX}))
    assert msg == 'Pod "app" is invalid: spec.ephemeralContainers[0].name: Duplicate value: "c"'
    assert "ephemeralContainers" not in env.pod("app")["spec"]


def test_existing_ones_cannot_be_removed_or_changed(env: Env) -> None:
    env.make_pod("keeper")
    r = env.add_ephemeral("keeper", {"name": "first", "image": BUSYBOX, "command": ["sleep", "3600"]})
    assert r.status_code == 200, r.text
    ec = r.json()["spec"]["ephemeralContainers"]
    assert ec == [{"name": "first", "image": BUSYBOX, "command": ["sleep", "3600"], "imagePullPolicy": "IfNotPresent",
                   "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}]
    # the kubelet writes the pod's status meanwhile: the PUTs below carry no resourceVersion (an
    # unconditional update, as pods allow), so that what they meet is validation, not a 409
    pod = _unconditional(env.pod("keeper"))
    pod["spec"]["ephemeralContainers"] = []
    msg = _invalid(env.http.put(env.path("keeper", "ephemeralcontainers"), json=pod))
    assert msg == ('Pod "keeper" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral containers '
                   '"first" may not be removed\n')
    pod["spec"]["ephemeralContainers"] = [dict(ec[0], image="minik8s/python")]
    msg = _invalid(env.http.put(env.path("keeper", "ephemeralcontainers"), json=pod))
    assert 'existing ephemeral containers "first" may not be changed\n' in msg
    # a PUT changes only spec.ephemeralContainers: the rest of the pod, its labels included, stays
    pod = _unconditional(env.pod("keeper"))
    pod["metadata"].setdefault("labels", {})["x"] = "y"
    pod["spec"]["containers"][0]["image"] = "minik8s/python"
    pod["spec"]["ephemeralContainers"].append({"name": "second", "image": BUSYBOX, "command": ["true"]})
    r = env.http.put(env.path("keeper", "ephemeralcontainers"), json=pod)
    assert r.status_code == 200, r.text
    out = r.json()
    assert [c["name"] for c in out["spec"]["ephemeralContainers"]] == ["first", "second"]
    assert out["spec"]["containers"][0]["image"] == BUSYBOX and "x" not in (out["metadata"].get("labels") or {})
    # a plain update that keeps them as they are is allowed
    pod = _unconditional(env.pod("keeper"))
    pod["metadata"].setdefault("labels", {})["x"] = "y"
    assert env.http.put(env.path("keeper"), json=pod).status_code == 200


def _unconditional(pod: dict) -> dict:
    """``pod`` without its resourceVersion: a PUT of it is not refused for a status written since."""
    pod["metadata"].pop("resourceVersion", None)
    return pod


def test_pod_security_admits_the_subresource(env: Env) -> None:
    ns = f"{env.namespace}-psa"
    labels = {"pod-security.kubernetes.io/enforce": "baseline"}
    assert env.http.post("/api/v1/namespaces", json={"metadata": {"name": ns, "labels": labels}}).status_code == 201
    try:
        body = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": BUSYBOX}]}}
        assert env.http.post(f"/api/v1/namespaces/{ns}/pods", json=body).status_code == 201
        ec = {"name": "root", "image": BUSYBOX, "securityContext": {"privileged": True}}
        r = env.http.patch(f"/api/v1/namespaces/{ns}/pods/p/ephemeralcontainers",
                           json={"spec": {"ephemeralContainers": [ec]}}, headers=SMP)
        assert r.status_code == 403 and 'violates PodSecurity "baseline:latest"' in r.json()["message"], r.text
        ec = {"name": "plain", "image": BUSYBOX}
        r = env.http.patch(f"/api/v1/namespaces/{ns}/pods/p/ephemeralcontainers",
                           json={"spec": {"ephemeralContainers": [ec]}}, headers=SMP)
        assert r.status_code == 200, r.text
    finally:
        env.http.delete(f"/api/v1/namespaces/{ns}")


def test_pod_templates_refuse_them(env: Env) -> None:
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs"},
          "spec": {"replicas": 0, "selector": {"matchLabels": {"a": "b"}},
                   "template": {"metadata": {"labels": {"a": "b"}},
                                "spec": {"containers": [{"name": "c", "image": BUSYBOX}],
                                         "ephemeralContainers": [{"name": "d", "image": BUSYBOX}]}}}}
    r = env.http.post(f"/apis/apps/v1/namespaces/{env.namespace}/replicasets", json=rs)
    assert r.status_code == 422
    assert r.json()["message"] == ('ReplicaSet.apps "rs" is invalid: spec.template.spec.ephemeralContainers: '
                                   "Forbidden: ephemeral containers not allowed in pod template")


# ---------------------------------------------------------------------------- the kubelet
def _terminated(env: Env, pod: str, name: str) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        state = env.ephemeral_status(pod, name).get("state") or {}
        return state.get("terminated")
    return wait_for_sync(done, 60, what=f"ephemeral container {name} terminated")  # type: ignore[no-any-return]


def test_ephemeral_container_joins_the_pod_network(env: Env) -> None:
    r = env.add_ephemeral("app", {"name": "net", "image": BUSYBOX, "command": ["wget", "-qO-", "localhost:8080"]})
    assert r.status_code == 200, r.text
    term = _terminated(env, "app", "net")
    assert term["exitCode"] == 0 and term["reason"] == "Completed"
    assert env.log("app", "net") == PAGE + "\n"
    st = env.ephemeral_status("app", "net")
    assert st["ready"] is False and st["restartCount"] == 0 and st["containerID"].startswith("docker://")
    assert st["image"] == BUSYBOX
    # never restarted: the same container stays terminated, the app container untouched
    first = st["containerID"]
    env.http.patch(env.path("app"), json={"metadata": {"labels": {"resync": "1"}}}, headers=SMP)
    wait_for_sync(lambda: env.pod("app")["metadata"].get("labels", {}).get("resync") == "1", 10, what="label")
    assert env.ephemeral_status("app", "net")["containerID"] == first
    assert env.pod("app")["status"]["phase"] == "Running"


def test_target_container_processes_and_running_state(env: Env) -> None:
    r = env.add_ephemeral("app", {"name": "ps", "image": BUSYBOX, "targetContainerName": "c", "command": ["ps"]})
    assert r.status_code == 200, r.text
    assert _terminated(env, "app", "ps")["exitCode"] == 0
    assert "httpd -f -p 8080" in env.log("app", "ps")
    # without a target: its own PID namespace, where the app is not seen
    env.add_ephemeral("app", {"name": "ps-alone", "image": BUSYBOX, "command": ["ps"]})
    _terminated(env, "app", "ps-alone")
    assert "httpd" not in env.log("app", "ps-alone")
    env.add_ephemeral("app", {"name": "sleeper", "image": BUSYBOX, "command": ["sleep", "3600"]})

    def running() -> bool:
        return "running" in (env.ephemeral_status("app", "sleeper").get("state") or {})
    wait_for_sync(running, 60, what="sleeper running")
    st = env.ephemeral_status("app", "sleeper")
    assert st["started"] is True and st["ready"] is False


# ---------------------------------------------------------------------------- kubectl debug
class MineKubectl(RealKubectl):
    """minik8s' own kubectl, run as :class:`RealKubectl` runs an official one."""

    def argv(self, args: tuple[str, ...], ns: bool) -> list[str]:
        cmd = [sys.executable, "-m", "minik8s.kubectl", "--kubeconfig", str(self.kubeconfig)]
        return cmd + (["-n", self.namespace] if ns else []) + list(args)


def _kubectl(version: str, env: Env) -> RealKubectl:
    if version == "minik8s":
        return MineKubectl(Path(sys.executable), "minik8s", env.kubeconfig, env.namespace)
    path, why = find(version)
    if path is None:
        pytest.skip(why)
    return RealKubectl(path, version, env.kubeconfig, env.namespace)


@pytest.fixture(params=[*VERSIONS, "minik8s"], ids=lambda v: f"kubectl-{v}")
def any_kubectl(request: pytest.FixtureRequest, env: Env) -> RealKubectl:
    """Each official kubectl and minik8s' own."""
    return _kubectl(request.param, env)


NAME = re.compile(r"debugger-[bcdfghjklmnpqrstvwxz2456789]{5}")
TARGETING = ('Targeting container "c". If you don\'t see processes from this container it may be because the '
             "container runtime doesn't support this feature.\n")
LEGACY = ('--profile=legacy is deprecated and will be removed in the future. It is recommended to explicitly '
          'specify a profile, for example "--profile=general".\n')


def _names(text: str) -> list[str]:
    return NAME.findall(text)


def _compare(version: str, official: Result, ours: Result) -> None:
    """Byte for byte, but the random container names and the listed differences."""
    official, ours = tolerate(["1.37-debug-default-profile", "1.37-attach-recorded-notice"], version, official, ours)
    assert (NAME.sub("debugger-XXXXX", ours.out), NAME.sub("debugger-XXXXX", ours.err), ours.code) == \
        (NAME.sub("debugger-XXXXX", official.out), NAME.sub("debugger-XXXXX", official.err), official.code)


@pytest.fixture(params=VERSIONS, ids=lambda v: f"kubectl-{v}")
def official(request: pytest.FixtureRequest, env: Env) -> RealKubectl:
    return _kubectl(request.param, env)


def test_debug_target_ps(official: RealKubectl, env: Env) -> None:
    mine = _kubectl("minik8s", env)
    results = []
    for kubectl in (official, mine):
        res = kubectl("debug", "app", f"--image={BUSYBOX}", "--target=c", "--", "ps")
        assert res.code == 0, res.err
        (name,) = _names(res.out)
        assert res.out == TARGETING + f"Defaulting debug container name to {name}.\n"
        assert res.err == ("" if kubectl.version == "1.37" else LEGACY)
        assert _terminated(env, "app", name)["exitCode"] == 0
        assert "httpd -f -p 8080" in env.log("app", name)
        ec = next(c for c in env.pod("app")["spec"]["ephemeralContainers"] if c["name"] == name)
        assert ec["targetContainerName"] == "c" and ec["command"] == ["ps"] and ec["image"] == BUSYBOX
        results.append(res)
    _compare(official.version, *results)


def test_debug_interactive_with_piped_input(official: RealKubectl, env: Env) -> None:
    mine = _kubectl("minik8s", env)
    results = []
    for kubectl in (official, mine):
        name = f"in-{kubectl.version.replace('.', '')}-{official.version.replace('.', '')}"
        res = kubectl("debug", "app", "-i", f"--image={BUSYBOX}", "-c", name, "--",
                      "sh", "-c", "read x; echo got $x; wget -qO- localhost:8080", stdin="hello\n")
        assert res.code == 0, res.err
        assert res.out == f"got hello\n{PAGE}\n"
        results.append(res)
        assert (env.ephemeral_status("app", name).get("state") or {}).get("terminated", {}).get("exitCode") == 0 \
            or _terminated(env, "app", name)["exitCode"] == 0
    _compare(official.version, *results)


def test_debug_errors(official: RealKubectl, env: Env) -> None:
    mine = _kubectl("minik8s", env)
    for argv in (("debug", "app"), ("debug", "app", f"--image={BUSYBOX}", "-t"),
                 ("debug", "app", f"--image={BUSYBOX}", "--replace"),
                 ("debug", "nope", f"--image={BUSYBOX}", "--profile=general")):
        _compare(official.version, official(*argv), mine(*argv))



def test_debug_copy_to(official: RealKubectl, env: Env) -> None:
    mine = _kubectl("minik8s", env)
    copies = []
    for kubectl in (official, mine):
        copy = f"copy-{kubectl.version.replace('.', '')}-{official.version.replace('.', '')}"
        res = kubectl("debug", "app", f"--copy-to={copy}", f"--image={BUSYBOX}", "--same-node", "-c", "dbg",
                      "--profile=general", "--set-image=c=minik8s/busybox", "--",
                      "sh", "-c", "wget -qO- localhost:8080; ps; sleep 3600")
        copies.append((copy, res))
    _compare(official.version, copies[0][1], copies[1][1])
    specs = []
    for copy, _ in copies:
        pod = env.pod(copy)
        spec = pod["spec"]
        assert spec["nodeName"] == env.kubelet.node and "ephemeralContainers" not in spec
        assert spec["shareProcessNamespace"] is True
        c, dbg = spec["containers"]
        assert (c["name"], c["image"], dbg["name"], dbg["image"]) == ("c", "minik8s/busybox", "dbg", BUSYBOX)
        assert dbg["securityContext"] == {"capabilities": {"add": ["SYS_PTRACE"]}}
        specs.append(spec["containers"])
    assert specs[0] == specs[1]
    # the copy shares one PID namespace: the debug container sees the app's httpd
    for copy, _ in copies:
        def saw(pod: str = copy) -> bool:
            log = env.log(pod, "dbg")
            return PAGE in log and "httpd -f -p 8080" in log
        wait_for_sync(saw, 60, what=f"{copy}'s debug container")
        env.http.delete(env.path(copy), params={"gracePeriodSeconds": "0"})


def test_logs_and_exec_of_an_ephemeral_container(any_kubectl: RealKubectl, env: Env) -> None:
    name = f"shell-{any_kubectl.version.replace('.', '')}"
    r = env.add_ephemeral("app", {"name": name, "image": BUSYBOX, "command": ["sh", "-c", "echo started; sleep 3600"]})
    assert r.status_code == 200, r.text
    wait_for_sync(lambda: "running" in (env.ephemeral_status("app", name).get("state") or {}), 60,
                  what=f"{name} running")
    wait_for_sync(lambda: env.log("app", name) == "started\n", 10, what=f"{name}'s log")
    assert any_kubectl.ok("logs", "app", "-c", name).out == "started\n"
    assert any_kubectl.ok("exec", "app", "-c", name, "--", "wget", "-qO-", "localhost:8080").out == PAGE + "\n"


def _section(text: str, title: str) -> str:
    lines = text.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    end = next((i for i in range(start + 1, len(lines)) if lines[i][:1] not in (" ", "\t")), len(lines))
    return "".join(lines[start:end])


def test_describe_shows_ephemeral_containers(official: RealKubectl, env: Env) -> None:
    pod = f"described-{official.version.replace('.', '')}"
    env.make_pod(pod)
    env.add_ephemeral(pod, {"name": "dbg", "image": BUSYBOX, "command": ["sh", "-c", "exit 3"], "stdin": True,
                            "env": [{"name": "A", "value": "b"}], "targetContainerName": "c"})
    wait_for_sync(lambda: (env.ephemeral_status(pod, "dbg").get("state") or {}).get("terminated"), 60,
                  what="dbg terminated")
    theirs = _section(official.ok("describe", "pod", pod).out, "Ephemeral Containers:")
    ours = _section(_kubectl("minik8s", env).ok("describe", "pod", pod).out, "Ephemeral Containers:")
    assert re.search(r"Exit Code: +3\n", theirs) and re.search(r"A: +b\n", theirs), theirs
    assert ours.splitlines() == theirs.splitlines()


def _in_a_terminal(kubectl: RealKubectl, *args: str, line: bytes) -> str:
    """Run kubectl on a pseudo-terminal; ``line`` is typed once the prompt notice was printed. All it wrote."""
    import pty
    import select
    import subprocess
    import time

    leader, follower = pty.openpty()
    proc = subprocess.Popen(kubectl.argv(args, True), stdin=follower, stdout=follower, stderr=follower,
                            env=kubectl.env(), close_fds=True)
    os.close(follower)
    out, typed, deadline = b"", False, time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(leader, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                out += chunk
            if not typed and b"try pressing enter." in out:
                time.sleep(1)
                os.write(leader, line)
                typed = True
            if proc.poll() is not None and not ready:
                break
    finally:
        proc.kill() if proc.poll() is None else None
        proc.wait()
        os.close(leader)
    return out.decode(errors="replace")


def test_debug_with_a_terminal(official: RealKubectl, env: Env) -> None:
    mine = _kubectl("minik8s", env)
    results = []
    for kubectl in (official, mine):
        name = f"tty-{kubectl.version.replace('.', '')}-{official.version.replace('.', '')}"
        text = _in_a_terminal(kubectl, "debug", "app", "-it", f"--image={BUSYBOX}", "-c", name, "--",
                              "sh", "-c", "read x; echo got $x", line=b"hi\r")
        results.append(Result(0, text.replace(name, "NAME").replace("\r\n", "\n"), ""))
    theirs, ours = tolerate(["1.37-debug-default-profile", "1.37-attach-recorded-notice", "1.37-reattach-namespace"],
                            official.version, *results)
    assert ours.out.endswith("hi\ngot hi\nSession ended, the ephemeral container will not be restarted but may be "
                             "reattached using 'kubectl attach app -c NAME -i -t' if it is still running\n"), ours.out
    assert ours.out == theirs.out
