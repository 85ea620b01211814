"""Checks of custom resources against a CRD's structural schema, and its validation rules.

The halves of :func:`minik8s.apiserver.apiextensions.structural.validate` ("Validation" and
"Validation rules" in https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/
custom-resource-definitions/): :class:`Validator` runs kube-openapi's checks (types, formats,
bounds, ``required``, ``enum``, junctors, list-type uniqueness, embedded resources) with the
messages kube-apiserver's apiextensions turns them into; :class:`RuleRunner` evaluates the
``x-kubernetes-validations`` rules with :mod:`.cel`. Both walk at most :data:`MAX_DEPTH` levels.
"""

from __future__ import annotations

import base64
import datetime
import functools
import ipaddress
import json
import math
import re
from typing import Any

import re2
from celpy import celtypes

from minik8s.apiserver.apiextensions import cel

Cause = tuple[str, Any, str]

#: Deepest schema nesting followed (levels of properties/items/additionalProperties/junctors).
MAX_DEPTH = 64
#: Wall-clock seconds all CEL rules of one validation may take together.
CEL_SECONDS = 0.5

PRESERVE, EMBEDDED, INT_OR_STRING = ("x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource",
                                     "x-kubernetes-int-or-string")
#: A rule's ``fieldPath``: ``.name``, ``['key']`` and ``[index]`` steps.
FIELD_PATH = re.compile(r"(\.[A-Za-z_][A-Za-z0-9_]*|\['(?:[^'\\]|\\.)*'\]|\[\d+\])+")


def dict_at(s: dict, key: str) -> dict:
    """``s[key]`` when it is an object, else ``{}``."""
    value = s.get(key)
    return value if isinstance(value, dict) else {}


def _q(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def required(path: str, detail: str = "") -> Cause:
    return (path, None, f"Required value: {detail}" if detail else "Required value")


def forbidden(path: str, detail: str) -> Cause:
    return (path, None, f"Forbidden: {detail}")


def unsupported(path: str, value: Any, supported: Any) -> Cause:
    shown = ", ".join(_q(v if isinstance(v, str) else _q(v)) for v in supported)
    return (path, None, f"Unsupported value: {_q(value)}: supported values: {shown}")


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    names: dict[type, str] = {str: "string", list: "array", dict: "object"}
    return names.get(type(value), type(value).__name__)


def _is_type(value: Any, t: str) -> bool:
    kind = type_name(value)
    if t == "integer" and kind == "number":
        return math.isfinite(value) and float(value).is_integer()
    return kind == t or (t == "number" and kind == "integer")


def _json_equal(a: Any, b: Any) -> bool:
    """JSON equality: ``true`` is not ``1``; ``1`` equals ``1.0``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    return a == b and type(a) in (int, float, str, type(None)) and type(b) in (int, float, str, type(None))


def _num(value: Any) -> str:
    """A number as Go's ``%v`` prints a float64 (``5``, ``1.5``)."""
    return str(int(value)) if isinstance(value, (int, float)) and float(value).is_integer() else str(value)


# RE2's error kinds as Go's regexp names them ("error parsing regexp: missing closing ): `a(`").
_GO_REGEXP_ERRORS = {
    "missing )": "missing closing )", "missing ]": "missing closing ]",
    "no argument for repetition operator": "missing argument to repetition operator",
    "bad repetition operator": "invalid nested repetition operator", "invalid repetition size": "invalid repeat count",
    "invalid perl operator": "invalid or unsupported Perl syntax", "pattern too large - compile failed":
    "expression too large",
}


@functools.lru_cache(maxsize=256)
def compile_pattern(pattern: str) -> Any:
    """An RE2 regular expression (Go's syntax, linear-time matching, at most 8 MiB of automaton).

    Raises ValueError with Go's ``error parsing regexp: ...`` message when it does not compile.
    """
    options = re2.Options()
    options.max_mem = 8 << 20
    options.log_errors = False
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        raw = exc.args[0] if exc.args else b""
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
        kind, _, arg = text.partition(": ")
        kind = _GO_REGEXP_ERRORS.get(kind, kind)
        raise ValueError(f"error parsing regexp: {kind}: `{arg}`" if arg else f"error parsing regexp: {kind}") from None


def _is_date(text: str) -> bool:
    return bool(re.fullmatch(r"\d{4}-\d{2}-\d{2}", text)) and _parses(datetime.date.fromisoformat, text)


def _is_datetime(text: str) -> bool:
    return bool(re.fullmatch(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})", text)) \
        and _parses(datetime.datetime.fromisoformat, text.upper().replace("Z", "+00:00"))


def _parses(parse: Any, text: str) -> bool:
    try:
        parse(text)
    except ValueError:
        return False
    return True


_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-{v}[0-9a-fA-F]{3}-{w}[0-9a-fA-F]{3}-[0-9a-fA-F]{12}"
_FORMATS: dict[str, Any] = {
    "date": _is_date,
    "date-time": _is_datetime,
    "byte": lambda t: _parses(lambda x: base64.b64decode(x, validate=True), t),
    "uuid": lambda t: bool(re.fullmatch(_UUID.replace("{v}", "[0-9a-fA-F]").replace("{w}", "[0-9a-fA-F]"), t)),
    "uuid3": lambda t: bool(re.fullmatch(_UUID.replace("{v}", "3").replace("{w}", "[89abAB]"), t)),
    "uuid4": lambda t: bool(re.fullmatch(_UUID.replace("{v}", "4").replace("{w}", "[89abAB]"), t)),
    "uuid5": lambda t: bool(re.fullmatch(_UUID.replace("{v}", "5").replace("{w}", "[89abAB]"), t)),
    "email": lambda t: bool(re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", t)),
    "hostname": lambda t: len(t) <= 253 and bool(re.fullmatch(
        r"[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?)*", t)),
    "ipv4": lambda t: _parses(ipaddress.IPv4Address, t),
    "ipv6": lambda t: _parses(ipaddress.IPv6Address, t),
    "cidr": lambda t: "/" in t and _parses(lambda x: ipaddress.ip_network(x, strict=False), t),
    "mac": lambda t: bool(re.fullmatch(r"[0-9A-Fa-f]{2}([:-][0-9A-Fa-f]{2}){5}", t)),
    "uri": lambda t: bool(re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*:\S+|/\S*", t)),
    "duration": lambda t: bool(re.fullmatch(r"[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h|d|w))+|[-+]?0", t)),
}


class Validator:
    """kube-openapi's schema checks with apiextensions' messages; paths are named from the body root.

    ``prefix`` is put before each cause's field path (a default's schema path); messages keep the
    path inside the value (``spec.x in body ...``), as Kubernetes does.
    """

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.errors: list[Cause] = []
        self.type_errors = 0

    def schema_pass(self, s: dict, value: Any) -> list[Cause]:
        self.value(s, value, "", 0)
        return self.errors

    def _field(self, name: str) -> str:
        if not self.prefix:
            return name
        return self.prefix + (name if name.startswith("[") or not name else "." + name)

    def _invalid(self, name: str, value: Any, detail: str) -> None:
        self.errors.append((self._field(name), value, f"{name} in body {detail}" if name else f"in body {detail}"))

    def value(self, s: Any, x: Any, name: str, depth: int) -> None:
        if not isinstance(s, dict) or depth > MAX_DEPTH:
            return
        t, ios = s.get("type") or "", s.get(INT_OR_STRING) is True
        if x is None and (s.get("nullable") is True or not (t or ios)):
            return
        if ios and not (isinstance(x, str) or _is_type(x, "integer")) or t and not _is_type(x, t):
            self.type_errors += 1
            self._invalid(name, type_name(x), f"must be of type {'integer,string' if ios else t}: "
                                               f"{_q(type_name(x))}")
            return
        if isinstance(x, str):
            self._string(s, x, name)
        elif isinstance(x, (int, float)) and not isinstance(x, bool):
            self._number(s, x, name)
        elif isinstance(x, list):
            self._array(s, x, name, depth)
        elif isinstance(x, dict):
            self._object(s, x, name, depth)
        enum = s.get("enum")
        if isinstance(enum, list) and not any(_json_equal(x, e) for e in enum):
            self.errors.append(unsupported(self._field(name), x, enum))
        self._junctors(s, x, name, depth)

    def _string(self, s: dict, x: str, name: str) -> None:
        if isinstance(s.get("maxLength"), int) and len(x) > s["maxLength"]:
            self.errors.append((self._field(name), None, f"Too long: may not be more than {s['maxLength']} bytes"))
        if isinstance(s.get("minLength"), int) and len(x) < s["minLength"]:
            self._invalid(name, x, f"should be at least {s['minLength']} chars long")
        pattern = s.get("pattern")
        if isinstance(pattern, str):
            try:
                matched = compile_pattern(pattern).search(x) is not None
            except ValueError:
                matched = True  # refused when the CRD was written
            if not matched:
                self._invalid(name, x, f"should match '{pattern}'")
        check = _FORMATS.get(s.get("format") or "")
        if check is not None and not check(x):
            self._invalid(name, x, f"must be of type {s['format']}: {_q(x)}")

    def _number(self, s: dict, x: float, name: str) -> None:
        top, bottom, step = s.get("maximum"), s.get("minimum"), s.get("multipleOf")
        if isinstance(top, (int, float)):
            if s.get("exclusiveMaximum") is True and x >= top:
                self._invalid(name, x, f"should be less than {_num(top)}")
            elif x > top:
                self._invalid(name, x, f"should be less than or equal to {_num(top)}")
        if isinstance(bottom, (int, float)):
            if s.get("exclusiveMinimum") is True and x <= bottom:
                self._invalid(name, x, f"should be greater than {_num(bottom)}")
            elif x < bottom:
                self._invalid(name, x, f"should be greater than or equal to {_num(bottom)}")
        if isinstance(step, (int, float)) and step > 0 and not float(x / step).is_integer():
            self._invalid(name, x, f"should be a multiple of {_num(step)}")

    def _array(self, s: dict, x: list, name: str, depth: int) -> None:
        if isinstance(s.get("maxItems"), int) and len(x) > s["maxItems"]:
            self.errors.append((self._field(name), None,
                                f"Too many: {len(x)}: must have at most {s['maxItems']} items"))
        if isinstance(s.get("minItems"), int) and len(x) < s["minItems"]:
            self._invalid(name, len(x), f"should have at least {s['minItems']} items")
        if s.get("uniqueItems") is True and _first_duplicate(x, lambda item: item) is not None:
            self._invalid(name, "", "shouldn't contain duplicates")
        list_type, keys = s.get("x-kubernetes-list-type"), s.get("x-kubernetes-list-map-keys") or []
        if list_type == "set":
            dup = _first_duplicate(x, lambda item: item)
            if dup is not None:
                self.errors.append((self._field(f"{name}[{dup}]"), None, f"Duplicate value: {_q(x[dup])}"))
        elif list_type == "map":
            key_of = functools.partial(_map_key, keys)
            dup = _first_duplicate(x, key_of)
            if dup is not None:
                self.errors.append((self._field(f"{name}[{dup}]"), None, f"Duplicate value: {_q(key_of(x[dup]))}"))
        for i, item in enumerate(x):
            self.value(s.get("items"), item, f"{name}[{i}]", depth + 1)

    def _object(self, s: dict, x: dict, name: str, depth: int) -> None:
        if isinstance(s.get("maxProperties"), int) and len(x) > s["maxProperties"]:
            self.errors.append((self._field(name), None,
                                f"Too many: {len(x)}: must have at most {s['maxProperties']} items"))
        if isinstance(s.get("minProperties"), int) and len(x) < s["minProperties"]:
            self._invalid(name, len(x), f"should have at least {s['minProperties']} properties")
        for key in s.get("required") or []:
            if key not in x:
                self.errors.append(required(self._field(f"{name}.{key}" if name else key)))
        if s.get(EMBEDDED) is True:
            for key in ("apiVersion", "kind"):
                child = self._field(f"{name}.{key}" if name else key)
                if key not in x:
                    self.errors.append(required(child, "must not be empty"))
                elif not isinstance(x[key], str):
                    self.errors.append((child, x[key], "must be a string"))
        props = dict_at(s, "properties")
        addl = s.get("additionalProperties")
        for key, item in x.items():
            sub = props.get(key, addl if isinstance(addl, dict) else None)
            self.value(sub, item, f"{name}.{key}" if name else key, depth + 1)

    def _junctors(self, s: dict, x: Any, name: str, depth: int) -> None:
        def passes(branch: Any) -> bool:
            probe = Validator(self.prefix)
            probe.value(branch, x, name, depth + 1)
            return not probe.errors

        for branch in s.get("allOf") or []:
            self.value(branch, x, name, depth + 1)
        if isinstance(s.get("anyOf"), list) and s["anyOf"] and not any(passes(b) for b in s["anyOf"]):
            self._quoted(name, "must validate at least one schema (anyOf)")
        if isinstance(s.get("oneOf"), list) and s["oneOf"]:
            valid = sum(passes(b) for b in s["oneOf"])
            if valid != 1:
                found = "Found none valid" if not valid else f"Found {valid} valid alternatives"
                self._quoted(name, f"must validate one and only one schema (oneOf). {found}")
        if isinstance(s.get("not"), dict) and passes(s["not"]):
            self._quoted(name, "must not validate the schema (not)")

    def _quoted(self, name: str, detail: str) -> None:
        self.errors.append((self._field(name), "", f"{_q(name)} {detail}"))


def _map_key(keys: list, item: Any) -> Any:
    return {k: item.get(k) for k in keys} if isinstance(item, dict) else item


def _first_duplicate(items: list, key_of: Any) -> int | None:
    """Index of the first item equal (as JSON) to an earlier one; hashing keeps it linear."""
    seen: set[str] = set()
    for i, item in enumerate(items):
        marker = json.dumps(key_of(item), sort_keys=True, default=str)
        if marker in seen:
            return i
        seen.add(marker)
    return None


class RuleRunner:
    """Kubernetes' **Validation rules**: ``x-kubernetes-validations`` evaluated at every node."""

    def __init__(self, errors: list[Cause]) -> None:
        self.errors = errors
        self.budget = cel.Budget(seconds=CEL_SECONDS)
        self.stopped = False

    def run(self, s: Any, x: Any, old: Any, has_old: bool, path: str, depth: int) -> None:
        if self.stopped or not isinstance(s, dict) or x is None or depth > MAX_DEPTH:
            return
        for rule in s.get("x-kubernetes-validations") or []:
            if isinstance(rule, dict) and not self.stopped:
                self._rule(rule, s, x, old, has_old, path)
        props = dict_at(s, "properties")
        addl, items = s.get("additionalProperties"), s.get("items")
        if isinstance(x, dict):
            for key, value in x.items():
                sub = props.get(key, addl if isinstance(addl, dict) else None)
                old_has = isinstance(old, dict) and key in old
                self.run(sub, value, old[key] if old_has else None, has_old and old_has,
                         f"{path}.{key}" if path else key, depth + 1)
        elif isinstance(x, list) and isinstance(items, dict):
            keys = s.get("x-kubernetes-list-map-keys") or []
            olds = {}
            if has_old and s.get("x-kubernetes-list-type") == "map" and isinstance(old, list):
                olds = {json.dumps(_map_key(keys, o), sort_keys=True): o for o in old}
            for i, value in enumerate(x):
                marker = json.dumps(_map_key(keys, value), sort_keys=True) if olds else ""
                self.run(items, value, olds.get(marker), marker in olds, f"{path}[{i}]", depth + 1)

    def _rule(self, rule: dict, s: dict, x: Any, old: Any, has_old: bool, path: str) -> None:
        text = rule.get("rule")
        if not isinstance(text, str):
            return
        try:
            ast = cel.compile_expression(text, frozenset({"self", "oldSelf"}))
        except cel.CELError:
            return  # refused when the CRD was written
        transition = _names_old_self(text)
        if transition and not has_old:
            return
        variables = {"self": cel.to_cel(x)}
        if transition:
            variables["oldSelf"] = cel.to_cel(old)
        shown = str(rule.get("message") or "").strip() or text.strip()
        t = s.get("type") or ""
        try:
            result = cel.evaluate(ast, variables, self.budget)
        except cel.OutOfBudget:
            self.stopped = True
            if self.budget.steps > 0 and not self.budget.expired():
                self.errors.append((path, t, "'operation cancelled: actual cost limit exceeded': no further validation "
                                             f"rules will be run due to call cost exceeds limit for rule: {shown}"))
            else:
                self.errors.append((path, t, "validation failed due to running out of cost budget, "
                                             "no further validation rules will be run"))
            return
        except cel.CELError as exc:
            detail = str(exc)
            if detail == "no such overload":
                self.errors.append((path, t, f"'{detail}': call arguments did not match a supported operator, "
                                             f"function or macro signature for rule: {shown}"))
            else:
                self.errors.append((path, t, f"{detail} evaluating rule: {shown}"))
            return
        if isinstance(result, celtypes.BoolType) and bool(result):
            return
        message = self._message(rule, variables) or (str(rule["message"]).strip() if rule.get("message")
                                                     else f"failed rule: {shown}")
        where = path + _field_path_suffix(rule.get("fieldPath"))
        reason = rule.get("reason") or "FieldValueInvalid"
        if reason == "FieldValueForbidden":
            self.errors.append((where, None, f"Forbidden: {message}"))
        elif reason == "FieldValueRequired":
            self.errors.append((where, None, f"Required value: {message}"))
        elif reason == "FieldValueDuplicate":
            self.errors.append((where, None, f"Duplicate value: {_q(t)}: {message}"))
        else:
            self.errors.append((where, t, message))

    def _message(self, rule: dict, variables: dict) -> str | None:
        """The ``messageExpression``'s string, or None to fall back to ``message`` (Kubernetes' rules)."""
        expression = rule.get("messageExpression")
        if not isinstance(expression, str) or not expression:
            return None
        try:
            ast = cel.compile_expression(expression, frozenset({"self", "oldSelf"}))
            value = cel.evaluate(ast, variables, self.budget)
        except (cel.CELError, cel.OutOfBudget):
            return None
        if not isinstance(value, str) or not value.strip() or "\n" in value or len(value) > 5000:
            return None
        return str(value).strip()


def _names_old_self(text: str) -> bool:
    return re.search(r"\boldSelf\b", text) is not None


def _field_path_suffix(field_path: Any) -> str:
    """``.spec['a.b'][0]`` → ``.spec[a.b][0]`` (the rule's ``fieldPath`` as Kubernetes prints it)."""
    if not isinstance(field_path, str) or not FIELD_PATH.fullmatch(field_path):
        return ""
    return re.sub(r"\['((?:[^'\\]|\\.)*)'\]", r"[\1]", field_path)


