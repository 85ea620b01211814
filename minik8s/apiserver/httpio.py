"""HTTP in and out for the apiserver's handlers: request bodies and query options in, Status out.

:func:`read_body` decodes a JSON, YAML or Kubernetes protobuf body of at most 3 MiB (kube-apiserver's default
limit: 413 RequestEntityTooLarge beyond it, 400 BadRequest when it does not parse, nests too deep or
expands too far through YAML aliases: :mod:`minik8s.api.decoding`; large bodies are decoded off the
event loop);
:func:`list_options` and :func:`delete_options` read ``metav1.ListOptions`` /
``metav1.DeleteOptions`` from the query (and the body); :func:`status_response` answers an
:class:`~minik8s.api.errors.APIError` as a ``kind: Status`` body with its HTTP code.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from fastapi import Request, Response
from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from minik8s.api import decoding, errors
from minik8s.api.encoding import encode_json
from minik8s.apiserver import protobuf
from minik8s.apiserver.resources import DeleteOptions, FieldValidation, ListOptions

log = logging.getLogger("apiserver")
MAX_BODY_BYTES = 3 * 1024 * 1024  # kube-apiserver's default request size limit (3 MiB)
THREAD_DECODE_BYTES = 64 * 1024  # bodies larger than this are decoded in a worker thread
#: Request body media types decoded (patch bodies: their own +json / +yaml types).
BODY_MEDIA_TYPES = ("application/json", "application/yaml", "application/vnd.kubernetes.protobuf")


class KubeJSONResponse(JSONResponse):
    """A JSON response in kube-apiserver's bytes (:func:`minik8s.api.encoding.encode_json`): every
    JSON answer of the apiserver is one of these."""

    def render(self, content: Any) -> bytes:
        return encode_json(content)


def status_response(err: errors.APIError) -> KubeJSONResponse:
    """``err`` as a ``kind: Status`` body with its HTTP status code (and ``Retry-After`` when
    its details say ``retryAfterSeconds``)."""
    retry = err.details.get("retryAfterSeconds")
    headers = {"Retry-After": str(retry)} if isinstance(retry, int) else None
    return KubeJSONResponse(err.to_status(), status_code=err.code, headers=headers)


class InternalErrors:
    """ASGI middleware: an unexpected exception becomes a 500 ``Status`` (kube-apiserver's
    ``InternalError``) and one log line, and the connection stays open for the next request.

    Starlette's own handler for ``Exception`` answers, then re-raises, so uvicorn logs the whole
    traceback and closes the kept-alive connection; here the traceback is logged at debug level only.
    An exception after the response has started (a watch stream) is re-raised: the connection
    cannot carry a second answer.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def send_tracked(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, send_tracked)
        except Exception as exc:  # noqa: BLE001 - the last line of defence
            text = f"{type(exc).__name__}: {exc}"[:300]
            log.error("apiserver internal error on %s %s: %s", scope.get("method"), scope.get("path"), text)
            log.debug("apiserver internal error traceback", exc_info=True)
            if started:
                raise
            await status_response(errors.InternalError(f"Internal error occurred: {text}"))(scope, receive, send)


def status_json(err: errors.APIError) -> bytes:
    """``err``'s ``kind: Status`` body as JSON bytes (for the error channel of an exec stream: Go's
    ``json.Marshal``, no newline)."""
    return encode_json(err.to_status())[:-1]


def parse_bool(value: str | None) -> bool:
    """A boolean query parameter: ``1``, ``true`` or ``yes`` (any case) is true."""
    return (value or "").lower() in ("1", "true", "yes")


def _int(params: Any, name: str) -> int | None:
    raw = params.get(name)
    if raw in (None, ""):
        return None
    try:
        return int(raw)
    except ValueError:
        raise errors.BadRequest(f'invalid value for {name}: "{raw}" is not an integer') from None


async def read_body(request: Request) -> Any:
    """The request body as JSON (or YAML); 413 beyond 3 MiB, 400 when it does not parse."""
    length = request.headers.get("content-length")
    if length and length.isdigit() and int(length) > MAX_BODY_BYTES:
        raise errors.RequestEntityTooLarge(f"Request entity too large: limit is {MAX_BODY_BYTES}")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise errors.RequestEntityTooLarge(f"Request entity too large: limit is {MAX_BODY_BYTES}")
        chunks.append(chunk)
    raw = b"".join(chunks)
    if not raw.strip():
        return None
    ctype = request.headers.get("content-type", "application/json").split(";")[0].strip().lower()
    if ctype == protobuf.MEDIA_TYPE:
        if len(raw) > THREAD_DECODE_BYTES:
            return await asyncio.to_thread(protobuf.decode, raw)
        return protobuf.decode(raw)  # what kubectl's generators send for Kubernetes' kinds
    if not (ctype in ("", "application/json", "application/yaml", "*/*") or ctype.endswith(("+json", "+yaml"))):
        # A 415 with a Status, as kube-apiserver answers a media type it has no decoder for (CBOR...).
        raise errors.UnsupportedMediaType(
            f'the body of the request was in an unknown format - accepted media types include: '
            f'{", ".join(BODY_MEDIA_TYPES)}')
    decode = decoding.load_yaml if "yaml" in ctype else decoding.load_json
    try:
        if len(raw) > THREAD_DECODE_BYTES:  # seconds of CPU for the largest bodies: not on the event loop
            return await asyncio.to_thread(decode, raw)
        return decode(raw)
    except decoding.DecodeError as exc:
        raise errors.BadRequest(f"the request body could not be decoded: {exc}") from None


def list_options(params: Any) -> ListOptions:
    """``metav1.ListOptions`` from the query string (400 for a non-integer ``limit``/``timeoutSeconds``;
    422 for a ``resourceVersionMatch`` Kubernetes' ``ValidateListOptions`` refuses)."""
    match, rv = params.get("resourceVersionMatch", ""), params.get("resourceVersion", "")
    if match:
        problem = None
        watch = parse_bool(params.get("watch"))
        if match not in (("NotOlderThan",) if watch else ("Exact", "NotOlderThan")):
            supported = '"NotOlderThan"' if watch else '"Exact", "NotOlderThan"'
            problem = f'Unsupported value: "{match}": supported values: {supported}'
        elif watch and params.get("sendInitialEvents") is None:
            problem = "Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"
        elif watch:
            pass  # a watch-list: client-go's reflectors since 1.32
        elif not rv:
            problem = "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"
        elif params.get("continue"):
            problem = "Forbidden: resourceVersionMatch is forbidden when continue is provided"
        elif match == "Exact" and rv == "0":
            problem = 'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"'
        if problem:
            raise errors.Invalid(f'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: {problem}',
                                 {"kind": "ListOptions", "group": "meta.k8s.io", "causes": [
                                     {"reason": "FieldValueInvalid", "message": problem,
                                      "field": "resourceVersionMatch"}]})
    return ListOptions(
        label_selector=params.get("labelSelector", ""),
        field_selector=params.get("fieldSelector", ""),
        limit=_int(params, "limit") or 0,
        continue_=params.get("continue", ""),
        resource_version=params.get("resourceVersion", ""),
        resource_version_match=params.get("resourceVersionMatch", ""),
        timeout_seconds=_int(params, "timeoutSeconds"),
        allow_watch_bookmarks=parse_bool(params.get("allowWatchBookmarks")),
        send_initial_events=parse_bool(params.get("sendInitialEvents")),
    )


#: kube-apiserver's warning limits: 4 KiB of messages in all; past that each is cut to 256 characters
WARNINGS_TOTAL, WARNING_TRUNCATED = 4096, 256


def with_warnings(response: Response, validation: FieldValidation) -> Response:
    """``response`` with one ``Warning: 299 - "..."`` header per warning (RFC 7234), as kube-apiserver:
    the text in UTF-8, control characters as spaces; when the warnings add up to more than 4 KiB
    each is cut at 256 characters, and those still past 4 KiB are left out."""
    texts = list(validation.warnings)
    if sum(len(t) for t in texts) > WARNINGS_TOTAL:
        texts = [t[:WARNING_TRUNCATED] for t in texts]
        kept, total = [], 0
        for t in texts:
            total += len(t)
            if total > WARNINGS_TOTAL:
                break
            kept.append(t)
        texts = kept
    for text in texts:
        text = "".join(" " if ch < " " or ch == "\x7f" else ch for ch in text)
        quoted = '299 - "{}"'.format(text.replace("\\", "\\\\").replace('"', '\\"'))
        # header values go out as latin-1: these code points are the UTF-8 bytes
        response.headers.append("Warning", quoted.encode("utf-8", "replace").decode("latin-1"))
    return response


def delete_options(params: Any, body: Any) -> DeleteOptions:
    """``metav1.DeleteOptions`` from the query and a ``DeleteOptions`` body (the body wins).

    400 BadRequest, before anything is deleted, for a body that is not an object, a field of the
    wrong type (``gracePeriodSeconds`` an int64, ``propagationPolicy`` a string,
    ``preconditions`` an object of strings, ``dryRun`` a list of strings), an unknown
    ``propagationPolicy`` or ``dryRun`` value — where kube-apiserver's decoder refuses them.
    """
    opts = DeleteOptions(grace_period_seconds=_int(params, "gracePeriodSeconds"),
                         propagation_policy=params.get("propagationPolicy"),
                         dry_run=_dry_run(params.getlist("dryRun") if hasattr(params, "getlist") else []))
    if body is not None and not isinstance(body, dict):
        raise errors.BadRequest(f"the DeleteOptions body must be an object, not {_json_type(body)}")
    body = body or {}
    grace = body.get("gracePeriodSeconds")
    if grace is not None:
        if isinstance(grace, bool) or not isinstance(grace, int) or not -(2**63) <= grace < 2**63:
            raise errors.BadRequest(f"DeleteOptions.gracePeriodSeconds must be an int64, not {_json_type(grace)}")
        opts.grace_period_seconds = grace
    policy = body.get("propagationPolicy")
    if policy is not None and not isinstance(policy, str):
        raise errors.BadRequest(f"DeleteOptions.propagationPolicy must be a string, not {_json_type(policy)}")
    opts.propagation_policy = policy or opts.propagation_policy
    pre = body.get("preconditions")
    if pre is not None:
        if not isinstance(pre, dict):
            raise errors.BadRequest(f"DeleteOptions.preconditions must be an object, not {_json_type(pre)}")
        for key in ("uid", "resourceVersion"):
            if pre.get(key) is not None and not isinstance(pre[key], str):
                raise errors.BadRequest(f"DeleteOptions.preconditions.{key} must be a string, "
                                        f"not {_json_type(pre[key])}")
        opts.precondition_uid = pre.get("uid")
        opts.precondition_resource_version = pre.get("resourceVersion")
    dry_run = body.get("dryRun")
    if dry_run is not None:
        if not isinstance(dry_run, list) or not all(isinstance(v, str) for v in dry_run):
            raise errors.BadRequest(f"DeleteOptions.dryRun must be a list of strings, not {_json_type(dry_run)}")
        opts.dry_run = opts.dry_run or _dry_run(dry_run)
    if opts.propagation_policy not in (None, "Orphan", "Background", "Foreground"):
        raise errors.BadRequest(f'unsupported propagationPolicy "{opts.propagation_policy}": '
                                'supported values: "Orphan", "Background", "Foreground"')
    return opts


def _dry_run(values: list[str]) -> bool:
    """``dryRun`` values: ``All`` (400 for anything else, as kube-apiserver)."""
    for value in values:
        if value != "All":
            raise errors.BadRequest(f'Invalid value: "{value}": supported values: "All"')
    return bool(values)


def _json_type(value: Any) -> str:
    """The JSON type name of a decoded value (for error messages)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"
