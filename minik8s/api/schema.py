"""OpenAPI schemas of the API kinds, the unknown-field check of server-side field validation
against them, and the fields a kind's model does not read but Kubernetes defines.

Every kind Kubernetes defines is served with **Kubernetes' own definition**: Kubernetes 1.32's
OpenAPI v2 definitions, as published (``k8s-openapi.json``, written by
``scripts/k8s-openapi.py`` from a pinned PyPI package; :func:`kubernetes_definitions`), found
by the kind's ``x-kubernetes-group-version-kind``, with every definition it refers to.  So every
field Kubernetes has is known (accepted under ``fieldValidation=Strict``, stored and returned,
shown by ``kubectl explain``), with Kubernetes' descriptions, ``required`` lists and list, map and
patch metadata, whether or not minik8s' validation model reads it.

minik8s' own kinds (``minik8s.io``: Function, GPUJob, ...), the versions it serves by
conversion that Kubernetes 1.32 no longer has, and the metrics types are generated from their
pydantic models: each model's fields, aliases, types and docstrings become a definition named
as Kubernetes names them (``io.minik8s.v1.DNS``), and a model of a Kubernetes type they embed
(``PodTemplateSpec``, ``ObjectMeta``) is served as Kubernetes' definition of it when that
definition has every field the model has.  Lists that strategic merge patch merges item by item
(:data:`minik8s.api.patch.MERGE_KEYS`) carry ``x-kubernetes-patch-merge-key``,
``x-kubernetes-patch-strategy``, ``x-kubernetes-list-type: map`` and
``x-kubernetes-list-map-keys``.  Field types map as: ``str`` → string,
``int`` → integer, ``float`` → number, ``bool`` → boolean, ``int | str`` → ``IntOrString``,
``list[X]`` → array, ``dict[str, X]`` → object with ``additionalProperties``, a model → ``$ref``;
``Any`` and ``dict[str, Any]`` are free-form (``x-kubernetes-preserve-unknown-fields``), as the
models keep whatever is there.
Definitions use OpenAPI v2 references (``#/definitions/NAME``); the v3 documents rewrite them.
"""

from __future__ import annotations

import copy
import types
import typing
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel

from minik8s.api.base import Obj
from minik8s.api.k8sopenapi import REF_PREFIX, PatchSchema, kubernetes_definitions, kubernetes_kinds
from minik8s.api.meta import ObjectMeta
from minik8s.api.patch import MERGE_KEYS
from minik8s.api.resourcetypes import ResourceType

INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
META_PACKAGE = "io.k8s.apimachinery.pkg.apis.meta.v1"
#: Models of these modules keep Kubernetes' package whichever kind reaches them first.
MODULE_PACKAGES = {
    "minik8s.api.meta": META_PACKAGE,
    "minik8s.api.core": "io.k8s.api.core.v1",
    "minik8s.api.metrics": "io.k8s.metrics.pkg.apis.metrics.v1beta1",
}
#: Patch strategies Kubernetes gives fields beyond the merge-keyed lists: (model, field) → strategy.
PATCH_STRATEGIES = {("PodSpec", "volumes"): "merge,retainKeys", ("DeploymentSpec", "strategy"): "retainKeys"}
#: Extra list-map keys beside the merge key (ports are told apart by protocol too).
EXTRA_MAP_KEYS = {"ports": ["protocol"]}

KIND_FIELD_DOCS = {
    "apiVersion": "APIVersion defines the versioned schema of this representation of an object. Servers should "
                  "convert recognized schemas to the latest internal value, and may reject unrecognized values. "
                  "More info: https://git.k8s.io/community/contributors/devel/sig-architecture/"
                  "api-conventions.md#resources",
    "kind": "Kind is a string value representing the REST resource this object represents. Servers may infer "
            "this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: "
            "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds",
    "metadata": "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/"
                "sig-architecture/api-conventions.md#metadata",
    "spec": "Specification of the desired behavior of the object.",
    "status": "Most recently observed status of the object. Read-only.",
}


def group_package(group: str, version: str) -> str:
    """The definition-name prefix of a group/version: ``io.k8s.api.core.v1``,
    ``io.k8s.api.apps.v1``, ``io.k8s.api.networking.v1``, ``io.minik8s.v1``."""
    if not group:
        return f"io.k8s.api.core.{version}"
    if "." not in group:
        return f"io.k8s.api.{group}.{version}"
    if group.endswith(".k8s.io"):
        return f"io.k8s.api.{group[:-len('.k8s.io')]}.{version}"
    return ".".join(reversed(group.split("."))) + f".{version}"


def gvk(rt: ResourceType, kind: str | None = None) -> Obj:
    """The ``x-kubernetes-group-version-kind`` entry of ``rt`` (or of its ``kind`` variant, e.g. a List)."""
    return {"group": rt.group, "kind": kind or rt.kind, "version": rt.version}


#: The zero value a missing required field gets, by its schema's ``type`` (Go's zero values).
ZERO_VALUES: dict[str, Any] = {"string": "", "integer": 0, "number": 0, "boolean": False, "array": [], "object": {}}


def _description(cls: type) -> str:
    doc = cls.__dict__.get("__doc__") or ""
    return " ".join(doc.split())


class Schemas:
    """The OpenAPI definitions of ``types`` (and every model they reach).

    ``definitions``: name → schema; ``kind_names``: (group, version, kind) → definition name.
    """

    def __init__(self, types_: Iterable[ResourceType]) -> None:
        self.definitions: dict[str, Obj] = {}
        self.kind_names: dict[tuple[str, str, str], str] = {}
        self._names: dict[type, str] = {}
        self._package = ""
        self._adopt(INT_OR_STRING)
        for rt in types_:
            self._add_kind(rt)

    def _adopt(self, name: str) -> bool:
        """Serve Kubernetes' definition ``name`` and every definition it refers to; False when
        Kubernetes has no definition of that name."""
        if name not in kubernetes_definitions():
            return False
        todo = [name]
        while todo:
            current = todo.pop()
            schema = kubernetes_definitions().get(current)
            if current in self.definitions or schema is None:
                continue
            self.definitions[current] = copy.deepcopy(schema)
            todo += [ref[len(REF_PREFIX):] for ref in _refs(schema)]
        return True

    # ------------------------------------------------------------ generation
    def _custom_kind(self, rt: ResourceType) -> str:
        """The definition of a custom resource: its CRD version's schema, with Kubernetes' apiVersion,
        kind and ObjectMeta (``com.example.stable.v1.CronTab``, as kube-apiserver names it)."""
        assert rt.custom is not None
        name = f"{group_package(rt.group, rt.version)}.{rt.kind}"
        schema = copy.deepcopy(rt.custom.schema) or {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        props = schema.setdefault("properties", {})
        for field in ("apiVersion", "kind"):
            props[field] = {"type": "string", "description": KIND_FIELD_DOCS[field]}
        props["metadata"] = {"$ref": REF_PREFIX + self._ref_name(ObjectMeta),
                             "description": KIND_FIELD_DOCS["metadata"]}
        self.definitions[name] = schema
        return name

    def _add_kind(self, rt: ResourceType) -> None:
        self._package = group_package(rt.group, rt.version)
        if rt.custom is not None:
            name = self._custom_kind(rt)
        elif (known := kubernetes_kinds().get((rt.group, rt.version, rt.kind))) is not None:
            self._adopt(name := known)
        else:
            assert rt.model is not None, f"{rt.kind}: the apiserver's rows carry their model"
            name = self._ref_name(rt.model)
        schema = self.definitions[name]
        kinds = schema.setdefault("x-kubernetes-group-version-kind", [])
        if gvk(rt) not in kinds:
            kinds.append(gvk(rt))
        for field, doc in KIND_FIELD_DOCS.items():
            prop = schema.get("properties", {}).get(field)
            if prop is not None and "description" not in prop:
                prop["description"] = doc
        self.kind_names[(rt.group, rt.version, rt.kind)] = name
        if "list" in rt.verbs and not self._adopt(list_name := f"{name}List"):
            self.definitions.setdefault(list_name, {
                "description": f"{rt.kind}List is a list of {rt.kind} objects.",
                "type": "object", "required": ["items"],
                "properties": {
                    "apiVersion": {"type": "string", "description": KIND_FIELD_DOCS["apiVersion"]},
                    "kind": {"type": "string", "description": KIND_FIELD_DOCS["kind"]},
                    "metadata": {"$ref": f"{REF_PREFIX}{META_PACKAGE}.ListMeta",
                                 "description": "Standard list metadata."},
                    "items": {"type": "array", "items": {"$ref": REF_PREFIX + name},
                              "description": f"List of {rt.kind} objects."},
                },
                "x-kubernetes-group-version-kind": [gvk(rt, rt.list_kind)],
            })
            self._ensure_list_meta()

    def _ensure_list_meta(self) -> None:
        self._adopt(f"{META_PACKAGE}.ListMeta")

    def _ref_name(self, cls: type[BaseModel]) -> str:
        """The definition name of ``cls``: Kubernetes' definition of the type when it has every
        field of the model, else one generated from the model the first time."""
        if cls in self._names:
            return self._names[cls]
        package = MODULE_PACKAGES.get(cls.__module__, self._package)
        name = f"{package}.{cls.__name__}"
        known = kubernetes_definitions().get(name)
        if known is not None:
            fields = {info.alias or field_name for field_name, info in cls.model_fields.items()}
            if fields <= set(known.get("properties") or {}):
                self._adopt(name)
                self._names[cls] = name
                return name
            name = f"{self._package}.{cls.__name__}"  # not Kubernetes' type: the kind's own name
        if name in self.definitions:  # two models of one name: tell them apart by module
            name = f"{package}.{cls.__module__.rsplit('.', 1)[-1]}.{cls.__name__}"
        self._names[cls] = name
        self.definitions[name] = {}  # reserved before recursing (models may refer to themselves)
        self.definitions[name] = self._model_schema(cls)
        return name

    def _model_schema(self, cls: type[BaseModel]) -> Obj:
        properties: Obj = {}
        required: list[str] = []
        for field_name, info in cls.model_fields.items():
            alias = info.alias or field_name
            prop = self._type_schema(info.annotation)
            if info.description:
                prop["description"] = " ".join(info.description.split())
            self._patch_extensions(cls, alias, info.annotation, prop)
            properties[alias] = prop
            if info.is_required():
                required.append(alias)
        schema: Obj = {"type": "object", "properties": properties}
        description = _description(cls)
        if description:
            schema["description"] = description
        if required:
            schema["required"] = required
        return schema

    def _type_schema(self, annotation: Any) -> Obj:
        origin, args = typing.get_origin(annotation), typing.get_args(annotation)
        if origin in (typing.Union, types.UnionType):
            present = [a for a in args if a is not type(None)]
            if set(present) == {int, str}:
                return {"$ref": REF_PREFIX + INT_OR_STRING}
            if len(present) == 1:
                return self._type_schema(present[0])
            return {"x-kubernetes-preserve-unknown-fields": True}
        if origin is list:
            return {"type": "array", "items": self._type_schema(args[0] if args else Any)}
        if origin is dict:
            value = args[1] if len(args) == 2 else Any
            if value is Any or value is object:
                return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
            return {"type": "object", "additionalProperties": self._type_schema(value)}
        if origin is typing.Literal:
            return {"type": "string", "enum": [str(a) for a in args]}
        if annotation is str:
            return {"type": "string"}
        if annotation is bool:
            return {"type": "boolean"}
        if annotation is int:
            return {"type": "integer", "format": "int64"}
        if annotation is float:
            return {"type": "number", "format": "double"}
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            return {"$ref": REF_PREFIX + self._ref_name(annotation)}
        return {"x-kubernetes-preserve-unknown-fields": True}

    def _patch_extensions(self, cls: type, alias: str, annotation: Any, prop: Obj) -> None:
        """Kubernetes' patch and list-map metadata of field ``alias`` of ``cls`` (from MERGE_KEYS)."""
        strategy = PATCH_STRATEGIES.get((cls.__name__, alias))
        items = prop.get("items") or {}
        ref = items.get("$ref", "")
        if alias in MERGE_KEYS and prop.get("type") == "array" and ref.startswith(REF_PREFIX):
            item_props = self.definitions.get(ref[len(REF_PREFIX):], {}).get("properties", {})
            key = MERGE_KEYS[alias]
            if alias == "ports" and "containerPort" not in item_props:
                key = "port"  # Service ports; Container ports merge by containerPort
            if key in item_props:
                prop["x-kubernetes-patch-merge-key"] = key
                prop["x-kubernetes-patch-strategy"] = strategy or "merge"
                prop["x-kubernetes-list-type"] = "map"
                prop["x-kubernetes-list-map-keys"] = [key] + [k for k in EXTRA_MAP_KEYS.get(alias, [])
                                                              if k in item_props]
                return
        if strategy and "merge" not in strategy:
            prop["x-kubernetes-patch-strategy"] = strategy

    def kind_definition(self, group: str, version: str, kind: str) -> str | None:
        """The definition name of a kind: a served one's, else Kubernetes' (adopted into
        :attr:`definitions`: a kind only a subresource takes, like ``autoscaling/v1`` Scale or
        ``policy/v1`` Eviction); None when neither has it."""
        name = self.kind_names.get((group, version, kind))
        if name is None and (name := kubernetes_kinds().get((group, version, kind))) is not None:
            self._adopt(name)
        return name

    # ------------------------------------------------------------ use
    def closure(self, names: Iterable[str]) -> dict[str, Obj]:
        """The definitions of ``names`` and of everything they refer to."""
        out: dict[str, Obj] = {}
        todo = list(names)
        while todo:
            name = todo.pop()
            if name in out or name not in self.definitions:
                continue
            out[name] = self.definitions[name]
            todo += [ref[len(REF_PREFIX):] for ref in _refs(out[name])]
        return out

    def patch_schema(self, rt: ResourceType) -> PatchSchema | None:
        """The schema strategic merge patch follows for ``rt``'s objects: Kubernetes' own, for the
        kinds Kubernetes defines (the one kubectl's client-side patches follow too,
        :meth:`PatchSchema.of_kind`); None for the others (minik8s' own kinds, custom resources:
        :data:`~minik8s.api.patch.MERGE_KEYS` decides on both sides)."""
        name = self.kind_names.get((rt.group, rt.version, rt.kind))
        if name is None or rt.custom is not None or (rt.group, rt.version, rt.kind) not in kubernetes_kinds():
            return None
        return PatchSchema(self.definitions, {"$ref": REF_PREFIX + name})

    def unknown_fields(self, rt: ResourceType, obj: Any) -> list[str]:
        """Paths of the fields of ``obj`` (a wire-form ``rt``) its schema does not know, in
        Kubernetes' notation (``spec.containers[0].foo``), as strict decoding reports them."""
        name = self.kind_names.get((rt.group, rt.version, rt.kind))
        out: list[str] = []
        if name is not None:
            self._walk({"$ref": REF_PREFIX + name}, obj, "", out)
        return out

    def keep_unmodelled(self, rt: ResourceType, body: Obj, out: Obj) -> None:
        """Give ``out`` (``body`` as ``rt``'s validation model normalised it) the fields of ``body``
        that the served schema knows and the model does not read, so that every field Kubernetes
        has is stored and returned: each value is checked against the schema (type, and the same
        for what it holds) and copied without the fields the schema does not know (which field
        validation reported).  ``metadata`` is left to the model (it has every field).

        Raises :class:`FieldTypeError` (kube-apiserver's JSON decoding error) for a value of the
        wrong type."""
        name = self.kind_names.get((rt.group, rt.version, rt.kind))
        if name is None or rt.custom is not None:
            return
        rest = {key: value for key, value in body.items() if key != "metadata"}
        self._graft({"$ref": REF_PREFIX + name}, rest, out, "", name)

    def _graft(self, schema: Obj, src: Obj, dst: Obj, path: str, struct: str) -> None:
        struct = _struct_name(schema, struct)
        schema = self._resolve(schema)
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        for key, value in src.items():
            sub = props.get(key) if key in props else extra
            if value is None or not isinstance(sub, dict):
                continue  # null is Go's zero value; an unknown field was reported and is not kept
            where = f"{path}.{key}" if path else key
            if key not in dst:
                dst[key] = self._known(sub, value, where, struct)
                continue
            kept, item = dst[key], self._resolve(sub).get("items")
            if isinstance(value, dict) and isinstance(kept, dict):
                self._graft(sub, value, kept, where, struct)
            elif isinstance(value, list) and isinstance(kept, list) and len(value) == len(kept) \
                    and isinstance(item, dict):
                for old, new in zip(value, kept, strict=True):
                    if isinstance(old, dict) and isinstance(new, dict):
                        self._graft(item, old, new, where, struct)

    def _known(self, schema: Obj, value: Any, path: str, struct: str) -> Any:
        """``value`` checked against ``schema`` and copied with only the fields it knows."""
        struct = _struct_name(schema, struct)
        resolved = self._resolve(schema)
        if resolved.get("x-kubernetes-preserve-unknown-fields") or not (resolved.get("type") or
                                                                      resolved.get("properties")):
            return copy.deepcopy(value)  # free-form (RawExtension, JSON)
        kind = resolved.get("type", "object")
        ok = {"string": isinstance(value, str), "boolean": isinstance(value, bool),
              "integer": isinstance(value, int) and not isinstance(value, bool),
              "number": isinstance(value, int | float) and not isinstance(value, bool),
              "array": isinstance(value, list), "object": isinstance(value, dict)}.get(kind, True)
        if resolved.get("format") == "int-or-string":
            ok = isinstance(value, str) or isinstance(value, int) and not isinstance(value, bool)
        if not ok:
            raise FieldTypeError(value, struct, path, go_type(resolved, schema))
        if isinstance(value, list):
            items = resolved.get("items") or {}
            return [self._known(items, item, path, struct) for item in value if item is not None]
        if isinstance(value, dict):
            if not resolved.get("properties") and not isinstance(resolved.get("additionalProperties"), dict):
                return copy.deepcopy(value)  # an object Kubernetes keeps as it comes (RawExtension)
            out: Obj = {}
            self._graft(schema, value, out, path, struct)
            return out
        return value

    def fill_required(self, rt: ResourceType, obj: Obj) -> None:
        """Give every field the schema of ``rt`` marks required, and ``obj`` lacks, its zero value
        (``""``, ``0``, ``false``, ``[]``, ``{}``), at every depth, in place — as Kubernetes
        serialises its fields without ``omitempty`` (``status.nodeInfo.kubeProxyVersion: ""``).

        Optional parts stay absent; ``null`` counts as missing; free-form parts are left alone."""
        name = self.kind_names.get((rt.group, rt.version, rt.kind))
        if name is not None:
            self._fill({"$ref": REF_PREFIX + name}, obj)

    def _resolve(self, schema: Obj) -> Obj:
        ref = schema.get("$ref")
        return self.definitions.get(ref[len(REF_PREFIX):], {}) if ref else schema

    def _fill(self, schema: Obj, value: Any) -> None:
        schema = self._resolve(schema)
        if schema.get("x-kubernetes-preserve-unknown-fields"):
            return
        if isinstance(value, dict):
            props = schema.get("properties") or {}
            for key in schema.get("required") or []:
                prop = self._resolve(props.get(key) or {})
                zero = 0 if prop.get("format") == "int-or-string" else ZERO_VALUES.get(prop.get("type", ""))
                if value.get(key) is None and zero is not None:
                    value[key] = copy.copy(zero)
            extra = schema.get("additionalProperties")
            for key, item in value.items():
                sub = props.get(key) if key in props else extra
                if isinstance(sub, dict) and isinstance(item, dict | list):
                    self._fill(sub, item)
        elif isinstance(value, list) and isinstance(schema.get("items"), dict):
            for item in value:
                self._fill(schema["items"], item)

    def _walk(self, schema: Obj, value: Any, path: str, out: list[str]) -> None:
        ref = schema.get("$ref")
        if ref:
            schema = self.definitions.get(ref[len(REF_PREFIX):], {})
        if schema.get("x-kubernetes-preserve-unknown-fields"):
            return
        if isinstance(value, dict):
            props = schema.get("properties")
            extra = schema.get("additionalProperties")
            for key, item in value.items():
                where = f"{path}.{key}" if path else str(key)
                if props is not None and key in props:
                    self._walk(props[key], item, where, out)
                elif isinstance(extra, dict):
                    self._walk(extra, item, where, out)
                elif props is not None:
                    out.append(where)
        elif isinstance(value, list) and isinstance(schema.get("items"), dict):
            for index, item in enumerate(value):
                self._walk(schema["items"], item, f"{path}[{index}]", out)


class FieldTypeError(ValueError):
    """A value of the wrong type, in the words of Go's JSON decoder as kube-apiserver answers it:
    ``json: cannot unmarshal string into Go struct field PodSpec.spec.hostPID of type bool``."""

    def __init__(self, value: Any, struct: str, path: str, type_: str) -> None:
        got = {bool: "bool", str: "string", list: "array", dict: "object"}.get(type(value), "number")
        super().__init__(f"json: cannot unmarshal {got} into Go struct field {struct}.{path} of type {type_}")


def _struct_name(schema: Obj, struct: str) -> str:
    """The Go type a ``$ref`` names (``PodSpec``), else ``struct`` (the type around the field)."""
    ref = schema.get("$ref")
    return ref.rsplit(".", 1)[-1] if isinstance(ref, str) else struct


def go_type(schema: Obj, reference: Obj | None = None) -> str:
    """The Go type of a field as its schema describes it (``int32``, ``[]string``, ``v1.PodOS``)."""
    ref = (reference or {}).get("$ref") or schema.get("$ref")
    if isinstance(ref, str):
        package, _, name = ref[len(REF_PREFIX):].rpartition(".")
        return f"{package.rsplit('.', 1)[-1]}.{name}"
    kind, fmt = schema.get("type"), schema.get("format")
    if kind == "integer":
        return str(fmt or "int64")
    if kind == "number":
        return "float64"
    if kind == "boolean":
        return "bool"
    if kind == "array":
        return "[]" + go_type(schema.get("items") or {})
    if kind == "object":
        extra = schema.get("additionalProperties")
        return "map[string]" + go_type(extra) if isinstance(extra, dict) else "map[string]interface {}"
    return "string"


def _refs(schema: Any) -> list[str]:
    if isinstance(schema, dict):
        found = [schema["$ref"]] if isinstance(schema.get("$ref"), str) else []
        for value in schema.values():
            found += _refs(value)
        return found
    if isinstance(schema, list):
        return [r for item in schema for r in _refs(item)]
    return []
