"""Whole schemas: a schema that accepts nothing, and keywords no other family knows."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from wiregate.diff.facts import ABSENT, Fact, structural_facts
from wiregate.diff.load import Schema
from wiregate.diff.values import canonical

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
    """A keyword no rule judges: reported with its raw differences (the structural facts),
    and counted as incompatible both ways."""
    if keyword not in old:
        what = f"{keyword} added: {_short(new[keyword])}"
    elif keyword not in new:
        what = f"{keyword} removed: {_short(old[keyword])}"
    else:
        facts = structural_facts(old[keyword], new[keyword])
        shown = "; ".join(_describe(keyword, fact) for fact in facts[:3])
        more = f" and {len(facts) - 3} more" if len(facts) > 3 else ""
        what = f"{keyword} changed: {shown}{more}"
    cmp.emit(
        KEYWORD_CHANGED,
        *cmp.keyword_ptrs(old, new, keyword),
        f"{what} (no rule judges {keyword}: assumed incompatible)",
        backward=False,
        forward=False,
    )


def _short(value: Any) -> str:
    text = canonical(value).decode()
    return text if len(text) <= 60 else text[:57] + "..."


def _describe(keyword: str, fact: Fact) -> str:
    where = "".join(f"[{step!r}]" for step in fact.path)
    if fact.old is ABSENT:
        return f"{keyword}{where} added ({_short(fact.new)})"
    if fact.new is ABSENT:
        return f"{keyword}{where} removed ({_short(fact.old)})"
    return f"{keyword}{where} {_short(fact.old)} -> {_short(fact.new)}"
