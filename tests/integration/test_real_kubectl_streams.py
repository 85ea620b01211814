"""The official kubectl's streaming and convenience verbs (v1.32 and v1.37, see :mod:`tests.realkubectl`)
against the real apiserver, a real scheduler and a real kubelet running Docker containers:
``port-forward``, ``cp`` (both ways), ``attach``, ``logs -f``, ``exec -i`` and ``events``, each checked
by its output; minik8s' own kubectl passes the same checks where it has the verb (``cp``,
``attach``, ``port-forward``), and its errors are the official one's (differences only as listed in
``tests/support/kubectl_parity.py``).  One cluster and a few long-running pods serve the whole module."""

from __future__ import annotations

import hashlib
import os
import queue
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from minik8s.client.kubeconfig import render
from tests.realkubectl import CANDIDATES, RealKubectl, find
from tests.support.kubectl_parity import tolerate
from tests.support.kubelet import BUSYBOX, KubeletProcess, running_kubelet
from tests.support.processes import ROOT, APIServer, free_port, stop_process
from tests.support.waiting import wait_for_sync

pytestmark = pytest.mark.docker

VERSIONS = sorted(CANDIDATES)
WEB_PAGE = "hello from the web pod"
BIG_LINES = 300_000  # /www/big: about 2 MB, many times SPDY's 64 KiB window
UPLOAD = 1_000_000  # bytes the web pod's port 9000 reads before it answers their MD5


@dataclass
class Cluster:
    apiserver: APIServer
    kubelet: KubeletProcess
    namespace: str
    kubeconfig: Path


def _pod(name: str, node: str, scheduler: str, command: str, **extra: object) -> dict:
    container: dict = {"name": "main", "image": BUSYBOX, "command": ["sh", "-c", command]}
    container.update(extra)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"schedulerName": scheduler, "nodeSelector": {"kubernetes.io/hostname": node},
                     "terminationGracePeriodSeconds": 1, "restartPolicy": "Never", "containers": [container]}}


def _pods(node: str, scheduler: str) -> list[dict]:
    pods = [
        _pod("web", node, scheduler, f"mkdir -p /www && echo '{WEB_PAGE}' > /www/index.html && "
                                     f"seq 1 {BIG_LINES} > /www/big && "
                                     f"(nc -ll -p 9000 -e sh -c 'head -c {UPLOAD} | md5sum' &) && "
                                     "exec httpd -f -p 8080 -h /www"),
        _pod("box", node, scheduler, "exec sleep 3600"),
        _pod("talker", node, scheduler, 'echo ready; while read line; do echo "got $line"; done; sleep 3600',
             stdin=True),
    ]
    for version in [*VERSIONS, "minik8s"]:  # logs -f ends when its container ends: one each
        # One talker each too: after two earlier attach -i sessions to one talker, a third saw no echo
        # (not yet understood; see the closing note of the session that split them).
        pods.append(_pod(f"talker-{version.replace('.', '')}", node, scheduler,
                         'echo ready; while read line; do echo "got $line"; done; sleep 3600', stdin=True))
        pods.append(_pod(f"ticker-{version.replace('.', '')}", node, scheduler,
                         "i=0; while [ ! -f /tmp/stop ]; do i=$((i+1)); echo tick $i; sleep 0.2; done; echo bye"))
    return pods


@pytest.fixture(scope="module")
def cluster(apiserver: APIServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    workdir = tmp_path_factory.mktemp("streams")
    kubeconfig = workdir / "kubeconfig"
    kubeconfig.write_text(render(apiserver.url))
    namespace = f"t-{os.urandom(4).hex()}"
    scheduler_name = f"streams-{os.urandom(3).hex()}"
    http = httpx.Client(base_url=apiserver.url, timeout=10)
    assert http.post("/api/v1/namespaces", json={"metadata": {"name": namespace}}).status_code == 201
    with running_kubelet(apiserver, workdir) as kubelet, open(workdir / "scheduler.log", "wb") as log:
        scheduler = subprocess.Popen([sys.executable, "-m", "minik8s", "scheduler", "--kubeconfig", str(kubeconfig),
                                      "--scheduler-name", scheduler_name], stdout=log, stderr=subprocess.STDOUT,
                                     cwd=ROOT)
        try:
            for pod in _pods(kubelet.node, scheduler_name):
                r = http.post(f"/api/v1/namespaces/{namespace}/pods", json=pod)
                assert r.status_code == 201, r.text

            def running() -> bool:
                items = http.get(f"/api/v1/namespaces/{namespace}/pods").json()["items"]
                return all((p.get("status") or {}).get("phase") == "Running" for p in items)
            wait_for_sync(running, 60, what="the streams pods Running")
            yield Cluster(apiserver, kubelet, namespace, kubeconfig)
        finally:
            stop_process(scheduler)
            http.delete(f"/api/v1/namespaces/{namespace}")
            http.close()


@pytest.fixture(params=VERSIONS, ids=lambda v: f"kubectl-{v}")
def kubectl(request: pytest.FixtureRequest, cluster: Cluster) -> RealKubectl:
    path, why = find(request.param)
    if path is None:
        pytest.skip(why)
    return RealKubectl(path, request.param, cluster.kubeconfig, cluster.namespace)


class MineKubectl(RealKubectl):
    """minik8s' own kubectl, run as :class:`RealKubectl` runs an official one."""

    def argv(self, args: tuple[str, ...], ns: bool) -> list[str]:
        cmd = [sys.executable, "-m", "minik8s.kubectl", "--kubeconfig", str(self.kubeconfig)]
        return cmd + (["-n", self.namespace] if ns else []) + list(args)


@pytest.fixture(params=[*VERSIONS, "minik8s"], ids=lambda v: f"kubectl-{v}")
def any_kubectl(request: pytest.FixtureRequest, cluster: Cluster) -> RealKubectl:
    """Each official kubectl and minik8s' own."""
    if request.param == "minik8s":
        return MineKubectl(Path(sys.executable), "minik8s", cluster.kubeconfig, cluster.namespace)
    path, why = find(request.param)
    if path is None:
        pytest.skip(why)
    return RealKubectl(path, request.param, cluster.kubeconfig, cluster.namespace)


class Proc:
    """A kubectl running in the background with its stdout lines on a queue; always stopped by the test."""

    def __init__(self, kubectl: RealKubectl, *args: str, stdin: bool = False) -> None:
        self.proc = subprocess.Popen(kubectl.argv(args, True), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     stdin=subprocess.PIPE if stdin else subprocess.DEVNULL, text=True,
                                     env=kubectl.env())
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        self._stderr: str | None = None
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def until(self, predicate: object, timeout: float = 20) -> str:
        """Read lines until one satisfies ``predicate`` (a callable); that line."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(deadline - time.monotonic(), 0.001))
            except queue.Empty:
                raise AssertionError(f"no matching line in {timeout} s; saw {self.seen[-5:]}, "
                                     f"stderr: {self.stderr()}") from None
            if line is None:
                raise AssertionError(f"kubectl ended ({self.proc.wait()}); saw {self.seen[-5:]}, "
                                     f"stderr: {self.stderr()}")
            self.seen.append(line)
            if predicate(line):  # type: ignore[operator]
                return line

    def rest(self, timeout: float = 20) -> list[str]:
        """The remaining lines until the process closes its stdout."""
        deadline = time.monotonic() + timeout
        out = []
        while (line := self.lines.get(timeout=max(deadline - time.monotonic(), 0.001))) is not None:
            out.append(line)
        return out

    def stderr(self) -> str:
        """What it wrote to stderr, once it has ended."""
        if self.proc.poll() is None:
            return "(running)"
        assert self.proc.stderr is not None
        if self._stderr is None:
            self._stderr = self.proc.stderr.read()
        return self._stderr

    def stop(self) -> None:
        stop_process(self.proc)


def test_exec_with_stdin(kubectl: RealKubectl) -> None:
    res = kubectl.ok("exec", "-i", "box", "--", "tr", "a-z", "A-Z", stdin="hello\nworld\n")
    assert res.out == "HELLO\nWORLD\n"
    res = kubectl("exec", "box", "--", "sh", "-c", "echo out; echo err >&2; exit 3")
    assert (res.code, res.out, res.err.splitlines()[0]) == (3, "out\n", "err")
    assert "command terminated with exit code 3" in res.err


def test_cp_both_ways(any_kubectl: RealKubectl, tmp_path: Path) -> None:
    kubectl = any_kubectl
    data = "".join(f"line {i} {os.urandom(8).hex()}\n" for i in range(200))
    src = tmp_path / "src.txt"
    src.write_text(data)
    remote = f"/tmp/cp-{kubectl.version}.txt"
    kubectl.ok("cp", str(src), f"box:{remote}")
    assert kubectl.ok("exec", "box", "--", "cat", remote).out == data
    back = tmp_path / "back.txt"
    kubectl.ok("cp", f"box:{remote}", str(back))
    assert back.read_text() == data
    # A directory, into a pod and back.
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "a.txt").write_text("a\n")
    (tree / "sub" / "b.txt").write_text("b\n")
    kubectl.ok("cp", str(tree), f"box:/tmp/tree-{kubectl.version}")
    assert kubectl.ok("exec", "box", "--", "cat", f"/tmp/tree-{kubectl.version}/sub/b.txt").out == "b\n"
    kubectl.ok("cp", f"box:/tmp/tree-{kubectl.version}", str(tmp_path / "tree-back"))
    assert (tmp_path / "tree-back" / "sub" / "b.txt").read_text() == "b\n"
    assert (tmp_path / "tree-back" / "a.txt").read_text() == "a\n"
    # Into an existing directory: under the source's own name; with the namespace in the spec.
    kubectl.ok("cp", str(src), f"{kubectl.namespace}/box:/tmp/tree-{kubectl.version}")
    assert kubectl.ok("exec", "box", "--", "cat", f"/tmp/tree-{kubectl.version}/src.txt").out == data


CP_ERRORS = [
    ["box:/tmp/a", "box:/tmp/b"],  # both remote
    ["{tmp}/a", "{tmp}/b"],  # both local
    ["a/b/c:/tmp/x", "{tmp}/x"],  # not a file spec
    [":/tmp/x", "{tmp}/x"],
    ["{tmp}/missing.txt", "box:/tmp/x"],  # no such local file
    ["box:", "{tmp}/x"],  # an empty path
    ["nosuchpod:/etc/hostname", "{tmp}/x"],
    ["box:/etc/hostname", "{tmp}/x", "-c", "nope"],
]


ERRORS = [["cp", *args] for args in CP_ERRORS] + [
    ["attach", "nosuchpod"],
    ["attach", "box", "-c", "nope"],
    ["attach", "deployment/nosuch"],
    ["port-forward", "nosuchpod", "8080:80"],
    ["port-forward", "web"],
    ["port-forward", "web", "8080:http"],
    ["port-forward", "web", "x:80"],
]


@pytest.mark.parametrize("args", ERRORS, ids=lambda a: " ".join(a))
def test_errors_are_the_official_ones(kubectl: RealKubectl, cluster: Cluster, tmp_path: Path,
                                      args: list[str]) -> None:
    argv = [a.replace("{tmp}", str(tmp_path)) for a in args]
    mine = MineKubectl(Path(sys.executable), "minik8s", cluster.kubeconfig, cluster.namespace)
    theirs, ours = tolerate(["1.37-container-not-valid"], kubectl.version, kubectl(*argv), mine(*argv))
    assert (ours.code, ours.out, ours.err) == (theirs.code, theirs.out, theirs.err)


def test_port_forward(any_kubectl: RealKubectl) -> None:
    kubectl = any_kubectl
    port, port2 = free_port(), free_port()
    pf = Proc(kubectl, "port-forward", "pod/web", f"{port}:8080", f"{port2}:9000", "--address", "127.0.0.1")
    try:
        pf.until(lambda line: line.startswith(f"Forwarding from 127.0.0.1:{port2} -> 9000"))
        for _ in range(3):  # one connection after another through the same forward
            resp = httpx.get(f"http://127.0.0.1:{port}/", timeout=10)
            assert resp.status_code == 200 and resp.text == WEB_PAGE + "\n"
        # Megabytes each way: the pod to kubectl, and kubectl to the pod.
        resp = httpx.get(f"http://127.0.0.1:{port}/big", timeout=30)
        assert resp.text == "".join(f"{i}\n" for i in range(1, BIG_LINES + 1))
        payload = os.urandom(UPLOAD)
        with socket.create_connection(("127.0.0.1", port2), timeout=30) as conn:
            conn.sendall(payload)
            answer = b""
            while b"\n" not in answer and (chunk := conn.recv(4096)):
                answer += chunk
        assert answer.split()[0].decode() == hashlib.md5(payload).hexdigest()  # noqa: S324 - a checksum
    finally:
        pf.stop()
    assert pf.proc.returncode is not None


def test_attach(any_kubectl: RealKubectl) -> None:
    kubectl = any_kubectl
    att = Proc(kubectl, "attach", "-i", f"talker-{kubectl.version.replace('.', '')}", stdin=True)
    try:
        assert att.proc.stdin is not None
        word = f"hello-{kubectl.version}"

        def sent_and_echoed(line: str) -> bool:
            return line == f"got {word}"
        # kubectl prints nothing before the stream is up: send until the answer comes back.
        deadline = time.monotonic() + 20
        while True:
            att.proc.stdin.write(word + "\n")
            att.proc.stdin.flush()
            try:
                att.until(sent_and_echoed, timeout=2)
                break
            except AssertionError:
                if time.monotonic() > deadline:
                    raise
    finally:
        att.stop()
    # Without -i: what the container prints from now on.
    pod = f"ticker-{kubectl.version.replace('.', '')}"
    att = Proc(kubectl, "attach", pod)
    try:
        first = int(att.until(lambda line: line.startswith("tick ")).split()[1])
        att.until(lambda line: line == f"tick {first + 1}")
    finally:
        att.stop()


def test_logs_follow(kubectl: RealKubectl) -> None:
    pod = f"ticker-{kubectl.version.replace('.', '')}"
    logs = Proc(kubectl, "logs", "-f", pod)
    try:
        first = int(logs.until(lambda line: line.startswith("tick ")).split()[1])
        later = int(logs.until(lambda line: line.startswith("tick ") and int(line.split()[1]) >= first + 3)
                    .split()[1])
        assert later >= first + 3  # new lines arrive while it follows
        kubectl.ok("exec", pod, "--", "touch", "/tmp/stop")
        rest = logs.rest()
        assert rest[-1] == "bye", rest[-3:]
        assert logs.proc.wait(20) == 0  # ends by itself when the container ends
    finally:
        logs.stop()
    # A follow on a running container runs until it is stopped.
    logs = Proc(kubectl, "logs", "-f", "talker")
    try:
        logs.until(lambda line: line == "ready")
        assert logs.proc.poll() is None
    finally:
        logs.stop()
    assert logs.proc.returncode is not None


def test_events(kubectl: RealKubectl) -> None:
    def reasons(rows: list[list[str]], column: int) -> set[str]:
        return {row[column] for row in rows[1:]}

    want = {"Scheduled", "Pulled", "Created", "Started"}
    rows = kubectl.ok("events", "--for", "pod/box").table()
    assert rows[0] == ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert want <= reasons(rows, 2), rows
    assert {row[3] for row in rows[1:]} == {"Pod/box"}
    rows = kubectl.ok("get", "events", "--field-selector", "involvedObject.name=box").table()
    assert rows[0] == ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert want <= reasons(rows, 2), rows
    assert {row[3] for row in rows[1:]} == {"pod/box"}


def test_port_forward_to_a_closed_port(any_kubectl: RealKubectl) -> None:
    kubectl = any_kubectl
    port = free_port()
    pf = Proc(kubectl, "port-forward", "pod/web", f"{port}:8081", "--address", "127.0.0.1")
    try:
        pf.until(lambda line: line.startswith(f"Forwarding from 127.0.0.1:{port} -> 8081"))
        with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
            assert conn.recv(100) == b""  # closed: nothing listens on 8081 in the pod
        assert pf.proc.wait(20) == 1  # kubectl >= 1.31 ends the forward when a connection fails
    finally:
        pf.stop()
    error, lost = pf.stderr().splitlines()[-2:]
    # 1.32: err="an error occurred forwarding L -> 8081: <the kubelet's message>"; 1.37: err="<it>" localPort=L ...
    assert (f'err="error forwarding port 8081 to pod {kubectl.namespace}/web: failed to connect to localhost:8081: '
            'Connection refused"' in error.replace(f"an error occurred forwarding {port} -> 8081: ", "")), error
    assert lost == "error: lost connection to pod"
