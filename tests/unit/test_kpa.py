"""The Function autoscaler's decider (Knative KPA): stable and panic windows, bounds, scale to zero."""

from __future__ import annotations

from minik8s.controllers.kpa import Decider, ScalingParams


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def ticks(decider: Decider, clock: Clock, concurrency: float, seconds: float, current: int, ready: int | None = None
          ) -> int:
    """Feed one sample every 2 s for ``seconds``, applying each decision; returns the last desired count."""
    end = clock.now + seconds
    while clock.now < end:
        clock.now += 2
        decider.observe(concurrency)
        current = decider.decide(current, current if ready is None else ready).desired
    return current


def test_stable_mode_follows_the_average_over_the_window() -> None:
    clock = Clock()
    d = Decider(ScalingParams(target_concurrency=10), clock)
    assert ticks(d, clock, 25, 60, current=3) == 3
    assert not d.decide(3, 3).panicking
    # load halves: the 60 s average comes down over a whole window
    assert ticks(d, clock, 12, 20, current=3) == 3
    assert ticks(d, clock, 12, 60, current=3) == 2


def test_panic_scales_up_fast_and_never_down_while_panicking() -> None:
    clock = Clock()
    d = Decider(ScalingParams(target_concurrency=10, max_scale=20), clock)
    assert ticks(d, clock, 5, 60, current=1) == 1
    clock.now += 2
    d.observe(80)  # a burst: 6 s average 80/3 ≈ 27 in flight against 1 ready instance
    decision = d.decide(1, 1)
    assert decision.panicking and decision.desired >= 2
    high = ticks(d, clock, 80, 6, current=decision.desired, ready=1)
    assert high == 8
    # the burst ends: still panicking (no scale-down) until the panic window stayed calm for 60 s
    assert ticks(d, clock, 5, 50, current=high) == high
    assert d.decide(high, high).panicking
    later = ticks(d, clock, 5, 20, current=high)
    assert not d.decide(later, later).panicking and later < high


def test_bounds_are_applied() -> None:
    clock = Clock()
    d = Decider(ScalingParams(target_concurrency=1, min_scale=2, max_scale=4), clock)
    assert ticks(d, clock, 0, 120, current=3) == 2
    assert ticks(d, clock, 50, 10, current=2) == 4


def test_scale_to_zero_waits_for_idle_time_after_the_last_request() -> None:
    clock = Clock()
    d = Decider(ScalingParams(target_concurrency=10, scale_to_zero_after=30), clock)
    assert ticks(d, clock, 3, 10, current=1) == 1
    last_request = clock.now
    # no more requests: the stable window still holds old samples for 60 s, then idle > 30 s
    desired = ticks(d, clock, 0, 58, current=1)
    assert desired == 1
    desired = ticks(d, clock, 0, 4, current=1)
    assert desired == 0 and clock.now - last_request >= 60


def test_short_idle_keeps_one_instance() -> None:
    clock = Clock()
    d = Decider(ScalingParams(target_concurrency=10, scale_to_zero_after=90), clock)
    assert ticks(d, clock, 3, 10, current=1) == 1
    assert ticks(d, clock, 0, 80, current=1) == 1
    decision = d.decide(1, 1)
    assert decision.desired == 1 and "before scaling to zero" in decision.reason
    assert ticks(d, clock, 0, 12, current=1) == 0


def test_a_cold_started_instance_is_not_scaled_straight_back_to_zero() -> None:
    clock = Clock()
    d = Decider(ScalingParams(target_concurrency=10, scale_to_zero_after=30), clock)
    assert ticks(d, clock, 0, 120, current=0) == 0
    # the activator scaled the Function from zero; its request has not shown up in a sample yet
    d.note_scale()
    clock.now += 2
    d.observe(0)
    assert d.decide(1, 0).desired == 1
    assert ticks(d, clock, 0, 26, current=1) == 1
    assert ticks(d, clock, 0, 6, current=1) == 0


def test_last_request_time_from_the_gateway_counts() -> None:
    clock = Clock()
    d = Decider(ScalingParams(target_concurrency=10, scale_to_zero_after=30), clock)
    clock.now += 100
    d.observe(0, last_request_at=clock.now - 5)  # a short request between two samples
    assert d.decide(1, 1).desired == 1


def test_without_metrics_the_current_scale_is_kept() -> None:
    clock = Clock()
    d = Decider(ScalingParams(target_concurrency=10, min_scale=0, max_scale=3), clock)
    decision = d.decide(2, 2)
    assert (decision.desired, decision.reason) == (2, "no metrics")
    assert d.decide(5, 5).desired == 3
    assert ticks(d, clock, 10, 4, current=1) == 1
    clock.now += 120  # the gateway went away: the old samples age out, nothing new arrives
    assert d.decide(1, 1).reason == "no metrics"


def test_from_zero_a_waiting_request_asks_for_an_instance() -> None:
    clock = Clock()
    d = Decider(ScalingParams(target_concurrency=10), clock)
    ticks(d, clock, 0, 100, current=0)
    clock.now += 2
    d.observe(1)
    assert d.decide(0, 0).desired == 1
