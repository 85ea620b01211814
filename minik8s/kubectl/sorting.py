"""``kubectl get --sort-by=PATH``: objects ordered by the first value a relaxed JSONPath names
(k8s.io/kubectl ``get/sorter.go``).

Numbers compare numerically, two strings that are both quantities (``100m``, ``1Gi``) as quantities,
other strings bytewise (``pod-10`` before ``pod-2``, as kubectl 1.32 orders them; RFC 3339
timestamps therefore in time order), ``false`` before ``true``; an object without the field sorts
first. The sort is stable. :func:`natural_less` is the natural order some kubectl versions use.
"""

from __future__ import annotations

import functools
from decimal import Decimal
from typing import Any

from minik8s.api import kubejsonpath
from minik8s.api.quantity import parse_quantity
from minik8s.kubectl.errors import KubectlError


def natural_less(a: str, b: str) -> bool:
    """``a < b`` in natural order (github.com/fvbommel/sortorder ``NaturalLess``)."""
    i = j = 0
    while i < len(a) and j < len(b):
        da, db = a[i].isdigit(), b[j].isdigit()
        if da != db:
            return da
        if not da:
            if a[i] != b[j]:
                return a[i] < b[j]
            i += 1
            j += 1
            continue
        while i < len(a) and a[i] == "0":
            i += 1
        while j < len(b) and b[j] == "0":
            j += 1
        nz_a, nz_b = i, j
        while i < len(a) and a[i].isdigit():
            i += 1
        while j < len(b) and b[j].isdigit():
            j += 1
        if i - nz_a != j - nz_b:
            return i - nz_a < j - nz_b
        if a[nz_a:i] != b[nz_b:j]:
            return a[nz_a:i] < b[nz_b:j]
        if nz_a != nz_b:
            return nz_a < nz_b
    return len(a) < len(b)


def _quantity(text: str) -> Decimal | None:
    try:
        return parse_quantity(text)
    except (ValueError, ArithmeticError):
        return None


def less(a: Any, b: Any) -> bool:
    """kubectl's ``isLess`` for two decoded JSON values (KubectlError for values it cannot order)."""
    if isinstance(a, bool) and isinstance(b, bool):
        return not a and b
    if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool) \
            and not isinstance(b, bool):
        return a < b
    if isinstance(a, str) and isinstance(b, str):
        qa, qb = _quantity(a), _quantity(b)
        if qa is not None and qb is not None:
            return qa < qb
        return a < b
    if a is None or b is None:
        return a is None and b is not None
    if isinstance(a, list) and isinstance(b, list):
        for x, y in zip(a, b, strict=False):
            if less(x, y):
                return True
            if less(y, x):
                return False
        return len(a) < len(b)
    raise KubectlError(f"unsortable type: {type(a).__name__}")


def check(path: str) -> str:
    """The ``{.path}`` form of a ``--sort-by`` value; KubectlError when it is not a JSONPath."""
    try:
        spec = kubejsonpath.relaxed(path)
        kubejsonpath.parse_template(spec)
    except ValueError as exc:
        raise KubectlError(str(exc)) from None
    return spec


def values(obj: Any, spec: str) -> list[Any]:
    """Every value the checked path ``spec`` (``{.a.b}``, from :func:`check`) names in ``obj``."""
    found: list[Any] = []
    for kind, arg in kubejsonpath.parse_template(spec):
        if kind == "path":
            found += kubejsonpath.evaluate(obj, arg)
    return found


def sort_objects(objs: list[Any], path: str) -> list[Any]:
    """``objs`` stably ordered by the first value ``path`` (a ``--sort-by`` value) names in each."""
    spec = check(path)
    keys = [values(obj, spec) for obj in objs]

    def compare(i: int, j: int) -> int:
        ki, kj = keys[i], keys[j]
        if not ki:
            return -1 if kj else 0
        if not kj:
            return 1
        if less(ki[0], kj[0]):
            return -1
        if less(kj[0], ki[0]):
            return 1
        return 0

    order = sorted(range(len(objs)), key=functools.cmp_to_key(compare))
    return [objs[i] for i in order]
