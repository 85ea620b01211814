"""``rbac.authorization.k8s.io/v1``: Role, ClusterRole, RoleBinding, ClusterRoleBinding.

Kubernetes' RBAC objects, with its field names and meanings:

- a ``PolicyRule`` allows ``verbs`` on ``resources`` (``pods``, ``pods/log``, ``*``) of
  ``apiGroups`` (``""`` is the core group), optionally only the objects named in
  ``resourceNames``; or, in a ClusterRole only, ``verbs`` on ``nonResourceURLs`` (``/healthz``,
  ``/api/*``: a trailing ``*`` matches any suffix).  ``*`` in any list matches everything.
- a Role holds rules for its namespace; a ClusterRole for the whole cluster (or for one namespace,
  when a RoleBinding names it).  A ClusterRole with an ``aggregationRule`` gets its ``rules`` from
  every ClusterRole whose labels match one of the rule's selectors (the apiserver keeps them
  filled, as Kubernetes' clusterrole-aggregation controller does).
- a RoleBinding grants a Role of its namespace, or a ClusterRole, to ``subjects`` within its
  namespace; a ClusterRoleBinding grants a ClusterRole everywhere.  A subject is a ``User``, a
  ``Group`` (``apiGroup`` ``rbac.authorization.k8s.io``) or a ``ServiceAccount`` (``namespace``,
  ``name``; ``apiGroup`` ``""``).  ``roleRef`` cannot change after creation.

The authorizer that reads them is :mod:`minik8s.apiserver.rbac`.
"""

from __future__ import annotations

from pydantic import Field

from minik8s.api.meta import LabelSelector, TypedObject
from minik8s.api.model import Model

GROUP = "rbac.authorization.k8s.io"


class PolicyRule(Model):
    """One permission: ``verbs`` on ``apiGroups``/``resources`` (optionally ``resourceNames``),
    or on ``nonResourceURLs``."""

    verbs: list[str]
    api_groups: list[str] | None = None
    resources: list[str] | None = None
    resource_names: list[str] | None = None
    non_resource_urls: list[str] | None = Field(default=None, alias="nonResourceURLs")


class AggregationRule(Model):
    """``clusterRoleSelectors``: the ClusterRoles whose rules are aggregated into this one."""

    cluster_role_selectors: list[LabelSelector] | None = None


class Role(TypedObject):
    """Rules within one namespace."""

    rules: list[PolicyRule] | None = None


class ClusterRole(TypedObject):
    """Rules for the cluster, or for a namespace through a RoleBinding; ``aggregationRule``
    fills ``rules`` from other ClusterRoles."""

    rules: list[PolicyRule] | None = None
    aggregation_rule: AggregationRule | None = None


class Subject(Model):
    """Who is granted: ``kind`` ``User``, ``Group`` or ``ServiceAccount``."""

    kind: str
    name: str
    api_group: str | None = None
    namespace: str | None = None


class RoleRef(Model):
    """The role granted: ``kind`` ``Role`` or ``ClusterRole`` of ``apiGroup`` rbac.authorization.k8s.io."""

    api_group: str
    kind: str
    name: str


class RoleBinding(TypedObject):
    """Grants ``roleRef`` to ``subjects`` in the binding's namespace."""

    subjects: list[Subject] | None = None
    role_ref: RoleRef


class ClusterRoleBinding(TypedObject):
    """Grants the ClusterRole ``roleRef`` to ``subjects`` in every namespace and cluster-wide."""

    subjects: list[Subject] | None = None
    role_ref: RoleRef
