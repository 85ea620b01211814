"""The HorizontalPodAutoscaler controller: scale a Deployment or ReplicaSet on its pods' CPU and memory.

Kubernetes' ``pkg/controller/podautoscaler`` (``horizontal.go`` + ``replica_calculator.go``),
split here into pure functions of the inputs and a clock (unit-testable with a fake clock)
and a thin controller that does the I/O.

Every ``--horizontal-pod-autoscaler-sync-period`` (15 s) per HPA:

1. **Scale**: read the target's ``scale`` subresource (``spec.scaleTargetRef``: any kind
   that serves one — Deployment, ReplicaSet); ``spec.replicas`` is the current count and
   ``status.selector`` selects the pods.  Failure → ``AbleToScale=False FailedGetScale``.
2. **Limits first**: a target scaled to 0 is left alone (``ScalingActive=False
   ScalingDisabled``); above ``maxReplicas`` / below ``minReplicas`` it is brought back
   ("Current number of replicas above Spec.MaxReplicas").
3. **Metrics** (``metrics.k8s.io`` PodMetrics of the selected pods, each pod's value summed
   over its containers, in thousandths): per metric,
   ``desired = ceil(readyPods × current / target)``, where for ``Utilization`` *current* is
   ``100 × Σusage / Σrequests`` (integer percent; a container without a request for the
   resource makes the metric fail: ``missing request for cpu in container app of Pod
   web-1``) and for ``AverageValue`` the mean usage per pod.  Within the tolerance (0.1) of
   the target nothing changes.  Pods being deleted or Failed are ignored; Pending pods,
   and for CPU pods not Ready or whose sample predates readiness within the
   initialization period, are *unready*; pods without a sample are *missing*.  Then, as
   Kubernetes does: on a scale-up unready pods count as 0 %, missing ones as 0 %; on a
   scale-down missing pods count as 100 % of their request (or the target if higher; the
   target itself for AverageValue); if that flips the direction or lands within the
   tolerance, nothing changes.  The largest proposal over all metrics wins; failed metrics
   are skipped unless all failed or the rest would scale down (then no change,
   ``ScalingActive=False`` with the first failure's reason, e.g. FailedGetResourceMetric).
4. **Behavior** (``spec.behavior``): stabilization over the recommendations of each
   direction's ``stabilizationWindowSeconds`` (the size moves up only to the lowest
   recommendation of the scale-up window, down only to the highest of the scale-down
   window), then rate limits from the policies — ``Pods`` (add/remove N) or ``Percent``
   (N % of the replicas at the period's start) per ``periodSeconds``, counting the scale
   events this controller made in that period; ``selectPolicy`` Max takes the policy
   allowing the biggest change, Min the smallest, Disabled forbids that direction — then
   ``[minReplicas, maxReplicas]``.  Without ``spec.behavior``: the highest recommendation of
   the last ``--horizontal-pod-autoscaler-downscale-stabilization`` (300 s), scale-up at
   most ``max(2 × current, 4)``.  Conditions ``AbleToScale`` (ReadyForNewScale /
   ScaleUpStabilized / ScaleDownStabilized) and ``ScalingLimited`` (DesiredWithinRange /
   TooManyReplicas / TooFewReplicas / ScaleUpLimit / ScaleDownLimit) say what applied.
5. **Rescale** through the scale subresource; Normal event ``SuccessfulRescale`` "New size:
   4; reason: cpu resource utilization (percentage of request) above target" (or "All
   metrics below target"), ``AbleToScale=True SucceededRescale``, ``lastScaleTime``; a failed
   write is a Warning ``FailedRescale`` and ``AbleToScale=False FailedUpdateScale``.
6. **Status** (only when it changed): ``currentReplicas``, ``desiredReplicas``,
   ``currentMetrics`` (per metric, ``averageUtilization`` and/or ``averageValue``),
   ``lastScaleTime``, ``conditions``, ``observedGeneration``.

Recommendation and scale-event histories live in memory (as in Kubernetes): a restarted
controller starts with an empty history, seeded with the current size.
"""

from __future__ import annotations

import copy
import datetime as dt
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from minik8s.api import errors
from minik8s.api.base import Obj, parse_time
from minik8s.api.durations import parse_duration
from minik8s.api.meta import object_key
from minik8s.api.metrics import API_VERSION as METRICS_API_VERSION
from minik8s.api.metrics import format_milli, milli_value
from minik8s.api.registry import METRICS_TYPES
from minik8s.api.selectors import LabelSelector
from minik8s.client.events import EventRecorder
from minik8s.client.factory import SharedInformerFactory
from minik8s.client.informer import NAMESPACE_INDEX, by_namespace
from minik8s.client.rest import Client, resource_path
from minik8s.controllers.base import Controller

Event = tuple[str, str, str]  # (type Normal|Warning, reason, message)

#: Kubernetes' legacy scale-up limit without ``spec.behavior``: ``max(2 × current, 4)``.
SCALE_UP_LIMIT_FACTOR = 2.0
SCALE_UP_LIMIT_MINIMUM = 4.0


@dataclass(frozen=True)
class AutoscalerOptions:
    """kube-controller-manager's HPA flags (seconds; ``tolerance`` a fraction)."""

    sync_period: float = 15.0  # --horizontal-pod-autoscaler-sync-period
    tolerance: float = 0.1  # --horizontal-pod-autoscaler-tolerance
    downscale_stabilization: float = 300.0  # --horizontal-pod-autoscaler-downscale-stabilization
    cpu_initialization_period: float = 300.0  # --horizontal-pod-autoscaler-cpu-initialization-period
    initial_readiness_delay: float = 30.0  # --horizontal-pod-autoscaler-initial-readiness-delay


class MetricError(Exception):
    """A metric could not be computed; the message is Kubernetes' wording."""


def _epoch(stamp: str | None) -> float | None:
    try:
        when = parse_time(stamp)
    except ValueError:
        return None
    return when.timestamp() if when else None


def rfc3339(epoch: float) -> str:
    """Epoch seconds as RFC 3339 with second precision (Kubernetes' ``metav1.Time``)."""
    return dt.datetime.fromtimestamp(epoch, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# ====================================================================== replica calculation
@dataclass(frozen=True)
class PodMetric:
    """One pod's usage of a resource: ``value`` in thousandths (millicores, or bytes × 1000)
    summed over its containers, sampled at ``timestamp`` (epoch s) over ``window`` s."""

    value: int
    timestamp: float = 0.0
    window: float = 0.0


def pod_metrics_for(items: list[Obj], resource: str) -> dict[str, PodMetric]:
    """PodMetrics items → ``{pod name: PodMetric}`` for ``resource`` (Kubernetes' ``getPodMetrics``):
    a pod with no containers, or a container without that resource, is left out.

    Raises MetricError when a quantity does not parse.
    """
    out: dict[str, PodMetric] = {}
    for item in items:
        containers = item.get("containers") or []
        if not containers:
            continue
        total = 0
        for c in containers:
            quantity = (c.get("usage") or {}).get(resource)
            if quantity is None:
                break
            try:
                total += milli_value(quantity)
            except ValueError as exc:
                raise MetricError(f"invalid {resource} usage {quantity!r}: {exc}") from None
        else:
            try:
                window = parse_duration(item.get("window") or "0s")
            except ValueError:
                window = 0.0
            out[str((item.get("metadata") or {}).get("name"))] = PodMetric(
                total, _epoch(item.get("timestamp")) or 0.0, window)
    return out


def pod_requests(pods: list[Obj], resource: str) -> dict[str, int]:
    """``{pod name: Σ containers' requests of resource}`` in thousandths (``calculatePodRequests``).

    Raises MetricError ``missing request for cpu in container app of Pod web-1`` when a
    container has no request for ``resource``.
    """
    out: dict[str, int] = {}
    for pod in pods:
        total = 0
        for c in (pod.get("spec") or {}).get("containers") or []:
            quantity = ((c.get("resources") or {}).get("requests") or {}).get(resource)
            if quantity is None:
                raise MetricError(f"missing request for {resource} in container {c.get('name')} of Pod "
                                  f"{(pod.get('metadata') or {}).get('name')}")
            total += milli_value(quantity)
        out[str((pod.get("metadata") or {}).get("name"))] = total
    return out


@dataclass
class PodGroups:
    """How :func:`group_pods` sorted the selected pods (names)."""

    ready_count: int = 0
    unready: set[str] = field(default_factory=set)
    missing: set[str] = field(default_factory=set)
    ignored: set[str] = field(default_factory=set)


def group_pods(pods: list[Obj], metrics: dict[str, PodMetric], resource: str, now: float,
               options: AutoscalerOptions) -> PodGroups:
    """Kubernetes' ``groupPods``: ignored (being deleted or Failed), unready (Pending; for CPU
    also not Ready, or sampled before readiness + one window during the CPU initialization
    period, or never Ready since start within the initial readiness delay), missing (no
    sample), the rest ready."""
    groups = PodGroups()
    for pod in pods:
        meta, status = pod.get("metadata") or {}, pod.get("status") or {}
        name = str(meta.get("name"))
        phase = status.get("phase")
        if meta.get("deletionTimestamp") or phase == "Failed":
            groups.ignored.add(name)
            continue
        if phase == "Pending":
            groups.unready.add(name)
            continue
        metric = metrics.get(name)
        if metric is None:
            groups.missing.add(name)
            continue
        if resource == "cpu":
            ready = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), None)
            start = _epoch(status.get("startTime"))
            if ready is None or start is None:
                unready = True
            else:
                transition = _epoch(ready.get("lastTransitionTime")) or 0.0
                if start + options.cpu_initialization_period > now:
                    unready = ready.get("status") == "False" or metric.timestamp < transition + metric.window
                else:
                    unready = ready.get("status") == "False" and start + options.initial_readiness_delay > transition
            if unready:
                groups.unready.add(name)
                continue
        groups.ready_count += 1
    return groups


def utilization_ratio(metrics: dict[str, PodMetric], requests: dict[str, int],
                      target: int) -> tuple[float, int, int]:
    """``(usage ratio, current utilization %, average usage in thousandths)`` over the pods that
    have both a metric and a request (``GetResourceUtilizationRatio``; the percentage is
    truncated to an integer first, as in Kubernetes).  Raises MetricError when none match."""
    usage = total_requests = entries = 0
    for name, metric in metrics.items():
        if name not in requests:
            continue
        usage += metric.value
        total_requests += requests[name]
        entries += 1
    if total_requests == 0:
        raise MetricError("no metrics returned matched known pods")
    utilization = usage * 100 // total_requests
    return utilization / target, utilization, usage // entries


def usage_ratio(metrics: dict[str, PodMetric], target: int) -> tuple[float, int]:
    """``(usage ratio, average usage in thousandths)`` of plain per-pod values (``GetMetricUsageRatio``)."""
    average = sum(m.value for m in metrics.values()) // len(metrics)
    return average / target, average


@dataclass(frozen=True)
class Proposal:
    """What one metric proposes: ``replicas``, the current ``utilization`` (percent, for
    Utilization targets) and ``average`` (thousandths per pod), sampled at ``timestamp``."""

    replicas: int
    utilization: int | None
    average: int
    timestamp: float = 0.0


def _within(ratio: float, tolerance: float) -> bool:
    return abs(1.0 - ratio) <= tolerance


def _usable_metrics(pods: list[Obj], metrics: dict[str, PodMetric], resource: str, now: float,
                    options: AutoscalerOptions) -> tuple[PodGroups, dict[str, PodMetric]]:
    if not pods:
        raise MetricError("no pods returned by selector while calculating replica count")
    groups = group_pods(pods, metrics, resource, now, options)
    usable = {n: m for n, m in metrics.items() if n not in groups.ignored and n not in groups.unready}
    if not usable:
        raise MetricError("did not receive metrics for targeted pods (pods might be unready)")
    return groups, usable


def _replicas(current: int, groups: PodGroups, usable: dict[str, PodMetric],
              ratio_of: Callable[[dict[str, PodMetric]], float], missing_value: Callable[[str], int],
              tolerance: float) -> int:
    """The replica count of one metric from its usable samples (Kubernetes' shared core of
    ``GetResourceReplicas`` and ``calcPlainMetricReplicas``).

    ``ratio_of`` turns samples into usage/target; ``missing_value(pod)`` is what a pod without
    a sample counts on a scale-down (on a scale-up it counts 0, as unready pods do).  After
    filling in, no change when within the tolerance or when the fill-in flipped the direction.
    """
    ratio = ratio_of(usable)
    scale_up_with_unready = bool(groups.unready) and ratio > 1.0
    if not scale_up_with_unready and not groups.missing:
        return current if _within(ratio, tolerance) else math.ceil(ratio * groups.ready_count)
    filled = dict(usable)
    if groups.missing and ratio != 1.0:
        filled.update({n: PodMetric(missing_value(n) if ratio < 1.0 else 0) for n in groups.missing})
    if scale_up_with_unready:
        filled.update({n: PodMetric(0) for n in groups.unready})
    new_ratio = ratio_of(filled)
    if _within(new_ratio, tolerance) or (ratio < 1.0 < new_ratio) or (ratio > 1.0 > new_ratio):
        return current
    replicas = math.ceil(new_ratio * len(filled))
    if (new_ratio < 1.0 and replicas > current) or (new_ratio > 1.0 and replicas < current):
        return current
    return replicas


def _newest(metrics: dict[str, PodMetric]) -> float:
    return max((m.timestamp for m in metrics.values()), default=0.0)


def resource_replicas(current: int, target_utilization: int, resource: str, pods: list[Obj],
                      metrics: dict[str, PodMetric], now: float, options: AutoscalerOptions) -> Proposal:
    """Replicas for a Utilization target (Kubernetes' ``GetResourceReplicas``): missing pods count
    as 100 % of their request (or the target if higher) on a scale-down.  Raises MetricError (no
    pods, no usable metrics, missing requests)."""
    groups, usable = _usable_metrics(pods, metrics, resource, now, options)
    requests = pod_requests(pods, resource)
    _, utilization, average = utilization_ratio(usable, requests, target_utilization)
    fallback = max(100, target_utilization)
    replicas = _replicas(current, groups, usable, lambda m: utilization_ratio(m, requests, target_utilization)[0],
                         lambda name: requests[name] * fallback // 100, options.tolerance)
    return Proposal(replicas, utilization, average, _newest(usable))


def raw_resource_replicas(current: int, target_milli: int, resource: str, pods: list[Obj],
                          metrics: dict[str, PodMetric], now: float, options: AutoscalerOptions) -> Proposal:
    """Replicas for an AverageValue target in thousandths (``GetRawResourceReplicas`` /
    ``calcPlainMetricReplicas``): missing pods count as the target on a scale-down.  Raises
    MetricError (no pods, no usable metrics)."""
    groups, usable = _usable_metrics(pods, metrics, resource, now, options)
    _, average = usage_ratio(usable, target_milli)
    replicas = _replicas(current, groups, usable, lambda m: usage_ratio(m, target_milli)[0],
                         lambda name: target_milli, options.tolerance)
    return Proposal(replicas, None, average, _newest(usable))


# ====================================================================== behavior
@dataclass
class Recommendation:
    timestamp: float
    replicas: int


@dataclass
class ScaleEvent:
    timestamp: float
    change: int  # pods added (scale-up history) or removed (scale-down history)
    outdated: bool = False


@dataclass
class History:
    """What the controller remembers about one HPA (Kubernetes keeps the same in memory)."""

    recommendations: list[Recommendation] = field(default_factory=list)
    scale_up_events: list[ScaleEvent] = field(default_factory=list)
    scale_down_events: list[ScaleEvent] = field(default_factory=list)


def _record(recs: list[Recommendation], replicas: int, now: float, obsolete_before: float) -> None:
    """Add a recommendation, reusing the slot of one older than ``obsolete_before`` (Kubernetes
    replaces the last such slot rather than growing the list)."""
    old = [i for i, r in enumerate(recs) if r.timestamp < obsolete_before]
    if old:
        recs[old[-1]] = Recommendation(now, replicas)
    else:
        recs.append(Recommendation(now, replicas))


def stabilize(history: History, desired: int, current: int, scale_up: Obj, scale_down: Obj,
              now: float) -> tuple[int, str, str]:
    """The stabilized recommendation (``stabilizeRecommendationWithBehaviors``): the current size
    raised to the lowest recommendation of the scale-up window and lowered to the highest of
    the scale-down window (``desired`` counting in both), so a scale-up happens only when
    every recent recommendation asked for more, a scale-down only when every one asked for
    less.  Records ``desired``.  Returns ``(replicas, reason, message)`` for AbleToScale."""
    up_window = int(scale_up.get("stabilizationWindowSeconds") or 0)
    down_window = int(scale_down.get("stabilizationWindowSeconds") or 0)
    up_bound = down_bound = desired
    for rec in history.recommendations:
        if rec.timestamp > now - up_window:
            up_bound = min(up_bound, rec.replicas)
        if rec.timestamp > now - down_window:
            down_bound = max(down_bound, rec.replicas)
    stabilized = min(max(current, up_bound), down_bound)
    _record(history.recommendations, desired, now, now - max(up_window, down_window))
    if desired >= current:
        return stabilized, "ScaleUpStabilized", ("recent recommendations were lower than current one, applying the "
                                                 "lowest recent recommendation")
    return stabilized, "ScaleDownStabilized", ("recent recommendations were higher than current one, applying the "
                                               "highest recent recommendation")


def _changed_in_period(period: float, events: list[ScaleEvent], now: float) -> int:
    return sum(e.change for e in events if e.timestamp > now - period)


def rate_limit(current: int, history: History, rules: Obj, now: float, up: bool) -> int:
    """The furthest the policies of ``rules`` let the size move now, upwards (``up``) or downwards
    (``calculateScaleUpLimitWithScalingRules`` / ``calculateScaleDownLimitWithBehaviors``).

    Per policy: the size at the start of its period (``current`` minus the pods added plus
    the pods removed by this controller since), then ± ``value`` pods (type Pods) or ± ``value``
    percent of it (Percent; rounded up going up, down going down).  ``selectPolicy`` Max
    takes the policy allowing the biggest change, Min the smallest; Disabled returns
    ``current``.
    """
    select = rules.get("selectPolicy") or "Max"
    if select == "Disabled":
        return current
    pick = max if (select != "Min") == up else min
    result: int | None = None
    for policy in rules.get("policies") or []:
        period, value = policy["periodSeconds"], int(policy["value"])
        start = current - _changed_in_period(period, history.scale_up_events, now) + \
            _changed_in_period(period, history.scale_down_events, now)
        if policy["type"] == "Pods":
            proposed = start + value if up else start - value
        else:
            proposed = math.ceil(start * (1 + value / 100)) if up else int(start * (1 - value / 100))
        result = proposed if result is None else pick(result, proposed)
    return current if result is None else result


#: ScalingLimited ``(reason, message)`` pairs, worded as Kubernetes does.
SCALE_UP_LIMIT = ("ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate")
SCALE_DOWN_LIMIT = ("ScaleDownLimit", "the desired replica count is decreasing faster than the maximum scale rate")
TOO_MANY = ("TooManyReplicas", "the desired replica count is more than the maximum replica count")
TOO_FEW = ("TooFewReplicas", "the desired replica count is less than the minimum replica count")
WITHIN_RANGE = ("DesiredWithinRange", "the desired count is within the acceptable range")


def _ceiling(rate: int, max_replicas: int) -> tuple[int, str, str]:
    """The highest size allowed and why: the rate limit when it is below ``maxReplicas``."""
    return (rate, *SCALE_UP_LIMIT) if max_replicas > rate else (max_replicas, *TOO_MANY)


def limit_by_behavior(history: History, desired: int, current: int, min_replicas: int, max_replicas: int,
                      scale_up: Obj, scale_down: Obj, now: float) -> tuple[int, str, str]:
    """``convertDesiredReplicasWithBehaviorRate``: clamp to the policies' rate and to
    [min, max]; returns ``(replicas, reason, message)`` for the ScalingLimited condition."""
    if desired > current:
        ceiling = _ceiling(max(rate_limit(current, history, scale_up, now, up=True), current), max_replicas)
        if desired > ceiling[0]:
            return ceiling
    elif desired < current:
        rate = min(rate_limit(current, history, scale_down, now, up=False), current)
        floor = (rate, *SCALE_DOWN_LIMIT) if min_replicas < rate else (min_replicas, *TOO_FEW)
        if desired < floor[0]:
            return floor
    return (desired, *WITHIN_RANGE)


def stabilize_legacy(history: History, desired: int, window: float, now: float) -> int:
    """Without ``spec.behavior`` (``stabilizeRecommendation``): the highest of ``desired`` and the
    recommendations of the last ``window`` seconds; records ``desired``."""
    best = desired
    for rec in history.recommendations:
        if rec.timestamp >= now - window:
            best = max(best, rec.replicas)
    _record(history.recommendations, desired, now, now - window)
    return best


def limit_legacy(current: int, desired: int, min_replicas: int, max_replicas: int) -> tuple[int, str, str]:
    """Without ``spec.behavior`` (``convertDesiredReplicasWithRules``): scale up at most to
    ``max(2 × current, 4)``, and keep within [min, max]."""
    ceiling = _ceiling(int(max(SCALE_UP_LIMIT_FACTOR * current, SCALE_UP_LIMIT_MINIMUM)), max_replicas)
    if desired < min_replicas:
        return (min_replicas, *TOO_FEW)
    if desired > ceiling[0]:
        return ceiling
    return (desired, *WITHIN_RANGE)


def store_scale_event(history: History, behavior: Obj | None, previous: int, new: int, now: float) -> None:
    """Remember a rescale for the rate policies (``storeScaleEvent``); events older than the
    longest policy period are reused.  Nothing is kept without ``spec.behavior``."""
    if behavior is None:
        return
    up = new > previous
    rules = behavior.get("scaleUp" if up else "scaleDown") or {}
    events = history.scale_up_events if up else history.scale_down_events
    longest = max((p.get("periodSeconds") or 0 for p in rules.get("policies") or []), default=0)
    for e in events:
        if e.timestamp < now - longest:
            e.outdated = True
    event = ScaleEvent(now, abs(new - previous))
    outdated = [i for i, e in enumerate(events) if e.outdated]
    if outdated:
        events[outdated[-1]] = event
    else:
        events.append(event)


# ====================================================================== conditions and status
def set_condition(conditions: list[Obj], ctype: str, status: str, reason: str, message: str,
                  stamp: str) -> list[Obj]:
    """Set one HPA condition (added if missing; ``lastTransitionTime`` moves only when the
    status changes) — Kubernetes' ``setConditionInList``.  Returns the new list."""
    out = [dict(c) for c in conditions]
    current = next((c for c in out if c.get("type") == ctype), None)
    if current is None:
        current = {"type": ctype}
        out.append(current)
    if current.get("status") != status:
        current["lastTransitionTime"] = stamp
    current.update(status=status, reason=reason, message=message)
    return out


@dataclass
class Plan:
    """The outcome of one reconcile: the status to write and what to do.

    ``rescale`` asks the controller to set the target's replicas to ``desired_replicas`` and
    then call :meth:`Autoscaler.finish`; ``events`` are ``(type, reason, message)``;
    ``error`` is what the sync reports (logged; the HPA is synced again next period).
    """

    status: Obj
    current_replicas: int = 0
    desired_replicas: int = 0
    rescale: bool = False
    reason: str = ""
    metrics: list[Obj] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    error: str | None = None


def _status(current: int, desired: int, metrics: list[Obj], conditions: list[Obj], last_scale: str | None,
            generation: Any) -> Obj:
    """An HPA status (Kubernetes' ``setStatus``): omits what is empty."""
    status = {"currentReplicas": current, "desiredReplicas": desired, "currentMetrics": metrics or None,
              "lastScaleTime": last_scale or None, "conditions": conditions or None, "observedGeneration": generation}
    return {k: v for k, v in status.items() if v is not None}


class Autoscaler:
    """The HPA algorithm over plain inputs, with per-HPA histories and an injectable ``clock``
    (epoch seconds): :meth:`plan` then, when ``plan.rescale``, :meth:`finish`."""

    def __init__(self, options: AutoscalerOptions | None = None, clock: Callable[[], float] = time.time) -> None:
        self.options = options or AutoscalerOptions()
        self.clock = clock
        self.histories: dict[str, History] = {}

    def forget(self, key: str) -> None:
        """Drop the history of a deleted HPA."""
        self.histories.pop(key, None)

    # ------------------------------------------------------------------ one metric
    def _metric(self, spec: Obj, current: int, pods: list[Obj], pod_metrics: list[Obj] | str,
                now: float) -> tuple[Proposal, str, Obj]:
        """One Resource metric → (proposal, metric name for messages, MetricStatus);
        raises MetricError with Kubernetes' message."""
        source = spec.get("resource") or {}
        resource = str(source.get("name") or "")
        target = source.get("target") or {}
        average_value = target.get("averageValue")

        def fetch() -> dict[str, PodMetric]:
            if isinstance(pod_metrics, str):
                raise MetricError(f"unable to get metrics for resource {resource}: unable to fetch metrics "
                                  f"from resource metrics API: {pod_metrics}")
            if not pod_metrics:
                raise MetricError(f"unable to get metrics for resource {resource}: no metrics returned from "
                                  "resource metrics API")
            return pod_metrics_for(pod_metrics, resource)

        if average_value is not None:
            try:
                proposal = raw_resource_replicas(current, milli_value(average_value), resource, pods, fetch(),
                                                 now, self.options)
            except (MetricError, ValueError) as exc:
                raise MetricError(f"failed to get {resource} usage: {exc}") from None
            status = {"type": "Resource", "resource": {"name": resource,
                                                        "current": {"averageValue": format_milli(proposal.average)}}}
            return proposal, f"{resource} resource", status
        if target.get("averageUtilization") is None:
            raise MetricError("invalid resource metric source: neither an average utilization target nor an "
                              "average value (usage) target was set")
        try:
            proposal = resource_replicas(current, int(target["averageUtilization"]), resource, pods, fetch(), now,
                                         self.options)
        except (MetricError, ValueError) as exc:
            raise MetricError(f"failed to get {resource} utilization: {exc}") from None
        status = {"type": "Resource", "resource": {"name": resource, "current": {
            "averageUtilization": proposal.utilization, "averageValue": format_milli(proposal.average)}}}
        return proposal, f"{resource} resource utilization (percentage of request)", status

    def _metrics(self, hpa: Obj, current: int, selector_text: str, namespace_pods: list[Obj],
                 pod_metrics: list[Obj] | str, now: float, cond: Callable[[str, str, str, str], None],
                 events: list[Event]) -> tuple[int, str, list[Obj], str | None]:
        """``computeReplicasForMetrics``: (replicas or -1, metric name, statuses, error)."""
        if not selector_text:
            events.append(("Warning", "SelectorRequired", "selector is required"))
            cond("ScalingActive", "False", "InvalidSelector", "the HPA target's scale is missing a selector")
            return -1, "", [], "selector is required"
        try:
            selector = LabelSelector.parse(selector_text)
        except ValueError as exc:
            message = f"couldn't convert selector into a corresponding internal selector object: {exc}"
            events.append(("Warning", "InvalidSelector", message))
            cond("ScalingActive", "False", "InvalidSelector", message)
            return -1, "", [], message
        pods = [p for p in namespace_pods if selector.matches((p.get("metadata") or {}).get("labels") or {})]
        specs = (hpa.get("spec") or {}).get("metrics") or []
        statuses: list[Obj] = [{"type": ""} for _ in specs]
        replicas, name, invalid = 0, "", 0
        first: tuple[str, str, str] | None = None  # (condition reason, error, error as the sync reports it)
        for i, spec in enumerate(specs):
            resource = (spec.get("resource") or {}).get("name")
            try:
                if spec.get("type") != "Resource":
                    raise MetricError(f'unknown metric source type "{spec.get("type")}"')
                proposal, metric_name, statuses[i] = self._metric(spec, current, pods, pod_metrics, now)
            except MetricError as exc:
                is_resource = spec.get("type") == "Resource"
                reason = "FailedGetResourceMetric" if is_resource else "InvalidMetricSourceType"
                events.append(("Warning", reason, str(exc)))
                invalid += 1
                if first is None:
                    outer = f"failed to get {resource} resource metric value: {exc}" if is_resource else str(exc)
                    first = (reason, str(exc), outer)
                continue
            if replicas == 0 or proposal.replicas > replicas:
                replicas, name = proposal.replicas, metric_name
        error = None
        if first is not None:
            error = f"invalid metrics ({invalid} invalid out of {len(specs)}), first error is: {first[2]}"
        if first is not None and (invalid >= len(specs) or replicas < current):
            cond("ScalingActive", "False", first[0], f"the HPA was unable to compute the replica count: {first[1]}")
            return -1, "", statuses, error
        cond("ScalingActive", "True", "ValidMetricFound",
             f"the HPA was able to successfully calculate a replica count from {name}")
        return replicas, name, statuses, error

    # ------------------------------------------------------------------ reconcile
    def plan(self, key: str, hpa: Obj, scale: Obj | None, scale_error: str | None, namespace_pods: list[Obj],
             pod_metrics: list[Obj] | str) -> Plan:
        """Decide one sync of ``hpa`` (``reconcileAutoscaler``).

        ``scale`` is the target's autoscaling/v1 Scale (None with ``scale_error`` when it could
        not be read); ``namespace_pods`` the pods of the HPA's namespace (the selector is
        applied here); ``pod_metrics`` the PodMetrics items of the selected pods, or the error
        text when the metrics API failed.
        """
        now = self.clock()
        stamp = rfc3339(now)
        spec = hpa.get("spec") or {}
        old = copy.deepcopy(hpa.get("status") or {})
        generation = (hpa.get("metadata") or {}).get("generation")
        conditions: list[Obj] = list(old.get("conditions") or [])
        events: list[Event] = []

        def cond(ctype: str, status: str, reason: str, message: str) -> None:
            nonlocal conditions
            conditions = set_condition(conditions, ctype, status, reason, message, stamp)

        ref = spec.get("scaleTargetRef") or {}
        reference = f"{ref.get('kind')}/{(hpa.get('metadata') or {}).get('namespace')}/{ref.get('name')}"
        if scale is None:
            events.append(("Warning", "FailedGetScale", scale_error or "unknown error"))
            cond("AbleToScale", "False", "FailedGetScale",
                 f"the HPA controller was unable to get the target's current scale: {scale_error}")
            status = dict(old, conditions=conditions)
            return Plan(status, events=events,
                        error=f"failed to query scale subresource for {reference}: {scale_error}")
        cond("AbleToScale", "True", "SucceededGetScale",
             "the HPA controller was able to get the target's current scale")
        current = int((scale.get("spec") or {}).get("replicas") or 0)
        history = self.histories.setdefault(key, History())
        if not history.recommendations:
            history.recommendations.append(Recommendation(now, current))
        min_replicas = int(spec["minReplicas"]) if spec.get("minReplicas") is not None else 1
        max_replicas = int(spec.get("maxReplicas") or 0)
        behavior = spec.get("behavior")
        metrics: list[Obj] = []
        desired, reason, rescale, error = 0, "", True, None
        if current == 0 and min_replicas != 0:
            rescale = False
            cond("ScalingActive", "False", "ScalingDisabled", "scaling is disabled since the replica count of the "
                                                              "target is zero")
        elif current > max_replicas:
            desired, reason = max_replicas, "Current number of replicas above Spec.MaxReplicas"
        elif current < min_replicas:
            desired, reason = min_replicas, "Current number of replicas below Spec.MinReplicas"
        else:
            selector_text = str((scale.get("status") or {}).get("selector") or "")
            proposal, metric_name, metrics, error = self._metrics(hpa, current, selector_text, namespace_pods,
                                                                  pod_metrics, now, cond, events)
            if proposal == -1:
                message = error or "no metrics"
                events.append(("Warning", "FailedComputeMetricsReplicas", message))
                status = _status(current, int(old.get("desiredReplicas") or 0), metrics, conditions,
                                 old.get("lastScaleTime"), generation)
                return Plan(status, current, current, events=events, metrics=metrics,
                            error=f"failed to compute desired number of replicas based on listed metrics for "
                                  f"{reference}: {message}")
            if proposal > desired:
                desired = proposal
            if desired > current:
                reason = f"{metric_name} above target"
            elif desired < current:
                reason = "All metrics below target"
            desired = self._normalize(history, behavior, current, desired, min_replicas, max_replicas, now, cond)
            rescale = desired != current
        if not rescale:
            desired = current
        status = _status(current, desired, metrics, conditions, old.get("lastScaleTime"), generation)
        return Plan(status, current, desired, rescale, reason, metrics, events, error)

    def _normalize(self, history: History, behavior: Obj | None, current: int, desired: int, min_replicas: int,
                   max_replicas: int, now: float, cond: Callable[[str, str, str, str], None]) -> int:
        if behavior is None:
            stabilized = stabilize_legacy(history, desired, self.options.downscale_stabilization, now)
            if stabilized != desired:
                cond("AbleToScale", "True", "ScaleDownStabilized", "recent recommendations were higher than current "
                                                                    "one, applying the highest recent recommendation")
            else:
                cond("AbleToScale", "True", "ReadyForNewScale", "recommended size matches current size")
            limited, reason, message = limit_legacy(current, stabilized, min_replicas, max_replicas)
        else:
            scale_up = behavior.get("scaleUp") or {}
            scale_down = dict(behavior.get("scaleDown") or {})
            if scale_down.get("stabilizationWindowSeconds") is None:  # maybeInitScaleDownStabilizationWindow
                scale_down["stabilizationWindowSeconds"] = int(self.options.downscale_stabilization)
            stabilized, reason, message = stabilize(history, desired, current, scale_up, scale_down, now)
            if stabilized != desired:
                cond("AbleToScale", "True", reason, message)
            else:
                cond("AbleToScale", "True", "ReadyForNewScale", "recommended size matches current size")
            limited, reason, message = limit_by_behavior(history, stabilized, current, min_replicas, max_replicas,
                                                         scale_up, scale_down, now)
        cond("ScalingLimited", "True" if limited != stabilized else "False", reason, message)
        return limited

    def finish(self, key: str, hpa: Obj, plan: Plan, error: str | None) -> Plan:
        """Complete ``plan`` after the scale write: success (``error`` None) records the scale event,
        the SuccessfulRescale event and ``lastScaleTime``; a failure the FailedRescale event and
        ``AbleToScale=False``.  Returns the updated plan."""
        now = self.clock()
        stamp = rfc3339(now)
        spec = hpa.get("spec") or {}
        old = hpa.get("status") or {}
        generation = (hpa.get("metadata") or {}).get("generation")
        conditions = list(plan.status.get("conditions") or [])
        if error is not None:
            plan.events.append(("Warning", "FailedRescale", f"New size: {plan.desired_replicas}; reason: "
                                                            f"{plan.reason}; error: {error}"))
            conditions = set_condition(conditions, "AbleToScale", "False", "FailedUpdateScale",
                                       f"the HPA controller was unable to update the target scale: {error}", stamp)
            plan.status = _status(plan.current_replicas, int(old.get("desiredReplicas") or 0), plan.metrics,
                                  conditions, old.get("lastScaleTime"), generation)
            ref = spec.get("scaleTargetRef") or {}
            plan.error = f"failed to rescale {ref.get('kind')}/{ref.get('name')}: {error}"
            return plan
        conditions = set_condition(conditions, "AbleToScale", "True", "SucceededRescale",
                                   f"the HPA controller was able to update the target scale to {plan.desired_replicas}",
                                   stamp)
        plan.events.append(("Normal", "SuccessfulRescale", f"New size: {plan.desired_replicas}; reason: {plan.reason}"))
        store_scale_event(self.histories.setdefault(key, History()), spec.get("behavior"), plan.current_replicas,
                          plan.desired_replicas, now)
        plan.status = _status(plan.current_replicas, plan.desired_replicas, plan.metrics, conditions, stamp,
                              generation)
        return plan


# ====================================================================== the controller
class HorizontalPodAutoscalerController(Controller):
    """Reconciles HorizontalPodAutoscalers (keys ``namespace/name``) every ``options.sync_period``.

    Each HPA is synced at most once per period, as Kubernetes' rate-limited queue does:
    adds and spec changes queue it for the next period (a new HPA right away), every sync
    queues the next one.  Pods come from the shared pod informer; the Scale and the
    PodMetrics are read from the API.
    """

    name = "horizontal-pod-autoscaler"

    def __init__(self, client: Client, factory: SharedInformerFactory, options: AutoscalerOptions | None = None,
                 recorder: EventRecorder | None = None, clock: Callable[[], float] = time.time) -> None:
        super().__init__(client, factory, recorder)
        self.options = options or AutoscalerOptions()
        self.autoscaler = Autoscaler(self.options, clock)
        self.hpa_rt = client.kind("autoscaling/v2", "HorizontalPodAutoscaler")
        self.hpas = factory.informer(self.hpa_rt)
        self.pods = factory.informer(client.kind("v1", "Pod"), {NAMESPACE_INDEX: by_namespace})
        self.hpas.add_handler(lambda hpa: self.enqueue(object_key(hpa)), self._update, self._delete)
        self.pod_metrics_rt = next(rt for rt in METRICS_TYPES if rt.kind == "PodMetrics")

    def _update(self, old: Obj, cur: Obj) -> None:
        self.enqueue_after(object_key(cur), self.options.sync_period)

    def _delete(self, hpa: Obj) -> None:
        self.autoscaler.forget(object_key(hpa))

    async def _scale(self, hpa: Obj) -> tuple[Any, Obj | None, str | None]:
        """(target ResourceType, Scale, error text)."""
        ref = (hpa.get("spec") or {}).get("scaleTargetRef") or {}
        namespace = hpa["metadata"]["namespace"]
        try:
            rt = self.client.kind(ref.get("apiVersion") or None, str(ref.get("kind") or ""))
        except errors.NotFound as exc:
            return None, None, exc.message
        if "scale" not in rt.subresources:
            return rt, None, f'{rt.plural}.{rt.group or "core"} "{ref.get("name")}" has no scale subresource'
        try:
            return rt, await self.client.get(rt, str(ref.get("name")), namespace, subresource="scale"), None
        except errors.APIError as exc:
            return rt, None, exc.message

    async def _pod_metrics(self, namespace: str, selector: str) -> list[Obj] | str:
        if not selector:
            return []
        try:
            listed = await self.client.request("GET", resource_path(self.pod_metrics_rt, namespace),
                                               params={"labelSelector": selector})
        except errors.APIError as exc:
            return exc.message
        if listed.get("apiVersion") not in (None, METRICS_API_VERSION):
            return f"unexpected answer {listed.get('kind')} from the resource metrics API"
        return list(listed.get("items") or [])

    async def sync(self, key: str) -> None:
        """One HPA sync (see the module docstring); always queues the next one."""
        cached = self.hpas.get(key)
        if cached is None:
            self.autoscaler.forget(key)
            return
        try:
            await self._sync(key, copy.deepcopy(cached))
        finally:
            if self.hpas.get(key) is not None:
                self.enqueue_after(key, self.options.sync_period)

    async def _sync(self, key: str, hpa: Obj) -> None:
        namespace = hpa["metadata"]["namespace"]
        rt, scale, scale_error = await self._scale(hpa)
        selector = str(((scale or {}).get("status") or {}).get("selector") or "")
        pods = self.pods.by_index(NAMESPACE_INDEX, namespace)
        pod_metrics = await self._pod_metrics(namespace, selector) if scale is not None else []
        plan = self.autoscaler.plan(key, hpa, scale, scale_error, pods, pod_metrics)
        if plan.rescale and scale is not None:
            write_error = None
            try:
                await self.client.patch(rt, hpa["spec"]["scaleTargetRef"]["name"],
                                        {"spec": {"replicas": plan.desired_replicas}}, namespace, subresource="scale")
            except errors.APIError as exc:
                write_error = exc.message
            plan = self.autoscaler.finish(key, hpa, plan, write_error)
            if write_error is None:
                self.log.info("horizontal-pod-autoscaler hpa=%s rescaled %s -> %s reason=%s", key,
                              plan.current_replicas, plan.desired_replicas, plan.reason)
        for type_, reason, message in plan.events:
            self.event(hpa, type_, reason, message)
        if plan.error:
            self.log.warning("horizontal-pod-autoscaler hpa=%s %s", key, plan.error)
        await self._write_status(hpa, plan.status)

    async def _write_status(self, hpa: Obj, status: Obj) -> None:
        """Merge-patch the status when it changed (keys that went away are set to null)."""
        old = hpa.get("status") or {}
        if status == old:
            return
        patch: Obj = {k: None for k in old if k not in status}
        patch.update(status)
        meta = hpa["metadata"]
        try:
            await self.client.patch(self.hpa_rt, meta["name"], {"status": patch}, meta["namespace"],
                                    subresource="status")
        except errors.NotFound:
            pass
