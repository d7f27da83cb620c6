"""The ``type`` keyword: widened, narrowed, changed, and nullability."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from wiregate.diff.budget import charge, memo
from wiregate.diff.load import Schema
from wiregate.diff.rules.base import Comparison
from wiregate.diff.values import json_equal

TYPE_WIDENED = "type-widened"
TYPE_NARROWED = "type-narrowed"
TYPE_CHANGED = "type-changed"
NULLABLE_ADDED = "nullable-added"
NULLABLE_REMOVED = "nullable-removed"

KEYWORDS = frozenset({"type"})
ALL_TYPES = frozenset({"null", "boolean", "object", "array", "number", "string", "integer"})


def _type_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, Decimal):  # beyond double range (wiregate.exactjson.ExactNumber)
        return "integer" if value == value.to_integral_value() else "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def effective_types(node: Schema) -> frozenset[str]:
    """The JSON types a schema can accept, from ``type``, ``enum``/``const`` and composition."""
    known = memo("effective_types")
    if known is not None and id(node) in known:
        return known[id(node)][1]  # type: ignore[no-any-return]
    charge()
    answer = _effective_types(node)
    if known is not None:
        known[id(node)] = (node, answer)
    return answer


def _effective_types(node: Schema) -> frozenset[str]:
    types = set(ALL_TYPES)
    if isinstance(node.get("type"), list):
        types &= _expand(node["type"])
    if isinstance(node.get("enum"), list):
        types &= _expand({_type_of(v) for v in node["enum"]})
    if "const" in node:
        types &= _expand({_type_of(node["const"])})
    for keyword in ("oneOf", "anyOf"):
        members = node.get(keyword)
        if isinstance(members, list) and members:
            union: set[str] = set()
            for member in members:
                if isinstance(member, dict):
                    union |= effective_types(member)
            types &= union
    for member in node.get("allOf") or ():
        if isinstance(member, dict):
            types &= effective_types(member)
    return frozenset(types)


def _expand(types: Any) -> set[str]:
    """``number`` includes ``integer``."""
    out = {t for t in types if isinstance(t, str)}
    if "number" in out:
        out.add("integer")
    return out


def check(cmp: Comparison, old: Schema, new: Schema) -> None:
    if json_equal(old.get("type"), new.get("type")):
        return
    old_types, new_types = effective_types(old), effective_types(new)
    backward, forward = old_types <= new_types, new_types <= old_types
    if backward and forward:
        return  # the same values, e.g. ["integer", "number"] vs ["number"]
    where = cmp.keyword_ptrs(old, new, "type")
    shown_old, shown_new = _show(old_types), _show(new_types)
    if old_types ^ new_types == {"null"}:
        if "null" in new_types:
            message = f"null is now accepted ({shown_old} -> {shown_new})"
            cmp.emit(NULLABLE_ADDED, *where, message, backward=True, forward=False)
        else:
            message = f"null is no longer accepted ({shown_old} -> {shown_new})"
            cmp.emit(NULLABLE_REMOVED, *where, message, backward=False, forward=True)
        return
    if backward:
        rule_id, verb = TYPE_WIDENED, "widened"
    elif forward:
        rule_id, verb = TYPE_NARROWED, "narrowed"
    else:
        rule_id, verb = TYPE_CHANGED, "changed"
    message = f"type {verb} from {shown_old} to {shown_new}"
    cmp.emit(rule_id, *where, message, backward=backward, forward=forward)


def _show(types: frozenset[str]) -> str:
    if types == ALL_TYPES:
        return "any type"
    if "number" in types:
        types = types - {"integer"}
    return "|".join(sorted(types))
