"""Unit tests for minik8s.api.quantity (Kubernetes resource.Quantity semantics)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from minik8s.api.quantity import (
    FORMAT_ERROR,
    SUFFIX_ERROR,
    format_cpu,
    format_memory,
    is_negative,
    parse_cpu,
    parse_memory,
    parse_millicpu,
    parse_quantity,
)


def test_format_error_is_the_kubernetes_message() -> None:
    assert FORMAT_ERROR == (
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0", Decimal(0)),
        ("1", Decimal(1)),
        ("1.5", Decimal("1.5")),
        (".5", Decimal("0.5")),
        ("1.", Decimal(1)),
        ("007", Decimal(7)),
        ("+1", Decimal(1)),
        ("-1", Decimal(-1)),
        ("-.5", Decimal("-0.5")),
        # decimal SI
        ("1n", Decimal("1e-9")),
        ("5u", Decimal("5e-6")),
        ("100m", Decimal("0.1")),
        ("1k", Decimal(1000)),
        ("1M", Decimal(10**6)),
        ("1G", Decimal(10**9)),
        ("1T", Decimal(10**12)),
        ("1P", Decimal(10**15)),
        ("1E", Decimal(10**18)),
        ("1.5k", Decimal(1500)),
        # binary SI
        ("1Ki", Decimal(1024)),
        ("200Mi", Decimal(209715200)),
        ("1.5Gi", Decimal(1610612736)),
        ("1Ti", Decimal(2**40)),
        ("1Pi", Decimal(2**50)),
        ("1Ei", Decimal(2**60)),
        ("0.1Ki", Decimal("102.4")),
        # decimal exponents
        ("1e3", Decimal(1000)),
        ("1E3", Decimal(1000)),
        ("1e+3", Decimal(1000)),
        ("1e-3", Decimal("0.001")),
        ("129e6", Decimal(129000000)),
        ("1.5e2", Decimal(150)),
        ("-2e1", Decimal(-20)),
    ],
)
def test_parse_quantity_valid(text: str, expected: Decimal) -> None:
    assert parse_quantity(text) == expected


def test_parse_quantity_is_exact_for_large_values() -> None:
    digits = "123456789012345678901234567890123"
    assert parse_quantity(digits) == Decimal(digits)
    # (Decimal * int would round to the default 28 digits; compare as exact integers.)
    assert int(parse_quantity(digits + "Ei")) == int(digits) * 2**60
    assert parse_quantity("1.000000000000000000000000000001Ki") == Decimal(
        "1024.000000000000000000000000001024"
    )


@pytest.mark.parametrize(
    "text",
    [
        "",
        "abc",
        "1.2.3",
        "10Mb",
        "1 Gi",
        " 1",
        "1 ",
        ".",
        "+",
        "-",
        "Ki",
        "m",
        "0x10",
        "1_000",
        "1,5",
        "1e3e3",
        "1e1k",
        "1KI",
        "NaN",
        "inf",
        "1Gi ",
        "1/2",
        "１",
    ],
)
def test_parse_quantity_format_errors(text: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_quantity(text)
    assert str(info.value) == FORMAT_ERROR


@pytest.mark.parametrize("text", ["1kk", "1K", "1e", "1e-", "1ki", "1mi", "1Ki3", "1ke3", "1-", "1m-3"])
def test_parse_quantity_unknown_suffix(text: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_quantity(text)
    assert str(info.value) == SUFFIX_ERROR


def test_parse_quantity_exponent_out_of_range() -> None:
    assert parse_quantity("1e1000") == Decimal("1e1000")
    with pytest.raises(ValueError, match="out of range"):
        parse_quantity("1e1001")
    with pytest.raises(ValueError, match="out of range"):
        parse_quantity("1e-99999999999")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (2, Decimal(2)),
        (0, Decimal(0)),
        (-3, Decimal(-3)),
        (0.1, Decimal("0.1")),
        (1.5, Decimal("1.5")),
        (Decimal("2.5"), Decimal("2.5")),
    ],
)
def test_parse_quantity_numbers(value: int | float | Decimal, expected: Decimal) -> None:
    assert parse_quantity(value) == expected


@pytest.mark.parametrize(
    "value", [True, False, float("nan"), float("inf"), -float("inf"), Decimal("NaN"), None, [1]]
)
def test_parse_quantity_rejects_non_quantities(value: object) -> None:
    with pytest.raises(ValueError):
        parse_quantity(value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "cores"),
    [
        ("100m", 0.1),
        ("1.5", 1.5),
        (2, 2.0),
        ("2", 2.0),
        ("0", 0.0),
        ("250m", 0.25),
        ("1k", 1000.0),
        (0.5, 0.5),
        ("1e-3", 0.001),
        ("-1", -1.0),
    ],
)
def test_parse_cpu(value: str | int | float, cores: float) -> None:
    result = parse_cpu(value)
    assert isinstance(result, float)
    assert result == pytest.approx(cores)


def test_parse_cpu_too_large() -> None:
    with pytest.raises(ValueError, match="too large"):
        parse_cpu("1e100")
    with pytest.raises(ValueError):
        parse_cpu("lots")


@pytest.mark.parametrize(
    ("value", "millis"),
    [
        ("100m", 100),
        ("1.5", 1500),
        (2, 2000),
        ("0.0001", 1),
        ("-0.0001", -1),
        ("1n", 1),
        ("0", 0),
        ("1500m", 1500),
        (0.1, 100),
    ],
)
def test_parse_millicpu_rounds_away_from_zero(value: str | int | float, millis: int) -> None:
    assert parse_millicpu(value) == millis


@pytest.mark.parametrize(
    ("value", "n_bytes"),
    [
        ("200Mi", 209715200),
        ("1G", 10**9),
        ("128974848", 128974848),
        ("129e6", 129000000),
        ("129M", 129000000),
        ("123Mi", 128974848),
        ("1Ki", 1024),
        ("0.5", 1),
        ("100m", 1),
        ("1.1", 2),
        ("-0.5", -1),
        ("0", 0),
        (1024, 1024),
        (1.5, 2),
    ],
)
def test_parse_memory(value: str | int | float, n_bytes: int) -> None:
    result = parse_memory(value)
    assert result == n_bytes
    assert isinstance(result, int)


def test_parse_memory_limits() -> None:
    assert parse_memory(str(2**63 - 1)) == 2**63 - 1
    with pytest.raises(ValueError, match="too large"):
        parse_memory("8Ei")  # 2**63
    with pytest.raises(ValueError, match="too large"):
        parse_memory("1e30")
    with pytest.raises(ValueError):
        parse_memory("1 Gi")


@pytest.mark.parametrize(
    ("value", "negative"),
    [("-1", True), ("-100m", True), ("0", False), ("-0", False), ("1Gi", False), (-2, True), (0.0, False)],
)
def test_is_negative(value: str | int | float, negative: bool) -> None:
    assert is_negative(value) is negative


def test_is_negative_propagates_errors() -> None:
    with pytest.raises(ValueError):
        is_negative("minus one")


@pytest.mark.parametrize(
    ("cores", "text"),
    [
        (0.1, "100m"),
        (1, "1"),
        (1.0, "1"),
        (1.5, "1500m"),
        (2, "2"),
        (0, "0"),
        (0.0, "0"),
        (0.25, "250m"),
        (-0.25, "-250m"),
        (-2, "-2"),
        (0.1 + 0.2, "300m"),
        (0.0001, "1m"),
        (-0.0001, "-1m"),
        (1e-12, "0"),
        (0.001, "1m"),
        (12.345, "12345m"),
        (1e20, "100000000000000000000"),
        (Decimal("0.5"), "500m"),
    ],
)
def test_format_cpu(cores: float, text: str) -> None:
    assert format_cpu(cores) == text


@pytest.mark.parametrize("cores", [0.1, 0.25, 1, 1.5, 3, 0.001, 7.125])
def test_format_cpu_round_trips(cores: float) -> None:
    assert parse_cpu(format_cpu(cores)) == pytest.approx(cores)


@pytest.mark.parametrize("cores", [float("nan"), float("inf"), True, Decimal("Infinity")])
def test_format_cpu_rejects(cores: float) -> None:
    with pytest.raises(ValueError):
        format_cpu(cores)


@pytest.mark.parametrize(
    ("n_bytes", "text"),
    [
        (209715200, "200Mi"),
        (1000, "1000"),
        (1536, "1536"),
        (2048, "2Ki"),
        (1024, "1Ki"),
        (0, "0"),
        (1, "1"),
        (2**30, "1Gi"),
        (3 * 2**40, "3Ti"),
        (2**50, "1Pi"),
        (2**60, "1Ei"),
        (2**70, "1024Ei"),
        (1536 * 1024, "1536Ki"),
        (10**9, "1000000000"),
        (-2048, "-2Ki"),
        (2048.0, "2Ki"),
    ],
)
def test_format_memory(n_bytes: int, text: str) -> None:
    assert format_memory(n_bytes) == text


@pytest.mark.parametrize("n_bytes", [0, 1, 1000, 1536, 2048, 209715200, 2**62, 12345678])
def test_format_memory_round_trips(n_bytes: int) -> None:
    assert parse_memory(format_memory(n_bytes)) == n_bytes


@pytest.mark.parametrize("n_bytes", [1.5, True, "1Ki", None])
def test_format_memory_rejects(n_bytes: object) -> None:
    with pytest.raises(ValueError):
        format_memory(n_bytes)  # type: ignore[arg-type]
