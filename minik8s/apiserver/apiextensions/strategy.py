"""Strategies of CustomResourceDefinitions and of the custom resources they define.

:class:`CRDStrategy` checks a CRD as kube-apiextensions-apiserver does
(``apiextensions/validation``): the name is ``<plural>.<group>``, names are DNS labels, exactly one
storage version, a structural schema for every version (checked by
:func:`~.structural.structural_errors`), printer-column and scale JSON paths, conversion
``None`` only (minik8s calls no conversion webhooks).  It defaults ``singular`` and ``listKind``
and puts the ``customresourcecleanup`` finalizer on every new CRD.

:class:`CustomResourceStrategy` serves one custom resource's objects: defaults, validation and
pruning by its schema (:mod:`.structural`), status kept apart when the status subresource is on.
"""

from __future__ import annotations

from typing import Any

from minik8s.api import kubejsonpath
from minik8s.api import validation as v
from minik8s.api.apiextensions import CLEANUP_FINALIZER
from minik8s.api.base import Obj
from minik8s.api.resourcetypes import ResourceType
from minik8s.apiserver.apiextensions import structural
from minik8s.apiserver.strategies.base import REQUIRED, Cause, Strategy, unsupported

SCOPES = ("Cluster", "Namespaced")
COLUMN_TYPES = ("boolean", "date", "integer", "number", "string")
COLUMN_FORMATS = ("int32", "int64", "float", "double", "byte", "date", "date-time", "password")


def _label_causes(value: Any, path: str, required: bool = True) -> list[Cause]:
    if not value:
        return [(path, None, REQUIRED)] if required else []
    if not isinstance(value, str):
        return [(path, value, "must be a string")]
    return [(path, value, msg) for msg in v.dns1035_label_errors(value)]


def _names_causes(names: Any, path: str) -> list[Cause]:
    if not isinstance(names, dict):
        return [(path, None, REQUIRED)]
    causes = _label_causes(names.get("plural"), f"{path}.plural")
    causes += _label_causes(names.get("singular"), f"{path}.singular", required=False)
    kind = names.get("kind")
    if not kind:
        causes.append((f"{path}.kind", None, REQUIRED))
    else:
        causes += [(f"{path}.kind", kind, msg) for msg in v.dns1035_label_errors(str(kind).lower())]
    list_kind = names.get("listKind")
    if list_kind:
        causes += [(f"{path}.listKind", list_kind, msg) for msg in v.dns1035_label_errors(str(list_kind).lower())]
        if list_kind == kind:
            causes.append((f"{path}.listKind", list_kind, "kind and listKind may not be the same"))
    for i, short in enumerate(names.get("shortNames") or []):
        causes += _label_causes(short, f"{path}.shortNames[{i}]")
    for i, cat in enumerate(names.get("categories") or []):
        causes += _label_causes(cat, f"{path}.categories[{i}]")
    return causes


def _column_causes(col: Any, path: str) -> list[Cause]:
    if not isinstance(col, dict):
        return [(path, None, "must be an object")]
    causes: list[Cause] = []
    if not col.get("name"):
        causes.append((f"{path}.name", None, REQUIRED))
    if not col.get("type"):
        causes.append((f"{path}.type", None, REQUIRED))
    elif col["type"] not in COLUMN_TYPES:
        causes.append((f"{path}.type", None, unsupported(col["type"], COLUMN_TYPES)))
    if col.get("format") and col["format"] not in COLUMN_FORMATS:
        causes.append((f"{path}.format", None, unsupported(col["format"], COLUMN_FORMATS)))
    if not col.get("jsonPath"):
        causes.append((f"{path}.jsonPath", None, REQUIRED))
    else:
        try:
            kubejsonpath.parse(str(col["jsonPath"]))
        except ValueError:
            causes.append((f"{path}.jsonPath", col["jsonPath"], "must be a simple json path starting with ."))
    if col.get("priority") is not None and (not isinstance(col["priority"], int) or col["priority"] < 0):
        causes.append((f"{path}.priority", col["priority"], "must be greater than or equal to 0"))
    return causes


def _scale_causes(scale: Any, path: str) -> list[Cause]:
    if not isinstance(scale, dict):
        return []
    causes: list[Cause] = []
    for fld, under in (("specReplicasPath", "spec"), ("statusReplicasPath", "status"),
                       ("labelSelectorPath", None)):
        value = scale.get(fld)
        if not value:
            if fld != "labelSelectorPath":
                causes.append((f"{path}.{fld}", None, REQUIRED))
            continue
        fields = kubejsonpath.simple_fields(str(value))
        if fields is None:
            causes.append((f"{path}.{fld}", value, "should be a json path of fields (.spec.replicas)"))
        elif under and (len(fields) < 2 or fields[0] != under):
            causes.append((f"{path}.{fld}", value, f"should be a json path under .{under}"))
        elif under is None and fields[0] not in ("spec", "status"):
            causes.append((f"{path}.{fld}", value, "should be a json path under either .spec or .status"))
    return causes


def validate_crd(obj: Obj, old: Obj | None) -> list[Cause]:
    """Causes why ``obj`` (a CustomResourceDefinition; ``old`` on update) is invalid."""
    spec = obj.get("spec") or {}
    meta = obj.get("metadata") or {}
    causes: list[Cause] = []
    group = spec.get("group")
    names = spec.get("names") or {}
    if not group:
        causes.append(("spec.group", None, REQUIRED))
    else:
        causes += [("spec.group", group, msg) for msg in v.dns1123_subdomain_errors(str(group))]
        if "." not in str(group):
            causes.append(("spec.group", group, "should be a domain with at least one dot"))
    if group and names.get("plural") and meta.get("name") != f"{names['plural']}.{group}":
        causes.append(("metadata.name", meta.get("name"), 'must be spec.names.plural+"."+spec.group'))
    causes += _names_causes(spec.get("names"), "spec.names")
    scope = spec.get("scope")
    if not scope:
        causes.append(("spec.scope", None, REQUIRED))
    elif scope not in SCOPES:
        causes.append(("spec.scope", None, unsupported(scope, SCOPES)))
    conversion = spec.get("conversion") or {}
    strategy = conversion.get("strategy") or "None"
    if strategy != "None":
        causes.append(("spec.conversion.strategy", None, unsupported(strategy, ("None",))
                       + " (minik8s does not call conversion webhooks: every version must hold the same "
                         "fields, only apiVersion changes)"))
    versions = spec.get("versions")
    if not isinstance(versions, list) or not versions:
        causes.append(("spec.versions", None, "Required value: must have exactly one version marked as storage "
                                              "version"))
        versions = []
    seen: set[str] = set()
    storage = 0
    for i, ver in enumerate(versions):
        path = f"spec.versions[{i}]"
        if not isinstance(ver, dict):
            causes.append((path, None, "must be an object"))
            continue
        causes += _label_causes(ver.get("name"), f"{path}.name")
        if ver.get("name") in seen:
            causes.append((f"{path}.name", ver.get("name"), "Duplicate value"))
        seen.add(str(ver.get("name")))
        storage += 1 if ver.get("storage") else 0
        schema = ((ver.get("schema") or {}).get("openAPIV3Schema"))
        if schema is None:
            causes.append((f"{path}.schema.openAPIV3Schema", None, "Required value: schemas are required"))
        else:
            causes += structural.structural_errors(schema, f"{path}.schema.openAPIV3Schema")
        subs = ver.get("subresources") or {}
        causes += _scale_causes(subs.get("scale"), f"{path}.subresources.scale")
        for j, col in enumerate(ver.get("additionalPrinterColumns") or []):
            causes += _column_causes(col, f"{path}.additionalPrinterColumns[{j}]")
    if versions and storage != 1:
        causes.append(("spec.versions", None, "must have exactly one version marked as storage version"))
    if versions and not any(isinstance(ver, dict) and ver.get("served") for ver in versions):
        causes.append(("spec.versions", None, "must have at least one version marked as served"))
    if old is not None:
        old_spec = old.get("spec") or {}
        if group != old_spec.get("group"):
            causes.append(("spec.group", group, "field is immutable"))
        stored = ((old.get("status") or {}).get("storedVersions")) or []
        for name in stored:
            if name not in seen:
                causes.append(("status.storedVersions", stored,
                               f"must have the version {name} in spec.versions (it is stored)"))
    return causes


class CRDStrategy(Strategy):
    """CustomResourceDefinition: cluster-scoped, status by the apiserver's CRD controller."""

    has_status = True
    namespace_scoped = False

    def prepare_for_create(self, obj: Obj) -> None:
        obj.pop("status", None)
        meta = obj["metadata"]
        finalizers = list(meta.get("finalizers") or [])
        if CLEANUP_FINALIZER not in finalizers:
            meta["finalizers"] = finalizers + [CLEANUP_FINALIZER]

    def default(self, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        names = spec.get("names")
        if isinstance(names, dict) and names.get("kind"):
            names.setdefault("singular", str(names["kind"]).lower())
            names.setdefault("listKind", f"{names['kind']}List")
        spec.setdefault("conversion", {"strategy": "None"})
        for ver in spec.get("versions") or []:
            if isinstance(ver, dict):
                ver.setdefault("served", False)
                ver.setdefault("storage", False)
        status = obj.setdefault("status", {})
        status.setdefault("acceptedNames", {"plural": "", "kind": ""})
        status.setdefault("storedVersions", [])

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        return self.validate_metadata(obj) + validate_crd(obj, old)


class CustomResourceStrategy(Strategy):
    """One custom resource (the row of a served version, ``rt.custom`` set)."""

    def __init__(self, rt: ResourceType) -> None:
        assert rt.custom is not None
        self.rt = rt
        self.schema = rt.custom.schema
        self.has_status = "status" in rt.subresources
        self.namespace_scoped = rt.namespaced

    def prepare_for_create(self, obj: Obj) -> None:
        if self.has_status:
            obj.pop("status", None)

    def default(self, obj: Obj) -> None:
        if self.schema:
            structural.default(self.schema, obj)

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        if self.schema:
            causes += structural.validate(self.schema, obj, old)
        return causes

    def generation_changed(self, new: Obj, old: Obj) -> bool:
        """Anything but metadata (and status, with the status subresource) bumps metadata.generation."""
        skip = ("metadata", "status") if self.has_status else ("metadata",)
        return {k: val for k, val in new.items() if k not in skip} != \
            {k: val for k, val in old.items() if k not in skip}

    def prune(self, obj: Obj) -> list[str]:
        """Remove the fields the schema does not know; their paths."""
        return structural.prune(self.schema, obj) if self.schema else []
