"""Issue 3 end to end: a real local cluster (``minik8s up``) runs real pods on Docker,
driven through our kubectl and the API."""

from __future__ import annotations

import ipaddress
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.support.cluster import E2E_NODE, E2E_POD_CIDR, Cluster, wait_for

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "pods"


def pod(c: Cluster, name: str) -> dict:
    return c.get_json("pod", name)


def phase(c: Cluster, name: str) -> str | None:
    return (pod(c, name).get("status") or {}).get("phase")


def cstatus(c: Cluster, name: str, container: str) -> dict:
    for cs in (pod(c, name).get("status") or {}).get("containerStatuses") or []:
        if cs["name"] == container:
            return cs
    return {}


def docker_containers(pod_name: str, namespace: str = "default") -> list[dict]:
    out = subprocess.run(["docker", "ps", "-a", "--filter", f"label=io.kubernetes.pod.name={pod_name}",
                          "--filter", f"label=io.kubernetes.pod.namespace={namespace}",
                          "--filter", f"label=minik8s.io/node={E2E_NODE}", "--format", "{{json .}}"],
                         capture_output=True, text=True, check=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def apply(c: Cluster, manifest: str) -> None:
    c.kubectl("apply", "-f", "-", input=manifest)


@pytest.fixture(scope="module")
def examples(cluster: Cluster) -> Iterator[Cluster]:
    """The main job: the example pods applied to the cluster, all but the crasher Running; deleted
    after the module (the crasher and the liveness example restart for ever: load for later tests)."""
    out = cluster.kubectl("apply", "-f", str(EXAMPLES)).stdout
    assert "pod/hello created" in out or "pod/hello unchanged" in out
    for name in ("hello", "web-and-fetcher", "shared-volume", "limited", "liveness-exec"):
        wait_for(lambda n=name: phase(cluster, n) == "Running", 90, what=f"{name} Running")
    yield cluster
    cluster.kubectl("delete", "-f", str(EXAMPLES), "--wait=false", check=False)


def test_node_registered_and_ready(cluster: Cluster) -> None:
    node = cluster.get_json("node", E2E_NODE)
    ready = [c for c in node["status"]["conditions"] if c["type"] == "Ready"]
    assert ready and ready[0]["status"] == "True"
    assert node["metadata"]["labels"]["kubernetes.io/hostname"] == E2E_NODE
    assert int(node["status"]["capacity"]["pods"]) == 110
    lease = cluster.get_json("lease", E2E_NODE, "-n", "kube-node-lease")
    assert lease["spec"]["holderIdentity"] == E2E_NODE


def test_examples_running_with_ips(examples: Cluster) -> None:
    wide = examples.kubectl("get", "pods", "-o", "wide").stdout
    assert "IP" in wide.splitlines()[0] and "NODE" in wide.splitlines()[0]
    for name in ("hello", "web-and-fetcher", "shared-volume", "limited"):
        p = pod(examples, name)
        assert ipaddress.ip_address(p["status"]["podIP"]) in ipaddress.ip_network(E2E_POD_CIDR)
        assert p["spec"]["nodeName"] == E2E_NODE
        assert name in wide
    ips = {pod(examples, n)["status"]["podIP"] for n in ("hello", "web-and-fetcher", "shared-volume", "limited")}
    assert len(ips) == 4  # every pod has its own IP


def test_containers_share_localhost(examples: Cluster) -> None:
    out = examples.kubectl("exec", "web-and-fetcher", "-c", "fetcher", "--",
                           "sh", "-c", "timeout 5 wget -q -O- http://localhost:8080/").stdout
    assert "served by the web container" in out
    logs = wait_for(lambda: "served by the web container" in examples.kubectl(
        "logs", "web-and-fetcher", "-c", "fetcher").stdout, 30, what="fetcher log")
    assert logs


def test_shared_empty_dir(examples: Cluster) -> None:
    def read() -> str:
        return examples.kubectl("exec", "shared-volume", "-c", "reader", "--", "cat", "/data/now.txt",
                                check=False).stdout
    assert wait_for(lambda: read().strip(), 30, what="file written by the writer container")
    denied = examples.kubectl("exec", "shared-volume", "-c", "reader", "--", "sh", "-c", "echo x > /data/y",
                              check=False)
    assert denied.returncode != 0  # readOnly mount


def test_limits_in_docker(examples: Cluster) -> None:
    app = [c for c in docker_containers("limited") if c["Names"].startswith("k8s_app_")]
    assert app
    inspect = json.loads(subprocess.run(["docker", "inspect", app[0]["ID"]], capture_output=True, text=True,
                                        check=True).stdout)[0]["HostConfig"]
    assert inspect["Memory"] == 64 * 1024 * 1024
    cpu = inspect.get("NanoCpus") or inspect.get("CpuQuota", 0) * 1_000_000_000 // max(inspect.get("CpuPeriod") or 1, 1)
    assert cpu == 250_000_000
    assert inspect["CpuShares"] == 102  # requests 100m → 100*1024/1000


def test_crash_restarts_with_backoff(examples: Cluster) -> None:
    def restarted() -> int:
        return cstatus(examples, "crasher", "crasher").get("restartCount", 0)
    wait_for(lambda: restarted() >= 2, 90, what="crasher restarted twice")
    cs = cstatus(examples, "crasher", "crasher")
    assert cs["lastState"]["terminated"]["exitCode"] == 3
    reasons = set()
    wait_for(lambda: reasons.add((cstatus(examples, "crasher", "crasher").get("state") or {})
                                 .get("waiting", {}).get("reason")) or "CrashLoopBackOff" in reasons,
             60, interval=0.3, what="CrashLoopBackOff")
    describe = examples.kubectl("describe", "pod", "crasher").stdout
    assert "BackOff" in describe and "Started" in describe


def test_failing_liveness_restarts(cluster: Cluster) -> None:
    apply(cluster, """
apiVersion: v1
kind: Pod
metadata: {name: live-fail}
spec:
  containers:
  - name: app
    image: minik8s/busybox:latest
    command: ["sh", "-c", "touch /tmp/ok; sleep 4; rm /tmp/ok; sleep 600"]
    livenessProbe:
      exec: {command: ["cat", "/tmp/ok"]}
      periodSeconds: 1
      failureThreshold: 2
""")
    wait_for(lambda: cstatus(cluster, "live-fail", "app").get("restartCount", 0) >= 1, 60,
             what="liveness restart")
    assert "Unhealthy" in cluster.kubectl("describe", "pod", "live-fail").stdout
    cluster.kubectl("delete", "pod", "live-fail", "--wait=false")  # it would restart for ever


def test_readiness_drives_ready_condition(cluster: Cluster) -> None:
    apply(cluster, """
apiVersion: v1
kind: Pod
metadata: {name: ready-later}
spec:
  containers:
  - name: app
    image: minik8s/busybox:latest
    command: ["sleep", "600"]
    readinessProbe:
      exec: {command: ["cat", "/tmp/ready"]}
      periodSeconds: 1
""")
    wait_for(lambda: phase(cluster, "ready-later") == "Running", 60, what="Running")
    time.sleep(2)
    conds = {c["type"]: c["status"] for c in pod(cluster, "ready-later")["status"]["conditions"]}
    assert conds["Ready"] == "False"
    assert "0/1" in cluster.kubectl("get", "pod", "ready-later").stdout
    cluster.kubectl("exec", "ready-later", "--", "touch", "/tmp/ready")
    wait_for(lambda: {c["type"]: c["status"] for c in pod(cluster, "ready-later")["status"]["conditions"]}
             ["Ready"] == "True", 30, what="Ready=True")


def test_graceful_delete_sends_sigterm(cluster: Cluster, tmp_path: Path) -> None:
    marker_dir = tmp_path / "marker"
    marker_dir.mkdir()
    apply(cluster, f"""
apiVersion: v1
kind: Pod
metadata: {{name: graceful}}
spec:
  terminationGracePeriodSeconds: 20
  volumes:
  - name: out
    hostPath: {{path: {marker_dir}}}
  containers:
  - name: app
    image: minik8s/busybox:latest
    command: ["sh", "-c", "trap 'echo got-TERM > /out/marker; until [ -f /out/release ]; do sleep 0.2; done; exit' TERM;
      while true; do sleep 1; done"]
    volumeMounts: [{{name: out, mountPath: /out}}]
""")
    wait_for(lambda: phase(cluster, "graceful") == "Running", 60, what="Running")
    cluster.kubectl("delete", "pod", "graceful", "--wait=false")
    # the container got SIGTERM and holds on until the test releases it: meanwhile (within the 20 s
    # grace period) the pod is Terminating, not gone
    marker = marker_dir / "marker"
    wait_for(lambda: marker.exists() and marker.read_text().strip() == "got-TERM", 30, what="SIGTERM delivered")
    assert "Terminating" in cluster.kubectl("get", "pod", "graceful").stdout
    (marker_dir / "release").write_text("")
    wait_for(lambda: cluster.kubectl("get", "pod", "graceful", check=False).returncode != 0, 60,
             what="pod removed")
    assert docker_containers("graceful") == []


def test_missing_image_does_no_harm(examples: Cluster) -> None:
    apply(examples, """
apiVersion: v1
kind: Pod
metadata: {name: no-such-image}
spec:
  containers:
  - name: app
    # a registry on a closed loopback port: the pull fails at once and nothing leaves the machine
    image: 127.0.0.1:1/minik8s/does-not-exist:1.0
""")
    wait_for(lambda: (cstatus(examples, "no-such-image", "app").get("state") or {}).get("waiting", {})
             .get("reason") in ("ErrImagePull", "ImagePullBackOff"), 90, what="ErrImagePull")
    shown = examples.kubectl("get", "pod", "no-such-image").stdout
    assert "ErrImagePull" in shown or "ImagePullBackOff" in shown
    assert phase(examples, "hello") == "Running"
    examples.kubectl("delete", "pod", "no-such-image")


def test_logs_and_exec(examples: Cluster) -> None:
    assert "Hello from minik8s" in examples.kubectl("logs", "hello").stdout
    assert examples.kubectl("logs", "hello", "--tail", "1").stdout.count("\n") == 1
    failed = examples.kubectl("exec", "hello", "--", "sh", "-c", "echo out; echo err >&2; exit 7", check=False)
    assert failed.returncode == 7 and "out" in failed.stdout and "err" in failed.stderr


def test_unschedulable_pod_message(cluster: Cluster) -> None:
    apply(cluster, """
apiVersion: v1
kind: Pod
metadata: {name: too-big}
spec:
  containers:
  - name: app
    image: minik8s/busybox:latest
    resources: {requests: {cpu: "500"}}
""")

    def message() -> str | None:
        for cond in (pod(cluster, "too-big").get("status") or {}).get("conditions") or []:
            if cond["type"] == "PodScheduled" and cond["status"] == "False":
                return str(cond.get("message"))
        return None

    assert wait_for(message, 30, what="PodScheduled=False") == (
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims "
        "found for incoming pod..")
    assert "FailedScheduling" in cluster.kubectl("describe", "pod", "too-big").stdout
    cluster.kubectl("delete", "pod", "too-big")


def test_kubelet_restart_adopts_containers(examples: Cluster) -> None:
    before = {c["ID"] for c in docker_containers("hello")}
    restarts = cstatus(examples, "hello", "hello")["restartCount"]
    old_pid = examples.component_pid("kubelet")
    killed_at = datetime.now(UTC)
    os.kill(old_pid, signal.SIGKILL)
    # the supervisor restarts it; the new kubelet has registered once it renews the node's Lease
    wait_for(lambda: (pid := examples.component_pid("kubelet")) != old_pid and _alive(pid), 30,
             what="kubelet restarted")
    wait_for(lambda: _lease_renewed_after(examples, killed_at), 60, what="the new kubelet renewing its Lease")
    # then watch it adopt and resync: the pod's containers must stay the same the whole time
    deadline = time.monotonic() + 8
    while time.monotonic() < deadline:
        assert {c["ID"] for c in docker_containers("hello")} == before
        time.sleep(0.5)
    assert cstatus(examples, "hello", "hello")["restartCount"] == restarts
    assert phase(examples, "hello") == "Running"


def test_pods_keep_running_while_apiserver_is_down(examples: Cluster) -> None:
    pid = examples.component_pid("apiserver")
    running = {c["ID"] for c in docker_containers("hello") if c["State"] == "running"}
    os.kill(pid, signal.SIGSTOP)  # the apiserver is unreachable but not restarted
    try:
        time.sleep(15)
        assert {c["ID"] for c in docker_containers("hello") if c["State"] == "running"} == running
    finally:
        os.kill(pid, signal.SIGCONT)
    wait_for(lambda: phase(examples, "hello") == "Running", 30, what="API back")
    apply(examples, """
apiVersion: v1
kind: Pod
metadata: {name: after-outage}
spec:
  containers: [{name: app, image: "minik8s/busybox:latest", command: ["sleep", "600"]}]
""")
    wait_for(lambda: phase(examples, "after-outage") == "Running", 60, what="new pod after the outage")


def _lease_renewed_after(c: Cluster, when: datetime) -> bool:
    lease = c.get_json("lease", E2E_NODE, "-n", "kube-node-lease")
    renewed = (lease.get("spec") or {}).get("renewTime")
    return bool(renewed) and datetime.fromisoformat(renewed.replace("Z", "+00:00")) > when


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False
