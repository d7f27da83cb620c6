"""Conditionals: ``if``/``then``/``else``.

A value matching ``if`` must match ``then``, any other value ``else`` (an absent branch
accepts everything; ``then``/``else`` without ``if`` are dropped when loading). Judged soundly
where that is cheap: the same ``if`` with changed branches is compared branch by branch, an
added conditional narrows the schema unless the old schema provably meets it, a removed one
only loosens it. A changed ``if`` is beyond the engine: it is reported as undecided.
"""

from __future__ import annotations

from wiregate.diff.load import Schema
from wiregate.diff.rules.base import Comparison, is_true
from wiregate.diff.values import json_equal

IF_ADDED = "if-added"
IF_REMOVED = "if-removed"
IF_CHANGED = "if-changed"
THEN_ADDED = "then-added"
THEN_REMOVED = "then-removed"
ELSE_ADDED = "else-added"
ELSE_REMOVED = "else-removed"

KEYWORDS = frozenset({"if", "then", "else"})
ANY: Schema = {}
_BRANCH_IDS = {"then": (THEN_ADDED, THEN_REMOVED), "else": (ELSE_ADDED, ELSE_REMOVED)}


def _constrains(node: Schema) -> bool:
    return "if" in node and not (is_true(node.get("then", ANY)) and is_true(node.get("else", ANY)))


def _meets(cmp: Comparison, values: Schema, node: Schema) -> bool:
    """Every value of ``values`` meets the conditional of ``node`` (sufficient conditions:
    it meets both branches, or it always takes one branch and meets that one)."""
    condition = node["if"]
    then, otherwise = node.get("then", ANY), node.get("else", ANY)
    meets_then = is_true(then) or cmp.subsumes(values, then)
    meets_else = is_true(otherwise) or cmp.subsumes(values, otherwise)
    return (meets_then and meets_else) or (meets_then and cmp.subsumes(values, condition))


def check(cmp: Comparison, old: Schema, new: Schema) -> None:
    if all(json_equal(old.get(k), new.get(k)) for k in KEYWORDS):
        return
    old_on, new_on = _constrains(old), _constrains(new)
    if not old_on and not new_on:
        return  # an ``if`` without constraining branches accepts everything on both sides
    if not old_on:
        cmp.emit(
            IF_ADDED,
            cmp.old_ptr(old),
            cmp.new_ptr(new, "if"),
            "a conditional (if/then/else) now applies: values must meet its branches",
            backward=_meets(cmp, old, new),
            forward=True,
        )
        return
    if not new_on:
        cmp.emit(
            IF_REMOVED,
            cmp.old_ptr(old, "if"),
            cmp.new_ptr(new),
            "the conditional (if/then/else) no longer applies",
            backward=True,
            forward=_meets(cmp, new, old),
        )
        return
    if not json_equal(old["if"], new["if"]):
        cmp.emit(
            IF_CHANGED,
            *cmp.keyword_ptrs(old, new, "if"),
            "the condition of an if/then/else changed: which values take which branch is "
            "not decided",
            backward=False,
            forward=False,
            undecided=True,
        )
        return
    for branch in ("then", "else"):
        _branch(cmp, old, new, branch)


def _branch(cmp: Comparison, old: Schema, new: Schema, branch: str) -> None:
    """The same ``if`` on both sides: each branch applies to the same values."""
    before, after = old.get(branch), new.get(branch)
    if json_equal(before, after):
        return
    if before is not None and after is not None:
        cmp.compare(before, after)
        return
    added, removed = _BRANCH_IDS[branch]
    which = "matching" if branch == "then" else "not matching"
    if after is not None:
        cmp.emit(
            added,
            cmp.old_ptr(old, "if"),
            cmp.new_ptr(new, branch),
            f"values {which} the if schema must now match the {branch} schema",
            backward=cmp.subsumes(old, after),
            forward=True,
        )
    elif before is not None:
        cmp.emit(
            removed,
            cmp.old_ptr(old, branch),
            cmp.new_ptr(new, "if"),
            f"values {which} the if schema no longer have to match the {branch} schema",
            backward=True,
            forward=cmp.subsumes(new, before),
        )
