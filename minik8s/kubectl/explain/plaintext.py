"""``kubectl explain -o plaintext``: a resource's or field's documentation from the OpenAPI v3
document of its group/version, laid out as kubectl 1.32's ``plaintext`` template lays it out.

The layout, derived from what kubectl prints::

    GROUP:      apps                    (only for a named group)
    KIND:       Deployment
    VERSION:    v1

    FIELD: strategy <DeploymentStrategy>     (for a field path; then ENUM: and one value a line)

    DESCRIPTION:
        <the descriptions of the schema, its allOf, items and additionalProperties; wrapped at 76>

    FIELDS:
      <name>\t<type> -required-
      enum: A, B, ....                  (at most four values)
        <description wrapped at 78 - indent, or <no description>>

With ``--recursive`` each field is one line, its own fields under it two columns further in; a
reference already being expanded on the way down is not expanded again (a cycle).

Values are the decoded JSON document (dicts, lists, str, int, float, bool, None); what counts as
true follows Go's templates (an empty string, map or list, zero and null are false).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from minik8s.api.kubejsonpath import go_float
from minik8s.kubectl.explain.wrap import wordwrap

Schema = dict[str, Any]


class ExplainError(Exception):
    """A failure kubectl reports as it is (``error: field "x" does not exist``)."""


def _true(value: Any) -> bool:
    """Go template truth: false, 0, nil and empty strings, maps and lists are false."""
    if value is None or value is False:
        return False
    if isinstance(value, int | float | str | dict | list):
        return bool(value)
    return True


def _get(schema: Any, key: str) -> Any:
    return schema.get(key) if isinstance(schema, dict) else None


def _is_map_schema(value: Any) -> bool:
    """``additionalProperties`` that is a schema (not the boolean form) and not empty."""
    return _true(value) and not isinstance(value, bool)


def go_value(value: Any) -> str:
    """How Go's ``fmt`` prints a decoded JSON value with ``%v`` (numbers are float64)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "<nil>"
    if isinstance(value, int | float):
        return go_float(float(value))
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_value(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_value(v) for v in value) + "]"
    return str(value)


def indent(amount: int, text: str) -> str:
    """Every line of ``text`` (an empty last one too) after ``amount`` spaces."""
    pad = " " * amount
    return pad + text.replace("\n", "\n" + pad)


def resolve_ref(ref: Any, document: Schema) -> Schema | None:
    """The schema a local ``$ref`` (``#/components/schemas/X``) names; None for another kind of
    reference or one that names nothing."""
    if not isinstance(ref, str) or not ref.startswith("#"):
        return None
    current: Any = document
    for part in unquote(ref[1:]).split("/"):
        if not part:
            continue
        current = current.get(part) if isinstance(current, dict) else None
        if not isinstance(current, dict):
            return None
    return current if isinstance(current, dict) else None


class Renderer:
    """One explanation of ``document`` (an OpenAPI v3 group/version document)."""

    def __init__(self, document: Schema, recursive: bool) -> None:
        self.document = document
        self.recursive = recursive

    def _resolved(self, schema: Any) -> Any:
        target = resolve_ref(_get(schema, "$ref"), self.document)
        return target if _true(target) else schema

    # -- the resource ---------------------------------------------------------------------------

    def find_gvk(self, group: str, version: str, resource: str) -> dict[str, Any] | None:
        """The group/version/kind of the operations on ``resource``'s paths (cluster or namespace
        scoped, list or named), as the template looks it up: the last path found decides."""
        prefix = f"/apis/{group}" if group else "/api"
        paths = _get(self.document, "paths") or {}
        found: Any = None
        for path in (f"{prefix}/{version}/{resource}", f"{prefix}/{version}/{resource}/{{name}}",
                     f"{prefix}/{version}/namespaces/{{namespace}}/{resource}",
                     f"{prefix}/{version}/namespaces/{{namespace}}/{resource}/{{name}}"):
            element = _get(paths, path)
            if not _true(element):
                continue
            for method in ("get", "post", "put", "patch", "delete"):
                operation = _get(element, method)
                if not _true(operation):
                    continue
                found = _get(operation, "x-kubernetes-group-version-kind")
                if _true(found):
                    break
        return found if _true(found) else None

    def explain(self, gvk: dict[str, Any], field_path: list[str]) -> tuple[str, str | None]:
        """(what kubectl writes to stdout, the error it ends with or None) for the kind ``gvk``."""
        head = ""
        if _true(gvk.get("group")):
            head += f"GROUP:      {go_value(gvk['group'])}\n"
        head += f"KIND:       {go_value(gvk.get('kind'))}\nVERSION:    {go_value(gvk.get('version'))}\n\n"
        schemas = _get(_get(self.document, "components"), "schemas") or {}
        for name in sorted(schemas):
            schema = schemas[name]
            kinds = _get(schema, "x-kubernetes-group-version-kind")
            if isinstance(kinds, list) and gvk in kinds:
                body = self.output(schema, {}, field_path)
                if not body:
                    return head, f'error: field "{field_path[-1]}" does not exist'
                return head + body + "\n", None
        return head, f"error: GVK {go_value(gvk)} not found in OpenAPI schema"

    # -- following the field path ---------------------------------------------------------------

    def output(self, schema: Any, history: dict[str, int], field_path: list[str]) -> str:
        """The explanation of ``schema`` once ``field_path`` is followed down it; "" when the path
        leads nowhere."""
        ref = _get(schema, "$ref") or ""
        ahead = {**history, ref: 1}
        resolved = self._resolved(schema)
        if not field_path:
            text = "DESCRIPTION:\n"
            text += indent(4, wordwrap(self.description(resolved) or "<empty>", 76)) + "\n"
            docs = self.external_docs(resolved)
            if docs:
                text += "\n" + docs
            fields = self.field_list(resolved, 1, {})
            if fields:
                text += "FIELDS:\n" + fields
            return text
        if _true(ref) and history.get(ref):
            return ""  # a cycle
        properties = _get(resolved, "properties")
        if _true(properties) and isinstance(properties, dict) and _true(properties.get(field_path[0])):
            sub = properties[field_path[0]]
            text = ""
            if len(field_path) == 1:
                text = f"FIELD: {field_path[0]} <{self.type_guess(sub)}>\n"
                text += self.extract_enum(sub, long_view=True, limit=-1, indent_amount=0) + "\n\n"
            return text + self.output(sub, {}, field_path[1:])
        items = _get(resolved, "items")
        if _true(items):
            return self.output(items, ahead, field_path)
        more = _get(resolved, "additionalProperties")
        if _is_map_schema(more):
            return self.output(more, ahead, field_path)
        for sub in _get(resolved, "allOf") or []:
            text = self.output(sub, ahead, field_path)
            if text:
                return text
        return ""

    # -- pieces -----------------------------------------------------------------------------------

    def description(self, schema: Any) -> str:
        """The descriptions of ``schema`` and of its allOf, items and additionalProperties, each
        followed by a line break."""
        resolved = self._resolved(schema)
        if not _true(resolved):
            return ""
        text = ""
        if _true(_get(resolved, "description")):
            text += go_value(resolved["description"]) + "\n"
        for sub in _get(resolved, "allOf") or []:
            text += self.description(sub)
        if _true(_get(resolved, "items")):
            text += self.description(resolved["items"])
        if _is_map_schema(_get(resolved, "additionalProperties")):
            text += self.description(resolved["additionalProperties"])
        return text

    @staticmethod
    def external_docs(schema: Any) -> str:
        docs = _get(schema, "externalDocs")
        if not _true(docs):
            return ""
        text = "EXTERNAL DOCS:\n"
        if _true(_get(docs, "description")):
            text += indent(4, wordwrap(go_value(docs["description"]), 76)) + "\n"
        if _true(_get(docs, "url")):
            text += indent(4, "URL: " + go_value(docs["url"])) + "\n"
        return text

    def field_list(self, schema: Any, level: int, history: dict[str, int]) -> str:
        """The fields of ``schema`` (through its reference, allOf, items and additionalProperties),
        with descriptions, or one line each and their own fields under them when recursive."""
        ref = _get(schema, "$ref") or ""
        if _true(ref) and history.get(ref):
            return ""
        ahead = {**history, ref: 1}
        resolved = self._resolved(schema)
        text = ""
        properties = _get(resolved, "properties")
        if isinstance(properties, dict):
            for name in sorted(properties):
                text += self.field_detail(name, resolved, level)
                if self.recursive:
                    text += self.field_list(properties[name], level + 1, ahead)
        for sub in _get(resolved, "allOf") or []:
            text += self.field_list(sub, level, ahead)
        if _true(_get(resolved, "items")):
            text += self.field_list(resolved["items"], level, ahead)
        if _is_map_schema(_get(resolved, "additionalProperties")):
            text += self.field_list(resolved["additionalProperties"], level, ahead)
        return text

    def field_detail(self, name: str, parent: Schema, level: int) -> str:
        amount = level * 2
        field = parent["properties"][name]
        text = indent(amount, name) + f"\t<{self.type_guess(field)}>"
        required = _get(parent, "required")
        if isinstance(required, list) and name in required:
            text += " -required-"
        text += self.extract_enum(field, long_view=False, limit=4, indent_amount=amount) + "\n"
        if self.recursive:
            return text
        description = _get(field, "description")
        text += indent(amount + 2, wordwrap(go_value(description) if _true(description) else "<no description>",
                                            78 - amount)) + "\n"
        docs = _get(field, "externalDocs")
        if _true(docs):
            text += "\n" + indent(amount + 2, "EXTERNAL DOCS:") + "\n"
            if _true(_get(docs, "description")):
                text += indent(amount + 4, wordwrap(go_value(docs["description"]), 76 - amount)) + "\n"
            if _true(_get(docs, "url")):
                text += indent(amount + 4, "URL: " + go_value(docs["url"])) + "\n"
        return text + "\n"

    def type_guess(self, schema: Any) -> str:
        """The type shown in ``<...>``: ``string``, ``Object``, ``[]Container``, ``map[string]string``,
        a referenced object's short name, or a referenced primitive's type."""
        if not _true(schema):
            raise ExplainError("expected schema argument to subtemplate 'typeguess'")
        if _true(_get(schema, "items")):
            return "[]" + self.type_guess(schema["items"])
        if _is_map_schema(_get(schema, "additionalProperties")):
            return "map[string]" + self.type_guess(schema["additionalProperties"])
        all_of = _get(schema, "allOf")
        if _true(all_of) and not _true(_get(schema, "properties")) and isinstance(all_of, list) and len(all_of) == 1:
            return self.type_guess(all_of[0])
        ref = _get(schema, "$ref")
        if _true(ref):
            target = resolve_ref(ref, self.document)
            kind = _get(target, "type")
            if not _true(target) or not _true(kind) or kind == "object":
                return go_value(ref).split("/")[-1].split(".")[-1] or "Object"
            return go_value(kind)
        kind = _get(schema, "type")
        if kind == "object":
            return "Object"
        return go_value(kind) if _true(kind) else "Object"

    @staticmethod
    def extract_enum(schema: Any, long_view: bool, limit: int, indent_amount: int) -> str:
        """``ENUM:`` and one value a line (a field's own page), or ``enum: A, B, ....`` under a
        field in a list (at most ``limit`` values); ``""`` is written for the empty string."""
        values = _get(schema, "enum")
        if not _true(values) or not isinstance(values, list):
            return ""
        text = "ENUM:" if long_view else "\n" + " " * indent_amount + "enum: "
        for i, value in enumerate(values):
            if limit > -1 and i >= limit:
                text += ", ...."
                break
            if long_view:
                text += "\n    "
            elif i > 0:
                text += ", "
            text += '""' if value == "" and isinstance(value, str) else go_value(value)
        return text
