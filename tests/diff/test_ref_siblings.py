"""A ``$ref`` beside constraints (2019-09, 2020-12): both apply, the reference as an in-place
applicator. Written as one schema only where that means the same: a keyword that reads its
neighbours (``additionalProperties`` the ``properties``, ``items`` the ``prefixItems``) never
meets a neighbour from the other side."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from wiregate.diff import diff

ANNOTATED = {"$defs": {"A": {"type": "string"}}, "$ref": "#/$defs/A", "description": "d"}


@pytest.mark.parametrize(
    ("referenced", "siblings", "value", "rows"),
    [
        # The referenced schema closes the object on its own: "b" is no key of it.
        (
            {"additionalProperties": False},
            {"properties": {"b": {}}},
            {"b": 1},
            [
                ("all-of-removed", True, False, {"b": None}),
                ("additional-properties-closed", True, True, None),
                ("definition-removed", True, True, None),
            ],
        ),
        # Its items apply from position 0: nothing is both a string and an integer. (The
        # forward break is found, its witness ["a"] is not: the search stays bounded.)
        (
            {"type": "array", "items": {"type": "integer"}},
            {"prefixItems": [{"type": "string"}]},
            ["a"],
            [
                ("items-added", False, True, None),
                ("all-of-removed", True, False, None),
                ("definition-removed", True, True, None),
            ],
        ),
        # Its patternProperties do not open the siblings' additionalProperties: false.
        (
            {"type": "object", "patternProperties": {"^x": {}}},
            {"additionalProperties": False},
            {"x": 1},
            [
                ("pattern-property-added", True, False, {"x": None}),
                ("definition-removed", True, True, None),
                ("all-of-removed", True, True, None),
            ],
        ),
    ],
)
def test_a_reference_is_not_merged_into_keywords_that_read_their_neighbours(
    referenced: dict[str, Any], siblings: dict[str, Any], value: Any, rows: list[Any]
) -> None:
    old = {"$defs": {"A": referenced}, "$ref": "#/$defs/A", **siblings}
    inline = {**referenced, **siblings}  # what merging the two used to make of it
    assert not Draft202012Validator(old).is_valid(value)
    assert Draft202012Validator(inline).is_valid(value)
    result = diff(old, inline, mode="full")
    assert not result.forward_compatible  # was: equivalent
    assert [
        (c.id, c.backward, c.forward, c.witness and c.witness.instance) for c in result.changes
    ] == rows
    for change in result.changes:  # each witness shows its break
        if change.witness is not None:
            assert Draft202012Validator(inline).is_valid(change.witness.instance)
            assert not Draft202012Validator(old).is_valid(change.witness.instance)


def test_a_reference_beside_annotations_is_still_the_schema_inline() -> None:
    inline = {"type": "string", "description": "d"}
    assert (
        diff(ANNOTATED, inline, mode="full").changes
        == diff(
            {"$defs": {"A": {"type": "string"}}, "$ref": "#/$defs/A"},
            {"type": "string"},
            mode="full",
        ).changes
    )
    assert [c.id for c in diff(ANNOTATED, inline, mode="full").changes] == ["definition-removed"]


@pytest.mark.parametrize(
    ("old", "new", "row"),
    [
        (  # a sibling added beside a recursion to the root
            {"type": "object", "properties": {"next": {"$ref": "#"}}},
            {"type": "object", "properties": {"next": {"$ref": "#", "maxProperties": 1}}},
            ("max-properties-added", "#/properties/next/maxProperties", False, True),
        ),
        (  # a sibling removed beside a recursion through $defs
            {
                "$defs": {
                    "N": {
                        "type": "object",
                        "properties": {
                            "next": {"$ref": "#/$defs/N", "required": ["v"]},
                            "v": {"type": "integer"},
                        },
                    }
                },
                "$ref": "#/$defs/N",
            },
            {
                "$defs": {
                    "N": {
                        "type": "object",
                        "properties": {
                            "next": {"$ref": "#/$defs/N"},
                            "v": {"type": "integer"},
                        },
                    }
                },
                "$ref": "#/$defs/N",
            },
            ("required-removed", "#/$defs/N/properties/next", True, False),
        ),
    ],
)
def test_keywords_beside_a_recursive_reference_are_compared(
    old: dict[str, Any], new: dict[str, Any], row: tuple[str, str, bool, bool]
) -> None:
    """A $ref back into a schema being inlined is kept as a marker; its siblings were
    dropped with it, and such a change was no change at all."""
    result = diff(old, new, mode="full")
    assert [(c.id, c.new_pointer, c.backward, c.forward) for c in result.changes] == [row]
    (change,) = result.changes
    assert change.witness is not None
    accepting, other = (old, new) if change.witness.direction == "backward" else (new, old)
    assert Draft202012Validator(accepting).is_valid(change.witness.instance)
    assert not Draft202012Validator(other).is_valid(change.witness.instance)


@pytest.mark.parametrize(
    ("old", "new", "rows"),
    [
        (  # below not: accepting {} now makes [{}] invalid
            {"required": ["b"], "items": {"not": {"$ref": "#"}}},
            {"items": {"not": {"$ref": "#"}}},
            [
                ("required-removed", "#/required", "error"),
                ("ref-changed", "#/items/not", "unknown"),
            ],
        ),
        (  # below oneOf: a value matching one member may now match two
            {"required": ["b"], "oneOf": [{"items": {"$ref": "#"}}, {"type": "array"}]},
            {"oneOf": [{"items": {"$ref": "#"}}, {"type": "array"}]},
            [
                ("required-removed", "#/required", "error"),
                ("ref-changed", "#/oneOf/0/items", "unknown"),
            ],
        ),
        (  # a recursion below items only: the change is the change, nothing more
            {"required": ["b"], "items": {"$ref": "#"}},
            {"items": {"$ref": "#"}},
            [("required-removed", "#/required", "error")],
        ),
    ],
)
def test_a_recursion_below_not_or_one_of_to_a_changed_schema_is_undecided(
    old: dict[str, Any], new: dict[str, Any], rows: list[tuple[str, str, str]]
) -> None:
    """The change was judged where it is (required removed: backward compatible), but [{}] is
    valid under the old schema and not under the new one in the first two: through the
    recursion, accepting more means accepting less. Said, never claimed either way."""
    result = diff(old, new, mode="full")
    assert [(c.id, c.old_pointer, c.level) for c in result.changes] == rows
    if len(rows) == 2:
        assert Draft202012Validator(old).is_valid([{}])
        assert not Draft202012Validator(new).is_valid([{}])
