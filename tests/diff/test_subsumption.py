"""Set containment across anyOf members: each member gets its own answer.

The subsumption memo is keyed by object identity while the anyOf rule passes temporary
schemas (the member merged with its siblings). These pairs pin that a member's answer is never
taken from an earlier, already collected temporary that happened to get the same id.
"""

from __future__ import annotations

from typing import Any

import pytest

from wiregate.diff import diff

EVENT = {"type": "object", "required": ["event", "data"]}
NARROW = {"type": "object", "required": ["tool_name"]}  # rejects every EVENT lacking tool_name
ANY_OBJECT = {"type": "object"}  # accepts every EVENT

Row = tuple[str, str, str, bool, bool]


def _rows(old: Any, new: Any) -> list[Row]:
    return [
        (c.id, c.old_pointer, c.new_pointer, c.backward, c.forward)
        for c in diff(old, new, mode="full").changes
    ]


def test_the_second_member_accepting_every_old_value_makes_the_anyof_backward_compatible() -> None:
    base = EVENT
    revision = {"anyOf": [NARROW, ANY_OBJECT]}
    assert _rows(base, revision) == [
        ("any-of-added", "#", "#/anyOf", True, False),
        ("required-removed", "#/required", "#", True, False),
        ("required-removed", "#/required", "#", True, False),
    ]
    assert diff(base, revision).compatible


@pytest.mark.parametrize(
    ("members", "backward"),
    [
        ([ANY_OBJECT, NARROW], True),
        ([NARROW, ANY_OBJECT], True),
        ([NARROW, {"type": "object", "required": ["tool_name", "args"]}], False),
    ],
)
def test_any_member_accepting_every_old_value_is_enough(members: list[Any], backward: bool) -> None:
    (added,) = [row for row in _rows(EVENT, {"anyOf": members}) if row[0] == "any-of-added"]
    assert added == ("any-of-added", "#", "#/anyOf", backward, False)


def test_a_definition_read_through_a_union_with_an_open_object() -> None:
    # The shape of trace-pipeline's copy: event envelopes read as anyOf [its entry type, any
    # object]; the second member reads every envelope.
    base = {
        "$defs": {
            "ToolCallEvent": {
                "type": "object",
                "required": ["event", "data"],
                "properties": {"event": {"type": "string"}},
            }
        },
        "type": "object",
        "properties": {"calls": {"type": "array", "items": {"$ref": "#/$defs/ToolCallEvent"}}},
    }
    revision = {
        "$defs": {
            "ToolCallEntry": {
                "type": "object",
                "required": ["tool_name"],
                "properties": {"tool_name": {"type": "string"}},
            }
        },
        "type": "object",
        "properties": {
            "calls": {
                "type": "array",
                "items": {
                    "anyOf": [
                        {"$ref": "#/$defs/ToolCallEntry"},
                        {"type": "object", "additionalProperties": True},
                    ]
                },
            }
        },
    }
    event = "#/$defs/ToolCallEvent"
    items = "#/properties/calls/items"
    # One widening, reported once where the items schema was replaced (not as removals inside
    # the old definition, which the union's second member makes moot).
    assert _rows(base, revision) == [
        ("items-widened", items, items, True, False),
        ("definition-added", "#", "#/$defs/ToolCallEntry", True, True),
        ("definition-removed", event, "#", True, True),
    ]
    assert diff(base, revision).compatible


def test_many_unions_in_one_diff_each_get_their_own_answer() -> None:
    # Many temporaries in one comparison: answers alternate, so a reused id would show.
    names = [f"p{i:02d}" for i in range(12)]
    never = {"type": "object", "required": ["x"]}
    base = {"type": "object", "properties": {name: EVENT for name in names}}
    revision = {
        "type": "object",
        "properties": {
            name: {"anyOf": [NARROW, ANY_OBJECT if i % 2 == 0 else never]}
            for i, name in enumerate(names)
        },
    }
    # A union that provably accepts every old value is one property-widened finding.
    judged = [
        row for row in _rows(base, revision) if row[0] in ("any-of-added", "property-widened")
    ]
    assert judged == [
        ("property-widened", f"#/properties/{name}", f"#/properties/{name}", True, False)
        if i % 2 == 0
        else ("any-of-added", f"#/properties/{name}", f"#/properties/{name}/anyOf", False, False)
        for i, name in enumerate(names)
    ]
