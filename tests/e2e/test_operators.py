"""Custom resources end to end on a real local cluster (``minik8s up``): a kopf operator, written
for Kubernetes and unchanged (examples/operators/webapp_operator.py), reconciles the WebApp custom
resource into a Deployment — create and field handlers, a timer writing the status subresource,
events, the scale subresource through ``kubectl scale``, deletion through its finalizer — first run
``--standalone``, then two operators peering, where only the higher priority one acts."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.support.cluster import Cluster, wait_for

NS_PREFIX = "op"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "operators"
OPERATOR = EXAMPLES / "webapp_operator.py"
RESUMED = "Resuming operations after the pause"  # kopf's log line when peering lets an operator act


@pytest.fixture(scope="module")
def crds(cluster: Cluster) -> Iterator[None]:
    cluster.kubectl("apply", "-f", str(EXAMPLES / "webapp-crd.yaml"), "-f", str(EXAMPLES / "kopf-peering.yaml"))
    for crd in ("webapps.demo.minik8s.io", "kopfpeerings.kopf.dev", "clusterkopfpeerings.kopf.dev"):
        cluster.kubectl("wait", "--for=condition=Established", f"crd/{crd}", "--timeout=60s", timeout=90)
    yield
    cluster.kubectl("delete", "-f", str(EXAMPLES / "webapp-crd.yaml"), "-f", str(EXAMPLES / "kopf-peering.yaml"),
                    "--wait=false", check=False)


@contextlib.contextmanager
def operator(c: Cluster, log: Path, *args: str, identity: str = "") -> Iterator[subprocess.Popen[bytes]]:
    """``kopf run`` of the example operator against the cluster's admin kubeconfig; stopped with
    SIGINT (kopf's clean shutdown: it leaves its peering) at the end."""
    env = {**os.environ, "KUBECONFIG": str(c.kubeconfig), "PYTHONUNBUFFERED": "1"}
    if identity:
        env["POD_ID"] = identity  # kopf's peer identity
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "kopf", "run", "--verbose", *args, str(OPERATOR)],
                                stdout=out, stderr=subprocess.STDOUT, env=env)
        try:
            yield proc
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(10)


def webapp(ns: str, name: str, replicas: int) -> str:
    return yaml.safe_dump({"apiVersion": "demo.minik8s.io/v1", "kind": "WebApp",
                           "metadata": {"name": name, "namespace": ns},
                           "spec": {"image": "minik8s/nginx:latest", "replicas": replicas}})


def get(c: Cluster, ns: str, *what: str) -> Any:
    return c.get_json(*what, "-n", ns)


def ready_as_reported(c: Cluster, ns: str, name: str, want: int) -> bool:
    """The Deployment has ``want`` ready pods and the operator's timer wrote it into the WebApp."""
    dep = get(c, ns, "deployment", name)
    app = get(c, ns, "webapp", name)
    return ((dep.get("status") or {}).get("readyReplicas") == want
            and (app.get("status") or {}).get("readyReplicas") == want)


def events(c: Cluster, ns: str, name: str) -> set[str]:
    items = c.get_json("events", "-n", ns, "--field-selector", f"involvedObject.name={name}")["items"]
    return {e["reason"] for e in items if e["involvedObject"].get("kind") == "WebApp"}


def handled(log: Path, handler: str) -> int:
    return log.read_text(errors="replace").count(f"Handler '{handler}' succeeded")


def test_kopf_operator_reconciles_a_custom_resource(cluster: Cluster, crds: None, ns: str,
                                                    tmp_path: Path) -> None:
    log = tmp_path / "kopf.log"
    with operator(cluster, log, "--standalone", "--namespace", ns):
        cluster.kubectl("apply", "-f", "-", input=webapp(ns, "web", 2))
        dep = wait_for(lambda: get(cluster, ns, "deployment", "web"), 60, what="the operator's Deployment")
        owner = dep["metadata"]["ownerReferences"][0]
        assert (owner["kind"], owner["name"], owner["apiVersion"]) == ("WebApp", "web", "demo.minik8s.io/v1")
        wait_for(lambda: ready_as_reported(cluster, ns, "web", 2), 120, what="2 ready pods in the WebApp's status")
        assert "DeploymentCreated" in events(cluster, ns, "web")
        app = get(cluster, ns, "webapp", "web")
        assert app["status"]["create_fn"] == {"deployment": "web"}  # kopf stores a handler's result in status

        # the scale subresource (specReplicasPath) through kubectl scale → the field handler
        cluster.kubectl("scale", "webapp", "web", "-n", ns, "--replicas=3")
        wait_for(lambda: ready_as_reported(cluster, ns, "web", 3), 120, what="3 ready pods after kubectl scale")
        assert wait_for(lambda: "Scaled" in events(cluster, ns, "web"), 30, what="the Scaled event")
        scale = httpx.get(f"{cluster.server}/apis/demo.minik8s.io/v1/namespaces/{ns}/webapps/web/scale",
                          verify=cluster.ssl_context(), timeout=30).json()
        assert (scale["kind"], scale["spec"]["replicas"], scale["status"]["replicas"]) == ("Scale", 3, 3)

        table = cluster.kubectl("get", "wa", "-n", ns).stdout.splitlines()
        assert table[0].split() == ["NAME", "IMAGE", "REPLICAS", "READY", "AGE"], table
        assert table[1].split()[:4] == ["web", "minik8s/nginx:latest", "3", "3"], table

        cluster.kubectl("delete", "webapp", "web", "-n", ns, timeout=90)
        wait_for(lambda: not get(cluster, ns, "deployments")["items"], 90, what="the Deployment garbage-collected")
        assert not get(cluster, ns, "webapps")["items"]
        assert handled(log, "delete_fn") == 1
    assert handled(log, "create_fn") == 1, log.read_text()[-3000:]


def test_peered_operators_only_the_highest_priority_acts(cluster: Cluster, crds: None, ns: str,
                                                         tmp_path: Path) -> None:
    cluster.kubectl("apply", "-f", "-", input=yaml.safe_dump(
        {"apiVersion": "kopf.dev/v1", "kind": "KopfPeering", "metadata": {"name": "webapps", "namespace": ns}}))
    low, high = tmp_path / "low.log", tmp_path / "high.log"
    common = ("--namespace", ns, "--peering", "webapps")

    def peers() -> set[str]:
        return set(get(cluster, ns, "kopfpeering", "webapps").get("status") or {})

    # the higher priority operator first, acting; then the lower one, which (as every peered operator)
    # starts paused and must stay so while its better is alive
    with operator(cluster, high, *common, "--priority", "20", identity="op-high") as high_proc:
        wait_for(lambda: RESUMED in high.read_text(errors="replace"), 60, what="the higher priority operator acting")
        with operator(cluster, low, *common, "--priority", "10", identity="op-low"):
            wait_for(lambda: {"op-low", "op-high"} <= peers(), 60, what="both operators in the KopfPeering")
            cluster.kubectl("apply", "-f", "-", input=webapp(ns, "one", 1))
            wait_for(lambda: get(cluster, ns, "deployment", "one"), 60, what="the Deployment of 'one'")
            wait_for(lambda: handled(high, "create_fn") == 1, 30, what="the high priority operator's create handler")
            assert handled(low, "create_fn") == 0
            assert RESUMED not in low.read_text(errors="replace")

            # the leader leaves cleanly (SIGINT removes it from the peering): the other one resumes
            high_proc.send_signal(signal.SIGINT)
            high_proc.wait(60)
            wait_for(lambda: "op-high" not in peers(), 60, what="the stopped operator gone from the KopfPeering")
            wait_for(lambda: RESUMED in low.read_text(errors="replace"), 60, what="the other operator resuming")
            cluster.kubectl("apply", "-f", "-", input=webapp(ns, "two", 1))
            wait_for(lambda: get(cluster, ns, "deployment", "two"), 90, what="the Deployment of 'two' by the other one")
            wait_for(lambda: handled(low, "create_fn") == 1, 30, what="the resumed operator's create handler")
            assert handled(high, "create_fn") == 1
