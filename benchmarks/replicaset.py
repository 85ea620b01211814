"""ReplicaSet self-healing latency, on a throwaway local cluster (``minik8s up``).

Two ways a replica goes away, ``--tries`` times each (sequentially, a fresh pod each time):

- ``delete``: ``DELETE`` one pod of a 3-replica ReplicaSet → the *replacement pod* (a new
  name) is Running, as seen by a watch.  The path: apiserver → ReplicaSet controller
  (informer, expectations, create) → scheduler → kubelet → Docker.
- ``docker_kill``: ``docker kill`` a pod's app container → the kubelet notices and the
  container runs again (``restartCount`` + 1, state running) — first restart, no back-off.
  After each try the pod is deleted so the next try hits a pod that never restarted.

Baseline in the same run: plain pod startup (create → Running) on the same cluster.
Prints one JSON document.

    python -m benchmarks.replicaset [--tries 10]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import time
from pathlib import Path
from typing import Any

from benchmarks.common import local_cluster, percentiles
from benchmarks.pod_startup import measure
from minik8s.api.base import Obj
from minik8s.client.kubeconfig import load
from minik8s.client.rest import Client

NODE = "bench-rs-node"
LABELS = {"app": "bench-rs"}
SELECTOR = "app=bench-rs"


def replicaset(replicas: int = 3) -> Obj:
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "bench-rs"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": LABELS},
                     "template": {"metadata": {"labels": LABELS}, "spec": {
                         "terminationGracePeriodSeconds": 1,
                         "containers": [{"name": "app", "image": "minik8s/busybox:latest",
                                         "command": ["sleep", "3600"]}]}}}}


def running(pod: Obj) -> bool:
    status = pod.get("status") or {}
    return status.get("phase") == "Running" and not pod["metadata"].get("deletionTimestamp") and \
        all("running" in (cs.get("state") or {}) for cs in status.get("containerStatuses") or [{}])


async def live_pods(client: Client) -> list[Obj]:
    items = (await client.list(client.kind("v1", "Pod"), "default", label_selector=SELECTOR))["items"]
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


async def settle(client: Client, timeout: float = 120) -> list[Obj]:
    """Wait until exactly 3 live pods are Running (terminating ones gone); returns them."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        everything = (await client.list(client.kind("v1", "Pod"), "default", label_selector=SELECTOR))["items"]
        live = [p for p in everything if not p["metadata"].get("deletionTimestamp")]
        if len(everything) == 3 and all(running(p) for p in live):
            return live
        await asyncio.sleep(0.2)
    raise TimeoutError("the ReplicaSet did not settle at 3 running pods")


async def wait_event(client: Client, rv: str, done: Any, timeout: float = 120) -> float:
    """Watch pods from ``rv`` until ``done(pod)``; returns the perf_counter time it happened."""
    async def watch() -> float:
        async for ev in client.watch(client.kind("v1", "Pod"), "default", resource_version=rv,
                                     label_selector=SELECTOR):
            if ev["type"] in ("ADDED", "MODIFIED") and done(ev["object"]):
                return time.perf_counter()
        raise RuntimeError("watch ended")
    return await asyncio.wait_for(watch(), timeout)


async def delete_once(client: Client) -> float:
    pods = await settle(client)
    old = {p["metadata"]["name"] for p in pods}
    rv = (await client.list(client.kind("v1", "Pod"), "default"))["metadata"]["resourceVersion"]
    waiter = asyncio.create_task(wait_event(client, rv, lambda p: p["metadata"]["name"] not in old and running(p)))
    await asyncio.sleep(0.05)
    t0 = time.perf_counter()
    await client.delete(client.kind("v1", "Pod"), sorted(old)[0], "default")
    return await waiter - t0


def app_container(pod: str) -> str:
    out = subprocess.run(["docker", "ps", "-q", "--filter", f"label=io.kubernetes.pod.name={pod}",
                          "--filter", f"label=minik8s.io/node={NODE}", "--filter", "name=k8s_app_"],
                         capture_output=True, text=True, check=True).stdout.split()
    if len(out) != 1:
        raise RuntimeError(f"expected one app container for pod {pod}, found {out}")
    return out[0]


async def kill_once(client: Client) -> float:
    pods = await settle(client)
    victim = next(p for p in pods if not any(cs.get("restartCount") for cs in p["status"]["containerStatuses"]))
    name = victim["metadata"]["name"]
    cid = app_container(name)
    rv = (await client.list(client.kind("v1", "Pod"), "default"))["metadata"]["resourceVersion"]

    def restarted(p: Obj) -> bool:
        cs = (p.get("status") or {}).get("containerStatuses") or [{}]
        return p["metadata"]["name"] == name and cs[0].get("restartCount", 0) >= 1 and "running" in cs[0].get(
            "state", {})

    waiter = asyncio.create_task(wait_event(client, rv, restarted))
    await asyncio.sleep(0.05)
    t0 = time.perf_counter()
    await asyncio.to_thread(subprocess.run, ["docker", "kill", cid], capture_output=True, check=True)
    took = await waiter - t0
    await client.delete(client.kind("v1", "Pod"), name, "default")  # the next try gets a never-restarted pod
    return took


async def run(kubeconfig: Path, tries: int) -> dict[str, Any]:
    async with Client(load(str(kubeconfig))) as client:
        baseline = await measure(client, [f"base-{i}" for i in range(tries)], concurrent=False)
        await client.create(client.kind("apps/v1", "ReplicaSet"), replicaset(), "default")
        deleted = [await delete_once(client) for _ in range(tries)]
        killed = [await kill_once(client) for _ in range(tries)]
        await client.delete(client.kind("apps/v1", "ReplicaSet"), "bench-rs", "default")
    return {"pod_startup_baseline": percentiles(baseline), "replacement_after_delete": percentiles(deleted),
            "restart_after_docker_kill": percentiles(killed),
            "delete_p50_vs_pod_startup": round(percentiles(deleted)["p50_ms"] / percentiles(baseline)["p50_ms"], 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tries", type=int, default=10)
    args = parser.parse_args()
    with local_cluster(NODE, "10.244.252.0/24", "minik8s-bench-rs") as data_dir:
        result = asyncio.run(run(data_dir / "kubeconfig", args.tries))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
