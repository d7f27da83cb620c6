"""Whole schemas: a schema that accepts nothing, references the walk cannot follow, and
keywords no other family knows."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from wiregate.diff.facts import ABSENT, Fact, structural_facts
from wiregate.diff.load import Schema
from wiregate.diff.values import canonical

if TYPE_CHECKING:
    from wiregate.diff.rules.base import Comparison

SCHEMA_REJECTS_ALL = "schema-rejects-all"
SCHEMA_ACCEPTS_VALUES_AGAIN = "schema-accepts-values-again"
# Retired: it called every keyword no rule judged incompatible both ways. Unknown keywords are
# annotations now (UNKNOWN_KEYWORD_CHANGED); references the walk cannot follow are REF_CHANGED.
KEYWORD_CHANGED = "keyword-changed"
UNKNOWN_KEYWORD_CHANGED = "unknown-keyword-changed"
REF_CHANGED = "ref-changed"

KEYWORDS: frozenset[str] = frozenset()
# Applicators that name a schema elsewhere; the loader inlines local ``$ref`` s, so what is
# left of them here is beyond the walk.
REFERENCES = frozenset({"$ref", "$dynamicRef", "$recursiveRef"})


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


def ref_changed(cmp: Comparison, old: Schema, new: Schema) -> None:
    """A recursive reference (kept as a ``{"$ref": ...}`` marker so the walk terminates) on
    either side, differing from the other side: the referenced schemas are compared where they
    are defined, but whether this position accepts the same values is not decided here."""
    before, after = old.get("$ref"), new.get("$ref")
    if before is not None and after is not None:
        what = f"recursive reference changed from {before} to {after}"
    elif before is not None:
        what = f"recursive reference to {before} replaced by a schema"
    else:
        what = f"schema replaced by a recursive reference to {after}"
    cmp.emit(
        REF_CHANGED,
        *cmp.keyword_ptrs(old, new, "$ref"),
        f"{what}: not decided (recursive schemas are compared where they are defined)",
        backward=False,
        forward=False,
        undecided=True,
    )


def keyword_changed(cmp: Comparison, old: Schema, new: Schema, keyword: str) -> None:
    """A keyword no rule family owns, reported with its raw differences (the structural facts).
    JSON Schema ignores keywords it does not know (vendor extensions such as OpenAPI's
    ``nullable`` or ``discriminator``, a misspelt ``minimun``), so it is an annotation; a
    dynamic reference (``$dynamicRef``, ``$recursiveRef``) is an applicator the engine does not
    follow, so its change is undecided."""
    if keyword not in old:
        what = f"{keyword} added: {_short(new[keyword])}"
    elif keyword not in new:
        what = f"{keyword} removed: {_short(old[keyword])}"
    else:
        facts = structural_facts(old[keyword], new[keyword])
        shown = "; ".join(_describe(keyword, fact) for fact in facts[:3])
        more = f" and {len(facts) - 3} more" if len(facts) > 3 else ""
        what = f"{keyword} changed: {shown}{more}"
    where = cmp.keyword_ptrs(old, new, keyword)
    if keyword in REFERENCES:
        message = f"{what} (dynamic references are not followed: not decided)"
        cmp.emit(REF_CHANGED, *where, message, backward=False, forward=False, undecided=True)
        return
    message = f"{what} (unknown keyword: validators ignore it)"
    cmp.emit(UNKNOWN_KEYWORD_CHANGED, *where, message, backward=True, forward=True)


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
