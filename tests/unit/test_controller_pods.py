"""Pure pod helpers of the workload controllers: active/ready/available and scale-down order."""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from minik8s.controllers.podutil import (
    deletion_order_key,
    is_pod_active,
    is_pod_available,
    is_pod_ready,
    pods_to_delete,
    seconds_until_available,
)

NOW = dt.datetime(2026, 1, 1, 12, 0, 0, tzinfo=dt.UTC)


def ts(seconds_ago: float) -> str:
    return (NOW - dt.timedelta(seconds=seconds_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


def pod(name: str, *, node: str | None = "n1", phase: str = "Running", ready: bool | None = True,
        ready_ago: float = 100, restarts: int = 0, age: float = 1000, deleting: bool = False,
        cost: int | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "uid": f"uid-{name}", "creationTimestamp": ts(age)}
    if deleting:
        meta["deletionTimestamp"] = ts(0)
    if cost is not None:
        meta["annotations"] = {"controller.kubernetes.io/pod-deletion-cost": str(cost)}
    status: dict[str, Any] = {"phase": phase, "containerStatuses": [{"name": "c", "restartCount": restarts}]}
    if ready is not None:
        status["conditions"] = [{"type": "Ready", "status": "True" if ready else "False",
                                 "lastTransitionTime": ts(ready_ago)}]
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x"}]}
    if node:
        spec["nodeName"] = node
    return {"metadata": meta, "spec": spec, "status": status}


def test_active_ready_available() -> None:
    assert is_pod_active(pod("a"))
    assert not is_pod_active(pod("a", deleting=True))
    assert not is_pod_active(pod("a", phase="Succeeded"))
    assert not is_pod_active(pod("a", phase="Failed"))
    assert is_pod_active(pod("a", phase="Pending", ready=None))
    assert is_pod_ready(pod("a")) and not is_pod_ready(pod("a", ready=False)) and not is_pod_ready(pod("a", ready=None))
    fresh = pod("a", ready_ago=3)
    assert is_pod_available(fresh, 0, NOW)
    assert not is_pod_available(fresh, 10, NOW)
    assert is_pod_available(fresh, 2, NOW)
    assert seconds_until_available(fresh, 10, NOW) == 7.0
    assert seconds_until_available(pod("a", ready=False), 10, NOW) is None


def test_deletion_order_follows_kubernetes_ranking() -> None:
    expected = [
        pod("unscheduled", node=None, phase="Pending", ready=None),
        pod("pending", phase="Pending", ready=None),
        pod("unknown", phase="Unknown", ready=None),
        pod("running-not-ready", ready=False),
        pod("cheap", cost=-5),
        pod("ready-recently", ready_ago=10),
        pod("many-restarts", restarts=7),
        pod("one-restart", restarts=1),
        pod("newer", age=500),
        pod("older", age=900),
    ]
    shuffled = list(expected)
    random.Random(4).shuffle(shuffled)
    ordered = sorted(shuffled, key=deletion_order_key)
    assert [p["metadata"]["name"] for p in ordered] == [p["metadata"]["name"] for p in expected]


def test_doubled_up_pods_go_first() -> None:
    lonely, crowded = pod("lonely", node="n1"), pod("crowded", node="n2")
    related = [lonely, crowded, pod("sibling", node="n2"), pod("sibling2", node="n2")]
    assert [p["metadata"]["name"] for p in pods_to_delete([lonely, crowded], related, 1)] == ["crowded"]
    assert pods_to_delete([lonely, crowded], related, 0) == []
    assert len(pods_to_delete([lonely, crowded], related, 5)) == 2
