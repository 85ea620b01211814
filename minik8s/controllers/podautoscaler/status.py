"""What one reconcile decides and writes: HPA conditions and status, and the :class:`Plan`."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from minik8s.api.base import Obj

Event = tuple[str, str, str]  # (type Normal|Warning, reason, message)


def rfc3339(epoch: float) -> str:
    """Epoch seconds as RFC 3339 with second precision (Kubernetes' ``metav1.Time``)."""
    return dt.datetime.fromtimestamp(epoch, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


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


@dataclass(frozen=True)
class MetricFailure:
    """Why one metric failed: the ``ScalingActive`` condition / Warning event ``reason``, the
    ``error`` (the event message; the condition prefixes ``the HPA was unable to compute the
    replica count: ``) and ``outer``, the error as ``computeReplicasForMetric`` returns it
    (quoted by ``invalid metrics (1 invalid out of 2), first error is: ...``)."""

    reason: str
    error: str
    outer: str


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


def hpa_status(current: int, desired: int, metrics: list[Obj], conditions: list[Obj], last_scale: str | None,
               generation: Any) -> Obj:
    """An HPA status (Kubernetes' ``setStatus``): omits what is empty."""
    status = {"currentReplicas": current, "desiredReplicas": desired, "currentMetrics": metrics or None,
              "lastScaleTime": last_scale or None, "conditions": conditions or None, "observedGeneration": generation}
    return {k: v for k, v in status.items() if v is not None}

