"""Resource usage of the node and its pods, as Kubernetes' Summary API (``GET /stats/summary``).

What the HorizontalPodAutoscaler's metrics need: per container and per pod
``cpu.usageNanoCores`` (cores × 10⁹, averaged since the previous sample) and
``cpu.usageCoreNanoSeconds`` (cumulative), ``memory.usageBytes`` and
``memory.workingSetBytes`` (usage minus inactive file cache, what Kubernetes
autoscales and evicts on).  Numbers come from the containers' cgroups (v1
``cpuacct``/``memory`` or v2 ``cpu.stat``/``memory.current``, cgroupfs or systemd
layout), falling back to ``docker stats``.  The node's numbers come from
``/proc/stat`` and ``/proc/meminfo``.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from pathlib import Path

from minik8s.api.base import Obj, now_rfc3339
from minik8s.kubelet.node import read_meminfo
from minik8s.kubelet.runtime import DockerRuntime, RuntimeErrorBase

CGROUP = Path("/sys/fs/cgroup")
SAMPLE_GAP = 1.0  # seconds: the shortest window a CPU rate is averaged over
MAX_WINDOW = 300.0  # seconds: an older sample is too old to average over


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _read_stat(path: Path) -> dict[str, int]:
    out: dict[str, int] = {}
    try:
        for line in path.read_text().splitlines():
            key, _, value = line.partition(" ")
            if value.strip().isdigit():
                out[key] = int(value)
    except OSError:
        pass
    return out


def cgroup_usage(container_id: str, root: Path = CGROUP) -> tuple[int | None, int | None, int | None]:
    """``(cpu nanoseconds, memory bytes, working set bytes)`` of a Docker container from its cgroup."""
    leaves = [f"docker/{container_id}", f"system.slice/docker-{container_id}.scope"]
    for leaf in leaves:  # cgroup v2 (unified)
        base = root / leaf
        if (base / "cpu.stat").exists():
            cpu_us = _read_stat(base / "cpu.stat").get("usage_usec")
            mem = _read_int(base / "memory.current")
            inactive = _read_stat(base / "memory.stat").get("inactive_file", 0)
            return (cpu_us * 1000 if cpu_us is not None else None, mem,
                    max(mem - inactive, 0) if mem is not None else None)
    cpu = mem = ws = None
    for ctrl in ("cpuacct", "cpu,cpuacct", "cpu"):
        for leaf in leaves:
            value = _read_int(root / ctrl / leaf / "cpuacct.usage")
            if value is not None:
                cpu = value
                break
        if cpu is not None:
            break
    for leaf in leaves:
        base = root / "memory" / leaf
        mem = _read_int(base / "memory.usage_in_bytes")
        if mem is not None:
            stat = _read_stat(base / "memory.stat")
            inactive = stat.get("total_inactive_file", stat.get("inactive_file", 0))
            ws = max(mem - inactive, 0)
            break
    return cpu, mem, ws


def node_cpu_nanoseconds() -> int | None:
    """CPU time spent by the whole node (all CPUs, not idle/iowait), in nanoseconds."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
        ticks = [int(x) for x in fields]
    except (OSError, ValueError, IndexError):
        return None
    busy = sum(ticks) - ticks[3] - (ticks[4] if len(ticks) > 4 else 0)
    return busy * 1_000_000_000 // os.sysconf("SC_CLK_TCK")


class StatsProvider:
    """Builds the Summary API document; remembers recent CPU samples per container (and the node), so
    that each rate is averaged over at least :data:`SAMPLE_GAP`: over a shorter window the CFS
    quota's period boundaries and the timing of the reads make up too much of it."""

    def __init__(self, runtime: DockerRuntime, node_name: str, pods: Callable[[], list[Obj]],
                 pod_status: Callable[[Obj], Obj]) -> None:
        self.runtime = runtime
        self.node_name = node_name
        self.pods = pods
        self.pod_status = pod_status
        self._prev: dict[str, list[tuple[float, int]]] = {}
        # One summary at a time: each one forgets the samples of containers it does not see, so an
        # overlapping one (the apiserver's scraper and another caller) would lose the other's base.
        self._summary_lock = asyncio.Lock()

    async def _usage(self, container_id: str) -> tuple[int | None, int | None, int | None, float]:
        """``(cpu ns, memory bytes, working set bytes, when)``: ``when`` is the monotonic time the
        counters were read (the middle of the read), so a rate divides by the time between two reads
        (not by when a busy event loop or thread got round to them)."""

        def read() -> tuple[int | None, int | None, int | None, float]:
            before = time.monotonic()
            usage = cgroup_usage(container_id)
            return (*usage, (before + time.monotonic()) / 2)

        cpu, mem, ws, when = await asyncio.to_thread(read)
        if cpu is None and mem is None:
            try:
                raw = await self.runtime.call(self.runtime.api.stats, container_id, stream=False, one_shot=True)
            except RuntimeErrorBase:
                return None, None, None, time.monotonic()
            when = time.monotonic()
            cpu = ((raw.get("cpu_stats") or {}).get("cpu_usage") or {}).get("total_usage") or None
            memstats = raw.get("memory_stats") or {}
            mem = memstats.get("usage")
            inactive = (memstats.get("stats") or {}).get("total_inactive_file",
                                                         (memstats.get("stats") or {}).get("inactive_file", 0))
            ws = max(mem - inactive, 0) if mem is not None else None
        return cpu, mem, ws, when

    def _rate(self, key: str, now: float, cpu: int | None) -> int | None:
        """Nanocores of ``key`` from its sample ``(now, cpu)``: averaged since the newest earlier
        sample at least :data:`SAMPLE_GAP` old (else the oldest one); None without an earlier sample
        (or when the counter went back: a new container under the same key)."""
        if cpu is None:
            return None
        samples = [(t, c) for t, c in self._prev.get(key, []) if 0 < now - t <= MAX_WINDOW and c <= cpu]
        old_enough = [(t, c) for t, c in samples if now - t >= SAMPLE_GAP]
        base = old_enough[-1] if old_enough else (samples[0] if samples else None)
        # Keep the base and what is newer: the next rate's base is among them.
        self._prev[key] = [s for s in samples if base is not None and s[0] >= base[0]] + [(now, cpu)]
        if base is None:
            return None
        return int((cpu - base[1]) / (now - base[0]))

    async def summary(self) -> Obj:
        """``{"node": {...}, "pods": [...]}`` in the Summary API's shape (times RFC 3339); concurrent
        calls are served one after the other."""
        async with self._summary_lock:
            return await self._summary()

    async def _summary(self) -> Obj:
        targets: list[tuple[Obj, str, str, str | None]] = []  # pod, container name, id, startedAt
        for pod in self.pods():
            for cs in self.pod_status(pod).get("containerStatuses") or []:
                running = (cs.get("state") or {}).get("running")
                if running is not None and cs.get("containerID"):
                    targets.append((pod, cs["name"], cs["containerID"].split("://", 1)[-1], running.get("startedAt")))
        usage = {}
        for _, _, cid, _ in targets:
            usage[cid] = await self._usage(cid)
        node_cpu, node_at = node_cpu_nanoseconds(), time.monotonic()
        if any(cid not in self._prev for _, _, cid, _ in targets) or "__node__" not in self._prev:
            for cid, (cpu, _, _, at) in usage.items():
                self._rate(cid, at, cpu)
            self._rate("__node__", node_at, node_cpu)
            await asyncio.sleep(SAMPLE_GAP)
            for _, _, cid, _ in targets:
                usage[cid] = await self._usage(cid)
            node_cpu, node_at = node_cpu_nanoseconds(), time.monotonic()
        stamp = now_rfc3339()
        pods: dict[str, Obj] = {}
        for pod, name, cid, started in targets:
            cpu, mem, ws, at = usage[cid]
            meta = pod["metadata"]
            entry = pods.setdefault(meta["uid"], {
                "podRef": {"name": meta["name"], "namespace": meta["namespace"], "uid": meta["uid"]},
                "startTime": (pod.get("status") or {}).get("startTime"), "containers": []})
            entry["containers"].append({
                "name": name, "startTime": started,
                "cpu": _clean({"time": stamp, "usageNanoCores": self._rate(cid, at, cpu),
                               "usageCoreNanoSeconds": cpu}),
                "memory": _clean({"time": stamp, "usageBytes": mem, "workingSetBytes": ws}),
            })
        for entry in pods.values():
            entry["cpu"] = {"time": stamp, **_sum(entry["containers"], "cpu", ("usageNanoCores",
                                                                                   "usageCoreNanoSeconds"))}
            entry["memory"] = {"time": stamp, **_sum(entry["containers"], "memory",
                                                     ("usageBytes", "workingSetBytes"))}
        known = {cid for _, _, cid, _ in targets} | {"__node__"}
        for key in [k for k in self._prev if k not in known]:
            del self._prev[key]
        mem_info = read_meminfo()
        total, available = mem_info.get("MemTotal", 0), mem_info.get("MemAvailable", 0)
        node = {"nodeName": self.node_name,
                "cpu": _clean({"time": stamp, "usageNanoCores": self._rate("__node__", node_at, node_cpu),
                               "usageCoreNanoSeconds": node_cpu}),
                "memory": {"time": stamp, "availableBytes": available, "usageBytes": total - available,
                           "workingSetBytes": total - available}}
        return {"node": node, "pods": list(pods.values())}


def _clean(d: Obj) -> Obj:
    return {k: v for k, v in d.items() if v is not None}


def _sum(containers: list[Obj], section: str, keys: tuple[str, ...]) -> Obj:
    out: Obj = {}
    for key in keys:
        values = [c[section][key] for c in containers if key in c[section]]
        if values:
            out[key] = sum(values)
    return out
