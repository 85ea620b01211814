"""The apiserver's authorization: ``--authorization-mode``, impersonation and the access reviews.

``--authorization-mode`` is ``AlwaysAllow`` (every authenticated request passes, the default) or a
comma list of ``Node`` and ``RBAC`` asked in order (:mod:`minik8s.apiserver.rbac`): the first
that allows wins.  Users in ``system:masters`` are always allowed (Kubernetes' privileged group).
A denial is a 403 with Kubernetes' message (:func:`~minik8s.apiserver.rbac.forbidden_message`).

Impersonation (``Impersonate-User``, ``Impersonate-Group``, ``Impersonate-Uid``; ``kubectl
--as``/``--as-group``): the caller needs the ``impersonate`` verb on ``users`` (or, for a
``system:serviceaccount:<ns>:<name>`` user, on ``serviceaccounts`` ``<name>`` in ``<ns>``) and on
``groups``; the request then runs as that user, with the groups asked for plus
``system:authenticated`` (and a service account's groups).

Reviews (never stored): ``SubjectAccessReview`` asks about any user, ``SelfSubjectAccessReview``
about the caller (``kubectl auth can-i``), ``SelfSubjectRulesReview`` lists what the caller may do
in a namespace (``kubectl auth can-i --list``), ``SelfSubjectReview`` says who the caller is
(``kubectl auth whoami``).
"""

from __future__ import annotations

from typing import Any

from starlette.types import Scope

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.apiserver import requestinfo
from minik8s.apiserver.rbac import (
    MASTERS_GROUP,
    SA_PREFIX,
    NodeAuthorizer,
    RBACCache,
    forbidden_message,
    node_name,
)
from minik8s.apiserver.requestinfo import RequestInfo
from minik8s.auth import ANONYMOUS, UserInfo

MODES = ("AlwaysAllow", "Node", "RBAC")


def parse_modes(value: str) -> tuple[str, ...]:
    """``--authorization-mode``: ``AlwaysAllow``, or a comma list of ``Node`` and ``RBAC``; ValueError else."""
    modes = tuple(m.strip() for m in value.split(",") if m.strip())
    if not modes:
        raise ValueError("--authorization-mode may not be empty")
    for m in modes:
        if m not in MODES:
            raise ValueError(f'--authorization-mode: unknown mode "{m}" (supported: {", ".join(MODES)})')
    if "AlwaysAllow" in modes and len(modes) > 1:
        raise ValueError("--authorization-mode: AlwaysAllow cannot be combined with other modes")
    if len(set(modes)) != len(modes):
        raise ValueError("--authorization-mode: a mode is listed twice")
    return modes


def _watch(scope: Scope) -> bool:
    query = (scope.get("query_string") or b"").decode("latin-1")
    return any(p in ("watch=true", "watch=1", "watch=True") for p in query.split("&"))


def _headers(scope: Scope, name: bytes) -> list[str]:
    return [v.decode("latin-1").strip() for k, v in scope.get("headers") or [] if k == name]


class APIServerAuthorizer:
    """The apiserver's :class:`~minik8s.auth.Authorizer` for ``modes`` (see the module docstring).

    ``rbac``: the cache the RBAC mode reads (required with it).  :meth:`authorize_scope` is what
    :class:`~minik8s.auth.AuthMiddleware` calls: it applies impersonation and answers the user the
    request runs as, with the denial's message or None.
    """

    def __init__(self, modes: tuple[str, ...], rbac: RBACCache | None = None) -> None:
        self.modes = modes
        self.rbac = rbac
        self.node = NodeAuthorizer()

    @property
    def always_allow(self) -> bool:
        return self.modes == ("AlwaysAllow",)

    def decide(self, user: UserInfo, info: RequestInfo) -> tuple[bool, str]:
        """(allowed, reason) for ``user`` making request ``info``."""
        if self.always_allow or MASTERS_GROUP in user.groups:
            return True, ""
        reasons = []
        for mode in self.modes:
            if mode == "Node":
                ok, why = self.node.decide(user, info)
            elif self.rbac is not None:
                if not self.rbac.synced.is_set():
                    ok, why = False, "the RBAC authorizer's caches are not ready yet"
                else:
                    ok, why = self.rbac.allows(user, info), ""
            else:
                ok, why = False, ""
            if ok:
                return True, ""
            if why:
                reasons.append(why)
        return False, "; ".join(reasons)

    def rules_for(self, user: UserInfo, namespace: str) -> tuple[list[Obj], bool, str]:
        """(the PolicyRules granted to ``user`` in ``namespace``, incomplete, why): each mode's
        rules, as Kubernetes' union authorizer gathers them.  AlwaysAllow grants everything; the
        Node mode cannot list a node's rules (incomplete, as Kubernetes says); RBAC lists its
        bindings' rules once its caches are ready."""
        if self.always_allow:
            return [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
                    {"verbs": ["*"], "nonResourceURLs": ["*"]}], False, ""
        rules: list[Obj] = []
        reasons: list[str] = []
        for mode in self.modes:
            if mode == "Node":
                if node_name(user) is not None:
                    reasons.append("node authorizer does not support user rule resolution")
            elif self.rbac is not None:
                if self.rbac.synced.is_set():
                    rules += self.rbac.rules_for(user, namespace)
                else:
                    reasons.append("the RBAC authorizer's caches are not ready yet")
        return rules, bool(reasons), "; ".join(reasons)

    def authorize(self, user: UserInfo, method: str, path: str) -> str | None:
        """:class:`~minik8s.auth.Authorizer`'s question (no query, no impersonation)."""
        info = requestinfo.parse(method, path)
        ok, why = self.decide(user, info)
        return None if ok else forbidden_message(user, info, why)

    def authorize_scope(self, user: UserInfo, scope: Scope) -> tuple[UserInfo, str | None]:
        """Impersonate as the headers ask (when allowed), then authorize the request of ``scope``.
        Every authenticated user is in ``system:authenticated`` (Kubernetes' group adder)."""
        if user.name != ANONYMOUS.name and "system:authenticated" not in user.groups:
            user = UserInfo(user.name, user.uid, (*user.groups, "system:authenticated"))
        user, refusal = self.impersonate(user, scope)
        if refusal is not None:
            return user, refusal
        method = scope.get("method") or "GET"
        if scope["type"] == "websocket":
            method = "POST" if (scope.get("path") or "").rsplit("/", 1)[-1] in ("exec", "attach", "portforward") \
                else "GET"
        info = requestinfo.parse(method, scope.get("path") or "/", _watch(scope))
        ok, why = self.decide(user, info)
        scope.setdefault("state", {})["request_info"] = info
        return user, None if ok else forbidden_message(user, info, why)

    def impersonate(self, user: UserInfo, scope: Scope) -> tuple[UserInfo, str | None]:
        """The user ``Impersonate-*`` headers ask for, or ``user``; with the denial when not allowed."""
        names = _headers(scope, b"impersonate-user")
        groups = tuple(_headers(scope, b"impersonate-group"))
        uids = _headers(scope, b"impersonate-uid")
        if not names:
            if groups or uids:
                return user, "requested impersonation of groups or uid without impersonating a user"
            return user, None
        name = names[0]
        checks: list[RequestInfo] = []
        extra_groups: tuple[str, ...] = ()
        if name.startswith(SA_PREFIX):
            ns, _, sa = name[len(SA_PREFIX):].partition(":")
            checks.append(RequestInfo("impersonate", resource_request=True, namespace=ns, resource="serviceaccounts",
                                      name=sa))
            extra_groups = ("system:serviceaccounts", f"system:serviceaccounts:{ns}")
        else:
            checks.append(RequestInfo("impersonate", resource_request=True, resource="users", name=name))
        checks += [RequestInfo("impersonate", resource_request=True, resource="groups", name=g) for g in groups]
        if uids:
            checks.append(RequestInfo("impersonate", resource_request=True, api_group="authentication.k8s.io",
                                      resource="uids", name=uids[0]))
        for info in checks:
            ok, why = self.decide(user, info)
            if not ok:
                return user, forbidden_message(user, info, why)
        if name == ANONYMOUS.name:
            all_groups = groups or ("system:unauthenticated",)
        else:
            all_groups = tuple(dict.fromkeys(groups + extra_groups + ("system:authenticated",)))
        return UserInfo(name, uids[0] if uids else "", all_groups), None


def _local_namespace(body: Obj, meta: Obj, namespace: str) -> str:
    """The namespace of a LocalSubjectAccessReview posted in ``namespace``, checked as kube-apiserver
    checks it: the body's ``metadata.namespace`` (400 when it differs), nothing else in
    ``metadata`` and ``spec.resourceAttributes.namespace`` equal to it (an empty one too: 422,
    whatever the API reference says of defaulting), no ``spec.nonResourceAttributes`` (422)."""
    if meta.get("namespace") and meta["namespace"] != namespace:
        raise errors.BadRequest("the namespace of the provided object does not match the namespace sent on the request")
    spec = body["spec"] if isinstance(body.get("spec"), dict) else {}
    causes: list[tuple[str, Any, str]] = []
    others = {k: v for k, v in meta.items() if k not in ("namespace", "managedFields")}
    if others:
        causes.append(("metadata", {**others, "namespace": namespace}, "must be empty except for namespace"))
    res = spec.get("resourceAttributes")
    if isinstance(res, dict) and str(res.get("namespace") or "") != namespace:
        causes.append(("spec.resourceAttributes.namespace", str(res.get("namespace") or ""),
                       "must match metadata.namespace"))
    if spec.get("nonResourceAttributes") is not None:
        causes.append(("spec.nonResourceAttributes", spec["nonResourceAttributes"],
                       "disallowed on this kind of request"))
    if causes:
        raise errors.invalid("LocalSubjectAccessReview.authorization.k8s.io", "", causes)
    return namespace


def _attributes(spec: Obj, kind: str = "SubjectAccessReview") -> RequestInfo:
    """The RequestInfo a review's ``spec`` asks about (422, naming the review's ``kind``, without one
    of the two attribute sets)."""
    res = spec.get("resourceAttributes")
    non = spec.get("nonResourceAttributes")
    if isinstance(res, dict) and non is None:
        return RequestInfo(str(res.get("verb") or ""), resource_request=True, api_group=str(res.get("group") or ""),
                           api_version=str(res.get("version") or ""), namespace=str(res.get("namespace") or ""),
                           resource=str(res.get("resource") or ""), subresource=str(res.get("subresource") or ""),
                           name=str(res.get("name") or ""))
    if isinstance(non, dict) and res is None:
        return RequestInfo(str(non.get("verb") or ""), path=str(non.get("path") or ""))
    raise errors.invalid(f"{kind}.authorization.k8s.io", "", [
        ("spec.resourceAttributes", None,
         "Invalid value: \"null\": exactly one of nonResourceAttributes or resourceAttributes must be specified")])


def _user_info(user: UserInfo) -> Obj:
    """``authentication/v1.UserInfo`` in Go's field order (username, uid, groups)."""
    out: Obj = {"username": user.name}
    if user.uid:
        out["uid"] = user.uid
    out["groups"] = list(user.groups)
    return out


def review(authorizer: APIServerAuthorizer, kind: str, body: Any, caller: UserInfo,
           namespace: str | None = None) -> Obj:
    """Answer a SubjectAccessReview, LocalSubjectAccessReview (posted in ``namespace``),
    SelfSubjectAccessReview, SelfSubjectRulesReview or SelfSubjectReview (``kind``) posted by
    ``caller``; 400 for a body of another kind."""
    if body is None:
        body = {}
    if not isinstance(body, dict) or body.get("kind") not in (None, kind):
        raise errors.BadRequest(f"the body must be a {kind}")
    group = "authentication.k8s.io" if kind == "SelfSubjectReview" else "authorization.k8s.io"
    meta: Obj = body["metadata"] if isinstance(body.get("metadata"), dict) else {}
    if kind == "LocalSubjectAccessReview":
        meta = {**meta, "namespace": _local_namespace(body, meta, namespace or "")}
    out: Obj = {"kind": kind, "apiVersion": f"{group}/v1", "metadata": {**meta, "creationTimestamp": None}}
    if kind == "SelfSubjectReview":
        if caller.name != ANONYMOUS.name and "system:authenticated" not in caller.groups:
            caller = UserInfo(caller.name, caller.uid, (*caller.groups, "system:authenticated"))
        out["status"] = {"userInfo": _user_info(caller)}
        return out
    spec = body["spec"] if isinstance(body.get("spec"), dict) else {}
    if kind == "SelfSubjectRulesReview":
        out["spec"] = spec
        out["status"] = _rules_status(authorizer, caller, str(spec.get("namespace") or ""))
        return out
    info = _attributes(spec, kind)
    if kind in ("SubjectAccessReview", "LocalSubjectAccessReview"):
        if not spec.get("user") and not spec.get("groups"):
            raise errors.invalid(f"{kind}.authorization.k8s.io", "", [(
                "spec.user", None, "Invalid value: \"\": at least one of user or group must be specified")])
        subject = UserInfo(str(spec.get("user") or ""), str(spec.get("uid") or ""), tuple(spec.get("groups") or ()))
    else:
        subject = caller
    ok, why = authorizer.decide(subject, info)
    out["spec"] = spec
    status: Obj = {"allowed": ok}
    if ok and not authorizer.always_allow:
        status["reason"] = "allowed by RBAC" if MASTERS_GROUP not in subject.groups else "allowed: system:masters"
    elif why:
        status["reason"] = why
    out["status"] = status
    return out


def _rules_status(authorizer: APIServerAuthorizer, caller: UserInfo, namespace: str) -> Obj:
    """A SelfSubjectRulesReview's ``status``: each granted rule as a ``resourceRules`` entry (it
    names resources) and/or a ``nonResourceRules`` entry (it names URLs), as kube-apiserver
    converts them.  400 without a namespace, as kube-apiserver answers."""
    if not namespace:
        raise errors.BadRequest("no namespace on request")
    rules, incomplete, why = authorizer.rules_for(caller, namespace)
    resource_rules: list[Obj] = []
    non_resource_rules: list[Obj] = []
    for rule in rules:
        verbs = list(rule.get("verbs") or [])
        if rule.get("resources"):
            entry: Obj = {"verbs": verbs, "apiGroups": list(rule.get("apiGroups") or []),
                          "resources": list(rule["resources"])}
            if rule.get("resourceNames"):
                entry["resourceNames"] = list(rule["resourceNames"])
            if not entry["apiGroups"]:
                del entry["apiGroups"]
            resource_rules.append(entry)
        if rule.get("nonResourceURLs"):
            non_resource_rules.append({"verbs": verbs, "nonResourceURLs": list(rule["nonResourceURLs"])})
    status: Obj = {"resourceRules": resource_rules, "nonResourceRules": non_resource_rules, "incomplete": incomplete}
    if why:
        status["evaluationError"] = why
    return status
