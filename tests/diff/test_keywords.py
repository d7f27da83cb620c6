"""Every keyword judged: dependencies, conditionals, unevaluated*, contains bounds, format as
an annotation unless asserted, unknown keywords as annotations, and the ``unknown`` level for
what the engine cannot decide (never a break)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from wiregate.cli import main
from wiregate.diff import diff
from wiregate.reporters.diff import DIFF_REPORTERS

KIND_FILE = {"properties": {"kind": {"const": "file"}}, "required": ["kind"]}


def _rows(old: Any, new: Any, **options: Any) -> list[tuple[str, str, str, str, bool, bool]]:
    result = diff(old, new, **options)
    return [
        (c.id, c.level, c.old_pointer, c.new_pointer, c.backward, c.forward) for c in result.changes
    ]


# The first lines of a text report: the draft of each document.
NO_SIGNAL = "2020-12 (default: no draft-specific keyword)"
PLAIN_DRAFTS = f"old: {NO_SIGNAL}\nnew: {NO_SIGNAL}\n"


def _run(tmp_path: Path, old: Any, new: Any, *args: str) -> tuple[int, str, str]:
    (tmp_path / "old.json").write_text(json.dumps(old), encoding="utf-8")
    (tmp_path / "new.json").write_text(json.dumps(new), encoding="utf-8")
    result = CliRunner().invoke(
        main, ["diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"), *args]
    )
    return result.exit_code, result.stdout, result.stderr


# -- dependentRequired and dependentSchemas ------------------------------------------------


def test_removing_dependent_required_is_compatible_backward(tmp_path: Path) -> None:
    old = {"type": "object", "dependentRequired": {"sandbox": ["sandbox_image"]}}
    new = {"type": "object"}
    code, out, err = _run(tmp_path, old, new)
    assert (code, err) == (0, "")
    assert out == (
        "old: 2020-12 (detected: dependentRequired at #/dependentRequired)\n"
        f"new: {NO_SIGNAL}\n"
        "warning: dependent-required-removed at #/dependentRequired/sandbox -> #: objects "
        "holding 'sandbox' no longer have to hold 'sandbox_image' (backward: yes, forward: no)\n"
        "compatible (backward, strict): 1 change (1 warning)\n"
    )


def test_draft_07_dependencies_removed_are_the_same_loosening() -> None:
    old = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "dependencies": {"a": ["b"], "x": {"required": ["y"]}},
    }
    new = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}
    assert _rows(old, new) == [  # each at the dependencies entry that was removed
        ("dependent-required-removed", "warning", "#/dependencies/a", "#", True, False),
        ("dependent-schema-removed", "warning", "#/dependencies/x", "#", True, False),
    ]


def test_a_dependency_on_names_the_old_schema_required_anyway_changes_nothing_backward() -> None:
    old = {"type": "object", "required": ["b"]}
    new = {"type": "object", "required": ["b"], "dependentRequired": {"a": ["b"]}}
    assert _rows(old, new, mode="full") == [
        ("dependent-required-added", "info", "#", "#/dependentRequired/a", True, True),
    ]


def test_dependent_required_names_added_and_removed_per_trigger() -> None:
    old = {"dependentRequired": {"a": ["b", "c"], "d": ["a"]}}
    new = {"dependentRequired": {"a": ["c", "e"], "d": ["d"]}}  # d requiring itself: nothing
    assert _rows(old, new) == [
        (
            "dependent-required-extended",
            "error",
            "#/dependentRequired/a",
            "#/dependentRequired/a",
            False,
            True,
        ),
        (
            "dependent-required-narrowed",
            "warning",
            "#/dependentRequired/a",
            "#/dependentRequired/a",
            True,
            False,
        ),
        (
            "dependent-required-removed",
            "warning",
            "#/dependentRequired/d",
            "#/dependentRequired/d",
            True,
            False,
        ),
    ]


def test_a_changed_dependent_schema_is_compared_in_depth() -> None:
    old = {"dependentSchemas": {"a": {"properties": {"b": {"type": "integer"}}}}}
    new = {"dependentSchemas": {"a": {"properties": {"b": {"type": "number"}}}}}
    assert _rows(old, new) == [
        (
            "type-widened",
            "warning",
            "#/dependentSchemas/a/properties/b/type",
            "#/dependentSchemas/a/properties/b/type",
            True,
            False,
        ),
    ]


# -- if/then/else ---------------------------------------------------------------------------


def test_a_changed_if_is_undecided_never_a_break(tmp_path: Path) -> None:
    old = {"type": "object", "if": KIND_FILE, "then": {"required": ["path"]}}
    new = {**old, "if": {"properties": {"kind": {"const": "dir"}}, "required": ["kind"]}}
    for mode in ("backward", "forward", "full"):
        code, out, err = _run(tmp_path, old, new, "--mode", mode)
        assert (code, err) == (0, "")
        assert out == PLAIN_DRAFTS + (
            "unknown: if-changed at #/if: the condition of an if/then/else changed: which "
            "values take which branch is not decided (backward: unknown, forward: unknown)\n"
            f"compatible ({mode}, strict): 1 change (1 unknown)\n"
        )
    result = diff(old, new, mode="full")
    assert result.compatible and not result.equivalent
    document = json.loads(DIFF_REPORTERS["json"](result))
    assert [(c["id"], c["level"], c["backward"], c["forward"]) for c in document["changes"]] == [
        ("if-changed", "unknown", True, True)
    ]
    assert DIFF_REPORTERS["github"](result).startswith("::warning title=if-changed::")
    assert "| unknown | `if-changed` |" in DIFF_REPORTERS["markdown"](result)


def test_the_same_if_with_a_changed_branch_is_compared_in_depth() -> None:
    old = {"if": KIND_FILE, "then": {"required": ["path"]}}
    new = {"if": KIND_FILE, "then": {"required": ["path", "size"]}}
    assert _rows(old, new) == [
        ("required-added", "error", "#/then/required", "#/then/required", False, True),
    ]


def test_a_conditional_the_old_schema_always_met_is_compatible() -> None:
    old = {"type": "object", "required": ["path"]}
    new = {**old, "if": KIND_FILE, "then": {"required": ["path"]}}
    assert _rows(old, new, mode="full") == [("if-added", "info", "#", "#/if", True, True)]


def test_branches_without_if_constrain_nothing() -> None:
    assert diff({"then": {"required": ["a"]}}, {"else": {"type": "string"}}).identical


# -- unevaluatedProperties / unevaluatedItems ----------------------------------------------


def test_unevaluated_properties_without_applicators_is_additional_properties() -> None:
    old = {"type": "object", "properties": {"a": {}}, "unevaluatedProperties": {"type": "string"}}
    new = {"type": "object", "properties": {"a": {}}, "unevaluatedProperties": False}
    assert _rows(old, new) == [
        (
            "schema-rejects-all",
            "error",
            "#/unevaluatedProperties",
            "#/unevaluatedProperties",
            False,
            True,
        ),
    ]


def test_unevaluated_properties_behind_additional_properties_has_no_effect() -> None:
    old = {"type": "object", "additionalProperties": {"type": "string"}}
    new = {**old, "unevaluatedProperties": False}
    assert _rows(old, new, mode="full") == [
        ("unevaluated-properties-added", "info", "#", "#/unevaluatedProperties", True, True),
    ]


def test_unevaluated_properties_next_to_all_of_is_undecided() -> None:
    old: dict[str, Any] = {"allOf": [{"properties": {"a": {}}}]}
    new = {**old, "unevaluatedProperties": False}
    assert _rows(old, new) == [
        ("unevaluated-properties-added", "unknown", "#", "#/unevaluatedProperties", True, True),
    ]


def test_unevaluated_items_with_contains_is_undecided() -> None:
    old = {"type": "array", "contains": {"type": "string"}}
    new = {**old, "unevaluatedItems": False}
    assert _rows(old, new) == [
        ("unevaluated-items-added", "unknown", "#", "#/unevaluatedItems", True, True),
    ]


# -- contains, minContains, maxContains ----------------------------------------------------


def test_min_and_max_contains_without_contains_have_no_effect() -> None:
    assert diff({"type": "array"}, {"type": "array", "minContains": 3, "maxContains": 5}).identical
    assert diff({"contains": {}, "minContains": 1}, {"contains": {}}).identical


def test_contains_with_min_contains_zero_accepts_every_array() -> None:
    new = {"type": "array", "contains": {"type": "string"}, "minContains": 0}
    assert _rows({"type": "array"}, new, mode="full") == [
        ("contains-added", "info", "#", "#/contains", True, True),
    ]


def test_min_contains_zero_removed_tightens() -> None:
    old = {"type": "array", "contains": {"type": "string"}, "minContains": 0}
    new = {"type": "array", "contains": {"type": "string"}}
    assert _rows(old, new) == [
        ("min-contains-removed", "error", "#/minContains", "#", False, True),
    ]


# -- propertyNames -------------------------------------------------------------------------


def test_property_names_that_every_string_meets_constrain_nothing() -> None:
    old = {"type": "object"}
    assert _rows(old, {**old, "propertyNames": {"type": "string"}}, mode="full") == [
        ("property-names-added", "info", "#", "#/propertyNames", True, True)
    ]
    assert _rows(old, {**old, "propertyNames": {"maxLength": 3}}, mode="full") == [
        ("property-names-added", "error", "#", "#/propertyNames", False, True)
    ]
    assert _rows({**old, "propertyNames": {"pattern": "^[a-z]+$"}}, old) == [
        ("property-names-removed", "warning", "#/propertyNames", "#", True, False)
    ]


# -- format and annotations ----------------------------------------------------------------


def test_format_is_an_annotation_unless_asserted(tmp_path: Path) -> None:
    old = {"type": "string"}
    new = {"type": "string", "format": "email"}
    code, out, err = _run(tmp_path, old, new)
    assert (code, err) == (0, "")
    assert out == PLAIN_DRAFTS + (
        "info: format-added at # -> #/format: format 'email' added (an annotation; "
        "--format-assertion makes it a constraint) (backward: yes, forward: yes)\n"
        "compatible (backward, strict): 1 change (1 info)\n"
    )
    code, out, err = _run(tmp_path, old, new, "--format-assertion")
    assert (code, err) == (1, "")
    assert out == PLAIN_DRAFTS + (
        "error: format-added at # -> #/format: format 'email' added: strings must now match "
        "it (backward: no, forward: yes)\n"
        "INCOMPATIBLE (backward, strict): 1 change (1 error)\n"
    )
    assert _rows(old, new, format_assertion=True) == [
        ("format-added", "error", "#", "#/format", False, True)
    ]


def test_content_keywords_are_annotations() -> None:
    old = {"type": "string"}
    new = {
        "type": "string",
        "contentMediaType": "application/json",
        "contentEncoding": "base64",
        "contentSchema": {"type": "object"},
    }
    assert [row[:2] for row in _rows(old, new)] == [("annotation-changed", "info")] * 3


def test_unknown_vendor_keywords_are_annotations() -> None:
    old = {"type": "object", "x-order": 1, "discriminator": {"propertyName": "kind"}}
    new = {"type": "object", "x-order": 2, "nullable": True, "tsType": "Rec"}
    result = diff(old, new, mode="full")
    assert result.compatible
    assert [(c.id, c.level, c.old_pointer, c.new_pointer, c.message) for c in result.changes] == [
        (
            "unknown-keyword-changed",
            "info",
            "#",
            "#/nullable",
            "nullable added: true (unknown keyword: validators ignore it)",
        ),
        (
            "unknown-keyword-changed",
            "info",
            "#",
            "#/tsType",
            'tsType added: "Rec" (unknown keyword: validators ignore it)',
        ),
        (
            "unknown-keyword-changed",
            "info",
            "#/discriminator",
            "#",
            'discriminator removed: {"propertyName":"kind"} (unknown keyword: validators '
            "ignore it)",
        ),
        ("annotation-changed", "info", "#/x-order", "#/x-order", "x-order changed"),
    ]


# -- references the walk cannot follow ------------------------------------------------------


def test_a_recursive_reference_replaced_by_a_schema_is_undecided() -> None:
    old = {"type": "object", "properties": {"child": {"$ref": "#"}}}
    new = {"type": "object", "properties": {"child": {"type": "object"}}}
    assert _rows(old, new, mode="full") == [
        ("ref-changed", "unknown", "#/properties/child/$ref", "#/properties/child", True, True),
    ]


def test_an_undecided_member_is_not_proof_of_containment() -> None:
    """A containment question whose answer is undecided is not answered yes: the oneOf member
    added next to a changed conditional is judged as not provably covered."""
    member = {"type": "object", "if": KIND_FILE, "then": {"required": ["path"]}}
    changed = {**member, "if": {"properties": {"kind": {"const": "dir"}}, "required": ["kind"]}}
    old = {"anyOf": [member]}
    new = {"anyOf": [member, changed]}
    assert _rows(old, new, mode="full") == [
        ("any-of-member-added", "error", "#/anyOf", "#/anyOf/1", True, False),
    ]


def test_a_schema_holding_only_annotations_and_extensions_accepts_everything() -> None:
    new = {"type": "object", "properties": {"a": {"description": "any", "x-order": 1}}}
    assert _rows({"type": "object"}, new, mode="full") == [
        ("property-added-to-open-model", "info", "#", "#/properties/a", True, True)
    ]


@pytest.mark.parametrize(
    ("before", "after", "row"),
    [
        # Arithmetic says 0.3 is a multiple of 0.1; jsonschema (0.3 / 0.1 is
        # 2.9999999999999996) and JavaScript's % say no, jsonschema-rs says yes.
        (0.3, 0.1, ("multiple-of-changed", "unknown", True, True)),
        (0.1, 0.3, ("multiple-of-changed", "unknown", True, True)),
        (1, 0.1, ("multiple-of-changed", "unknown", True, True)),  # 3 / 0.1 is 30.000000000000004
        # Steps a double holds divide as arithmetic does.
        (0.5, 1.5, ("multiple-of-tightened", "error", False, True)),
        (0.25, 0.125, ("multiple-of-loosened", "warning", True, False)),
        (0.2, 0.3, ("multiple-of-changed", "error", False, False)),  # neither divides: 1 shows it
    ],
)
def test_multiple_of_a_decimal_step_is_not_judged_by_arithmetic(
    before: float, after: float, row: tuple[str, str, bool, bool]
) -> None:

    assert not jsonschema.Draft202012Validator({"multipleOf": 0.1}).is_valid(0.3)
    (change,) = diff({"multipleOf": before}, {"multipleOf": after}, mode="backward").changes
    assert (change.id, change.level, change.backward, change.forward) == row
