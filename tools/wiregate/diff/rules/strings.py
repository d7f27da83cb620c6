"""String content: ``pattern`` and ``format``."""

from __future__ import annotations

from wiregate.diff.load import Schema
from wiregate.diff.rules.base import Comparison
from wiregate.diff.values import json_equal

PATTERN_ADDED = "pattern-added"
PATTERN_REMOVED = "pattern-removed"
PATTERN_CHANGED = "pattern-changed"
FORMAT_ADDED = "format-added"
FORMAT_REMOVED = "format-removed"
FORMAT_CHANGED = "format-changed"

KEYWORDS = frozenset({"pattern", "format"})


def check(cmp: Comparison, old: Schema, new: Schema) -> None:
    for keyword, ids in (
        ("pattern", (PATTERN_ADDED, PATTERN_REMOVED, PATTERN_CHANGED)),
        ("format", (FORMAT_ADDED, FORMAT_REMOVED, FORMAT_CHANGED)),
    ):
        before, after = old.get(keyword), new.get(keyword)
        if json_equal(before, after):
            continue
        added, removed, changed = ids
        where = cmp.keyword_ptrs(old, new, keyword)
        if before is None:
            message = f"{keyword} {after!r} added: strings must now match it"
            cmp.emit(added, *where, message, backward=False, forward=True)
        elif after is None:
            message = f"{keyword} {before!r} removed"
            cmp.emit(removed, *where, message, backward=True, forward=False)
        else:
            # Whether one regular expression (or format) contains another is not decided here.
            message = f"{keyword} changed from {before!r} to {after!r}"
            cmp.emit(changed, *where, message, backward=False, forward=False)
