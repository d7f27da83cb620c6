"""``oneOf`` accepts a value matching exactly one member: a changed member is judged as if the
oneOf were an anyOf only while it shares no value with the other members on both sides, and
a member written twice rejects its values. Each claimed break's witness is checked with the
reference validator."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from wiregate.diff import diff
from wiregate.diff.verdict import DiffResult

Row = tuple[str, str, str, bool, bool]

# The members overlap on 0..10 on both sides (a value there matches both and is rejected).
U2A_OLD: dict[str, Any] = {"oneOf": [{"minimum": 0}, {"maximum": 10}]}
U2A_NEW: dict[str, Any] = {"oneOf": [{"minimum": 5}, {"maximum": 10}]}
# Apart before (no string is both non-empty and empty), overlapping on "" after.
U2B_OLD: dict[str, Any] = {
    "oneOf": [{"type": "string", "minLength": 1}, {"type": "string", "maxLength": 0}]
}
U2B_NEW: dict[str, Any] = {"oneOf": [{"type": "string"}, {"type": "string", "maxLength": 0}]}
# A member written twice: every string matches two members.
U1_OLD: dict[str, Any] = {"oneOf": [{"type": "string"}]}
U1_NEW: dict[str, Any] = {"oneOf": [{"type": "string"}, {"type": "string"}]}

# Values to look for breaks among: numbers around the bounds above, strings, other types.
SAMPLES: list[Any] = [
    *range(-3, 25),
    -0.5,
    4.5,
    10.5,
    "",
    "a",
    "abc",
    None,
    True,
    [],
    {},
]


def _rows(result: DiffResult) -> list[Row]:
    return [(c.id, c.old_pointer, c.new_pointer, c.backward, c.forward) for c in result.changes]


def _breaks(old: dict[str, Any], new: dict[str, Any], direction: str) -> list[Any]:
    """The sample values that break ``direction`` (valid on the accepting side only)."""
    accepting, other = (old, new) if direction == "backward" else (new, old)
    yes, no = Draft202012Validator(accepting), Draft202012Validator(other)
    return [v for v in SAMPLES if yes.is_valid(v) and not no.is_valid(v)]


def _check_witnesses(old: dict[str, Any], new: dict[str, Any], result: DiffResult) -> None:
    """Every witness is valid under the accepting side and invalid under the other; an error
    without one is only allowed where the sample values show no break in its directions."""
    for change in result.changes:
        if change.witness is not None:
            accepting, other = (old, new) if change.witness.direction == "backward" else (new, old)
            instance = change.witness.instance
            assert Draft202012Validator(accepting).is_valid(instance), change
            assert not Draft202012Validator(other).is_valid(instance), change
        elif change.level == "error":
            broken = [d for d in ("backward", "forward") if not getattr(change, d)]
            assert not any(_breaks(old, new, d) for d in broken), change


def _witness(result: DiffResult, rule_id: str) -> tuple[str, Any] | None:
    (change,) = (c for c in result.changes if c.id == rule_id)
    return None if change.witness is None else (change.witness.direction, change.witness.instance)


def test_a_member_narrowed_while_the_members_overlap_is_not_forward_compatible() -> None:
    # 0 matches both old members (rejected) and only the second new one (accepted).
    result = diff(U2A_OLD, U2A_NEW, mode="full")
    assert _rows(result) == [
        ("one-of-overlap-changed", "#/oneOf/0", "#/oneOf/0", True, False),
        ("minimum-tightened", "#/oneOf/0/minimum", "#/oneOf/0/minimum", False, True),
    ]
    assert not result.forward_compatible
    assert _witness(result, "one-of-overlap-changed") == ("forward", 0)
    # minimum-tightened judges the member alone: no value breaks backward (every value
    # the old oneOf accepts, below 0 or above 10, the new one accepts), so no witness.
    assert _witness(result, "minimum-tightened") is None
    assert _breaks(U2A_OLD, U2A_NEW, "backward") == []
    _check_witnesses(U2A_OLD, U2A_NEW, result)


def test_a_member_widened_while_the_members_overlap_is_not_backward_compatible() -> None:
    result = diff(U2A_NEW, U2A_OLD, mode="full")
    assert _rows(result) == [
        ("one-of-overlap-changed", "#/oneOf/0", "#/oneOf/0", False, True),
        ("minimum-loosened", "#/oneOf/0/minimum", "#/oneOf/0/minimum", True, False),
    ]
    assert not result.backward_compatible
    assert _witness(result, "one-of-overlap-changed") == ("backward", 0)
    assert _witness(result, "minimum-loosened") is None
    _check_witnesses(U2A_NEW, U2A_OLD, result)


def test_a_member_widened_into_overlap_is_not_backward_compatible() -> None:
    # "" matched only the second member; the widened first member matches it too.
    result = diff(U2B_OLD, U2B_NEW, mode="full")
    assert _rows(result) == [
        ("one-of-overlap-added", "#/oneOf/0", "#/oneOf/0", False, True),
        ("min-length-removed", "#/oneOf/0/minLength", "#/oneOf/0", True, False),
    ]
    assert not result.backward_compatible
    assert _witness(result, "one-of-overlap-added") == ("backward", "")
    assert _witness(result, "min-length-removed") is None
    _check_witnesses(U2B_OLD, U2B_NEW, result)


def test_a_member_narrowed_out_of_overlap_is_not_forward_compatible() -> None:
    result = diff(U2B_NEW, U2B_OLD, mode="full")
    assert _rows(result) == [
        ("one-of-overlap-removed", "#/oneOf/0", "#/oneOf/0", True, False),
        ("min-length-added", "#/oneOf/0", "#/oneOf/0/minLength", False, True),
    ]
    assert not result.forward_compatible
    assert _witness(result, "one-of-overlap-removed") == ("forward", "")
    assert _witness(result, "min-length-added") is None
    _check_witnesses(U2B_NEW, U2B_OLD, result)


def test_a_member_written_twice_rejects_its_values() -> None:
    result = diff(U1_OLD, U1_NEW, mode="full")
    assert _rows(result) == [("one-of-duplicate-added", "#/oneOf/0", "#/oneOf/1", False, True)]
    assert result.changes[0].message == (
        "oneOf member of type string is now written twice: a value matching it matches more "
        "than one member and is rejected"
    )
    assert _witness(result, "one-of-duplicate-added") == ("backward", "")
    _check_witnesses(U1_OLD, U1_NEW, result)


def test_a_member_no_longer_written_twice_accepts_its_values_again() -> None:
    result = diff(U1_NEW, U1_OLD, mode="full")
    assert _rows(result) == [("one-of-duplicate-removed", "#/oneOf/1", "#/oneOf/0", True, False)]
    assert _witness(result, "one-of-duplicate-removed") == ("forward", "")
    _check_witnesses(U1_NEW, U1_OLD, result)


def test_a_member_written_twice_through_one_definition_is_still_two_members() -> None:
    # Both references resolve to one schema object: it must not be taken for one member.
    defs = {"$defs": {"S": {"type": "string"}}}
    ref = {"$ref": "#/$defs/S"}
    old = {**defs, "oneOf": [ref, {"type": "integer"}]}
    new = {**defs, "oneOf": [ref, ref, {"type": "integer"}]}
    result = diff(old, new, mode="full")
    assert _rows(result) == [("one-of-duplicate-added", "#/oneOf/0", "#/oneOf/1", False, True)]
    _check_witnesses(old, new, result)
    # and a oneOf of that definition twice replacing the type accepts nothing
    old, new = {"type": "string"}, {**defs, "oneOf": [ref, ref]}
    result = diff(old, new, mode="full")
    assert [(c.id, c.backward, c.forward) for c in result.changes] == [
        ("one-of-added", False, True),
        ("definition-added", True, True),
    ]
    _check_witnesses(old, new, result)


@pytest.mark.parametrize(
    "members",
    [
        [{"type": "string"}, {"type": "string"}, {"type": "integer"}],
        [{"type": "integer"}, {"type": "string"}, {"type": "string"}],
    ],
)
def test_the_order_and_count_of_members_written_more_than_once_change_nothing(
    members: list[dict[str, Any]],
) -> None:
    old = {"oneOf": members}
    for shuffled in itertools.permutations(members):
        new = {"oneOf": [*shuffled, {"type": "string"}]}  # written three times
        assert diff(old, new, mode="full").changes == ()


def test_a_widened_member_of_disjoint_members_stays_backward_compatible() -> None:
    old = {"oneOf": [{"type": "string", "maxLength": 5}, {"type": "integer"}]}
    new = {"oneOf": [{"type": "string"}, {"type": "integer"}]}
    result = diff(old, new, mode="full")
    assert _rows(result) == [
        ("max-length-removed", "#/oneOf/0/maxLength", "#/oneOf/0", True, False)
    ]
    assert result.backward_compatible
    assert _witness(result, "max-length-removed") == ("forward", "aaaaaa")
    _check_witnesses(old, new, result)


def test_overlapping_members_left_alone_give_no_overlap_finding() -> None:
    old: dict[str, Any] = {"oneOf": [{"minimum": 0}, {"maximum": 10}], "description": "a"}
    new: dict[str, Any] = {"oneOf": [{"minimum": 0}, {"maximum": 10}], "description": "b"}
    result = diff(old, new, mode="full")
    assert _rows(result) == [("description-changed", "#/description", "#/description", True, True)]
    # a sibling constraint is judged on its own
    new = {"oneOf": [{"maximum": 10}, {"minimum": 0}], "description": "a", "multipleOf": 2}
    result = diff(old, new, mode="full")
    assert _rows(result) == [("multiple-of-added", "#", "#/multipleOf", False, True)]
    _check_witnesses(old, new, result)


def test_a_member_changed_only_in_an_annotation_while_overlapping_is_no_break() -> None:
    old = {"oneOf": [{"minimum": 0, "title": "a"}, {"maximum": 10}]}
    new = {"oneOf": [{"minimum": 0, "title": "b"}, {"maximum": 10}]}
    result = diff(old, new, mode="full")
    assert _rows(result) == [("title-changed", "#/oneOf/0/title", "#/oneOf/0/title", True, True)]


@pytest.mark.parametrize("policy", ["strict", "lenient"])
def test_a_member_of_a_one_of_over_open_record_types_changes_on_its_own(policy: str) -> None:
    """Open record types in a oneOf share values only through undeclared keys (a value with
    every field of both). Narrowing one is what it is in that member, in either policy: the
    overlap that only such a value could flip is deliberately not reported."""

    def records(statuses: list[str]) -> dict[str, Any]:
        branch = {
            "type": "object",
            "required": ["status"],
            "properties": {"status": {"enum": statuses}, "kind": {"const": "branch"}},
        }
        pair = {"type": "object", "required": ["chosen"], "properties": {"chosen": {}}}
        return {"oneOf": [branch, pair]}

    result = diff(records(["pass", "fail", "skip"]), records(["pass", "fail"]), policy=policy)
    assert [(c.id, c.new_pointer, c.backward, c.forward) for c in result.changes] == [
        ("enum-narrowed", "#/oneOf/0/properties/status/enum", False, True)
    ]


@pytest.mark.parametrize(
    ("old", "new", "mode", "rows", "witness"),
    [
        # What tells objects apart lets every other value match both members: 1 matched
        # both and was rejected, and oneOf -> anyOf was called equivalent.
        (
            {"oneOf": [{"required": ["a"]}, {"additionalProperties": False}]},
            {"anyOf": [{"required": ["a"]}, {"additionalProperties": False}]},
            "forward",
            [
                ("any-of-added", "#", "#/anyOf", True, False),
                ("one-of-removed", "#/oneOf", "#", True, False),
            ],
            ("any-of-added", ("forward", None)),
        ),
        # A tagged union written without "type": "object" rejects every string.
        (
            {"type": "string"},
            {
                "oneOf": [
                    {"properties": {"k": {"const": 1}}, "required": ["k"]},
                    {"properties": {"k": {"const": 2}}, "required": ["k"]},
                ]
            },
            "backward",
            [
                ("one-of-added", "#", "#/oneOf", False, False),
                ("type-widened", "#/type", "#", True, False),
            ],
            ("one-of-added", ("backward", "")),
        ),
    ],
)
def test_members_told_apart_only_as_objects_share_every_other_value(
    old: dict[str, Any],
    new: dict[str, Any],
    mode: str,
    rows: list[Row],
    witness: tuple[str, tuple[str, Any]],
) -> None:
    result = diff(old, new, mode=mode)
    assert _rows(result) == rows
    assert _witness(result, witness[0]) == witness[1]
    _check_witnesses(old, new, result)


@pytest.mark.parametrize(
    ("policy", "rows"),
    [
        (
            "strict",
            [
                ("one-of-overlap-changed", "#/oneOf/1", True, False, None),
                ("max-properties-added", "#/oneOf/1/maxProperties", False, True, None),
            ],
        ),
        (
            "lenient",
            [
                ("one-of-overlap-changed", "#/oneOf/1", True, True, "lenient"),
                ("max-properties-added", "#/oneOf/1/maxProperties", False, True, None),
            ],
        ),
    ],
)
def test_a_member_that_declares_no_properties_is_no_record_type(
    policy: str, rows: list[tuple[str, str, bool, bool, str | None]]
) -> None:
    """Any object may match {"type": "object"}: its overlap with {"required": ["a"]} is more
    than a record of neither type, and narrowing it accepts {"a": ...} again (it matched
    both members). Only the lenient policy, where records carry no undeclared keys, reads
    them apart."""
    old = {"oneOf": [{"required": ["a"]}, {"type": "object"}]}
    new = {"oneOf": [{"required": ["a"]}, {"type": "object", "maxProperties": 0}]}
    result = diff(old, new, mode="forward", policy=policy)
    assert [
        (c.id, c.new_pointer, c.backward, c.forward, c.tolerated_by) for c in result.changes
    ] == rows
    assert _witness(result, "one-of-overlap-changed") == (
        None if policy == "lenient" else ("forward", {"a": None})
    )
    _check_witnesses(old, new, result)
