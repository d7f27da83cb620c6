"""Whole schemas: a schema that accepts nothing, and keywords no other family knows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from wiregate.diff.load import Schema, canonical

if TYPE_CHECKING:
    from wiregate.diff.rules.base import Comparison

SCHEMA_REJECTS_ALL = "schema-rejects-all"
SCHEMA_ACCEPTS_VALUES_AGAIN = "schema-accepts-values-again"
KEYWORD_CHANGED = "keyword-changed"

KEYWORDS: frozenset[str] = frozenset()


def check_false(
    cmp: Comparison, old: Schema, new: Schema, old_false: bool, new_false: bool
) -> None:
    """One side accepts no value at all (``false``, ``{"not": {}}``): nothing else matters."""
    if old_false and new_false:
        return
    where = (cmp.old_ptr(old), cmp.new_ptr(new))
    if new_false:
        message = "the schema now rejects every value"
        cmp.emit(SCHEMA_REJECTS_ALL, *where, message, backward=False, forward=True)
    else:
        message = "the schema rejected every value and now accepts some"
        cmp.emit(SCHEMA_ACCEPTS_VALUES_AGAIN, *where, message, backward=True, forward=False)


def keyword_changed(cmp: Comparison, old: Schema, new: Schema, keyword: str) -> None:
    """A keyword no rule judges: reported, and counted as incompatible both ways."""
    before = canonical(old[keyword]).decode() if keyword in old else "absent"
    after = canonical(new[keyword]).decode() if keyword in new else "absent"
    if len(before) > 60:
        before = before[:57] + "..."
    if len(after) > 60:
        after = after[:57] + "..."
    cmp.emit(
        KEYWORD_CHANGED,
        *cmp.keyword_ptrs(old, new, keyword),
        f"{keyword} changed from {before} to {after} (not judged: assumed incompatible)",
        backward=False,
        forward=False,
    )
