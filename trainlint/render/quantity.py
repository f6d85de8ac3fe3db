"""Kubernetes quantities (`500m`, `4`, `16Gi`) as the controller reads counts from them."""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation, Overflow

_QUANTITY = re.compile(r"([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)([a-zA-Z]*)")
_SUFFIXES = {
    "": Decimal(1), "n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"),
    "k": Decimal(10**3), "M": Decimal(10**6), "G": Decimal(10**9), "T": Decimal(10**12),
    "P": Decimal(10**15), "E": Decimal(10**18),
    "Ki": Decimal(2**10), "Mi": Decimal(2**20), "Gi": Decimal(2**30), "Ti": Decimal(2**40),
    "Pi": Decimal(2**50), "Ei": Decimal(2**60),
}


#: Quantities from this size on are no quantity here: beyond int64, which
#: `Quantity.Value()` returns, and where rounding them up to an integer would take
#: Python seconds (`1e999999`).
_LARGEST = Decimal(2) ** 63


def amount(value: object) -> Decimal | None:
    """The number a quantity stands for, or None when it is no quantity (a YAML `.nan`
    or `.inf` is none either)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        found = Decimal(str(value))
    elif isinstance(value, str):
        match = _QUANTITY.fullmatch(value.strip())
        if match is None or match[2] not in _SUFFIXES:
            return None
        try:
            found = Decimal(match[1]) * _SUFFIXES[match[2]]
        except (InvalidOperation, Overflow):  # `1e1000000`: past what a decimal holds
            return None
    else:
        return None
    return found if found.is_finite() and abs(found) < _LARGEST else None


def whole(value: object) -> int:
    """`Quantity.Value()`: the quantity rounded up to an integer, 0 when unreadable."""
    found = amount(value)
    return math.ceil(found) if found is not None else 0


def count_of(value: object) -> int | None:
    """A quantity that stands for a whole number (`4`, `"4000m"`, `4e0`), as Kubernetes
    requires of an extended resource such as a GPU; None for any other (`500m`)."""
    found = amount(value)
    return int(found) if found is not None and found == found.to_integral_value() else None
