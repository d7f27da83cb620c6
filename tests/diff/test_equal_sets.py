"""Pairs whose instance sets are equal, or one provably inside the other, written with
different keywords: once reported as breaking with no witness (a break no value shows), now
decided by the normal form (empty arrays and objects, counts of items and properties, bounded
ranges of exact multiples, the empty string). Each pair is pinned both ways round, through the
command line; every break that remains has a witness the reference validator confirms."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator

from wiregate.cli import main
from wiregate.diff.containment import Containment
from wiregate.diff.load import normalise_document, resolve

# id, level, old pointer, new pointer, backward, forward
Row = tuple[str, str, str, str, bool, bool]
Pair = tuple[dict[str, Any], dict[str, Any]]

EMPTY_STRING: Pair = ({"type": "string", "maxLength": 0}, {"const": ""})
NO_ITEMS: Pair = ({"type": "array", "items": False}, {"type": "array", "maxItems": 0})
NON_EMPTY_ARRAY: Pair = ({"type": "array", "minItems": 1}, {"type": "array", "contains": {}})
NO_PROPERTIES: Pair = (
    {"type": "object", "propertyNames": False},
    {"type": "object", "maxProperties": 0},
)
HALVES: Pair = (
    {"type": "number", "multipleOf": 0.5, "minimum": 0, "maximum": 1},
    {"enum": [0, 0.5, 1]},
)
REQUIRED_A: Pair = ({"type": "object", "minProperties": 1}, {"type": "object", "required": ["a"]})

CASES: list[tuple[str, dict[str, Any], dict[str, Any], int, list[Row]]] = [
    (
        "empty-string",
        EMPTY_STRING[0],
        EMPTY_STRING[1],
        0,
        [
            ("const-added", "info", "#", "#/const", True, True),
            ("max-length-removed", "info", "#/maxLength", "#", True, True),
        ],
    ),
    (
        "empty-string-reversed",
        EMPTY_STRING[1],
        EMPTY_STRING[0],
        0,
        [
            ("max-length-added", "info", "#", "#/maxLength", True, True),
            ("const-removed", "info", "#/const", "#", True, True),
        ],
    ),
    (
        "no-items",
        NO_ITEMS[0],
        NO_ITEMS[1],
        0,
        [
            ("max-items-added", "info", "#", "#/maxItems", True, True),
            ("items-removed", "info", "#/items", "#", True, True),
        ],
    ),
    (
        "no-items-reversed",
        NO_ITEMS[1],
        NO_ITEMS[0],
        0,
        [
            ("items-added", "info", "#", "#/items", True, True),
            ("max-items-removed", "info", "#/maxItems", "#", True, True),
        ],
    ),
    (
        "non-empty-array",
        NON_EMPTY_ARRAY[0],
        NON_EMPTY_ARRAY[1],
        0,
        [
            ("contains-added", "info", "#", "#/contains", True, True),
            ("min-items-removed", "info", "#/minItems", "#", True, True),
        ],
    ),
    (
        "non-empty-array-reversed",
        NON_EMPTY_ARRAY[1],
        NON_EMPTY_ARRAY[0],
        0,
        [
            ("min-items-added", "info", "#", "#/minItems", True, True),
            ("contains-removed", "info", "#/contains", "#", True, True),
        ],
    ),
    (
        "no-properties",
        NO_PROPERTIES[0],
        NO_PROPERTIES[1],
        0,
        [
            ("max-properties-added", "info", "#", "#/maxProperties", True, True),
            ("property-names-removed", "info", "#/propertyNames", "#", True, True),
        ],
    ),
    (
        "no-properties-reversed",
        NO_PROPERTIES[1],
        NO_PROPERTIES[0],
        0,
        [
            ("property-names-added", "info", "#", "#/propertyNames", True, True),
            ("max-properties-removed", "info", "#/maxProperties", "#", True, True),
        ],
    ),
    (
        "halves",
        HALVES[0],
        HALVES[1],
        0,
        [
            ("enum-added", "info", "#", "#/enum", True, True),
            ("maximum-removed", "info", "#/maximum", "#", True, True),
            ("minimum-removed", "info", "#/minimum", "#", True, True),
            ("multiple-of-removed", "info", "#/multipleOf", "#", True, True),
        ],
    ),
    (
        "halves-reversed",
        HALVES[1],
        HALVES[0],
        0,
        [
            ("maximum-added", "info", "#", "#/maximum", True, True),
            ("minimum-added", "info", "#", "#/minimum", True, True),
            ("multiple-of-added", "info", "#", "#/multipleOf", True, True),
            ("enum-removed", "info", "#/enum", "#", True, True),
        ],
    ),
    # Every object with "a" has a property (forward); {"b": 1} lacks "a" (backward).
    (
        "required-a",
        REQUIRED_A[0],
        REQUIRED_A[1],
        1,
        [
            ("required-added", "error", "#", "#/required", False, True),
            ("min-properties-removed", "info", "#/minProperties", "#", True, True),
        ],
    ),
    (
        "required-a-reversed",
        REQUIRED_A[1],
        REQUIRED_A[0],
        1,
        [
            ("required-removed", "error", "#/required", "#", True, False),
            ("min-properties-added", "info", "#", "#/minProperties", True, True),
        ],
    ),
]


def _diff(tmp_path: Path, old: Any, new: Any, *options: str) -> tuple[int, str]:
    paths = [tmp_path / "old.json", tmp_path / "new.json"]
    for path, schema in zip(paths, (old, new), strict=True):
        path.write_text(json.dumps(schema), encoding="utf-8")
    result = CliRunner().invoke(main, ["diff", *map(str, paths), *options])
    assert result.stderr == ""
    return result.exit_code, result.stdout


@pytest.mark.parametrize(("label", "old", "new", "code", "rows"), CASES, ids=[c[0] for c in CASES])
def test_exact_findings_in_full_mode(
    tmp_path: Path, label: str, old: Any, new: Any, code: int, rows: list[Row]
) -> None:
    exit_code, out = _diff(tmp_path, old, new, "--mode", "full", "--format", "json")
    report = json.loads(out)
    found = [
        (c["id"], c["level"], c["old_pointer"], c["new_pointer"], c["backward"], c["forward"])
        for c in report["changes"]
    ]
    assert (exit_code, found) == (code, rows)
    for change in report["changes"]:
        if change["level"] != "error":
            assert change["witness"] is None
            continue
        # The break is real: its witness is accepted by one side and rejected by the other.
        witness = change["witness"]
        assert witness is not None, change["id"]
        accepting, other = (old, new) if witness["direction"] == "backward" else (new, old)
        instance = witness["instance"]
        assert Draft202012Validator(accepting).is_valid(instance)
        assert not Draft202012Validator(other).is_valid(instance)


@pytest.mark.parametrize(
    ("reverse", "mode", "code"),
    [(False, "forward", 0), (False, "backward", 1), (True, "backward", 0), (True, "forward", 1)],
)
def test_required_a_is_compatible_in_the_direction_it_keeps(
    tmp_path: Path, reverse: bool, mode: str, code: int
) -> None:
    # NEW's objects all lie inside OLD: forward compatible, backward not.
    old, new = REQUIRED_A[::-1] if reverse else REQUIRED_A
    assert _diff(tmp_path, old, new, "--mode", mode)[0] == code


# -- the reasoning behind them, on other schemas --------------------------------------------


def _tree(schema: Any) -> Any:
    return resolve(normalise_document(schema, origin="t", draft="2020-12"), "#", origin="t").tree


def _never(sub: Any, sup: Any) -> bool:
    return False


@pytest.mark.parametrize(
    ("sup", "sub"),
    [
        # At most as many items as prefixItems, when items is false.
        ({"maxItems": 2}, {"type": "array", "prefixItems": [{}, {}], "items": False}),
        # A closed model without properties, or with no name allowed, is the empty object.
        ({"maxProperties": 0}, {"type": "object", "additionalProperties": False}),
        ({"type": "object", "required": []}, {"type": "object", "propertyNames": False}),
        # contains {} with minContains 2 needs two items; with maxContains 1, at most one.
        ({"type": "array", "minItems": 2}, {"type": "array", "contains": {}, "minContains": 2}),
        (
            {"type": "array", "contains": {}, "maxContains": 1},
            {"type": "array", "minItems": 1, "maxItems": 1},
        ),
        ({"minProperties": 2}, {"type": "object", "required": ["a", "b"]}),
        # The empty array meets whatever constrains items only.
        (
            {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
            {"type": "array", "maxItems": 0},
        ),
        # Multiples of a quarter (an exact step) between bounds, integers among them.
        (
            {"enum": [0.25, 0.5, 0.75]},
            {"type": "number", "multipleOf": 0.25, "exclusiveMinimum": 0, "exclusiveMaximum": 1},
        ),
        ({"enum": [0, 1]}, {"type": "integer", "multipleOf": 0.5, "minimum": 0, "maximum": 1.5}),
        ({"type": "number", "multipleOf": 0.5}, {"enum": [-1, 0.5, 3]}),
        ({"enum": ["", "a"]}, {"type": "string", "maxLength": 0}),
    ],
)
def test_contained(sup: Any, sub: Any) -> None:
    assert Containment(_never).contains(_tree(sup), _tree(sub), structural=False)


@pytest.mark.parametrize(
    ("sup", "sub"),
    [
        ({"maxItems": 1}, {"type": "array", "prefixItems": [{}, {}], "items": False}),
        # contains of a kind of item is not a count: [""] has one item, none an integer.
        ({"type": "array", "contains": {"type": "integer"}}, {"type": "array", "minItems": 1}),
        ({"type": "array", "contains": {}, "maxContains": 1}, {"type": "array", "minItems": 1}),
        ({"type": "object", "required": ["a"]}, {"type": "object", "minProperties": 1}),
        ({"type": "array", "minItems": 1}, {"type": "array", "items": False}),
        # 0.1 is no exact step: validators' float division decides, not arithmetic.
        (
            {"enum": [0, 0.1, 0.2]},
            {"type": "number", "multipleOf": 0.1, "minimum": 0, "maximum": 0.2},
        ),
        ({"enum": [0, 0.5]}, {"type": "number", "multipleOf": 0.5, "minimum": 0, "maximum": 1}),
        ({"const": "a"}, {"type": "string", "maxLength": 0}),
    ],
)
def test_not_contained(sup: Any, sub: Any) -> None:
    assert not Containment(_never).contains(_tree(sup), _tree(sub), structural=False)
