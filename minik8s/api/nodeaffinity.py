"""Node selectors and required node affinity: which nodes a pod may run on by their labels and name.

Pure functions over wire-form dicts, following Kubernetes' ``component-helpers/scheduling/corev1``
(``nodeaffinity``: ``MatchNodeSelectorTerms``, ``GetRequiredNodeAffinity``).  The scheduler's
NodeAffinity plugin and the DaemonSet controller (which node should run a daemon pod) share them.
``matchFields`` supports ``metadata.name``, the only node field Kubernetes allows there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


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


def term_matches(term: Mapping[str, Any], labels: Mapping[str, str], name: str) -> bool:
    """A ``NodeSelectorTerm`` against a node's ``labels`` and ``name``: all its ``matchExpressions``
    (labels) and ``matchFields`` (only ``metadata.name``) hold. A term with neither matches no node."""
    expressions = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not expressions and not fields:
        return False
    if not all(requirement_matches(r, labels) for r in expressions):
        return False
    field_values = {"metadata.name": name}
    return all(r.get("key") == "metadata.name" and requirement_matches(r, field_values) for r in fields)


def node_selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str], name: str) -> bool:
    """A ``NodeSelector``: any of its ``nodeSelectorTerms`` matches (None: every node; no terms: none)."""
    if selector is None:
        return True
    return any(term_matches(t, labels, name) for t in selector.get("nodeSelectorTerms") or [])


def pod_spec_matches_node(spec: Mapping[str, Any], labels: Mapping[str, str], name: str) -> bool:
    """``spec.nodeSelector`` (every pair equal) AND the required node affinity terms of a pod spec
    (Kubernetes ``GetRequiredNodeAffinity(pod).Match(node)``)."""
    for key, value in (spec.get("nodeSelector") or {}).items():
        if labels.get(key) != value:
            return False
    node_affinity = (spec.get("affinity") or {}).get("nodeAffinity") or {}
    return node_selector_matches(node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution"), labels, name)
