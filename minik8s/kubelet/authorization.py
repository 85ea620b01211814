"""Who may use the kubelet's server once ``--client-ca-file`` authenticates its callers.

A stand-in for the kubelet's ``--authorization-mode=Webhook``, in which the kubelet asks
the apiserver (a SubjectAccessReview) whether the user may act on the Node's ``proxy``,
``stats``, ``log``, ... subresource.  minik8s has no RBAC, so the answer is fixed to what a
kubeadm cluster grants: members of ``system:masters`` (cluster admins) and the user
``kube-apiserver-kubelet-client`` (the identity kubeadm gives the apiserver's kubelet client
certificate, ``--kubelet-client-certificate``).  Every other user — other nodes
(``system:node:<name>``) included — is denied with the kubelet's message
``Forbidden (user=<name>, verb=<verb>, resource=nodes, subresource=<subresource>)``.
"""

from __future__ import annotations

from minik8s.auth import UserInfo

#: Groups whose members may use every kubelet endpoint.
ALLOWED_GROUPS = frozenset({"system:masters"})
#: Users who may use every kubelet endpoint.
ALLOWED_USERS = frozenset({"kube-apiserver-kubelet-client"})

_VERBS = {"GET": "get", "HEAD": "get", "POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}
#: Path prefix → the Node subresource the kubelet checks (Kubernetes' ``GetRequestAttributes``); else ``proxy``.
_SUBRESOURCES = (("/stats", "stats"), ("/metrics", "metrics"), ("/logs", "log"), ("/spec", "spec"),
                 ("/healthz", "healthz"), ("/pods", "pods"), ("/configz", "configz"))


def request_attributes(method: str, path: str) -> tuple[str, str]:
    """``(verb, subresource)`` of a request to the kubelet, as the kubelet's authorizer sees it:
    ``("get", "stats")`` for ``GET /stats/summary``, ``("get", "proxy")`` for exec and container logs."""
    verb = _VERBS.get(method.upper(), method.lower())
    for prefix, subresource in _SUBRESOURCES:
        if path == prefix or path.startswith(prefix + "/"):
            return verb, subresource
    return verb, "proxy"


class KubeletAuthorizer:
    """The :class:`~minik8s.auth.Authorizer` of the kubelet's server (see the module docstring)."""

    def authorize(self, user: UserInfo, method: str, path: str) -> str | None:
        """None when ``user`` is allowed, else the kubelet's Forbidden message."""
        if user.name in ALLOWED_USERS or ALLOWED_GROUPS.intersection(user.groups):
            return None
        verb, subresource = request_attributes(method, path)
        return f"Forbidden (user={user.name}, verb={verb}, resource=nodes, subresource={subresource})"
