"""Issue 4 end to end on a real local cluster (``minik8s up``): the workload examples
(``examples/workloads``) — a ReplicaSet that replaces a killed pod, a Deployment rolled from v1
to v2 and back — and a HorizontalPodAutoscaler that scales a CPU-burning Deployment up to
maxReplicas while the load is on and back down to minReplicas after it stops, one pod per
policy period.

The HPA test works with the cluster's default periods (metrics every 15 s, HPA sync every
15 s; about two minutes) and faster when ``minik8s up`` passes shorter ones.  The load is the
examples' hostPath switch in a per-test directory; it keeps at most 3 pods × 200m busy.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import httpx
import pytest
import yaml

from minik8s.api.base import Obj
from tests.support.cluster import Cluster, wait_for

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "workloads"
POLICY_PERIOD = 10  # seconds: the test HPA adds or removes at most 1 pod per 10 s
DOWN_WINDOW = 10  # seconds: its scale-down stabilization window
HPA_SYNC_PERIOD = 5  # seconds: the e2e cluster's --horizontal-pod-autoscaler-sync-period (tests/support/cluster.py)


NS_PREFIX = "wl"  # the conftest's ns fixture names namespaces wl-<hex>


def pods(c: Cluster, ns: str, selector: str) -> list[Obj]:
    items = c.get_json("pods", "-n", ns, "-l", selector)["items"]
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


def ready(pod: Obj) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(x["type"] == "Ready" and x["status"] == "True" for x in conditions)


def test_replicaset_replaces_a_deleted_pod(cluster: Cluster, ns: str) -> None:
    cluster.kubectl("apply", "-n", ns, "-f", str(EXAMPLES / "replicaset.yaml"))
    wait_for(lambda: len([p for p in pods(cluster, ns, "app=hello") if ready(p)]) == 3, 90, what="3 ready pods")
    before = {p["metadata"]["name"] for p in pods(cluster, ns, "app=hello")}
    victim = sorted(before)[0]
    cluster.kubectl("delete", "pod", victim, "-n", ns, "--wait=false")

    def replaced() -> bool:
        now = [p for p in pods(cluster, ns, "app=hello") if ready(p)]
        return len(now) == 3 and victim not in {p["metadata"]["name"] for p in now}

    wait_for(replaced, 60, what="a replacement for the deleted pod")
    rs = cluster.get_json("rs", "hello", "-n", ns)
    assert rs["status"]["readyReplicas"] == 3


def test_replicaset_survives_a_killed_container(cluster: Cluster, ns: str) -> None:
    """A container killed behind the kubelet's back is restarted in place; the RS stays at 3."""
    cluster.kubectl("apply", "-n", ns, "-f", str(EXAMPLES / "replicaset.yaml"))
    wait_for(lambda: len([p for p in pods(cluster, ns, "app=hello") if ready(p)]) == 3, 90, what="3 ready pods")
    victim = pods(cluster, ns, "app=hello")[0]
    name = victim["metadata"]["name"]
    out = subprocess.run(["docker", "ps", "-q", "--filter", f"label=io.kubernetes.pod.name={name}",
                          "--filter", f"label=io.kubernetes.pod.namespace={ns}",
                          "--filter", "label=io.kubernetes.container.name=web"],
                         capture_output=True, text=True, check=True).stdout.split()
    assert len(out) == 1
    subprocess.run(["docker", "kill", out[0]], check=True, capture_output=True)

    def restarted() -> bool:
        p = cluster.get_json("pod", name, "-n", ns)
        statuses = (p.get("status") or {}).get("containerStatuses") or [{}]
        return ready(p) and statuses[0].get("restartCount", 0) >= 1

    wait_for(restarted, 60, what="the killed container restarted")
    assert len(pods(cluster, ns, "app=hello")) == 3


def test_replicaset_releases_and_adopts_by_labels(cluster: Cluster, ns: str) -> None:
    cluster.kubectl("apply", "-n", ns, "-f", str(EXAMPLES / "replicaset.yaml"))
    wait_for(lambda: len([p for p in pods(cluster, ns, "app=hello") if ready(p)]) == 3, 90, what="3 ready pods")
    # release: a pod relabelled out of the selector loses its owner and is replaced
    released = pods(cluster, ns, "app=hello")[0]["metadata"]["name"]
    cluster.kubectl("label", "pod", released, "-n", ns, "app=elsewhere", "--overwrite")
    wait_for(lambda: len(pods(cluster, ns, "app=hello")) == 3, 60, what="a replacement for the released pod")
    assert not cluster.get_json("pod", released, "-n", ns)["metadata"].get("ownerReferences")
    # adoption: labelled back, the RS adopts it and removes one pod to stay at 3
    cluster.kubectl("label", "pod", released, "-n", ns, "app=hello", "--overwrite")

    def adopted() -> bool:
        refs = cluster.get_json("pod", released, "-n", ns)["metadata"].get("ownerReferences") or []
        return any(r["kind"] == "ReplicaSet" and r["name"] == "hello" for r in refs) and \
            len(pods(cluster, ns, "app=hello")) == 3

    wait_for(adopted, 60, what="the orphan adopted and the RS back at 3")


def test_rollout_keeps_enough_pods_ready_and_cascade_deletes(cluster: Cluster, ns: str) -> None:
    """During a rolling update (maxUnavailable 0) at least 4 pods are ready at every sample;
    deleting the Deployment removes its ReplicaSets and pods (background cascade)."""
    cluster.kubectl("apply", "-n", ns, "-f", str(EXAMPLES / "deployment.yaml"))
    cluster.kubectl("rollout", "status", "deployment/web", "-n", ns, "--timeout=120s", timeout=150)
    cluster.kubectl("apply", "-n", ns, "-f", str(EXAMPLES / "v2" / "deployment.yaml"))
    lowest = 99
    deadline = time.monotonic() + 150
    while time.monotonic() < deadline:
        current = pods(cluster, ns, "app=web")
        lowest = min(lowest, len([p for p in current if ready(p)]))
        if versions(cluster, ns) == {"v2"} and len([p for p in current if ready(p)]) == 4:
            break
        time.sleep(0.5)
    else:
        pytest.fail("the rollout to v2 did not finish")
    assert lowest >= 4  # replicas - maxUnavailable
    cluster.kubectl("delete", "deployment", "web", "-n", ns)
    wait_for(lambda: not cluster.get_json("rs", "-n", ns, "-l", "app=web")["items"], 60, what="RSs collected")
    wait_for(lambda: not pods(cluster, ns, "app=web"), 60, what="pods collected")


def versions(c: Cluster, ns: str) -> set[str]:
    return {env["value"] for p in pods(c, ns, "app=web") for env in p["spec"]["containers"][0].get("env") or []
            if env["name"] == "VERSION"}


def test_deployment_rolls_from_v1_to_v2_and_back(cluster: Cluster, ns: str) -> None:
    cluster.kubectl("apply", "-n", ns, "-f", str(EXAMPLES / "deployment.yaml"))
    cluster.kubectl("rollout", "status", "deployment/web", "-n", ns, "--timeout=120s", timeout=150)
    assert versions(cluster, ns) == {"v1"}
    cluster.kubectl("apply", "-n", ns, "-f", str(EXAMPLES / "v2" / "deployment.yaml"))
    cluster.kubectl("rollout", "status", "deployment/web", "-n", ns, "--timeout=120s", timeout=150)
    wait_for(lambda: versions(cluster, ns) == {"v2"}, 60, what="only v2 pods")
    dep = cluster.get_json("deployment", "web", "-n", ns)
    assert dep["status"]["updatedReplicas"] == 4 and dep["status"]["availableReplicas"] == 4
    assert len(cluster.get_json("rs", "-n", ns, "-l", "app=web")["items"]) == 2
    cluster.kubectl("rollout", "undo", "deployment/web", "-n", ns)
    cluster.kubectl("rollout", "status", "deployment/web", "-n", ns, "--timeout=120s", timeout=150)
    wait_for(lambda: versions(cluster, ns) == {"v1"}, 60, what="back to v1")


# ----------------------------------------------------------------------------- HPA
def burner_manifests(switch_dir: str) -> str:
    """The examples' cpu-burner Deployment and HPA, switched by ``switch_dir``, with max 3 pods and
    1-pod-per-10-s policies (scale-down after a 10 s window)."""
    deploy = yaml.safe_load((EXAMPLES / "cpu-burner.yaml").read_text())
    deploy["spec"]["template"]["spec"]["volumes"][0]["hostPath"]["path"] = switch_dir
    hpa = yaml.safe_load((EXAMPLES / "hpa.yaml").read_text())
    hpa["spec"]["maxReplicas"] = 3
    one_pod = [{"type": "Pods", "value": 1, "periodSeconds": POLICY_PERIOD}]
    hpa["spec"]["behavior"] = {"scaleUp": {"stabilizationWindowSeconds": 0, "policies": one_pod},
                               "scaleDown": {"stabilizationWindowSeconds": DOWN_WINDOW, "policies": one_pod}}
    return yaml.safe_dump_all([deploy, hpa])


class ReplicaSteps:
    """Records ``(monotonic time, spec.replicas)`` of the Deployment whenever it changes, stamped
    as each watch event arrives (a watch, not a kubectl poll: a poll on a busy machine sees a
    step a second or two late, and unevenly, which would blur the policy periods measured)."""

    def __init__(self, cluster: Cluster, ns: str, name: str) -> None:
        self.url = f"{cluster.server}/apis/apps/v1/namespaces/{ns}/deployments"
        self.tls = cluster.ssl_context()
        self.name = name
        self.changes: list[tuple[float, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        version = ""
        while not self._stop.is_set():
            params = {"watch": "true", "fieldSelector": f"metadata.name={self.name}", "timeoutSeconds": "30",
                      "allowWatchBookmarks": "false", **({"resourceVersion": version} if version else {})}
            try:
                with httpx.stream("GET", self.url, params=params, timeout=httpx.Timeout(5, read=60),
                                  verify=self.tls) as resp:
                    for line in resp.iter_lines():
                        if not line.strip():
                            continue
                        event = json.loads(line)
                        if event.get("type") == "ERROR":  # 410 Gone: start over from a fresh list
                            version = ""
                            break
                        obj = event["object"]
                        version = obj["metadata"]["resourceVersion"]
                        replicas = int(obj["spec"]["replicas"])
                        if not self.changes or self.changes[-1][1] != replicas:
                            self.changes.append((time.monotonic(), replicas))
            except (httpx.HTTPError, ValueError, KeyError):
                time.sleep(0.2)  # the apiserver busy or restarting: watch again

    def current(self) -> int | None:
        return self.changes[-1][1] if self.changes else None

    def stop(self) -> None:
        self._stop.set()


def _limited_at_max(hpa: Obj) -> Obj | None:
    """``hpa`` once its status shows 3 current replicas, a cpu metric and ScalingLimited=True."""
    status = hpa.get("status") or {}
    limited = [c for c in status.get("conditions") or [] if c.get("type") == "ScalingLimited"]
    if status.get("currentReplicas") == 3 and status.get("currentMetrics") and limited \
            and limited[0].get("status") == "True":
        return hpa
    return None


def test_hpa_scales_a_cpu_burner_up_and_back_down(cluster: Cluster, ns: str) -> None:
    started = time.monotonic()
    switch = tempfile.mkdtemp(prefix="minik8s-e2e-load-")
    try:
        steps = ReplicaSteps(cluster, ns, "cpu-burner")
        cluster.kubectl("apply", "-n", ns, "-f", "-", input=burner_manifests(switch))
        Path(switch, "on").touch()
        wait_for(lambda: steps.current() == 3, 150, 0.5, "scale-up to maxReplicas 3")
        # the HPA writes the scale first and its own status after: wait for that status
        hpa = wait_for(lambda: _limited_at_max(cluster.get_json("hpa", "cpu-burner", "-n", ns)), 60,
                       what="HPA status: 3 replicas, ScalingLimited TooManyReplicas")
        table = cluster.kubectl("get", "hpa", "cpu-burner", "-n", ns).stdout.splitlines()
        Path(switch, "on").unlink()
        load_off = time.monotonic()
        wait_for(lambda: steps.current() == 1, 150, 0.5, "scale-down to minReplicas 1")
    finally:
        steps.stop()
        Path(switch, "on").unlink(missing_ok=True)
        cluster.kubectl("delete", "hpa,deployment", "cpu-burner", "-n", ns, "--wait=false", check=False)
        shutil.rmtree(switch, ignore_errors=True)

    print("replica steps (s after start, replicas):", [(round(t - started, 1), r) for t, r in steps.changes],
          "load off at", round(load_off - started, 1))
    ups = [(t, r) for t, r in steps.changes if t < load_off]
    downs = [(t, r) for t, r in steps.changes if t >= load_off]
    assert [r for _, r in ups] == [1, 2, 3], steps.changes  # one pod per step (Pods 1 per 10 s)
    assert [r for _, r in downs] == [2, 1], steps.changes
    assert ups[2][0] - ups[1][0] >= POLICY_PERIOD - 1, steps.changes  # the second step waited for the period
    # Not before the stabilization window: it runs from the last high recommendation, which may come
    # from the HPA sync just before the load went off (syncs every HPA_SYNC_PERIOD seconds), so the
    # first step down is at least DOWN_WINDOW - HPA_SYNC_PERIOD after load_off (the rest is slack).
    assert downs[0][0] - load_off >= DOWN_WINDOW - HPA_SYNC_PERIOD - 1, steps.changes
    assert downs[1][0] - downs[0][0] >= POLICY_PERIOD - 1, steps.changes
    assert time.monotonic() - started < 240

    cpu = hpa["status"]["currentMetrics"][0]["resource"]
    assert cpu["name"] == "cpu" and cpu["current"]["averageUtilization"] > 50
    limited = next(c for c in hpa["status"]["conditions"] if c["type"] == "ScalingLimited")
    assert (limited["status"], limited["reason"]) == ("True", "TooManyReplicas")
    assert table[0].split() == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"]
    assert "Deployment/cpu-burner" in table[1] and "cpu:" in table[1] and "/50%" in table[1]
    events = cluster.get_json("events", "-n", ns)["items"]
    messages = {e["message"] for e in events if e.get("reason") == "SuccessfulRescale"}
    assert "New size: 2; reason: cpu resource utilization (percentage of request) above target" in messages
    assert "New size: 1; reason: All metrics below target" in messages
