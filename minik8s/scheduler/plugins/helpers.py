"""Matching rules several plugins share: tolerations vs taints, node selectors vs nodes.

Pure functions over wire-form dicts, following ``k8s.io/api/core/v1`` helpers
(``Toleration.ToleratesTaint``) and ``component-helpers/scheduling/corev1``
(``nodeaffinity``: ``MatchNodeSelectorTerms``, ``GetRequiredNodeAffinity``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from minik8s.api.base import Obj
from minik8s.api.taints import (  # noqa: F401 - re-exported for the plugins
    NO_EXECUTE,
    NO_SCHEDULE,
    PREFER_NO_SCHEDULE,
    TAINT_NOT_READY,
    TAINT_UNREACHABLE,
    TAINT_UNSCHEDULABLE,
    tolerates,
    toleration_matches,
)
from minik8s.scheduler.nodeinfo import NodeInfo, PodInfo


# ---------------------------------------------------------------------------- taints
def untolerated_taint(taints: Iterable[Mapping[str, Any]], tolerations: list[Obj],
                      effects: tuple[str, ...] = (NO_SCHEDULE, NO_EXECUTE)) -> Mapping[str, Any] | None:
    """The first taint with one of ``effects`` that no toleration tolerates, or None."""
    for taint in taints:
        if taint.get("effect") in effects and not tolerates(tolerations, taint):
            return taint
    return None


def taint_reason(taint: Mapping[str, Any]) -> str:
    """Kubernetes' TaintToleration reason: ``node(s) had untolerated taint {key: value}``."""
    return f"node(s) had untolerated taint {{{taint.get('key') or ''}: {taint.get('value') or ''}}}"


# ---------------------------------------------------------------------------- node selectors
def _int(value: str) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def requirement_matches(req: Mapping[str, Any], values_by_key: Mapping[str, str]) -> bool:
    """One ``NodeSelectorRequirement`` against a label (or field) map.

    ``In`` / ``NotIn`` need at least one value (``NotIn`` also matches an absent key);
    ``Exists`` / ``DoesNotExist`` take none; ``Gt`` / ``Lt`` take exactly one integer and
    compare it with the label parsed as an integer (no match when it does not parse). A
    malformed requirement matches nothing.
    """
    key = req.get("key") or ""
    operator = req.get("operator")
    values = [str(v) for v in req.get("values") or []]
    present = key in values_by_key
    value = values_by_key.get(key)
    if operator == "In":
        return bool(values) and present and value in values
    if operator == "NotIn":
        return bool(values) and (not present or value not in values)
    if operator == "Exists":
        return not values and present
    if operator == "DoesNotExist":
        return not values and not present
    if operator in ("Gt", "Lt"):
        if len(values) != 1 or not present:
            return False
        want, have = _int(values[0]), _int(value or "")
        if want is None or have is None:
            return False
        return have > want if operator == "Gt" else have < want
    return False


def term_matches(term: Mapping[str, Any], node: NodeInfo) -> bool:
    """A ``NodeSelectorTerm``: all its ``matchExpressions`` (labels) and ``matchFields``
    (only ``metadata.name``) hold. A term with neither matches no node."""
    expressions = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not expressions and not fields:
        return False
    if not all(requirement_matches(r, node.labels) for r in expressions):
        return False
    field_values = {"metadata.name": node.name}
    for r in fields:
        if r.get("key") != "metadata.name" or not requirement_matches(r, field_values):
            return False
    return True


def node_selector_matches(selector: Mapping[str, Any] | None, node: NodeInfo) -> bool:
    """A ``NodeSelector``: any of its ``nodeSelectorTerms`` matches (no terms: no node)."""
    if selector is None:
        return True
    return any(term_matches(t, node) for t in selector.get("nodeSelectorTerms") or [])


def required_node_affinity_matches(pod: PodInfo, node: NodeInfo) -> bool:
    """``spec.nodeSelector`` (every pair equal) AND the required node affinity terms
    (Kubernetes ``GetRequiredNodeAffinity(pod).Match(node)``)."""
    spec = pod.pod.get("spec") or {}
    for key, value in (spec.get("nodeSelector") or {}).items():
        if node.labels.get(key) != value:
            return False
    node_affinity = (spec.get("affinity") or {}).get("nodeAffinity") or {}
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    return node_selector_matches(required, node)
