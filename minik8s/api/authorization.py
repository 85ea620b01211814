"""``authorization.k8s.io/v1``: SubjectAccessReview and SelfSubjectAccessReview.

Questions to the apiserver's authorizer, answered and never stored (Kubernetes' field names):
``spec.resourceAttributes`` (``namespace``, ``verb``, ``group``, ``version``, ``resource``,
``subresource``, ``name``) or ``spec.nonResourceAttributes`` (``path``, ``verb``).  A
SubjectAccessReview names the user (``spec.user``, ``groups``, ``uid``, ``extra``); a
SelfSubjectAccessReview asks about the caller (``kubectl auth can-i``).  The answer's
``status``: ``allowed``, ``denied``, ``reason`` and ``evaluationError``.
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


class SelfSubjectAccessReview(TypedObject):
    spec: SelfSubjectAccessReviewSpec = Field(default_factory=SelfSubjectAccessReviewSpec)
    status: SubjectAccessReviewStatus | None = None
