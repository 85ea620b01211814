"""Go's ``text/template``, as kubectl's ``-o go-template`` runs it on an object (a JSON-shaped value).

What it covers: text and actions (``{{ }}``, with ``{{-``/``-}}`` trimming and ``{{/* */}}``
comments), pipelines (``a | b x``), fields (``.a.b``, ``$x.a``, ``$``), variables (``$x := ...``,
``$x = ...``), ``if``/``else if``/``else``, ``range`` (maps in key order, with ``$i, $v :=`` and
``else``; ``break``, ``continue``), ``with``/``else``, parenthesized pipelines, literals (strings,
raw strings, numbers, ``true``, ``false``, ``nil``), Go's builtin functions (``and or not len
index slice print printf println eq ne lt le gt ge html js urlquery``) and kubectl's own
(``exists``, ``base64decode``). Values print as Go's ``fmt`` prints them (``map[a:b]``, ``[x y]``,
``<nil>``); a missing or null field prints ``<no value>``.

Errors are :class:`TemplateError` with Go's text (``template: output:1:11: executing "output" at
<.a.b>: can't evaluate field b in type interface {}``); ``define``, ``template`` and ``block`` are not
supported (kubectl's users write one template).
"""

from __future__ import annotations

import base64
import binascii
import re
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from minik8s.api.kubejsonpath import go_float, go_sprint

NAME = "output"
#: The functions a template may call: Go's builtins and kubectl's own (``exists``, ``base64decode``).
FUNCTIONS = frozenset({"and", "or", "not", "len", "index", "slice", "print", "printf", "println", "eq", "ne",
                       "lt", "le", "gt", "ge", "html", "js", "urlquery", "exists", "base64decode"})


class TemplateError(Exception):
    """A template that does not parse, or fails while it runs: Go's message."""


class GoInt(int):
    """An integer constant of the template itself: Go's ``int`` (the object's integers are ``int64``)."""


class _Missing:
    """A field that is not there (Go's invalid reflect.Value): prints ``<no value>``."""

    def __repr__(self) -> str:
        return "<no value>"


MISSING = _Missing()


# ------------------------------------------------------------------ lexing
@dataclass
class _Tok:
    kind: str  # text, field, var, ident, string, number, bool, nil, dot, pipe, lparen, rparen, assign,
    #            declare, comma, eof
    value: Any
    pos: int


_ACTION = re.compile(r"\{\{(- )?(.*?)( -)?\}\}", re.S)
_WORD = re.compile(r"""
    (?P<space>\s+)
  | (?P<comment>/\*.*?\*/)
  | (?P<declare>:=)
  | (?P<assign>=)
  | (?P<pipe>\|)
  | (?P<lparen>\()
  | (?P<rparen>\))
  | (?P<comma>,)
  | (?P<string>"(?:[^"\\]|\\.)*")
  | (?P<raw>`[^`]*`)
  | (?P<char>'(?:[^'\\]|\\.)+')
  | (?P<number>[-+]?(?:0[xX][0-9a-fA-F_]+|(?:\d[\d_]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?))
  | (?P<var>\$[A-Za-z0-9_]*)
  | (?P<field>(?:\.[A-Za-z_][A-Za-z0-9_]*)+)
  | (?P<dot>\.)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
""", re.X | re.S)


def _unquote(text: str) -> str:
    try:
        return str(bytes(text[1:-1], "utf-8").decode("unicode_escape").encode("latin-1").decode("utf-8"))
    except (UnicodeDecodeError, UnicodeEncodeError):
        return text[1:-1]


def _line_col(source: str, pos: int) -> str:
    line = source.count("\n", 0, pos) + 1
    last = source.rfind("\n", 0, pos)
    return f"{line}:{pos if last < 0 else pos - last - 1}"


def _tokens(source: str, start: int, text: str) -> list[_Tok]:
    out: list[_Tok] = []
    i = 0
    while i < len(text):
        m = _WORD.match(text, i)
        if m is None:
            raise TemplateError(f"template: {NAME}:{_line_col(source, start + i)}: unexpected "
                                f"\"{text[i]}\" in command")
        kind, value = m.lastgroup or "", m.group()
        pos = start + i
        i = m.end()
        if kind in ("space", "comment"):
            continue
        if kind == "field" and out and out[-1].kind in ("var", "rparen") and out[-1].pos + len(str(out[-1].value)) \
                == pos:
            out.append(_Tok("chain", value, pos))
            continue
        if kind == "ident" and value in ("true", "false"):
            out.append(_Tok("bool", value == "true", pos))
        elif kind == "ident" and value == "nil":
            out.append(_Tok("nil", None, pos))
        elif kind == "string":
            out.append(_Tok("string", _unquote(value), pos))
        elif kind == "raw":
            out.append(_Tok("string", value[1:-1], pos))
        elif kind == "char":
            out.append(_Tok("number", GoInt(ord(_unquote(value))), pos))
        elif kind == "number":
            clean = value.replace("_", "")
            number: int | float
            try:
                number = GoInt(int(clean, 0))
            except ValueError:
                number = float(clean)
            out.append(_Tok("number", number, pos))
        else:
            out.append(_Tok(kind, value, pos))
    out.append(_Tok("eof", None, start + len(text)))
    return out


# ------------------------------------------------------------------ parsing
@dataclass
class _Cmd:
    args: list[Any]  # each: ("field", names, pos) ("var", name, fields, pos) ("dot",) ("lit", v) ("call", name)
    pos: int         # ("pipe", _Pipe, fields)


@dataclass
class _Pipe:
    cmds: list[_Cmd]
    decl: list[str] = field(default_factory=list)
    assign: bool = False
    pos: int = 0
    text: str = ""


@dataclass
class _Node:
    kind: str  # text, action, if, range, with, break, continue
    value: Any = None
    pipe: _Pipe | None = None
    body: list[_Node] = field(default_factory=list)
    orelse: list[_Node] = field(default_factory=list)


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source

    def error(self, pos: int, message: str) -> TemplateError:
        return TemplateError(f"template: {NAME}:{_line_col(self.source, pos).split(':')[0]}: {message}")

    def parse(self) -> list[_Node]:
        items: list[tuple[str, Any, int]] = []  # ("text", str, pos) or ("action", text, pos)
        source, i = self.source, 0
        while True:
            j = source.find("{{", i)
            if j < 0:
                items.append(("text", source[i:], i))
                break
            end = source.find("}}", j + 2)
            if end < 0:
                raise self.error(j, "unclosed action")
            inner = source[j + 2:end]
            left = inner.startswith("- ") or inner == "-"
            right = inner.endswith(" -")
            text = source[i:j]
            if left:
                text = text.rstrip(" \t\r\n")
            items.append(("text", text, i))
            body_start = j + 2 + (2 if left else 0)
            body = inner[2 if left else 0:len(inner) - (2 if right else 0)]
            items.append(("action", body, body_start))
            i = end + 2
            if right:
                while i < len(source) and source[i] in " \t\r\n":
                    i += 1
        self.items = items
        self.at = 0
        nodes, stop = self._list(())
        if stop is not None:
            raise self.error(stop[1], f"unexpected {{{{{stop[0]}}}}}")
        return nodes

    def _list(self, stops: tuple[str, ...]) -> tuple[list[_Node], tuple[str, int, list[_Tok]] | None]:
        nodes: list[_Node] = []
        while self.at < len(self.items):
            kind, value, pos = self.items[self.at]
            self.at += 1
            if kind == "text":
                if value:
                    nodes.append(_Node("text", value))
                continue
            toks = _tokens(self.source, pos, value)
            if toks[0].kind == "eof":
                if value.strip().startswith("/*"):
                    continue
                raise self.error(pos, "missing value for command")
            head = toks[0].value if toks[0].kind == "ident" else None
            if head in ("end", "else"):
                if head not in stops and not (head == "else" and "else" in stops):
                    raise self.error(pos, f"unexpected {{{{{head}}}}}")
                return nodes, (head, pos, toks[1:])
            if head in ("if", "with", "range"):
                nodes.append(self._control(head, toks[1:], pos))
            elif head in ("break", "continue"):
                nodes.append(_Node(head))
            elif head in ("define", "template", "block"):
                raise self.error(pos, f"{{{{{head}}}}} is not supported here")
            else:
                nodes.append(_Node("action", pipe=self._pipe(toks, value, range_decl=False)))
        if stops:
            raise self.error(len(self.source), "unexpected EOF")
        return nodes, None

    def _control(self, kind: str, toks: list[_Tok], pos: int) -> _Node:
        node = _Node(kind, pipe=self._pipe(toks, "", range_decl=kind == "range"))
        node.body, stop = self._list(("end", "else"))
        assert stop is not None
        if stop[0] == "else":
            rest = stop[2]
            if rest and rest[0].kind == "ident" and rest[0].value in ("if", "with") and kind == rest[0].value:
                node.orelse = [self._control(kind, rest[1:], stop[1])]
                return node  # the nested one consumed the {{end}}
            node.orelse, stop = self._list(("end",))
        return node

    def _pipe(self, toks: list[_Tok], text: str, range_decl: bool) -> _Pipe:
        pipe = _Pipe([], pos=toks[0].pos, text=text)
        i = 0
        # declarations: $x := / $x = / $i, $v :=
        if toks[0].kind == "var":
            if toks[1].kind in ("declare", "assign"):
                pipe.decl, pipe.assign, i = [toks[0].value], toks[1].kind == "assign", 2
            elif range_decl and toks[1].kind == "comma" and len(toks) > 3 and toks[2].kind == "var" \
                    and toks[3].kind in ("declare", "assign"):
                pipe.decl, pipe.assign, i = [toks[0].value, toks[2].value], toks[3].kind == "assign", 4
        cmds, i = self._cmds(toks, i)
        if toks[i].kind != "eof":
            raise self.error(toks[i].pos, f"unexpected {toks[i].value!r} in command")
        if not cmds:
            raise self.error(pipe.pos, "missing value for command")
        pipe.cmds = cmds
        return pipe

    def _cmds(self, toks: list[_Tok], i: int) -> tuple[list[_Cmd], int]:
        cmds: list[_Cmd] = []
        while True:
            cmd = _Cmd([], toks[i].pos)
            while toks[i].kind not in ("eof", "pipe", "rparen"):
                arg, i = self._operand(toks, i)
                cmd.args.append(arg)
            if not cmd.args:
                raise self.error(toks[i].pos, "missing value for command")
            cmds.append(cmd)
            if toks[i].kind != "pipe":
                return cmds, i
            i += 1

    def _operand(self, toks: list[_Tok], i: int) -> tuple[Any, int]:
        t = toks[i]
        if t.kind == "field":
            return ("field", t.value.split(".")[1:], t.pos), i + 1
        if t.kind == "var":
            fields: list[str] = []
            if toks[i + 1].kind == "chain":
                fields = toks[i + 1].value.split(".")[1:]
                i += 1
            return ("var", t.value, fields, t.pos), i + 1
        if t.kind == "dot":
            return ("dot",), i + 1
        if t.kind in ("string", "number", "bool", "nil"):
            return ("lit", t.value), i + 1
        if t.kind == "ident":
            if t.value not in FUNCTIONS:
                raise self.error(t.pos, f'function "{t.value}" not defined')
            return ("call", t.value, t.pos), i + 1
        if t.kind == "lparen":
            cmds, j = self._cmds(toks, i + 1)
            if toks[j].kind != "rparen":
                raise self.error(toks[j].pos, "unclosed left paren")
            fields = []
            if toks[j + 1].kind == "chain":
                fields = toks[j + 1].value.split(".")[1:]
                j += 1
            return ("pipe", _Pipe(cmds, pos=t.pos), fields), j + 1
        raise self.error(t.pos, f"unexpected {t.value!r} in operand")


# ------------------------------------------------------------------ printing values as Go's fmt
def fmt_value(v: Any, top: bool = True) -> str:
    """``v`` as Go's ``%v`` prints the value of a JSON document (maps sorted by key); ``top``: as an
    action prints it (a nil value as ``<no value>``)."""
    if v is MISSING or v is None:  # a nil interface: "<no value>" when an action prints it
        return "<no value>" if top else "<nil>"
    return go_sprint(v)


def _go_type(v: Any) -> str:
    if v is None or v is MISSING:
        return "interface {}"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, GoInt):
        return "int"
    if isinstance(v, int):
        return "int64"
    if isinstance(v, float):
        return "float64"
    if isinstance(v, str):
        return "string"
    if isinstance(v, dict):
        return "map[string]interface {}"
    return "[]interface {}"


def _quote(s: str) -> str:
    out = []
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) < 0x20 or ord(ch) == 0x7f:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


_VERB = re.compile(r"%([-+# 0]*)(\d+|\*)?(?:\.(\d+|\*)?)?([a-zA-Z%])")


def sprintf(fmt: str, args: list[Any]) -> str:
    """Go's ``fmt.Sprintf`` for the verbs templates use (``%v %s %d %q %f %e %g %t %x %X %o %c %%``)."""
    out: list[str] = []
    i = 0
    last = 0
    for m in _VERB.finditer(fmt):
        out.append(fmt[last:m.start()])
        last = m.end()
        flags, width, prec, verb = m.group(1), m.group(2), m.group(3), m.group(4)
        if verb == "%":
            out.append("%")
            continue
        if i >= len(args):
            out.append(f"%!{verb}(MISSING)")
            continue
        arg = args[i]
        i += 1
        out.append(_format_one(arg, flags, int(width) if width and width != "*" else None,
                               int(prec) if prec and prec != "*" else (0 if m.group(0).count(".") and prec is None
                                                                       else None), verb))
    out.append(fmt[last:])
    if i < len(args):
        out.append("%!(EXTRA " + ", ".join(f"{_go_type(a)}={fmt_value(a, False)}" for a in args[i:]) + ")")
    return "".join(out)


def _pad(text: str, flags: str, width: int | None, numeric: bool) -> str:
    if width is None or len(text) >= width:
        return text
    if "-" in flags:
        return text.ljust(width)
    if "0" in flags and numeric:
        sign = text[0] if text[:1] in "+-" else ""
        return sign + text[len(sign):].rjust(width - len(sign), "0")
    return text.rjust(width)


def _format_one(arg: Any, flags: str, width: int | None, prec: int | None, verb: str) -> str:
    value = None if arg is MISSING else arg
    bad = f"%!{verb}({_go_type(value)}={fmt_value(value, False)})"
    plus = "+" if "+" in flags else (" " if " " in flags else "")
    if verb == "v":
        return _pad(fmt_value(value, False), flags, width, False)
    if verb == "s":
        if isinstance(value, str):
            return _pad(value[:prec] if prec is not None else value, flags, width, False)
        if isinstance(value, (dict, list)):
            return _pad(fmt_value(value, False), flags, width, False)
        return bad
    if verb == "q":
        if isinstance(value, str):
            return _pad(_quote(value), flags, width, False)
        if isinstance(value, dict):
            return "map[" + " ".join(f"{_quote(k)}:{_format_one(value[k], '', None, None, 'q')}"
                                     for k in sorted(value)) + "]"
        if isinstance(value, list):
            return "[" + " ".join(_format_one(x, "", None, None, "q") for x in value) + "]"
        if isinstance(value, int) and not isinstance(value, bool):
            return "'" + chr(value) + "'"
        return bad
    if verb == "t":
        return _pad(fmt_value(value), flags, width, False) if isinstance(value, bool) else bad
    if verb in "dxXoc" and isinstance(value, int) and not isinstance(value, bool):
        if verb == "c":
            return _pad(chr(value), flags, width, False)
        body = {"d": str(abs(value)), "x": f"{abs(value):x}", "X": f"{abs(value):X}", "o": f"{abs(value):o}"}[verb]
        return _pad(("-" if value < 0 else plus) + body, flags, width, True)
    if verb in "xX" and isinstance(value, str):
        return _pad(value.encode().hex() if verb == "x" else value.encode().hex().upper(), flags, width, False)
    if verb in "feEgG" and isinstance(value, (int, float)) and not isinstance(value, bool):
        if isinstance(value, int):
            return bad
        p = 6 if prec is None and verb in "feE" else prec
        if verb in "gG" and p is None:
            text = go_float(value)
        else:
            text = format(value, f"{'+' if plus == '+' else ''}.{p}{verb}")
            if verb in "eE":
                text = re.sub(r"e([-+])(\d)$", r"e\g<1>0\2", text)
        if plus == "+" and not text.startswith(("-", "+")):
            text = "+" + text
        return _pad(text, flags, width, True)
    return bad


def sprint(args: list[Any]) -> str:
    """Go's ``fmt.Sprint``: a space between operands when neither is a string."""
    out = ""
    for i, a in enumerate(args):
        a = None if a is MISSING else a
        if i > 0 and not isinstance(a, str) and not isinstance(args[i - 1], str):
            out += " "
        out += fmt_value(a, False)
    return out


# ------------------------------------------------------------------ running
def truth(v: Any) -> bool:
    """Go's template truth: false, 0, nil, and empty strings, maps and lists are false."""
    if v is None or v is MISSING or v is False:
        return False
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return v != 0
    if isinstance(v, (str, dict, list, tuple)):
        return len(v) > 0
    return True


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


def _kind(v: Any) -> str:
    """Go's basic kind of a value, as the comparison functions group them (every integer is one kind)."""
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        return "string"
    return "other"


def _corrupt_at(text: str) -> int:
    """Where Go's ``base64.StdEncoding`` finds ``text`` corrupt: the first byte outside its alphabet,
    else the start of the last, incomplete quantum."""
    alphabet = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
    body = text.rstrip("=")
    for i, ch in enumerate(body):
        if ch not in alphabet:
            return i
    return len(body) - len(body) % 4 if len(body) % 4 else len(body)


def _js(s: str) -> str:
    table = {"\\": "\\\\", "'": "\\'", '"': '\\"', "<": "\\u003C", ">": "\\u003E", "&": "\\u0026",
             "=": "\\u003D", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
    return "".join(table.get(c, c if ord(c) >= 0x20 else f"\\u{ord(c):04X}") for c in s)


def _html(s: str) -> str:
    return (s.replace("&", "&amp;").replace("'", "&#39;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&#34;").replace("\x00", "\ufffd"))


class _Runner:
    def __init__(self, source: str, root: Any) -> None:
        self.source = source
        self.vars: list[tuple[str, Any]] = [("$", root)]
        self.funcs: dict[str, Callable[..., Any]] = {
            "and": truth, "or": truth,  # short-circuit: evaluated by call() itself
            "not": lambda x: not truth(x),
            "len": self._len, "index": self._index, "slice": self._slice,
            "print": lambda *a: sprint(list(a)),
            "printf": lambda f, *a: sprintf(f, list(a)),
            "println": lambda *a: " ".join(fmt_value(None if x is MISSING else x, False) for x in a) + "\n",
            "eq": self._eq, "ne": lambda a, b: not self._eq(a, b),
            "lt": lambda a, b: self._cmp(a, b, "lt") < 0, "le": lambda a, b: self._cmp(a, b, "le") <= 0,
            "gt": lambda a, b: self._cmp(a, b, "gt") > 0, "ge": lambda a, b: self._cmp(a, b, "ge") >= 0,
            "html": lambda *a: _html(sprint(list(a))), "js": lambda *a: _js(sprint(list(a))),
            "urlquery": lambda *a: urllib.parse.quote_plus(sprint(list(a))),
            "exists": self._exists, "base64decode": self._base64decode,
        }
        self.where = ""
        self.pos = 0

    # errors
    def fail(self, message: str) -> TemplateError:
        return TemplateError(f'template: {NAME}:{_line_col(self.source, self.pos)}: executing "{NAME}" at '
                             f"<{self.where}>: {message}")

    # builtins that can fail
    def _len(self, v: Any) -> int:
        if isinstance(v, (str, dict, list)):
            return len(v)
        raise self.fail(f"error calling len: len of type {_go_type(v)}")

    def _index(self, v: Any, *keys: Any) -> Any:
        for k in keys:
            if isinstance(v, dict):
                if not isinstance(k, str):
                    raise self.fail(f"error calling index: value has type {_go_type(k)}; should be string")
                v = v.get(k, MISSING)
            elif isinstance(v, list) and not (isinstance(k, int) and not isinstance(k, bool)):
                raise self.fail(f"error calling index: cannot index slice/array with type {_go_type(k)}")
            elif isinstance(v, list):
                if not 0 <= k < len(v):
                    raise self.fail(f"error calling index: index out of range: {k}")
                v = v[k]
            elif v is None or v is MISSING:
                raise self.fail("error calling index: index of untyped nil")
            else:
                raise self.fail(f"error calling index: can't index item of type {_go_type(v)}")
        return v

    def _slice(self, v: Any, *idx: int) -> Any:
        if not isinstance(v, (str, list)):
            raise self.fail(f"error calling slice: can't slice item of type {_go_type(v)}")
        lo = idx[0] if idx else 0
        hi = idx[1] if len(idx) > 1 else len(v)
        if not 0 <= lo <= hi <= len(v):
            raise self.fail(f"error calling slice: index out of range: {hi if hi > len(v) else lo}")
        return v[lo:hi]

    def _eq(self, a: Any, *others: Any) -> bool:
        a = None if a is MISSING else a
        for b in others:
            b = None if b is MISSING else b
            if _kind(a) != _kind(b) and a is not None and b is not None:
                raise self.fail("error calling eq: incompatible types for comparison")
            if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
                raise self.fail("error calling eq: non-comparable type")
            if a == b:
                return True
        return False

    def _cmp(self, a: Any, b: Any, name: str) -> int:
        if _kind(a) != _kind(b) or _kind(a) not in ("string", "int", "float"):
            raise self.fail(f"error calling {name}: incompatible types for comparison")
        return (a > b) - (a < b)

    def _exists(self, v: Any, *keys: str) -> bool:
        for k in keys:
            if not isinstance(v, dict) or k not in v:
                return False
            v = v[k]
        return True

    def _base64decode(self, v: Any) -> str:
        text = str(v)
        try:
            return base64.b64decode(text, validate=True).decode("utf-8", errors="replace")
        except (binascii.Error, ValueError):
            raise self.fail("error calling base64decode: base64 decode failed: illegal base64 data at input byte "
                            f"{_corrupt_at(text)}") from None

    # evaluation
    def run(self, nodes: list[_Node], dot: Any, out: list[str]) -> None:
        for node in nodes:
            if node.kind == "text":
                out.append(node.value)
            elif node.kind == "action":
                assert node.pipe is not None
                value = self.pipe(node.pipe, dot)
                if not node.pipe.decl:
                    out.append(fmt_value(value))
            elif node.kind in ("if", "with"):
                assert node.pipe is not None
                mark = len(self.vars)
                value = self.pipe(node.pipe, dot)
                if truth(value):
                    self.run(node.body, value if node.kind == "with" else dot, out)
                else:
                    self.run(node.orelse, dot, out)
                del self.vars[mark:]
            elif node.kind == "range":
                self.range(node, dot, out)
            elif node.kind == "break":
                raise _Break
            elif node.kind == "continue":
                raise _Continue

    def range(self, node: _Node, dot: Any, out: list[str]) -> None:
        assert node.pipe is not None
        decl, node.pipe.decl = node.pipe.decl, []
        try:
            value = self.pipe(node.pipe, dot)
        finally:
            node.pipe.decl = decl
        if isinstance(value, dict):
            pairs: list[tuple[Any, Any]] = [(k, value[k]) for k in sorted(value)]
        elif isinstance(value, list):
            pairs = list(enumerate(value))
        elif value is None or value is MISSING:
            pairs = []
        else:
            raise self.fail(f"range can't iterate over {fmt_value(value, False)}")
        if not pairs:
            self.run(node.orelse, dot, out)
            return
        mark = len(self.vars)
        for key, item in pairs:
            del self.vars[mark:]
            if len(decl) == 1:
                self.vars.append((decl[0], item))
            elif len(decl) == 2:
                self.vars += [(decl[0], key), (decl[1], item)]
            try:
                self.run(node.body, item, out)
            except _Break:
                break
            except _Continue:
                continue
        del self.vars[mark:]

    def pipe(self, pipe: _Pipe, dot: Any) -> Any:
        value: Any = MISSING
        first = True
        for cmd in pipe.cmds:
            value = self.command(cmd, dot, None if first else value, not first)
            first = False
        if pipe.decl:
            if pipe.assign:
                for i in range(len(self.vars) - 1, -1, -1):
                    if self.vars[i][0] == pipe.decl[0]:
                        self.vars[i] = (pipe.decl[0], value)
                        break
                else:
                    raise self.fail(f"undefined variable: {pipe.decl[0]}")
            else:
                self.vars.append((pipe.decl[0], value))
        return value

    def command(self, cmd: _Cmd, dot: Any, piped: Any, has_piped: bool) -> Any:
        head = cmd.args[0]
        if head[0] == "call":
            return self.call(head[1], head[2], cmd.args[1:], dot, piped, has_piped)
        if len(cmd.args) > 1 or has_piped:
            self.where = self._text(head)
            raise self.fail(f"can't give argument to non-function {self._text(head)}")
        return self.operand(head, dot)

    def call(self, name: str, pos: int, args: list[Any], dot: Any, piped: Any, has_piped: bool) -> Any:
        if name not in self.funcs:
            raise TemplateError(f'template: {NAME}:{_line_col(self.source, pos).split(":")[0]}: function "{name}" '
                                "not defined")
        values = [self.operand(a, dot) for a in args] if name not in ("and", "or") else None
        if name in ("and", "or"):
            result: Any = MISSING
            for a in [*args, ("lit", piped)] if has_piped else args:
                result = self.operand(a, dot)
                if truth(result) is (name == "or"):
                    return result
            return result
        assert values is not None
        if has_piped:
            values.append(piped)
        self.where, self.pos = " ".join([name, *(self._text(a) for a in args)]), pos
        try:
            return self.funcs[name](*values)
        except TypeError:
            raise self.fail(f"wrong number of args for {name}: got {len(values)}") from None

    def operand(self, arg: Any, dot: Any) -> Any:
        kind = arg[0]
        if kind == "lit":
            return arg[1]
        if kind == "dot":
            return dot
        if kind == "field":
            return self.fields(dot, arg[1], arg[2], "." + ".".join(arg[1]))
        if kind == "var":
            for name, value in reversed(self.vars):
                if name == arg[1]:
                    return self.fields(value, arg[2], arg[3], arg[1] + "".join("." + f for f in arg[2]))
            raise TemplateError(f'template: {NAME}:{_line_col(self.source, arg[3]).split(":")[0]}: undefined '
                                f"variable \"{arg[1]}\"")
        if kind == "pipe":
            value = self.pipe(arg[1], dot)
            return self.fields(value, arg[2], arg[1].pos, "(...)") if arg[2] else value
        if kind == "call":
            return self.call(arg[1], arg[2], [], dot, None, False)
        raise AssertionError(kind)

    def fields(self, value: Any, names: list[str], pos: int, text: str) -> Any:
        for i, name in enumerate(names):
            if isinstance(value, dict):
                value = value.get(name, MISSING)
                continue
            if value is None or value is MISSING:  # Go's zero value: its fields are zero values too
                return MISSING
            self.where = text
            self.pos = pos + sum(len(n) + 1 for n in names[:max(i - 1, 0)]) if i else pos
            raise self.fail(f"can't evaluate field {name} in type interface {{}}")
        return MISSING if value is None else value

    def _text(self, arg: Any) -> str:
        if arg[0] == "field":
            return "." + ".".join(arg[1])
        if arg[0] == "var":
            return arg[1] + "".join("." + f for f in arg[2])
        if arg[0] == "dot":
            return "."
        if arg[0] == "lit":
            return fmt_value(arg[1], False)
        return str(arg[1])


def parse(source: str) -> list[_Node]:
    """The template's nodes; TemplateError (``template: output:1: unclosed action``) when it does not parse."""
    return _Parser(source).parse()


def render(source: str, data: Any) -> str:
    """``source`` run on ``data`` (a JSON value); TemplateError when it does not parse or fails."""
    nodes = parse(source)
    out: list[str] = []
    _Runner(source, data).run(nodes, data, out)
    return "".join(out)
