"""Numeric bounds on strings, numbers, arrays and objects, ``multipleOf`` and ``uniqueItems``.

Each bound keyword has four ids: ``<keyword>-added`` / ``-removed`` / ``-tightened`` /
``-loosened`` (a lower bound is tightened when raised, an upper bound when lowered).
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Any

from wiregate.diff.load import Schema
from wiregate.diff.rules.base import Comparison
from wiregate.diff.values import held_exactly, json_equal

LOWER_BOUNDS = (
    "minLength",
    "minimum",
    "exclusiveMinimum",
    "minItems",
    "minProperties",
    "minContains",
)
UPPER_BOUNDS = (
    "maxLength",
    "maximum",
    "exclusiveMaximum",
    "maxItems",
    "maxProperties",
    "maxContains",
)


def kebab(keyword: str) -> str:
    return "".join(f"-{c.lower()}" if c.isupper() else c for c in keyword)


def bound_ids(keyword: str) -> tuple[str, str, str, str]:
    stem = kebab(keyword)
    return (f"{stem}-added", f"{stem}-removed", f"{stem}-tightened", f"{stem}-loosened")


MIN_LENGTH_ADDED, MIN_LENGTH_REMOVED, MIN_LENGTH_TIGHTENED, MIN_LENGTH_LOOSENED = bound_ids(
    "minLength"
)
MAX_LENGTH_ADDED, MAX_LENGTH_REMOVED, MAX_LENGTH_TIGHTENED, MAX_LENGTH_LOOSENED = bound_ids(
    "maxLength"
)
MINIMUM_ADDED, MINIMUM_REMOVED, MINIMUM_TIGHTENED, MINIMUM_LOOSENED = bound_ids("minimum")
MAXIMUM_ADDED, MAXIMUM_REMOVED, MAXIMUM_TIGHTENED, MAXIMUM_LOOSENED = bound_ids("maximum")
(
    EXCLUSIVE_MINIMUM_ADDED,
    EXCLUSIVE_MINIMUM_REMOVED,
    EXCLUSIVE_MINIMUM_TIGHTENED,
    EXCLUSIVE_MINIMUM_LOOSENED,
) = bound_ids("exclusiveMinimum")
(
    EXCLUSIVE_MAXIMUM_ADDED,
    EXCLUSIVE_MAXIMUM_REMOVED,
    EXCLUSIVE_MAXIMUM_TIGHTENED,
    EXCLUSIVE_MAXIMUM_LOOSENED,
) = bound_ids("exclusiveMaximum")
MIN_ITEMS_ADDED, MIN_ITEMS_REMOVED, MIN_ITEMS_TIGHTENED, MIN_ITEMS_LOOSENED = bound_ids("minItems")
MAX_ITEMS_ADDED, MAX_ITEMS_REMOVED, MAX_ITEMS_TIGHTENED, MAX_ITEMS_LOOSENED = bound_ids("maxItems")
(
    MIN_PROPERTIES_ADDED,
    MIN_PROPERTIES_REMOVED,
    MIN_PROPERTIES_TIGHTENED,
    MIN_PROPERTIES_LOOSENED,
) = bound_ids("minProperties")
(
    MAX_PROPERTIES_ADDED,
    MAX_PROPERTIES_REMOVED,
    MAX_PROPERTIES_TIGHTENED,
    MAX_PROPERTIES_LOOSENED,
) = bound_ids("maxProperties")
(
    MIN_CONTAINS_ADDED,
    MIN_CONTAINS_REMOVED,
    MIN_CONTAINS_TIGHTENED,
    MIN_CONTAINS_LOOSENED,
) = bound_ids("minContains")
(
    MAX_CONTAINS_ADDED,
    MAX_CONTAINS_REMOVED,
    MAX_CONTAINS_TIGHTENED,
    MAX_CONTAINS_LOOSENED,
) = bound_ids("maxContains")
MULTIPLE_OF_ADDED = "multiple-of-added"
MULTIPLE_OF_REMOVED = "multiple-of-removed"
MULTIPLE_OF_TIGHTENED = "multiple-of-tightened"
MULTIPLE_OF_LOOSENED = "multiple-of-loosened"
MULTIPLE_OF_CHANGED = "multiple-of-changed"
UNIQUE_ITEMS_ADDED = "unique-items-added"
UNIQUE_ITEMS_REMOVED = "unique-items-removed"

KEYWORDS = frozenset({*LOWER_BOUNDS, *UPPER_BOUNDS, "multipleOf", "uniqueItems"})


def _number(value: Any) -> bool:
    return isinstance(value, (int, float, Decimal)) and not isinstance(value, bool)


def check(cmp: Comparison, old: Schema, new: Schema) -> None:
    for keyword in (*LOWER_BOUNDS, *UPPER_BOUNDS):
        before, after = old.get(keyword), new.get(keyword)
        if json_equal(before, after) or not (_number(before) or _number(after)):
            continue
        if (before is not None and not _number(before)) or (
            after is not None and not _number(after)
        ):
            continue  # a non-numeric bound is left to keyword-changed
        if keyword in ("minContains", "maxContains") and not (
            "contains" in old and "contains" in new
        ):
            continue  # part of contains being added or removed (arrays judges that)
        _bound(cmp, old, new, keyword, before, after, lower=keyword in LOWER_BOUNDS)
    _multiple_of(cmp, old, new)
    _unique(cmp, old, new)


def _bound(
    cmp: Comparison,
    old: Schema,
    new: Schema,
    keyword: str,
    before: Any,
    after: Any,
    *,
    lower: bool,
) -> None:
    added, removed, tightened, loosened = bound_ids(keyword)
    where = cmp.keyword_ptrs(old, new, keyword)
    if keyword == "minContains" and (before is None or after is None):
        _min_contains(cmp, where, before, after)
        return
    if before is None:
        cmp.emit(added, *where, f"{keyword} {after} added", backward=False, forward=True)
    elif after is None:
        cmp.emit(removed, *where, f"{keyword} {before} removed", backward=True, forward=False)
    elif (after > before) == lower:
        message = f"{keyword} tightened from {before} to {after}"
        cmp.emit(tightened, *where, message, backward=False, forward=True)
    else:
        message = f"{keyword} loosened from {before} to {after}"
        cmp.emit(loosened, *where, message, backward=True, forward=False)


def _min_contains(cmp: Comparison, where: tuple[str, str], before: Any, after: Any) -> None:
    """``minContains`` is 1 when absent (it is dropped without ``contains``)."""
    if before is None:
        message = f"minContains {after} added (1 when absent)"
        cmp.emit(MIN_CONTAINS_ADDED, *where, message, backward=after <= 1, forward=after >= 1)
    else:
        message = f"minContains {before} removed (1 when absent)"
        cmp.emit(MIN_CONTAINS_REMOVED, *where, message, backward=before >= 1, forward=before <= 1)


def _multiple_of(cmp: Comparison, old: Schema, new: Schema) -> None:
    before, after = old.get("multipleOf"), new.get("multipleOf")
    if json_equal(before, after) or not all(v is None or _number(v) for v in (before, after)):
        return
    where = cmp.keyword_ptrs(old, new, "multipleOf")
    if before is None:
        message = f"multipleOf {after} added"
        cmp.emit(MULTIPLE_OF_ADDED, *where, message, backward=False, forward=True)
        return
    if after is None:
        message = f"multipleOf {before} removed"
        cmp.emit(MULTIPLE_OF_REMOVED, *where, message, backward=True, forward=False)
        return
    old_step, new_step = Fraction(str(before)), Fraction(str(after))
    # Validators divide in floating point: 0.3 is a multiple of 0.1 in arithmetic, not to
    # jsonschema or JavaScript's % (0.3 / 0.1 is 2.9999999999999996), yet it is to
    # jsonschema-rs. Where a step is a decimal no double holds, their answers differ: the
    # arithmetic one is not claimed.
    tightened = bool(new_step) and (new_step / old_step).denominator == 1
    loosened = bool(old_step) and (old_step / new_step).denominator == 1
    inexact = [step for step in (before, after) if not held_exactly(step)]
    if inexact and (tightened or loosened):
        message = (
            f"multipleOf changed from {before} to {after}: validators divide by "
            f"{inexact[0]} in floating point and disagree on its multiples: not decided"
        )
        cmp.emit(MULTIPLE_OF_CHANGED, *where, message, backward=False, forward=False,
                 undecided=True)  # fmt: skip
    elif tightened:
        message = f"multipleOf tightened from {before} to {after}"
        cmp.emit(MULTIPLE_OF_TIGHTENED, *where, message, backward=False, forward=True)
    elif loosened:
        message = f"multipleOf loosened from {before} to {after}"
        cmp.emit(MULTIPLE_OF_LOOSENED, *where, message, backward=True, forward=False)
    else:
        message = f"multipleOf changed from {before} to {after}"
        cmp.emit(MULTIPLE_OF_CHANGED, *where, message, backward=False, forward=False)


def _unique(cmp: Comparison, old: Schema, new: Schema) -> None:
    before, after = old.get("uniqueItems") is True, new.get("uniqueItems") is True
    if before == after:
        return
    where = cmp.keyword_ptrs(old, new, "uniqueItems")
    if after:
        message = "uniqueItems added: arrays with repeated items are rejected"
        cmp.emit(UNIQUE_ITEMS_ADDED, *where, message, backward=False, forward=True)
    else:
        message = "uniqueItems removed: arrays may repeat items"
        cmp.emit(UNIQUE_ITEMS_REMOVED, *where, message, backward=True, forward=False)
