"""Scaling behavior (``spec.behavior`` and the legacy defaults): stabilization windows over past
recommendations, rate limits from scale policies and past scale events, min/max bounds."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from minik8s.api.base import Obj

#: Kubernetes' legacy scale-up limit without ``spec.behavior``: ``max(2 × current, 4)``.
SCALE_UP_LIMIT_FACTOR = 2.0
SCALE_UP_LIMIT_MINIMUM = 4.0


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

