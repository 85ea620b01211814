"""Content negotiation of responses: the ``Accept`` header, as kube-apiserver reads it.

A clause is a media type with parameters; ``as``, ``g`` and ``v`` ask for a conversion into a
``meta.k8s.io`` kind instead of the object itself:

- ``application/json;as=Table;v=v1;g=meta.k8s.io`` (``v1beta1`` too): server-side printing, a Table
  of Kubernetes' columns (:func:`minik8s.api.columns.table`) — what ``kubectl get`` asks for;
- ``application/json;as=PartialObjectMetadata[List];v=v1;g=meta.k8s.io``: metadata only, as the
  metadata clients (garbage collector, ``kubectl get -o name`` in some versions) ask for.

Clauses are tried by ``q`` (highest first, then in order); the first one this server can produce
wins.  JSON is served for ``application/json``, ``application/*``, ``*/*`` and a missing header,
YAML for ``application/yaml`` (not in watches).  Protobuf (``application/vnd.kubernetes.protobuf``)
is not produced: a request that accepts nothing else is answered 406 NotAcceptable, as
kube-apiserver answers media types it has no serializer for.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import yaml

from minik8s.api import columns, errors
from minik8s.api.base import Obj
from minik8s.api.encoding import encode_json

JSON = "application/json"
YAML = "application/yaml"
PROTOBUF = "application/vnd.kubernetes.protobuf"
META_GROUP = "meta.k8s.io"
META_VERSIONS = ("v1", "v1beta1")
#: What each kind of request may be converted to (``as=``).
LIST_TARGETS = frozenset({"Table", "PartialObjectMetadataList"})
OBJECT_TARGETS = frozenset({"Table", "PartialObjectMetadata"})


@dataclass(frozen=True)
class Output:
    """The negotiated answer: ``media_type`` (JSON or YAML), and ``as_kind`` (``""`` for the
    object itself, else ``Table``/``PartialObjectMetadata``/``PartialObjectMetadataList``) in
    ``meta.k8s.io/{version}``."""

    media_type: str = JSON
    as_kind: str = ""
    version: str = "v1"

    @property
    def api_version(self) -> str:
        return f"{META_GROUP}/{self.version}"


def _clauses(accept: str) -> list[tuple[str, dict[str, str]]]:
    parsed: list[tuple[float, int, str, dict[str, str]]] = []
    for i, clause in enumerate(accept.split(",")):
        parts = [p.strip() for p in clause.split(";")]
        mime = parts[0].lower()
        if not mime:
            continue
        params: dict[str, str] = {}
        for part in parts[1:]:
            key, _, value = part.partition("=")
            params[key.strip().lower()] = value.strip().strip('"')
        try:
            q = float(params.pop("q", "1"))
        except ValueError:
            q = 0.0
        if q > 0:
            parsed.append((-q, i, mime, params))
    parsed.sort()
    return [(mime, params) for _, _, mime, params in parsed]


def negotiate(accept: str | None, targets: frozenset[str], watch: bool = False) -> Output:
    """The Output for ``accept`` (a missing or empty header means JSON).

    ``targets``: the conversions this request can be answered with (:data:`LIST_TARGETS` or
    :data:`OBJECT_TARGETS`); a clause asking for another is skipped.  Raises NotAcceptable
    (406) when no clause can be served.
    """
    if not accept or not accept.strip():
        return Output()
    for mime, params in _clauses(accept):
        if mime in (JSON, "application/*", "*/*"):
            media = JSON
        elif mime == YAML and not watch:
            media = YAML
        else:
            continue
        as_kind = params.get("as", "")
        if not as_kind:
            if params.get("g") or params.get("v"):
                continue
            return Output(media)
        if as_kind in targets and params.get("g") == META_GROUP and params.get("v") in META_VERSIONS:
            return Output(media, as_kind, params["v"])
    accepted = f"{JSON}, {YAML}" if not watch else JSON
    raise errors.NotAcceptable(f"only the following media types are accepted: {accepted}")


#: aggregated discovery's media type (``apidiscovery.k8s.io/v2``): the clause client-go asks for
#: first on ``/api`` and ``/apis``, and the answer's ``Content-Type``
AGGREGATED_DISCOVERY = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


def wants_aggregated_discovery(accept: str | None) -> bool:
    """Whether ``accept`` prefers aggregated discovery v2 to the plain discovery documents: its
    first clause minik8s can answer asks for ``as=APIGroupDiscoveryList;g=apidiscovery.k8s.io;v=v2``
    (a clause for another version, such as ``v2beta1``, is skipped, as kube-apiserver skips it)."""
    for mime, params in _clauses(accept or ""):
        if mime not in (JSON, "application/*", "*/*"):
            continue
        if params.get("as") == "APIGroupDiscoveryList":
            if params.get("g") == "apidiscovery.k8s.io" and params.get("v") == "v2":
                return True
        elif not (params.get("as") or params.get("g") or params.get("v")):
            return False
    return False


def accepts_json(accept: str | None) -> bool:
    """Whether ``accept`` (None: no header) takes JSON (``application/json``, ``application/*``, ``*/*``)."""
    if not accept or not accept.strip():
        return True
    return any(mime in (JSON, "application/*", "*/*") for mime, _ in _clauses(accept))


def include_object(params: Any) -> str:
    """The ``includeObject`` query parameter (``Object``, ``Metadata`` (default) or ``None``);
    400 BadRequest for anything else."""
    value = params.get("includeObject") or "Metadata"
    if value not in columns.INCLUDE_OBJECT:
        raise errors.BadRequest(f'unrecognized includeObject value: "{value}"')
    return str(value)


def partial(obj: Obj, out: Output) -> Obj:
    """``PartialObjectMetadata`` of ``obj`` (its metadata only)."""
    return {"kind": "PartialObjectMetadata", "apiVersion": out.api_version, "metadata": obj.get("metadata") or {}}


def convert_list(listed: Obj, kind: str, out: Output, params: Any, cols: list[columns.Column] | None = None) -> Obj:
    """A list answer (``{kind}List``) converted as ``out`` asks (``cols``: a custom resource's columns)."""
    if out.as_kind == "Table":
        return columns.table(kind, listed.get("items") or [], include_object=include_object(params),
                             table_version=out.version, list_meta=listed.get("metadata"), cols=cols)
    if out.as_kind == "PartialObjectMetadataList":
        return {"kind": "PartialObjectMetadataList", "apiVersion": out.api_version,
                "metadata": listed.get("metadata") or {},
                "items": [partial(o, out) for o in listed.get("items") or []]}
    return listed


def convert_object(obj: Obj, kind: str, out: Output, params: Any, with_definitions: bool = True,
                   at: dt.datetime | None = None, cols: list[columns.Column] | None = None) -> Obj:
    """One object (a GET answer or a watch event's object) converted as ``out`` asks.

    As a Table it is one row, with the object's resourceVersion; ``with_definitions`` False
    leaves the column definitions out (watch events after the first).
    """
    if out.as_kind == "Table":
        rv = (obj.get("metadata") or {}).get("resourceVersion")
        return columns.table(kind, [obj], include_object=include_object(params), table_version=out.version,
                             list_meta={"resourceVersion": rv} if rv else {}, with_definitions=with_definitions,
                             at=at, cols=cols)
    if out.as_kind == "PartialObjectMetadata":
        return partial(obj, out)
    return obj


def convert_event(event: Obj, kind: str, out: Output, params: Any, first: bool,
                  cols: list[columns.Column] | None = None) -> Obj:
    """A watch event with its object converted; ERROR events (a Status) and the resourceVersion-only
    objects of BOOKMARK events pass unchanged but for their kind, which kubectl's decoder needs."""
    if not out.as_kind:
        return event
    etype = event.get("type")
    obj = event.get("object") or {}
    if etype == "ERROR":
        return event
    if etype == "BOOKMARK":
        if out.as_kind == "Table":
            return {"type": etype, "object": columns.table(kind, [], table_version=out.version,
                                                           list_meta=obj.get("metadata"), with_definitions=False,
                                                           cols=cols)}
        return {"type": etype, "object": partial(obj, out)}
    return {"type": etype, "object": convert_object(obj, kind, out, params, with_definitions=first, cols=cols)}


def render(data: Any, out: Output) -> bytes:
    """The response body in ``out.media_type``."""
    if out.media_type == YAML:
        return yaml.safe_dump(data, sort_keys=False).encode()
    return encode_json(data)
