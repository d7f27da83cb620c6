"""The ``required`` keyword: names added to or removed from it."""

from __future__ import annotations

from wiregate.diff.load import Schema
from wiregate.diff.rules.base import Comparison

REQUIRED_ADDED = "required-added"
REQUIRED_REMOVED = "required-removed"

KEYWORDS = frozenset({"required"})


def check(cmp: Comparison, old: Schema, new: Schema) -> None:
    old_names = set(old.get("required") or ())
    new_names = set(new.get("required") or ())
    where = cmp.keyword_ptrs(old, new, "required")
    for name in sorted(new_names - old_names):
        message = f"property {name!r} became required: old records without it are rejected"
        cmp.emit(REQUIRED_ADDED, *where, message, backward=False, forward=True, subject=name)
    for name in sorted(old_names - new_names):
        message = f"property {name!r} is no longer required: new records may omit it"
        cmp.emit(REQUIRED_REMOVED, *where, message, backward=True, forward=False, subject=name)
