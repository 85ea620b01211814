"""Node lifecycle decisions on a fake clock: lease freshness, Unknown conditions, taints, toleration timing."""

from __future__ import annotations

import datetime as dt
import math

from minik8s.api.base import Obj
from minik8s.controllers.nodelifecycle import (
    TAINT_NOT_READY,
    TAINT_UNREACHABLE,
    NodeHealth,
    NodeLifecycleOptions,
    TokenBucket,
    desired_taints,
    eviction_time,
    format_time,
    observe,
    pod_not_ready_status,
    seconds_until_stale,
    toleration_matches,
    unknown_conditions,
)

T0 = dt.datetime(2026, 1, 2, 3, 4, 0, tzinfo=dt.UTC)
OPTS = NodeLifecycleOptions()  # grace 40 s, startup grace 60 s


def at(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def node(ready: str | None = "True", heartbeat: float = 0, created: float = -100, taints: list[Obj] | None = None,
         extra_conditions: list[Obj] | None = None) -> Obj:
    conditions = list(extra_conditions or [])
    if ready is not None:
        conditions.append({"type": "Ready", "status": ready, "reason": "KubeletReady",
                           "lastHeartbeatTime": format_time(at(heartbeat)),
                           "lastTransitionTime": format_time(at(-50))})
    return {"metadata": {"name": "n1", "creationTimestamp": format_time(at(created))},
            "spec": {"taints": list(taints or [])}, "status": {"conditions": conditions}}


def lease(renewed: float) -> Obj:
    stamp = at(renewed).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return {"metadata": {"name": "n1", "namespace": "kube-node-lease"},
            "spec": {"holderIdentity": "n1", "leaseDurationSeconds": 40, "renewTime": stamp}}


# ---------------------------------------------------------------------------- lease freshness
def test_a_renewed_lease_keeps_the_node_fresh_and_a_silent_one_makes_it_stale() -> None:
    health = observe(None, node(), lease(0), at(0))
    assert health.probe == at(0)
    for t in (10, 20, 30, 40, 50):  # the kubelet renews every 10 s; status is not posted again
        health = observe(health, node(), lease(t), at(t + 0.5))
        assert seconds_until_stale(health, node(), at(t + 0.5), OPTS) == 40
    health = observe(health, node(), lease(50), at(80))  # no renewal since 50
    assert seconds_until_stale(health, node(), at(80), OPTS) == 10.5
    assert seconds_until_stale(health, node(), at(90.5), OPTS) == 0
    assert seconds_until_stale(observe(health, node(), lease(50), at(95)), node(), at(95), OPTS) < 0


def test_a_status_heartbeat_alone_also_counts_and_an_older_lease_does_not() -> None:
    health = observe(None, node(heartbeat=0), lease(0), at(0))
    health = observe(health, node(heartbeat=30), lease(0), at(31))  # kubelet posted status, lease not renewed
    assert health.probe == at(31)
    health = observe(health, node(heartbeat=30), lease(-5), at(60))  # an older renewTime is no renewal
    assert health.probe == at(31) and health.renew == at(0)
    assert seconds_until_stale(health, node(heartbeat=30), at(71), OPTS) == 0


def test_the_probe_runs_on_the_controllers_clock_not_the_nodes() -> None:
    # The kubelet's clock is an hour behind; what counts is that the renewTime moved.
    health = observe(None, node(heartbeat=-3600), lease(-3600), at(0))
    health = observe(health, node(heartbeat=-3600), lease(-3590), at(10))
    assert health.probe == at(10) and seconds_until_stale(health, node(), at(10), OPTS) == 40


def test_a_node_that_never_posted_ready_gets_the_startup_grace_from_its_creation() -> None:
    fresh = node(ready=None, created=-30)
    health = observe(None, fresh, None, at(0))
    assert health.probe == at(-30)
    assert seconds_until_stale(health, fresh, at(0), OPTS) == 30  # 60 s startup grace
    assert seconds_until_stale(health, fresh, at(30), OPTS) == 0
    # the first Ready condition the kubelet posts starts the normal grace period
    health = observe(health, node(heartbeat=5), None, at(6))
    assert health.probe == at(6) and seconds_until_stale(health, node(), at(6), OPTS) == 40


def test_a_restarted_controller_gives_every_node_a_fresh_grace_period() -> None:
    health = observe(None, node(ready="Unknown", heartbeat=-500), lease(-500), at(0))
    assert health == NodeHealth(probe=at(0), heartbeat=format_time(at(-500)), renew=at(-500))


# ---------------------------------------------------------------------------- Unknown conditions
def test_stale_conditions_become_unknown_and_missing_ones_are_added() -> None:
    pressure = {"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory",
                "lastHeartbeatTime": format_time(at(0)), "lastTransitionTime": format_time(at(-50))}
    other = {"type": "NetworkUnavailable", "status": "False"}
    conditions = unknown_conditions(node(extra_conditions=[pressure, other]), at(45))
    assert conditions is not None
    by_type = {c["type"]: c for c in conditions}
    ready = by_type["Ready"]
    assert ready["status"] == "Unknown" and ready["reason"] == "NodeStatusUnknown"
    assert ready["message"] == "Kubelet stopped posting node status."
    assert ready["lastTransitionTime"] == format_time(at(45)) and ready["lastHeartbeatTime"] == format_time(at(0))
    assert by_type["MemoryPressure"]["status"] == "Unknown"
    assert by_type["MemoryPressure"]["reason"] == "NodeStatusUnknown"
    assert by_type["NetworkUnavailable"] == other
    for missing in ("DiskPressure", "PIDPressure"):
        assert by_type[missing]["status"] == "Unknown" and by_type[missing]["reason"] == "NodeStatusNeverUpdated"
        assert by_type[missing]["message"] == "Kubelet never posted node status."
        assert by_type[missing]["lastHeartbeatTime"] == format_time(at(-100))  # creationTimestamp
    assert unknown_conditions({"status": {"conditions": conditions}}, at(90)) is None  # already Unknown


# ---------------------------------------------------------------------------- taints
def keys(taints: list[Obj]) -> list[tuple[str, str]]:
    return [(t["key"], t["effect"]) for t in taints]


def test_taints_follow_the_ready_condition() -> None:
    user = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
    unknown = desired_taints([user], "Unknown", at(45))
    assert keys(unknown) == [("dedicated", "NoSchedule"), (TAINT_UNREACHABLE, "NoSchedule"),
                             (TAINT_UNREACHABLE, "NoExecute")]
    assert all(t["timeAdded"] == format_time(at(45)) for t in unknown[1:])
    assert desired_taints(unknown, "Unknown", at(60)) == unknown  # timeAdded kept, nothing to write
    swapped = desired_taints(unknown, "False", at(70))  # the kubelet is back but reports NotReady
    assert keys(swapped) == [("dedicated", "NoSchedule"), (TAINT_NOT_READY, "NoSchedule"),
                             (TAINT_NOT_READY, "NoExecute")]
    assert swapped[2]["timeAdded"] == format_time(at(70))
    assert desired_taints(swapped, "True", at(80)) == [user]
    assert desired_taints(unknown, None, at(80)) == [user]


def test_the_eviction_rate_holds_back_only_a_new_no_execute_taint() -> None:
    held = desired_taints([], "Unknown", at(0), allow_no_execute=False)
    assert keys(held) == [(TAINT_UNREACHABLE, "NoSchedule")]
    already = desired_taints([], "False", at(0))
    assert keys(desired_taints(already, "False", at(5), allow_no_execute=False)) == keys(already)


def test_token_bucket() -> None:
    bucket = TokenBucket(0.1)
    assert bucket.take(at(0)) == 0
    assert math.isclose(bucket.take(at(1)), 9.0)
    assert math.isclose(bucket.take(at(5)), 5.0)
    assert bucket.take(at(10)) == 0
    assert TokenBucket(0).take(at(0)) == math.inf


# ---------------------------------------------------------------------------- tolerations and eviction
UNREACHABLE_NE = {"key": TAINT_UNREACHABLE, "effect": "NoExecute", "timeAdded": format_time(at(0))}


def test_toleration_matching() -> None:
    taint = {"key": "k", "value": "v", "effect": "NoExecute"}
    assert toleration_matches({"key": "k", "operator": "Equal", "value": "v"}, taint)
    assert toleration_matches({"key": "k", "value": "v", "effect": "NoExecute"}, taint)
    assert not toleration_matches({"key": "k", "value": "w"}, taint)
    assert not toleration_matches({"key": "k", "operator": "Exists", "effect": "NoSchedule"}, taint)
    assert toleration_matches({"operator": "Exists"}, taint)
    assert not toleration_matches({"key": "k", "operator": "Gt", "value": "v"}, taint)


def test_eviction_timing() -> None:
    taints = [(UNREACHABLE_NE, at(0))]
    assert eviction_time([], taints) == at(0)  # not tolerated: at once
    defaults = [{"key": TAINT_NOT_READY, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": TAINT_UNREACHABLE, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}]
    assert eviction_time(defaults, taints) == at(300)  # what DefaultTolerationSeconds gives every pod
    five = [{"key": TAINT_UNREACHABLE, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5}]
    assert eviction_time(five, taints) == at(5)
    forever = [{"key": TAINT_UNREACHABLE, "operator": "Exists", "effect": "NoExecute"}]
    assert eviction_time(forever, taints) is None
    negative = [{"key": TAINT_UNREACHABLE, "operator": "Exists", "tolerationSeconds": -3}]
    assert eviction_time(negative, taints) == at(0)
    user = {"key": "maintenance", "effect": "NoExecute"}
    both = [(UNREACHABLE_NE, at(0)), (user, at(20))]
    assert eviction_time(five, both) == at(0)  # "maintenance" is not tolerated
    tolerate_user = [*five, {"key": "maintenance", "operator": "Exists", "tolerationSeconds": 2}]
    assert eviction_time(tolerate_user, both) == at(5)  # min(0 + 5, 20 + 2)
    assert eviction_time(five, []) is None


def test_pods_are_marked_not_ready_once() -> None:
    pod: Obj = {"status": {"phase": "Running", "conditions": [
        {"type": "ContainersReady", "status": "True"},
        {"type": "Ready", "status": "True", "lastTransitionTime": format_time(at(-100))}]}}
    status = pod_not_ready_status(pod, at(45))
    assert status is not None and status["phase"] == "Running"
    ready = next(c for c in status["conditions"] if c["type"] == "Ready")
    assert ready == {"type": "Ready", "status": "False", "lastTransitionTime": format_time(at(45))}
    assert pod["status"]["conditions"][1]["status"] == "True"  # the cached pod is not changed
    assert pod_not_ready_status({"status": status}, at(50)) is None
    assert pod_not_ready_status({"status": {"phase": "Pending"}}, at(50)) is None
