"""JSON equality throughout the engine: booleans are never numbers, ``1`` and ``1.0`` are one
value, integers of any size compare exactly (``wiregate.diff.values`` and every stage that
compares values)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from wiregate.cli import main
from wiregate.diff import Change, diff
from wiregate.diff.facts import ABSENT, Fact, structural_facts
from wiregate.diff.values import json_equal, json_key

EQUAL = [
    (1, 1.0),
    (0, -0.0),
    (2**64, float(2**64)),
    ([1, {"a": 2.0}], [1.0, {"a": 2}]),
    ({"a": True, "b": [None, "x"]}, {"b": [None, "x"], "a": True}),
    (10**30, 10**30),
]
DIFFERENT = [
    (True, 1),
    (False, 0),
    (True, 1.0),
    ([1], [True]),
    ([[1]], [[True]]),
    ({"a": 1}, {"a": True}),
    ({"a": [0, {"b": False}]}, {"a": [0, {"b": 0}]}),
    (2**64 + 1, float(2**64)),  # the float is 2**64 exactly: never rounded to compare
    (10**30, 1e30),
    (1, "1"),
    (None, False),
    ([1, 2], [2, 1]),
]


@pytest.mark.parametrize(("a", "b"), EQUAL)
def test_equal_values(a: Any, b: Any) -> None:
    assert json_equal(a, b) and json_equal(b, a)
    assert json_key(a) == json_key(b)


@pytest.mark.parametrize(("a", "b"), DIFFERENT)
def test_different_values(a: Any, b: Any) -> None:
    assert not json_equal(a, b) and not json_equal(b, a)
    assert json_key(a) != json_key(b)


def test_out_of_range_floats_are_not_null() -> None:
    infinity = json.loads("1e400")
    assert json_key(infinity) != json_key(None)
    assert not json_equal(infinity, None)


def _ids(old: Any, new: Any, mode: str = "full") -> list[tuple[str, str, str, bool, bool]]:
    return [
        (c.id, c.old_pointer, c.new_pointer, c.backward, c.forward)
        for c in diff(old, new, mode=mode).changes
    ]


def test_booleans_replacing_numbers_in_an_enum_is_a_change() -> None:
    old = {"type": "object", "properties": {"flag": {"enum": [0, 1]}}}
    new = {"type": "object", "properties": {"flag": {"enum": [False, True]}}}
    result = diff(old, new, mode="full")
    assert result.changes == (
        Change(
            id="enum-changed",
            level="error",
            old_pointer="#/properties/flag/enum",
            new_pointer="#/properties/flag/enum",
            message="enum changed: added false, true; removed 0, 1",
            backward=False,
            forward=False,
        ),
    )
    assert not result.compatible


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            {"const": 1},
            {"const": True},
            [("const-changed", "#/const", "#/const", False, False)],
        ),
        (
            {"enum": [[1]]},
            {"enum": [[True]]},
            [("enum-changed", "#/enum", "#/enum", False, False)],
        ),
        (
            {"enum": [{"a": 1}]},
            {"enum": [{"a": True}]},
            [("enum-changed", "#/enum", "#/enum", False, False)],
        ),
        # Two sides of one enum: true is a new value next to 1, false a new one next to 0.
        (
            {"enum": [0, 1]},
            {"enum": [0, 1, True]},
            [("enum-extended", "#/enum", "#/enum", True, False)],
        ),
        (
            {"default": 1},
            {"default": True},
            [("default-changed", "#/default", "#/default", True, True)],
        ),
        (
            {"properties": {"a": {"const": False}}},
            {"properties": {"a": {"const": 0}}},
            [("const-changed", "#/properties/a/const", "#/properties/a/const", False, False)],
        ),
    ],
)
def test_booleans_never_equal_numbers(
    old: Any, new: Any, expected: list[tuple[str, str, str, bool, bool]]
) -> None:
    assert _ids(old, new) == expected


def test_equal_subtrees_that_differ_only_by_a_boolean_are_compared() -> None:
    """The walk skips equal subtrees; Python's ``==`` would have skipped these."""
    old = {"$defs": {"F": {"const": 1}}, "properties": {"f": {"$ref": "#/$defs/F"}}}
    new = {"$defs": {"F": {"const": True}}, "properties": {"f": {"$ref": "#/$defs/F"}}}
    assert _ids(old, new) == [("const-changed", "#/$defs/F/const", "#/$defs/F/const", False, False)]


def test_one_of_members_differing_by_a_boolean_are_not_the_same_member() -> None:
    old = {"oneOf": [{"const": 1}, {"type": "string"}]}
    new = {"oneOf": [{"const": True}, {"type": "string"}]}
    assert _ids(old, new) == [("const-changed", "#/oneOf/0/const", "#/oneOf/0/const", False, False)]


def test_unknown_keywords_differing_by_a_boolean_are_reported() -> None:
    result = diff({"foo": [1, 2]}, {"foo": [True, 2, 3]})
    assert [(c.id, c.level, c.old_pointer, c.message) for c in result.changes] == [
        (
            "unknown-keyword-changed",
            "info",
            "#/foo",
            "foo changed: foo[0] 1 -> true; foo[2] added (3) "
            "(unknown keyword: validators ignore it)",
        )
    ]


def test_structural_facts_follow_json_equality() -> None:
    assert structural_facts({"a": [1.0, 2]}, {"a": [1, 2]}) == ()
    assert structural_facts({"a": 1}, {"a": True}) == (Fact("type_changes", ("a",), 1, True),)
    assert structural_facts([1, 2], [True, 2, 3]) == (
        Fact("type_changes", (0,), 1, True),
        Fact("dictionary_item_added", (2,), ABSENT, 3),
    )
    # DeepDiff alone finds [[1]] and [[true]] equal; it is only ever shown unequal leaves.
    assert structural_facts({"x": [[1]]}, {"x": [[True]]}) == (
        Fact("type_changes", ("x", 0, 0), 1, True),
    )
    # Unordered lists: 2.0 matches 2, true matches nothing (reported at the old index).
    assert structural_facts({"enum": [1, "a", 2]}, {"enum": ["a", 2.0, True]}) == (
        Fact("type_changes", ("enum", 0), 1, True),
    )


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            {"enum": [1.0, "a"]},
            {"enum": [1, "a", "b"]},
            [("enum-extended", "#/enum", "#/enum", True, False)],
        ),
        (
            {"const": 1.0},
            {"enum": [1, 2]},
            [
                ("const-removed", "#/const", "#", True, False),
                ("enum-added", "#", "#/enum", True, True),
            ],
        ),
        ({"const": 1.0}, {"const": 1}, []),
        ({"enum": [2.0, 1]}, {"enum": [1, 2]}, []),
        ({"enum": [[1.0], {"a": 0.0}]}, {"enum": [{"a": 0}, [1]]}, []),
        ({"default": 5}, {"default": 5.0}, []),
        ({"maximum": 5}, {"maximum": 5.0}, []),
        ({"x": [1, {"y": 2}]}, {"x": [1.0, {"y": 2.0}]}, []),
    ],
)
def test_integral_floats_are_integers(
    old: Any, new: Any, expected: list[tuple[str, str, str, bool, bool]]
) -> None:
    assert sorted(_ids(old, new)) == expected


def test_enum_messages_show_values_as_written() -> None:
    result = diff({"enum": [1.5, "a"]}, {"enum": [1.5, "a", 2.0]})
    assert [c.message for c in result.changes] == ["enum extended with 2.0"]


def test_a_repeated_value_counts_once() -> None:
    assert diff({"enum": [1, 1.0, "a"]}, {"enum": ["a", 1]}, mode="full").identical


def test_big_integers_are_compared_exactly_with_floats() -> None:
    big = 2**64
    assert diff({"enum": [big]}, {"enum": [float(big)]}, mode="full").identical
    assert _ids({"enum": [big + 1]}, {"enum": [float(big)]}) == [
        ("enum-changed", "#/enum", "#/enum", False, False)
    ]


# The first lines of a text report: neither document shows a draft.
PLAIN_DRAFTS = (
    "old: 2020-12 (default: no draft-specific keyword)\n"
    "new: 2020-12 (default: no draft-specific keyword)\n"
)


def _run(tmp_path: Path, old: Any, new: Any, *args: str) -> tuple[int, str, str]:
    (tmp_path / "old.json").write_text(json.dumps(old), encoding="utf-8")
    (tmp_path / "new.json").write_text(json.dumps(new), encoding="utf-8")
    result = CliRunner().invoke(
        main, ["diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"), *args]
    )
    return result.exit_code, result.stdout, result.stderr


def test_cli_booleans_for_numbers_exit_1_in_full_mode(tmp_path: Path) -> None:
    old = {"type": "object", "properties": {"flag": {"enum": [0, 1]}}}
    new = {"type": "object", "properties": {"flag": {"enum": [False, True]}}}
    assert _run(tmp_path, old, new, "--mode", "full") == (
        1,
        PLAIN_DRAFTS
        + "error: enum-changed at #/properties/flag/enum: enum changed: added false, true; "
        "removed 0, 1 (backward: no, forward: no)\n"
        "INCOMPATIBLE (full, strict): 1 change (1 error)\n",
        "",
    )


def test_cli_integral_float_to_integer_is_an_extension(tmp_path: Path) -> None:
    # json.dumps writes 1.0 as 1.0: the file holds a float.
    assert _run(tmp_path, {"enum": [1.0, "a"]}, {"enum": [1, "a", "b"]}) == (
        0,
        PLAIN_DRAFTS
        + 'warning: enum-extended at #/enum: enum extended with "b" (backward: yes, forward: no)\n'
        "compatible (backward, strict): 1 change (1 warning)\n",
        "",
    )
