"""CustomResourceDefinition figures: CRD applied → custom resource creatable, and CR creates/s
against ConfigMap creates/s in the same run.

Runs etcd and the apiserver alone.  *Establish latency*: from the POST of a new CRD until the first
POST of a custom resource of it answers 201 (polled every 5 ms), median over ``--crds`` CRDs.
*Create rate*: ``--objects`` creates at concurrency ``--concurrency`` through aiohttp, of ConfigMaps
(the baseline) and of custom resources of similar size validated by a small structural schema.
Prints one JSON document.

    python -m benchmarks.crd [--crds 10] [--objects 1000] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from typing import Any

import aiohttp

from benchmarks.common import control_plane, percentiles

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
JSON = {"Content-Type": "application/json"}


def _crd(i: int) -> dict[str, Any]:
    group = f"b{i}.bench.example.com"
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "mode": {"type": "string"}, "size": {"type": "integer", "default": 1},
        "tags": {"type": "array", "items": {"type": "string"}}}}}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"widgets.{group}"},
            "spec": {"group": group, "scope": "Namespaced",
                     "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": schema}, "subresources": {"status": {}}}]}}


async def _establish(h: aiohttp.ClientSession, i: int) -> float:
    crd = _crd(i)
    group = crd["spec"]["group"]
    t0 = time.perf_counter()
    async with h.post(CRDS, json=crd, headers=JSON) as r:
        assert r.status == 201, await r.text()
    body = {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": "first"}, "spec": {"mode": "x"}}
    while True:
        async with h.post(f"/apis/{group}/v1/namespaces/default/widgets", json=body, headers=JSON) as r:
            if r.status == 201:
                return time.perf_counter() - t0
            await r.read()
        await asyncio.sleep(0.005)


async def _rate(h: aiohttp.ClientSession, path: str, make: Any, n: int, concurrency: int) -> dict[str, Any]:
    latencies: list[float] = []
    counter = iter(range(n))

    async def worker() -> None:
        for i in counter:
            t0 = time.perf_counter()
            async with h.post(path, json=make(i), headers=JSON) as r:
                assert r.status == 201, await r.text()
            latencies.append(time.perf_counter() - t0)

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return {"per_s": round(n / (time.perf_counter() - t0), 1), **percentiles(latencies)}


async def bench(url: str, crds: int, objects: int, concurrency: int) -> dict[str, Any]:
    out: dict[str, Any] = {"crds": crds, "objects": objects, "concurrency": concurrency}
    async with aiohttp.ClientSession(url, connector=aiohttp.TCPConnector(limit=concurrency)) as h:
        lat = [await _establish(h, i) for i in range(crds)]
        out["crd_to_creatable_ms"] = {"median": round(statistics.median(lat) * 1000, 1),
                                      "max": round(max(lat) * 1000, 1)}
        data = {"mode": "fast", "size": "3", "tags": "a,b,c"}
        out["configmap_create"] = await _rate(
            h, "/api/v1/namespaces/default/configmaps",
            lambda i: {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{i}"}, "data": data},
            objects, concurrency)
        group = _crd(0)["spec"]["group"]
        out["custom_resource_create"] = await _rate(
            h, f"/apis/{group}/v1/namespaces/default/widgets",
            lambda i: {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": f"w-{i}"},
                       "spec": {"mode": "fast", "size": 3, "tags": ["a", "b", "c"]}},
            objects, concurrency)
    out["cr_vs_configmap_ratio"] = round(out["custom_resource_create"]["per_s"] / out["configmap_create"]["per_s"], 3)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--crds", type=int, default=10)
    parser.add_argument("--objects", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    with control_plane() as (url, _etcd_port):
        out = asyncio.run(bench(url, args.crds, args.objects, args.concurrency))
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
