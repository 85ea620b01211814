"""``kubectl explain -o plaintext-openapiv2``: kubectl's older explainer, over the OpenAPI v2
(swagger) document.

The document's definitions are read as kubectl reads them: a ``$ref`` is a reference (its own
description kept), a schema with ``properties`` an object kind, ``type: object`` without them a
map (of anything when ``additionalProperties`` is not a schema), ``type: array`` an array of its
one ``items`` schema, string/number/integer/boolean a primitive, and a schema with neither type
nor properties arbitrary.  The layout, derived from what kubectl prints::

    KIND:     Deployment
    VERSION:  apps/v1

    RESOURCE: strategy <Object>          (FIELD:    name <string> for a primitive)

    DESCRIPTION:
         <each description met on the way (field, array, map, reference, definition), a blank
          line between them, reflowed to 75 columns>

    FIELDS:
       <name>\t<type> -required-
         <description, reflowed to 75 columns>

``--recursive`` lists the fields one a line, three columns further in a level, without the
required marks; a reference already being expanded on the way down is not expanded again.
A field path stops at a primitive, whatever follows it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from minik8s.kubectl.explain.mapping import go_quote
from minik8s.kubectl.explain.wrap import reflow

WRAP = 80


class ExplainError(Exception):
    """A failure kubectl reports after ``error: `` (``field "x" does not exist``)."""


class NotFound(Exception):
    """No definition has the group/version/kind."""


@dataclass
class Model:
    """One parsed schema: ``form`` is kind, map, array, primitive, reference or arbitrary."""

    form: str
    description: str = ""
    fields: dict[str, Model] = field(default_factory=dict)
    required: list[str] = field(default_factory=list)
    sub: Model | None = None
    type: str = ""
    reference: str = ""


class Definitions:
    """The parsed definitions of an OpenAPI v2 document."""

    def __init__(self, document: dict[str, Any]) -> None:
        raw = document.get("definitions") or {}
        self.raw: dict[str, Any] = raw if isinstance(raw, dict) else {}
        self.models: dict[str, Model] = {}
        for name in self.raw:
            self.models[name] = self.parse(self.raw[name], name)

    def parse(self, schema: Any, where: str) -> Model:
        if not isinstance(schema, dict):
            raise ExplainError(f"SchemaError({where}): not a schema")
        description = str(schema.get("description") or "")
        types = schema.get("type")
        types = [types] if isinstance(types, str) else list(types or [])
        if schema.get("$ref"):
            ref = str(schema["$ref"])
            if schema.get("properties"):
                raise ExplainError(f"SchemaError({where}): unallowed embedded type definition")
            if types:
                raise ExplainError(f"SchemaError({where}): definition reference can't have a type")
            if not ref.startswith("#/definitions/"):
                raise ExplainError(f"SchemaError({where}): unallowed reference to non-definition {go_quote(ref)}")
            name = ref.removeprefix("#/definitions/")
            if name not in self.raw:
                raise ExplainError(f"SchemaError({where}): unknown model in reference: {go_quote(name)}")
            return Model("reference", description, reference=name)
        if len(types) > 1:
            raise ExplainError(f"SchemaError({where}): definitions with multiple types aren't supported")
        kind = types[0] if types else ""
        if (not kind or kind == "object") and "properties" in schema:
            properties = schema.get("properties") or {}
            fields = {name: self.parse(sub, f"{where}.{name}") for name, sub in properties.items()}
            return Model("kind", description, fields=fields, required=[str(r) for r in schema.get("required") or []])
        if not kind:
            return Model("arbitrary", description)
        if kind == "object":
            more = schema.get("additionalProperties")
            sub = self.parse(more, where) if isinstance(more, dict) else Model("arbitrary", description)
            return Model("map", description, sub=sub)
        if kind == "array":
            items = schema.get("items")
            items = [items] if isinstance(items, dict) else list(items or [])
            if len(items) != 1:
                raise ExplainError(f"SchemaError({where}): array should have exactly one sub-item")
            return Model("array", description, sub=self.parse(items[0], where))
        if kind not in ("string", "number", "integer", "boolean"):
            raise ExplainError(f"SchemaError({where}): Unknown primitive type: {go_quote(kind)}")
        return Model("primitive", description, type=kind)

    def lookup(self, group: str, version: str, kind: str) -> Model | None:
        """The definition whose ``x-kubernetes-group-version-kind`` lists the group/version/kind
        (the last such by name)."""
        found = None
        for name in sorted(self.raw):
            for gvk in self.raw[name].get("x-kubernetes-group-version-kind") or [] if isinstance(
                    self.raw[name], dict) else []:
                if isinstance(gvk, dict) and (gvk.get("group") or "", gvk.get("version") or "",
                                              gvk.get("kind") or "") == (group, version, kind) and kind:
                    found = self.models[name]
        return found

    def target(self, model: Model) -> Model:
        assert model.sub is not None or model.form == "reference"
        return self.models[model.reference] if model.form == "reference" else model.sub  # type: ignore[return-value]

    def type_name(self, model: Model) -> str:
        if model.form in ("array", "map"):
            return ("[]" if model.form == "array" else "map[string]") + self.type_name(self.target(model))
        if model.form == "reference":
            return self.type_name(self.target(model))
        return {"kind": "Object", "primitive": model.type}.get(model.form, "")

    def follow(self, model: Model, path: list[str]) -> Model:
        """The schema at ``path`` under ``model`` (a primitive ends the walk)."""
        while True:
            if model.form in ("primitive", "arbitrary") or not path and model.form != "kind":
                return model
            if model.form == "kind":
                if not path:
                    return model
                if path[0] not in model.fields:
                    raise ExplainError(f"field {go_quote(path[0])} does not exist")
                model, path = model.fields[path[0]], path[1:]
                continue
            model = self.target(model)


class _Writer:
    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, indent: int, text: str) -> None:
        self.parts.append("\n" if text == "" else " " * indent + text + "\n")

    def wrapped(self, indent: int, text: str) -> None:
        for line in reflow(text, WRAP - indent):
            self.write(indent, line)


def explain(document: dict[str, Any], group: str, version: str, kind: str, field_path: list[str],
            recursive: bool) -> str:
    """What ``kubectl explain -o plaintext-openapiv2`` prints for the kind and field path.

    Raises NotFound when no definition has the kind, ExplainError for a field that does not
    exist or a document kubectl cannot read.
    """
    definitions = Definitions(document)
    model = definitions.lookup(group, version, kind)
    if model is None:
        raise NotFound(kind)
    name = field_path[-1] if field_path else ""
    model = definitions.follow(model, field_path)
    out = _Writer()
    descriptions: list[str] = []
    shown_type = ""
    while model.form in ("array", "map", "reference"):
        descriptions.append(model.description)
        if not shown_type and model.form != "reference":
            shown_type = definitions.type_name(model)
        model = definitions.target(model)
    out.write(0, f"KIND:     {kind}")
    out.write(0, f"VERSION:  {f'{group}/{version}' if group else version}\n")
    if model.form == "kind":
        if name:
            out.write(0, f"RESOURCE: {name} <{shown_type or definitions.type_name(model)}>\n")
    elif model.form == "primitive":
        out.write(0, f"FIELD:    {name} <{shown_type or definitions.type_name(model)}>\n")
    out.write(0, "DESCRIPTION:")
    empty = True
    for i, text in enumerate([*descriptions, model.description]):
        if not text:
            continue
        empty = False
        if i:
            out.write(0, "")
        out.wrapped(5, text)
    if empty:
        out.wrapped(5, "<empty>")
    if model.form == "kind":
        out.write(0, "\nFIELDS:")
        if recursive:
            _recursive_fields(definitions, model, 3, out, set())
        else:
            _fields(definitions, model, out)
    return "".join(out.parts)


def _fields(definitions: Definitions, model: Model, out: _Writer) -> None:
    while model.form in ("array", "map", "reference"):
        model = definitions.target(model)
    if model.form != "kind":
        return
    for key in sorted(model.fields):
        sub = model.fields[key]
        required = " -required-" if key in model.required else ""
        out.write(3, f"{key}\t<{definitions.type_name(sub)}>{required}")
        out.wrapped(5, sub.description)
        out.write(3, "")


def _recursive_fields(definitions: Definitions, model: Model, indent: int, out: _Writer, seen: set[str]) -> None:
    if model.form in ("array", "map"):
        _recursive_fields(definitions, definitions.target(model), indent, out, seen)
    elif model.form == "reference":
        if model.reference in seen:
            return
        seen.add(model.reference)
        _recursive_fields(definitions, definitions.target(model), indent, out, seen)
        seen.discard(model.reference)
    elif model.form == "kind":
        for key in sorted(model.fields):
            sub = model.fields[key]
            out.write(indent, f"{key}\t<{definitions.type_name(sub)}>")
            _recursive_fields(definitions, sub, indent + 3, out, seen)
