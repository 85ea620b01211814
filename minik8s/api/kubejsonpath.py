"""Kubernetes' JSONPath: kubectl's ``-o jsonpath`` expressions, ``additionalPrinterColumns`` and
the scale subresource's paths (not the workflows' reference paths: :mod:`minik8s.api.jsonpath`).

Kubernetes writes the latter without braces: ``.spec.replicas``, ``.status.conditions[0].type``,
``.metadata.labels['app\\.kubernetes\\.io/name']``, ``.items[*].name`` and filters
``.status.conditions[?(@.type=="Ready")].status``.  :func:`parse` checks one (ValueError with
a message), :func:`find` evaluates it to every value it names.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

Step = tuple[str, Any]  # ("field", name) | ("index", int) | ("all", None) | ("filter", (path, value))

_FIELD = re.compile(r"\.([A-Za-z0-9_$@-]+)")
_INDEX = re.compile(r"\[(-?\d+)\]")
_ALL = re.compile(r"\[\*\]|\.\*")
_QUOTED = re.compile(r"\[['\"]((?:[^'\"\\]|\\.)*)['\"]\]")
_FILTER = re.compile(r"\[\?\(@((?:\.[A-Za-z0-9_-]+)+)\s*==\s*(?:\"([^\"]*)\"|'([^']*)'|(-?\d+))\)\]")


def parse(path: str) -> list[Step]:
    """The steps of ``path``; ValueError when it is not a path of this form."""
    text = path.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    if text.startswith("$"):
        text = text[1:]
    if not text.startswith((".", "[")):
        raise ValueError("must be a simple json path starting with .")
    steps: list[Step] = []
    pos = 0
    while pos < len(text):
        m = _ALL.match(text, pos)
        if m:
            steps.append(("all", None))
        elif (m := _FIELD.match(text, pos)) is not None:
            steps.append(("field", m.group(1)))
        elif (m := _INDEX.match(text, pos)) is not None:
            steps.append(("index", int(m.group(1))))
        elif (m := _QUOTED.match(text, pos)) is not None:
            steps.append(("field", re.sub(r"\\(.)", r"\1", m.group(1))))
        elif (m := _FILTER.match(text, pos)) is not None:
            value: Any = m.group(2) if m.group(2) is not None else m.group(3)
            if value is None:
                value = int(m.group(4))
            steps.append(("filter", (m.group(1)[1:].split("."), value)))
        else:
            raise ValueError(f"unexpected {text[pos:]!r} in json path {path!r}")
        pos = m.end()
    return steps


def find(obj: Any, path: str) -> list[Any]:
    """Every value ``path`` names in ``obj`` (empty when none; a bad path names none)."""
    try:
        return evaluate(obj, path)
    except ValueError:
        return []


def evaluate(obj: Any, path: str) -> list[Any]:
    """Every value ``path`` names in ``obj``; ValueError when ``path`` is not a JSONPath."""
    steps = parse(path)
    current = [obj]
    for kind, arg in steps:
        nxt: list[Any] = []
        for value in current:
            if kind == "field" and isinstance(value, dict) and arg in value:
                nxt.append(value[arg])
            elif kind == "index" and isinstance(value, list) and -len(value) <= arg < len(value):
                nxt.append(value[arg])
            elif kind == "all":
                nxt += list(value.values()) if isinstance(value, dict) else list(value) if isinstance(value, list) \
                    else []
            elif kind == "filter" and isinstance(value, list):
                keys, wanted = arg
                for item in value:
                    got: Any = item
                    for key in keys:
                        got = got.get(key) if isinstance(got, dict) else None
                    if got == wanted or (got is not None and str(got) == str(wanted)):
                        nxt.append(item)
        current = nxt
    return current


def simple_fields(path: str) -> list[str] | None:
    """The field names of a path made only of fields (``.spec.replicas`` → ``["spec", "replicas"]``),
    else None."""
    try:
        steps = parse(path)
    except ValueError:
        return None
    if not steps or any(kind != "field" for kind, _ in steps):
        return None
    return [str(arg) for _, arg in steps]


# ------------------------------------------------------------------ templates
# kubectl's ``-o jsonpath=TEMPLATE``: text with ``{...}`` actions (k8s.io/client-go/util/jsonpath).
Node = tuple[str, Any]  # ("text", str) | ("path", str) | ("range", (path, [Node...]))


def _unquote(text: str) -> str:
    """A Go double-quoted string literal's value (``"\\n"`` → newline)."""
    body = text[1:-1]
    try:
        return body.encode("latin-1", "backslashreplace").decode("unicode_escape")
    except UnicodeDecodeError:
        return body


def _action_items(action: str) -> list[tuple[str, str]]:
    """The pieces of one ``{...}`` action: ("range", path), ("end", ""), ("text", literal) or ("path", path)."""
    text = action.strip()
    if text.startswith("range") and (len(text) == 5 or not (text[5].isalnum() or text[5] == "_")):
        return [("range", text[5:].strip())]
    if text == "end":
        return [("end", "")]
    items: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        char = text[pos]
        if char.isspace():
            pos += 1
        elif char == '"':
            end = pos + 1
            while end < len(text) and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            if end >= len(text):
                raise ValueError("unterminated quoted string")
            items.append(("text", _unquote(text[pos:end + 1])))
            pos = end + 1
        else:
            end, depth, quote = pos, 0, ""
            while end < len(text):
                c = text[end]
                if quote:
                    if c == "\\":
                        end += 1
                    elif c == quote:
                        quote = ""
                elif c in "'\"" and depth:
                    quote = c
                elif c == "[":
                    depth += 1
                elif c == "]":
                    depth -= 1
                elif c.isspace() and not depth:
                    break
                end += 1
            if depth > 0:
                raise ValueError("unterminated array")
            path = text[pos:end]
            if not path.startswith(("$", ".", "[", "@")):
                raise ValueError(f"unrecognized identifier {path}")
            items.append(("path", path))
            pos = end
    return items


def parse_template(template: str) -> list[Node]:
    """The nodes of a kubectl JSONPath template: literal text, ``{path}``, ``{"literal"}`` and
    ``{range path}...{end}`` (nested; an unclosed range runs to the end of the template).

    Raises ValueError with client-go's words (``unclosed action``, ``unterminated array``,
    ``not in range, nothing to end``) for a template it cannot parse; paths are checked by :func:`parse`.
    """
    root: list[Node] = []
    stack: list[list[Node]] = [root]
    pos = 0
    while pos < len(template):
        start = template.find("{", pos)
        if start < 0:
            stack[-1].append(("text", template[pos:]))
            break
        if start > pos:
            stack[-1].append(("text", template[pos:start]))
        end, quote = start + 1, False
        while end < len(template) and (quote or template[end] != "}"):
            if template[end] == '"':
                quote = not quote
            elif template[end] == "\\" and quote:
                end += 1
            end += 1
        if end >= len(template):
            raise ValueError("unclosed action")
        for kind, arg in _action_items(template[start + 1:end]):
            if kind == "range":
                parse(arg or ".")
                body: list[Node] = []
                stack[-1].append(("range", (arg, body)))
                stack.append(body)
            elif kind == "end":
                if len(stack) == 1:
                    raise ValueError("not in range, nothing to end")
                stack.pop()
            else:
                if kind == "path" and arg not in ("$", "@", "."):
                    parse(arg.replace("@", "", 1) if arg.startswith("@") else arg)
                stack[-1].append((kind, arg))
        pos = end + 1
    return root


def _path_values(data: Any, path: str) -> list[Any]:
    if path in ("$", "@", "."):
        return [data]
    return evaluate(data, path[1:] if path.startswith("@") else path)


def go_json(value: Any) -> str:
    """``value`` as Go's ``json.Marshal`` writes it: compact, map keys sorted, ``<>&`` escaped."""
    return _html_escaped(json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True))


def _html_escaped(text: str) -> str:
    """JSON text with ``<>&`` escaped, as Go's encoder writes them."""
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(char, escape)
    return text


def go_sprint(value: Any) -> str:
    """``value`` as Go's ``fmt.Sprint`` writes a decoded JSON value (``map[a:1 b:x]``, ``[1 2]``, ``<nil>``)."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, list):
        return "[" + " ".join(go_sprint(v) for v in value) + "]"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_sprint(value[k])}" for k in sorted(value)) + "]"
    return str(value)


def go_float(value: float) -> str:
    """A float64 as Go's ``%v`` writes it: the shortest digits that read back the same, in ``%e`` form
    when the exponent is below -4 or at least 6 (``1e+06``, ``123456``, ``1e-05``, ``0.5``, ``3``)."""
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if math.isnan(value):
        return "NaN"
    if value == 0:
        return "0" if math.copysign(1, value) > 0 else "-0"
    digits, exp = _shortest(value)
    sign = "-" if value < 0 else ""
    if exp < -4 or exp >= 6:  # strconv's 'g' with the shortest digits
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if exp < 0:
        return f"{sign}0.{'0' * (-exp - 1)}{digits}"
    whole, frac = digits[:exp + 1].ljust(exp + 1, "0"), digits[exp + 1:]
    return f"{sign}{whole}{'.' + frac if frac else ''}"


def _shortest(value: float) -> tuple[str, int]:
    """The shortest decimal digits of ``abs(value)`` (Python's ``repr``) and the exponent of the first."""
    text = repr(abs(value))
    if "e" in text:
        mantissa, _, exp = text.partition("e")
        return mantissa.replace(".", "").lstrip("0").rstrip("0") or "0", int(exp)
    whole, _, frac = text.partition(".")
    frac = frac.rstrip("0")
    if whole != "0":
        return (whole + frac).rstrip("0") or "0", len(whole) - 1
    stripped = frac.lstrip("0")
    return stripped, -(len(frac) - len(stripped)) - 1


def _text(value: Any) -> str:
    if isinstance(value, dict | list):
        return go_json(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_float(value)
    return str(value)


def execute(nodes: list[Node], data: Any) -> str:
    """The text of a parsed template (:func:`parse_template`) for ``data``: each action's values joined
    by a space, maps and lists as compact JSON, missing fields as nothing (kubectl's
    ``--allow-missing-template-keys``), a range's body once per value of its path."""
    out: list[str] = []
    for kind, arg in nodes:
        if kind == "text":
            out.append(arg)
        elif kind == "path":
            out.append(" ".join(_text(v) for v in _path_values(data, arg)))
        else:
            path, body = arg
            for value in _path_values(data, path or "."):
                out.append(execute(body, value))
    return "".join(out)


def result_sets(nodes: list[Node], data: Any) -> list[list[Any]]:
    """What each node of a parsed template gives for ``data``, as kubectl's ``-o jsonpath-as-json``
    prints them one JSON array each: a text node its text, a path its values, a range its body's
    sets once per value."""
    out: list[list[Any]] = []
    for kind, arg in nodes:
        if kind == "text":
            out.append([arg])
        elif kind == "path":
            out.append(_path_values(data, arg))
        else:
            path, body = arg
            for value in _path_values(data, path or "."):
                out += result_sets(body, value)
    return out


def go_json_compact(value: Any) -> str:
    """``value`` as Go's ``json.Marshal`` writes a value in its own field order (``<>&`` escaped)."""
    return _html_escaped(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def go_json_indent(value: Any) -> str:
    """``value`` as Go's ``json.MarshalIndent(value, "", "    ")`` writes it (keys sorted, ``<>&`` escaped)."""
    return _html_escaped(json.dumps(value, ensure_ascii=False, indent=4, sort_keys=True))


def template(text: str, data: Any) -> str:
    """Parse and execute a kubectl JSONPath template (ValueError when it cannot be parsed)."""
    return execute(parse_template(text), data)


def relaxed(path: str) -> str:
    """kubectl's relaxed JSONPath (custom columns, ``--sort-by``): ``a.b``, ``.a.b``, ``{a.b}`` and
    ``{.a.b}`` all become ``{.a.b}``; ValueError with kubectl's words for anything else."""
    if not path:
        return path
    m = re.fullmatch(r"\{\.?([^{}]+)\}|\.?([^{}]+)", path)
    if m is None:
        raise ValueError("unexpected path string, expected a 'name1.name2' or '.name1.name2' or '{name1.name2}' "
                         "or '{.name1.name2}'")
    return "{." + (m.group(1) or m.group(2)) + "}"
