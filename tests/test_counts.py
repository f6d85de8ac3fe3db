"""Counts and quantities as written in a manifest, read the way the cluster reads them, and
hostile ones (NaN, infinity, thousands of digits, digits that are not ASCII) read as none."""

from __future__ import annotations

import math
from decimal import Decimal

import pytest

from trainlint.document import COUNT_DIGITS, count
from trainlint.render.quantity import amount, whole


@pytest.mark.parametrize(("value", "expected"), [
    (8, 8), ("8", 8), (" 12 ", 12), ("9" * COUNT_DIGITS, int("9" * COUNT_DIGITS)),
    (True, None), ("8Gi", None), ("-1", None), ("1.5", None), (1.5, None), (None, None),
    ("9" * (COUNT_DIGITS + 1), None), ("9" * 5000, None), ("²", None), ("٣", None),
])
def test_a_count(value: object, expected: int | None) -> None:
    assert count(value) == expected


@pytest.mark.parametrize(("value", "expected"), [
    ("500m", Decimal("0.5")), ("16Gi", Decimal(16 * 2**30)), (4, Decimal(4)), ("1e3", 1000),
    (math.nan, None), (math.inf, None), (-math.inf, None), ("NaN", None), ("Infinity", None),
    ("1e999999", None), (10**400, None), ("9" * 5000, None), (True, None), ("²", None),
    # Past what Python's decimals hold: the product overflows (the API server takes them).
    ("1e1000000", None), ("1e999999999999Ki", None), ("1e-1000000", Decimal("1e-1000000")),
])
def test_a_quantity(value: object, expected: Decimal | None) -> None:
    assert amount(value) == expected
    assert whole(value) == (0 if expected is None else math.ceil(expected))
