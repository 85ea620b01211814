"""Authentication for minik8s' HTTPS servers, shared by the apiserver and the kubelet.

Like Kubernetes' ``k8s.io/apiserver`` authenticators, which kube-apiserver and the kubelet
both use:

- ``--token-auth-file`` (apiserver only) is a CSV of ``token,user,uid[,"group1,group2"]``;
- ``--client-ca-file`` makes the TLS listener ask for client certificates (``CERT_OPTIONAL``),
  and a certificate that verifies against that CA authenticates as its CN (user) and O
  (groups).

With neither configured every request is allowed as ``system:anonymous`` (loopback
development setups).  With either, an unauthenticated request gets 401; with an
:class:`Authorizer` as well, an authenticated user it denies gets 403
(:class:`AuthMiddleware`).  :func:`minik8s.serving.http.tls_serving_options` turns the
serving flags into uvicorn settings.
"""

from __future__ import annotations

import contextvars
import csv
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from starlette.responses import PlainTextResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from minik8s.api import errors
from minik8s.api.encoding import encode_json


@dataclass(frozen=True)
class UserInfo:
    """Who made a request: user name, uid and groups (Kubernetes' ``user.Info``)."""

    name: str
    uid: str = ""
    groups: tuple[str, ...] = field(default_factory=tuple)


ANONYMOUS = UserInfo("system:anonymous", groups=("system:unauthenticated",))

#: The user of the request being served, set by the apiserver for the rest of the request's task
#: (Kubernetes' ``genericapirequest.UserFrom(ctx)``): what a strategy reads to record who asked
#: (a CertificateSigningRequest's ``spec.username``). None outside a request.
REQUEST_USER: contextvars.ContextVar[UserInfo | None] = contextvars.ContextVar("minik8s_request_user", default=None)


def load_token_file(path: str) -> dict[str, UserInfo]:
    """Parse a static token file; raises ValueError naming the bad line."""
    tokens: dict[str, UserInfo] = {}
    with open(path, newline="") as fh:
        for lineno, row in enumerate(csv.reader(fh), 1):
            if not row or row[0].startswith("#"):
                continue
            if len(row) < 3:
                raise ValueError(f"{path}:{lineno}: expected token,user,uid[,groups]")
            groups = tuple(g for g in (row[3].split(",") if len(row) > 3 else []) if g)
            tokens[row[0].strip()] = UserInfo(row[1].strip(), row[2].strip(), groups)
    return tokens


#: Checks a bearer token no static entry knows (e.g. by a TokenReview): its user, or None.
TokenReviewer = Callable[[str], Awaitable["UserInfo | None"]]


def client_certificate(scope: Mapping[str, Any]) -> dict[str, Any] | None:
    """The verified client certificate of an ASGI ``scope`` (``scope["extensions"]["tls"]["client_cert"]``,
    see :class:`minik8s.serving.http.TLSInfoProtocol`), if the client presented one."""
    cert = ((scope.get("extensions") or {}).get("tls") or {}).get("client_cert")
    return cert or None


def presents_credentials(scope: Mapping[str, Any]) -> bool:
    """Whether a request carries credentials: a non-empty ``Authorization: Bearer`` token or a client
    certificate.  Such a request is never served as :data:`ANONYMOUS`: when its credentials name nobody
    it gets 401, as kube-apiserver's anonymous authenticator runs only when every other authenticator
    found no credentials at all (``union.NewFailOnError``), and an invalid bearer token is an error
    (``invalid bearer token``), not an absence."""
    return bearer_token(scope) is not None or client_certificate(scope) is not None


def bearer_token(scope: Mapping[str, Any]) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header of an ASGI ``scope``, if any."""
    for name, value in scope.get("headers") or []:
        if name == b"authorization":
            kind, _, token = value.decode("latin-1").partition(" ")
            if kind.lower() == "bearer" and token.strip():
                return token.strip()
    return None


class Authenticator:
    """Decides who a request is from (``None``: unauthenticated).

    ``tokens``: static bearer tokens; ``client_certs``: verified client certificates;
    ``reviewer``: asked (awaited) about a bearer token the static ones do not know, as Kubernetes'
    webhook token authenticator asks a TokenReview (only :meth:`authenticate_request` uses it).
    """

    def __init__(self, tokens: dict[str, UserInfo] | None = None, client_certs: bool = False,
                 reviewer: TokenReviewer | None = None) -> None:
        self.tokens = tokens or {}
        self.client_certs = client_certs
        self.reviewer = reviewer

    @property
    def enabled(self) -> bool:
        return bool(self.tokens) or self.client_certs or self.reviewer is not None

    async def authenticate_request(self, scope: dict[str, Any]) -> UserInfo | None:
        """:meth:`authenticate`, then the ``reviewer`` for a bearer token nothing else knew."""
        user = self.authenticate(scope)
        if user is None and self.reviewer is not None:
            token = bearer_token(scope)
            if token is not None:
                user = await self.reviewer(token)
        return user

    def authenticate(self, scope: dict[str, Any]) -> UserInfo | None:
        """The user of an ASGI ``scope``: a known bearer token, else a verified client certificate
        (``scope["extensions"]["tls"]["client_cert"]``, see :class:`minik8s.serving.http.TLSInfoProtocol`); None when
        authentication is on and neither names anyone; :data:`ANONYMOUS` when it is off."""
        if not self.enabled:
            return ANONYMOUS
        token = bearer_token(scope)
        if token is not None and token in self.tokens:
            return self.tokens[token]
        cert = client_certificate(scope)
        if self.client_certs and cert:
            subject = {k: v for rdn in cert.get("subject", ()) for k, v in rdn}
            cn = subject.get("commonName")
            if cn:
                groups = tuple(v for rdn in cert.get("subject", ()) for k, v in rdn if k == "organizationName")
                return UserInfo(cn, groups=groups)
        return None


class Authorizer(Protocol):
    """Decides whether an authenticated user may make a request (Kubernetes' ``authorizer.Authorizer``)."""

    def authorize(self, user: UserInfo, method: str, path: str) -> str | None:
        """None when ``user`` may send ``method`` to ``path``; else the reason, sent with the 403."""
        ...


@runtime_checkable
class ScopeAuthorizer(Protocol):
    """An :class:`Authorizer` that sees the whole request (query, headers) and may change who it
    runs as (the apiserver's impersonation): :class:`AuthMiddleware` calls it instead."""

    def authorize(self, user: UserInfo, method: str, path: str) -> str | None: ...

    def authorize_scope(self, user: UserInfo, scope: Scope) -> tuple[UserInfo, str | None]:
        """The user the request runs as, and None when allowed or the reason sent with the 403."""
        ...


class AuthMiddleware:
    """ASGI middleware: authenticate every HTTP request and WebSocket upgrade, then authorize it.

    Unauthenticated → 401 ``Unauthorized``; denied by ``authorizer`` → 403 with its reason.
    Bodies are ``kind: Status`` JSON (kube-apiserver) or, with ``plain_text``, the bare message
    (the kubelet's ``Unauthorized`` / ``Forbidden (user=..., ...)``).  A refused WebSocket
    upgrade gets the same HTTP response when the server supports the ASGI WebSocket denial
    response (uvicorn does), else the connection is closed with 1008.  The user is left in
    ``scope["state"]["user"]``.  ``public_paths`` (and the paths below them) may be read (GET)
    without credentials, as :data:`ANONYMOUS`; a request that presents credentials which name nobody
    (an unknown or expired bearer token, a certificate without a common name) is refused (401) there
    too (:func:`presents_credentials`).  ``trusted(scope)`` true: the request passes as
    :data:`ANONYMOUS` unchecked (a server with an unauthenticated loopback listener beside an
    authenticated one says which requests came through the loopback one).
    """

    def __init__(self, app: ASGIApp, authenticator: Authenticator, authorizer: Authorizer | None = None,
                 plain_text: bool = False, public_paths: tuple[str, ...] = (),
                 trusted: Callable[[Scope], bool] | None = None) -> None:
        self.app = app
        self.authenticator = authenticator
        self.authorizer = authorizer
        self.plain_text = plain_text
        self.public_paths = public_paths
        self._public_prefixes = tuple(p + "/" for p in public_paths)
        self.trusted = trusted

    def _public(self, scope: Scope) -> bool:
        path = scope.get("path") or "/"
        return scope["type"] == "http" and scope.get("method") in ("GET", "HEAD") and (
            path in self.public_paths or path.startswith(self._public_prefixes))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            if self.trusted is not None and self.trusted(scope):
                scope.setdefault("state", {})["user"] = ANONYMOUS
                await self.app(scope, receive, send)
                return
            user = await self.authenticator.authenticate_request(dict(scope))
            if user is None and self._public(scope) and not presents_credentials(scope):
                user = ANONYMOUS  # kube-apiserver's system:public-info-viewer: anyone may read these
            if user is None:
                await self._refuse(errors.Unauthorized("Unauthorized"), scope, receive, send)
                return
            if isinstance(self.authorizer, ScopeAuthorizer):
                user, reason = self.authorizer.authorize_scope(user, scope)
                if reason is not None:
                    await self._refuse(errors.Forbidden(reason), scope, receive, send)
                    return
            elif self.authorizer is not None:
                reason = self.authorizer.authorize(user, scope.get("method") or "GET", scope.get("path") or "/")
                if reason is not None:
                    await self._refuse(errors.Forbidden(reason), scope, receive, send)
                    return
            scope.setdefault("state", {})["user"] = user
        await self.app(scope, receive, send)

    async def _refuse(self, err: errors.APIError, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket" and "websocket.http.response" not in (scope.get("extensions") or {}):
            await send({"type": "websocket.close", "code": 1008})
            return
        response: Response = (PlainTextResponse(err.message, status_code=err.code) if self.plain_text
                              else Response(encode_json(err.to_status()), status_code=err.code,
                                            media_type="application/json"))
        await response(scope, receive, send)
