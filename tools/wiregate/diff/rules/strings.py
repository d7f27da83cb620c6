"""String content: ``pattern`` and ``format``.

``format`` is an annotation in draft 2020-12 unless the format-assertion vocabulary is on
(validators such as ``jsonschema`` do not check it by default): its changes are compatible
both ways, and constraints only under ``format_assertion`` (``--format-assertion``), which
selects :data:`ASSERTING_FORMAT` in place of this module.
"""

from __future__ import annotations

from wiregate.diff.load import Schema
from wiregate.diff.regex import includes, translate
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
    _check(cmp, old, new, format_assertion=False)


class _AssertingFormat:
    """This family with ``format`` judged as a constraint."""

    KEYWORDS = KEYWORDS
    ASSERTS_FORMAT = True  # set containment reads format as a constraint too

    @staticmethod
    def check(cmp: Comparison, old: Schema, new: Schema) -> None:
        _check(cmp, old, new, format_assertion=True)


ASSERTING_FORMAT = _AssertingFormat()


def _check(cmp: Comparison, old: Schema, new: Schema, *, format_assertion: bool) -> None:
    for keyword, ids in (
        ("pattern", (PATTERN_ADDED, PATTERN_REMOVED, PATTERN_CHANGED)),
        ("format", (FORMAT_ADDED, FORMAT_REMOVED, FORMAT_CHANGED)),
    ):
        before, after = old.get(keyword), new.get(keyword)
        if json_equal(before, after):
            continue
        added, removed, changed = ids
        where = cmp.keyword_ptrs(old, new, keyword)
        if keyword == "format" and not format_assertion:
            verb = (
                f"{after!r} added"
                if before is None
                else f"{before!r} removed"
                if after is None
                else f"changed from {before!r} to {after!r}"
            )
            rule_id = added if before is None else removed if after is None else changed
            message = f"format {verb} (an annotation; --format-assertion makes it a constraint)"
            cmp.emit(rule_id, *where, message, backward=True, forward=True)
        elif before is None:
            message = f"{keyword} {after!r} added: strings must now match it"
            cmp.emit(added, *where, message, backward=False, forward=True)
        elif after is None:
            message = f"{keyword} {before!r} removed"
            cmp.emit(removed, *where, message, backward=True, forward=False)
        elif keyword == "pattern":
            _pattern_changed(cmp, where, before, after)
        else:
            message = f"{keyword} changed from {before!r} to {after!r}"
            cmp.emit(changed, *where, message, backward=False, forward=False)


def _pattern_changed(cmp: Comparison, where: tuple[str, str], before: str, after: str) -> None:
    """A direction is compatible where one pattern provably holds the other; a pattern that
    does not run under RE2 leaves the question undecided (never run by a backtracking engine)."""
    message = f"pattern changed from {before!r} to {after!r}"
    if translate(before) is None or translate(after) is None:
        message += " (a pattern beyond RE2: not decided)"
        cmp.emit(PATTERN_CHANGED, *where, message, backward=False, forward=False, undecided=True)
        return
    backward, forward = includes(after, before), includes(before, after)
    if backward or forward:
        message += f": the {'new' if backward else 'old'} one accepts every string the other does"
    cmp.emit(PATTERN_CHANGED, *where, message, backward=backward, forward=forward)
