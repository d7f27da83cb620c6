"""Array items: ``items`` (every item after the tuple prefix), ``prefixItems`` (tuple
positions; draft-07 array-form ``items`` is normalised to it) and ``contains``."""

from __future__ import annotations

from wiregate.diff.load import Schema
from wiregate.diff.rules.base import Comparison
from wiregate.diff.rules.subschemas import compare_subschemas
from wiregate.diff.rules.unevaluated import rest_schemas
from wiregate.diff.values import json_equal

ITEMS_ADDED = "items-added"
ITEMS_REMOVED = "items-removed"
ITEMS_WIDENED = "items-widened"
ITEMS_NARROWED = "items-narrowed"
TUPLE_ITEM_ADDED = "tuple-item-added"
TUPLE_ITEM_REMOVED = "tuple-item-removed"
CONTAINS_ADDED = "contains-added"
CONTAINS_REMOVED = "contains-removed"
CONTAINS_CHANGED = "contains-changed"

KEYWORDS = frozenset({"items", "prefixItems", "contains"})
ANY: Schema = {}


def check(cmp: Comparison, old: Schema, new: Schema) -> None:
    old_prefix: list[Schema] = old.get("prefixItems") or []
    new_prefix: list[Schema] = new.get("prefixItems") or []
    old_rest, new_rest = rest_schemas(old, new, "items")
    for index in range(max(len(old_prefix), len(new_prefix))):
        if index < len(old_prefix) and index < len(new_prefix):
            cmp.compare(old_prefix[index], new_prefix[index])
        elif index < len(new_prefix):
            schema = new_prefix[index]
            cmp.emit_moved(
                TUPLE_ITEM_ADDED,
                cmp.old_ptr(old, "items") if "items" in old else cmp.old_ptr(old),
                cmp.new_member_ptr(new, "prefixItems", index),
                f"array position {index} now has its own schema",
                before=old_rest,
                after=schema,
            )
        else:
            schema = old_prefix[index]
            cmp.emit_moved(
                TUPLE_ITEM_REMOVED,
                cmp.old_member_ptr(old, "prefixItems", index),
                cmp.new_ptr(new, "items") if "items" in new else cmp.new_ptr(new),
                f"array position {index} no longer has its own schema",
                before=schema,
                after=new_rest,
            )
    # (what unevaluatedItems changes, items absent on both sides, is the unevaluated family's)
    if not json_equal(old_rest, new_rest) and ("items" in old or "items" in new):
        if "items" in old and "items" in new:
            compare_subschemas(
                cmp,
                old_rest,
                new_rest,
                lambda: cmp.keyword_ptrs(old, new, "items"),
                (ITEMS_WIDENED, ITEMS_NARROWED),
                "items",
            )
        elif "items" in new:  # checked before by unevaluatedItems, or by nothing
            cmp.emit_moved(
                ITEMS_ADDED,
                *cmp.keyword_ptrs(old, new, "items"),
                _where_items(new_prefix) + " are now checked by the items schema",
                before=old_rest,
                after=new_rest,
            )
        else:
            cmp.emit_moved(
                ITEMS_REMOVED,
                *cmp.keyword_ptrs(old, new, "items"),
                _where_items(old_prefix) + " are no longer checked by the items schema",
                before=old_rest,
                after=new_rest,
            )
    _contains(cmp, old, new)


def _where_items(prefix: list[Schema]) -> str:
    return f"array items after position {len(prefix) - 1}" if prefix else "array items"


def _vacuous(node: Schema) -> bool:
    """``contains`` with ``minContains: 0`` and no ``maxContains`` accepts every array."""
    return node.get("minContains") == 0 and "maxContains" not in node


def _counted(node: Schema) -> str:
    bounds = [f"{k} {node[k]}" for k in ("minContains", "maxContains") if k in node]
    return f" ({', '.join(bounds)})" if bounds else ""


def _contains(cmp: Comparison, old: Schema, new: Schema) -> None:
    before, after = old.get("contains"), new.get("contains")
    if json_equal(before, after):
        return
    if before is not None and after is not None:
        if "maxContains" in old or "maxContains" in new:
            # With an upper bound on matches, a wider contains can reject more arrays.
            cmp.emit(
                CONTAINS_CHANGED,
                *cmp.keyword_ptrs(old, new, "contains"),
                "contains changed under maxContains: which arrays have too many matching "
                "items is not decided",
                backward=False,
                forward=False,
                undecided=True,
            )
        else:
            cmp.compare(before, after)
    elif after is not None:
        cmp.emit(
            CONTAINS_ADDED,
            *cmp.keyword_ptrs(old, new, "contains"),
            "arrays must now contain a matching item" + _counted(new),
            backward=_vacuous(new),
            forward=True,
        )
    else:
        cmp.emit(
            CONTAINS_REMOVED,
            *cmp.keyword_ptrs(old, new, "contains"),
            "arrays no longer have to contain a matching item" + _counted(old),
            backward=True,
            forward=_vacuous(old),
        )
