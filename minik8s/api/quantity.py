"""Kubernetes resource quantities (``resource.Quantity``) as exact decimals.

Kubernetes writes CPU and memory amounts as strings such as ``"100m"``, ``"1.5"``,
``"200Mi"``, ``"1G"`` or ``"129e6"``. The grammar (from ``k8s.io/apimachinery``'s
``resource`` package) is::

    <quantity>        ::= <signedNumber><suffix>
    <signedNumber>    ::= <number> | "+" <number> | "-" <number>
    <number>          ::= <digits> | <digits> "." <digits> | <digits> "." | "." <digits>
    <suffix>          ::= <binarySI> | <decimalExponent> | <decimalSI>
    <binarySI>        ::= Ki | Mi | Gi | Ti | Pi | Ei                    (powers of 1024)
    <decimalSI>       ::= n | u | m | "" | k | M | G | T | P | E         (powers of 1000)
    <decimalExponent> ::= "e" <signedInteger> | "E" <signedInteger>      (powers of 10)

This module parses those strings into :class:`decimal.Decimal` without rounding, converts
them to the units the rest of minik8s uses (CPU in cores, memory in bytes) and formats
numbers back into the short forms ``kubectl`` shows. It is pure: no I/O, no state.
"""

from __future__ import annotations

import math
import re
from decimal import ROUND_HALF_EVEN, ROUND_UP, Context, Decimal, InvalidOperation

__all__ = [
    "FORMAT_ERROR",
    "SUFFIX_ERROR",
    "cpu_nanocores",
    "format_cpu",
    "format_decimal",
    "format_milli",
    "format_nanocores",
    "format_memory",
    "is_negative",
    "milli_value",
    "parse_cpu",
    "parse_memory",
    "parse_millicpu",
    "parse_quantity",
]

#: The message Kubernetes gives (``resource.ErrFormatWrong``) for a string that does not
#: follow the quantity grammar.
FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
#: The message Kubernetes gives (``resource.ErrSuffix``) for a well-formed string whose
#: suffix is not one it knows, such as ``"1kk"`` or ``"1Ki3"``.
SUFFIX_ERROR = "unable to parse quantity's suffix"

# sign, integer digits, optional "." and fraction digits, then the suffix characters that
# Kubernetes' scanner accepts: suffix letters, an optional sign and trailing digits.
_QUANTITY_RE = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[-+]?[0-9]*)")
_EXPONENT_RE = re.compile(r"[eE]([-+]?[0-9]+)")

_DECIMAL_SI: dict[str, int] = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_BINARY_SI: dict[str, int] = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}

# Largest decimal exponent accepted ("1e400" is fine, "1e99999999" is refused) so that
# converting a quantity to an integer can never allocate an absurd number.
_MAX_EXPONENT = 1000
# Kubernetes stores Value()/MilliValue() in int64.
_INT64_MAX = 2**63 - 1


def _exact_context(digits: int) -> Context:
    """A decimal context wide enough that multiplying ``digits``-digit numbers is exact."""
    return Context(prec=digits + 40, rounding=ROUND_HALF_EVEN, Emax=10**9, Emin=-(10**9))


def parse_quantity(value: str | int | float | Decimal) -> Decimal:
    """Parse a Kubernetes quantity into an exact :class:`~decimal.Decimal`.

    Follows ``resource.ParseQuantity``: ``"100m"`` -> ``Decimal("0.100")``, ``"1.5"`` ->
    ``Decimal("1.5")``, ``"200Mi"`` -> ``Decimal(209715200)``, ``"1e3"`` -> ``Decimal(1000)``,
    ``".5"`` and ``"1."`` are accepted, and so is a leading ``+`` or ``-`` (whether a
    negative amount is allowed is a validation question, see :func:`is_negative`).
    No whitespace is allowed anywhere. Numbers (``int``, ``float``, ``Decimal``) are taken
    as plain amounts, as a JSON number in a resource list is.

    The result is in the quantity's base unit (cores for CPU, bytes for memory) and is not
    rounded.

    Raises:
        ValueError: with :data:`FORMAT_ERROR` (the Kubernetes message) when the string
            does not follow the grammar (``""``, ``"abc"``, ``"1.2.3"``, ``"10Mb"``,
            ``"1 Gi"``, a bool, NaN or infinity); with :data:`SUFFIX_ERROR` when the shape
            is right but the suffix is unknown (``"1kk"``, ``"1K"``, ``"1e"``); and when a
            decimal exponent is beyond +/-1000.
    """
    if isinstance(value, bool):
        raise ValueError(FORMAT_ERROR)
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(FORMAT_ERROR)
        return Decimal(repr(value))
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise ValueError(FORMAT_ERROR)
        return value
    if not isinstance(value, str):
        raise ValueError(FORMAT_ERROR)

    match = _QUANTITY_RE.fullmatch(value)
    if match is None:
        raise ValueError(FORMAT_ERROR)
    sign, whole, fraction, suffix = match.groups()
    fraction = fraction or ""
    if not whole and not fraction:
        # Kubernetes' grammar requires at least one digit in the number.
        raise ValueError(FORMAT_ERROR)
    number = f"{sign}{whole or '0'}" + (f".{fraction}" if fraction else "")

    if suffix in _DECIMAL_SI:
        return Decimal(f"{number}E{_DECIMAL_SI[suffix]}")
    if suffix in _BINARY_SI:
        digits = len(whole) + len(fraction)
        return _exact_context(digits).multiply(Decimal(number), Decimal(2 ** _BINARY_SI[suffix]))
    exponent_match = _EXPONENT_RE.fullmatch(suffix)
    if exponent_match is None:
        raise ValueError(SUFFIX_ERROR)
    exponent = int(exponent_match.group(1))
    if abs(exponent) > _MAX_EXPONENT:
        raise ValueError(f"quantity exponent {exponent} is out of range (at most {_MAX_EXPONENT})")
    return Decimal(f"{number}E{exponent}")


def is_negative(value: str | int | float | Decimal) -> bool:
    """Tell whether a quantity is below zero (``"-1"``, ``"-100m"``; ``"-0"`` is not).

    Kubernetes' validation refuses negative resource requests and limits with the message
    ``must be greater than or equal to 0``; this is the test behind it.

    Raises:
        ValueError: as :func:`parse_quantity`.
    """
    return parse_quantity(value) < 0


def _check_int64(amount: Decimal, what: str) -> None:
    if abs(amount) > _INT64_MAX:
        raise ValueError(f"{what} {amount} is too large (Kubernetes keeps it in a 64-bit integer)")


def parse_cpu(value: str | int | float | Decimal) -> float:
    """Parse a CPU quantity into cores: ``"100m"`` -> ``0.1``, ``"1.5"`` -> ``1.5``, ``2`` -> ``2.0``.

    The value is not rounded to millicores (use :func:`parse_millicpu` for the integer
    millicore count Kubernetes schedules with).

    Raises:
        ValueError: as :func:`parse_quantity`, or when the amount exceeds what Kubernetes
            can hold (more than 2**63-1 millicores).
    """
    cores = parse_quantity(value)
    _check_int64(cores * 1000, "cpu quantity (millicores)")
    return float(cores)


def parse_millicpu(value: str | int | float | Decimal) -> int:
    """Parse a CPU quantity into whole millicores, rounding away from zero.

    Follows ``Quantity.MilliValue()``: ``"100m"`` -> ``100``, ``"1.5"`` -> ``1500``,
    ``"0.0001"`` -> ``1``, ``"-0.0001"`` -> ``-1``. Integer millicores avoid the float
    drift of summing :func:`parse_cpu` results (the scheduler's resource fit uses them).

    Raises:
        ValueError: as :func:`parse_quantity`, or when the result does not fit in int64.
    """
    cores = parse_quantity(value)
    exact = _exact_context(len(cores.as_tuple().digits))
    millis = exact.multiply(cores, Decimal(1000)).to_integral_value(rounding=ROUND_UP)
    _check_int64(millis, "cpu quantity (millicores)")
    return int(millis)


def parse_memory(value: str | int | float | Decimal) -> int:
    """Parse a memory (or storage) quantity into bytes, rounding away from zero.

    Follows ``Quantity.Value()``: ``"200Mi"`` -> ``209715200``, ``"1G"`` -> ``10**9``,
    ``"128974848"`` -> ``128974848``, ``"129e6"`` -> ``129000000``, ``"0.5"`` -> ``1``,
    ``"100m"`` -> ``1`` (a fraction of a byte counts as a whole byte).

    Raises:
        ValueError: as :func:`parse_quantity`, or when the result does not fit in int64.
    """
    amount = parse_quantity(value)
    _check_int64(amount, "memory quantity (bytes)")
    return int(amount.to_integral_value(rounding=ROUND_UP))


def format_cpu(cores: float | int | Decimal) -> str:
    """Format an amount of CPU (cores) the way ``kubectl`` shows it.

    Whole numbers of cores print as integers, anything else as integer millicores:
    ``0.1`` -> ``"100m"``, ``1`` -> ``"1"``, ``1.5`` -> ``"1500m"``, ``0`` -> ``"0"``,
    ``-0.25`` -> ``"-250m"``. Float noise is removed first (``0.1 + 0.2`` -> ``"300m"``);
    amounts below a millicore round away from zero to the next millicore, as
    ``Quantity.MilliValue()`` does (``0.0001`` -> ``"1m"``), except that anything below a
    nanocore counts as float noise (``1e-12`` -> ``"0"``). The result parses back with
    :func:`parse_cpu`.

    Raises:
        ValueError: for NaN, infinity or a bool.
    """
    if isinstance(cores, bool):
        raise ValueError("cpu amount must be a number of cores, not a bool")
    if isinstance(cores, float):
        if not math.isfinite(cores):
            raise ValueError(f"cpu amount must be finite, got {cores!r}")
        amount = Decimal(repr(cores))
    else:
        amount = Decimal(cores)
        if not amount.is_finite():
            raise ValueError(f"cpu amount must be finite, got {cores!r}")
    context = _exact_context(len(amount.as_tuple().digits) + abs(int(amount.as_tuple().exponent)))
    try:
        millis = context.multiply(amount, Decimal(1000)).quantize(
            Decimal("1e-6"), rounding=ROUND_HALF_EVEN, context=context
        )
    except InvalidOperation as exc:  # pragma: no cover - only for absurd magnitudes
        raise ValueError(f"cpu amount {cores!r} is out of range") from exc
    whole_millis = int(millis.to_integral_value(rounding=ROUND_UP))
    if whole_millis % 1000 == 0:
        return str(whole_millis // 1000)
    return f"{whole_millis}m"


def format_memory(n_bytes: int) -> str:
    """Format a byte count with the largest binary suffix that keeps it an integer.

    ``209715200`` -> ``"200Mi"``, ``2048`` -> ``"2Ki"``, ``1536`` -> ``"1536"`` (``1.5Ki``
    is not integral), ``1000`` -> ``"1000"`` (decimal suffixes are never chosen),
    ``0`` -> ``"0"``, ``-2048`` -> ``"-2Ki"``, ``2**70`` -> ``"1024Ei"``. The result
    parses back to the same number with :func:`parse_memory`, like Kubernetes' canonical
    ``BinarySI`` form for integral amounts.

    Raises:
        ValueError: when ``n_bytes`` is not an integer (a float with a fraction, a bool).
    """
    given: object = n_bytes
    if isinstance(given, bool):
        raise ValueError("memory amount must be an integer number of bytes, not a bool")
    if isinstance(given, float):
        if not given.is_integer():
            raise ValueError(f"memory amount must be a whole number of bytes, got {given!r}")
        n_bytes = int(given)
    elif not isinstance(given, int):
        raise ValueError(f"memory amount must be an integer number of bytes, got {given!r}")
    if n_bytes == 0:
        return "0"
    for suffix, power in sorted(_BINARY_SI.items(), key=lambda item: -item[1]):
        if n_bytes % (1 << power) == 0:
            return f"{n_bytes >> power}{suffix}"
    return str(n_bytes)


#: Decimal SI suffixes by power of ten (Kubernetes' ``DecimalSI`` format).
_DECIMAL_SUFFIXES = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}


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


def milli_value(quantity: str | int | float | Decimal) -> int:
    """``Quantity.MilliValue()``: the amount in thousandths, rounded up (``"250m"`` → 250,
    ``"1Ki"`` → 1_024_000, ``"12345678n"`` → 13).  Raises ValueError for a malformed quantity."""
    amount = parse_quantity(quantity) * 1000
    return int(amount.to_integral_value(rounding=ROUND_UP))


def cpu_nanocores(quantity: str | int | float) -> int:
    """A CPU quantity in nanocores (``"250m"`` → 250_000_000), rounded up."""
    amount = parse_quantity(quantity) * Decimal(10**9)
    return int(amount.to_integral_value(rounding=ROUND_UP))


#: ``resource.Format`` names: the three ways a quantity is written (and printed back).
DECIMAL_SI = "DecimalSI"
BINARY_SI = "BinarySI"
DECIMAL_EXPONENT = "DecimalExponent"


def quantity_format(value: str | int | float | Decimal) -> str:
    """The ``resource.Format`` a quantity was written in: ``BinarySI`` for ``Ki``...``Ei``,
    ``DecimalExponent`` for ``e``/``E`` exponents, ``DecimalSI`` otherwise (numbers too).
    Raises ValueError for a malformed quantity."""
    parse_quantity(value)
    if not isinstance(value, str):
        return DECIMAL_SI
    match = _QUANTITY_RE.fullmatch(value)
    suffix = match.group(4) if match else ""
    if suffix in _BINARY_SI:
        return BINARY_SI
    if _EXPONENT_RE.fullmatch(suffix):
        return DECIMAL_EXPONENT
    return DECIMAL_SI


def format_quantity(amount: Decimal | int, fmt: str = DECIMAL_SI) -> str:
    """``amount`` in ``fmt`` as ``Quantity.String()`` writes it (``CanonicalizeBytes``).

    Amounts are first rounded up to a nano-unit, as ``ParseQuantity`` does.  ``BinarySI``
    amounts of at least 1024 in size that are whole take the largest binary suffix keeping the
    number whole (``1536Mi``, ``1Gi``, ``1536``); smaller or fractional ones print as
    ``DecimalSI``: the largest SI suffix keeping the number whole (``500m``, ``1``, ``1500m``,
    ``2k``); ``DecimalExponent`` the same with ``e<3n>`` (``1e3``, ``1500e-3``).
    """
    amount = Decimal(amount)
    if amount == 0:
        return "0"
    if fmt == BINARY_SI:
        if -1024 < amount < 1024 or amount != amount.to_integral_value():
            fmt = DECIMAL_SI
        else:
            return format_memory(int(amount))
    nanos = int((amount * 10**9).to_integral_value(rounding=ROUND_UP))
    exponent = -9
    while nanos % 1000 == 0 and (fmt != DECIMAL_SI or exponent < 18):
        nanos //= 1000
        exponent += 3
    if fmt == DECIMAL_EXPONENT:
        return f"{nanos}e{exponent}" if exponent else str(nanos)
    return f"{nanos}{_DECIMAL_SUFFIXES[exponent]}"


def canonical_quantity(value: str | int | float | Decimal) -> str:
    """A quantity as Kubernetes stores and prints it (``Quantity.String()`` after parsing):
    ``"1000m"`` → ``"1"``, ``"1024Mi"`` → ``"1Gi"``, ``"0.5"`` → ``"500m"``, ``1`` → ``"1"``.
    Raises ValueError for a malformed quantity."""
    return format_quantity(parse_quantity(value), quantity_format(value))
