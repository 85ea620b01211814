"""The OpenAPI v3 schemas of CustomResourceDefinitions: checking, validating, defaulting, pruning.

Kubernetes' behaviour followed (https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/
custom-resource-definitions/, sections named below); schemas and objects are plain JSON values:

* **Structural schema** -- :func:`structural_errors`: a non-empty ``type`` at every level (except
  under ``x-kubernetes-int-or-string``/``x-kubernetes-preserve-unknown-fields``), ``items`` for
  arrays, no ``$ref``/``definitions``/``patternProperties``/..., no ``additionalProperties`` beside
  ``properties``, nothing but value checks inside ``allOf``/``anyOf``/``oneOf``/``not``, root
  ``metadata`` restricting only ``name``/``generateName``, the ``x-kubernetes-embedded-resource``,
  ``-int-or-string`` and ``-list-type`` rules, regular expressions and CEL rules that compile, and
  defaults that validate and are pruned. Nesting is bounded (:data:`MAX_DEPTH`, :data:`MAX_NODES`).
* **Validation** -- :func:`validate`: kube-openapi's checks with apiextensions' messages (``Invalid
  value: "string": spec.replicas in body must be of type integer: "string"``, ``Required value``,
  ``Unsupported value: ...``, ``Too many: ...``, ``Duplicate value: ...``), embedded resources'
  ``apiVersion``/``kind``, list-type set/map uniqueness, then the **Validation rules**
  (``x-kubernetes-validations``, see :mod:`.cel`) unless a type error blocks them.
* **Defaulting** -- :func:`default`; **Pruning** -- :func:`prune`.

Causes are ``(field path, bad value or None, message)`` triples (the shape of
:func:`minik8s.api.errors.invalid`): with a value the message is the detail of an ``Invalid value``;
without one the message carries its own kind (``Required value``, ``Forbidden: ...``). Regular
expressions (``pattern``) run with RE2, as Go's ``regexp`` does: linear time, no backtracking.
"""

from __future__ import annotations

import copy
from typing import Any

from minik8s.apiserver.apiextensions import cel
from minik8s.apiserver.apiextensions.validation import (
    CEL_SECONDS,
    EMBEDDED,
    FIELD_PATH,
    INT_OR_STRING,
    MAX_DEPTH,
    PRESERVE,
    Cause,
    RuleRunner,
    Validator,
    compile_pattern,
    dict_at,
    forbidden,
    required,
    type_name,
    unsupported,
)

__all__ = ["CEL_SECONDS", "MAX_DEPTH", "MAX_NODES", "default", "prune", "structural_errors", "validate"]

#: Most schema nodes accepted in one openAPIV3Schema.
MAX_NODES = 20_000

_TYPES = ("array", "boolean", "integer", "number", "object", "string")
_REASONS = ("FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired")
_NOT_SUPPORTED = ("$ref", "additionalItems", "definitions", "dependencies", "id", "patternProperties")
_NESTED_FORBIDDEN = (
    ("type", "must be empty"), ("additionalProperties", "must be undefined"), ("default", "must be undefined"),
    ("title", "must be empty"), ("description", "must be empty"), ("nullable", "must be false"),
    ("x-kubernetes-preserve-unknown-fields", "must be false"), ("x-kubernetes-embedded-resource", "must be false"),
    ("x-kubernetes-int-or-string", "must be false"), ("x-kubernetes-list-map-keys", "must be empty"),
    ("x-kubernetes-list-type", "must be undefined"),
)
_JUNCTORS = ("allOf", "anyOf", "oneOf")
_INT_OR_STRING_ANYOF = [{"type": "integer"}, {"type": "string"}]
_RESOURCE_FIELDS = ("apiVersion", "kind", "metadata")
_ROOT, _ITEM, _FIELD = "root", "item", "field"
_EMPTY_TYPE = {_ROOT: "must not be empty at the root", _ITEM: "must not be empty for specified array items",
               _FIELD: "must not be empty for specified object fields"}


# ---- Structural schema ---------------------------------------------------------------------------


def structural_errors(schema: dict, path: str = "spec.validation.openAPIV3Schema") -> list[Cause]:
    """Causes that make ``schema`` (a CRD version's ``openAPIV3Schema``) invalid or non-structural.

    ``path`` names the schema in the causes (callers give ``spec.versions[i].schema.openAPIV3Schema``).
    Defaults are checked (validated against their schema and pruned) only once the schema is
    otherwise valid, as Kubernetes does. An empty list means the schema can be served.
    """
    if not isinstance(schema, dict):
        return [(path, type_name(schema), "must be an object")]
    check = _SchemaCheck()
    check.node(schema, path, _ROOT, 0)
    if not check.errors:
        check.defaults(schema, path, 0, True)
    return check.errors


class _SchemaCheck:
    def __init__(self) -> None:
        self.errors: list[Cause] = []
        self.nodes = 0

    def _bounded(self, path: str, depth: int) -> bool:
        self.nodes += 1
        if depth > MAX_DEPTH:
            self.errors.append(forbidden(path, f"must not be nested more than {MAX_DEPTH} levels deep"))
            return False
        if self.nodes > MAX_NODES:
            if self.nodes == MAX_NODES + 1:
                self.errors.append(forbidden(path, f"must not have more than {MAX_NODES} schemas in all"))
            return False
        return True

    def node(self, s: Any, path: str, level: str, depth: int) -> None:
        if not self._bounded(path, depth):
            return
        if not isinstance(s, dict):
            self.errors.append((path, type_name(s), "must be an object"))
            return
        err = self.errors.append
        t = s.get("type") or ""
        props = dict_at(s, "properties")
        items, addl = s.get("items"), s.get("additionalProperties")
        ios, emb, pres = (s.get(k) is True for k in (INT_OR_STRING, EMBEDDED, PRESERVE))
        self._api_rules(s, path)
        if ios and t:
            err((f"{path}.type", t, "must be empty if x-kubernetes-int-or-string is true"))
        # the structural invariants
        if t == "array" and items is None:
            err(required(f"{path}.items", "must be specified"))
        if emb and t != "object":
            err((f"{path}.type", t, "must be object if x-kubernetes-embedded-resource is true") if t
                else required(f"{path}.type", "must be object if x-kubernetes-embedded-resource is true"))
        elif not t and not ios and not pres:
            err(required(f"{path}.type", _EMPTY_TYPE[level]))
        if emb and addl is not None:
            err(forbidden(f"{path}.additionalProperties", "must not be used if x-kubernetes-embedded-resource is set"))
        if level == _ROOT and addl is not None:
            err(forbidden(f"{path}.additionalProperties", "must not be used at the root"))
        if level == _ROOT and t and t != "object":
            err((f"{path}.type", t, "must be object at the root"))
        if ios and pres:
            err((f"{path}.{PRESERVE}", True, "must be false if x-kubernetes-int-or-string is true"))
        if ios and emb:
            err((f"{path}.{EMBEDDED}", True, "must be false if x-kubernetes-int-or-string is true"))
        self._resource_fields(s, props, path, level == _ROOT, level == _ROOT or emb)
        if emb and not pres and not props:
            err(required(f"{path}.properties",
                          "must not be empty if x-kubernetes-embedded-resource is true without "
                          "x-kubernetes-preserve-unknown-fields"))
        self._list_type(s, path, t)
        self._value_checks(s, s, path, path, depth)
        self._rules(s, path)
        for key in sorted(props):
            self.node(props[key], f"{path}.properties[{key}]", _FIELD, depth + 1)
        if isinstance(items, dict):
            self.node(items, f"{path}.items", _ITEM, depth + 1)
        if isinstance(addl, dict):
            self.node(addl, f"{path}.additionalProperties", _FIELD, depth + 1)

    def _api_rules(self, s: dict, path: str) -> None:
        """The CRD API's own rules for every schema, nested ones included (apiextensions validation)."""
        err = self.errors.append
        t, props, addl = s.get("type") or "", dict_at(s, "properties"), s.get("additionalProperties")
        if t == "null":
            err(forbidden(f"{path}.type", "type cannot be set to null, use nullable as an alternative"))
        elif t and t not in _TYPES:
            err(unsupported(f"{path}.type", t, _TYPES))
        for key in _NOT_SUPPORTED:
            if key in s:
                err(forbidden(f"{path}.{key}", f"{key} is not supported"))
        if isinstance(s.get("items"), list):
            err(forbidden(f"{path}.items", "items must be a schema object and not an array"))
        if s.get("uniqueItems") is True:
            err(forbidden(f"{path}.uniqueItems",
                          "uniqueItems cannot be set to true since the runtime complexity becomes quadratic"))
        if addl is not None and props and addl is not True:
            err(forbidden(f"{path}.additionalProperties", "additionalProperties and properties are mutual exclusive"))
        if s.get(PRESERVE) is False:
            err((f"{path}.{PRESERVE}", False, "must be true or undefined"))

    def _resource_fields(self, s: dict, props: dict, path: str, root: bool, check: bool) -> None:
        err = self.errors.append
        for name in ("kind", "apiVersion"):
            sub = props.get(name)
            if check and isinstance(sub, dict) and sub.get("type") != "string":
                err((f"{path}.properties[{name}].type", sub.get("type", ""), "must be string"))
        meta = props.get("metadata")
        if not check or not isinstance(meta, dict):
            return
        if meta.get("type") != "object":
            err((f"{path}.properties[metadata].type", meta.get("type", ""), "must be object"))
        meta_props = meta.get("properties") or {}
        restricted = set(meta) - {"type", "default", "properties"} or set(meta_props) - {"name", "generateName"}
        if root and restricted:
            err(forbidden(f"{path}.properties[metadata]", "must not specify anything other than name and "
                           "generateName, but metadata is implicitly specified"))

    def _list_type(self, s: dict, path: str, t: str) -> None:
        err = self.errors.append
        list_type, keys = s.get("x-kubernetes-list-type"), s.get("x-kubernetes-list-map-keys")
        if list_type is not None and list_type not in ("atomic", "map", "set"):
            err(unsupported(f"{path}.x-kubernetes-list-type", list_type, ("atomic", "map", "set")))
        elif list_type is not None and t != "array":
            err((f"{path}.x-kubernetes-list-type", list_type, "must only be used if type is array"))
        if list_type == "map":
            items = dict_at(s, "items")
            if not keys:
                err(required(f"{path}.x-kubernetes-list-map-keys",
                             "must not be empty if x-kubernetes-list-type is map"))
            if items and items.get("type") != "object":
                err((f"{path}.items.type", items.get("type", ""),
                     "must be object if parent array's x-kubernetes-list-type is map"))
            for i, key in enumerate(keys or []):
                if key not in (items.get("properties") or {}):
                    err((f"{path}.x-kubernetes-list-map-keys[{i}]", key,
                         "entries must all be names of item properties"))
        elif keys is not None:
            err(forbidden(f"{path}.x-kubernetes-list-map-keys", "must be empty if x-kubernetes-list-type is not map"))

    def _value_checks(self, v: dict, s: dict | None, spath: str, vpath: str, depth: int) -> None:
        """Checks of ``v``'s value validations (pattern, junctors) against the structural node ``s``."""
        pattern = v.get("pattern")
        if isinstance(pattern, str):
            try:
                compile_pattern(pattern)
            except ValueError as exc:
                self.errors.append((f"{vpath}.pattern", pattern,
                                    f"must be a valid regular expression, but isn't: {exc}"))
        for junctor in _JUNCTORS:
            branches = v.get(junctor)
            if not isinstance(branches, list):
                continue
            for i, branch in enumerate(branches):
                if junctor == "anyOf" and branches == _INT_OR_STRING_ANYOF and v is s:
                    continue
                if junctor == "allOf" and i == 0 and isinstance(branch, dict) and \
                        branch.get("anyOf") == _INT_OR_STRING_ANYOF and v is s:
                    continue
                self._nested(branch, s, spath, f"{vpath}.{junctor}[{i}]", depth + 1)
        if "not" in v:
            self._nested(v["not"], s, spath, f"{vpath}.not", depth + 1)

    def _nested(self, v: Any, s: dict | None, spath: str, vpath: str, depth: int, complete: bool = True) -> None:
        """A schema under allOf/anyOf/oneOf/not: value checks only, on fields the structural part has."""
        if not self._bounded(vpath, depth):
            return
        if not isinstance(v, dict):
            self.errors.append((vpath, type_name(v), "must be an object"))
            return
        err = self.errors.append
        self._api_rules(v, vpath)
        if s is None and complete:
            err(required(spath, f"because it is defined in {vpath}"))
            complete = False
        for key, rule in _NESTED_FORBIDDEN:
            if v.get(key) not in (None, False, "", []):
                err(forbidden(f"{vpath}.{key}", f"{rule} to be structural"))
        self._value_checks(v, s, spath, vpath, depth)
        sprops = dict_at(s or {}, "properties")
        for key, sub in sorted(dict_at(v, "properties").items()):
            if key == "metadata":
                err(forbidden(f"{vpath}.properties[metadata]", "must not be specified in a nested context"))
            target = sprops.get(key)
            if target is None and s and isinstance(s.get("additionalProperties"), dict):
                target = s["additionalProperties"]
            self._nested(sub, target, f"{spath}.properties[{key}]", f"{vpath}.properties[{key}]", depth + 1,
                         complete)
        if isinstance(v.get("items"), dict):
            items = s.get("items") if s and isinstance(s.get("items"), dict) else None
            self._nested(v["items"], items, f"{spath}.items", f"{vpath}.items", depth + 1, complete)

    def _rules(self, s: dict, path: str) -> None:
        rules = s.get("x-kubernetes-validations")
        if rules is None:
            return
        if not isinstance(rules, list):
            self.errors.append((f"{path}.x-kubernetes-validations", type_name(rules), "must be an array"))
            return
        names = frozenset({"self", "oldSelf"})
        for i, rule in enumerate(rules):
            rpath = f"{path}.x-kubernetes-validations[{i}]"
            rule = rule if isinstance(rule, dict) else {}
            text = rule.get("rule")
            if not isinstance(text, str) or not text.strip():
                self.errors.append(required(f"{rpath}.rule"))
            else:
                try:
                    cel.compile_expression(text, names)
                except cel.CELError as exc:
                    self.errors.append((f"{rpath}.rule", text, f"compilation failed: {exc}"))
            expression = rule.get("messageExpression")
            if isinstance(expression, str) and expression:
                try:
                    cel.compile_expression(expression, names)
                except cel.CELError as exc:
                    self.errors.append((f"{rpath}.messageExpression", expression,
                                        f"messageExpression compilation failed: {exc}"))
            message = rule.get("message")
            if isinstance(message, str) and "\n" in message:
                self.errors.append((f"{rpath}.message", message, "must not contain line breaks"))
            reason = rule.get("reason")
            if reason is not None and reason not in _REASONS:
                self.errors.append(unsupported(f"{rpath}.reason", reason, _REASONS))
            field_path = rule.get("fieldPath")
            if field_path is not None and not (isinstance(field_path, str) and FIELD_PATH.fullmatch(field_path)):
                self.errors.append((f"{rpath}.fieldPath", field_path, "must be a valid path"))

    def defaults(self, s: Any, path: str, depth: int, root: bool) -> None:
        """Every ``default`` must validate against its schema and hold no field pruning would drop."""
        if not isinstance(s, dict) or depth > MAX_DEPTH:
            return
        if s.get("default") is not None:
            value = copy.deepcopy(s["default"])
            where = f"{path}.default"
            pruned = prune(s, value, resource_root=False)
            if pruned:
                self.errors.append((where, s["default"], "must not have unknown fields, got " + ", ".join(pruned)))
            self.errors.extend(Validator(where).schema_pass(s, value))
        for key, sub in sorted((s.get("properties") or {}).items()):
            if not (root and key == "metadata"):
                self.defaults(sub, f"{path}.properties[{key}]", depth + 1, False)
        for key in ("items", "additionalProperties"):
            self.defaults(s.get(key), f"{path}.{key}", depth + 1, False)


# ---- Validation ----------------------------------------------------------------------------------


def validate(schema: dict, obj: Any, old: Any | None = None) -> list[Cause]:
    """Causes that make the custom resource ``obj`` invalid under its version's ``schema``.

    First the OpenAPI checks (every cause), then -- unless a type error makes them meaningless
    (Kubernetes then adds ``some validation rules were not checked ...``) -- the
    ``x-kubernetes-validations`` rules with ``self`` bound to each node; transition rules (those
    naming ``oldSelf``) run only on updates (``old`` given) where the old object has the node (object
    fields by name, ``x-kubernetes-list-type: map`` items by their keys). The rules share a cost
    budget and :data:`CEL_SECONDS` of wall clock; past it Kubernetes' cost message ends validation.
    """
    check = Validator("")
    errors = check.schema_pass(schema, obj)
    if check.type_errors and _has_rules(schema, 0):
        errors.append(("<nil>", None, 'Invalid value: "null": some validation rules were not checked because '
                                      "the object was invalid; correct the existing errors to complete validation"))
    else:
        RuleRunner(errors).run(schema, obj, old, old is not None, "", 0)
    return [(path or "<nil>", value, message) for path, value, message in errors]


def _has_rules(s: Any, depth: int) -> bool:
    """Whether any node of the schema has ``x-kubernetes-validations`` (Kubernetes then has a CEL validator)."""
    if not isinstance(s, dict) or depth > MAX_DEPTH:
        return False
    if s.get("x-kubernetes-validations"):
        return True
    children = [*dict_at(s, "properties").values(), s.get("items"), s.get("additionalProperties")]
    return any(_has_rules(child, depth + 1) for child in children)


# ---- Defaulting and Pruning ----------------------------------------------------------------------


def default(schema: dict, obj: Any) -> None:
    """Apply the schema's ``default`` values to ``obj`` in place (Kubernetes' **Defaulting**).

    A property with a ``default`` that is missing -- or ``null`` while not ``nullable`` -- gets a copy
    of the default; other ``null`` properties that are not ``nullable`` are dropped ("pruned before
    defaulting"). Defaults are applied inside present objects only (a missing parent is not
    created), inside every array item and ``additionalProperties`` value, and inside defaults just
    applied. Kubernetes does this when reading from etcd and on every write.
    """
    _default(schema, obj, 0)


def _default(s: Any, x: Any, depth: int) -> None:
    if not isinstance(s, dict) or depth > MAX_DEPTH:
        return
    props = dict_at(s, "properties")
    addl, items = s.get("additionalProperties"), s.get("items")
    if isinstance(x, dict):
        for key, sub in props.items():
            if not isinstance(sub, dict) or (key in x and (x[key] is not None or sub.get("nullable") is True)):
                continue
            if sub.get("default") is not None:
                x[key] = copy.deepcopy(sub["default"])
            elif key in x:
                del x[key]
        for key, value in x.items():
            _default(props.get(key, addl if isinstance(addl, dict) else None), value, depth + 1)
    elif isinstance(x, list) and isinstance(items, dict):
        for i, value in enumerate(x):
            if value is None and items.get("default") is not None and items.get("nullable") is not True:
                x[i] = copy.deepcopy(items["default"])
            _default(items, x[i], depth + 1)


def prune(schema: dict, obj: Any, resource_root: bool = True) -> list[str]:
    """Drop the fields of ``obj`` the schema does not specify, in place (Kubernetes' **Pruning**).

    Returns the dropped paths, sorted (``spec.foo``, ``spec.items[2].bar``). Kept: everything under
    ``x-kubernetes-preserve-unknown-fields: true`` (known properties there are still pruned
    inside), values of ``additionalProperties`` (pruned by its schema when it is one), and
    ``apiVersion``, ``kind`` and ``metadata`` of the resource root (``resource_root``) and of every
    ``x-kubernetes-embedded-resource`` (their metadata is the caller's to prune to ObjectMeta).
    """
    pruned: list[str] = []
    _prune(schema, obj, "", resource_root, pruned, 0)
    return sorted(pruned)


def _prune(s: Any, x: Any, path: str, resource: bool, pruned: list[str], depth: int) -> None:
    if not isinstance(s, dict) or depth > MAX_DEPTH or s.get(INT_OR_STRING) is True:
        return
    if isinstance(x, dict):
        props = dict_at(s, "properties")
        addl = s.get("additionalProperties")
        keep_all = s.get(PRESERVE) is True or addl is True
        resource = resource or s.get(EMBEDDED) is True
        for key in list(x):
            child = f"{path}.{key}" if path else key
            if resource and key in _RESOURCE_FIELDS:
                continue
            sub = props.get(key, addl if isinstance(addl, dict) else None)
            if sub is not None:
                _prune(sub, x[key], child, False, pruned, depth + 1)
            elif not keep_all:
                del x[key]
                pruned.append(child)
    elif isinstance(x, list) and isinstance(s.get("items"), dict):
        for i, value in enumerate(x):
            _prune(s["items"], value, f"{path}[{i}]", False, pruned, depth + 1)
