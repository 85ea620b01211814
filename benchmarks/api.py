"""API machinery figures: pod creates/s with p50/p99 at concurrency 32, list latency, watch delivery.

Runs etcd and the apiserver alone (no other component) and measures, in the same
run, raw etcd puts/s through aetcd at the same concurrency as the baseline.
The load generator is aiohttp (httpx costs more CPU per request than the apiserver
does, which would measure the client instead).  Prints one JSON document.
Targets (2-core machine): >= 500 creates/s with p99 <= 100 ms; watch p99 <= 50 ms.

    python -m benchmarks.api [--pods 2000] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from typing import Any

import aetcd
import aiohttp

from benchmarks.common import control_plane, percentiles


async def _run_concurrently(n: int, concurrency: int, op: Any) -> tuple[float, list[float]]:
    latencies: list[float] = []
    counter = iter(range(n))

    async def worker() -> None:
        for i in counter:
            t0 = time.perf_counter()
            await op(i)
            latencies.append(time.perf_counter() - t0)

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - t0, latencies


def _pod(i: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"bench-{i}", "labels": {"app": "bench", "i": str(i)}},
            "spec": {"containers": [{"name": "c", "image": "minik8s/busybox", "command": ["sleep", "3600"],
                                     "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]}}


async def bench(url: str, etcd_port: int, pods: int, concurrency: int) -> dict[str, Any]:
    result: dict[str, Any] = {"pods": pods, "concurrency": concurrency}
    # -- baseline: raw etcd puts of the same payload size through aetcd
    payload = json.dumps(_pod(0)).encode() * 2
    async with aetcd.Client("127.0.0.1", etcd_port) as etcd:
        async def put(i: int) -> None:
            await etcd.put(f"/bench/raw/{i}".encode(), payload)
        elapsed, lat = await _run_concurrently(pods, concurrency, put)
    result["etcd_put_baseline"] = {"per_s": round(pods / elapsed, 1), **percentiles(lat)}

    headers = {"Content-Type": "application/json"}
    async with aiohttp.ClientSession(url, connector=aiohttp.TCPConnector(limit=concurrency)) as h:
        # -- creates
        async def create(i: int) -> None:
            async with h.post("/api/v1/namespaces/default/pods", data=json.dumps(_pod(i)), headers=headers) as r:
                await r.read()
                if r.status != 201:
                    raise RuntimeError(f"create failed: HTTP {r.status}")
        elapsed, lat = await _run_concurrently(pods, concurrency, create)
        result["pod_create"] = {"per_s": round(pods / elapsed, 1), **percentiles(lat)}

        # -- list at N pods
        lat = []
        body: dict[str, Any] = {}
        for _ in range(10):
            t0 = time.perf_counter()
            async with h.get("/api/v1/namespaces/default/pods") as r:
                body = json.loads(await r.read())
            lat.append(time.perf_counter() - t0)
        result["pod_list"] = {"items": len(body["items"]), **percentiles(lat)}

        # -- watch delivery: write -> event received
        rv = body["metadata"]["resourceVersion"]
        sent: dict[str, float] = {}
        delays: list[float] = []
        n_watch = 300
        done = asyncio.Event()

        async def watcher() -> None:
            params = {"watch": "true", "resourceVersion": rv, "labelSelector": "app=bench"}
            async with h.get("/api/v1/namespaces/default/pods", params=params,
                             timeout=aiohttp.ClientTimeout(total=None)) as resp:
                async for line in resp.content:
                    if not line.strip():
                        continue
                    ev = json.loads(line)
                    mark = (ev["object"]["metadata"].get("annotations") or {}).get("mark")
                    if mark in sent:
                        delays.append(time.perf_counter() - sent.pop(mark))
                        if len(delays) == n_watch:
                            done.set()
                            return

        task = asyncio.create_task(watcher())
        await asyncio.sleep(0.5)
        patch_headers = {"Content-Type": "application/merge-patch+json"}
        for i in range(n_watch):
            mark = f"m{i}"
            sent[mark] = time.perf_counter()
            async with h.patch(f"/api/v1/namespaces/default/pods/bench-{i}", headers=patch_headers,
                               data=json.dumps({"metadata": {"annotations": {"mark": mark}}})) as r:
                await r.read()
            await asyncio.sleep(0.005)
        await asyncio.wait_for(done.wait(), 30)
        task.cancel()
        result["watch_delivery"] = percentiles(delays)
    pc = result["pod_create"]
    result["targets"] = {
        "creates_per_s>=500": pc["per_s"] >= 500,
        "create_p99<=100ms": pc["p99_ms"] <= 100,
        "watch_p99<=50ms": result["watch_delivery"]["p99_ms"] <= 50,
    }
    result["create_vs_etcd_put_ratio"] = round(pc["per_s"] / result["etcd_put_baseline"]["per_s"], 3)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pods", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    with control_plane() as (url, etcd_port):
        out = asyncio.run(bench(url, etcd_port, args.pods, args.concurrency))
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
