"""Pod startup latency: create → Running (seen by a watch), sequential and in a burst,
against raw ``docker run`` of the same containers (pause + app) measured in the same run.

Brings up its own local cluster (``minik8s up`` in a temp dir, free ports, its own pod
network) and tears it down.  Prints one JSON document.  Targets: p50 <= 1.5x the raw
Docker time; burst p99 <= 2 s.

The burst is also compared with 30 raw pause+app pairs started at once from 30 threads:
on a 2-core machine Docker itself needs seconds for that, which bounds what any kubelet can do.

    python -m benchmarks.pod_startup [--sequential 20] [--burst 30]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import docker

from benchmarks.common import local_cluster, percentiles
from minik8s.client.kubeconfig import load
from minik8s.client.rest import Client

IMAGE = "minik8s/busybox:latest"
PAUSE = "minik8s/pause:latest"


def _pod(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"bench": "startup"}},
            "spec": {"terminationGracePeriodSeconds": 1,
                     "containers": [{"name": "app", "image": IMAGE, "command": ["sleep", "3600"]}]}}


def _raw_pod(engine: docker.DockerClient, name: str, network: str) -> float:
    t0 = time.perf_counter()
    pause = engine.containers.run(PAUSE, detach=True, name=f"bench-raw-pause-{name}", network=network,
                                  labels={"minik8s.bench": "raw"})
    app = engine.containers.run(IMAGE, ["sleep", "3600"], detach=True, name=f"bench-raw-app-{name}",
                                network_mode=f"container:{pause.id}", labels={"minik8s.bench": "raw"})
    app.reload()
    assert app.status == "running"
    return time.perf_counter() - t0


def docker_baseline(n: int, network: str, concurrent: bool = False) -> list[float]:
    """Seconds for ``docker run`` of a pause container plus an app container in its namespace,
    one pod after another, or all ``n`` at once from ``n`` threads (the burst baseline)."""
    engine = docker.from_env()
    names = [f"{'c' if concurrent else 's'}{i}" for i in range(n)]
    if concurrent:
        with ThreadPoolExecutor(max_workers=n) as pool:
            samples = list(pool.map(lambda nm: _raw_pod(engine, nm, network), names))
    else:
        samples = [_raw_pod(engine, nm, network) for nm in names]
    for c in engine.containers.list(all=True, filters={"label": "minik8s.bench=raw"}):
        c.remove(force=True)
    return samples


async def measure(client: Client, names: list[str], concurrent: bool) -> list[float]:
    """Create pods; return per-pod seconds from the create call to the watch event showing Running."""
    rt = client.kind("v1", "Pod")
    rv = (await client.list(rt, "default"))["metadata"]["resourceVersion"]
    started: dict[str, float] = {}
    done: dict[str, float] = {}
    finished = asyncio.Event()

    async def watch() -> None:
        async for ev in client.watch(rt, "default", resource_version=rv, label_selector="bench=startup"):
            obj = ev["object"]
            name = obj["metadata"]["name"]
            if name in started and name not in done and (obj.get("status") or {}).get("phase") == "Running":
                done[name] = time.perf_counter() - started[name]
                if len(done) == len(names):
                    finished.set()
                    return

    task = asyncio.create_task(watch())
    await asyncio.sleep(0.3)

    async def create(name: str) -> None:
        started[name] = time.perf_counter()
        await client.create(rt, _pod(name), "default")

    if concurrent:
        await asyncio.gather(*(create(n) for n in names))
        await asyncio.wait_for(finished.wait(), 180)
    else:
        for n in names:
            await create(n)
            while n not in done:
                await asyncio.sleep(0.01)
                if time.perf_counter() - started[n] > 120:
                    raise TimeoutError(f"pod {n} did not start")
    task.cancel()
    await client.delete_collection(rt, "default", label_selector="bench=startup")
    return [done[n] for n in names]


async def run(kubeconfig: Path, sequential: int, burst: int) -> dict[str, Any]:
    async with Client(load(str(kubeconfig))) as client:
        seq = await measure(client, [f"seq-{i}" for i in range(sequential)], concurrent=False)
        await asyncio.sleep(5)  # let the sequential pods terminate
        bur = await measure(client, [f"burst-{i}" for i in range(burst)], concurrent=True)
    return {"sequential": percentiles(seq), "burst": percentiles(bur)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sequential", type=int, default=20)
    parser.add_argument("--burst", type=int, default=30)
    args = parser.parse_args()
    network = "minik8s-bench"
    with local_cluster("bench-node", "10.244.251.0/24", network) as data_dir:
        raw = docker_baseline(args.sequential, network)
        raw_burst = docker_baseline(args.burst, network, concurrent=True)
        pods = asyncio.run(run(data_dir / "kubeconfig", args.sequential, args.burst))
    base, base_burst = percentiles(raw), percentiles(raw_burst)
    result = {"raw_docker_run": base, "raw_docker_run_burst": base_burst, **pods,
              "sequential_p50_vs_docker": round(pods["sequential"]["p50_ms"] / base["p50_ms"], 2),
              "burst_p50_vs_docker_burst": round(pods["burst"]["p50_ms"] / base_burst["p50_ms"], 2),
              "burst_p99_vs_docker_burst": round(pods["burst"]["p99_ms"] / base_burst["p99_ms"], 2)}
    result["targets"] = {"p50<=1.5x_docker": result["sequential_p50_vs_docker"] <= 1.5,
                         "burst_p99<=2s": pods["burst"]["p99_ms"] <= 2000}
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
