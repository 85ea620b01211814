"""Serverless figures on a local cluster (``minik8s up``), each against a baseline in the same run:

* **cold start**: a call to a Function scaled to zero until its first response, p50/p95 over
  ``--cold`` Functions — against a plain pod (the same ``minik8s/python`` image serving HTTP)
  from create until it first answers;
* **warm latency**: sequential calls through the gateway against the same calls sent to the
  pod's IP directly (added ms at p50/p99);
* **throughput**: requests/s at 20 concurrent clients for ``--seconds`` through the gateway
  against direct calls to one pod (``hey``);
* **scaling**: from the start of a 20-client load until the Function has more than one
  answering instance, and from the end of the load until it is back to zero.

Targets (issue 10): cold start p95 <= 1.5 s, warm overhead <= 5 ms p50, gateway throughput
>= 0.8x direct.  Prints one JSON document.  Traffic goes to 127.0.0.1 and to this machine's pod
IPs only; every load is bounded in time.

    python -m benchmarks.serverless [--cold 10] [--warm 300] [--seconds 10]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import yaml

from benchmarks.common import local_cluster, percentiles
from minik8s.client.kubeconfig import load
from minik8s.cluster.processes import free_port

STABLE_WINDOW = 12
SOURCE = "def handler(event, context):\n    return {'ok': True}\n"


def kubectl(data_dir: Path, *args: str, input: str | None = None) -> str:
    proc = subprocess.run([sys.executable, "-m", "minik8s.kubectl", "--kubeconfig", str(data_dir / "kubeconfig"),
                           *args], capture_output=True, text=True, input=input, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"kubectl {' '.join(args)}: {proc.stderr.strip()}")
    return proc.stdout


def get(data_dir: Path, *args: str) -> Any:
    return json.loads(kubectl(data_dir, "get", *args, "-o", "json"))


def wait(pred: Any, timeout: float, what: str, interval: float = 0.2) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if pred():
                return
        except (RuntimeError, KeyError, ValueError):
            pass
        time.sleep(interval)
    raise TimeoutError(f"{what} not reached in {timeout:.0f}s")


def function(name: str, **scaling: Any) -> dict[str, Any]:
    return {"apiVersion": "minik8s.io/v1", "kind": "Function", "metadata": {"name": name},
            "spec": {"source": SOURCE, "scaling": {"scaleToZeroAfterSeconds": 5, **scaling}}}


def plain_pod(name: str) -> dict[str, Any]:
    server = ("import http.server\nclass H(http.server.BaseHTTPRequestHandler):\n"
              "    def do_GET(self):\n        self.send_response(200); self.end_headers()\n"
              "http.server.HTTPServer(('0.0.0.0', 8080), H).serve_forever()\n")
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"bench": "plain"}},
            "spec": {"terminationGracePeriodSeconds": 1,
                     "containers": [{"name": "app", "image": "minik8s/python:latest",
                                     "command": ["python3", "-c", server]}]}}


def cold_starts(d: Path, gateway: str, n: int) -> list[float]:
    kubectl(d, "apply", "-f", "-", input=yaml.safe_dump_all([function(f"cold-{i}") for i in range(n)]))
    for i in range(n):
        wait(lambda i=i: get(d, "function", f"cold-{i}").get("status", {}).get("revision"), 60, "deployed")
    samples = []
    for i in range(n):
        t0 = time.perf_counter()
        r = httpx.post(f"{gateway}/functions/default/cold-{i}", json={}, timeout=60)
        samples.append(time.perf_counter() - t0)
        assert r.status_code == 200, r.text
    return samples


def plain_pod_starts(d: Path, n: int) -> list[float]:
    """Create → first HTTP answer of a plain pod, through the REST API directly (no CLI start-up)."""
    config = load(str(d / "kubeconfig"))
    samples = []
    with httpx.Client(base_url=f"{config.server}/api/v1/namespaces/default/pods", timeout=10,
                      verify=config.ssl_context()) as rest:
        for i in range(n):
            name = f"plain-{i}"
            t0 = time.perf_counter()
            rest.post("", json=plain_pod(name)).raise_for_status()
            ip = ""
            while time.perf_counter() - t0 < 60:
                if not ip:
                    ip = (rest.get(f"/{name}").json().get("status") or {}).get("podIP") or ""
                else:
                    try:
                        if httpx.get(f"http://{ip}:8080/", timeout=0.5).status_code == 200:
                            break
                    except httpx.HTTPError:
                        pass
                time.sleep(0.01)
            else:
                raise TimeoutError(f"pod {name} did not answer in 60s")
            samples.append(time.perf_counter() - t0)
            rest.delete(f"/{name}")
    return samples


def warm(gateway: str, direct: str, n: int) -> dict[str, Any]:
    out = {}
    for label, url in (("gateway", gateway), ("direct", direct)):
        with httpx.Client(timeout=10) as http:
            for _ in range(20):
                http.post(url, json={})
            samples = []
            for _ in range(n):
                t0 = time.perf_counter()
                r = http.post(url, json={})
                samples.append(time.perf_counter() - t0)
                assert r.status_code == 200
        out[label] = percentiles(samples)
    out["added_p50_ms"] = round(out["gateway"]["p50_ms"] - out["direct"]["p50_ms"], 2)
    out["added_p99_ms"] = round(out["gateway"]["p99_ms"] - out["direct"]["p99_ms"], 2)
    return out


def hey(url: str, seconds: int) -> dict[str, Any]:
    proc = subprocess.run(["hey", "-c", "20", "-z", f"{seconds}s", "-m", "POST", "-T", "application/json", "-d",
                           "{}", url], capture_output=True, text=True, timeout=seconds + 60)
    rps = re.search(r"Requests/sec:\s+([\d.]+)", proc.stdout)
    codes = dict(re.findall(r"\[(\d{3})\]\s+(\d+) responses", proc.stdout))
    return {"requests_per_s": float(rps.group(1)) if rps else 0.0, "status_codes": codes,
            "errors": "Error distribution" in proc.stdout}


def scaling(d: Path, gateway: str, seconds: int) -> dict[str, Any]:
    kubectl(d, "apply", "-f", "-", input=yaml.safe_dump(function("scale", targetConcurrency=5, maxScale=4)))
    wait(lambda: get(d, "function", "scale").get("status", {}).get("revision"), 60, "deployed")
    httpx.post(f"{gateway}/functions/default/scale", json={}, timeout=60)
    load = subprocess.Popen(["hey", "-c", "20", "-z", f"{seconds}s", "-m", "POST", "-T", "application/json", "-d",
                             "{}", f"{gateway}/functions/default/scale"], stdout=subprocess.DEVNULL)
    t0 = time.perf_counter()
    start = httpx.get(f"{gateway}/metrics", timeout=10).json()["functions"].get("default/scale") or {}
    try:
        wait(lambda: (get(d, "function", "scale").get("status", {}).get("readyInstances") or 0) > 1, seconds + 30,
             "scale-out", interval=0.25)
        out_s: float | None = time.perf_counter() - t0
    except TimeoutError:
        out_s = None
    load.wait(seconds + 60)
    end = httpx.get(f"{gateway}/metrics", timeout=10).json()["functions"].get("default/scale") or {}
    # the autoscaler's metric: average concurrency over the load (concurrency-seconds per second)
    busy = (end.get("concurrencySeconds", 0) - start.get("concurrencySeconds", 0)) / max(seconds, 1)
    if out_s is None:
        return {"scale_out_s": None, "average_concurrency": round(busy, 2), "error": "no scale-out"}
    t1 = time.perf_counter()
    wait(lambda: get(d, "deployment", "fn-scale")["spec"].get("replicas") == 0, 5 + STABLE_WINDOW + 60,
         "scale to zero", interval=0.5)
    return {"scale_out_s": round(out_s, 2), "average_concurrency": round(busy, 2),
            "to_zero_after_load_s": round(time.perf_counter() - t1, 2),
            "scale_to_zero_after_seconds": 5, "stable_window_s": STABLE_WINDOW}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cold", type=int, default=10)
    parser.add_argument("--warm", type=int, default=300)
    parser.add_argument("--seconds", type=int, default=10)
    args = parser.parse_args()
    if not shutil.which("hey"):
        sys.exit("benchmarks.serverless needs hey (apt-get install hey)")
    port = free_port()
    gateway = f"http://127.0.0.1:{port}"
    result: dict[str, Any] = {"benchmark": "serverless"}
    with local_cluster("bench-fn", "10.244.251.0/24", "minik8s-bench-fn", "--gateway-port", str(port),
                       f"--controller-manager-arg=--function-autoscaler-stable-window={STABLE_WINDOW}s") as d:
        plain = plain_pod_starts(d, args.cold)
        cold = cold_starts(d, gateway, args.cold)
        result["cold_start"] = {"function": percentiles(cold), "plain_pod": percentiles(plain),
                                "p95_ms": round(sorted(cold)[int(0.95 * (len(cold) - 1))] * 1000, 1),
                                "target_p95_ms": 1500}
        kubectl(d, "apply", "-f", "-", input=yaml.safe_dump(function("warm", minScale=1)))
        wait(lambda: (get(d, "function", "warm").get("status", {}).get("readyInstances") or 0) == 1, 90, "warm ready")
        pod = get(d, "pods", "-l", "minik8s.io/function=warm")["items"][0]
        direct = f"http://{pod['status']['podIP']}:8080/"
        fn_url = f"{gateway}/functions/default/warm"
        result["warm"] = {**warm(fn_url, direct, args.warm), "target_added_p50_ms": 5}
        through_gw, through_direct = hey(fn_url, args.seconds), hey(direct, args.seconds)
        result["throughput_c20"] = {"gateway": through_gw, "direct": through_direct,
                                    "ratio": round(through_gw["requests_per_s"] /
                                                   max(through_direct["requests_per_s"], 1e-9), 3),
                                    "target_ratio": 0.8}
        result["scaling"] = scaling(d, gateway, max(args.seconds, 15))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
