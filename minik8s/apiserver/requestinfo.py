"""What a request asks for, read from its method, path and query (Kubernetes' ``RequestInfo``).

``/api/v1/...`` and ``/apis/{group}/{version}/...`` are resource requests:

- the verb comes from the method (POST ``create``, GET/HEAD ``get``, PUT ``update``, PATCH
  ``patch``, DELETE ``delete``); a GET without a name is ``list``, ``watch`` with
  ``?watch=true`` (or under the old ``/watch/`` prefix); a DELETE without a name is
  ``deletecollection``;
- ``namespaces/{ns}/{resource}...`` sets the namespace; ``namespaces/{ns}`` alone (or with
  ``status``/``finalize``) is the Namespace ``ns`` itself;
- then ``{resource}[/{name}[/{subresource}]]``.

Anything else (``/api``, ``/apis/apps``, ``/healthz``, ``/openapi/v2``) is a non-resource request
whose verb is the lower-case method (``get``, ``post``...).
"""

from __future__ import annotations

from dataclasses import dataclass

_VERBS = {"POST": "create", "GET": "get", "HEAD": "get", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}
_NAMESPACE_SUBRESOURCES = ("status", "finalize")


@dataclass(frozen=True)
class RequestInfo:
    """The attributes an authorizer decides on (Kubernetes' ``authorizer.Attributes`` without the user)."""

    verb: str
    path: str = ""
    resource_request: bool = False
    api_group: str = ""
    api_version: str = ""
    namespace: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""

    @property
    def resource_path(self) -> str:
        """``pods`` or ``pods/log``: what a rule's ``resources`` are matched against."""
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource


def parse(method: str, path: str, watch: bool = False) -> RequestInfo:
    """The :class:`RequestInfo` of ``method path``; ``watch``: the query has ``watch=true``/``1``."""
    method = method.upper()
    parts = [p for p in path.split("/") if p]
    non_resource = RequestInfo(verb=method.lower(), path=path)
    if not parts or parts[0] not in ("api", "apis"):
        return non_resource
    if parts[0] == "api":
        if len(parts) < 3:
            return non_resource
        group, version, rest = "", parts[1], parts[2:]
    else:
        if len(parts) < 4:
            return non_resource
        group, version, rest = parts[1], parts[2], parts[3:]
    verb = _VERBS.get(method, method.lower())
    if rest[0] == "watch":  # the deprecated /watch/ prefix
        rest = rest[1:]
        watch = True
        if not rest:
            return non_resource
    namespace = ""
    if rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    if not name:
        if verb == "get":
            verb = "watch" if watch else "list"
        elif verb == "delete":
            verb = "deletecollection"
    elif verb == "get" and watch:
        verb = "watch"
    return RequestInfo(verb, path, True, group, version, namespace, resource, subresource, name)
