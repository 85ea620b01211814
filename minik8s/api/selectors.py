"""Label and field selectors with Kubernetes semantics.

* :class:`LabelSelector` -- the ``?labelSelector=`` string syntax of ``labels.Parse``
  (``app=web,tier!=db,env in (prod,staging),!legacy``) and the ``metav1.LabelSelector``
  object (``matchLabels`` / ``matchExpressions``) of ``LabelSelectorAsSelector``.
* :class:`FieldSelector` -- the ``?fieldSelector=`` syntax of ``fields.ParseSelector``
  (``spec.nodeName=node-1,status.phase!=Running``).

Both are immutable, pure (no I/O) and render back to a canonical string with ``str()``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from minik8s.api.validation import label_value_errors, qualified_name_errors

__all__ = ["FieldSelector", "LabelSelector", "Operator", "Requirement"]

#: Requirement operators: ``=`` (``==`` is read as ``=``), ``!=``, ``in``, ``notin``,
#: ``exists`` (bare key) and ``!`` (does not exist).
Operator = Literal["=", "!=", "in", "notin", "exists", "!"]


@dataclass(frozen=True)
class Requirement:
    """One requirement of a selector: ``key``, ``operator`` and ``values``.

    ``values`` holds exactly one value for ``=`` and ``!=``, one or more sorted distinct
    values for ``in`` and ``notin``, and nothing for ``exists`` and ``!``. Instances are
    built by the selector parsers, which validate them.
    """

    key: str
    operator: Operator
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Evaluate against a label (or field) map like ``labels.Requirement.Matches``.

        ``=`` and ``in`` need the key present with a listed value; ``!=`` and ``notin``
        also match when the key is absent; ``exists`` / ``!`` test presence only.
        """
        present = self.key in labels
        if self.operator == "exists":
            return present
        if self.operator == "!":
            return not present
        if self.operator in ("=", "in"):
            return present and labels[self.key] in self.values
        # "!=" and "notin"
        return not present or labels[self.key] not in self.values

    def __str__(self) -> str:
        """Canonical text: ``k``, ``!k``, ``k=v``, ``k!=v``, ``k in (a,b)``, ``k notin (a,b)``."""
        if self.operator == "exists":
            return self.key
        if self.operator == "!":
            return f"!{self.key}"
        if self.operator in ("=", "!="):
            return f"{self.key}{self.operator}{self.values[0]}"
        return f"{self.key} {self.operator} ({','.join(self.values)})"


# ---------------------------------------------------------------------------------------
# Label selector string lexer and parser (labels.Parse)

_SPECIAL = frozenset("=!(),<>")
_WHITESPACE = frozenset(" \t\r\n\v\f")

# token kinds
_IDENT = "identifier"
_END = "end of string"


def _tokenize(text: str) -> list[tuple[str, str]]:
    """Split selector text into (kind, literal) tokens; kind is the literal for symbols."""
    tokens: list[tuple[str, str]] = []
    i = 0
    n = len(text)
    while i < n:
        char = text[i]
        if char in _WHITESPACE:
            i += 1
            continue
        if char in _SPECIAL:
            two = text[i : i + 2]
            if two in ("==", "!="):
                tokens.append((two, two))
                i += 2
            else:
                tokens.append((char, char))
                i += 1
            continue
        start = i
        while i < n and text[i] not in _SPECIAL and text[i] not in _WHITESPACE:
            i += 1
        word = text[start:i]
        # "in" and "notin" are keywords where an operator may appear; the parser turns
        # them back into identifiers where a value is expected.
        tokens.append((word if word in ("in", "notin") else _IDENT, word))
    tokens.append((_END, ""))
    return tokens


class _LabelParser:
    """Recursive-descent parser over the token list of one selector string."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.pos = 0

    def error(self, message: str) -> ValueError:
        return ValueError(f"unable to parse label selector {self.text!r}: {message}")

    def peek(self) -> tuple[str, str]:
        return self.tokens[self.pos]

    def take(self) -> tuple[str, str]:
        token = self.tokens[self.pos]
        if token[0] != _END:
            self.pos += 1
        return token

    @staticmethod
    def shown(token: tuple[str, str]) -> str:
        return token[1] if token[0] != _END else "end of string"

    def parse(self) -> list[Requirement]:
        requirements: list[Requirement] = []
        if self.peek()[0] == _END:
            return requirements
        while True:
            token = self.peek()
            if token[0] not in (_IDENT, "!"):
                raise self.error(f"found '{self.shown(token)}', expected: !, identifier, or 'end of string'")
            requirements.append(self.requirement())
            token = self.take()
            if token[0] == _END:
                return requirements
            if token[0] != ",":
                raise self.error(f"found '{self.shown(token)}', expected: ',' or 'end of string'")
            if self.peek()[0] not in (_IDENT, "!"):
                raise self.error(f"found '{self.shown(self.peek())}', expected: identifier after ','")

    def requirement(self) -> Requirement:
        negated = False
        if self.peek()[0] == "!":
            self.take()
            negated = True
        token = self.take()
        if token[0] != _IDENT:
            raise self.error(f"found '{self.shown(token)}', expected: identifier")
        key = token[1]
        _check_key(key)
        if negated:
            return Requirement(key, "!")
        if self.peek()[0] in (_END, ","):
            return Requirement(key, "exists")
        token = self.take()
        kind = token[0]
        if kind in ("=", "==", "!="):
            value = self.exact_value()
            _check_value(key, value)
            return Requirement(key, "!=" if kind == "!=" else "=", (value,))
        if kind in ("in", "notin"):
            values = self.value_set()
            for value in values:
                _check_value(key, value)
            return Requirement(key, "in" if kind == "in" else "notin", tuple(sorted(values)))
        if kind in ("<", ">"):
            raise self.error(f"operator '{kind}' (gt/lt) is not supported after key {key!r}")
        raise self.error(f"found '{self.shown(token)}', expected: in, notin, =, ==, != after key {key!r}")

    def exact_value(self) -> str:
        # "k=" and "k=,..." mean the empty value, as in Kubernetes.
        if self.peek()[0] in (_END, ","):
            return ""
        token = self.take()
        if token[0] not in (_IDENT, "in", "notin"):
            raise self.error(f"found '{self.shown(token)}', expected: identifier (a value)")
        return token[1]

    def value_set(self) -> set[str]:
        token = self.take()
        if token[0] != "(":
            raise self.error(f"found '{self.shown(token)}', expected: '('")
        # Entries between commas; an empty entry is the empty value: "()" is {""},
        # "(a,)" is {"a", ""}.
        entries: list[str] = []
        current: str | None = None
        while True:
            token = self.take()
            kind = token[0]
            if kind in (_IDENT, "in", "notin"):
                if current is not None:
                    raise self.error(f"found '{token[1]}', expected: ',' or ')'")
                current = token[1]
            elif kind == ",":
                entries.append(current or "")
                current = None
            elif kind == ")":
                entries.append(current or "")
                return set(entries)
            else:
                raise self.error(f"found '{self.shown(token)}', expected: ',', ')' or identifier")


def _check_key(key: str) -> None:
    errors = qualified_name_errors(key)
    if errors:
        raise ValueError(f"invalid label key {key!r}: {'; '.join(errors)}")


def _check_value(key: str, value: str) -> None:
    errors = label_value_errors(value)
    if errors:
        raise ValueError(f"invalid label value {value!r} for key {key!r}: {'; '.join(errors)}")


_EXPRESSION_OPERATORS: dict[str, Operator] = {
    "In": "in",
    "NotIn": "notin",
    "Exists": "exists",
    "DoesNotExist": "!",
}


class LabelSelector:
    """A set of label requirements, all of which must hold (logical AND).

    Build one with :meth:`parse` (query-string syntax), :meth:`from_dict`
    (``metav1.LabelSelector``), :meth:`from_set` (a plain ``{key: value}`` map such as a
    Service's ``spec.selector``), :meth:`everything` or :meth:`nothing`.

    A selector without requirements matches every object (``is_empty()``); the special
    :meth:`nothing` selector matches none. Selectors compare equal when they have the same
    requirements; they are hashable.
    """

    __slots__ = ("_requirements", "_nothing")

    def __init__(self, requirements: Iterable[Requirement] = (), *, nothing: bool = False) -> None:
        """Wrap ``requirements`` (sorted by key, stably, as Kubernetes does).

        Requirements are taken as they are; prefer the constructors, which validate.
        ``nothing=True`` makes a selector that matches no object.
        """
        self._requirements: tuple[Requirement, ...] = tuple(sorted(requirements, key=lambda r: r.key))
        self._nothing = nothing

    @classmethod
    def everything(cls) -> LabelSelector:
        """The selector that matches every object (``labels.Everything()``)."""
        return cls()

    @classmethod
    def nothing(cls) -> LabelSelector:
        """The selector that matches no object (``labels.Nothing()``)."""
        return cls(nothing=True)

    @classmethod
    def parse(cls, text: str) -> LabelSelector:
        """Parse the ``?labelSelector=`` syntax (``labels.Parse``).

        Comma-separated requirements, all of which must hold: ``k=v`` / ``k==v``,
        ``k!=v``, ``k in (a,b)``, ``k notin (a,b)``, ``k`` (exists), ``!k`` (does not
        exist). Whitespace around tokens is ignored. ``k=`` means the empty value;
        ``k in ()`` means the set holding only the empty value. ``""`` matches everything.
        Keys must be qualified names and values label values.

        Raises:
            ValueError: naming the offending token, key or value, e.g.
                ``unable to parse label selector 'a b': found 'b', expected: ...`` or
                ``invalid label key 'Bad Key!': ...``.
        """
        if not isinstance(text, str):
            raise ValueError(f"label selector must be a string, got {type(text).__name__}")
        return cls(_LabelParser(text).parse())

    @classmethod
    def from_set(cls, labels: Mapping[str, str] | None) -> LabelSelector:
        """Selector requiring every ``key=value`` of ``labels`` (``labels.SelectorFromSet``).

        ``None`` or ``{}`` gives the selector that matches everything -- callers that
        give an empty map another meaning (a Service without selector has no managed
        endpoints) must check that first.

        Raises:
            ValueError: for an invalid key or value.
        """
        requirements: list[Requirement] = []
        for key, value in (labels or {}).items():
            _check_label_pair(key, value)
            requirements.append(Requirement(key, "=", (value,)))
        return cls(requirements)

    @classmethod
    def from_dict(cls, selector: Mapping[str, Any] | None) -> LabelSelector:
        """Convert a ``metav1.LabelSelector`` object (``LabelSelectorAsSelector``).

        Shape: ``{"matchLabels": {k: v}, "matchExpressions": [{"key": k, "operator":
        "In"|"NotIn"|"Exists"|"DoesNotExist", "values": [..]}]}``. ``None`` matches
        nothing; ``{}`` (or only empty parts) matches everything. ``In`` / ``NotIn`` need
        at least one value; ``Exists`` / ``DoesNotExist`` must have none.

        Raises:
            ValueError: for a wrong shape, an unknown operator (``"Foo" is not a valid
                label selector operator``), a bad values list, or an invalid key or value.
        """
        if selector is None:
            return cls.nothing()
        if not isinstance(selector, Mapping):
            raise ValueError(f"label selector must be an object, got {type(selector).__name__}")
        match_labels = selector.get("matchLabels") or {}
        match_expressions = selector.get("matchExpressions") or []
        if not isinstance(match_labels, Mapping):
            raise ValueError("matchLabels must be an object of label keys to values")
        if not isinstance(match_expressions, Sequence) or isinstance(match_expressions, str):
            raise ValueError("matchExpressions must be a list")
        requirements: list[Requirement] = []
        for key, value in match_labels.items():
            _check_label_pair(key, value)
            requirements.append(Requirement(key, "=", (value,)))
        for index, expression in enumerate(match_expressions):
            requirements.append(_expression_requirement(index, expression))
        return cls(requirements)

    @property
    def requirements(self) -> list[Requirement]:
        """The requirements, sorted by key (a fresh list; empty for everything/nothing)."""
        return list(self._requirements)

    def is_empty(self) -> bool:
        """True when the selector has no requirements and so matches every object."""
        return not self._requirements and not self._nothing

    def matches_nothing(self) -> bool:
        """True for the :meth:`nothing` selector (e.g. ``from_dict(None)``)."""
        return self._nothing

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        """Tell whether a label map satisfies every requirement (``None`` = no labels)."""
        if self._nothing:
            return False
        present = labels if labels is not None else {}
        return all(requirement.matches(present) for requirement in self._requirements)

    def value_for(self, key: str) -> str | None:
        """The value required by an ``=`` requirement on ``key``, else None
        (``Selector.RequiresExactMatch``)."""
        for requirement in self._requirements:
            if requirement.key == key and requirement.operator == "=":
                return requirement.values[0]
        return None

    def __str__(self) -> str:
        """Canonical form: requirements joined by ``,`` (parses back to an equal selector).

        As in Kubernetes, the :meth:`nothing` selector also prints as ``""``; check
        :meth:`matches_nothing` before sending a selector as a query string.
        """
        return ",".join(str(requirement) for requirement in self._requirements)

    def __repr__(self) -> str:
        if self._nothing:
            return "LabelSelector.nothing()"
        return f"LabelSelector.parse({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LabelSelector):
            return NotImplemented
        return self._requirements == other._requirements and self._nothing == other._nothing

    def __hash__(self) -> int:
        return hash((self._requirements, self._nothing))


def _check_label_pair(key: object, value: object) -> None:
    if not isinstance(key, str):
        raise ValueError(f"label key must be a string, got {key!r}")
    if not isinstance(value, str):
        raise ValueError(f"label value for key {key!r} must be a string, got {value!r}")
    _check_key(key)
    _check_value(key, value)


def _expression_requirement(index: int, expression: object) -> Requirement:
    where = f"matchExpressions[{index}]"
    if not isinstance(expression, Mapping):
        raise ValueError(f"{where} must be an object with key, operator and values")
    key = expression.get("key")
    if not isinstance(key, str):
        raise ValueError(f"{where}.key must be a string")
    _check_key(key)
    raw_operator = expression.get("operator")
    operator = _EXPRESSION_OPERATORS.get(raw_operator) if isinstance(raw_operator, str) else None
    if operator is None:
        shown = raw_operator if isinstance(raw_operator, str) else repr(raw_operator)
        raise ValueError(f'{where}.operator: "{shown}" is not a valid label selector operator')
    values = expression.get("values") or []
    if not isinstance(values, Sequence) or isinstance(values, str):
        raise ValueError(f"{where}.values must be a list of strings")
    for value in values:
        if not isinstance(value, str):
            raise ValueError(f"{where}.values must be a list of strings, got {value!r}")
        _check_value(key, value)
    if operator in ("in", "notin"):
        if not values:
            raise ValueError(f"{where}.values: for 'in', 'notin' operators, values set can't be empty")
        return Requirement(key, operator, tuple(sorted(set(values))))
    if values:
        raise ValueError(f"{where}.values: values set must be empty for exists and does not exist")
    return Requirement(key, operator)


# ---------------------------------------------------------------------------------------
# Field selectors (fields.ParseSelector)

_FIELD_OPERATORS = ("!=", "==", "=")


def _split_terms(text: str) -> list[str]:
    """Split on commas that are not escaped with a backslash (escapes kept)."""
    terms: list[str] = []
    current: list[str] = []
    escaped = False
    for char in text:
        if escaped:
            current.append(char)
            escaped = False
        elif char == "\\":
            current.append(char)
            escaped = True
        elif char == ",":
            terms.append("".join(current))
            current = []
        else:
            current.append(char)
    terms.append("".join(current))
    return terms


def _unescape_field_value(value: str, term: str) -> str:
    """Undo ``fields.EscapeValue``: ``\\\\``, ``\\,`` and ``\\=`` are the only escapes."""
    out: list[str] = []
    escaped = False
    for char in value:
        if escaped:
            if char not in "\\,=":
                raise ValueError(f"invalid field selector term {term!r}: invalid escape sequence '\\{char}'")
            out.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in ",=":
            raise ValueError(
                f"invalid field selector term {term!r}: unescaped '{char}' is not allowed in a value"
            )
        else:
            out.append(char)
    if escaped:
        raise ValueError(f"invalid field selector term {term!r}: invalid escape sequence '\\'")
    return "".join(out)


def _escape_field_value(value: str) -> str:
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


class FieldSelector:
    """Equality requirements on an object's selectable fields (logical AND).

    Fields are dotted paths such as ``metadata.name``, ``spec.nodeName`` or
    ``status.phase``; the caller supplies their values as a flat mapping. Requirements
    use only the operators ``=`` (``==`` is read as ``=``) and ``!=``; each requirement's
    ``values`` holds exactly one value. An empty selector matches everything.
    """

    __slots__ = ("_requirements",)

    def __init__(self, requirements: Iterable[Requirement] = ()) -> None:
        """Wrap ``requirements`` (each ``=`` or ``!=`` with one value), sorted canonically."""
        self._requirements: tuple[Requirement, ...] = tuple(
            sorted(requirements, key=lambda r: (r.key, r.operator, r.values))
        )

    @classmethod
    def everything(cls) -> FieldSelector:
        """The selector that matches every object (``fields.Everything()``)."""
        return cls()

    @classmethod
    def parse(cls, text: str) -> FieldSelector:
        """Parse the ``?fieldSelector=`` syntax (``fields.ParseSelector``).

        Comma-separated ``field=value``, ``field==value`` or ``field!=value`` terms; the
        first operator found in a term splits it. In a value, ``\\,``, ``\\=`` and
        ``\\\\`` escape those characters. Empty terms are skipped, so ``""`` matches
        everything; ``spec.nodeName=`` requires the empty value (an unscheduled pod).
        Whitespace around fields and values is trimmed (a leniency: Kubernetes keeps it).

        Raises:
            ValueError: for a term without operator (``"a"``), an empty field name, an
                unescaped ``=`` or ``,`` in a value, or an invalid escape sequence.
        """
        if not isinstance(text, str):
            raise ValueError(f"field selector must be a string, got {type(text).__name__}")
        requirements: list[Requirement] = []
        for term in _split_terms(text):
            if not term.strip():
                continue
            split = _split_field_term(term)
            if split is None:
                raise ValueError(
                    f"invalid field selector {text!r}; can't understand {term!r} "
                    "(expected field=value, field==value or field!=value)"
                )
            field, operator, raw_value = split
            field = field.strip()
            if not field:
                raise ValueError(f"invalid field selector {text!r}: term {term!r} has no field name")
            value = _unescape_field_value(raw_value.strip(), term)
            requirements.append(Requirement(field, "!=" if operator == "!=" else "=", (value,)))
        return cls(requirements)

    @classmethod
    def from_set(cls, fields: Mapping[str, str] | None) -> FieldSelector:
        """Selector requiring every ``field=value`` of ``fields`` (``fields.SelectorFromSet``)."""
        return cls(Requirement(key, "=", (value,)) for key, value in (fields or {}).items())

    @property
    def requirements(self) -> list[Requirement]:
        """The requirements in canonical order (a fresh list)."""
        return list(self._requirements)

    def is_empty(self) -> bool:
        """True when there are no requirements, so every object matches."""
        return not self._requirements

    def matches(self, fields: Mapping[str, str]) -> bool:
        """Tell whether the field values satisfy every requirement.

        A field absent from ``fields`` counts as the empty string, so ``spec.nodeName=``
        matches a pod whose ``spec.nodeName`` is unset.
        """
        for requirement in self._requirements:
            actual = fields.get(requirement.key, "")
            if actual is None:
                actual = ""
            equal = actual == requirement.values[0]
            if equal != (requirement.operator == "="):
                return False
        return True

    def value_for(self, key: str) -> str | None:
        """The value an ``=`` requirement demands of ``key``, else None
        (``Selector.RequiresExactMatch``; use it to narrow a query, e.g. by
        ``spec.nodeName``). ``""`` is a real answer: the field must be empty."""
        for requirement in self._requirements:
            if requirement.key == key and requirement.operator == "=":
                return requirement.values[0]
        return None

    def __str__(self) -> str:
        """Canonical ``field=value`` / ``field!=value`` terms joined by ``,``, values escaped."""
        return ",".join(f"{r.key}{r.operator}{_escape_field_value(r.values[0])}" for r in self._requirements)

    def __repr__(self) -> str:
        return f"FieldSelector.parse({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FieldSelector):
            return NotImplemented
        return self._requirements == other._requirements

    def __hash__(self) -> int:
        return hash(self._requirements)


def _split_field_term(term: str) -> tuple[str, str, str] | None:
    """Split ``lhs op rhs`` at the first position where ``!=``, ``==`` or ``=`` starts."""
    for index in range(len(term)):
        for operator in _FIELD_OPERATORS:
            if term.startswith(operator, index):
                return term[:index], operator, term[index + len(operator) :]
    return None


def workload_selector(obj: Mapping[str, Any]) -> LabelSelector:
    """The pod selector of a workload object: ``spec.selector`` as a ``metav1.LabelSelector``, or as
    the label map a ``ReplicationController`` has (equality-based).  Raises ValueError when invalid."""
    selector = (obj.get("spec") or {}).get("selector")
    if obj.get("kind") == "ReplicationController":
        return LabelSelector.from_set(selector)
    return LabelSelector.from_dict(selector)
