"""Role, ClusterRole, RoleBinding and ClusterRoleBinding strategies (Kubernetes'
``pkg/registry/rbac`` and ``pkg/apis/rbac/validation``).

- Names are path segments (``ValidateRBACName``): not ``.`` or ``..``, no ``/`` or ``%``.
- A rule needs ``verbs`` (``Required value: verbs must contain at least one value``); a rule
  with ``nonResourceURLs`` may not name resources (``rules cannot apply to both regular
  resources and non-resource URLs``) and may not be in a Role (``namespaced rules cannot apply to
  non-resource URLs``); any other rule needs ``apiGroups`` and ``resources`` (``resource rules
  must supply at least one api group`` / ``... resource``).
- An ``aggregationRule`` needs at least one selector.
- A binding's ``roleRef``: ``apiGroup`` rbac.authorization.k8s.io; ``kind`` Role or ClusterRole
  (a ClusterRoleBinding: ClusterRole only); a ``name``; it never changes (``cannot change
  roleRef``).  Subjects: ``User`` and ``Group`` with ``apiGroup`` rbac.authorization.k8s.io,
  ``ServiceAccount`` with ``apiGroup`` ``""``, a valid name and (in a ClusterRoleBinding) a
  namespace.
"""

from __future__ import annotations

from typing import Any

from minik8s.api import validation as v
from minik8s.api.rbac import GROUP
from minik8s.apiserver.strategies.base import Cause, Obj, Strategy, selector_errors, unsupported


def path_segment_errors(name: str) -> list[str]:
    """Kubernetes' ``IsValidPathSegmentName``."""
    if name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{c}'" for c in "/%" if c in name]


def rule_errors(rules: Any, namespaced: bool, path: str = "rules") -> list[Cause]:
    """``ValidatePolicyRule`` for each rule of ``rules``."""
    causes: list[Cause] = []
    for i, rule in enumerate(rules or []):
        at = f"{path}[{i}]"
        if not isinstance(rule, dict):
            continue
        if not rule.get("verbs"):
            causes.append((f"{at}.verbs", None, "Required value: verbs must contain at least one value"))
        urls = rule.get("nonResourceURLs")
        if urls:
            if namespaced:
                causes.append((f"{at}.nonResourceURLs", urls, "namespaced rules cannot apply to non-resource URLs"))
            if rule.get("apiGroups") or rule.get("resources"):
                causes.append((f"{at}.nonResourceURLs", urls,
                               "rules cannot apply to both regular resources and non-resource URLs"))
            continue
        if not rule.get("apiGroups"):
            causes.append((f"{at}.apiGroups", None,
                           "Required value: resource rules must supply at least one api group"))
        if not rule.get("resources"):
            causes.append((f"{at}.resources", None,
                           "Required value: resource rules must supply at least one resource"))
    return causes


class _RBACStrategy(Strategy):
    name_check = staticmethod(path_segment_errors)


class RoleStrategy(_RBACStrategy):
    """rbac/v1 Role: its rules (no non-resource URLs)."""

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        return self.validate_metadata(obj) + rule_errors(obj.get("rules"), namespaced=True)


class ClusterRoleStrategy(_RBACStrategy):
    """rbac/v1 ClusterRole: its rules and aggregation rule."""

    namespace_scoped = False

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj) + rule_errors(obj.get("rules"), namespaced=False)
        agg = obj.get("aggregationRule")
        if agg is not None:
            selectors = agg.get("clusterRoleSelectors") or []
            if not selectors:
                causes.append(("aggregationRule.clusterRoleSelectors", None,
                               "Required value: at least one clusterRoleSelector required if aggregationRule is "
                               "non-nil"))
            for i, sel in enumerate(selectors):
                causes += selector_errors(sel, f"aggregationRule.clusterRoleSelectors[{i}]")
        return causes


class _BindingStrategy(_RBACStrategy):
    kinds: tuple[str, ...] = ("Role", "ClusterRole")
    namespaced = True

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        ref = obj.get("roleRef") or {}
        if ref.get("apiGroup") != GROUP:
            causes.append(("roleRef.apiGroup", None, unsupported(ref.get("apiGroup") or "", (GROUP,))))
        if ref.get("kind") not in self.kinds:
            causes.append(("roleRef.kind", None, unsupported(ref.get("kind") or "", self.kinds)))
        if not ref.get("name"):
            causes.append(("roleRef.name", None, "Required value"))
        else:
            causes += [("roleRef.name", ref["name"], m) for m in path_segment_errors(ref["name"])]
        for i, subject in enumerate(obj.get("subjects") or []):
            causes += self._subject_errors(subject, f"subjects[{i}]")
        if old is not None and (old.get("roleRef") or {}) != ref:
            causes.append(("roleRef", ref, "cannot change roleRef"))
        return causes

    def _subject_errors(self, s: Obj, at: str) -> list[Cause]:
        causes: list[Cause] = []
        name = s.get("name") or ""
        if not name:
            causes.append((f"{at}.name", None, "Required value"))
        kind = s.get("kind")
        group = s.get("apiGroup") or ""
        if kind == "ServiceAccount":
            if name:
                causes += [(f"{at}.name", name, m) for m in v.dns1123_subdomain_errors(name)]
            if group:
                causes.append((f"{at}.apiGroup", None, unsupported(group, ("",))))
            if not self.namespaced and not s.get("namespace"):
                causes.append((f"{at}.namespace", None, "Required value"))
        elif kind in ("User", "Group"):
            if group != GROUP:
                causes.append((f"{at}.apiGroup", None, unsupported(group, (GROUP,))))
        else:
            causes.append((f"{at}.kind", None, unsupported(kind or "", ("ServiceAccount", "User", "Group"))))
        return causes


class RoleBindingStrategy(_BindingStrategy):
    """rbac/v1 RoleBinding: grants a Role or ClusterRole in its namespace."""


class ClusterRoleBindingStrategy(_BindingStrategy):
    """rbac/v1 ClusterRoleBinding: grants a ClusterRole everywhere."""

    kinds = ("ClusterRole",)
    namespaced = False
    namespace_scoped = False


def rbac_strategies() -> dict[str, Strategy]:
    """The four kinds' strategies, by kind."""
    return {"Role": RoleStrategy(), "ClusterRole": ClusterRoleStrategy(),
            "RoleBinding": RoleBindingStrategy(), "ClusterRoleBinding": ClusterRoleBindingStrategy()}
