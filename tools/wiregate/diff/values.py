"""JSON values compared the way JSON Schema compares them (``enum``, ``const``, equal subtrees).

Python's ``==`` is not that equality: ``True == 1`` and ``False == 0`` hold in Python, yet
``{"const": true}`` rejects ``1``. JSON Schema's rules, followed here:

- a boolean equals only the same boolean, never a number;
- numbers are equal when their mathematical values are: ``1`` and ``1.0`` are one value, and
  integers of any size compare exactly (Python compares an int with a float exactly, never
  by rounding the int);
- strings and null as usual; arrays item by item in order; objects key by key.

Every comparison of JSON values in the diff engine (schemas are JSON values too) goes through
:func:`json_equal` (``wiregate.exactjson``'s, which the ingest store uses too) or
:func:`json_key`; :func:`canonical` is for showing a value as written.
"""

from __future__ import annotations

import json
from decimal import Decimal
from fractions import Fraction
from typing import Any

from wiregate.exactjson import INT_DIGITS, ExactNumber, dumps, json_equal

__all__ = ["canonical", "json_equal", "json_key"]


def json_key(value: Any) -> str:
    """A hashable, sortable key of a JSON value: two keys are equal exactly when the values
    are :func:`json_equal`.

    Integral floats are written as integers (``1.0`` as ``1``); the standard library encoder
    keeps integers of any size and never writes an out-of-range float as ``null``; a number
    beyond double range is written in one normal form (``1e400`` and ``10E399`` alike).
    """
    value = _integral(value)
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError):  # an ExactNumber, or an integer beyond the digit limit
        return dumps(value, sort_keys=True, stdlib=True)


# An integral ExactNumber (``1e400``) becomes an int for its key when parse_int would read its
# digits as one (so it equals ``10**400`` written out); beyond, both are ExactNumbers.
_EXACT_INT_DIGITS = INT_DIGITS


def _integral(value: Any) -> Any:
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if isinstance(value, Decimal):
        sign, digits, exponent = value.as_tuple()
        text = "".join(map(str, digits)).rstrip("0") or "0"
        assert isinstance(exponent, int)  # a JSON number is finite
        exponent += len(digits) - len(text)
        if exponent >= 0 and len(text) + exponent <= _EXACT_INT_DIGITS:
            return int(value)
        return ExactNumber(f"{'-' if sign else ''}{text}e{exponent}")
    if isinstance(value, dict):
        return {key: _integral(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_integral(item) for item in value]
    return value


def canonical(value: Any) -> bytes:
    """Compact JSON with sorted keys, numbers as written (``1.0`` stays ``1.0``, ``1e400``
    too), lone surrogates escaped: the form in which messages show a value. Not an identity:
    use :func:`json_key` for that."""
    return dumps(value, sort_keys=True).encode()


def held_exactly(number: Any) -> bool:
    """Whether a double holds ``number`` as written (a dyadic rational: 3, 1.5, 0.25): dividing
    by it is rounded once, as exact arithmetic but at the edges of the double range. A
    decimal such as 0.1 is not held, and validators that divide by it (``multipleOf``) answer
    otherwise than arithmetic: 0.3 / 0.1 is 2.9999999999999996."""
    denominator = Fraction(str(number)).denominator
    return denominator & (denominator - 1) == 0
