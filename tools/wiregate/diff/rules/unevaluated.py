"""``unevaluatedProperties`` and ``unevaluatedItems``.

They apply to the members (keys, array positions) no other keyword evaluated. When a schema
has no in-place applicator that could evaluate members in a subschema (``allOf``, ``anyOf``,
``oneOf``, ``if``/``then``/``else``, ``dependentSchemas``, a reference), that set is known:
the undeclared keys (``additionalProperties`` absent), the items after the tuple prefix
(``items`` and ``contains`` absent), and the keyword is compared like ``additionalProperties``
/ ``items``. Otherwise which members it checks depends on annotations collected at validation
time, and a change is reported as undecided.
"""

from __future__ import annotations

from wiregate.diff.load import Schema
from wiregate.diff.rules.base import Comparison, is_true
from wiregate.diff.values import json_equal

UNEVALUATED_PROPERTIES_ADDED = "unevaluated-properties-added"
UNEVALUATED_PROPERTIES_REMOVED = "unevaluated-properties-removed"
UNEVALUATED_PROPERTIES_CHANGED = "unevaluated-properties-changed"
UNEVALUATED_ITEMS_ADDED = "unevaluated-items-added"
UNEVALUATED_ITEMS_REMOVED = "unevaluated-items-removed"
UNEVALUATED_ITEMS_CHANGED = "unevaluated-items-changed"
UNEVALUATED_PROPERTIES_REACH_CHANGED = "unevaluated-properties-reach-changed"
UNEVALUATED_ITEMS_REACH_CHANGED = "unevaluated-items-reach-changed"

KEYWORDS = frozenset({"unevaluatedProperties", "unevaluatedItems"})
ANY: Schema = {}
# In-place applicators: their subschemas' annotations count as evaluated members.
_IN_PLACE = ("allOf", "anyOf", "oneOf", "if", "then", "else", "dependentSchemas", "$ref")
_IDS = {
    "unevaluatedProperties": (
        UNEVALUATED_PROPERTIES_ADDED,
        UNEVALUATED_PROPERTIES_REMOVED,
        UNEVALUATED_PROPERTIES_CHANGED,
    ),
    "unevaluatedItems": (
        UNEVALUATED_ITEMS_ADDED,
        UNEVALUATED_ITEMS_REMOVED,
        UNEVALUATED_ITEMS_CHANGED,
    ),
}


# Keywords whose changes change which members the keyword checks.
_EVALUATING = {
    "unevaluatedProperties": ("properties", "patternProperties", "additionalProperties"),
    "unevaluatedItems": ("prefixItems", "items", "contains"),
}
_DECIDERS = {
    "unevaluatedProperties": "the applicators",
    "unevaluatedItems": "contains or the applicators",
}
_REACH_IDS = {
    "unevaluatedProperties": UNEVALUATED_PROPERTIES_REACH_CHANGED,
    "unevaluatedItems": UNEVALUATED_ITEMS_REACH_CHANGED,
}


def check(cmp: Comparison, old: Schema, new: Schema) -> None:
    for keyword in ("unevaluatedProperties", "unevaluatedItems"):
        if not json_equal(old.get(keyword), new.get(keyword)):
            _judge(cmp, old, new, keyword)
        elif keyword in old and any(
            not json_equal(old.get(k), new.get(k)) for k in (*_EVALUATING[keyword], *_IN_PLACE)
        ):
            _reach(cmp, old, new, keyword)


def rest_schemas(old: Schema, new: Schema, keyword: str) -> tuple[Schema, Schema]:
    """(old's, new's) schema of the members no other keyword names: ``keyword``
    (``additionalProperties`` or ``items``), else the side's unevaluated* where it checks
    exactly those members (``_known``), else any value."""
    unevaluated = "unevaluated" + ("Properties" if keyword == "additionalProperties" else "Items")
    return tuple(  # type: ignore[return-value]
        node[keyword]
        if keyword in node
        else node[unevaluated]
        if unevaluated in node and _known(node, unevaluated)
        else ANY
        for node in (old, new)
    )


def _reach(cmp: Comparison, old: Schema, new: Schema, keyword: str) -> None:
    """The same keyword on both sides, beside keywords that evaluate members and changed.
    Where it checks exactly what ``additionalProperties`` / ``items`` would (``_known``), the
    object and array rules judge those changes with it (``rest_schemas``); otherwise which
    members it checks depends on annotations collected at validation time: undecided."""
    if _known(old, keyword) and _known(new, keyword):
        return
    members = "keys" if keyword == "unevaluatedProperties" else "items"
    cmp.emit(
        _REACH_IDS[keyword],
        *cmp.keyword_ptrs(old, new, keyword),
        f"{keyword} may now check other {members}: {_DECIDERS[keyword]} beside it, whose "
        f"annotations decide which {members} it checks, changed: not decided",
        backward=False,
        forward=False,
        undecided=True,
    )


def _known(node: Schema, keyword: str) -> bool:
    """Which members the keyword checks is known without annotations."""
    if any(applicator in node for applicator in _IN_PLACE):
        return False
    return keyword == "unevaluatedProperties" or "contains" not in node


def _effective(node: Schema, keyword: str) -> Schema:
    """The schema the keyword effectively applies to the members it checks: none when another
    keyword (``additionalProperties``, ``items``) already evaluates every member."""
    other = "additionalProperties" if keyword == "unevaluatedProperties" else "items"
    if other in node:
        return ANY
    return node.get(keyword, ANY)  # type: ignore[no-any-return]


def _judge(cmp: Comparison, old: Schema, new: Schema, keyword: str) -> None:
    added, removed, changed = _IDS[keyword]
    before, after = old.get(keyword), new.get(keyword)
    rule_id = added if before is None else removed if after is None else changed
    where = cmp.keyword_ptrs(old, new, keyword)
    members = "keys" if keyword == "unevaluatedProperties" else "items"
    same_prefix = len(old.get("prefixItems") or ()) == len(new.get("prefixItems") or ())
    if not (_known(old, keyword) and _known(new, keyword)) or (
        keyword == "unevaluatedItems" and not same_prefix
    ):
        cmp.emit(
            rule_id,
            *where,
            f"{keyword} {_verb(rule_id)} next to applicators that evaluate {members} in "
            "subschemas: which values it rejects is not decided",
            backward=False,
            forward=False,
            undecided=True,
        )
        return
    old_eff, new_eff = _effective(old, keyword), _effective(new, keyword)
    if before is not None and after is not None and not is_true(old_eff) and not is_true(new_eff):
        cmp.compare(before, after)  # both apply to the same members: compare in depth
        return
    what = "undeclared keys" if keyword == "unevaluatedProperties" else "items after the prefix"
    if not is_true(new_eff):
        effect = f"{what} must now match it"
    elif not is_true(old_eff):
        effect = f"{what} no longer have to match it"
    else:
        other = "additionalProperties" if keyword == "unevaluatedProperties" else "items"
        effect = f"no effect, {other} evaluates every member"
    cmp.emit_moved(
        rule_id, *where, f"{keyword} {_verb(rule_id)}: {effect}", before=old_eff, after=new_eff
    )


def _verb(rule_id: str) -> str:
    return rule_id.rsplit("-", 1)[1]
