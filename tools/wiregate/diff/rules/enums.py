"""Value lists: ``enum`` and ``const``."""

from __future__ import annotations

from typing import Any

from wiregate.diff.load import Schema
from wiregate.diff.rules.base import Comparison
from wiregate.diff.values import canonical, json_equal, json_key

ENUM_ADDED = "enum-added"
ENUM_REMOVED = "enum-removed"
ENUM_EXTENDED = "enum-extended"
ENUM_NARROWED = "enum-narrowed"
ENUM_CHANGED = "enum-changed"
CONST_ADDED = "const-added"
CONST_REMOVED = "const-removed"
CONST_CHANGED = "const-changed"

KEYWORDS = frozenset({"enum", "const"})


def allowed_values(node: Schema) -> frozenset[str] | None:
    """The values a schema allows by ``enum``/``const`` (as :func:`json_key` keys), None if
    unlimited."""
    values: frozenset[str] | None = None
    if isinstance(node.get("enum"), list):
        values = frozenset(json_key(v) for v in node["enum"])
    if "const" in node:
        const = frozenset({json_key(node["const"])})
        values = const if values is None else values & const
    return values


def _subset(small: frozenset[str] | None, big: frozenset[str] | None) -> bool:
    return big is None or (small is not None and small <= big)


def check(cmp: Comparison, old: Schema, new: Schema) -> None:
    if not json_equal(old.get("enum"), new.get("enum")):
        _enum(cmp, old, new)
    if not json_equal(old.get("const", _MISSING), new.get("const", _MISSING)):
        _const(cmp, old, new)


_MISSING = object()


def _show(values: list[Any]) -> str:
    return ", ".join(canonical(v).decode() for v in values)


def _enum(cmp: Comparison, old: Schema, new: Schema) -> None:
    where = cmp.keyword_ptrs(old, new, "enum")
    before, after = old.get("enum"), new.get("enum")
    old_values, new_values = allowed_values(old), allowed_values(new)
    backward, forward = _subset(old_values, new_values), _subset(new_values, old_values)
    if before is None:
        message = f"enum added: only {_show(after or [])} are accepted"
        cmp.emit(ENUM_ADDED, *where, message, backward=backward, forward=True)
        return
    if after is None:
        cmp.emit(ENUM_REMOVED, *where, "enum removed", backward=True, forward=forward)
        return
    old_set = {json_key(v): v for v in before}
    new_set = {json_key(v): v for v in after}
    added = [new_set[k] for k in sorted(new_set.keys() - old_set.keys())]
    removed = [old_set[k] for k in sorted(old_set.keys() - new_set.keys())]
    if added and removed:
        message = f"enum changed: added {_show(added)}; removed {_show(removed)}"
        cmp.emit(ENUM_CHANGED, *where, message, backward=False, forward=False)
    elif added:
        message = f"enum extended with {_show(added)}"
        cmp.emit(ENUM_EXTENDED, *where, message, backward=True, forward=False)
    elif removed:
        message = f"enum narrowed: {_show(removed)} no longer accepted"
        cmp.emit(ENUM_NARROWED, *where, message, backward=False, forward=True)


def _const(cmp: Comparison, old: Schema, new: Schema) -> None:
    where = cmp.keyword_ptrs(old, new, "const")
    old_values, new_values = allowed_values(old), allowed_values(new)
    if "const" not in old:
        shown = canonical(new["const"]).decode()
        cmp.emit(
            CONST_ADDED,
            *where,
            f"const {shown} added: only that value is accepted",
            backward=_subset(old_values, new_values),
            forward=True,
        )
    elif "const" not in new:
        shown = canonical(old["const"]).decode()
        cmp.emit(
            CONST_REMOVED,
            *where,
            f"const {shown} removed",
            backward=True,
            forward=_subset(new_values, old_values),
        )
    else:
        before, after = canonical(old["const"]).decode(), canonical(new["const"]).decode()
        cmp.emit(
            CONST_CHANGED,
            *where,
            f"const changed from {before} to {after}",
            backward=False,
            forward=False,
        )
