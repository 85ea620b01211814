"""Watch-cache figures: N concurrent pod watches on one apiserver, with and without the cache.

For each mode (the watch cache on, and ``--no-watch-cache``: one etcd watch per client watch)
runs etcd and the apiserver alone, opens ``--watchers`` watches on pods (one HTTP connection
each, aiohttp), and reports: the apiserver's RSS before and after (MiB, and KiB per watcher),
its CPU time to set the watches up and while they idle (ms per watcher), the etcd watches it
holds, and the fan-out of ``--events`` pod creates: latency from the create request to each
watcher's receipt (p50/p99 over every watcher and event), the time until the last watcher had
each event, and the apiserver's CPU per event.  Prints one JSON document.

    python -m benchmarks.watchcache [--watchers 1000] [--events 20] [--modes cache,nocache]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import time
from pathlib import Path
from typing import Any

import aiohttp

from benchmarks.common import control_plane, percentiles

_TICK = os.sysconf("SC_CLK_TCK")


def _apiserver_pid(port: int) -> int:
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            argv = (d / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"apiserver" in argv and str(port).encode() in argv and b"--etcd-servers" in argv:
            return int(d.name)
    raise RuntimeError(f"no apiserver process on port {port}")


def _rss_mib(pid: int) -> float:
    m = re.search(r"VmRSS:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text())
    return round(int(m.group(1)) / 1024, 1) if m else 0.0


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK  # utime + stime


def _pod(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "wc"}},
            "spec": {"containers": [{"name": "c", "image": "minik8s/busybox", "command": ["sleep", "3600"]}]}}


async def _metric(h: aiohttp.ClientSession, name: str) -> float:
    text = await (await h.get("/metrics")).text()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith(name) and not line.startswith("#"))


async def run_mode(url: str, watchers: int, events: int) -> dict[str, Any]:
    pid = _apiserver_pid(int(url.rsplit(":", 1)[1]))
    out: dict[str, Any] = {}
    created: dict[str, float] = {}
    got: dict[str, list[float]] = {}
    ready = 0
    async with aiohttp.ClientSession(url) as h:
        rv = (await (await h.get("/api/v1/namespaces/default/pods")).json())["metadata"]["resourceVersion"]
        await asyncio.sleep(1.0)
        rss0, cpu0 = _rss_mib(pid), _cpu_s(pid)
        out["rss_before_mib"] = rss0

        async def watch(session: aiohttp.ClientSession) -> None:
            nonlocal ready
            async with session.get("/api/v1/namespaces/default/pods",
                                   params={"watch": "true", "resourceVersion": rv},
                                   timeout=aiohttp.ClientTimeout(total=None)) as resp:
                ready += 1
                async for line in resp.content:
                    if not line.strip():
                        continue
                    t = time.perf_counter()
                    name = json.loads(line)["object"]["metadata"]["name"]
                    got.setdefault(name, []).append(t)

        connector = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(url, connector=connector) as ws:
            t0 = time.perf_counter()
            tasks = [asyncio.create_task(watch(ws)) for _ in range(watchers)]
            while ready < watchers:
                await asyncio.sleep(0.05)
            out["setup_s"] = round(time.perf_counter() - t0, 2)
            await asyncio.sleep(2.0)
            rss1, cpu1 = _rss_mib(pid), _cpu_s(pid)
            out["rss_after_mib"] = rss1
            out["rss_per_watcher_kib"] = round((rss1 - rss0) * 1024 / watchers, 1)
            out["setup_cpu_ms_per_watcher"] = round((cpu1 - cpu0) * 1000 / watchers, 2)
            out["etcd_watches"] = await _metric(h, "apiserver_storage_etcd_watches")
            await asyncio.sleep(5.0)
            cpu2 = _cpu_s(pid)
            out["idle_cpu_ms_per_s"] = round((cpu2 - cpu1) * 1000 / 5.0, 1)
            for i in range(events):
                name = f"wc-{os.getpid()}-{i}"
                created[name] = time.perf_counter()
                resp = await h.post("/api/v1/namespaces/default/pods", json=_pod(name))
                assert resp.status == 201, await resp.text()
                deadline = time.perf_counter() + 30
                while len(got.get(name, [])) < watchers and time.perf_counter() < deadline:
                    await asyncio.sleep(0.005)
            cpu3 = _cpu_s(pid)
            out["cpu_ms_per_event"] = round((cpu3 - cpu2) * 1000 / events, 1)
            out["cpu_us_per_event_per_watcher"] = round((cpu3 - cpu2) * 1e6 / events / watchers, 1)
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        lat = [t - created[n] for n in created for t in got.get(n, [])]
        last = [max(got[n]) - created[n] for n in created if got.get(n)]
        out["delivered"] = f"{len(lat)}/{watchers * events}"
        out["fanout_latency"] = percentiles(lat)
        out["last_watcher_latency"] = percentiles(last)
        for name in created:
            await h.delete(f"/api/v1/namespaces/default/pods/{name}", params={"gracePeriodSeconds": "0"})
    return out


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    result: dict[str, Any] = {"watchers": args.watchers, "events": args.events}
    flags = {"cache": (), "nocache": ("--no-watch-cache",)}
    for mode in args.modes.split(","):
        with control_plane(*flags[mode]) as (url, _etcd_port):
            result[mode] = await run_mode(url, args.watchers, args.events)
    return result


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--watchers", type=int, default=1000)
    p.add_argument("--events", type=int, default=20)
    p.add_argument("--modes", default="cache,nocache")
    args = p.parse_args()
    print(json.dumps(asyncio.run(main_async(args)), indent=2))


if __name__ == "__main__":
    main()
