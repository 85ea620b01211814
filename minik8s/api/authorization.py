"""``authorization.k8s.io/v1``: SubjectAccessReview, LocalSubjectAccessReview, SelfSubjectAccessReview and
SelfSubjectRulesReview.

Questions to the apiserver's authorizer, answered and never stored (Kubernetes' field names):
``spec.resourceAttributes`` (``namespace``, ``verb``, ``group``, ``version``, ``resource``,
``subresource``, ``name``) or ``spec.nonResourceAttributes`` (``path``, ``verb``).  A
SubjectAccessReview names the user (``spec.user``, ``groups``, ``uid``, ``extra``), a
LocalSubjectAccessReview too, about its own namespace; a
SelfSubjectAccessReview asks about the caller (``kubectl auth can-i``).  The answer's
``status``: ``allowed``, ``denied``, ``reason`` and ``evaluationError``.  A SelfSubjectRulesReview
asks what the caller may do in ``spec.namespace`` (``kubectl auth can-i --list``): ``status``
``resourceRules``, ``nonResourceRules``, ``incomplete`` and ``evaluationError``.
"""

from __future__ import annotations

from pydantic import Field

from minik8s.api.meta import TypedObject
from minik8s.api.model import Model


class ResourceAttributes(Model):
    """A resource request: ``verb`` on ``group``/``resource``[/``subresource``] ``name`` in ``namespace``."""

    namespace: str | None = None
    verb: str | None = None
    group: str | None = None
    version: str | None = None
    resource: str | None = None
    subresource: str | None = None
    name: str | None = None


class NonResourceAttributes(Model):
    """A request for a path outside the resource tree (``/healthz``, ``/api``)."""

    path: str | None = None
    verb: str | None = None


class SubjectAccessReviewSpec(Model):
    """Exactly one of ``resourceAttributes`` and ``nonResourceAttributes``; the user asked about."""

    resource_attributes: ResourceAttributes | None = None
    non_resource_attributes: NonResourceAttributes | None = None
    user: str | None = None
    groups: list[str] | None = None
    extra: dict[str, list[str]] | None = None
    uid: str | None = None


class SelfSubjectAccessReviewSpec(Model):
    """The caller's question: one of ``resourceAttributes`` and ``nonResourceAttributes``."""

    resource_attributes: ResourceAttributes | None = None
    non_resource_attributes: NonResourceAttributes | None = None


class SubjectAccessReviewStatus(Model):
    """``allowed``; ``denied`` (an authorizer said no outright); ``reason``; ``evaluationError``."""

    allowed: bool
    denied: bool | None = None
    reason: str | None = None
    evaluation_error: str | None = None


class SubjectAccessReview(TypedObject):
    spec: SubjectAccessReviewSpec = Field(default_factory=SubjectAccessReviewSpec)
    status: SubjectAccessReviewStatus | None = None


class LocalSubjectAccessReview(TypedObject):
    """A SubjectAccessReview in a namespace (``POST .../namespaces/NS/localsubjectaccessreviews``):
    ``spec.resourceAttributes.namespace`` must be NS, ``nonResourceAttributes`` are not allowed."""

    spec: SubjectAccessReviewSpec = Field(default_factory=SubjectAccessReviewSpec)
    status: SubjectAccessReviewStatus | None = None


class SelfSubjectAccessReview(TypedObject):
    spec: SelfSubjectAccessReviewSpec = Field(default_factory=SelfSubjectAccessReviewSpec)
    status: SubjectAccessReviewStatus | None = None


class SelfSubjectRulesReviewSpec(Model):
    """The namespace whose rules are asked for (required)."""

    namespace: str | None = None


class ResourceRule(Model):
    """What the subject may do to resources: ``verbs`` on ``resources`` of ``apiGroups``, limited
    to ``resourceNames`` when set (``*`` means all)."""

    verbs: list[str]
    api_groups: list[str] | None = None
    resources: list[str] | None = None
    resource_names: list[str] | None = None


class NonResourceRule(Model):
    """What the subject may do to paths outside the resource tree (``/healthz``, ``/api/*``)."""

    verbs: list[str]
    non_resource_urls: list[str] | None = Field(default=None, alias="nonResourceURLs")


class SubjectRulesReviewStatus(Model):
    """The rules, ``incomplete`` when an authorizer could not list its own (``evaluationError``)."""

    resource_rules: list[ResourceRule]
    non_resource_rules: list[NonResourceRule]
    incomplete: bool
    evaluation_error: str | None = None


class SelfSubjectRulesReview(TypedObject):
    spec: SelfSubjectRulesReviewSpec = Field(default_factory=SelfSubjectRulesReviewSpec)
    status: SubjectRulesReviewStatus | None = None
