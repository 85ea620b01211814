"""CEL expressions of CRD ``x-kubernetes-validations`` rules, evaluated with cel-python (``celpy``).

Kubernetes compiles each rule with cel-go, type-checks it against the schema and bounds its cost
statically and at run time ("Validation rules" in the Kubernetes documentation:
https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#validation-rules).
celpy is an interpreter without a type checker or a cost model, so here:

* :func:`compile_expression` parses a rule (syntax errors become ``compilation failed: ...``) and
  rejects identifiers other than ``self``/``oldSelf``, macro variables and functions;
* :func:`evaluate` runs it under a :class:`Budget`: every interpreted node costs one step and the
  wall clock is checked as it goes, so a rule looping over a big list (``self.l.all(x,
  self.l.all(y, ...)))``) stops with :class:`OutOfBudget` instead of stalling the event loop;
* Kubernetes' CEL library functions that are cheap to offer are added: the strings extension
  (``charAt``, ``indexOf``, ``lastIndexOf``, ``lowerAscii``, ``upperAscii``, ``replace``, ``split``,
  ``substring``, ``trim``, ``join``), the lists library (``isSorted``, ``sum``, ``min``, ``max``,
  ``indexOf``, ``lastIndexOf``) and the regex library (``find``, ``findAll``). Regular expressions
  use RE2 (linear time), as cel-go does.
"""

from __future__ import annotations

import functools
import itertools
import re
import time
from typing import Any

import celpy
import lark
import re2
from celpy import celtypes
from celpy.evaluation import CELEvalError, Evaluator

__all__ = ["Budget", "CELError", "OutOfBudget", "compile_expression", "evaluate", "to_cel"]

#: Parse-tree nodes one rule evaluation may visit (about 5 µs each here; cel-go allows 1,000,000 cost units).
STEPS_PER_CALL = 50_000
#: Deepest parse tree accepted: the interpreter recurses once a level (cel-go's parser stops at 250
#: levels of recursion; here a level of parentheses takes about ten).
MAX_NESTING = 500
#: Longest rule text accepted (characters); longer text is refused before parsing.
MAX_EXPRESSION_LENGTH = 10_000


class CELError(Exception):
    """A rule failed to compile or to evaluate; the message is shown to the user."""


class OutOfBudget(BaseException):  # noqa: N818 - not an ordinary error: celpy must not swallow it
    """The evaluation ran past its step or time budget (a BaseException so celpy passes it up)."""


class Budget:
    """Steps and wall-clock time left to the CEL rules of one validation (shared by its calls)."""

    def __init__(self, steps: int = 1_000_000, seconds: float = 1.0) -> None:
        self.steps = steps
        self.deadline = time.monotonic() + seconds

    def spend(self) -> None:
        self.steps -= 1
        if self.steps <= 0 or (self.steps % 256 == 0 and time.monotonic() > self.deadline):
            raise OutOfBudget()

    def expired(self) -> bool:
        return time.monotonic() > self.deadline


class _BudgetedEvaluator(Evaluator):
    """celpy's tree-walking evaluator, charging every node visited to a :class:`Budget`."""

    budget: Budget

    def _visit_tree(self, tree: lark.Tree) -> Any:
        self.budget.spend()
        return super()._visit_tree(tree)

    def sub_evaluator(self, ast: lark.Tree) -> Evaluator:
        sub = _BudgetedEvaluator(ast, activation=self.activation)
        sub.budget = self.budget
        return sub


_ENV = celpy.Environment()
_FIXED_NAMES = {"self", "oldSelf", "true", "false", "null", "has", "size", "int", "uint", "double", "string",
                "bytes", "bool", "list", "map", "type", "duration", "timestamp", "dyn", "null_type"}


@functools.lru_cache(maxsize=512)
def compile_expression(text: str, variables: frozenset[str] = frozenset({"self"})) -> lark.Tree:
    """Parse a rule; raise :class:`CELError` (``ERROR: <input>:line:col: ...``) when it does not compile.

    ``variables`` are the names the rule may use besides macro variables (``self``, and ``oldSelf``
    for transition rules).
    """
    if len(text) > MAX_EXPRESSION_LENGTH:
        raise CELError(f"expression is longer than {MAX_EXPRESSION_LENGTH} characters")
    try:
        ast = _ENV.compile(text)
    except celpy.CELParseError as exc:
        line = getattr(exc, "line", None) or 1
        col = getattr(exc, "column", None) or 1
        first = str(exc.args[0]).splitlines()[0] if exc.args else "syntax error"
        raise CELError(f"ERROR: <input>:{line}:{col}: Syntax error: {first}") from None
    except RecursionError:
        raise CELError("ERROR: <input>:1:1: expression nested too deeply") from None
    if _expr_depth(ast) > MAX_NESTING:
        raise CELError(f"ERROR: <input>:1:1: max recursion depth exceeded: {MAX_NESTING}")
    bound = set(variables) | _FIXED_NAMES | set(_FUNCTIONS) | _macro_variables(ast)
    for node in ast.iter_subtrees():
        if node.data == "ident" and node.children:
            name = str(node.children[0])
            if name not in bound:
                raise CELError(f"ERROR: <input>:1:1: undeclared reference to '{name}' (in container '')")
    return ast


def _expr_depth(ast: lark.Tree) -> int:
    """Depth of the parse tree (a parenthesis adds about ten levels), walked without recursion."""
    deepest, stack = 0, [(ast, 0)]
    while stack:
        node, depth = stack.pop()
        depth += 1
        deepest = max(deepest, depth)
        stack.extend((child, depth) for child in node.children if isinstance(child, lark.Tree))
    return deepest


def _macro_variables(ast: lark.Tree) -> set[str]:
    """The names bound by macros (``l.all(x, ...)`` binds ``x``)."""
    names = set()
    for node in ast.iter_subtrees():
        if node.data != "member_dot_arg" or len(node.children) < 3 or str(node.children[1]) not in _MACROS:
            continue
        args = node.children[2]
        if isinstance(args, lark.Tree) and args.children and isinstance(args.children[0], lark.Tree):
            idents = [t for t in args.children[0].iter_subtrees() if t.data == "ident"]
            if len(idents) == 1 and idents[0].children:
                names.add(str(idents[0].children[0]))
    return names


_MACROS = {"all", "exists", "exists_one", "map", "filter"}


def to_cel(value: Any) -> Any:
    """JSON value -> CEL value (objects become maps, integers int, and so on)."""
    return celpy.json_to_cel(value)


def evaluate(ast: lark.Tree, variables: dict[str, Any], budget: Budget) -> Any:
    """Evaluate a compiled rule with ``variables`` (already CEL values).

    Raises :class:`CELError` with the evaluation error, :class:`OutOfBudget` past the budget (the
    caller reports Kubernetes' cost message).
    """
    steps_before = budget.steps
    call = Budget(min(STEPS_PER_CALL, budget.steps), max(0.0, budget.deadline - time.monotonic()))
    evaluator = _BudgetedEvaluator(ast, activation=_ENV.program(ast, functions=_FUNCTIONS).new_activation())
    evaluator.budget = call
    try:
        return evaluator.evaluate(variables)
    except CELEvalError as exc:
        raise CELError(_go_message(str(exc.args[0]) if exc.args else "evaluation error")) from None
    except RecursionError:
        raise CELError("expression nested too deeply") from None
    except Exception as exc:  # noqa: BLE001 - whatever the interpreter trips on is the rule's error, not ours
        raise CELError(_go_message(str(exc))) from None
    finally:
        budget.steps = steps_before - (min(STEPS_PER_CALL, steps_before) - call.steps)


def _go_message(text: str) -> str:
    """celpy's error texts as cel-go words them where they differ (``no such key: x``, ``no such overload``)."""
    missing = re.fullmatch(r"no such member in mapping: '(.*)'", text)
    if missing:
        return f"no such key: {missing.group(1)}"
    if text.startswith(("found no matching overload", "no such overload")):
        return "no such overload"
    if text == "invalid_argument":
        return "index out of bounds"
    return text


# ---- Kubernetes' CEL libraries (the cheap ones) --------------------------------------------------


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("no such overload")
    return value


def _index_of(container: Any, item: Any, start: Any = 0) -> celtypes.IntType:
    if isinstance(container, str):
        return celtypes.IntType(container.find(_str(item), int(start)))
    items = list(container)
    return celtypes.IntType(items.index(item) if item in items else -1)


def _last_index_of(container: Any, item: Any) -> celtypes.IntType:
    if isinstance(container, str):
        return celtypes.IntType(container.rfind(_str(item)))
    items = list(container)
    return celtypes.IntType(len(items) - 1 - items[::-1].index(item) if item in items else -1)


def _substring(text: Any, start: Any, end: Any = None) -> celtypes.StringType:
    s = _str(text)
    lo, hi = int(start), len(s) if end is None else int(end)
    if not 0 <= lo <= hi <= len(s):
        raise ValueError(f"index out of range: {lo}")
    return celtypes.StringType(s[lo:hi])


def _charat(text: Any, index: Any) -> celtypes.StringType:
    s, i = _str(text), int(index)
    if not 0 <= i <= len(s):
        raise ValueError(f"index out of range: {i}")
    return celtypes.StringType(s[i:i + 1])


def _split(text: Any, sep: Any, limit: Any = -1) -> celtypes.ListType:
    s, n = _str(text), int(limit)
    if n == 0:
        return celtypes.ListType([])
    parts = s.split(_str(sep), n - 1) if n > 0 else s.split(_str(sep))
    return celtypes.ListType([celtypes.StringType(p) for p in parts])


def _join(items: Any, sep: Any = "") -> celtypes.StringType:
    return celtypes.StringType(_str(sep).join(_str(i) for i in items))


def _find_all(text: Any, pattern: Any, limit: Any = -1) -> celtypes.ListType:
    found = [celtypes.StringType(m.group(0)) for m in re2.finditer(_str(pattern), _str(text))]
    return celtypes.ListType(found if int(limit) < 0 else found[:int(limit)])


def _find(text: Any, pattern: Any) -> celtypes.StringType:
    match = re2.search(_str(pattern), _str(text))
    return celtypes.StringType(match.group(0) if match else "")


def _pick(items: Any, chooser: Any) -> Any:
    values = list(items)
    if not values:
        raise ValueError("min/max of an empty list")
    return chooser(values)


_FUNCTIONS: dict[str, Any] = {
    "charAt": _charat,
    "indexOf": _index_of,
    "lastIndexOf": _last_index_of,
    "lowerAscii": lambda s: celtypes.StringType("".join(c.lower() if c.isascii() else c for c in _str(s))),
    "upperAscii": lambda s: celtypes.StringType("".join(c.upper() if c.isascii() else c for c in _str(s))),
    "replace": lambda s, old, new, n=-1: celtypes.StringType(_str(s).replace(_str(old), _str(new), int(n))),
    "split": _split,
    "substring": _substring,
    "trim": lambda s: celtypes.StringType(_str(s).strip()),
    "join": _join,
    "isSorted": lambda items: celtypes.BoolType(all(a <= b for a, b in itertools.pairwise(items))),
    "sum": lambda items: sum(list(items)[1:], list(items)[0]) if list(items) else celtypes.IntType(0),
    "min": lambda items: _pick(items, min),
    "max": lambda items: _pick(items, max),
    "find": _find,
    "findAll": _find_all,
}
