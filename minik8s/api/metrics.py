"""``metrics.k8s.io/v1beta1``: PodMetrics and NodeMetrics, the resource metrics API.

What metrics-server serves in Kubernetes and what ``kubectl top`` and the
HorizontalPodAutoscaler read; in minik8s the apiserver serves it itself
(:mod:`minik8s.apiserver.metrics`) from the kubelets' ``/stats/summary``.  Read-only
(get, list), never stored::

    {"kind": "PodMetrics", "apiVersion": "metrics.k8s.io/v1beta1",
     "metadata": {"name": "web-1", "namespace": "default", "labels": {...}, "creationTimestamp": "..."},
     "timestamp": "2026-11-21T10:00:00Z", "window": "15s",
     "containers": [{"name": "app", "usage": {"cpu": "12345678n", "memory": "2048Ki"}}]}

``usage.cpu`` is a CPU rate in cores (nanocores, canonical decimal form: ``"12345678n"``,
``"250m"``, ``"1"``), averaged over ``window``; ``usage.memory`` the working set in bytes
(canonical binary form: ``"2048Ki"``, ``"12Mi"``).  NodeMetrics has ``usage`` of the whole
node instead of ``containers``.

This module also holds the number formats the API uses: Kubernetes' canonical quantity
strings for integer amounts at a decimal scale (:func:`format_decimal`); Go durations
(``window``) are :mod:`minik8s.api.durations`'.
"""

from __future__ import annotations

import math
from decimal import ROUND_UP, Decimal

from minik8s.api.base import Model
from minik8s.api.meta import TypedObject
from minik8s.api.quantity import parse_quantity

GROUP = "metrics.k8s.io"
VERSION = "v1beta1"
API_VERSION = f"{GROUP}/{VERSION}"

#: Decimal SI suffixes by power of ten (Kubernetes' ``DecimalSI`` format).
_DECIMAL_SUFFIXES = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}


class ContainerMetrics(Model):
    """One container's ``usage`` (``{"cpu": quantity, "memory": quantity}``)."""

    name: str
    usage: dict[str, str]


class PodMetrics(TypedObject):
    timestamp: str | None = None
    window: str | None = None
    containers: list[ContainerMetrics] | None = None


class NodeMetrics(TypedObject):
    timestamp: str | None = None
    window: str | None = None
    usage: dict[str, str] | None = None


# ---------------------------------------------------------------- quantities
def format_decimal(value: int, exponent: int) -> str:
    """``value × 10**exponent`` as Kubernetes' canonical decimal quantity string.

    The largest SI suffix that keeps the number an integer is chosen, as
    ``resource.Quantity`` does for ``DecimalSI``: ``format_decimal(12_000_000, -9)`` →
    ``"12m"``, ``format_decimal(1_500, -3)`` → ``"1500m"``, ``format_decimal(2_000_000, -3)``
    → ``"2k"``, ``0`` → ``"0"``.  ``exponent`` must be a multiple of 3 between -9 and 18.

    Raises ValueError for another exponent.
    """
    if exponent not in _DECIMAL_SUFFIXES:
        raise ValueError(f"exponent {exponent} is not a multiple of 3 between -9 and 18")
    if value == 0:
        return "0"
    while exponent < 18 and value % 1000 == 0:
        value //= 1000
        exponent += 3
    return f"{value}{_DECIMAL_SUFFIXES[exponent]}"


def format_nanocores(nanocores: int) -> str:
    """A CPU rate in nanocores as the metrics API writes it (``"12345n"``, ``"250m"``, ``"2"``)."""
    return format_decimal(int(nanocores), -9)


def format_milli(milli: int) -> str:
    """An amount in thousandths as Kubernetes prints ``resource.NewMilliQuantity(milli, DecimalSI)``:
    ``250`` → ``"250m"``, ``2000`` → ``"2"``, ``52_428_800_000`` → ``"52428800"``."""
    return format_decimal(int(milli), -3)


def milli_value(quantity: str | int | float) -> int:
    """``Quantity.MilliValue()``: the amount in thousandths, rounded up (``"250m"`` → 250,
    ``"1Ki"`` → 1_024_000, ``"12345678n"`` → 13).  Raises ValueError for a malformed quantity."""
    amount = parse_quantity(quantity) * 1000
    return int(amount.to_integral_value(rounding=ROUND_UP))


def cpu_nanocores(quantity: str | int | float) -> int:
    """A CPU quantity in nanocores (``"250m"`` → 250_000_000), rounded up."""
    amount = parse_quantity(quantity) * Decimal(10**9)
    return int(amount.to_integral_value(rounding=ROUND_UP))


def percent(part: float, whole: float) -> int:
    """``part`` as a whole percentage of ``whole``, truncated (Go's integer division); 0 when
    ``whole`` is 0."""
    if whole <= 0:
        return 0
    return math.floor(part * 100 / whole)
