"""The API error hierarchy, shared by the apiserver and the client.

Every error maps 1:1 to an HTTP status code and a Kubernetes ``Status.reason``
(see Kubernetes' ``metav1.StatusReason``).  The apiserver raises these and
renders them as ``kind: Status`` bodies; the client parses ``Status`` bodies
back into the same classes, so callers catch e.g. :class:`NotFound` on both
sides of the wire.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar


class APIError(Exception):
    """Base class: an API ``Status`` failure with ``code``, ``reason`` and ``message``.

    ``details`` follows ``metav1.StatusDetails`` (``name``, ``group``, ``kind``,
    ``causes`` — a list of ``{"reason", "message", "field"}``).
    """

    code: ClassVar[int] = 500
    reason: ClassVar[str] = "InternalError"

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or {}

    def to_status(self) -> dict[str, Any]:
        """Render as a Kubernetes ``Status`` object (a JSON-ready dict) in the field order and with the
        omissions of Go's ``metav1.Status``: ``kind, apiVersion, metadata, status, message, reason,
        details, code``; empty fields (an empty ``group``, no ``causes``) left out, as ``omitempty``."""
        return status_object("Failure", self.message, self.reason, self.details, self.code)


#: ``metav1.StatusDetails`` and ``metav1.StatusCause`` fields in Go's order (their JSON order).
DETAILS_FIELDS = ("name", "group", "kind", "uid", "causes", "retryAfterSeconds")
CAUSE_FIELDS = ("reason", "message", "field")


def status_object(status: str, message: str = "", reason: str = "", details: dict[str, Any] | None = None,
                  code: int = 0) -> dict[str, Any]:
    """A ``kind: Status`` object as kube-apiserver writes it: Go's field order, and every field that
    is empty (``""``, 0, no details) omitted (``omitempty``) but ``metadata``, always ``{}``.
    ``status`` is ``Success`` or ``Failure``; ``details`` follows ``metav1.StatusDetails``."""
    out: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": status}
    if message:
        out["message"] = message
    if reason:
        out["reason"] = reason
    ordered = _ordered(details or {}, DETAILS_FIELDS)
    if "causes" in ordered:
        ordered["causes"] = [_ordered(c, CAUSE_FIELDS) if isinstance(c, dict) else c for c in ordered["causes"]]
    if ordered:
        out["details"] = ordered
    if code:
        out["code"] = code
    return out


def _ordered(fields: dict[str, Any], order: tuple[str, ...]) -> dict[str, Any]:
    """``fields`` with the known ones first in ``order`` and the empty ones left out."""
    out = {k: fields[k] for k in order if fields.get(k) not in (None, "", 0, [], {})}
    out.update((k, v) for k, v in fields.items() if k not in out and k not in order)
    return out


class BadRequest(APIError):
    code, reason = 400, "BadRequest"


class Unauthorized(APIError):
    code, reason = 401, "Unauthorized"


class Forbidden(APIError):
    code, reason = 403, "Forbidden"


class NotFound(APIError):
    """404. As Kubernetes' ``NewNotFound``, its Status always has ``details`` (``{}`` for a path the
    server does not serve; ``name`` and ``kind`` for a missing object): clients read them
    (kubectl 1.32's ``debug`` dereferences ``details`` of a 404 from ``pods/ephemeralcontainers``)."""

    code, reason = 404, "NotFound"

    def to_status(self) -> dict[str, Any]:
        out = super().to_status()
        if "details" not in out:
            out = {k: v for k, v in out.items() if k != "code"} | {"details": {}, "code": self.code}
        return out


class MethodNotAllowed(APIError):
    code, reason = 405, "MethodNotAllowed"


class NotAcceptable(APIError):
    code, reason = 406, "NotAcceptable"


class AlreadyExists(APIError):
    code, reason = 409, "AlreadyExists"


class Conflict(APIError):
    code, reason = 409, "Conflict"


class Gone(APIError):
    """A watch or list asked for a resourceVersion that etcd has compacted (410)."""

    code, reason = 410, "Expired"


class RequestEntityTooLarge(APIError):
    code, reason = 413, "RequestEntityTooLarge"


class UnsupportedMediaType(APIError):
    code, reason = 415, "UnsupportedMediaType"


class Invalid(APIError):
    code, reason = 422, "Invalid"


class TooManyRequests(APIError):
    code, reason = 429, "TooManyRequests"


class InternalError(APIError):
    code, reason = 500, "InternalError"


class ServiceUnavailable(APIError):
    code, reason = 503, "ServiceUnavailable"


class Timeout(APIError):
    code, reason = 504, "Timeout"


_BY_REASON: dict[str, type[APIError]] = {
    cls.reason: cls
    for cls in (
        BadRequest, Unauthorized, Forbidden, NotFound, MethodNotAllowed, NotAcceptable,
        AlreadyExists, Conflict, Gone, RequestEntityTooLarge, UnsupportedMediaType, Invalid,
        TooManyRequests, InternalError, ServiceUnavailable, Timeout,
    )
}
_BY_CODE: dict[int, type[APIError]] = {}
for _cls in _BY_REASON.values():
    _BY_CODE.setdefault(_cls.code, _cls)


def invalid(kind: str, name: str, causes: list[tuple[str, Any, str]]) -> Invalid:
    """Build Kubernetes' 422 ``Invalid`` error from ``(field, bad value, message)`` causes.

    ``kind``: the group-qualified kind as Kubernetes' ``GroupKind.String()`` writes it (``Pod``,
    ``Deployment.apps``, ``CreateOptions.meta.k8s.io``).  The message reads like kube-apiserver's:
    ``Deployment.apps "x" is invalid: spec.replicas: ...``; the details carry the kind and its group
    apart (``NewInvalid``), which kubectl prints as ``The Deployment "x" is invalid``.
    """
    parts = []
    status_causes = []
    for field, value, msg in causes:
        shown = f"Invalid value: {json.dumps(value)}: {msg}" if value is not None else msg
        parts.append(f"{field}: {shown}")
        status_causes.append({"reason": "FieldValueInvalid", "message": shown, "field": field})
    joined = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
    bare, _, group = kind.partition(".")
    return Invalid(
        f'{kind} "{name}" is invalid: {joined}',
        {"name": name, **({"group": group} if group else {}), "kind": bare, "causes": status_causes},
    )


def from_status(code: int, body: Any) -> APIError:
    """Map an HTTP error response (status code and, ideally, a ``Status`` body) to an APIError."""
    if isinstance(body, dict) and body.get("kind") == "Status":
        reason = body.get("reason") or ""
        cls = _BY_REASON.get(reason) or _BY_CODE.get(code, APIError)
        err = cls(body.get("message") or reason or f"HTTP {code}", body.get("details"))
    else:
        cls = _BY_CODE.get(code, APIError)
        text = body if isinstance(body, str) else ""
        err = cls(text.strip()[:500] or f"the server answered HTTP {code}")
    return err
