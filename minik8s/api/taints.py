"""Taints and tolerations: the matching rule the scheduler and the node lifecycle controller share.

Follows ``k8s.io/api/core/v1`` ``Toleration.ToleratesTaint``; taints and tolerations are
wire-form dicts (``key``, ``value``, ``effect``; ``operator``, ``tolerationSeconds``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

TAINT_NOT_READY = "node.kubernetes.io/not-ready"
TAINT_UNREACHABLE = "node.kubernetes.io/unreachable"
TAINT_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"

NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE = "NoSchedule", "PreferNoSchedule", "NoExecute"
#: Every taint effect Kubernetes knows.
TAINT_EFFECTS = (NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE)


def toleration_matches(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    """Whether one toleration tolerates one taint (``ToleratesTaint``).

    An empty ``effect`` matches every effect; an empty ``key`` (with ``Exists``) every key;
    ``Exists`` ignores the value; ``Equal`` (the default operator) needs the same value;
    any other operator tolerates nothing.
    """
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    if operator == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return False


def tolerates(tolerations: Iterable[Mapping[str, Any]], taint: Mapping[str, Any]) -> bool:
    """Whether any of ``tolerations`` tolerates ``taint``."""
    return any(toleration_matches(t, taint) for t in tolerations)
