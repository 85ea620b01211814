"""Service-account tokens: issued by the TokenRequest API, checked by the TokenReview API.

Kubernetes' ``pkg/serviceaccount`` (the JWT issuer and validator), the ``serviceaccounts/token``
subresource (``POST /api/v1/namespaces/{ns}/serviceaccounts/{name}/token``) and
``POST /apis/authentication.k8s.io/v1/tokenreviews``:

- A token is a JWT signed with the apiserver's ``--service-account-signing-key-file`` (an RSA key:
  RS256; an EC P-256 key: ES256), header ``kid`` = the unpadded base64url SHA-256 of the public
  key's DER form.  Claims: ``iss`` (``--service-account-issuer``), ``sub``
  (``system:serviceaccount:<ns>:<name>``), ``aud`` (the request's audiences, default
  ``--api-audiences``), ``iat``/``nbf``/``exp`` (seconds since the epoch; ``expirationSeconds``
  from 600 to 2^32, default 3600), ``jti``, and ``kubernetes.io`` with the namespace, the
  ServiceAccount's name and uid and the bound Pod's or Secret's name and uid (and a Pod's node).
- A review checks the signature, ``iss``, the times (60 s of leeway for clock skew) and that the
  token's audiences meet the wanted ones (the review's ``spec.audiences``, default
  ``--api-audiences``), then that the ServiceAccount and the bound object still exist with the
  same uids (a deleted pod's tokens stop working at once).  The user is
  ``system:serviceaccount:<ns>:<name>`` with the ServiceAccount's uid, the groups
  ``system:serviceaccounts``, ``system:serviceaccounts:<ns>`` and ``system:authenticated``, and
  ``extra`` ``authentication.kubernetes.io/pod-name``/``pod-uid``/``node-name``/``credential-id``.

With ``--authorization-mode`` including ``RBAC`` the apiserver also accepts these tokens as bearer
credentials for its own API (the same checks as a review; the user is then only allowed what RBAC
grants it).  With ``AlwaysAllow`` (the default) it does not: a token in every pod would make every
pod an administrator.  Components that accept them (the serverless gateway) ask through TokenReview.
"""

from __future__ import annotations

import base64
import datetime as _dt
import hashlib
import time
import uuid
from pathlib import Path
from typing import Any

import jwt
import pydantic
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from minik8s.api import errors
from minik8s.api.authentication import (
    DEFAULT_EXPIRATION_SECONDS,
    MAX_EXPIRATION_SECONDS,
    MIN_EXPIRATION_SECONDS,
    TokenRequest,
)
from minik8s.api.base import Obj
from minik8s.api.resourcetypes import Registry

#: kube-apiserver's default ``--service-account-issuer`` for a cluster of domain ``cluster.local``.
DEFAULT_ISSUER = "https://kubernetes.default.svc.cluster.local"
#: Seconds of clock skew allowed on ``nbf``/``exp``/``iat`` (Kubernetes' validator allows 60).
LEEWAY_SECONDS = 60
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
BOUND_KINDS = ("Pod", "Secret")


class TokenIssuer:
    """Signs and checks service-account tokens with one key (see the module docstring).

    ``key_pem``: a PEM private key (RSA or EC P-256); raises ValueError for anything else.
    ``api_audiences``: the audiences of tokens that do not name their own (default: the issuer).
    """

    def __init__(self, key_pem: bytes, issuer: str = DEFAULT_ISSUER,
                 api_audiences: list[str] | None = None) -> None:
        try:
            key = serialization.load_pem_private_key(key_pem, password=None)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"not an unencrypted PEM private key: {exc}") from None
        if isinstance(key, rsa.RSAPrivateKey):
            self.algorithm = "RS256"
        elif isinstance(key, ec.EllipticCurvePrivateKey) and key.curve.name == "secp256r1":
            self.algorithm = "ES256"
        else:
            raise ValueError("the service-account signing key must be RSA or EC P-256")
        self._key = key
        self._public = key.public_key()
        der = self._public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
        self.key_id = base64.urlsafe_b64encode(hashlib.sha256(der).digest()).rstrip(b"=").decode()
        self.issuer = issuer
        self.api_audiences = list(api_audiences or [issuer])

    @classmethod
    def from_file(cls, path: str, issuer: str = DEFAULT_ISSUER, api_audiences: list[str] | None = None) -> TokenIssuer:
        """Load ``--service-account-signing-key-file``; OSError/ValueError name the file."""
        try:
            return cls(Path(path).read_bytes(), issuer, api_audiences)
        except ValueError as exc:
            raise ValueError(f"--service-account-signing-key-file {path}: {exc}") from None

    # ------------------------------------------------------------------ issuing
    def sign(self, namespace: str, sa: Obj, audiences: list[str], expiration_seconds: int,
             bound: Obj | None = None, now: float | None = None) -> tuple[str, int]:
        """A token of ServiceAccount ``sa`` (an object) and its expiry (seconds since the epoch)."""
        issued = int(now if now is not None else time.time())
        expires = issued + expiration_seconds
        private: dict[str, Any] = {
            "namespace": namespace,
            "serviceaccount": {"name": sa["metadata"]["name"], "uid": sa["metadata"].get("uid", "")},
        }
        if bound is not None:
            meta = bound.get("metadata") or {}
            private[str(bound.get("kind", "Pod")).lower()] = {"name": meta.get("name"), "uid": meta.get("uid", "")}
            node = (bound.get("spec") or {}).get("nodeName") if bound.get("kind") == "Pod" else None
            if node:
                private["node"] = {"name": node}
        claims = {
            "iss": self.issuer, "sub": f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{sa['metadata']['name']}",
            "aud": audiences, "iat": issued, "nbf": issued, "exp": expires, "jti": str(uuid.uuid4()),
            "kubernetes.io": private,
        }
        token = jwt.encode(claims, self._key, algorithm=self.algorithm, headers={"kid": self.key_id})  # type: ignore[arg-type]
        return token, expires

    # ------------------------------------------------------------------ checking
    def verify(self, token: str, audiences: list[str]) -> tuple[dict[str, Any], list[str]]:
        """The claims of a token this issuer signed and the audiences it shares with
        ``audiences``; raises ValueError with the reason it is not accepted."""
        try:
            claims = jwt.decode(token, self._public, algorithms=[self.algorithm], issuer=self.issuer,  # type: ignore[arg-type]
                                leeway=LEEWAY_SECONDS, options={"verify_aud": False,
                                                                "require": ["exp", "iat", "sub", "aud"]})
        except jwt.ExpiredSignatureError:
            raise ValueError("token has expired") from None
        except jwt.InvalidTokenError as exc:
            raise ValueError(f"invalid bearer token: {exc}") from None
        aud = claims.get("aud")
        token_audiences = [aud] if isinstance(aud, str) else [a for a in aud or [] if isinstance(a, str)]
        shared = [a for a in audiences if a in token_audiences]
        if not shared:
            raise ValueError("token audiences " + repr(token_audiences) + " is invalid for the target audiences "
                             + repr(audiences))
        private = claims.get("kubernetes.io")
        if not isinstance(private, dict) or not str(claims.get("sub", "")).startswith(SERVICE_ACCOUNT_PREFIX):
            raise ValueError("invalid bearer token: not a service-account token")
        return claims, shared


def _expiry(seconds: int) -> str:
    return _dt.datetime.fromtimestamp(seconds, _dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class ServiceAccountTokens:
    """The ``serviceaccounts/token`` subresource and the ``tokenreviews`` resource over ``api``
    (the apiserver's :class:`~minik8s.apiserver.resources.ResourceAPI`).  ``issuer`` None: no
    ``--service-account-signing-key-file``, so TokenRequest answers 404 and every review is
    unauthenticated with that reason."""

    def __init__(self, api: Any, registry: Registry, issuer: TokenIssuer | None) -> None:
        self.api = api
        self.issuer = issuer
        self.sa_rt = registry.by_kind("v1", "ServiceAccount")
        self.pod_rt = registry.by_kind("v1", "Pod")
        self.secret_rt = registry.by_kind("v1", "Secret")

    async def request(self, namespace: str, name: str, body: Any) -> Obj:
        """Answer a TokenRequest for ServiceAccount ``namespace/name``: 404 when the account (or the
        bound object) does not exist or tokens are not configured, 422 for a bad spec, 400 for a body
        that is not a TokenRequest."""
        if self.issuer is None:
            raise errors.NotFound("the server could not find the requested resource: service-account tokens are "
                                  "not enabled (the apiserver has no --service-account-signing-key-file)")
        if body is None:
            body = {}
        if not isinstance(body, dict) or body.get("kind") not in (None, "TokenRequest"):
            raise errors.BadRequest("the body must be an authentication.k8s.io/v1 TokenRequest")
        try:
            req = TokenRequest.model_validate(body)
        except pydantic.ValidationError as exc:
            raise errors.BadRequest(f"the body is not a valid TokenRequest: {exc.errors()[0]['msg']}") from None
        spec = req.spec
        seconds = DEFAULT_EXPIRATION_SECONDS if spec.expiration_seconds is None else spec.expiration_seconds
        causes: list[tuple[str, Any, str]] = []
        if seconds < MIN_EXPIRATION_SECONDS:
            causes.append(("spec.expirationSeconds", seconds, "may not specify a duration less than 10 minutes"))
        elif seconds > MAX_EXPIRATION_SECONDS:
            causes.append(("spec.expirationSeconds", seconds, "may not specify a duration larger than 2^32 seconds"))
        ref = spec.bound_object_ref
        if ref is not None:
            if ref.kind not in BOUND_KINDS:
                causes.append(("spec.boundObjectRef.kind", ref.kind, "supported values: \"Pod\", \"Secret\""))
            if ref.api_version not in (None, "v1"):
                causes.append(("spec.boundObjectRef.apiVersion", ref.api_version, "supported values: \"v1\""))
            if not ref.name:
                causes.append(("spec.boundObjectRef.name", None, "Required value"))
        if causes:
            raise errors.invalid("TokenRequest.authentication.k8s.io", name, causes)
        sa = await self.api.get(self.sa_rt, namespace, name)
        bound = None
        if ref is not None:
            rt = self.pod_rt if ref.kind == "Pod" else self.secret_rt
            bound = await self.api.get(rt, namespace, ref.name)
            meta = bound.get("metadata") or {}
            if ref.uid and ref.uid != meta.get("uid"):
                raise errors.Conflict(f"the UID in the bound object reference ({ref.uid}) does not match the UID in "
                                      f"record. The object might have been deleted and then recreated")
            if ref.kind == "Pod":
                pod_sa = (bound.get("spec") or {}).get("serviceAccountName") or "default"
                if pod_sa != name:
                    raise errors.BadRequest(f"cannot bind token for serviceaccount \"{name}\" to pod running with "
                                            f"different serviceaccount name.")
            bound = {**bound, "kind": ref.kind}
        audiences = spec.audiences or self.issuer.api_audiences
        token, expires = self.issuer.sign(namespace, sa, audiences, seconds, bound)
        out_spec: dict[str, Any] = {"audiences": audiences, "expirationSeconds": seconds}
        if ref is not None:
            out_spec["boundObjectRef"] = ref.model_dump(by_alias=True, exclude_none=True)
        return {
            "kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"name": name, "namespace": namespace,
                         "creationTimestamp": _expiry(expires - seconds)},
            "spec": out_spec,
            "status": {"token": token, "expirationTimestamp": _expiry(expires)},
        }

    async def review(self, body: Any) -> Obj:
        """Answer a TokenReview: ``status.authenticated`` with the user, or false with ``error``;
        400 for a body that is not a TokenReview, 422 without ``spec.token``."""
        if not isinstance(body, dict) or body.get("kind") not in (None, "TokenReview"):
            raise errors.BadRequest("the body must be an authentication.k8s.io/v1 TokenReview")
        spec: dict[str, Any] = body["spec"] if isinstance(body.get("spec"), dict) else {}
        token = spec.get("token")
        if not isinstance(token, str) or not token:
            raise errors.invalid("TokenReview", "", [("spec.token", None, "Required value")])
        wanted = spec.get("audiences")
        if wanted is not None and (not isinstance(wanted, list) or not all(isinstance(a, str) for a in wanted)):
            raise errors.invalid("TokenReview", "", [("spec.audiences", None, "must be a list of strings")])
        out: Obj = {"kind": "TokenReview", "apiVersion": "authentication.k8s.io/v1",
                    "metadata": {"creationTimestamp": None}, "spec": dict(spec)}
        try:
            out["status"] = await self._review(token, wanted or (self.issuer.api_audiences if self.issuer else []))
        except ValueError as exc:
            out["status"] = {"authenticated": False, "user": {}, "error": str(exc)}
        return out

    async def _review(self, token: str, audiences: list[str]) -> Obj:
        if self.issuer is None:
            raise ValueError("service-account tokens are not enabled (no --service-account-signing-key-file)")
        claims, shared = self.issuer.verify(token, audiences)
        private = claims["kubernetes.io"]
        namespace = str(private.get("namespace") or "")
        account = private.get("serviceaccount") or {}
        sa = await self._current(self.sa_rt, namespace, account, "service account")
        extra: dict[str, list[str]] = {"authentication.kubernetes.io/credential-id": [f"JTI={claims.get('jti', '')}"]}
        for kind, rt in (("pod", self.pod_rt), ("secret", self.secret_rt)):
            ref = private.get(kind)
            if isinstance(ref, dict):
                obj = await self._current(rt, namespace, ref, kind)
                if (obj.get("metadata") or {}).get("deletionTimestamp"):
                    raise ValueError(f"{kind} {namespace}/{ref.get('name')} is being deleted")
                extra[f"authentication.kubernetes.io/{kind}-name"] = [str(ref.get("name"))]
                extra[f"authentication.kubernetes.io/{kind}-uid"] = [str(ref.get("uid"))]
        node = private.get("node")
        if isinstance(node, dict) and node.get("name"):
            extra["authentication.kubernetes.io/node-name"] = [str(node["name"])]
        user = {"username": str(claims["sub"]), "uid": (sa.get("metadata") or {}).get("uid", ""),
                "groups": ["system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated"],
                "extra": extra}
        return {"authenticated": True, "user": user, "audiences": shared}

    async def _current(self, rt: Any, namespace: str, ref: dict[str, Any], what: str) -> Obj:
        """The object a token names, when it still exists with the token's uid (else ValueError)."""
        name = str(ref.get("name") or "")
        try:
            obj: Obj = await self.api.get(rt, namespace, name)
        except errors.NotFound:
            raise ValueError(f"{what} {namespace}/{name} has been deleted") from None
        if ref.get("uid") and (obj.get("metadata") or {}).get("uid") != ref.get("uid"):
            raise ValueError(f"{what} {namespace}/{name} has been deleted and recreated (its UID differs)")
        return obj
