"""The OpenAPI documents kubectl and the other clients read: ``/openapi/v2`` and ``/openapi/v3``.

Both are built from :class:`minik8s.api.schema.Schemas` (the same models that validate
requests) plus one path item per REST path a kind serves, as kube-apiserver publishes them: its
collection, its item, and each subresource it names, described by
:data:`minik8s.api.resourcetypes.SUBRESOURCES` (``scale`` takes ``autoscaling/v1`` Scale,
``eviction`` ``policy/v1`` Eviction, ``log`` answers text, ``exec`` is a ``connect``):

- ``/openapi/v3``: an index ``{"paths": {"api/v1": {"serverRelativeURL": "/openapi/v3/api/v1?hash=..."}}}``
  and one document per group/version at ``/openapi/v3/api/v1``, ``/openapi/v3/apis/apps/v1``, ...
  (OpenAPI 3.0, definitions under ``components.schemas``).  kubectl reads these: ``kubectl
  explain``, the check that the server validates fields itself (a PATCH operation of the kind
  with a ``fieldValidation`` query parameter, so ``kubectl apply`` sends ``fieldValidation=Strict``
  instead of validating on its side), and the patch metadata of ``kubectl apply``'s
  strategic merge patches (PATCH request bodies list ``application/strategic-merge-patch+json``
  for Kubernetes' kinds only; minik8s' own kinds get JSON merge patches, as custom resources do).
- ``/openapi/v2``: the whole Swagger 2.0 document, in JSON, or in protobuf (gnostic's
  ``openapi.v2.Document``, ``application/com.github.proto-openapi.spec.v2@v1.0+protobuf``), the
  only form client-go reads it in (``kubectl explain --output plaintext-openapiv2``, kubectl's
  fallbacks when a v3 document lacks something).

Every operation carries ``x-kubernetes-group-version-kind`` and ``x-kubernetes-action``.
"""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

from minik8s.api.base import Obj
from minik8s.api.resourcetypes import ResourceType, subresource
from minik8s.api.schema import REF_PREFIX, Schemas, gvk

TITLE = "Kubernetes"
JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"
V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"  # what client-go asks for
#: What kube-openapi answers it with ('@' is not allowed in a media type Go's mime package parses).
V2_PROTOBUF_RETURNED = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
V3_PROTOBUF = "application/com.github.proto-openapi.spec.v3@v1.0+protobuf"

_QUERY = {
    "pretty": "If 'true', then the output is pretty printed.",
    "dryRun": "When present, indicates that modifications should not be persisted. Valid values are: - All: all "
              "dry run stages will be processed",
    "fieldManager": "fieldManager is a name associated with the actor or entity that is making these changes.",
    "fieldValidation": "fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) "
                       "containing unknown or duplicate fields. Valid values are: - Ignore: This will ignore any "
                       "unknown fields that are silently dropped from the object. - Warn: This will send a warning "
                       "via the standard warning response header for each unknown field that is dropped from the "
                       "object. This is the default. - Strict: This will fail the request with a BadRequest error "
                       "if any unknown fields would be dropped from the object.",
    "labelSelector": "A selector to restrict the list of returned objects by their labels.",
    "fieldSelector": "A selector to restrict the list of returned objects by their fields.",
    "limit": "limit is a maximum number of responses to return for a list call.",
    "continue": "The continue option should be set when retrieving more results from the server.",
    "resourceVersion": "resourceVersion sets a constraint on what resource versions a request may be served from.",
    "watch": "Watch for changes to the described resources and return them as a stream of add, update, and "
             "remove notifications.",
    "timeoutSeconds": "Timeout for the list/watch call.",
    "gracePeriodSeconds": "The duration in seconds before the object should be deleted.",
    "propagationPolicy": "Whether and how garbage collection will be performed: Orphan, Background or Foreground.",
    "force": "Force is going to \"force\" Apply requests. It must be unset for non-apply patch requests.",
    # pods/log
    "container": "The container to read from or run in; the pod's only container when omitted.",
    "follow": "Keep the log stream open and send new lines as the container writes them.",
    "insecureSkipTLSVerifyBackend": "Do not verify the kubelet's serving certificate when reading the log.",
    "limitBytes": "The most bytes of log to answer; the log is cut there.",
    "previous": "Answer the log of the container's previous (terminated) instance.",
    "sinceSeconds": "Only the log lines written in the last this many seconds.",
    "tailLines": "Only this many lines from the end of the log.",
    "timestamps": "Begin every log line with its RFC3339 timestamp.",
    # pods/exec, pods/attach, pods/portforward
    "command": "The command to run (one parameter per argument), not through a shell.",
    "stdin": "Send the client's standard input to the container.",
    "stdout": "Send the container's standard output back.",
    "stderr": "Send the container's standard error back.",
    "tty": "Give the process a terminal.",
    "ports": "The pod ports to forward connections to.",
}
PATCH_SCHEMA = {"description": "Patch is provided to give a concrete name and type to the Kubernetes PATCH request "
                               "body.", "type": "object"}


_INT_PARAMS = {"limit", "timeoutSeconds", "gracePeriodSeconds", "limitBytes", "sinceSeconds", "tailLines", "ports"}
_BOOL_PARAMS = {"watch", "force", "follow", "insecureSkipTLSVerifyBackend", "previous", "timestamps", "stdin", "stdout",
                "stderr", "tty"}
#: what an operation answers in: objects, ``pods/log``'s text, a connection's byte stream
OBJECT_TYPES = ["application/json", "application/yaml"]
TEXT_TYPES = ["text/plain", *OBJECT_TYPES]
STREAM_TYPES = ["*/*"]
#: the query parameters of every write
_WRITE = ["pretty", "dryRun", "fieldManager", "fieldValidation"]
#: the HTTP method of each verb a subresource lists in discovery
_VERB_METHODS = {"get": "get", "update": "put", "patch": "patch", "create": "post"}


def _camel(text: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in text.replace("-", ".").split(".") if part)


def _group_tag(rt: ResourceType) -> str:
    """``core_v1``, ``apps_v1``, ``networking_v1``, ``minik8s_io_v1``, as the tags Kubernetes uses."""
    group = rt.group[:-len(".k8s.io")] if rt.group.endswith(".k8s.io") else rt.group
    return f"{(group or 'core').replace('.', '_')}_{rt.version}"


class Operation:
    """One operation on one path (method, action, kind, parameters, body and response types).

    ``body`` and ``response`` are definition names (``body`` ``"patch"``: a patch document);
    ``response`` None: the operation answers a string (``pods/log``'s text, a connection's stream),
    in ``produces``.
    """

    def __init__(self, rt: ResourceType, method: str, action: str, operation_id: str, query: list[str],
                 body: str | None, response: str | None, patch_types: list[str] | None = None,
                 kind: Obj | None = None, produces: list[str] | None = None) -> None:
        self.rt = rt
        self.method = method
        self.action = action
        self.operation_id = operation_id
        self.query = query
        self.body = body
        self.response = response
        self.patch_types = patch_types
        self.kind = kind or gvk(rt)
        self.produces = produces or OBJECT_TYPES


def operations(rt: ResourceType, schemas: Schemas) -> dict[str, tuple[list[str], list[Operation]]]:
    """The REST paths of ``rt``: path → (path parameters, operations), as kube-apiserver serves them:
    the collection, the item, and each of its subresources (:func:`_subresource_operations`)."""
    prefix = f"/apis/{rt.group}/{rt.version}" if rt.group else f"/api/{rt.version}"
    name = schemas.kind_names[(rt.group, rt.version, rt.kind)]
    list_name = f"{name}List"
    ident = _camel(rt.group.split(".")[0] if rt.group else "core") + _camel(rt.version)
    scope = "Namespaced" if rt.namespaced else ""
    ns_path = f"{prefix}/namespaces/{{namespace}}/{rt.plural}" if rt.namespaced else f"{prefix}/{rt.plural}"
    ns_params = ["namespace"] if rt.namespaced else []
    patch_types = [JSON_PATCH, MERGE_PATCH]
    if "." not in rt.group or rt.group.endswith(".k8s.io"):
        patch_types.append(STRATEGIC_PATCH)  # Kubernetes' kinds; minik8s' own get merge patches, as CRDs
    verbs = set(rt.verbs)
    lister = ["pretty", "labelSelector", "fieldSelector", "limit", "continue", "resourceVersion", "timeoutSeconds",
              "watch"]
    paths: dict[str, tuple[list[str], list[Operation]]] = {}

    collection: list[Operation] = []
    if "list" in verbs:
        collection.append(Operation(rt, "get", "list", f"list{ident}{scope}{rt.kind}", lister, None, list_name))
    if "create" in verbs:
        collection.append(Operation(rt, "post", "post", f"create{ident}{scope}{rt.kind}", _WRITE, name, name))
    if "deletecollection" in verbs:
        collection.append(Operation(rt, "delete", "deletecollection", f"deleteCollection{ident}{scope}{rt.kind}",
                                    ["pretty", "dryRun", "labelSelector", "fieldSelector", "gracePeriodSeconds",
                                     "propagationPolicy"], None, list_name))
    if collection:
        paths[ns_path] = (ns_params, collection)
    if rt.namespaced and "list" in verbs:
        paths[f"{prefix}/{rt.plural}"] = ([], [Operation(rt, "get", "list", f"list{ident}{rt.kind}ForAllNamespaces",
                                                         lister, None, list_name)])

    item = _object_operations(rt, verbs - {"create"}, f"{ident}{scope}{rt.kind}", name, name, gvk(rt), patch_types)
    if "delete" in verbs:
        item.append(Operation(rt, "delete", "delete", f"delete{ident}{scope}{rt.kind}",
                              ["pretty", "dryRun", "gracePeriodSeconds", "propagationPolicy"], None, name))
    if item:
        paths[f"{ns_path}/{{name}}"] = (ns_params + ["name"], item)
    for sub in sorted(rt.subresources):
        ops = _subresource_operations(rt, sub, schemas, ident, name, patch_types)
        if ops:
            paths[f"{ns_path}/{{name}}/{sub}"] = (ns_params + ["name"], ops)
    return paths


def _object_operations(rt: ResourceType, verbs: set[str] | tuple[str, ...], ident: str, body: str, response: str,
                       kind: Obj, patch_types: list[str]) -> list[Operation]:
    """The read/replace/patch/create operations ``verbs`` allow on one object path; ``ident``: the
    operation ids' stem (``CoreV1NamespacedPod``, ``AppsV1NamespacedDeploymentScale``)."""
    ops: list[Operation] = []
    if "get" in verbs:
        ops.append(Operation(rt, "get", "get", f"read{ident}", ["pretty"], None, response, kind=kind))
    if "update" in verbs:
        ops.append(Operation(rt, "put", "put", f"replace{ident}", _WRITE, body, response, kind=kind))
    if "patch" in verbs:
        ops.append(Operation(rt, "patch", "patch", f"patch{ident}", _WRITE + ["force"], "patch", response,
                             patch_types, kind=kind))
    if "create" in verbs:
        ops.append(Operation(rt, "post", "post", f"create{ident}", _WRITE, body, response, kind=kind))
    return ops


def _subresource_operations(rt: ResourceType, name: str, schemas: Schemas, ident: str, own: str,
                            patch_types: list[str]) -> list[Operation]:
    """The operations of ``{plural}/{name}/{subresource}`` (``ident``: ``CoreV1``; ``own``: the
    definition of ``rt``'s kind), from its :class:`~minik8s.api.resourcetypes.Subresource`:

    - ``connect`` ones (``pods/exec``): ``connect{Ident}{Method}...`` for each method, answering a
      stream, with the options kind (``PodExecOptions``) as their group-version-kind;
    - ``text`` ones (``pods/log``): a read answering text, of the resource's own kind;
    - the others: read/replace/patch/create of the kind they take (``autoscaling/v1`` Scale for
      ``scale``, ``policy/v1`` Eviction for ``eviction``, the resource's own for ``status``).
    """
    sub = subresource(name)
    group, version = sub.group_version or (rt.group, rt.version)
    kind = {"group": group, "kind": sub.kind or rt.kind, "version": version}
    scope = "Namespaced" if rt.namespaced else ""
    stem = f"{scope}{rt.kind}{_camel(name)}"
    if sub.connect:
        return [Operation(rt, method, "connect", f"connect{ident}{method.capitalize()}{stem}", list(sub.query),
                          None, None, kind=kind, produces=STREAM_TYPES)
                for method in sorted(_VERB_METHODS[v] for v in sub.verbs if v in _VERB_METHODS)]
    if sub.text:
        return [Operation(rt, "get", "get", f"read{ident}{stem}", list(sub.query), None, None, kind=kind,
                          produces=TEXT_TYPES)]
    definition = own if not sub.kind else schemas.kind_definition(group, version, kind["kind"]) or own
    return _object_operations(rt, sub.verbs, f"{ident}{stem}", definition, definition, kind, patch_types)


# ------------------------------------------------------------------ v2 (Swagger 2.0)
def _v2_parameter(name: str, where: str) -> Obj:
    if where == "path":
        return {"name": name, "in": "path", "required": True, "type": "string", "uniqueItems": True,
                "description": f"{name} of the {'Namespace' if name == 'namespace' else 'object'}"}
    kind = "integer" if name in _INT_PARAMS else "boolean" if name in _BOOL_PARAMS else "string"
    return {"name": name, "in": "query", "type": kind, "uniqueItems": True, "description": _QUERY[name]}


def _v2_response(op: Operation) -> Obj:
    return {"$ref": REF_PREFIX + op.response} if op.response else {"type": "string"}


def _v2_operation(op: Operation) -> Obj:
    params = [_v2_parameter(q, "query") for q in op.query]
    out: Obj = {
        "operationId": op.operation_id, "tags": [_group_tag(op.rt)],
        "produces": list(op.produces), "schemes": ["https"],
        "consumes": op.patch_types or ["*/*"],
        "responses": {"200": {"description": "OK", "schema": _v2_response(op)},
                      "401": {"description": "Unauthorized"}},
        "x-kubernetes-action": op.action, "x-kubernetes-group-version-kind": op.kind,
    }
    if op.body == "patch":
        params.insert(0, {"name": "body", "in": "body", "required": True, "schema": PATCH_SCHEMA})
    elif op.body:
        params.insert(0, {"name": "body", "in": "body", "required": True, "schema": {"$ref": REF_PREFIX + op.body}})
    if op.method == "post" and op.action == "post":
        out["responses"]["201"] = {"description": "Created", "schema": _v2_response(op)}
        out["responses"]["202"] = {"description": "Accepted", "schema": _v2_response(op)}
    out["parameters"] = params
    return out


def document_v2(types: list[ResourceType], schemas: Schemas, version: str) -> Obj:
    """The Swagger 2.0 document of every kind in ``types``."""
    paths: Obj = {}
    for rt in types:
        for path, (path_params, ops) in operations(rt, schemas).items():
            item: Obj = {method.method: _v2_operation(method) for method in ops}
            item["parameters"] = [_v2_parameter(p, "path") for p in path_params]
            paths[path] = item
    return {"swagger": "2.0", "info": {"title": TITLE, "version": version}, "paths": paths,
            "definitions": copy.deepcopy(schemas.definitions)}


# ------------------------------------------------------------------ v3 (OpenAPI 3.0)
def _v3_schema(schema: Any) -> Any:
    """A v2 schema in v3 form: ``#/components/schemas/`` references, wrapped in ``allOf`` (beside
    any description or patch metadata) as kube-apiserver writes them; kubectl explain names the
    referenced type (``<IntOrString>``) only in that form."""
    if isinstance(schema, list):
        return [_v3_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _v3_schema(v) for k, v in schema.items() if k != "$ref"}
    ref = schema.get("$ref")
    if isinstance(ref, str):
        out["allOf"] = [{"$ref": "#/components/schemas/" + ref[len(REF_PREFIX):]}]
    return out


def _v3_parameter(name: str, where: str) -> Obj:
    v2 = _v2_parameter(name, where)
    param: Obj = {"name": name, "in": where, "description": v2["description"], "schema": {"type": v2["type"],
                                                                                          "uniqueItems": True}}
    if where == "path":
        param["required"] = True
    return param


def _v3_operation(op: Operation) -> Obj:
    schema = {"$ref": "#/components/schemas/" + op.response} if op.response else {"type": "string"}
    content = {media: {"schema": schema} for media in op.produces}
    out: Obj = {
        "operationId": op.operation_id, "tags": [_group_tag(op.rt)],
        "parameters": [_v3_parameter(q, "query") for q in op.query],
        "responses": {"200": {"description": "OK", "content": content}, "401": {"description": "Unauthorized"}},
        "x-kubernetes-action": op.action, "x-kubernetes-group-version-kind": op.kind,
    }
    if op.method == "post" and op.action == "post":
        out["responses"]["201"] = {"description": "Created", "content": content}
        out["responses"]["202"] = {"description": "Accepted", "content": content}
    if op.body == "patch":
        patch_schema = {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"}
        out["requestBody"] = {"required": True, "content": {t: {"schema": patch_schema} for t in op.patch_types or []}}
    elif op.body:
        body_ref = {"$ref": "#/components/schemas/" + op.body}
        out["requestBody"] = {"required": True, "content": {"*/*": {"schema": body_ref}}}
    return out


def document_v3(types: list[ResourceType], schemas: Schemas, version: str) -> Obj:
    """The OpenAPI 3.0 document of one group/version (``types`` are its kinds)."""
    paths: Obj = {}
    names = []
    for rt in types:
        names.append(schemas.kind_names[(rt.group, rt.version, rt.kind)])
        for path, (path_params, ops) in operations(rt, schemas).items():
            item: Obj = {op.method: _v3_operation(op) for op in ops}
            item["parameters"] = [_v3_parameter(p, "path") for p in path_params]
            paths[path] = item
            names += [op.response for op in ops if op.response]
            names += [op.body for op in ops if op.body and op.body != "patch"]
    components = {name: _v3_schema(schema) for name, schema in sorted(schemas.closure(names).items())}
    components["io.k8s.apimachinery.pkg.apis.meta.v1.Patch"] = PATCH_SCHEMA
    return {"openapi": "3.0.0", "info": {"title": TITLE, "version": version}, "paths": paths,
            "components": {"schemas": components}}


def gv_path(group: str, version: str) -> str:
    """The index key of a group/version: ``api/v1``, ``apis/apps/v1``."""
    return f"apis/{group}/{version}" if group else f"api/{version}"


class OpenAPI:
    """The documents of the kinds served, built once per set of kinds and kept as JSON bytes."""

    def __init__(self, version: str) -> None:
        self.version = version
        self._key: tuple[ResourceType, ...] = ()
        self.schemas = Schemas([])
        self.v2 = b""
        self.v3: dict[str, bytes] = {}
        self.v3_hashes: dict[str, str] = {}
        self._v2_doc: Obj = {}
        self._v2_protobuf: bytes | None = None

    def refresh(self, types: list[ResourceType]) -> None:
        """Rebuild when the kinds served changed (a no-op otherwise)."""
        key = tuple(types)
        if key == self._key and self.v2:
            return
        schemas = Schemas(types)
        v2_doc = document_v2(types, schemas, self.version)
        v2 = json.dumps(v2_doc, separators=(",", ":")).encode()
        by_gv: dict[str, list[ResourceType]] = {}
        for rt in types:
            by_gv.setdefault(gv_path(rt.group, rt.version), []).append(rt)
        v3 = {gv: json.dumps(document_v3(kinds, schemas, self.version), separators=(",", ":")).encode()
              for gv, kinds in by_gv.items()}
        self.schemas, self.v2, self.v3 = schemas, v2, v3
        self._v2_doc, self._v2_protobuf = v2_doc, None
        self.v3_hashes = {gv: hashlib.sha512(doc).hexdigest().upper() for gv, doc in v3.items()}
        self._key = key

    def v2_protobuf(self) -> bytes:
        """The v2 document in protobuf (built on first use: ~0.2 s, so callers run it in a thread)."""
        if self._v2_protobuf is None:
            self._v2_protobuf = document_v2_protobuf(self._v2_doc)
        return self._v2_protobuf

    def index(self) -> Obj:
        """``/openapi/v3``: where each group/version's document is."""
        return {"paths": {gv: {"serverRelativeURL": f"/openapi/v3/{gv}?hash={digest}"}
                          for gv, digest in self.v3_hashes.items()}}


# ------------------------------------------------------------------ v2 in protobuf (gnostic's openapi.v2)
def _named_any(name: str, value: Any) -> Obj:
    return {"name": name, "value": {"yaml": json.dumps(value)}}  # JSON is YAML, as gnostic reads it


def _pb_schema(schema: Obj) -> Obj:
    out: Obj = {}
    for key, value in schema.items():
        if key == "$ref":
            out["_ref"] = value
        elif key in ("format", "description"):
            out[key] = value
        elif key == "required":
            out["required"] = list(value)
        elif key == "enum":
            out["enum"] = [{"yaml": json.dumps(v)} for v in value]
        elif key == "type":
            out["type"] = {"value": [value]}
        elif key == "items":
            out["items"] = {"schema": [_pb_schema(value)]}
        elif key == "additionalProperties":
            out["additional_properties"] = {"schema": _pb_schema(value)}
        elif key == "properties":
            out["properties"] = {"additional_properties": [{"name": k, "value": _pb_schema(v)}
                                                            for k, v in value.items()]}
        elif key.startswith("x-"):
            out.setdefault("vendor_extension", []).append(_named_any(key, value))
    return out


def _pb_parameter(param: Obj) -> Obj:
    if param["in"] == "body":
        return {"parameter": {"body_parameter": {k: (_pb_schema(v) if k == "schema" else v)
                                                 for k, v in param.items()}}}
    kind = "path_parameter_sub_schema" if param["in"] == "path" else "query_parameter_sub_schema"
    fields: Obj = {k: param[k] for k in ("required", "in", "description", "name", "type") if k in param}
    fields["unique_items"] = bool(param.get("uniqueItems"))
    return {"parameter": {"non_body_parameter": {kind: fields}}}


def _pb_operation(op: Obj) -> Obj:
    return {
        "tags": op["tags"], "operation_id": op["operationId"], "produces": op["produces"],
        "consumes": op["consumes"], "schemes": op["schemes"],
        "parameters": [_pb_parameter(p) for p in op["parameters"]],
        "responses": {"response_code": [
            {"name": code, "value": {"response": {"description": r["description"],
                                                  **({"schema": {"schema": _pb_schema(r["schema"])}}
                                                     if "schema" in r else {})}}}
            for code, r in op["responses"].items()]},
        "vendor_extension": [_named_any(k, v) for k, v in op.items() if k.startswith("x-")],
    }


def document_v2_protobuf(doc: Obj) -> bytes:
    """The Swagger document ``doc`` (from :func:`document_v2`) as gnostic's ``openapi.v2.Document``
    protobuf, what client-go's ``OpenAPISchema()`` reads."""
    from google.protobuf import json_format

    from minik8s.apiserver.protobuf import message_class

    paths = []
    for path, item in doc["paths"].items():
        value: Obj = {m: _pb_operation(op) for m, op in item.items() if m in ("get", "put", "post", "delete", "patch")}
        value["parameters"] = [_pb_parameter(p) for p in item.get("parameters", [])]
        paths.append({"name": path, "value": value})
    message = {
        "swagger": doc["swagger"], "info": doc["info"], "paths": {"path": paths},
        "definitions": {"additional_properties": [{"name": k, "value": _pb_schema(v)}
                                                  for k, v in doc["definitions"].items()]},
    }
    msg = json_format.ParseDict(message, message_class("openapi.v2.Document")())  # accepts proto field names
    return msg.SerializeToString()
