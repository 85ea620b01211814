"""Matching rules several plugins share: tolerations vs taints, node selectors vs nodes.

Pure functions over wire-form dicts, following ``k8s.io/api/core/v1`` helpers
(``Toleration.ToleratesTaint``) and ``component-helpers/scheduling/corev1``
(``nodeaffinity``: ``MatchNodeSelectorTerms``, ``GetRequiredNodeAffinity``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from minik8s.api import nodeaffinity
from minik8s.api.base import Obj
from minik8s.api.nodeaffinity import requirement_matches  # noqa: F401 - re-exported for the plugins
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
def term_matches(term: Mapping[str, Any], node: NodeInfo) -> bool:
    """A ``NodeSelectorTerm`` against ``node`` (:func:`minik8s.api.nodeaffinity.term_matches`)."""
    return nodeaffinity.term_matches(term, node.labels, node.name)


def node_selector_matches(selector: Mapping[str, Any] | None, node: NodeInfo) -> bool:
    """A ``NodeSelector``: any of its ``nodeSelectorTerms`` matches (no terms: no node)."""
    return nodeaffinity.node_selector_matches(selector, node.labels, node.name)


def required_node_affinity_matches(pod: PodInfo, node: NodeInfo) -> bool:
    """``spec.nodeSelector`` (every pair equal) AND the required node affinity terms
    (Kubernetes ``GetRequiredNodeAffinity(pod).Match(node)``)."""
    return nodeaffinity.pod_spec_matches_node(pod.pod.get("spec") or {}, node.labels, node.name)
