"""The HorizontalPodAutoscaler algorithm (minik8s.controllers.podautoscaler) on plain inputs and a fake clock.

Each case mirrors a rule of Kubernetes' ``horizontal.go`` / ``replica_calculator.go``: tolerance,
missing and unready pods, the largest proposal, stabilization windows, Pods/Percent policies
and selectPolicy, clamping to [min, max], conditions and event messages.
"""

from __future__ import annotations

import pytest

from minik8s.api.base import Obj
from minik8s.controllers.podautoscaler.autoscaler import Autoscaler
from minik8s.controllers.podautoscaler.behavior import History, ScaleEvent, rate_limit, store_scale_event
from minik8s.controllers.podautoscaler.options import AutoscalerOptions
from minik8s.controllers.podautoscaler.status import Plan, rfc3339, set_condition
from minik8s.controllers.podautoscaler.unserved import go_label_selector, unserved_metric_error

T0 = 1_800_000_000.0


class Clock:
    """A fake epoch clock: ``clock()`` is now, ``advance(s)`` moves it."""

    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def pod(name: str, cpu: str | None = "100m", memory: str | None = "100Mi", phase: str = "Running",
        ready: bool = True, started: float = T0 - 3600, ready_since: float = T0 - 3590,
        deleting: bool = False) -> Obj:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    meta: Obj = {"name": name, "namespace": "ns", "labels": {"app": "web"}}
    if deleting:
        meta["deletionTimestamp"] = rfc3339(T0)
    return {"metadata": meta,
            "spec": {"containers": [{"name": "app", "image": "x", "resources": {"requests": requests}}]},
            "status": {"phase": phase, "startTime": rfc3339(started), "conditions": [
                {"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": rfc3339(ready_since)}]}}


def usage(name: str, cpu: str = "50m", memory: str = "50Mi", at: float = T0 - 5, window: str = "15s") -> Obj:
    return {"metadata": {"name": name, "namespace": "ns"}, "timestamp": rfc3339(at), "window": window,
            "containers": [{"name": "app", "usage": {"cpu": cpu, "memory": memory}}]}


def cpu_metric(target: int = 50) -> Obj:
    return {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization",
                                                                        "averageUtilization": target}}}


def memory_value_metric(value: str) -> Obj:
    return {"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue",
                                                                           "averageValue": value}}}


def rules(window: int, *policies: tuple[str, int, int], select: str = "Max") -> Obj:
    return {"stabilizationWindowSeconds": window, "selectPolicy": select,
            "policies": [{"type": t, "value": v, "periodSeconds": p} for t, v, p in policies]}


FAST = {"scaleUp": rules(0, ("Percent", 1000, 15)), "scaleDown": rules(0, ("Percent", 100, 15))}


def hpa(metrics: list[Obj] | None = None, low: int = 1, high: int = 10, behavior: Obj | None = None,
        status: Obj | None = None) -> Obj:
    spec: Obj = {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                 "minReplicas": low, "maxReplicas": high, "metrics": metrics or [cpu_metric()]}
    if behavior is not None:
        spec["behavior"] = behavior
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": "ns", "generation": 1}, "spec": spec, "status": status or {}}


def scale(replicas: int, selector: str = "app=web") -> Obj:
    return {"spec": {"replicas": replicas}, "status": {"replicas": replicas, "selector": selector}}


def conditions(plan: Plan) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c["reason"]) for c in plan.status.get("conditions") or []}


def run(autoscaler: Autoscaler, obj: Obj, current: int, pods: list[Obj], metrics: list[Obj] | str,
        write_error: str | None = None) -> Plan:
    """One sync: plan, and finish the rescale (as the controller does after writing the scale)."""
    plan = autoscaler.plan("ns/web", obj, scale(current), None, pods, metrics)
    if plan.rescale:
        plan = autoscaler.finish("ns/web", obj, plan, write_error)
    return plan


def fleet(n: int, cpu: str, memory: str = "50Mi") -> tuple[list[Obj], list[Obj]]:
    names = [f"web-{i}" for i in range(n)]
    return [pod(x) for x in names], [usage(x, cpu, memory) for x in names]


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def autoscaler(clock: Clock) -> Autoscaler:
    return Autoscaler(AutoscalerOptions(), clock)


# ----------------------------------------------------------------------------- the replica formula
def test_within_tolerance_nothing_changes(autoscaler: Autoscaler) -> None:
    pods, metrics = fleet(4, "54m")  # 54 % of 100m against 50 %: ratio 1.08
    plan = run(autoscaler, hpa(behavior=FAST), 4, pods, metrics)
    assert not plan.rescale and plan.status["desiredReplicas"] == 4
    assert plan.status["currentMetrics"] == [{"type": "Resource", "resource": {"name": "cpu", "current": {
        "averageUtilization": 54, "averageValue": "54m"}}}]
    assert conditions(plan)["ScalingActive"] == ("True", "ValidMetricFound")
    assert conditions(plan)["AbleToScale"] == ("True", "ReadyForNewScale")


def test_just_outside_tolerance_scales_with_ceil(autoscaler: Autoscaler) -> None:
    pods, metrics = fleet(4, "56m")  # ratio 1.12 → ceil(4 × 1.12) = 5
    plan = run(autoscaler, hpa(behavior=FAST), 4, pods, metrics)
    assert plan.rescale and plan.desired_replicas == 5
    assert ("Normal", "SuccessfulRescale",
            "New size: 5; reason: cpu resource utilization (percentage of request) above target") in plan.events
    assert conditions(plan)["AbleToScale"] == ("True", "SucceededRescale")
    assert plan.status["lastScaleTime"] == rfc3339(T0)


def test_scale_down_message(autoscaler: Autoscaler) -> None:
    pods, metrics = fleet(4, "10m")  # 10 % → ceil(4 × 0.2) = 1
    plan = run(autoscaler, hpa(behavior=FAST), 4, pods, metrics)
    assert plan.desired_replicas == 1
    assert ("Normal", "SuccessfulRescale", "New size: 1; reason: All metrics below target") in plan.events


def test_utilization_is_truncated_to_whole_percent(autoscaler: Autoscaler) -> None:
    pods = [pod("a", cpu="300m"), pod("b", cpu="300m"), pod("c", cpu="300m")]
    metrics = [usage("a", "100m"), usage("b", "100m"), usage("c", "101m")]  # 301/900 = 33.4 % → 33 %
    plan = run(autoscaler, hpa([cpu_metric(30)], behavior=FAST), 3, pods, metrics)
    assert plan.status["currentMetrics"][0]["resource"]["current"]["averageUtilization"] == 33
    assert plan.desired_replicas == 4  # ceil(3 × 33/30 = 3.3)


# ----------------------------------------------------------------------------- missing and unready pods
def test_missing_pods_count_as_full_request_on_scale_down(autoscaler: Autoscaler) -> None:
    pods, metrics = fleet(4, "10m")
    plan = run(autoscaler, hpa(behavior=FAST), 4, pods, metrics[:3])
    # (3 × 10m + 100m) / 400m = 32 % → ratio 0.64 → ceil(0.64 × 4) = 3, not 1
    assert plan.desired_replicas == 3
    assert plan.status["currentMetrics"][0]["resource"]["current"]["averageUtilization"] == 10


def test_missing_pods_use_target_when_it_is_above_100_percent(autoscaler: Autoscaler) -> None:
    pods, metrics = fleet(4, "10m")
    plan = run(autoscaler, hpa([cpu_metric(200)], behavior=FAST), 4, pods, metrics[:3])
    # missing pod counts 200m: (30m + 200m)/400m = 57 % → ratio 0.285 → ceil(1.14) = 2
    assert plan.desired_replicas == 2


def test_missing_pods_count_as_zero_on_scale_up(autoscaler: Autoscaler) -> None:
    pods, metrics = fleet(4, "100m")
    plan = run(autoscaler, hpa(behavior=FAST), 4, pods, metrics[:3])
    assert plan.desired_replicas == 6  # 300m/400m = 75 % → 1.5 × 4; with the missing pod ignored it would be 6 too
    pods, metrics = fleet(4, "60m")
    plan = run(autoscaler, hpa(behavior=FAST), 4, pods, metrics[:2])
    # 120 % on 2 pods, the 2 missing pods count 0: 120m/400m = 30 % → ratio 0.6 flips direction → no change
    assert not plan.rescale and plan.desired_replicas == 4


def test_not_ready_pods_count_zero_on_scale_up(autoscaler: Autoscaler) -> None:
    pods, metrics = fleet(3, "100m")
    pods.append(pod("new", ready=False, started=T0 - 20, ready_since=T0 - 20))
    metrics.append(usage("new", "100m"))
    plan = run(autoscaler, hpa(behavior=FAST), 4, pods, metrics)
    assert plan.desired_replicas == 6  # (300m + 0) / 400m = 75 % → 6; counting the unready pod would give 8


def test_not_ready_pods_are_left_out_on_scale_down(autoscaler: Autoscaler) -> None:
    pods, metrics = fleet(3, "10m")
    pods.append(pod("new", ready=False, started=T0 - 20, ready_since=T0 - 20))
    metrics.append(usage("new", "90m"))
    plan = run(autoscaler, hpa(behavior=FAST), 4, pods, metrics)
    assert plan.desired_replicas == 1  # ceil(0.2 × 3 ready pods)


def test_pending_and_terminating_pods(autoscaler: Autoscaler) -> None:
    pods, metrics = fleet(2, "100m")
    pods += [pod("pending", phase="Pending"), pod("going", deleting=True)]
    metrics.append(usage("going", "100m"))
    plan = run(autoscaler, hpa(behavior=FAST), 4, pods, metrics)
    # pending is unready (0 % on a scale-up), the terminating pod is ignored: 200m/300m = 66 % → ceil(1.32 × 3) = 4
    assert plan.desired_replicas == 4 and not plan.rescale


def test_cpu_sample_taken_before_readiness_is_unready(autoscaler: Autoscaler) -> None:
    pods, metrics = fleet(2, "100m")
    # started 60 s ago (inside the 5 min initialization period), Ready 50 s ago, sampled 45 s ago over 15 s:
    # the sample covers time before readiness → unready
    pods.append(pod("warm", started=T0 - 60, ready_since=T0 - 50))
    metrics.append(usage("warm", "100m", at=T0 - 45))
    plan = run(autoscaler, hpa(behavior=FAST), 3, pods, metrics)
    assert plan.desired_replicas == 4  # (200m + 0) / 300m = 66 % → ceil(1.32 × 3) = 4; ready it would be 6


def test_memory_ignores_readiness(autoscaler: Autoscaler) -> None:
    pods, metrics = fleet(2, "10m", memory="100Mi")
    pods.append(pod("warm", ready=False, started=T0 - 60, ready_since=T0 - 50))
    metrics.append(usage("warm", "10m", memory="100Mi"))
    metric = {"type": "Resource", "resource": {"name": "memory", "target": {"type": "Utilization",
                                                                             "averageUtilization": 50}}}
    plan = run(autoscaler, hpa([metric], behavior=FAST), 3, pods, metrics)
    assert plan.desired_replicas == 6


# ----------------------------------------------------------------------------- several metrics, failures
def test_largest_proposal_wins(autoscaler: Autoscaler) -> None:
    pods, metrics = fleet(2, "60m", memory="200Mi")
    plan = run(autoscaler, hpa([cpu_metric(50), memory_value_metric("100Mi")], behavior=FAST), 2, pods, metrics)
    assert plan.desired_replicas == 4  # cpu: ceil(2 × 1.2) = 3; memory: 200Mi / 100Mi → 4
    assert plan.reason == "memory resource above target"
    assert plan.status["currentMetrics"][1] == {"type": "Resource", "resource": {"name": "memory", "current": {
        "averageValue": "209715200"}}}


def test_missing_request_fails_the_metric(autoscaler: Autoscaler) -> None:
    pods = [pod("web-0", cpu=None)]
    plan = run(autoscaler, hpa(behavior=FAST), 1, pods, [usage("web-0")])
    assert not plan.rescale
    cond = next(c for c in plan.status["conditions"] if c["type"] == "ScalingActive")
    assert (cond["status"], cond["reason"]) == ("False", "FailedGetResourceMetric")
    assert cond["message"] == ("the HPA was unable to compute the replica count: failed to get cpu utilization: "
                               "missing request for cpu in container app of Pod web-0")
    reasons = [r for _, r, _ in plan.events]
    assert reasons == ["FailedGetResourceMetric", "FailedComputeMetricsReplicas"]
    assert plan.error and "invalid metrics (1 invalid out of 1)" in plan.error
    assert plan.status["currentMetrics"] == [{"type": ""}]


def test_metrics_api_errors(autoscaler: Autoscaler) -> None:
    pods, _ = fleet(2, "50m")
    plan = run(autoscaler, hpa(), 2, pods, "the server is currently unable to handle the request")
    msg = next(c["message"] for c in plan.status["conditions"] if c["type"] == "ScalingActive")
    assert msg.endswith("unable to get metrics for resource cpu: unable to fetch metrics from resource metrics "
                        "API: the server is currently unable to handle the request")
    plan = run(autoscaler, hpa(), 2, pods, [])
    msg = next(c["message"] for c in plan.status["conditions"] if c["type"] == "ScalingActive")
    assert msg.endswith("no metrics returned from resource metrics API")


def test_one_failed_metric_does_not_stop_a_scale_up_but_stops_a_scale_down(autoscaler: Autoscaler) -> None:
    pods, metrics = fleet(2, "100m")
    pods[0]["spec"]["containers"][0]["resources"]["requests"].pop("memory")
    memory_util = {"type": "Resource", "resource": {"name": "memory", "target": {"type": "Utilization",
                                                                                  "averageUtilization": 50}}}
    plan = run(autoscaler, hpa([memory_util, cpu_metric()], behavior=FAST), 2, pods, metrics)
    assert plan.desired_replicas == 4 and conditions(plan)["ScalingActive"] == ("True", "ValidMetricFound")
    assert plan.error and plan.error.startswith("invalid metrics (1 invalid out of 2)")
    pods, metrics = fleet(2, "10m")
    pods[0]["spec"]["containers"][0]["resources"]["requests"].pop("memory")
    plan = run(autoscaler, hpa([memory_util, cpu_metric()], behavior=FAST), 2, pods, metrics)
    assert not plan.rescale and conditions(plan)["ScalingActive"] == ("False", "FailedGetResourceMetric")


def test_missing_selector_and_scale(autoscaler: Autoscaler) -> None:
    plan = autoscaler.plan("ns/web", hpa(), scale(2, selector=""), None, [], [])
    assert conditions(plan)["ScalingActive"] == ("False", "InvalidSelector")
    assert ("Warning", "SelectorRequired", "selector is required") in plan.events
    plan = autoscaler.plan("ns/web", hpa(), None, 'deployments.apps "web" not found', [], [])
    assert conditions(plan)["AbleToScale"] == ("False", "FailedGetScale")
    assert plan.events == [("Warning", "FailedGetScale", 'deployments.apps "web" not found')]
    assert plan.error == 'failed to query scale subresource for Deployment/ns/web: deployments.apps "web" not found'


# ----------------------------------------------------------------------------- limits and clamping
def test_out_of_range_targets_are_brought_back(autoscaler: Autoscaler) -> None:
    plan = run(autoscaler, hpa(low=2, high=5), 8, [], [])
    assert plan.desired_replicas == 5
    assert ("Normal", "SuccessfulRescale", "New size: 5; reason: Current number of replicas above Spec.MaxReplicas"
            ) in plan.events
    plan = run(autoscaler, hpa(low=2, high=5), 1, [], [])
    assert plan.events[-1][2] == "New size: 2; reason: Current number of replicas below Spec.MinReplicas"


def test_scaled_to_zero_is_left_alone(autoscaler: Autoscaler) -> None:
    plan = run(autoscaler, hpa(), 0, [], [])
    assert not plan.rescale and plan.status["desiredReplicas"] == 0
    assert conditions(plan)["ScalingActive"] == ("False", "ScalingDisabled")


def test_clamped_to_max_and_min(autoscaler: Autoscaler) -> None:
    pods, metrics = fleet(4, "400m")
    plan = run(autoscaler, hpa(high=6, behavior=FAST), 4, pods, metrics)
    assert plan.desired_replicas == 6 and conditions(plan)["ScalingLimited"] == ("True", "TooManyReplicas")
    pods, metrics = fleet(4, "1m")
    plan = run(autoscaler, hpa(low=3, behavior=FAST), 4, pods, metrics)
    assert plan.desired_replicas == 3 and conditions(plan)["ScalingLimited"] == ("True", "TooFewReplicas")
    pods, metrics = fleet(4, "75m")
    plan = run(autoscaler, hpa(behavior=FAST), 4, pods, metrics)
    assert plan.desired_replicas == 6 and conditions(plan)["ScalingLimited"] == ("False", "DesiredWithinRange")


# ----------------------------------------------------------------------------- behavior: stabilization
def test_scale_down_stabilization_keeps_the_highest_recent_recommendation(autoscaler: Autoscaler,
                                                                          clock: Clock) -> None:
    behavior = {"scaleUp": rules(0, ("Percent", 100, 15)), "scaleDown": rules(60, ("Percent", 100, 15))}
    pods, metrics = fleet(4, "50m")
    run(autoscaler, hpa(behavior=behavior), 4, pods, metrics)  # recommends 4 at T0
    clock.advance(30)
    pods, metrics = fleet(4, "10m")
    plan = run(autoscaler, hpa(behavior=behavior), 4, pods, metrics)
    assert not plan.rescale and conditions(plan)["AbleToScale"] == ("True", "ScaleDownStabilized")
    clock.advance(31)  # T0's recommendation left the window; T0+30's (1) is the highest left
    plan = run(autoscaler, hpa(behavior=behavior), 4, pods, metrics)
    assert plan.desired_replicas == 1


def test_scale_up_stabilization_keeps_the_lowest_recent_recommendation(autoscaler: Autoscaler,
                                                                      clock: Clock) -> None:
    behavior = {"scaleUp": rules(30, ("Percent", 1000, 15)), "scaleDown": rules(0, ("Percent", 100, 15))}
    pods, metrics = fleet(2, "50m")
    run(autoscaler, hpa(behavior=behavior), 2, pods, metrics)
    clock.advance(10)
    pods, metrics = fleet(2, "150m")
    plan = run(autoscaler, hpa(behavior=behavior), 2, pods, metrics)
    assert not plan.rescale and conditions(plan)["AbleToScale"] == ("True", "ScaleUpStabilized")
    clock.advance(21)
    assert run(autoscaler, hpa(behavior=behavior), 2, pods, metrics).desired_replicas == 6


def test_scale_down_window_defaults_to_the_controller_flag(clock: Clock) -> None:
    autoscaler = Autoscaler(AutoscalerOptions(downscale_stabilization=100), clock)
    behavior = {"scaleUp": rules(0, ("Percent", 100, 15)),
                "scaleDown": {"selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100,
                                                                   "periodSeconds": 15}]}}
    pods, metrics = fleet(4, "50m")
    run(autoscaler, hpa(behavior=behavior), 4, pods, metrics)
    pods, metrics = fleet(4, "10m")
    clock.advance(99)
    assert not run(autoscaler, hpa(behavior=behavior), 4, pods, metrics).rescale
    clock.advance(2)
    assert run(autoscaler, hpa(behavior=behavior), 4, pods, metrics).desired_replicas == 1


# ----------------------------------------------------------------------------- behavior: policies
def test_pods_policy_counts_the_period_scale_events(autoscaler: Autoscaler, clock: Clock) -> None:
    behavior = {"scaleUp": rules(0, ("Pods", 2, 60)), "scaleDown": rules(0, ("Percent", 100, 15))}
    pods, metrics = fleet(2, "250m")  # wants 10
    plan = run(autoscaler, hpa(behavior=behavior), 2, pods, metrics)
    assert plan.desired_replicas == 4 and conditions(plan)["ScalingLimited"] == ("True", "ScaleUpLimit")
    clock.advance(30)
    pods, metrics = fleet(4, "250m")
    assert not run(autoscaler, hpa(behavior=behavior), 4, pods, metrics).rescale  # +2 already in this minute
    clock.advance(31)
    assert run(autoscaler, hpa(behavior=behavior), 4, pods, metrics).desired_replicas == 6


def test_percent_policy_rounds_up(autoscaler: Autoscaler) -> None:
    behavior = {"scaleUp": rules(0, ("Percent", 50, 60)), "scaleDown": rules(0, ("Percent", 100, 15))}
    pods, metrics = fleet(3, "500m")
    assert run(autoscaler, hpa(behavior=behavior), 3, pods, metrics).desired_replicas == 5  # ceil(3 × 1.5)


@pytest.mark.parametrize(("select", "expected"), [("Max", 8), ("Min", 5), ("Disabled", 4)])
def test_select_policy_on_scale_up(autoscaler: Autoscaler, select: str, expected: int) -> None:
    behavior = {"scaleUp": rules(0, ("Pods", 1, 60), ("Percent", 100, 60), select=select),
                "scaleDown": rules(0, ("Percent", 100, 15))}
    pods, metrics = fleet(4, "500m")  # wants 40 → max 10
    plan = run(autoscaler, hpa(behavior=behavior), 4, pods, metrics)
    assert plan.desired_replicas == expected
    assert conditions(plan)["ScalingLimited"] == ("True", "ScaleUpLimit")


@pytest.mark.parametrize(("select", "expected"), [("Max", 4), ("Min", 7), ("Disabled", 8)])
def test_select_policy_on_scale_down(autoscaler: Autoscaler, select: str, expected: int) -> None:
    behavior = {"scaleUp": rules(0, ("Percent", 100, 15)),
                "scaleDown": rules(0, ("Pods", 1, 60), ("Percent", 50, 60), select=select)}
    pods, metrics = fleet(8, "1m")
    plan = run(autoscaler, hpa(behavior=behavior), 8, pods, metrics)
    assert plan.desired_replicas == expected
    if select != "Disabled":
        assert ("Normal", "SuccessfulRescale", f"New size: {expected}; reason: All metrics below target") \
            in plan.events


def test_rate_limit_directly() -> None:
    history = History(scale_up_events=[ScaleEvent(T0 - 10, 3), ScaleEvent(T0 - 100, 5)])
    up = rules(0, ("Pods", 4, 60), ("Percent", 100, 60))
    assert rate_limit(10, history, up, T0, up=True) == 14  # start 7: max(7 + 4, ceil(7 × 2))
    down = rules(0, ("Percent", 50, 30))
    assert rate_limit(4, History(scale_down_events=[ScaleEvent(T0 - 5, 4)]), down, T0, up=False) == 4  # start 8
    assert rate_limit(3, History(), rules(0, ("Pods", 1, 15), select="Disabled"), T0, up=True) == 3
    # a scale-down in the period moves the period's start back up (Kubernetes counts both directions)
    both = History(scale_up_events=[ScaleEvent(T0 - 5, 2)], scale_down_events=[ScaleEvent(T0 - 3, 1)])
    assert rate_limit(5, both, rules(0, ("Pods", 2, 60)), T0, up=True) == 6  # start 5 - 2 + 1 = 4


def test_stabilization_never_moves_against_the_desired_direction(autoscaler: Autoscaler, clock: Clock) -> None:
    behavior = {"scaleUp": rules(60, ("Percent", 1000, 15)), "scaleDown": rules(0, ("Percent", 100, 15))}
    pods, metrics = fleet(4, "10m")  # recommends 1 (scale-down, no window)
    run(autoscaler, hpa(behavior=behavior, low=1), 4, pods, metrics)
    clock.advance(5)
    pods, metrics = fleet(2, "60m")  # now at 2 and wanting 3: the recent 1 must not pull it below 2
    plan = run(autoscaler, hpa(behavior=behavior), 2, pods, metrics)
    assert not plan.rescale and plan.status["desiredReplicas"] == 2
    assert conditions(plan)["AbleToScale"] == ("True", "ScaleUpStabilized")


def test_scale_events_are_recycled_after_the_longest_period() -> None:
    history = History()
    behavior = {"scaleUp": rules(0, ("Pods", 1, 60)), "scaleDown": rules(0, ("Pods", 1, 60))}
    store_scale_event(history, behavior, 1, 2, T0)
    store_scale_event(history, behavior, 2, 3, T0 + 30)
    store_scale_event(history, behavior, 3, 4, T0 + 80)  # T0's event is outdated: its slot is reused
    assert [(e.timestamp, e.change) for e in history.scale_up_events] == [(T0 + 80, 1), (T0 + 30, 1)]
    store_scale_event(history, None, 4, 1, T0 + 101)  # without behavior nothing is kept
    assert history.scale_down_events == []


# ----------------------------------------------------------------------------- without spec.behavior
def test_legacy_scale_up_limit_and_downscale_window(autoscaler: Autoscaler, clock: Clock) -> None:
    pods, metrics = fleet(1, "1000m")  # wants 20
    plan = Autoscaler(AutoscalerOptions(), clock).plan("ns/x", hpa(high=20), scale(1), None, pods, metrics)
    assert plan.desired_replicas == 4 and conditions(plan)["ScalingLimited"] == ("True", "ScaleUpLimit")
    pods, metrics = fleet(4, "100m")  # wants 8
    assert run(autoscaler, hpa(high=20), 4, pods, metrics).desired_replicas == 8
    pods, metrics = fleet(8, "1m")
    clock.advance(60)
    plan = run(autoscaler, hpa(high=20), 8, pods, metrics)
    assert not plan.rescale and conditions(plan)["AbleToScale"] == ("True", "ScaleDownStabilized")
    clock.advance(301)
    assert run(autoscaler, hpa(high=20), 8, pods, metrics).desired_replicas == 1


# ----------------------------------------------------------------------------- rescale outcome, conditions
def test_failed_rescale(autoscaler: Autoscaler) -> None:
    pods, metrics = fleet(2, "100m")
    old_status = {"desiredReplicas": 2, "currentReplicas": 2}
    plan = run(autoscaler, hpa(behavior=FAST, status=old_status), 2, pods, metrics, write_error="etcd is away")
    assert plan.events[-1] == ("Warning", "FailedRescale", "New size: 4; reason: cpu resource utilization "
                                                          "(percentage of request) above target; error: etcd is away")
    assert conditions(plan)["AbleToScale"] == ("False", "FailedUpdateScale")
    assert plan.status["desiredReplicas"] == 2 and "lastScaleTime" not in plan.status
    # the failed attempt left no scale event: the next sync may scale at once
    assert autoscaler.histories["ns/web"].scale_up_events == []


def test_condition_transition_time_moves_only_on_status_change() -> None:
    first = set_condition([], "AbleToScale", "True", "A", "a", "t1")
    same = set_condition(first, "AbleToScale", "True", "B", "b", "t2")
    assert same[0]["lastTransitionTime"] == "t1" and same[0]["reason"] == "B"
    flipped = set_condition(same, "AbleToScale", "False", "C", "c", "t3")
    assert flipped[0]["lastTransitionTime"] == "t3"


def test_status_shape(autoscaler: Autoscaler) -> None:
    pods, metrics = fleet(2, "100m")
    plan = run(autoscaler, hpa(behavior=FAST), 2, pods, metrics)
    assert [c["type"] for c in plan.status["conditions"]] == ["AbleToScale", "ScalingActive", "ScalingLimited"]
    assert plan.status["currentReplicas"] == 2 and plan.status["desiredReplicas"] == 4
    assert plan.status["observedGeneration"] == 1


# ----------------------------------------------------------------------------- metric types other than Resource
def container_metric(container: str, target: int = 50, resource: str = "cpu") -> Obj:
    return {"type": "ContainerResource", "containerResource": {
        "name": resource, "container": container, "target": {"type": "Utilization", "averageUtilization": target}}}


def two_container_fleet(n: int, app_cpu: str, sidecar_cpu: str) -> tuple[list[Obj], list[Obj]]:
    """Pods with containers ``app`` (request 100m) and ``log`` (request 400m)."""
    pods, metrics = fleet(n, app_cpu)
    for p, m in zip(pods, metrics, strict=True):
        p["spec"]["containers"].append({"name": "log", "image": "x", "resources": {"requests": {"cpu": "400m"}}})
        m["containers"].append({"name": "log", "usage": {"cpu": sidecar_cpu, "memory": "1Mi"}})
    return pods, metrics


def test_container_resource_counts_only_the_named_container(autoscaler: Autoscaler) -> None:
    pods, metrics = two_container_fleet(2, "100m", "0")
    # the pod as a whole is at 20 % of its 500m; the app container alone at 100 % of its 100m
    plan = run(autoscaler, hpa([container_metric("app")], behavior=FAST), 2, pods, metrics)
    assert plan.desired_replicas == 4
    assert plan.reason == "cpu container resource utilization (percentage of request) above target"
    assert plan.status["currentMetrics"] == [{"type": "ContainerResource", "containerResource": {
        "name": "cpu", "container": "app", "current": {"averageUtilization": 100, "averageValue": "100m"}}}]
    plan = run(autoscaler, hpa([cpu_metric()], behavior=FAST), 2, pods, metrics)
    assert plan.desired_replicas == 1


def test_container_resource_average_value(autoscaler: Autoscaler) -> None:
    pods, metrics = two_container_fleet(2, "300m", "0")
    spec = {"type": "ContainerResource", "containerResource": {
        "name": "cpu", "container": "app", "target": {"type": "AverageValue", "averageValue": "100m"}}}
    plan = run(autoscaler, hpa([spec], behavior=FAST), 2, pods, metrics)
    assert plan.desired_replicas == 6
    assert plan.status["currentMetrics"][0]["containerResource"]["current"] == {"averageValue": "300m"}


def test_container_resource_missing_container(autoscaler: Autoscaler) -> None:
    pods, metrics = fleet(2, "100m")
    plan = run(autoscaler, hpa([container_metric("log")], behavior=FAST), 2, pods, metrics)
    assert conditions(plan)["ScalingActive"] == ("False", "FailedGetContainerResourceMetric")
    assert plan.events[0] == ("Warning", "FailedGetContainerResourceMetric",
                              "failed to get cpu utilization: unable to get metrics for resource cpu: failed to get "
                              "container metrics: container log not present in metrics for pod ns/web-0")
    assert plan.error and "first error is: failed to get log container metric value: " in plan.error


def test_sidecar_requests_count_for_resource_utilization(autoscaler: Autoscaler) -> None:
    pods, metrics = fleet(1, "100m")
    pods[0]["spec"]["initContainers"] = [
        {"name": "proxy", "image": "x", "restartPolicy": "Always", "resources": {"requests": {"cpu": "100m"}}},
        {"name": "setup", "image": "x"}]
    metrics[0]["containers"].append({"name": "proxy", "usage": {"cpu": "0", "memory": "1Mi"}})
    plan = run(autoscaler, hpa([cpu_metric(100)], behavior=FAST), 1, pods, metrics)
    assert plan.status["currentMetrics"][0]["resource"]["current"]["averageUtilization"] == 50


PODS_METRIC = {"type": "Pods", "pods": {"metric": {"name": "requests_per_second"},
                                        "target": {"type": "AverageValue", "averageValue": "10"}}}
OBJECT_METRIC = {"type": "Object", "object": {
    "describedObject": {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "name": "main"},
    "metric": {"name": "hits"}, "target": {"type": "Value", "value": "2k"}}}
EXTERNAL_METRIC = {"type": "External", "external": {
    "metric": {"name": "queue_depth", "selector": {"matchLabels": {"queue": "jobs", "env": "prod"},
                                                   "matchExpressions": [{"key": "tier", "operator": "In",
                                                                         "values": ["a", "b"]}]}},
    "target": {"type": "AverageValue", "averageValue": "30"}}}
CUSTOM = "unable to fetch metrics from custom metrics API: no custom metrics API (custom.metrics.k8s.io) registered"


@pytest.mark.parametrize(("spec", "reason", "message", "outer"), [
    (PODS_METRIC, "FailedGetPodsMetric", f"unable to get metric requests_per_second: {CUSTOM}",
     "failed to get pods metric value: "),
    (OBJECT_METRIC, "FailedGetObjectMetric", f"unable to get metric hits: Ingress on ns main/{CUSTOM}",
     "failed to get object metric value: "),
    (EXTERNAL_METRIC, "FailedGetExternalMetric",
     "unable to get external metric ns/queue_depth/&LabelSelector{"
     "MatchLabels:map[string]string{env: prod,queue: jobs,},"
     "MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement{Key:tier,Operator:In,Values:[a b],},},}: "
     "unable to fetch metrics from external metrics API: the server could not find the requested resource "
     "(get queue_depth.external.metrics.k8s.io)", "failed to get queue_depth external metric value: "),
])
def test_custom_and_external_metrics_fail_as_without_their_apis(autoscaler: Autoscaler, spec: Obj, reason: str,
                                                                 message: str, outer: str) -> None:
    pods, metrics = fleet(2, "50m")
    plan = run(autoscaler, hpa([spec], behavior=FAST), 2, pods, metrics)
    assert not plan.rescale
    cond = next(c for c in plan.status["conditions"] if c["type"] == "ScalingActive")
    assert (cond["status"], cond["reason"]) == ("False", reason)
    assert cond["message"] == f"the HPA was unable to compute the replica count: {message}"
    assert plan.events == [("Warning", reason, message), ("Warning", "FailedComputeMetricsReplicas",
                                                          f"invalid metrics (1 invalid out of 1), first error is: "
                                                          f"{outer}{message}")]
    assert plan.status["currentMetrics"] == [{"type": ""}]


def test_external_metric_without_selector_or_target() -> None:
    assert go_label_selector(None) == "nil"
    assert go_label_selector({}) == "&LabelSelector{MatchLabels:map[string]string{},MatchExpressions:" \
                                    "[]LabelSelectorRequirement{},}"
    failure = unserved_metric_error({"type": "External", "external": {"metric": {"name": "q"}, "target": {}}}, "ns")
    assert failure and failure.error == ("invalid external metric source: neither a value target nor an average "
                                         "value target was set")


def test_working_metrics_still_scale_up_next_to_a_custom_one(autoscaler: Autoscaler) -> None:
    pods, metrics = fleet(2, "100m")
    plan = run(autoscaler, hpa([PODS_METRIC, cpu_metric()], behavior=FAST), 2, pods, metrics)
    assert plan.desired_replicas == 4 and conditions(plan)["ScalingActive"] == ("True", "ValidMetricFound")
    assert plan.status["currentMetrics"][0] == {"type": ""}
    assert plan.error and plan.error.startswith("invalid metrics (1 invalid out of 2)")
    pods, metrics = fleet(2, "10m")
    plan = run(autoscaler, hpa([PODS_METRIC, cpu_metric()], behavior=FAST), 2, pods, metrics)
    assert not plan.rescale and conditions(plan)["ScalingActive"] == ("False", "FailedGetPodsMetric")
