"""``authentication.k8s.io/v1``: TokenRequest and TokenReview (Kubernetes' field names and meanings).

- ``TokenRequest`` is the body of ``POST /api/v1/namespaces/{ns}/serviceaccounts/{name}/token``
  (Kubernetes' TokenRequest API): it asks for a signed, audience- and time-bound token of that
  ServiceAccount, optionally bound to a Pod or Secret so that the token stops working when the
  object is deleted.  The answer is the same kind with ``status.token`` and
  ``status.expirationTimestamp``.
- ``TokenReview`` (``POST /apis/authentication.k8s.io/v1/tokenreviews``) asks the apiserver who
  a token belongs to; nothing is stored.  Components that accept tokens the apiserver issued
  (the serverless gateway) use it as Kubernetes' webhook token authenticators do.

Both are answers computed by the apiserver (:mod:`minik8s.apiserver.serviceaccounts`), never
objects in etcd.
"""

from __future__ import annotations

from pydantic import Field

from minik8s.api.meta import TypedObject
from minik8s.api.model import Model

#: TokenRequest's default lifetime (seconds), as kube-apiserver's.
DEFAULT_EXPIRATION_SECONDS = 3600
#: The shortest lifetime a TokenRequest may ask for: 10 minutes.
MIN_EXPIRATION_SECONDS = 600
#: The longest: 2^32 seconds, Kubernetes' bound on ``expirationSeconds``.
MAX_EXPIRATION_SECONDS = 1 << 32


class BoundObjectReference(Model):
    """The object a token is bound to: ``kind`` ``Pod`` or ``Secret`` (``apiVersion`` ``v1``),
    its ``name`` and, optionally, ``uid`` (checked against the object when given)."""

    kind: str | None = None
    api_version: str | None = None
    name: str | None = None
    uid: str | None = None


class TokenRequestSpec(Model):
    """``audiences``: who the token is for (default: the apiserver's ``--api-audiences``);
    ``expirationSeconds``: its lifetime, at least 600; ``boundObjectRef``: see
    :class:`BoundObjectReference`."""

    audiences: list[str] = Field(default_factory=list)
    expiration_seconds: int | None = None
    bound_object_ref: BoundObjectReference | None = None


class TokenRequestStatus(Model):
    token: str = ""
    expiration_timestamp: str = ""


class TokenRequest(TypedObject):
    spec: TokenRequestSpec = Field(default_factory=TokenRequestSpec)
    status: TokenRequestStatus | None = None


class TokenReviewSpec(Model):
    """``token``: the bearer token to check; ``audiences``: the audiences the caller accepts
    (default: the apiserver's own)."""

    token: str | None = None
    audiences: list[str] | None = None


class UserInfoModel(Model):
    """``authenticationv1.UserInfo``: ``username``, ``uid``, ``groups`` and ``extra``
    (lists of strings by key)."""

    username: str | None = None
    uid: str | None = None
    groups: list[str] | None = None
    extra: dict[str, list[str]] | None = None


class TokenReviewStatus(Model):
    authenticated: bool | None = None
    user: UserInfoModel | None = None
    audiences: list[str] | None = None
    error: str | None = None


class TokenReview(TypedObject):
    spec: TokenReviewSpec = Field(default_factory=TokenReviewSpec)
    status: TokenReviewStatus | None = None


class SelfSubjectReviewStatus(Model):
    """``userInfo``: who the apiserver took the caller for."""

    user_info: UserInfoModel | None = None


class SelfSubjectReview(TypedObject):
    """``POST /apis/authentication.k8s.io/v1/selfsubjectreviews`` (``kubectl auth whoami``):
    the answer's ``status.userInfo`` is the caller's user; nothing is stored."""

    status: SelfSubjectReviewStatus | None = None
