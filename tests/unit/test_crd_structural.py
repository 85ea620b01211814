"""The CRD schema engine: structural checks, validation (with CEL rules), defaulting and pruning.

Messages are Kubernetes' (kube-apiserver's apiextensions and kube-openapi), compared exactly.
"""

from __future__ import annotations

import copy
import time
from typing import Any

import pytest

from minik8s.apiserver.apiextensions import structural
from minik8s.apiserver.apiextensions.structural import default, prune, structural_errors, validate

P = "spec.validation.openAPIV3Schema"


def obj_schema(**props: Any) -> dict:
    return {"type": "object", "properties": props}


def type_error(path: str, want: str, got: str) -> tuple:
    return (path, got, f'{path} in body must be of type {want}: "{got}"')


def spec_schema(**props: Any) -> dict:
    return obj_schema(spec=obj_schema(**props))


# ---- Structural schema ---------------------------------------------------------------------------

STRUCTURAL_CASES = [
    ("valid", spec_schema(replicas={"type": "integer"}, tags={"type": "array", "items": {"type": "string"}}), []),
    ("root type missing", {"properties": {}},
     [(f"{P}.type", None, "Required value: must not be empty at the root")]),
    ("field type missing", obj_schema(a={}),
     [(f"{P}.properties[a].type", None, "Required value: must not be empty for specified object fields")]),
    ("items type missing", obj_schema(a={"type": "array", "items": {}}),
     [(f"{P}.properties[a].items.type", None, "Required value: must not be empty for specified array items")]),
    ("preserve-unknown without type", obj_schema(a={"x-kubernetes-preserve-unknown-fields": True}), []),
    ("int-or-string", obj_schema(a={"x-kubernetes-int-or-string": True}), []),
    ("int-or-string anyOf pattern", obj_schema(a={"x-kubernetes-int-or-string": True,
                                                 "anyOf": [{"type": "integer"}, {"type": "string"}]}), []),
    ("int-or-string with type", obj_schema(a={"type": "string", "x-kubernetes-int-or-string": True}),
     [(f"{P}.properties[a].type", "string", "must be empty if x-kubernetes-int-or-string is true")]),
    ("array without items", obj_schema(a={"type": "array"}),
     [(f"{P}.properties[a].items", None, "Required value: must be specified")]),
    ("$ref", obj_schema(a={"type": "string", "$ref": "#/definitions/x"}),
     [(f"{P}.properties[a].$ref", None, "Forbidden: $ref is not supported")]),
    ("definitions", {"type": "object", "definitions": {"x": {}}},
     [(f"{P}.definitions", None, "Forbidden: definitions is not supported")]),
    ("patternProperties", obj_schema(a={"type": "object", "patternProperties": {"x": {}}}),
     [(f"{P}.properties[a].patternProperties", None, "Forbidden: patternProperties is not supported")]),
    ("type null", obj_schema(a={"type": "null"}),
     [(f"{P}.properties[a].type", None, "Forbidden: type cannot be set to null, use nullable as an alternative"),
      (f"{P}.properties[a].type", None, "Required value: must not be empty for specified object fields")]
     [:1]),
    ("unknown type", obj_schema(a={"type": "float"}),
     [(f"{P}.properties[a].type", None, 'Unsupported value: "float": supported values: "array", "boolean", '
                                         '"integer", "number", "object", "string"')]),
    ("items array", obj_schema(a={"type": "array", "items": [{"type": "string"}]}),
     [(f"{P}.properties[a].items", None, "Forbidden: items must be a schema object and not an array")]),
    ("uniqueItems", obj_schema(a={"type": "array", "items": {"type": "string"}, "uniqueItems": True}),
     [(f"{P}.properties[a].uniqueItems", None,
       "Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic")]),
    ("additionalProperties with properties",
     obj_schema(a={"type": "object", "properties": {"b": {"type": "string"}},
                   "additionalProperties": {"type": "string"}}),
     [(f"{P}.properties[a].additionalProperties", None,
       "Forbidden: additionalProperties and properties are mutual exclusive")]),
    ("additionalProperties true with properties",
     obj_schema(a={"type": "object", "properties": {"b": {"type": "string"}}, "additionalProperties": True}), []),
    ("additionalProperties at the root", {"type": "object", "additionalProperties": {"type": "string"}},
     [(f"{P}.additionalProperties", None, "Forbidden: must not be used at the root")]),
    ("root not object", {"type": "string"}, [(f"{P}.type", "string", "must be object at the root")]),
    ("preserve false", obj_schema(a={"type": "object", "x-kubernetes-preserve-unknown-fields": False}),
     [(f"{P}.properties[a].x-kubernetes-preserve-unknown-fields", False, "must be true or undefined")]),
    ("metadata name only", obj_schema(metadata={"type": "object", "properties": {"name": {"type": "string"}}}), []),
    ("metadata labels", obj_schema(metadata={"type": "object", "properties": {"labels": {"type": "object"}}}),
     [(f"{P}.properties[metadata]", None, "Forbidden: must not specify anything other than name and generateName, "
                                          "but metadata is implicitly specified")]),
    ("metadata not object", obj_schema(metadata={"type": "string"}),
     [(f"{P}.properties[metadata].type", "string", "must be object")]),
    ("kind not string", obj_schema(kind={"type": "integer"}),
     [(f"{P}.properties[kind].type", "integer", "must be string")]),
    ("embedded without type", obj_schema(a={"x-kubernetes-embedded-resource": True,
                                           "x-kubernetes-preserve-unknown-fields": True}),
     [(f"{P}.properties[a].type", None, "Required value: must be object if x-kubernetes-embedded-resource is true")]),
    ("embedded without properties", obj_schema(a={"type": "object", "x-kubernetes-embedded-resource": True}),
     [(f"{P}.properties[a].properties", None, "Required value: must not be empty if x-kubernetes-embedded-resource "
                                              "is true without x-kubernetes-preserve-unknown-fields")]),
    ("int-or-string and preserve", obj_schema(a={"x-kubernetes-int-or-string": True,
                                                "x-kubernetes-preserve-unknown-fields": True}),
     [(f"{P}.properties[a].x-kubernetes-preserve-unknown-fields", True,
       "must be false if x-kubernetes-int-or-string is true")]),
    ("type in anyOf", obj_schema(a={"type": "string", "anyOf": [{"type": "string"}]}),
     [(f"{P}.properties[a].anyOf[0].type", None, "Forbidden: must be empty to be structural")]),
    ("description in allOf", obj_schema(a={"type": "string", "allOf": [{"description": "x"}]}),
     [(f"{P}.properties[a].allOf[0].description", None, "Forbidden: must be empty to be structural")]),
    ("nested property not specified", obj_schema(a={"type": "object", "not": {"properties": {"b": {}}}}),
     [(f"{P}.properties[a].properties[b]", None,
       f"Required value: because it is defined in {P}.properties[a].not.properties[b]")]),
    ("metadata in a nested context", {"type": "object", "properties": {"metadata": {"type": "object"}},
                                      "oneOf": [{"properties": {"metadata": {}}}]},
     [(f"{P}.oneOf[0].properties[metadata]", None, "Forbidden: must not be specified in a nested context")]),
    ("bad list-type", obj_schema(a={"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "bag"}),
     [(f"{P}.properties[a].x-kubernetes-list-type", None,
       'Unsupported value: "bag": supported values: "atomic", "map", "set"')]),
    ("list-type map without keys", obj_schema(a={"type": "array", "x-kubernetes-list-type": "map",
                                                "items": {"type": "object", "properties": {"n": {"type": "string"}}}}),
     [(f"{P}.properties[a].x-kubernetes-list-map-keys", None,
       "Required value: must not be empty if x-kubernetes-list-type is map")]),
    ("list-map-keys not properties", obj_schema(a={"type": "array", "x-kubernetes-list-type": "map",
                                                  "x-kubernetes-list-map-keys": ["x"],
                                                  "items": {"type": "object",
                                                            "properties": {"n": {"type": "string"}}}}),
     [(f"{P}.properties[a].x-kubernetes-list-map-keys[0]", "x", "entries must all be names of item properties")]),
    ("bad pattern", obj_schema(a={"type": "string", "pattern": "a("}),
     [(f"{P}.properties[a].pattern", "a(",
       "must be a valid regular expression, but isn't: error parsing regexp: missing closing ): `a(`")]),
    ("rule syntax", obj_schema(a={"type": "string", "x-kubernetes-validations": [{"rule": "self +"}]}),
     [(f"{P}.properties[a].x-kubernetes-validations[0].rule", "self +",
       "compilation failed: ERROR: <input>:1:6: Syntax error: self +")]),
    ("rule undeclared reference", obj_schema(a={"type": "string", "x-kubernetes-validations": [{"rule": "x == 1"}]}),
     [(f"{P}.properties[a].x-kubernetes-validations[0].rule", "x == 1",
       "compilation failed: ERROR: <input>:1:1: undeclared reference to 'x' (in container '')")]),
    ("rule empty", obj_schema(a={"type": "string", "x-kubernetes-validations": [{"rule": ""}]}),
     [(f"{P}.properties[a].x-kubernetes-validations[0].rule", None, "Required value")]),
    ("rule reason and fieldPath", obj_schema(a={"type": "object", "x-kubernetes-validations": [
        {"rule": "true", "reason": "Bad", "fieldPath": "spec..x"}]}),
     [(f"{P}.properties[a].x-kubernetes-validations[0].reason", None,
       'Unsupported value: "Bad": supported values: "FieldValueDuplicate", "FieldValueForbidden", '
       '"FieldValueInvalid", "FieldValueRequired"'),
      (f"{P}.properties[a].x-kubernetes-validations[0].fieldPath", "spec..x", "must be a valid path")]),
    ("messageExpression", obj_schema(a={"type": "string", "x-kubernetes-validations": [
        {"rule": "true", "messageExpression": "'a' +"}]}),
     [(f"{P}.properties[a].x-kubernetes-validations[0].messageExpression", "'a' +",
       "messageExpression compilation failed: ERROR: <input>:1:5: Syntax error: 'a' +")]),
    ("macro variables are bound", obj_schema(a={"type": "array", "items": {"type": "string"},
                                                "x-kubernetes-validations": [
                                                    {"rule": "self.all(x, x.startsWith('a')) && "
                                                             "self.map(y, y.size()).exists(z, z > 1)"}]}), []),
    ("default of the wrong type", obj_schema(a={"type": "integer", "default": "x"}),
     [(f"{P}.properties[a].default", "string", 'in body must be of type integer: "string"')]),
    ("default with unknown fields", obj_schema(a={"type": "object", "properties": {"b": {"type": "string"}},
                                                 "default": {"b": "x", "c": 1}}),
     [(f"{P}.properties[a].default", {"b": "x", "c": 1}, "must not have unknown fields, got c")]),
    ("nested default invalid", obj_schema(a={"type": "object", "default": {},
                                            "properties": {"b": {"type": "string", "default": "xy", "maxLength": 1}}}),
     [(f"{P}.properties[a].properties[b].default", None, "Too long: may not be more than 1 bytes")]),
    ("valid default", obj_schema(a={"type": "object", "properties": {"b": {"type": "string"}}, "default": {"b": "x"}}),
     []),
    ("not an object", "nope", [(P, "string", "must be an object")]),
]


@pytest.mark.parametrize(("schema", "expected"), [c[1:] for c in STRUCTURAL_CASES],
                         ids=[c[0] for c in STRUCTURAL_CASES])
def test_structural_errors(schema: Any, expected: list) -> None:
    assert structural_errors(schema) == expected


def test_structural_path_is_the_callers() -> None:
    path = "spec.versions[1].schema.openAPIV3Schema"
    assert structural_errors(obj_schema(a={}), path) == [
        (f"{path}.properties[a].type", None, "Required value: must not be empty for specified object fields")]


def test_structural_hostile_depth_and_size_are_bounded() -> None:
    deep: dict = {"type": "object"}
    node = deep
    for _ in range(5000):
        node["properties"] = {"a": {"type": "object"}}
        node = node["properties"]["a"]
    started = time.monotonic()
    errors = structural_errors(deep)
    assert len(errors) == 1 and errors[0][2] == "Forbidden: must not be nested more than 64 levels deep"
    wide = obj_schema(**{f"f{i}": {"type": "string"} for i in range(structural.MAX_NODES + 10)})
    assert structural_errors(wide)[-1][2] == f"Forbidden: must not have more than {structural.MAX_NODES} schemas in all"
    assert time.monotonic() - started < 5


def test_structural_hostile_patterns_and_rules_are_refused_cheaply() -> None:
    started = time.monotonic()
    huge = obj_schema(a={"type": "string", "pattern": "((a{1000}){1000}){1000}"})
    [(path, _, message)] = structural_errors(huge)
    assert path == f"{P}.properties[a].pattern" and message.startswith("must be a valid regular expression")
    nested = "(" * 3000 + "1" + ")" * 3000
    [(path, _, message)] = structural_errors(obj_schema(a={"type": "string", "x-kubernetes-validations": [
        {"rule": nested}]}))
    assert message.startswith("compilation failed: ")
    long_rule = "self == 'a'" + " || self == 'a'" * 2000
    [(_, _, message)] = structural_errors(obj_schema(a={"type": "string", "x-kubernetes-validations": [
        {"rule": long_rule}]}))
    assert message == "compilation failed: expression is longer than 10000 characters"
    assert time.monotonic() - started < 10


# ---- Validation ----------------------------------------------------------------------------------

TYPES = spec_schema(
    replicas={"type": "integer"}, ratio={"type": "number"}, name={"type": "string"}, on={"type": "boolean"},
    tags={"type": "array", "items": {"type": "string"}}, sub={"type": "object"},
    opt={"type": "string", "nullable": True}, port={"x-kubernetes-int-or-string": True},
    anything={"x-kubernetes-preserve-unknown-fields": True},
)

VALIDATE_CASES: list[tuple[str, dict, dict, list]] = [
    ("integer", TYPES, {"spec": {"replicas": "string"}},
     [type_error("spec.replicas", "integer", "string")]),
    ("integral float is an integer", TYPES, {"spec": {"replicas": 3.0}}, []),
    ("fractional float", TYPES, {"spec": {"replicas": 1.5}},
     [type_error("spec.replicas", "integer", "number")]),
    ("number", TYPES, {"spec": {"ratio": True}},
     [type_error("spec.ratio", "number", "boolean")]),
    ("number takes integers", TYPES, {"spec": {"ratio": 2}}, []),
    ("string", TYPES, {"spec": {"name": 5}}, [type_error("spec.name", "string", "integer")]),
    ("boolean", TYPES, {"spec": {"on": "yes"}}, [type_error("spec.on", "boolean", "string")]),
    ("array", TYPES, {"spec": {"tags": {}}}, [type_error("spec.tags", "array", "object")]),
    ("array items", TYPES, {"spec": {"tags": ["a", 1]}},
     [type_error("spec.tags[1]", "string", "integer")]),
    ("object", TYPES, {"spec": {"sub": []}}, [type_error("spec.sub", "object", "array")]),
    ("null", TYPES, {"spec": {"name": None}}, [type_error("spec.name", "string", "null")]),
    ("nullable", TYPES, {"spec": {"opt": None}}, []),
    ("int-or-string", TYPES, {"spec": {"port": "http"}}, []),
    ("int-or-string int", TYPES, {"spec": {"port": 80}}, []),
    ("int-or-string bool", TYPES, {"spec": {"port": True}},
     [type_error("spec.port", "integer,string", "boolean")]),
    ("preserve-unknown takes anything", TYPES, {"spec": {"anything": {"a": [1, {"b": None}]}}}, []),
    ("root type", TYPES, {"spec": "x"}, [type_error("spec", "object", "string")]),
    ("required", spec_schema(a={"type": "string"}) | {"required": ["spec"]}, {}, [("spec", None, "Required value")]),
    ("nested required", {"type": "object", "properties": {"spec": {"type": "object", "required": ["a", "b"],
                                                                   "properties": {"a": {"type": "string"}}}}},
     {"spec": {"a": "x"}}, [("spec.b", None, "Required value")]),
    ("enum", spec_schema(mode={"type": "string", "enum": ["Always", "Never"]}), {"spec": {"mode": "Sometimes"}},
     [("spec.mode", None, 'Unsupported value: "Sometimes": supported values: "Always", "Never"')]),
    ("enum of numbers", spec_schema(n={"type": "integer", "enum": [1, 2]}), {"spec": {"n": 3}},
     [("spec.n", None, 'Unsupported value: 3: supported values: "1", "2"')]),
    ("enum is JSON equality", spec_schema(n={"type": "integer", "enum": [1]}), {"spec": {"n": 1}}, []),
    ("pattern", spec_schema(n={"type": "string", "pattern": "^[a-z]+$"}), {"spec": {"n": "A1"}},
     [("spec.n", "A1", "spec.n in body should match '^[a-z]+$'")]),
    ("pattern is a search", spec_schema(n={"type": "string", "pattern": "[0-9]"}), {"spec": {"n": "ab1"}}, []),
    ("minimum", spec_schema(n={"type": "integer", "minimum": 1}), {"spec": {"n": 0}},
     [("spec.n", 0, "spec.n in body should be greater than or equal to 1")]),
    ("exclusiveMinimum", spec_schema(n={"type": "number", "minimum": 1.5, "exclusiveMinimum": True}),
     {"spec": {"n": 1.5}}, [("spec.n", 1.5, "spec.n in body should be greater than 1.5")]),
    ("maximum", spec_schema(n={"type": "integer", "maximum": 10}), {"spec": {"n": 11}},
     [("spec.n", 11, "spec.n in body should be less than or equal to 10")]),
    ("exclusiveMaximum", spec_schema(n={"type": "integer", "maximum": 10, "exclusiveMaximum": True}),
     {"spec": {"n": 10}}, [("spec.n", 10, "spec.n in body should be less than 10")]),
    ("multipleOf", spec_schema(n={"type": "integer", "multipleOf": 5}), {"spec": {"n": 12}},
     [("spec.n", 12, "spec.n in body should be a multiple of 5")]),
    ("maxLength counts characters", spec_schema(n={"type": "string", "maxLength": 3}), {"spec": {"n": "äöü"}}, []),
    ("maxLength", spec_schema(n={"type": "string", "maxLength": 3}), {"spec": {"n": "abcd"}},
     [("spec.n", None, "Too long: may not be more than 3 bytes")]),
    ("minLength", spec_schema(n={"type": "string", "minLength": 1}), {"spec": {"n": ""}},
     [("spec.n", "", "spec.n in body should be at least 1 chars long")]),
    ("maxItems", spec_schema(n={"type": "array", "items": {"type": "integer"}, "maxItems": 1}), {"spec": {"n": [1, 2]}},
     [("spec.n", None, "Too many: 2: must have at most 1 items")]),
    ("minItems", spec_schema(n={"type": "array", "items": {"type": "integer"}, "minItems": 1}), {"spec": {"n": []}},
     [("spec.n", 0, "spec.n in body should have at least 1 items")]),
    ("maxProperties", spec_schema(n={"type": "object", "additionalProperties": {"type": "string"},
                                     "maxProperties": 1}), {"spec": {"n": {"a": "1", "b": "2"}}},
     [("spec.n", None, "Too many: 2: must have at most 1 items")]),
    ("minProperties", spec_schema(n={"type": "object", "minProperties": 1}), {"spec": {"n": {}}},
     [("spec.n", 0, "spec.n in body should have at least 1 properties")]),
    ("additionalProperties values", spec_schema(n={"type": "object", "additionalProperties": {"type": "integer"}}),
     {"spec": {"n": {"a": 1, "b": "x"}}}, [type_error("spec.n.b", "integer", "string")]),
    ("uniqueItems", spec_schema(n={"type": "array", "items": {"type": "integer"}, "uniqueItems": True}),
     {"spec": {"n": [1, 2, 1]}}, [("spec.n", "", "spec.n in body shouldn't contain duplicates")]),
    ("list-type set", spec_schema(n={"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"}),
     {"spec": {"n": ["a", "b", "a"]}}, [("spec.n[2]", None, 'Duplicate value: "a"')]),
    ("list-type map", spec_schema(n={"type": "array", "x-kubernetes-list-type": "map",
                                     "x-kubernetes-list-map-keys": ["name", "port"],
                                     "items": {"type": "object", "properties": {"name": {"type": "string"},
                                                                                "port": {"type": "integer"}}}}),
     {"spec": {"n": [{"name": "a", "port": 1}, {"name": "a", "port": 2}, {"name": "a", "port": 1}]}},
     [("spec.n[2]", None, 'Duplicate value: {"name": "a", "port": 1}')]),
    ("embedded resource", spec_schema(template={"type": "object", "x-kubernetes-embedded-resource": True,
                                                "x-kubernetes-preserve-unknown-fields": True}),
     {"spec": {"template": {"metadata": {"name": "x"}, "kind": 5}}},
     [("spec.template.apiVersion", None, "Required value: must not be empty"),
      ("spec.template.kind", 5, "must be a string")]),
    ("embedded resource complete", spec_schema(template={"type": "object", "x-kubernetes-embedded-resource": True,
                                                         "x-kubernetes-preserve-unknown-fields": True}),
     {"spec": {"template": {"apiVersion": "v1", "kind": "Pod"}}}, []),
    ("anyOf", spec_schema(n={"type": "integer", "anyOf": [{"minimum": 10}, {"maximum": 0}]}), {"spec": {"n": 5}},
     [("spec.n", "", '"spec.n" must validate at least one schema (anyOf)')]),
    ("oneOf", spec_schema(n={"type": "integer", "oneOf": [{"minimum": 0}, {"maximum": 10}]}), {"spec": {"n": 5}},
     [("spec.n", "", '"spec.n" must validate one and only one schema (oneOf). Found 2 valid alternatives')]),
    ("not", spec_schema(n={"type": "integer", "not": {"minimum": 0}}), {"spec": {"n": 5}},
     [("spec.n", "", '"spec.n" must not validate the schema (not)')]),
    ("allOf", spec_schema(n={"type": "integer", "allOf": [{"minimum": 0}, {"maximum": 3}]}), {"spec": {"n": 5}},
     [("spec.n", 5, "spec.n in body should be less than or equal to 3")]),
    ("unknown fields are not errors", TYPES, {"spec": {"unknown": 1}, "status": {}}, []),
]

FORMATS = [
    ("date-time", "2024-01-02T03:04:05Z", "2024-13-02T03:04:05Z"),
    ("date-time", "2024-01-02T03:04:05.123+02:00", "yesterday"),
    ("date", "2024-02-29", "2023-02-29"),
    ("uuid", "123e4567-e89b-12d3-a456-426614174000", "123e4567"),
    ("uuid4", "123e4567-e89b-42d3-a456-426614174000", "123e4567-e89b-12d3-a456-426614174000"),
    ("ipv4", "10.0.0.1", "10.0.0.256"),
    ("ipv6", "fe80::1", "fe80::g"),
    ("cidr", "10.0.0.0/8", "10.0.0.0"),
    ("mac", "00:1a:2b:3c:4d:5e", "00:1a:2b"),
    ("hostname", "a.example.com", "-a.com"),
    ("email", "a@example.com", "a.example.com"),
    ("byte", "aGVsbG8=", "not base64!"),
    ("uri", "https://example.com/x", "no scheme"),
    ("duration", "1h30m", "1 hour"),
]


@pytest.mark.parametrize(("schema", "obj", "expected"), [c[1:] for c in VALIDATE_CASES],
                         ids=[c[0] for c in VALIDATE_CASES])
def test_validate(schema: dict, obj: dict, expected: list) -> None:
    assert validate(schema, obj) == expected


@pytest.mark.parametrize(("fmt", "good", "bad"), FORMATS, ids=[f"{f[0]}:{f[2]}" for f in FORMATS])
def test_validate_formats(fmt: str, good: str, bad: str) -> None:
    schema = spec_schema(v={"type": "string", "format": fmt})
    assert validate(schema, {"spec": {"v": good}}) == []
    assert validate(schema, {"spec": {"v": bad}}) == [("spec.v", bad, f'spec.v in body must be of type {fmt}: "{bad}"')]


def test_unknown_and_numeric_formats_are_not_checked_on_strings() -> None:
    schema = spec_schema(v={"type": "string", "format": "password"}, n={"type": "integer", "format": "int32"})
    assert validate(schema, {"spec": {"v": "x", "n": 2**40}}) == []


def test_catastrophic_regex_runs_in_linear_time() -> None:
    schema = spec_schema(v={"type": "string", "pattern": "^(a+)+$"})
    started = time.monotonic()
    errors = validate(schema, {"spec": {"v": "a" * 100_000 + "b"}})
    assert time.monotonic() - started < 1
    assert [e[0] for e in errors] == ["spec.v"]


def test_type_errors_block_rules() -> None:
    schema = spec_schema(n={"type": "integer"}) | {"x-kubernetes-validations": [{"rule": "false"}]}
    assert validate(schema, {"spec": {"n": "x"}})[-1] == (
        "<nil>", None, 'Invalid value: "null": some validation rules were not checked because the object was invalid; '
                       "correct the existing errors to complete validation")


# ---- Validation rules (CEL) ----------------------------------------------------------------------


def ruled(*rules: dict, **props: Any) -> dict:
    return obj_schema(spec={"type": "object", "properties": props or {"n": {"type": "integer"}},
                            "x-kubernetes-validations": list(rules)})


RULE_CASES = [
    ("passes", ruled({"rule": "self.n > 0"}), {"spec": {"n": 1}}, []),
    ("default message", ruled({"rule": "self.n > 0"}), {"spec": {"n": 0}},
     [("spec", "object", "failed rule: self.n > 0")]),
    ("message", ruled({"rule": "self.n > 0", "message": "n must be positive"}), {"spec": {"n": 0}},
     [("spec", "object", "n must be positive")]),
    ("messageExpression", ruled({"rule": "self.n > 0", "message": "static",
                                 "messageExpression": "'n is ' + string(self.n)"}), {"spec": {"n": -2}},
     [("spec", "object", "n is -2")]),
    ("messageExpression error falls back", ruled({"rule": "self.n > 0", "message": "static",
                                                  "messageExpression": "self.missing"}), {"spec": {"n": 0}},
     [("spec", "object", "static")]),
    ("reason Forbidden and fieldPath", ruled({"rule": "self.n > 0", "reason": "FieldValueForbidden",
                                              "fieldPath": ".n", "message": "no"}), {"spec": {"n": 0}},
     [("spec.n", None, "Forbidden: no")]),
    ("reason Required", ruled({"rule": "has(self.n)", "reason": "FieldValueRequired", "fieldPath": ".n"}),
     {"spec": {}}, [("spec.n", None, "Required value: failed rule: has(self.n)")]),
    ("reason Duplicate", ruled({"rule": "false", "reason": "FieldValueDuplicate"}), {"spec": {}},
     [("spec", None, 'Duplicate value: "object": failed rule: false')]),
    ("evaluation error", ruled({"rule": "self.x == 1"}), {"spec": {"n": 1}},
     [("spec", "object", "no such key: x evaluating rule: self.x == 1")]),
    ("no such overload", ruled({"rule": "self.n < 'a'"}), {"spec": {"n": 1}},
     [("spec", "object", "'no such overload': call arguments did not match a supported operator, function or macro "
                         "signature for rule: self.n < 'a'")]),
    ("division by zero", ruled({"rule": "1 / self.n == 1", "message": "m"}), {"spec": {"n": 0}},
     [("spec", "object", "modulus or divide by zero evaluating rule: m")]),
    ("rule on a scalar", obj_schema(spec={"type": "object", "properties": {"n": {
        "type": "string", "x-kubernetes-validations": [{"rule": "self.startsWith('a')"}]}}}), {"spec": {"n": "b"}},
     [("spec.n", "string", "failed rule: self.startsWith('a')")]),
    ("root rule", {"type": "object", "x-kubernetes-validations": [{"rule": "has(self.spec)"}]}, {"kind": "X"},
     [("<nil>", "object", "failed rule: has(self.spec)")]),
    ("rule in array items", obj_schema(spec={"type": "object", "properties": {"l": {
        "type": "array", "items": {"type": "object", "properties": {"v": {"type": "integer"}},
                                   "x-kubernetes-validations": [{"rule": "self.v < 3"}]}}}}),
     {"spec": {"l": [{"v": 1}, {"v": 5}]}}, [("spec.l[1]", "object", "failed rule: self.v < 3")]),
    ("library functions", ruled({"rule": "self.s.lowerAscii() == 'abc' && self.s.split('B') == ['A', 'C'] && "
                                         "[1, 2, 3].isSorted() && [1, 2, 3].sum() == 6 && [3, 1].min() == 1 && "
                                         "self.s.indexOf('C') == 2 && self.s.substring(1) == 'BC' && "
                                         "['a', 'b'].join('-') == 'a-b' && ' x '.trim() == 'x' && "
                                         "self.s.matches('^[A-C]+$') && 'ab12'.findAll('[0-9]') == ['1', '2']"},
                                s={"type": "string"}), {"spec": {"s": "ABC"}}, []),
]


@pytest.mark.parametrize(("schema", "obj", "expected"), [c[1:] for c in RULE_CASES], ids=[c[0] for c in RULE_CASES])
def test_validation_rules(schema: dict, obj: dict, expected: list) -> None:
    assert structural_errors(schema) == []
    assert validate(schema, obj) == expected


def test_transition_rules_run_on_updates_only() -> None:
    schema = ruled({"rule": "self.n >= oldSelf.n", "message": "n may not decrease"})
    assert validate(schema, {"spec": {"n": 1}}) == []
    assert validate(schema, {"spec": {"n": 1}}, {"spec": {"n": 2}}) == [("spec", "object", "n may not decrease")]
    assert validate(schema, {"spec": {"n": 3}}, {"spec": {"n": 2}}) == []
    assert validate(schema, {"spec": {"n": 1}}, {"other": 1}) == []  # no old spec: not correlated


def test_transition_rules_correlate_map_list_items_by_key() -> None:
    item = {"type": "object", "properties": {"name": {"type": "string"}, "v": {"type": "integer"}},
            "x-kubernetes-validations": [{"rule": "self.v == oldSelf.v", "message": "v is immutable"}]}
    schema = spec_schema(l={"type": "array", "items": item, "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["name"]})
    old = {"spec": {"l": [{"name": "a", "v": 1}, {"name": "b", "v": 2}]}}
    new = {"spec": {"l": [{"name": "b", "v": 2}, {"name": "c", "v": 9}, {"name": "a", "v": 5}]}}
    assert validate(schema, new, old) == [("spec.l[2]", "object", "v is immutable")]
    atomic = spec_schema(l={"type": "array", "items": item})
    assert validate(atomic, new, old) == []  # atomic lists do not correlate items


def test_hostile_rule_is_stopped_by_the_budget() -> None:
    schema = spec_schema(l={"type": "array", "items": {"type": "integer"}}) | {"x-kubernetes-validations": [
        {"rule": "self.spec.l.all(x, self.spec.l.all(y, self.spec.l.all(z, x + y + z >= 0)))"},
        {"rule": "false"}]}
    started = time.monotonic()
    errors = validate(schema, {"spec": {"l": list(range(1000))}})
    elapsed = time.monotonic() - started
    assert elapsed < structural.CEL_SECONDS + 1.5
    assert len(errors) == 1 and errors[0][0] == "<nil>"  # the later rule does not run
    assert "no further validation rules will be run" in errors[0][2]


def test_per_call_cost_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    from minik8s.apiserver.apiextensions import cel

    monkeypatch.setattr(cel, "STEPS_PER_CALL", 50)
    schema = spec_schema(l={"type": "array", "items": {"type": "integer"}}) | {"x-kubernetes-validations": [
        {"rule": "self.spec.l.all(x, x >= 0)"}]}
    assert validate(schema, {"spec": {"l": list(range(100))}}) == [
        ("<nil>", "object", "'operation cancelled: actual cost limit exceeded': no further validation rules will be "
                            "run due to call cost exceeds limit for rule: self.spec.l.all(x, x >= 0)")]


# ---- Defaulting ----------------------------------------------------------------------------------

DEFAULTS = obj_schema(spec={"type": "object", "properties": {
    "replicas": {"type": "integer", "default": 1},
    "mode": {"type": "string", "default": "Auto"},
    "opt": {"type": "string", "nullable": True, "default": "x"},
    "plain": {"type": "string"},
    "nested": {"type": "object", "properties": {"a": {"type": "string", "default": "A"}}},
    "withDefault": {"type": "object", "default": {}, "properties": {"b": {"type": "integer", "default": 2}}},
    "list": {"type": "array", "items": {"type": "object", "default": {"z": 0},
                                        "properties": {"p": {"type": "integer", "default": 80}}}},
    "map": {"type": "object", "additionalProperties": {"type": "object", "properties": {
        "q": {"type": "boolean", "default": True}}}},
}})

DEFAULT_CASES = [
    ("missing fields get defaults, missing parents are not created", {"spec": {}},
     {"spec": {"replicas": 1, "mode": "Auto", "opt": "x", "withDefault": {"b": 2}}}),
    ("no spec: nothing", {"kind": "X"}, {"kind": "X"}),
    ("present values stay", {"spec": {"replicas": 5, "mode": "Manual", "opt": "y", "withDefault": {"b": 3}}},
     {"spec": {"replicas": 5, "mode": "Manual", "opt": "y", "withDefault": {"b": 3}}}),
    ("null on a non-nullable field is defaulted or dropped", {"spec": {"replicas": None, "plain": None, "opt": None}},
     {"spec": {"replicas": 1, "mode": "Auto", "opt": None, "withDefault": {"b": 2}}}),
    ("nested objects when present, array items, map values",
     {"spec": {"nested": {}, "list": [{}, {"p": 1}, None], "map": {"k": {}}}},
     {"spec": {"replicas": 1, "mode": "Auto", "opt": "x", "withDefault": {"b": 2}, "nested": {"a": "A"},
               "list": [{"p": 80}, {"p": 1}, {"z": 0, "p": 80}], "map": {"k": {"q": True}}}}),
]


@pytest.mark.parametrize(("obj", "expected"), [c[1:] for c in DEFAULT_CASES], ids=[c[0] for c in DEFAULT_CASES])
def test_default(obj: dict, expected: dict) -> None:
    default(DEFAULTS, obj)
    assert obj == expected


def test_defaults_are_copies() -> None:
    schema = obj_schema(spec={"type": "object", "properties": {"l": {"type": "array", "items": {"type": "string"},
                                                                       "default": ["a"]}}})
    first, second = {"spec": {}}, {"spec": {}}
    default(schema, first)
    default(schema, second)
    first["spec"]["l"].append("b")
    assert second == {"spec": {"l": ["a"]}} and schema["properties"]["spec"]["properties"]["l"]["default"] == ["a"]


# ---- Pruning -------------------------------------------------------------------------------------

PRUNE_SCHEMA = obj_schema(
    spec={"type": "object", "properties": {
        "known": {"type": "string"},
        "list": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "integer"}}}},
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                 "properties": {"inner": {"type": "object", "properties": {"k": {"type": "string"}}}}},
        "labels": {"type": "object", "additionalProperties": {"type": "object", "properties": {
            "v": {"type": "string"}}}},
        "open": {"type": "object", "additionalProperties": True},
        "port": {"x-kubernetes-int-or-string": True},
        "template": {"type": "object", "x-kubernetes-embedded-resource": True,
                     "properties": {"spec": {"type": "object", "properties": {"x": {"type": "string"}}}}},
    }},
    status={"type": "object", "properties": {"ready": {"type": "boolean"}}},
)

PRUNE_CASES = [
    ("nothing unknown", {"apiVersion": "g/v1", "kind": "K", "metadata": {"name": "a", "labels": {}},
                         "spec": {"known": "x"}}, []),
    ("unknown fields at every level", {
        "apiVersion": "g/v1", "kind": "K", "metadata": {"name": "a"}, "extra": 1,
        "spec": {"known": "x", "bad": 1, "list": [{"a": 1, "b": 2}, {"c": 3}],
                 "free": {"anything": {"goes": 1}, "inner": {"k": "v", "drop": 1}},
                 "labels": {"x": {"v": "1", "w": "2"}}, "open": {"any": {"thing": 1}}, "port": {"weird": 1},
                 "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                              "spec": {"x": "1", "y": "2"}, "other": 1}},
        "status": {"ready": True, "phase": "x"}},
     ["extra", "spec.bad", "spec.free.inner.drop", "spec.labels.x.w", "spec.list[0].b", "spec.list[1].c",
      "spec.template.other", "spec.template.spec.y", "status.phase"]),
]


@pytest.mark.parametrize(("obj", "expected"), [c[1:] for c in PRUNE_CASES], ids=[c[0] for c in PRUNE_CASES])
def test_prune(obj: dict, expected: list) -> None:
    before = copy.deepcopy(obj)
    assert prune(PRUNE_SCHEMA, obj) == expected
    assert prune(PRUNE_SCHEMA, obj) == []  # idempotent
    if not expected:
        assert obj == before


def test_prune_keeps_what_it_should() -> None:
    obj = {"apiVersion": "g/v1", "kind": "K", "metadata": {"name": "a", "x": 1},
           "spec": {"free": {"anything": {"goes": 1}}, "open": {"any": 1}, "port": {"weird": 1},
                    "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}}}
    expected = copy.deepcopy(obj)
    assert prune(PRUNE_SCHEMA, obj) == []
    assert obj == expected


def test_prune_object_without_properties_empties_it() -> None:
    obj = {"spec": {"a": 1, "b": {"c": 2}}}
    assert prune(obj_schema(spec={"type": "object"}), obj) == ["spec.a", "spec.b"]
    assert obj == {"spec": {}}


def test_many_rules_share_one_time_budget() -> None:
    rule = {"rule": "self.l.all(x, self.l.all(y, x + y >= 0))"}  # ~26k steps each, under the per-call limit
    schema = obj_schema(spec={"type": "object", "properties": {"l": {"type": "array", "items": {"type": "integer"}}},
                              "x-kubernetes-validations": [rule] * 50})
    started = time.monotonic()
    errors = validate(schema, {"spec": {"l": list(range(40))}})
    assert time.monotonic() - started < structural.CEL_SECONDS + 1.5
    assert errors == [("spec", "object", "validation failed due to running out of cost budget, "
                                         "no further validation rules will be run")]


@pytest.mark.parametrize("expression", ["1", "''", "'line\\nbreak'", "self.nope"])
def test_unusable_message_expression_falls_back(expression: str) -> None:
    schema = ruled({"rule": "false", "messageExpression": expression})
    assert validate(schema, {"spec": {}}) == [("spec", "object", "failed rule: false")]


def test_rules_see_maps_lists_and_has() -> None:
    schema = obj_schema(spec={"type": "object", "x-kubernetes-validations": [
        {"rule": "!has(self.missing) && 'a' in self.labels && self.labels['a'] == 'b' && size(self.items) == 2"}],
        "properties": {"labels": {"type": "object", "additionalProperties": {"type": "string"}},
                       "items": {"type": "array", "items": {"type": "integer"}}}})
    assert validate(schema, {"spec": {"labels": {"a": "b"}, "items": [1, 2]}}) == []


def test_defaults_then_prune_then_validate_like_the_apiserver() -> None:
    schema = obj_schema(spec={"type": "object", "required": ["size"], "properties": {
        "size": {"type": "integer", "default": 3, "minimum": 1}}})
    assert structural_errors(schema) == []
    obj = {"apiVersion": "g/v1", "kind": "K", "metadata": {"name": "a"}, "spec": {"junk": True}}
    assert prune(schema, obj) == ["spec.junk"]
    default(schema, obj)
    assert obj["spec"] == {"size": 3} and validate(schema, obj) == []


V0 = "spec.versions[0].schema.openAPIV3Schema"


def test_structural_completeness_of_value_validations() -> None:
    """Kubernetes' "structural incomplete" example: junctors may only name fields specified outside them."""
    unspecified: dict = {}
    schema = {
        "type": "object",
        "properties": {"b": obj_schema(b={"type": "array"}), "c": {"type": "array", "items": {"type": "object"}},
                       "d": {"type": "array"}},
        "not": {"properties": {"a": unspecified, "b": {"not": {"properties": {"a": {}, "b": {"items": {}}}}},
                               "c": {"items": {"not": {"items": {"properties": {"a": {}}}}}},
                               "d": {"items": {}}}},
        "allOf": [{"properties": {"e": {}}}], "anyOf": [{"properties": {"f": {}}}],
        "oneOf": [{"properties": {"g": {}}}],
    }
    messages = {f"{path}: {message}" for path, _, message in structural_errors(schema, V0)}
    assert messages == {
        f"{V0}.properties[d].items: Required value: because it is defined in {V0}.not.properties[d].items",
        f"{V0}.properties[a]: Required value: because it is defined in {V0}.not.properties[a]",
        f"{V0}.properties[b].properties[a]: Required value: because it is defined in "
        f"{V0}.not.properties[b].not.properties[a]",
        f"{V0}.properties[b].properties[b].items: Required value: because it is defined in "
        f"{V0}.not.properties[b].not.properties[b].items",
        f"{V0}.properties[c].items.items: Required value: because it is defined in "
        f"{V0}.not.properties[c].items.not.items",
        f"{V0}.properties[e]: Required value: because it is defined in {V0}.allOf[0].properties[e]",
        f"{V0}.properties[f]: Required value: because it is defined in {V0}.anyOf[0].properties[f]",
        f"{V0}.properties[g]: Required value: because it is defined in {V0}.oneOf[0].properties[g]",
        f"{V0}.properties[b].properties[b].items: Required value: must be specified",
        f"{V0}.properties[d].items: Required value: must be specified",
    }


NESTED_CASES = [
    ("pattern error", obj_schema(foo={"type": "string", "pattern": "+"}),
     [(f"{P}.properties[foo].pattern", "+", "must be a valid regular expression, but isn't: "
                                            "error parsing regexp: missing argument to repetition operator: `+`")]),
    ("items array in a junctor", obj_schema(s={"type": "array", "items": {"type": "string"},
                                               "not": {"items": [{"type": "string"}]}}),
     [(f"{P}.properties[s].not.items", None, "Forbidden: items must be a schema object and not an array")]),
    ("int-or-string anyOf in another order", obj_schema(g={"x-kubernetes-int-or-string": True,
                                                           "anyOf": [{"type": "string"}, {"type": "integer"}]}),
     [(f"{P}.properties[g].anyOf[0].type", None, "Forbidden: must be empty to be structural"),
      (f"{P}.properties[g].anyOf[1].type", None, "Forbidden: must be empty to be structural")]),
    ("int-or-string allOf pattern", obj_schema(c={"x-kubernetes-int-or-string": True, "allOf": [
        {"anyOf": [{"type": "integer"}, {"type": "string"}]}, {"pattern": "abc"}]}), []),
    ("vendor extensions in a junctor", obj_schema(e={"type": "object", "x-kubernetes-embedded-resource": True,
                                                     "x-kubernetes-preserve-unknown-fields": True},
                                                  i={"x-kubernetes-int-or-string": True})
     | {"not": {"properties": {"e": {"x-kubernetes-embedded-resource": True},
                               "i": {"x-kubernetes-int-or-string": True}}}},
     [(f"{P}.not.properties[e].x-kubernetes-embedded-resource", None, "Forbidden: must be false to be structural"),
      (f"{P}.not.properties[i].x-kubernetes-int-or-string", None, "Forbidden: must be false to be structural")]),
    ("metadata with non-properties", obj_schema(metadata={"minimum": 42.0}),
     [(f"{P}.properties[metadata]", None, "Forbidden: must not specify anything other than name and generateName, "
                                          "but metadata is implicitly specified"),
      (f"{P}.properties[metadata].type", "", "must be object"),  # Kubernetes reports the empty type too
      (f"{P}.properties[metadata].type", None, "Required value: must not be empty for specified object fields")]),
]


@pytest.mark.parametrize(("schema", "expected"), [c[1:] for c in NESTED_CASES], ids=[c[0] for c in NESTED_CASES])
def test_structural_errors_of_kubernetes_examples(schema: dict, expected: list) -> None:
    assert sorted(structural_errors(schema), key=str) == sorted(expected, key=str)
