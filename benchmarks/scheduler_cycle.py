"""The scheduler's own cycle, in process: milliseconds per pod at N nodes (no HTTP, no apiserver).

The default profile (``minik8s.scheduler.plugins.DEFAULT_PLUGINS``) schedules ``--pods`` pods of
Deployments of 50 (10m cpu, 10Mi memory each, tolerating the hollow taint) onto ``--nodes``
hollow-like Nodes (4 cpu, 16Gi, 110 pods, Ready, tainted ``minik8s.io/hollow=true:NoSchedule``),
each pod assumed onto its node as the scheduler does, so later cycles see the room as taken.
What kube-scheduler's scheduler_perf measures without its API server: the filter and score work
of ``percentageOfNodesToScore`` of the nodes per pod.  The end-to-end figure (bindings through the
apiserver) is ``benchmarks/density.py``'s throughput run.

    python -m benchmarks.scheduler_cycle [--nodes 1000] [--pods 300]
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from minik8s.scheduler.cache import SchedulerCache
from minik8s.scheduler.framework import Framework
from minik8s.scheduler.nodeinfo import PodInfo
from minik8s.scheduler.plugins import DEFAULT_PLUGINS

TOLERATION = {"key": "minik8s.io/hollow", "operator": "Exists", "effect": "NoSchedule"}


def node(i: int) -> dict[str, Any]:
    resources = {"cpu": "4", "memory": "16Gi", "pods": "110"}
    return {"metadata": {"name": f"hollow-{i}", "labels": {"minik8s.io/hollow": "true",
                                                            "kubernetes.io/hostname": f"hollow-{i}"}},
            "spec": {"taints": [{"key": "minik8s.io/hollow", "value": "true", "effect": "NoSchedule"}]},
            "status": {"capacity": resources, "allocatable": resources,
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def pod(i: int) -> dict[str, Any]:
    owner = f"rs{i // 50}"
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"d-{i}", "namespace": "bench", "uid": f"pod-{i}", "labels": {"app": owner},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner,
                                              "uid": owner, "controller": True}]},
            "spec": {"containers": [{"name": "c", "image": "pause",
                                     "resources": {"requests": {"cpu": "10m", "memory": "10Mi"}}}],
                     "tolerations": [TOLERATION]}}


def run(nodes: int, pods: int) -> dict[str, Any]:
    cache = SchedulerCache()
    for i in range(nodes):
        cache.add_node(node(i))
    framework = Framework(DEFAULT_PLUGINS)
    infos = [PodInfo(pod(i)) for i in range(pods)]
    started = time.perf_counter()
    for info in infos:
        result = framework.schedule(info, cache.snapshot())
        cache.assume_pod(info, result.node)
    elapsed = time.perf_counter() - started
    return {"nodes": nodes, "pods": pods, "ms_per_pod": round(elapsed / pods * 1000, 2),
            "pods_per_s": round(pods / elapsed, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=300)
    args = parser.parse_args()
    print(json.dumps(run(args.nodes, args.pods)))


if __name__ == "__main__":
    main()
