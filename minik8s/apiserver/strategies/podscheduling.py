"""A pod's scheduling constraints: the create-time merge of ``matchLabelKeys`` /
``mismatchLabelKeys`` into pod affinity terms, and the validation of pod (anti-)affinity terms and
topology spread constraints, with Kubernetes 1.32's field paths and messages.

* :func:`merge_affinity_label_keys` -- Kubernetes' ``mutatePodAffinity`` (``MatchLabelKeysInPodAffinity``,
  beta and on in 1.32): when a pod is created, each affinity / anti-affinity term (required and
  preferred) with a ``labelSelector`` gets ``key In (value)`` for every ``matchLabelKeys`` key and
  ``key NotIn (value)`` for every ``mismatchLabelKeys`` key the pod has a label for, appended to
  ``labelSelector.matchExpressions``. The scheduler then only reads the selector. Topology spread
  constraints are not rewritten in 1.32: the scheduler merges their ``matchLabelKeys`` itself.
* :func:`pod_affinity_errors` -- ``validatePodAffinity`` / ``validatePodAntiAffinity``: weights in
  1..100, valid label and namespace selectors, namespace names, ``topologyKey`` required and a
  qualified name, label keys valid, only with a ``labelSelector``, a ``matchLabelKeys`` key not
  also in the selector (after the merge: in it twice) nor in ``mismatchLabelKeys``.
* :func:`topology_spread_errors` -- ``validateTopologySpreadConstraints``: ``maxSkew`` > 0,
  ``topologyKey`` required, ``whenUnsatisfiable`` DoNotSchedule / ScheduleAnyway, no two
  constraints with the same key and action, ``minDomains`` > 0 and only with DoNotSchedule,
  ``nodeAffinityPolicy`` / ``nodeTaintsPolicy`` Honor / Ignore, ``matchLabelKeys`` valid, only with
  a ``labelSelector`` and not keys of it, and a valid ``labelSelector``.

Causes are ``(field path, bad value or None, message)`` as every strategy returns them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from minik8s.api import validation as v
from minik8s.api.base import Obj
from minik8s.apiserver.strategies.base import REQUIRED, Cause, selector_errors, unsupported

REQUIRED_TERMS = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED_TERMS = "preferredDuringSchedulingIgnoredDuringExecution"
WHEN_UNSATISFIABLE = ("DoNotSchedule", "ScheduleAnyway")
NODE_INCLUSION_POLICIES = ("Honor", "Ignore")
NOT_POSITIVE = "must be greater than zero"
BOTH_IN_SELECTOR = "exists in both matchLabelKeys and labelSelector"
NO_SELECTOR = "Forbidden: must not be specified when labelSelector is not set"


def _affinity_terms(affinity: Obj) -> list[tuple[str, Obj]]:
    """Every ``PodAffinityTerm`` of ``spec.affinity`` with its path below ``affinity``: required and
    preferred, of ``podAffinity`` and ``podAntiAffinity``."""
    terms: list[tuple[str, Obj]] = []
    for kind in ("podAffinity", "podAntiAffinity"):
        section = affinity.get(kind)
        if not isinstance(section, dict):
            continue
        for i, term in enumerate(section.get(REQUIRED_TERMS) or []):
            if isinstance(term, dict):
                terms.append((f"{kind}.{REQUIRED_TERMS}[{i}]", term))
        for i, weighted in enumerate(section.get(PREFERRED_TERMS) or []):
            if isinstance(weighted, dict) and isinstance(weighted.get("podAffinityTerm"), dict):
                terms.append((f"{kind}.{PREFERRED_TERMS}[{i}].podAffinityTerm", weighted["podAffinityTerm"]))
    return terms


def merge_affinity_label_keys(pod: Obj) -> None:
    """Kubernetes' ``mutatePodAffinity`` on a new pod, in place (module docstring): a term without a
    ``labelSelector`` (which matches nothing) is left alone, as are keys the pod has no label for."""
    spec = pod.get("spec") or {}
    affinity = spec.get("affinity")
    if not isinstance(affinity, dict):
        return
    labels: Mapping[str, str] = (pod.get("metadata") or {}).get("labels") or {}
    for _, term in _affinity_terms(affinity):
        selector = term.get("labelSelector")
        if not isinstance(selector, dict):
            continue
        for field, operator in (("matchLabelKeys", "In"), ("mismatchLabelKeys", "NotIn")):
            for key in term.get(field) or []:
                if isinstance(key, str) and key in labels:
                    selector.setdefault("matchExpressions", []).append(
                        {"key": key, "operator": operator, "values": [labels[key]]})


def _label_name_causes(key: Any, path: str) -> list[Cause]:
    """``ValidateLabelName``: a qualified name."""
    if not isinstance(key, str):
        return [(path, key, "must be a string")]
    return [(path, key, m) for m in v.qualified_name_errors(key)]


def _label_keys_causes(keys: list[Any], selector: Any, path: str) -> list[Cause]:
    """``validateLabelKeys``: only with a ``labelSelector``; each key a label name."""
    if not keys:
        return []
    if selector is None:
        return [(path, None, NO_SELECTOR)]
    causes: list[Cause] = []
    for i, key in enumerate(keys):
        causes += _label_name_causes(key, f"{path}[{i}]")
    return causes


def _selector_keys(selector: Any) -> list[str]:
    """The keys a ``metav1.LabelSelector`` names: ``matchLabels`` first, then each expression's key."""
    if not isinstance(selector, dict):
        return []
    keys = [str(k) for k in (selector.get("matchLabels") or {})]
    return keys + [str(e.get("key")) for e in selector.get("matchExpressions") or [] if isinstance(e, dict)]


def _affinity_term_causes(term: Obj, path: str) -> list[Cause]:
    """``validatePodAffinityTerm``."""
    selector = term.get("labelSelector")
    causes = selector_errors(selector, f"{path}.labelSelector")
    causes += selector_errors(term.get("namespaceSelector"), f"{path}.namespaceSelector")
    for name in term.get("namespaces") or []:
        causes += [(f"{path}.namespace", name, m) for m in v.dns1123_label_errors(str(name))]
    match_keys = list(term.get("matchLabelKeys") or [])
    mismatch_keys = list(term.get("mismatchLabelKeys") or [])
    causes += _label_keys_causes(match_keys, selector, f"{path}.matchLabelKeys")
    causes += _label_keys_causes(mismatch_keys, selector, f"{path}.mismatchLabelKeys")
    if isinstance(selector, dict):
        # the merge has appended one expression per matchLabelKeys key the pod has: a key seen
        # before that expression was in the user's selector too (Kubernetes reports it at the
        # term's path indexed by the key's position -- sic)
        index = {key: i for i, key in enumerate(match_keys)}
        seen = {str(k) for k in selector.get("matchLabels") or {}}
        for expression in selector.get("matchExpressions") or []:
            key = str(expression.get("key")) if isinstance(expression, dict) else ""
            if key in index and key in seen:
                causes.append((f"{path}[{index[key]}]", key, BOTH_IN_SELECTOR))
            seen.add(key)
    mismatched = set(mismatch_keys)
    for i, key in enumerate(match_keys):
        if key in mismatched:
            causes.append((f"{path}.matchLabelKeys[{i}]", key, "exists in both matchLabelKeys and mismatchLabelKeys"))
    topology_key = term.get("topologyKey") or ""
    if not topology_key:
        causes.append((f"{path}.topologyKey", None, f"{REQUIRED}: can not be empty"))
    return causes + _label_name_causes(topology_key, f"{path}.topologyKey")


def pod_affinity_errors(affinity: Any, path: str = "spec.affinity") -> list[Cause]:
    """The validation of ``spec.affinity.podAffinity`` / ``podAntiAffinity`` (module docstring)."""
    if not isinstance(affinity, dict):
        return []
    causes: list[Cause] = []
    for kind in ("podAffinity", "podAntiAffinity"):
        section = affinity.get(kind)
        if not isinstance(section, dict):
            continue
        for i, weighted in enumerate(section.get(PREFERRED_TERMS) or []):
            weight = weighted.get("weight") if isinstance(weighted, dict) else None
            if not isinstance(weight, int) or not 1 <= weight <= 100:
                causes.append((f"{path}.{kind}.{PREFERRED_TERMS}[{i}].weight", weight, "must be in the range 1-100"))
    for sub, term in _affinity_terms(affinity):
        causes += _affinity_term_causes(term, f"{path}.{sub}")
    return causes


def topology_spread_errors(constraints: Any, path: str = "spec.topologySpreadConstraints") -> list[Cause]:
    """The validation of ``spec.topologySpreadConstraints`` (module docstring)."""
    if not isinstance(constraints, list):
        return []
    causes: list[Cause] = []
    for i, c in enumerate(constraints):
        if not isinstance(c, dict):
            continue
        sub = f"{path}[{i}]"
        skew = c.get("maxSkew")
        if not isinstance(skew, int) or skew <= 0:
            causes.append((f"{sub}.maxSkew", skew, NOT_POSITIVE))
        key = c.get("topologyKey") or ""
        if not key:  # only required: 1.32 checks no more of it here
            causes.append((f"{sub}.topologyKey", None, f"{REQUIRED}: can not be empty"))
        action = c.get("whenUnsatisfiable")
        if action not in WHEN_UNSATISFIABLE:
            causes.append((f"{sub}.whenUnsatisfiable", None, unsupported(action or "", WHEN_UNSATISFIABLE)))
        for rest in constraints[i + 1:]:
            if isinstance(rest, dict) and (rest.get("topologyKey"), rest.get("whenUnsatisfiable")) == (
                    c.get("topologyKey"), action):
                causes.append((f"{sub}.{{topologyKey, whenUnsatisfiable}}", None,
                               f'Duplicate value: "{{{key}, {action or ""}}}"'))
                break
        min_domains = c.get("minDomains")
        if min_domains is not None:
            if not isinstance(min_domains, int) or min_domains <= 0:
                causes.append((f"{sub}.minDomains", min_domains, NOT_POSITIVE))
            if action != "DoNotSchedule":
                causes.append((f"{sub}.minDomains", min_domains,
                               f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action or ''}"))
        for policy in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            value = c.get(policy)
            if value is not None and value not in NODE_INCLUSION_POLICIES:
                causes.append((f"{sub}.{policy}", None, unsupported(value, NODE_INCLUSION_POLICIES)))
        keys = list(c.get("matchLabelKeys") or [])
        selector = c.get("labelSelector")
        if keys and selector is None:
            causes.append((f"{sub}.matchLabelKeys", None, NO_SELECTOR))
        in_selector = set(_selector_keys(selector))
        for j, label_key in enumerate(keys):
            causes += _label_name_causes(label_key, f"{sub}.matchLabelKeys[{j}]")
            if label_key in in_selector:
                causes.append((f"{sub}.matchLabelKeys[{j}]", label_key, BOTH_IN_SELECTOR))
        causes += selector_errors(selector, f"{sub}.labelSelector")
    return causes
