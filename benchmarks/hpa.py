"""HorizontalPodAutoscaler reaction time, on a throwaway local cluster (``minik8s up``).

A one-replica CPU burner (``examples/workloads/cpu-burner.yaml``: 100m request, 200m
limit, idle until its switch file exists) and an HPA (cpu 50 %, 1..2 replicas, scale-down
without stabilization) run until the HPA reports a valid, low metric.  Then the load is
switched on and the time until the HPA has set the Deployment to 2 replicas is measured
(``--tries`` times; between tries the load goes off and the HPA scales back to 1).

The reaction is bounded by how the signal travels: the kubelet's CPU rate (averaged since
the previous scrape), the apiserver's metrics scrape every ``--metrics-resolution`` (15 s),
the HPA sync every ``--horizontal-pod-autoscaler-sync-period`` (15 s).  The worst case
``2 × resolution + sync period`` (a scrape window mostly before the load started, then
one more scrape, then the next sync) is printed as the baseline to compare with.  Load
is bounded: at most 2 pods × 200m, for about a minute per try.

    python -m benchmarks.hpa [--tries 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from benchmarks.common import local_cluster, percentiles
from minik8s.api.base import Obj
from minik8s.client.kubeconfig import load
from minik8s.client.rest import Client

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "workloads"
RESOLUTION = 15.0  # the cluster's metrics resolution and HPA sync period (minik8s defaults)
SYNC_PERIOD = 15.0


def manifests(switch: str) -> tuple[Obj, Obj]:
    """The examples' burner Deployment (switched by ``switch``) and an HPA for it (max 2, fast scale-down)."""
    deploy = yaml.safe_load((EXAMPLES / "cpu-burner.yaml").read_text())
    deploy["spec"]["template"]["spec"]["volumes"][0]["hostPath"]["path"] = switch
    hpa = yaml.safe_load((EXAMPLES / "hpa.yaml").read_text())
    hpa["spec"]["maxReplicas"] = 2
    hpa["spec"]["metrics"] = hpa["spec"]["metrics"][:1]
    hpa["spec"]["behavior"] = {"scaleUp": {"stabilizationWindowSeconds": 0,
                                           "policies": [{"type": "Pods", "value": 1, "periodSeconds": 15}]},
                               "scaleDown": {"stabilizationWindowSeconds": 0,
                                             "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}}
    return deploy, hpa


async def wait(pred: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if await pred():
            return
        await asyncio.sleep(0.2)
    raise TimeoutError(f"timed out waiting for {what}")


async def run(kubeconfig: Path, switch: Path, tries: int) -> dict[str, Any]:
    async with Client(load(str(kubeconfig))) as client:
        dep_rt = client.kind("apps/v1", "Deployment")
        hpa_rt = client.kind("autoscaling/v2", "HorizontalPodAutoscaler")
        deploy, hpa = manifests(str(switch))
        await client.create(dep_rt, deploy, "default")
        await client.create(hpa_rt, hpa, "default")

        async def replicas() -> int:
            return int((await client.get(dep_rt, "cpu-burner", "default"))["spec"]["replicas"])

        async def calm() -> bool:  # one replica and the HPA sees a valid, low cpu metric
            status = (await client.get(hpa_rt, "cpu-burner", "default")).get("status") or {}
            metrics = status.get("currentMetrics") or [{}]
            util = ((metrics[0].get("resource") or {}).get("current") or {}).get("averageUtilization")
            return await replicas() == 1 and status.get("currentReplicas") == 1 and util is not None and util < 20

        samples = []
        for _ in range(tries):
            (switch / "on").unlink(missing_ok=True)
            await wait(calm, 300, "a calm, measured single replica")
            (switch / "on").touch()
            t0 = time.monotonic()

            async def scaled() -> bool:
                return await replicas() == 2

            await wait(scaled, 180, "the scale-up")
            samples.append(time.monotonic() - t0)
        (switch / "on").unlink(missing_ok=True)
        await client.delete(hpa_rt, "cpu-burner", "default")
        await client.delete(dep_rt, "cpu-burner", "default")
    return {"reaction_load_start_to_scale_up": percentiles(samples),
            "bound_2x_resolution_plus_sync_s": 2 * RESOLUTION + SYNC_PERIOD,
            "metrics_resolution_s": RESOLUTION, "hpa_sync_period_s": SYNC_PERIOD}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tries", type=int, default=3)
    args = parser.parse_args()
    switch = Path(tempfile.mkdtemp(prefix="minik8s-bench-load-"))
    try:
        with local_cluster("bench-hpa-node", "10.244.253.0/24", "minik8s-bench-hpa") as data_dir:
            result = asyncio.run(run(data_dir / "kubeconfig", switch, args.tries))
    finally:
        shutil.rmtree(switch, ignore_errors=True)
    result["within_bound"] = result["reaction_load_start_to_scale_up"]["max_ms"] / 1000 <= \
        result["bound_2x_resolution_plus_sync_s"]
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
