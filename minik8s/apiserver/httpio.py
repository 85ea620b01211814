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
import json
from typing import Any

from fastapi import Request, Response
from fastapi.responses import JSONResponse

from minik8s.api import decoding, errors
from minik8s.apiserver import protobuf
from minik8s.apiserver.resources import DeleteOptions, FieldValidation, ListOptions

MAX_BODY_BYTES = 3 * 1024 * 1024  # kube-apiserver's default request size limit (3 MiB)
THREAD_DECODE_BYTES = 64 * 1024  # bodies larger than this are decoded in a worker thread
#: Request body media types decoded (patch bodies: their own +json / +yaml types).
BODY_MEDIA_TYPES = ("application/json", "application/yaml", "application/vnd.kubernetes.protobuf")


def status_response(err: errors.APIError) -> JSONResponse:
    """``err`` as a ``kind: Status`` body with its HTTP status code."""
    return JSONResponse(err.to_status(), status_code=err.code)


def status_json(err: errors.APIError) -> bytes:
    """``err``'s ``kind: Status`` body as JSON bytes (for the error channel of an exec stream)."""
    return json.dumps(err.to_status()).encode()


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
    """``metav1.ListOptions`` from the query string (400 for a non-integer ``limit``/``timeoutSeconds``)."""
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


def with_warnings(response: Response, validation: FieldValidation) -> Response:
    """``response`` with one ``Warning: 299 - "..."`` header per warning (RFC 7234), as kube-apiserver."""
    for text in validation.warnings:
        response.headers.append("Warning", '299 - "{}"'.format(text.replace("\\", "\\\\").replace('"', '\\"')))
    return response


def delete_options(params: Any, body: Any) -> DeleteOptions:
    """``metav1.DeleteOptions`` from the query and a ``DeleteOptions`` body (the body wins);
    400 for an unknown ``propagationPolicy``."""
    opts = DeleteOptions(grace_period_seconds=_int(params, "gracePeriodSeconds"),
                         propagation_policy=params.get("propagationPolicy"),
                         dry_run=bool(params.getlist("dryRun")) if hasattr(params, "getlist") else False)
    if isinstance(body, dict):
        if body.get("gracePeriodSeconds") is not None:
            opts.grace_period_seconds = int(body["gracePeriodSeconds"])
        opts.propagation_policy = body.get("propagationPolicy") or opts.propagation_policy
        pre = body.get("preconditions") or {}
        opts.precondition_uid = pre.get("uid")
        opts.precondition_resource_version = pre.get("resourceVersion")
        opts.dry_run = opts.dry_run or bool(body.get("dryRun"))
    if opts.propagation_policy not in (None, "Orphan", "Background", "Foreground"):
        raise errors.BadRequest(f'unsupported propagationPolicy "{opts.propagation_policy}": '
                                'supported values: "Orphan", "Background", "Foreground"')
    return opts
