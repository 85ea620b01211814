"""Serverless end to end on a real local cluster (``minik8s up``): a Function uploaded from a file
and invoked through the gateway, a chain of three Functions and a two-branch Workflow
(``examples/serverless``), a CloudEvent and a schedule firing Triggers, 20 concurrent clients
for 30 s (``hey``) scaling a Function out with no failed request and back to zero afterwards,
and an update and a delete.  The cluster's function autoscaler runs with a 20 s stable window
(tests/support/cluster.py)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.support.cluster import E2E_STABLE_WINDOW, Cluster, wait_for

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "serverless"
Obj = dict[str, Any]


NS_PREFIX = "fn"  # the conftest's ns fixture names namespaces fn-<hex>


def call(c: Cluster, path: str, data: Any, timeout: float = 90) -> httpx.Response:
    return httpx.post(f"{c.gateway}{path}", json=data, timeout=timeout)


def function_status(c: Cluster, ns: str, name: str) -> Obj:
    return c.get_json("function", name, "-n", ns).get("status") or {}


def replicas(c: Cluster, ns: str, name: str) -> int:
    return int(c.get_json("deployment", f"fn-{name}", "-n", ns)["spec"].get("replicas") or 0)


def test_upload_from_a_file_invoke_update_delete(cluster: Cluster, ns: str, tmp_path: Path) -> None:
    out = cluster.kubectl("-n", ns, "function", "deploy", "hello", "--from", str(EXAMPLES / "hello.py"),
                          timeout=300).stdout
    assert "function.minik8s.io/hello created" in out and "is ready" in out
    res = cluster.kubectl("-n", ns, "function", "invoke", "hello", "-d", '{"name": "e2e"}', "--gateway",
                          cluster.gateway, timeout=120)
    assert json.loads(res.stdout) == {"greeting": "hello, e2e", "instance": "hello"}

    def table() -> list[str]:
        return cluster.kubectl("get", "functions", "-n", ns).stdout.splitlines()

    assert table()[0].split()[:4] == ["NAME", "READY", "INSTANCES", "URL"]
    wait_for(lambda: table()[1].split()[:3] == ["hello", "True", "1/1"], 60, what="READY True, 1/1 instances")
    # update: a new revision answers, with no failed call meanwhile
    failures: list[str] = []
    greetings: list[str] = []
    stop = threading.Event()

    def caller() -> None:
        while not stop.is_set():
            r = call(cluster, f"/functions/{ns}/hello", {"name": "x"})
            (greetings if r.status_code == 200 else failures).append(r.json().get("greeting") or r.text)

    thread = threading.Thread(target=caller)
    thread.start()
    try:
        newer = tmp_path / "hello.py"
        newer.write_text((EXAMPLES / "hello.py").read_text().replace('f"hello, {name}"', 'f"hi, {name}"'))
        cluster.kubectl("-n", ns, "function", "deploy", "hello", "--from", str(newer), timeout=300)
        wait_for(lambda: greetings[-3:] == ["hi, x"] * 3, 120, what="the new revision answering")
    finally:
        stop.set()
        thread.join()
    assert failures == []
    cluster.kubectl("delete", "function", "hello", "-n", ns)
    wait_for(lambda: call(cluster, f"/functions/{ns}/hello", {}).status_code == 404, 30, what="404 after delete")
    wait_for(lambda: not cluster.get_json("pods", "-n", ns, "-l", "minik8s.io/function=hello")["items"], 90,
             what="function pods removed")
    wait_for(lambda: not [c for c in cluster.get_json("configmaps", "-n", ns)["items"]
                          if c["metadata"].get("labels", {}).get("minik8s.io/function") == "hello"], 60,
             what="revision ConfigMaps removed")


CALLER = """
import json, sys, urllib.request, urllib.error
url = "http://minik8s-gateway.kube-system.svc.cluster.local:%d" + sys.argv[1]
headers = {"Content-Type": "application/json"}
if sys.argv[2] == "token":
    headers["Authorization"] = "Bearer " + open("/var/run/secrets/tokens/gateway").read()
try:
    with urllib.request.urlopen(urllib.request.Request(url, b'{"name": "pod"}', headers), timeout=60) as r:
        print(r.status, r.read().decode())
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode())
"""


def test_pods_call_the_gateway_by_its_cluster_name(cluster: Cluster, ns: str) -> None:
    """A pod with a projected service-account token for audience ``minik8s-gateway`` calls a Function
    through ``minik8s-gateway.kube-system.svc.cluster.local``; without the token it gets 401, and
    another namespace's Function 403."""
    cluster.kubectl("-n", ns, "function", "deploy", "hello", "--from", str(EXAMPLES / "hello.py"), timeout=300)
    port = int(cluster.gateway.rsplit(":", 1)[1])
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "caller"}, "spec": {
        "containers": [{"name": "c", "image": "minik8s/python", "command": ["sleep", "3600"],
                        "volumeMounts": [{"name": "gw", "mountPath": "/var/run/secrets/tokens"}]}],
        "volumes": [{"name": "gw", "projected": {"sources": [{"serviceAccountToken": {
            "path": "gateway", "audience": "minik8s-gateway", "expirationSeconds": 600}}]}}]}}
    cluster.kubectl("apply", "-n", ns, "-f", "-", input=yaml.safe_dump(pod))
    cluster.kubectl("wait", "-n", ns, "--for=condition=Ready", "pod/caller", "--timeout=120s", timeout=150)

    def run(path: str, auth: str) -> tuple[int, Any]:
        out = cluster.kubectl("exec", "-n", ns, "caller", "--", "python3", "-c", CALLER % port, path, auth,
                              timeout=120).stdout.strip()
        code, _, body = out.partition(" ")
        return int(code), json.loads(body)

    assert run(f"/functions/{ns}/hello", "token") == (200, {"greeting": "hello, pod", "instance": "hello"})
    code, body = run(f"/functions/{ns}/hello", "none")
    assert code == 401 and body["reason"] == "Unauthorized", body
    code, body = run("/functions/default/hello", "token")
    assert code == 403 and f"system:serviceaccount:{ns}:default" in body["message"], body
    # gone before the cluster is: the kubelet unmounts the token volume's tmpfs
    cluster.kubectl("delete", "-n", ns, "pod/caller", timeout=150)


def test_workflows_chain_and_branches(cluster: Cluster, ns: str) -> None:
    cluster.kubectl("apply", "-n", ns, "-f", str(EXAMPLES / "functions.yaml"), "-f", str(EXAMPLES / "workflows.yaml"))
    for fn in ("add-one", "double", "square"):
        wait_for(lambda fn=fn: function_status(cluster, ns, fn).get("revision"), 60, what=f"{fn} deployed")
    res = json.loads(cluster.kubectl("-n", ns, "workflow", "run", "chain", "-d", '{"n": 1}', "--gateway",
                                     cluster.gateway, timeout=300).stdout)
    assert res["status"] == "Succeeded" and res["output"] == {"n": 16, "path": ["add-one", "double", "square"]}
    run = cluster.get_json("workflowrun", res["run"], "-n", ns)
    assert [(s["state"], s["input"]["n"], s["output"]["n"]) for s in run["status"]["steps"]] == [
        ("AddOne", 1, 2), ("Double", 2, 4), ("Square", 4, 16)]
    big = call(cluster, f"/workflows/{ns}/branch", {"n": 12}).json()
    small = call(cluster, f"/workflows/{ns}/branch", {"n": 3}).json()
    assert big["output"] == {"n": 24, "path": ["double"]} and small["output"] == {"n": 9, "path": ["square"]}
    steps = cluster.get_json("workflowrun", small["run"], "-n", ns)["status"]["steps"]
    assert [s["state"] for s in steps] == ["Size", "Small"] and steps[0]["next"] == "Small"
    table = cluster.kubectl("get", "workflowruns", "-n", ns).stdout
    assert table.count("Succeeded") == 3


def test_cloudevent_and_schedule_fire_triggers(cluster: Cluster, ns: str) -> None:
    cluster.kubectl("apply", "-n", ns, "-f", str(EXAMPLES / "functions.yaml"))
    triggers = list(yaml.safe_load_all((EXAMPLES / "triggers.yaml").read_text()))
    triggers[1]["spec"]["schedule"] = "* * * * * */5"  # every 5 s (croniter's seconds field) for the test
    cluster.kubectl("apply", "-n", ns, "-f", "-", input=yaml.safe_dump_all(triggers))
    wait_for(lambda: function_status(cluster, ns, "recorder").get("readyInstances") == 1, 120, what="recorder")
    res = cluster.kubectl("-n", ns, "event", "send", "--type", "order.created", "--source", "/shop", "-d",
                          '{"order": 7}', "--gateway", cluster.gateway)
    assert json.loads(res.stdout)["triggers"] == ["orders"]

    def delivered(name: str) -> int:
        return int((cluster.get_json("trigger", name, "-n", ns).get("status") or {}).get("delivered") or 0)

    wait_for(lambda: delivered("orders") >= 1, 60, what="the event delivered")
    wait_for(lambda: delivered("every-minute") >= 2, 60, what="the schedule fired twice")
    seen = call(cluster, f"/functions/{ns}/recorder", {"probe": True}).json()["seen"]
    assert {"event": {"order": 7}, "type": "order.created"} in seen
    assert {"event": {"tick": True}, "type": "dev.minik8s.schedule"} in seen


def test_load_scales_out_and_back_to_zero(cluster: Cluster, ns: str) -> None:
    if not shutil.which("hey"):
        pytest.skip("hey is not installed (apt-get install hey)")
    fn = {"apiVersion": "minik8s.io/v1", "kind": "Function", "metadata": {"name": "work"},
          "spec": {"source": "import time\n\ndef handler(event, context):\n    time.sleep(0.05)\n    return 1\n",
                   "scaling": {"scaleToZeroAfterSeconds": 10}}}
    cluster.kubectl("apply", "-n", ns, "-f", "-", input=yaml.safe_dump(fn))
    wait_for(lambda: function_status(cluster, ns, "work").get("revision"), 60, what="deployed")
    assert call(cluster, f"/functions/{ns}/work", {}).status_code == 200
    peak = 0
    stop = threading.Event()

    def watch() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, len([p for p in cluster.get_json("pods", "-n", ns, "-l", "minik8s.io/function=work")[
                "items"] if (p.get("status") or {}).get("phase") == "Running"]))
            time.sleep(1)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        hey = subprocess.run(["hey", "-c", "20", "-z", "30s", "-m", "POST", "-T", "application/json", "-d", "{}",
                              f"{cluster.gateway}/functions/{ns}/work"], capture_output=True, text=True, timeout=120)
    finally:
        stop.set()
        watcher.join()
    codes = dict(re.findall(r"\[(\d{3})\]\s+(\d+) responses", hey.stdout))
    assert list(codes) == ["200"] and "Error distribution" not in hey.stdout, hey.stdout
    assert peak > 1, f"no scale-out: at most {peak} running instance(s)"
    started = time.monotonic()
    wait_for(lambda: replicas(cluster, ns, "work") == 0, 10 + E2E_STABLE_WINDOW + 30, interval=1,
             what="scaled back to zero")
    assert time.monotonic() - started <= 10 + E2E_STABLE_WINDOW + 30
