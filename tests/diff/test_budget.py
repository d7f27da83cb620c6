"""Every comparison has a node budget and a time bound: a schema pair beyond them is one
exit-2 line naming both documents, never a hang."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from wiregate.cli import main
from wiregate.diff import NODE_BUDGET, SchemaLoadError, diff


def exploding(depth: int, width: int = 3) -> dict[str, Any]:
    """A few KB whose comparison grows as ``width ** depth``: every level is an ``anyOf`` of
    ``width`` references to the level below (each with its own title, so no two are the same
    schema), and deciding whether a string schema fits one member probes every member."""
    defs: dict[str, Any] = {"L0": {"type": "integer"}}
    for level in range(1, depth + 1):
        defs[f"L{level}"] = {
            "anyOf": [{"$ref": f"#/$defs/L{level - 1}", "title": f"m{i}"} for i in range(width)]
        }
    return {"$defs": defs, "$ref": f"#/$defs/L{depth}"}


def _write(path: Path, document: Any) -> str:
    path.write_text(json.dumps(document), encoding="utf-8")
    return str(path)


def test_node_budget_is_a_load_error_naming_both_documents() -> None:
    start = time.process_time()
    with pytest.raises(SchemaLoadError) as raised:
        diff({"type": "string"}, exploding(20), old_origin="a.json", new_origin="b.json")
    assert time.process_time() - start < 2
    assert str(raised.value) == (
        "a.json vs b.json: comparison exceeded its budget of 50,000 schema nodes "
        "(schemas too large or too recursive to compare)"
    )
    assert NODE_BUDGET == 50_000


def test_node_budget_is_an_argument() -> None:
    with pytest.raises(SchemaLoadError) as raised:
        diff({"type": "string"}, exploding(6), node_budget=100)
    assert str(raised.value) == (
        "old schema vs new schema: comparison exceeded its budget of 100 schema nodes "
        "(schemas too large or too recursive to compare)"
    )
    # The same pair within a larger budget is compared.
    result = diff({"type": "string"}, exploding(6))
    assert [(c.id, c.level) for c in result.changes][:1] == [("any-of-added", "error")]


def test_exploding_pair_from_the_cli_is_one_exit_2_line(tmp_path: Path) -> None:
    old = _write(tmp_path / "old.json", {"type": "string"})
    new = _write(tmp_path / "new.json", exploding(20))
    start = time.process_time()
    result = CliRunner().invoke(main, ["diff", old, new])
    assert time.process_time() - start < 2
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        f"wiregate: error: {old} vs {new}: comparison exceeded its budget of 50,000 schema "
        "nodes (schemas too large or too recursive to compare)\n"
    )


def test_time_limit_from_the_cli(tmp_path: Path) -> None:
    old = _write(tmp_path / "old.json", {"type": "string"})
    new = _write(tmp_path / "new.json", exploding(20))
    result = CliRunner().invoke(main, ["diff", old, new, "--time-limit", "0.001"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        f"wiregate: error: {old} vs {new}: comparison exceeded its time limit of 0.001 s "
        "(schemas too large or too recursive to compare)\n"
    )


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("0", "0.0 is not in the range 0<x<=3600.0."),
        ("-1", "-1.0 is not in the range 0<x<=3600.0."),
        ("soon", "'soon' is not a valid float range."),
        # No limit at all: a hostile schema would run for ever (nan passed every range check)
        ("nan", "nan is not a number of seconds"),
        ("inf", "inf is not in the range 0<x<=3600.0."),
        ("1e400", "inf is not in the range 0<x<=3600.0."),
        ("3601", "3601.0 is not in the range 0<x<=3600.0."),
    ],
)
def test_time_limit_is_a_number_of_seconds_up_to_an_hour(
    tmp_path: Path, value: str, why: str
) -> None:
    old = _write(tmp_path / "old.json", {"type": "string"})
    result = CliRunner().invoke(main, ["diff", old, old, "--time-limit", value])
    assert (result.exit_code, result.stderr) == (
        2,
        f"wiregate: error: diff: Invalid value for '--time-limit': {why}\n",
    )


def test_shared_definitions_compare_in_linear_time() -> None:
    # Each level references the one below twice: 2**40 paths through 40 definitions. Equal
    # documents, and documents that differ only at the bottom, are compared along the
    # definitions, not along the paths.
    def doubled(leaf: dict[str, Any]) -> dict[str, Any]:
        defs: dict[str, Any] = {"L0": leaf}
        for level in range(1, 41):
            below = {"$ref": f"#/$defs/L{level - 1}"}
            defs[f"L{level}"] = {"anyOf": [below, dict(below), {"type": "null"}]}
        return {"$defs": defs, "$ref": "#/$defs/L40"}

    start = time.process_time()
    assert diff(doubled({"type": "string"}), doubled({"type": "string"})).identical
    changed = diff(doubled({"type": "string"}), doubled({"type": "string", "maxLength": 3}))
    assert [(c.id, c.old_pointer, c.new_pointer) for c in changed.changes] == [
        ("max-length-added", "#/$defs/L0", "#/$defs/L0/maxLength")
    ]
    assert time.process_time() - start < 2


def test_mutually_recursive_definitions_stop_at_the_budget_while_resolving() -> None:
    # Twelve definitions, each with a property referencing every one: resolving inlines each
    # definition once per path of references (about 12! paths) before any comparison starts.
    defs = {
        f"D{i}": {
            "type": "object",
            "properties": {f"p{j}": {"$ref": f"#/$defs/D{j}"} for j in range(12)},
        }
        for i in range(12)
    }
    start = time.process_time()
    with pytest.raises(SchemaLoadError) as raised:
        diff(
            {"$defs": defs, "$ref": "#/$defs/D0"},
            {},
            old_origin="a.json",
            new_origin="b.json",
            node_budget=20_000,
        )
    assert time.process_time() - start < 2
    assert str(raised.value) == (
        "a.json: comparison exceeded its budget of 20,000 schema nodes "
        "(schemas too large or too recursive to compare)"
    )


def test_reference_with_a_clashing_sibling_over_shared_definitions() -> None:
    # ``$ref`` beside ``anyOf``: both apply (an allOf of the two). The target shares each
    # definition below it 2**30 times over; building the allOf never expands it.
    defs: dict[str, Any] = {"L0": {"type": "integer"}}
    for level in range(1, 31):
        below = {"$ref": f"#/$defs/L{level - 1}"}
        defs[f"L{level}"] = {"anyOf": [below, dict(below), {"type": "null", "title": f"t{level}"}]}
    document = {"$defs": defs, "$ref": "#/$defs/L30", "anyOf": [{"type": "string"}]}
    start = time.process_time()
    with pytest.raises(SchemaLoadError) as raised:
        diff(document, {"type": "string"})
    assert time.process_time() - start < 2
    assert str(raised.value) == (
        "old schema vs new schema: comparison exceeded its budget of 50,000 schema nodes "
        "(schemas too large or too recursive to compare)"
    )
    assert diff(document, document).identical


def test_a_long_enum_inside_another_is_compared_in_linear_time_under_the_clock() -> None:
    """20,000 integers inside 20,000: the values of one enum are looked up in the other's
    keys (each was compared with each: 10 s for 2,000, quadratic), and the loop looks at the
    clock, which spends no schema node, so a time limit bounds it."""
    old, new = {"enum": list(range(20_000))}, {"enum": list(range(19_999))}
    (change,) = diff(old, new).changes
    assert (change.id, change.backward, change.forward) == ("enum-narrowed", False, True)
    assert change.witness is not None and change.witness.instance == 19_999
    with pytest.raises(SchemaLoadError, match="exceeded its time limit of 1e-09 s"):
        diff(old, new, time_limit=1e-9)


def test_a_long_string_enum_inside_another_is_compared_in_linear_time_under_the_clock() -> None:
    """The same for strings: each was looked up in a tuple of the other's (60,000 took 30 s
    and ignored --time-limit; 200,000 ran for minutes), and the loop never looked at the
    clock."""
    old = {"enum": [f"v{i}" for i in range(60_000)]}
    new = {"enum": [f"v{i}" for i in range(1, 60_001)]}
    (change,) = diff(old, new, mode="full").changes
    assert (change.id, change.backward, change.forward) == ("enum-changed", False, False)
    assert change.witness is not None and change.witness.instance == "v0"
    with pytest.raises(SchemaLoadError, match="exceeded its time limit of 1e-09 s"):
        diff(old, new, time_limit=1e-9)
