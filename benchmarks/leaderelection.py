"""Leader loss → the new leader's first action, with client-go's default timings.

A throwaway etcd + apiserver, one fake Ready Node (only written as data: nothing runs pods) and
two ``minik8s scheduler`` processes campaigning for Lease ``kube-system/kube-scheduler`` with
kube-scheduler's defaults (lease 15 s, renew deadline 10 s, retry 2 s).  Each run:

- ``sigkill``: the leader is SIGKILLed and a pending pod created at once; measured: the kill →
  the pod bound by the other scheduler (its first action as leader).  Expected: within the lease
  duration (the follower waits 15 s after the last renewal it saw) plus up to a jittered retry.
- ``sigterm`` (baseline, same cluster): the leader stops cleanly and releases the lease
  (ReleaseOnCancel); the follower takes over at its next retry (≤ 2 s × 2.2).
- ``live``: a pod bound by a running leader (create → bound), the scheduling path itself.

The stopped scheduler is started again as the follower for the next run.  Prints one JSON document.

    python -m benchmarks.leaderelection [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import control_plane
from minik8s.api import errors
from minik8s.client.kubeconfig import render
from minik8s.client.leaderelection import holder
from minik8s.client.rest import Client

NODE = "bench-le-node"


class Scheduler:
    def __init__(self, kubeconfig: Path, log: Path) -> None:
        self.log = log
        with open(log, "wb") as out:
            self.proc = subprocess.Popen([sys.executable, "-m", "minik8s", "scheduler", "--kubeconfig",
                                          str(kubeconfig)], stdout=out, stderr=subprocess.STDOUT)

    def identity(self) -> str | None:
        m = re.search(r"leader election on lease \S+ as (\S+)", self.log.read_text())
        return m.group(1) if m else None


async def poll(pred: Any, timeout: float = 60.0, interval: float = 0.02) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = await pred()
            if value:
                return value
        except errors.APIError:
            pass
        await asyncio.sleep(interval)
    raise TimeoutError("condition not met")


async def bench(url: str, runs: int, workdir: Path) -> dict[str, Any]:
    kubeconfig = workdir / "kubeconfig"
    kubeconfig.write_text(render(url))
    async with Client.from_kubeconfig(str(kubeconfig)) as client:
        node_rt, pod_rt = client.kind("v1", "Node"), client.kind("v1", "Pod")
        lease_rt = client.kind("coordination.k8s.io/v1", "Lease")
        status = {"allocatable": {"cpu": "64", "memory": "64Gi", "pods": "500"},
                  "capacity": {"cpu": "64", "memory": "64Gi", "pods": "500"},
                  "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}
        node = await client.create(node_rt, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE}})
        node["status"] = status
        await client.update_status(node_rt, node)
        schedulers = [Scheduler(kubeconfig, workdir / f"scheduler-{i}.log") for i in range(2)]
        counter = 0

        async def leader() -> Scheduler | None:
            current = holder(await client.get(lease_rt, "kube-scheduler", "kube-system"))
            return next((s for s in schedulers if s.proc.poll() is None and s.identity() == current), None)

        async def bound_after(start: float) -> float:
            nonlocal counter
            counter += 1
            name = f"p{counter}"
            await client.create(pod_rt, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                                         "spec": {"containers": [{"name": "c", "image": "minik8s/busybox"}]}},
                                "default")

            async def bound() -> bool:
                return bool((await client.get(pod_rt, name, "default"))["spec"].get("nodeName"))
            await poll(bound)
            return round(time.monotonic() - start, 3)

        results: dict[str, list[float]] = {"live": [], "sigterm": [], "sigkill": []}
        try:
            for _ in range(runs):
                for how in ("sigterm", "sigkill"):
                    current = await poll(leader)
                    # both candidates campaigning before the leader goes
                    await poll(lambda: _async(all(s.identity() for s in schedulers)))
                    results["live"].append(await bound_after(time.monotonic()))
                    start = time.monotonic()
                    current.proc.send_signal(signal.SIGTERM if how == "sigterm" else signal.SIGKILL)
                    results[how].append(await bound_after(start))
                    current.proc.wait(15)
                    index = schedulers.index(current)
                    schedulers[index] = Scheduler(kubeconfig, workdir / f"scheduler-{index}-{counter}.log")
        finally:
            for s in schedulers:
                s.proc.terminate()
                s.proc.wait(15)
        return {"timings": {"lease_duration_s": 15, "renew_deadline_s": 10, "retry_period_s": 2},
                "runs": runs, "seconds": results,
                "summary": {k: {"min": min(v), "max": max(v), "mean": round(sum(v) / len(v), 3)}
                            for k, v in results.items() if v}}


async def _async(value: Any) -> Any:
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="minik8s-bench-le-") as tmp, control_plane() as (url, _):
        print(json.dumps(asyncio.run(bench(url, args.runs, Path(tmp))), indent=2))


if __name__ == "__main__":
    main()
