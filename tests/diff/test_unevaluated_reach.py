"""``unevaluatedProperties``/``unevaluatedItems`` unchanged while the keywords beside it that
evaluate members change: it then checks other members. Without in-place applicators (and,
for items, without ``contains``) it checks what ``additionalProperties``/``items`` would, and
the object and array rules judge the change with it; otherwise the change is undecided
(``unknown``), never "no change" (each case below was judged compatible, or not at all)."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from wiregate.diff import diff

OBJECT: dict[str, Any] = {"type": "object", "unevaluatedProperties": False}
ARRAY: dict[str, Any] = {"type": "array"}


@pytest.mark.parametrize(
    ("old", "new", "rows"),
    [
        (  # a property declared: the key was rejected by unevaluatedProperties
            {**OBJECT, "properties": {"a": {}}},
            {**OBJECT, "properties": {"a": {}, "b": {}}},
            [("property-added-to-closed-model", "error", True, False, ("forward", {"b": None}))],
        ),
        (  # a pattern narrowed: "x" is no longer evaluated
            {**OBJECT, "patternProperties": {"^x": {}}},
            {**OBJECT, "patternProperties": {"^xy": {}}},
            [
                ("pattern-property-added", "error", True, False, None),
                ("pattern-property-removed", "error", False, True, ("backward", {"x": None})),
            ],
        ),
        (  # the tuple grows: position 1 was rejected by unevaluatedItems
            {**ARRAY, "prefixItems": [{}], "unevaluatedItems": False},
            {**ARRAY, "prefixItems": [{}, {}], "unevaluatedItems": False},
            [("tuple-item-added", "error", True, False, ("forward", [None, None]))],
        ),
        (  # additionalProperties: true evaluates every key, for unevaluatedProperties too
            {**OBJECT, "additionalProperties": True},
            OBJECT,
            [
                (
                    "additional-properties-closed",
                    "error",
                    False,
                    True,
                    ("backward", {"wg_extra": None}),
                )
            ],
        ),
        (  # items: true evaluates every item
            {**ARRAY, "items": True, "unevaluatedItems": False},
            {**ARRAY, "unevaluatedItems": False},
            [("items-removed", "error", False, True, ("backward", [None]))],
        ),
        (  # items removed: the items are then unevaluatedItems' to check
            {**ARRAY, "items": {"type": "string"}, "unevaluatedItems": False},
            {**ARRAY, "unevaluatedItems": False},
            [("items-removed", "error", False, True, ("backward", [""]))],
        ),
        (  # a property removed while unevaluatedProperties goes from false to a schema
            {**OBJECT, "properties": {"ab": {"type": "string"}}},
            {"type": "object", "unevaluatedProperties": {"type": "number"}},
            [
                (
                    "property-removed-from-partially-open-model",
                    "error",
                    False,
                    False,
                    ("backward", {"ab": ""}),
                ),
                ("schema-accepts-values-again", "error", True, False, ("forward", {"ab": 0})),
            ],
        ),
        (  # an else that evaluated "c" removed: which keys are evaluated is not decided
            {**OBJECT, "if": {"required": ["a"]}, "then": {}, "else": {"properties": {"c": {}}}},
            {**OBJECT, "if": {"required": ["a"]}, "then": {}},
            [
                ("unevaluated-properties-reach-changed", "unknown", True, True, None),
                ("if-removed", "info", True, True, None),  # no branch constrains: if unused
            ],
        ),
        (  # a lone if: its annotations count too
            {**OBJECT, "if": {"properties": {"a": {"type": "integer"}}}},
            OBJECT,
            [("unevaluated-properties-reach-changed", "unknown", True, True, None)],
        ),
        (  # contains evaluates the items it matches
            {**ARRAY, "contains": {"type": "string"}, "unevaluatedItems": {"type": "integer"}},
            {**ARRAY, "unevaluatedItems": {"type": "integer"}},
            [
                ("contains-removed", "error", True, False, ("forward", [])),
                ("unevaluated-items-reach-changed", "unknown", True, True, None),
            ],
        ),
    ],
)
def test_which_members_unevaluated_checks(old: Any, new: Any, rows: list[Any]) -> None:
    result = diff(old, new, mode="full")
    assert [
        (
            c.id,
            c.level,
            c.backward,
            c.forward,
            c.witness and (c.witness.direction, c.witness.instance),
        )
        for c in result.changes
    ] == rows
    for change in result.changes:
        if change.witness is not None:
            accepting, other = (old, new) if change.witness.direction == "backward" else (new, old)
            assert Draft202012Validator(accepting).is_valid(change.witness.instance)
            assert not Draft202012Validator(other).is_valid(change.witness.instance)
