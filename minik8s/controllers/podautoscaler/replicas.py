"""Replica counts from pod metrics (Kubernetes' ``replica_calculator.go``): per metric, the
proposal ``ceil(readyPods × current / target)`` with the unready/missing-pod corrections."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from minik8s.api.base import Obj, parse_time
from minik8s.api.durations import parse_duration
from minik8s.api.quantity import milli_value
from minik8s.controllers.podautoscaler.options import AutoscalerOptions


class MetricError(Exception):
    """A metric could not be computed; the message is Kubernetes' wording."""


def epoch_of(stamp: str | None) -> float | None:
    """An RFC 3339 timestamp as epoch seconds; None when missing or unparsable."""
    try:
        when = parse_time(stamp)
    except ValueError:
        return None
    return when.timestamp() if when else None


@dataclass(frozen=True)
class PodMetric:
    """One pod's usage of a resource: ``value`` in thousandths (millicores, or bytes × 1000)
    summed over its containers, sampled at ``timestamp`` (epoch s) over ``window`` s."""

    value: int
    timestamp: float = 0.0
    window: float = 0.0


def _sample(item: Obj, value: int) -> PodMetric:
    try:
        window = parse_duration(item.get("window") or "0s")
    except ValueError:
        window = 0.0
    return PodMetric(value, epoch_of(item.get("timestamp")) or 0.0, window)


def _milli(quantity: str, resource: str) -> int:
    try:
        return milli_value(quantity)
    except ValueError as exc:
        raise MetricError(f"invalid {resource} usage {quantity!r}: {exc}") from None


def pod_metrics_for(items: list[Obj], resource: str, container: str | None = None) -> dict[str, PodMetric]:
    """PodMetrics items → ``{pod name: PodMetric}`` for ``resource`` (Kubernetes' ``getPodMetrics``):
    a pod with no containers, or a container without that resource, is left out.

    With ``container`` (a ContainerResource metric, ``getContainerMetrics``) only that
    container's usage counts; a pod whose metrics lack the container raises MetricError
    ``failed to get container metrics: container app not present in metrics for pod ns/web-1``,
    and one whose container lacks the resource is left out.  Raises MetricError when a
    quantity does not parse.
    """
    out: dict[str, PodMetric] = {}
    for item in items:
        meta = item.get("metadata") or {}
        name = str(meta.get("name"))
        containers = item.get("containers") or []
        if container is not None:
            found = next((c for c in containers if c.get("name") == container), None)
            if found is None:
                raise MetricError(f"failed to get container metrics: container {container} not present in "
                                  f"metrics for pod {meta.get('namespace')}/{name}")
            quantity = (found.get("usage") or {}).get(resource)
            if quantity is not None:
                out[name] = _sample(item, _milli(quantity, resource))
            continue
        if not containers:
            continue
        total = 0
        for c in containers:
            quantity = (c.get("usage") or {}).get(resource)
            if quantity is None:
                break
            total += _milli(quantity, resource)
        else:
            out[name] = _sample(item, total)
    return out


def pod_requests(pods: list[Obj], resource: str, container: str | None = None) -> dict[str, int]:
    """``{pod name: Σ containers' requests of resource}`` in thousandths (``calculateRequests``):
    the regular containers and the sidecars (init containers with ``restartPolicy: Always``),
    or only the one named ``container`` (a pod without it requests 0).

    Raises MetricError ``missing request for cpu in container app of Pod web-1`` when a
    counted container has no request for ``resource``.
    """
    out: dict[str, int] = {}
    for pod in pods:
        spec = pod.get("spec") or {}
        sidecars = [c for c in spec.get("initContainers") or [] if c.get("restartPolicy") == "Always"]
        total = 0
        for c in [*(spec.get("containers") or []), *sidecars]:
            if container is not None and c.get("name") != container:
                continue
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
            start = epoch_of(status.get("startTime"))
            if ready is None or start is None:
                unready = True
            else:
                transition = epoch_of(ready.get("lastTransitionTime")) or 0.0
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
                      metrics: dict[str, PodMetric], now: float, options: AutoscalerOptions,
                      container: str | None = None) -> Proposal:
    """Replicas for a Utilization target (Kubernetes' ``GetResourceReplicas``): missing pods count
    as 100 % of their request (or the target if higher) on a scale-down; with ``container`` the
    requests are that container's (ContainerResource).  Raises MetricError (no pods, no usable
    metrics, missing requests)."""
    groups, usable = _usable_metrics(pods, metrics, resource, now, options)
    requests = pod_requests(pods, resource, container)
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

