"""Any draft: which draft each document is read under (``$schema``, detected, default, forced),
the normalisation of draft-04/06/07 and 2019-09 forms to the 2020-12 model, and how reports
say it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from wiregate.cli import main
from wiregate.diff import DraftChoice, Drafts, SchemaLoadError, diff
from wiregate.diff.drafts import choose_draft, parse_draft
from wiregate.diff.fingerprint import change_fingerprints

DRAFT_04 = "http://json-schema.org/draft-04/schema#"
DRAFT_06 = "http://json-schema.org/draft-06/schema#"
DRAFT_07 = "http://json-schema.org/draft-07/schema#"
DRAFT_2019 = "https://json-schema.org/draft/2019-09/schema"
DRAFT_2020 = "https://json-schema.org/draft/2020-12/schema"


@pytest.mark.parametrize(
    ("document", "draft", "evidence"),
    [
        ({"items": [{}]}, "draft-07", "array-form items at #/items"),
        (
            {"type": "array", "additionalItems": False},
            "draft-07",
            "additionalItems at #/additionalItems",
        ),
        ({"definitions": {"A": {}}}, "draft-07", "definitions at #/definitions"),
        ({"dependencies": {"a": ["b"]}}, "draft-07", "dependencies at #/dependencies"),
        ({"prefixItems": [{}]}, "2020-12", "prefixItems at #/prefixItems"),
        ({"$defs": {"A": {}}}, "2020-12", "$defs at #/$defs"),
        (
            {"dependentRequired": {"a": ["b"]}},
            "2020-12",
            "dependentRequired at #/dependentRequired",
        ),
        ({"dependentSchemas": {"a": {}}}, "2020-12", "dependentSchemas at #/dependentSchemas"),
        ({"$dynamicRef": "#node"}, "2020-12", "$dynamicRef at #/$dynamicRef"),
        ({"$recursiveRef": "#"}, "2019-09", "$recursiveRef at #/$recursiveRef"),
        (
            {"minimum": 0, "exclusiveMinimum": True},
            "draft-04",
            "boolean exclusiveMinimum at #/exclusiveMinimum",
        ),
        # Found anywhere a subschema sits, named by the pointer of its first use.
        (
            {"properties": {"v": {"items": [{}]}, "w": {"items": [{}]}}},
            "draft-07",
            "array-form items at #/properties/v/items",
        ),
        (
            {"anyOf": [{"definitions": {}}], "definitions": {}, "items": [{"items": [{}]}]},
            "draft-07",
            "definitions at #/anyOf/0/definitions, array-form items at #/items",
        ),
        # Forms of 2019-09 and draft-07 together: only 2019-09 has both.
        ({"$defs": {}, "items": [{}]}, "2019-09", "$defs at #/$defs, array-form items at #/items"),
    ],
)
def test_the_draft_is_detected_from_the_keywords(
    document: dict[str, Any], draft: str, evidence: str
) -> None:
    assert choose_draft(document) == DraftChoice(draft, "detected", evidence)


@pytest.mark.parametrize(
    ("document", "evidence"),
    [
        ({"type": "string"}, "no draft-specific keyword"),
        # Values and property names are data, not keywords.
        (
            {
                "enum": [{"items": [1]}],
                "const": {"definitions": 1},
                "properties": {"definitions": {}, "prefixItems": {}},
                "required": ["dependencies"],
            },
            "no draft-specific keyword",
        ),
        (
            {"definitions": {}, "properties": {"t": {"prefixItems": [{}]}}},
            "mixed signals: definitions at #/definitions (draft-07), prefixItems at "
            "#/properties/t/prefixItems (2020-12)",
        ),
        (
            {"$recursiveRef": "#", "$dynamicRef": "#x"},
            "mixed signals: $recursiveRef at #/$recursiveRef (2019-09), $dynamicRef at "
            "#/$dynamicRef (2020-12)",
        ),
        (
            {"$schema": "https://example.com/meta", "type": "string"},
            "unknown $schema 'https://example.com/meta'; no draft-specific keyword",
        ),
        (True, "a boolean schema"),
    ],
)
def test_no_signal_or_mixed_signals_mean_2020_12(document: Any, evidence: str) -> None:
    assert choose_draft(document) == DraftChoice("2020-12", "default", evidence)


def test_an_unknown_schema_falls_back_to_detection() -> None:
    assert choose_draft({"$schema": "https://example.com/meta", "items": [{}]}) == DraftChoice(
        "draft-07",
        "detected",
        "unknown $schema 'https://example.com/meta'; array-form items at #/items",
    )


@pytest.mark.parametrize(
    ("dialect", "draft"),
    [
        (DRAFT_04, "draft-04"),
        (DRAFT_06, "draft-06"),
        (DRAFT_07, "draft-07"),
        ("http://json-schema.org/draft-07/schema", "draft-07"),
        (DRAFT_2019, "2019-09"),
        (DRAFT_2020, "2020-12"),
        (DRAFT_2020 + "#", "2020-12"),
    ],
)
def test_schema_decides_over_the_keywords(dialect: str, draft: str) -> None:
    document = {"$schema": dialect, "prefixItems": [{}], "definitions": {}}
    assert choose_draft(document) == DraftChoice(draft, "$schema", dialect)


def test_a_forced_draft_wins_and_says_what_it_overrides() -> None:
    document = {"$schema": DRAFT_07, "items": [{}]}
    assert choose_draft(document, "2020-12") == DraftChoice(
        "2020-12", "forced", f"overrides $schema {DRAFT_07}"
    )
    assert choose_draft(document, "7") == DraftChoice("draft-07", "forced", "")
    assert choose_draft({"items": [{}]}, "draft-07") == DraftChoice("draft-07", "forced", "")


def test_draft_names() -> None:
    assert [parse_draft(name) for name in ("4", "6", "7", "2019-09", "2020-12", "draft-07")] == [
        "draft-04",
        "draft-06",
        "draft-07",
        "2019-09",
        "2020-12",
        "draft-07",
    ]
    with pytest.raises(ValueError, match="unknown draft '8'"):
        diff({}, {}, draft="8")


# A draft-07 copy of a 2020-12 contract: every draft-07 form it can use.
COPY_07: dict[str, Any] = {
    "definitions": {
        "Pair": {
            "type": "array",
            "items": [{"type": "string"}, {"type": "integer"}],
            "additionalItems": False,
        },
        "Name": {"type": "string", "maxLength": 8},
    },
    "type": "object",
    "properties": {
        "p": {"$ref": "#/definitions/Pair"},
        "a": {"$ref": "#/definitions/Name"},
        "b": {"type": "string"},
        "c": {"type": "array", "items": {"type": "integer"}, "additionalItems": {"type": "string"}},
    },
    "dependencies": {"a": ["b"], "b": {"required": ["a"]}},
}
CONTRACT_2020: dict[str, Any] = {
    "$schema": DRAFT_2020,
    "$defs": {
        "Pair": {
            "type": "array",
            "prefixItems": [{"type": "string"}, {"type": "integer"}],
            "items": False,
        },
        "Name": {"type": "string", "maxLength": 8},
    },
    "type": "object",
    "properties": {
        "p": {"$ref": "#/$defs/Pair"},
        "a": {"$ref": "#/$defs/Name"},
        "b": {"type": "string"},
        "c": {"type": "array", "items": {"type": "integer"}},
    },
    "dependentRequired": {"a": ["b"]},
    "dependentSchemas": {"b": {"required": ["a"]}},
}
COPY_07_EVIDENCE = (
    "definitions at #/definitions, array-form items at #/definitions/Pair/items, "
    "additionalItems at #/definitions/Pair/additionalItems, dependencies at #/dependencies"
)


def test_a_draft_07_copy_compares_cleanly_with_its_2020_12_contract() -> None:
    for old, new in ((COPY_07, CONTRACT_2020), (CONTRACT_2020, COPY_07)):
        result = diff(old, new, mode="full")
        assert result.identical and result.equivalent and result.compatible
    assert diff(COPY_07, CONTRACT_2020).drafts == Drafts(
        DraftChoice("draft-07", "detected", COPY_07_EVIDENCE),
        DraftChoice("2020-12", "$schema", DRAFT_2020),
    )
    # Said with $schema, the same copy is the same schema.
    assert diff({"$schema": DRAFT_07, **COPY_07}, CONTRACT_2020, mode="full").identical


def test_a_draft_07_copy_still_reports_its_real_differences() -> None:
    changed = json.loads(json.dumps(COPY_07))
    changed["definitions"]["Pair"]["items"].pop()
    result = diff(CONTRACT_2020, changed)
    # Each pointer names the place as its document wrote it: the copy's rest of the tuple is
    # its additionalItems, in its definitions.
    assert [(c.id, c.old_pointer, c.new_pointer, c.backward) for c in result.changes] == [
        (
            "tuple-item-removed",
            "#/$defs/Pair/prefixItems/1",
            "#/definitions/Pair/additionalItems",
            False,
        )
    ]


def test_findings_name_places_as_each_document_wrote_them() -> None:
    """A draft-07 copy is compared in the 2020-12 model, but each finding points into the
    copy as written (``definitions``, tuple ``items/N``, ``additionalItems``,
    ``dependencies``), where the positions of the text, GitHub and SARIF reports are found."""
    copy = json.loads(json.dumps(COPY_07))
    pair = copy["definitions"]["Pair"]
    pair["items"][1] = {"type": "number"}
    pair["additionalItems"] = {"type": "string"}
    copy["dependencies"] = {"a": ["b", "c"], "b": {"required": ["a", "c"]}}
    result = diff(CONTRACT_2020, copy, mode="full")
    assert [(c.id, c.old_pointer, c.new_pointer) for c in result.changes] == [
        (
            "schema-accepts-values-again",
            "#/$defs/Pair/items",
            "#/definitions/Pair/additionalItems",
        ),
        ("type-widened", "#/$defs/Pair/prefixItems/1/type", "#/definitions/Pair/items/1/type"),
        ("dependent-required-extended", "#/dependentRequired/a", "#/dependencies/a"),
        ("required-added", "#/dependentSchemas/b/required", "#/dependencies/b/required"),
    ]
    # The other way round, the same places, each on its own side.
    back = diff(copy, CONTRACT_2020, mode="full")
    assert sorted((c.new_pointer, c.old_pointer) for c in back.changes) == sorted(
        (c.old_pointer, c.new_pointer) for c in result.changes
    )


def test_a_draft_07_copy_keeps_its_fingerprints_in_2020_12_form() -> None:
    """Fingerprints (the drift baseline, SARIF) are of the normalised places: a copy
    rewritten from draft-07 to 2020-12 keeps its accepted findings."""
    copy_07 = json.loads(json.dumps(COPY_07))
    copy_07["definitions"]["Pair"]["items"][1] = {"type": "number"}
    copy_2020 = json.loads(json.dumps(CONTRACT_2020))
    copy_2020["$defs"]["Pair"]["prefixItems"][1] = {"type": "number"}
    prints = []
    for copy in (copy_07, copy_2020):
        changes = diff(CONTRACT_2020, copy).changes
        assert [c.id for c in changes] == ["type-widened"]
        prints.append(change_fingerprints(changes, CONTRACT_2020, copy))
    assert prints[0] == prints[1]


@pytest.mark.parametrize(
    ("target", "finding"),
    [
        ("#/properties/t/items/0", ("type-changed", "#/properties/t/items/0/type")),
        ("#/properties/t/additionalItems", ("type-changed", "#/properties/t/additionalItems/type")),
        ("#/dependencies/d", ("required-added", "#/dependencies/d/required")),
        ("#/definitions/D/items/0", ("type-changed", "#/definitions/D/items/0/type")),
    ],
)
def test_a_draft_07_ref_into_a_tuple_or_dependencies_is_followed(
    target: str, finding: tuple[str, str]
) -> None:
    """Draft-07 validators follow such a reference (it was 'points to nothing')."""

    def document(item: str, required: list[str]) -> dict[str, Any]:
        return {
            "$schema": DRAFT_07,
            "definitions": {"D": {"items": [{"type": item}]}},
            "properties": {
                "t": {"items": [{"type": item}], "additionalItems": {"type": item}},
                "u": {"$ref": target},
            },
            "dependencies": {"d": {"required": required}},
        }

    old, new = document("string", ["a"]), document("integer", ["a", "b"])
    result = diff(old, new, old_at="#/properties/u", new_at="#/properties/u")
    assert [(c.id, c.old_pointer) for c in result.changes] == [finding]
    # Its witness, checked by draft-07's reference validator through the reference.
    witness = result.changes[0].witness
    assert witness is not None
    assert jsonschema.Draft7Validator(old).is_valid({"u": witness.instance})
    assert not jsonschema.Draft7Validator(new).is_valid({"u": witness.instance})


@pytest.mark.parametrize(
    ("at", "rows"),
    [
        ("#/items/1", [("type-widened", "#/items/1/type", "#/items/1/type")]),
        (
            "#/additionalItems",
            [("type-changed", "#/additionalItems/type", "#/additionalItems/type")],
        ),
        ("#/definitions/X", [("type-changed", "#/definitions/X/type", "#/definitions/X/type")]),
        (
            "#/dependencies/a",
            [("required-added", "#/dependencies/a/required", "#/dependencies/a/required")],
        ),
    ],
)
def test_a_source_pointer_names_a_draft_07_place_as_written(
    tmp_path: Path, at: str, rows: list[tuple[str, str, str]]
) -> None:
    def document(item: str, extra: str, required: list[str]) -> dict[str, Any]:
        return {
            "$schema": DRAFT_07,
            "type": "array",
            "items": [{"type": "string"}, {"type": item}],
            "additionalItems": {"type": extra},
            "dependencies": {"a": {"required": required}},
            "definitions": {"X": {"type": extra}},
        }

    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(document("integer", "boolean", ["b"])), encoding="utf-8")
    new.write_text(json.dumps(document("number", "string", ["b", "e"])), encoding="utf-8")
    out = CliRunner().invoke(main, ["diff", f"{old}{at}", f"{new}{at}", "--format", "json"])
    assert out.exit_code in (0, 1), out.output
    changes = json.loads(out.output)["changes"]
    assert [(c["id"], c["old_pointer"], c["new_pointer"]) for c in changes] == rows
    # The array of a tuple is no schema: named as the user typed it, exit 2.
    out = CliRunner().invoke(main, ["diff", f"{old}#/items", f"{new}#/items"])
    assert (out.exit_code, out.output) == (
        2,
        f"wiregate: error: {old}#/items: '#/items' is not a schema\n",
    )


def test_under_draft_07_the_siblings_of_a_ref_are_ignored() -> None:
    """As draft-07 validators do (jsonschema included): the reference alone applies."""
    copy = {
        "$schema": DRAFT_07,
        "definitions": {"A": {"type": "string"}},
        "properties": {"a": {"$ref": "#/definitions/A", "maxLength": 3}},
    }
    assert jsonschema.Draft7Validator(copy).is_valid({"a": "longer than three"})
    plain = {"$defs": {"A": {"type": "string"}}, "properties": {"a": {"$ref": "#/$defs/A"}}}
    assert diff(copy, plain, mode="full").identical
    # Under 2020-12 the sibling applies.
    result = diff(plain, {**copy, "$schema": DRAFT_2020}, mode="full")
    assert [(c.id, c.new_pointer) for c in result.changes] == [
        ("max-length-added", "#/properties/a/maxLength")
    ]


def test_a_keyword_the_draft_does_not_have_constrains_nothing() -> None:
    """jsonschema's draft-07 validator ignores prefixItems; its 2020-12 validator ignores
    dependencies and additionalItems."""
    assert diff({"$schema": DRAFT_07, "prefixItems": [{"type": "string"}]}, {}).identical
    assert diff({"$schema": DRAFT_2020, "dependencies": {"a": ["b"]}}, {}).identical
    assert diff({"$schema": DRAFT_2020, "additionalItems": False}, {}).identical


def test_draft_04_exclusive_bounds_are_the_numeric_form() -> None:
    old = {"$schema": DRAFT_04, "type": "number", "minimum": 0, "exclusiveMinimum": True}
    assert diff(old, {"type": "number", "exclusiveMinimum": 0}, mode="full").identical
    closed = {"$schema": DRAFT_04, "maximum": 9, "exclusiveMaximum": False}
    assert diff(closed, {"maximum": 9}, mode="full").identical
    result = diff(closed, {**closed, "exclusiveMaximum": True})
    assert [(c.id, c.old_pointer, c.new_pointer, c.backward) for c in result.changes] == [
        ("exclusive-maximum-added", "#", "#/exclusiveMaximum", False),
        ("maximum-removed", "#/maximum", "#", True),
    ]


TREE_2019 = {
    "$schema": DRAFT_2019,
    "$recursiveAnchor": True,
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "children": {"type": "array", "items": {"$recursiveRef": "#"}},
        "pair": {"items": [{"type": "string"}], "additionalItems": False},
    },
}
TREE_2020 = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "children": {"type": "array", "items": {"$ref": "#"}},
        "pair": {"prefixItems": [{"type": "string"}], "items": False},
    },
}


def test_2019_09_documents() -> None:
    result = diff(TREE_2019, TREE_2020, mode="full")
    assert result.identical
    assert result.drafts == Drafts(
        DraftChoice("2019-09", "$schema", DRAFT_2019),
        DraftChoice("2020-12", "detected", "prefixItems at #/properties/pair/prefixItems"),
    )
    # Detected from $recursiveRef when $schema is absent.
    bare = {k: v for k, v in TREE_2019.items() if k != "$schema"}
    assert diff(bare, TREE_2020, mode="full").identical
    narrowed = json.loads(json.dumps(TREE_2019))
    narrowed["properties"]["name"]["maxLength"] = 5
    assert [c.id for c in diff(TREE_2019, narrowed).changes] == ["max-length-added"]
    # An example's own $id is data, not a subschema with an $id of its own (it was refused)
    with_example = {**TREE_2019, "examples": [{"$id": "http://example.com/e.json"}]}
    assert [c.id for c in diff(TREE_2019, with_example).changes] == ["examples-changed"]


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (
            {"$schema": DRAFT_2019, "properties": {"a": {"$recursiveRef": "#/$defs/A"}}},
            "old schema: #/properties/a/$recursiveRef: $recursiveRef '#/$defs/A' cannot be "
            "compared (only '#' is supported)",
        ),
        (
            {
                "$schema": DRAFT_2019,
                "$defs": {"N": {"$id": "https://example.com/n", "$recursiveAnchor": True}},
                "items": {"$recursiveRef": "#"},
            },
            "old schema: #/items/$recursiveRef: $recursiveRef '#' cannot be compared (a "
            "subschema has its own $id)",
        ),
    ],
)
def test_a_recursive_ref_beyond_the_document_root_is_a_load_error(
    document: dict[str, Any], message: str
) -> None:
    with pytest.raises(SchemaLoadError) as caught:
        diff(document, {})
    assert str(caught.value) == message


def test_definitions_and_defs_of_one_name_must_agree() -> None:
    same = {"definitions": {"A": {"type": "string"}}, "$defs": {"A": {"type": "string"}}}
    assert diff(same, {"$defs": {"A": {"type": "string"}}}).identical
    with pytest.raises(SchemaLoadError) as caught:
        diff({"definitions": {"A": {}}, "$defs": {"A": {"type": "string"}}}, {})
    assert str(caught.value) == (
        "old schema: #/definitions/A: also defined, differently, at #/$defs/A"
    )


def _write(path: Path, document: Any) -> str:
    path.write_text(json.dumps(document), encoding="utf-8")
    return str(path)


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["diff", *args])
    return result.exit_code, result.stdout, result.stderr


def test_text_report_says_each_draft_first(tmp_path: Path) -> None:
    old = _write(tmp_path / "copy.json", COPY_07)
    new = _write(tmp_path / "contract.json", CONTRACT_2020)
    assert run(old, new, "--mode", "full") == (
        0,
        f"old: draft-07 (detected: {COPY_07_EVIDENCE})\n"
        f"new: 2020-12 ($schema: {DRAFT_2020})\n"
        "compatible (full, strict): no changes\n",
        "",
    )
    assert run(new, new, "--draft", "2020-12") == (
        0,
        "old: 2020-12 (forced)\nnew: 2020-12 (forced)\ncompatible (backward, strict): no changes\n",
        "",
    )


def test_json_report_says_each_draft(tmp_path: Path) -> None:
    old = _write(tmp_path / "copy.json", COPY_07)
    new = _write(tmp_path / "contract.json", CONTRACT_2020)
    code, out, _ = run(old, new, "--format", "json")
    assert code == 0
    assert json.loads(out)["drafts"] == {
        "old": {"draft": "draft-07", "how": "detected", "evidence": COPY_07_EVIDENCE},
        "new": {"draft": "2020-12", "how": "$schema", "evidence": DRAFT_2020},
    }


def test_markdown_report_says_each_draft(tmp_path: Path) -> None:
    old = _write(tmp_path / "copy.json", COPY_07)
    new = _write(tmp_path / "contract.json", CONTRACT_2020)
    assert run(old, new, "--format", "markdown") == (
        0,
        "### Schema diff: compatible (backward, policy strict)\n"
        "\n"
        f"- old: **draft-07** (detected: `{COPY_07_EVIDENCE}`)\n"
        f"- new: **2020-12** ($schema: `{DRAFT_2020}`)\n"
        "\n"
        "No changes.\n",
        "",
    )


def test_draft_option_forces_both_documents(tmp_path: Path) -> None:
    tuple_07 = {"type": "object", "properties": {"v": {"items": [{"type": "string"}]}}}
    old = _write(tmp_path / "old.json", tuple_07)
    new = _write(tmp_path / "new.json", {"$schema": DRAFT_07, **tuple_07})
    assert run(old, new, "--draft", "2020-12") == (
        2,
        "",
        f"wiregate: error: {old}: #/properties/v/items: [{{'type': 'string'}}] is not of type "
        "'object', 'boolean' (not a valid schema under "
        "https://json-schema.org/draft/2020-12/schema)\n",
    )
    code, out, err = run(old, new, "--draft", "7")
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "old: draft-07 (forced)",
        "new: draft-07 (forced)",
        "compatible (backward, strict): no changes",
    ]
    code, out, _ = run(new, new, "--draft", "2019-09")
    assert out.splitlines()[:2] == [
        f"old: 2019-09 (forced: overrides $schema {DRAFT_07})",
        f"new: 2019-09 (forced: overrides $schema {DRAFT_07})",
    ]
    code, _, err = run(old, new, "--draft", "8")
    assert code == 2
    assert "'8' is not one of '4', '6', '7', '2019-09', '2020-12'" in err


def test_a_definition_the_draft_07_root_refers_to_is_no_record_type_of_its_own() -> None:
    """typescript-json-schema's layout: the root is a $ref into definitions. Inlining that
    definition is no removal of a record type (it was reported as a break, witness "")."""
    old = {"$schema": DRAFT_07, "$ref": "#/definitions/S", "definitions": {"S": {"type": "string"}}}
    new = {"$schema": DRAFT_07, "type": "string"}
    result = diff(old, new, mode="full")
    assert [(c.id, c.level, c.old_pointer, c.backward, c.forward) for c in result.changes] == [
        ("definition-removed", "info", "#/definitions/S", True, True)
    ]


def test_a_dynamic_ref_to_a_pointer_is_a_ref() -> None:
    """A $dynamicRef whose fragment is a JSON pointer names no $dynamicAnchor: it resolves as
    a $ref does, so the definition it names is compared where it is used."""

    def document(kind: str) -> dict[str, Any]:
        return {
            "$schema": DRAFT_2020,
            "$defs": {"n": {"type": kind}},
            "type": "object",
            "properties": {"a": {"$dynamicRef": "#/$defs/n"}},
        }

    result = diff(document("integer"), document("number"), mode="full")
    assert [
        (c.id, c.old_pointer, c.witness and (c.witness.direction, c.witness.instance))
        for c in result.changes
    ] == [("type-widened", "#/$defs/n/type", ("forward", {"a": 0.5}))]


def _tree(root_anchor: str | None, leaf_anchor: str) -> dict[str, Any]:
    document: dict[str, Any] = {
        "$schema": DRAFT_2020,
        "type": "object",
        "properties": {"kids": {"type": "array", "items": {"$dynamicRef": "#node"}}},
        "$defs": {"leaf": {"$dynamicAnchor": leaf_anchor, "type": "integer"}},
    }
    if root_anchor is not None:
        document["$dynamicAnchor"] = root_anchor
    return document


@pytest.mark.parametrize(
    ("old", "new", "rows"),
    [
        # The anchor moves from the root to the leaf: {"kids": [{}]} is valid, then not.
        (
            _tree("node", "other"),
            _tree("other", "node"),
            [
                ("ref-changed", "unknown", "#/$defs/leaf/$dynamicAnchor"),
                ("ref-changed", "unknown", "#/$dynamicAnchor"),
            ],
        ),
        # A wrapper that extended the recursion (with required) no longer does.
        (
            {
                "$schema": DRAFT_2020,
                "$dynamicAnchor": "node",
                "$ref": "#/$defs/tree",
                "required": ["v"],
                "$defs": {
                    "tree": {
                        "$dynamicAnchor": "node",
                        "type": "object",
                        "properties": {
                            "kids": {"type": "array", "items": {"$dynamicRef": "#node"}}
                        },
                    }
                },
            },
            None,
            [("ref-changed", "unknown", "#/$dynamicAnchor")],
        ),
    ],
)
def test_a_dynamic_anchor_that_a_dynamic_ref_can_reach_is_no_annotation(
    old: dict[str, Any], new: dict[str, Any] | None, rows: list[tuple[str, str, str]]
) -> None:
    """Which schema a $dynamicRef resolves to changes: undecided, not an annotation change
    (or, once merged into its $ref's target, no change at all)."""
    if new is None:
        new = {k: v for k, v in old.items() if k != "$dynamicAnchor"}
    result = diff(old, new, mode="full")
    assert [(c.id, c.level, c.old_pointer) for c in result.changes] == rows
    # A plain $anchor a $dynamicRef reaches is no annotation either.
    moved = [
        {
            "$schema": DRAFT_2020,
            "properties": {"a": {"$dynamicRef": "#n"}},
            "$defs": {"X": {"type": "integer", **x}, "Y": {"type": "string", **y}},
        }
        for x, y in (({"$anchor": "n"}, {}), ({}, {"$anchor": "n"}))
    ]
    assert [(c.id, c.level) for c in diff(*moved, mode="full").changes] == [
        ("ref-changed", "unknown"),
        ("ref-changed", "unknown"),
    ]
    # A document without a $dynamicRef: the anchor names nothing, an annotation.
    plain = diff({"$dynamicAnchor": "a", "type": "string"}, {"type": "string"}, mode="full")
    assert [(c.id, c.level) for c in plain.changes] == [("annotation-changed", "info")]


def _bundle(inner: dict[str, Any], *, identifier: str = "$id", draft: str = DRAFT_2020) -> Any:
    """A schema embedding a resource of its own (A, with an identifier), whose "#/.../B"
    names its own B, not the document's (under the draft's own definitions keyword)."""
    defs = "$defs" if draft == DRAFT_2020 else "definitions"
    return {
        "$schema": draft,
        "type": "object",
        "properties": {"p": {"$ref": f"#/{defs}/A"}},
        defs: {
            "B": {"type": "string"},
            "A": {
                identifier: "https://example.com/a",
                "type": "object",
                "properties": {"x": {"$ref": f"#/{defs}/B"}},
                defs: {"B": inner},
            },
        },
    }


@pytest.mark.parametrize(
    ("identifier", "draft"), [("$id", DRAFT_2020), ("$id", DRAFT_07), ("id", DRAFT_04)]
)
def test_a_reference_inside_an_embedded_resource_names_a_place_in_it(
    identifier: str, draft: str
) -> None:
    """A bundle's embedded schema resolves "#/..." against itself, as validators do (its
    inner definition's change was no change at all)."""
    old = _bundle({"type": "integer"}, identifier=identifier, draft=draft)
    new = _bundle({"type": "integer", "minimum": 0}, identifier=identifier, draft=draft)
    defs = "$defs" if draft == DRAFT_2020 else "definitions"
    (change,) = diff(old, new, mode="full").changes
    assert (change.id, change.new_pointer, change.backward, change.forward) == (
        "minimum-added",
        f"#/{defs}/A/{defs}/B/minimum",
        False,
        True,
    )
    assert change.witness is not None and change.witness.instance == {"p": {"x": -1}}
    validator = {DRAFT_2020: jsonschema.Draft202012Validator, DRAFT_07: jsonschema.Draft7Validator,
                 DRAFT_04: jsonschema.Draft4Validator}[draft]  # fmt: skip
    assert validator(old).is_valid({"p": {"x": -1}})
    assert not validator(new).is_valid({"p": {"x": -1}})
    # Adding the identifier moves what "#/$defs/B" names (the document's B: a string).
    plain = _bundle({"type": "integer"}, identifier=identifier, draft=draft)
    del plain[defs]["A"][identifier]
    rows = [(c.id, c.new_pointer, c.backward) for c in diff(plain, old, mode="full").changes]
    assert ("type-changed", f"#/{defs}/A/{defs}/B/type", False) in rows


def test_an_identifier_where_the_draft_has_no_schema_is_no_resource() -> None:
    """Draft-07 has no $defs: an $id under it is not read by validators, and "#/$defs/B"
    below it names the document's B."""
    old = _bundle({"type": "integer"}, draft=DRAFT_2020)
    old["$schema"] = DRAFT_07
    new = json.loads(json.dumps(old))
    new["$defs"]["B"] = {"type": "string", "maxLength": 3}
    (change,) = diff(old, new, mode="full").changes
    assert (change.id, change.new_pointer) == ("max-length-added", "#/$defs/B/maxLength")
    assert change.witness is not None and change.witness.instance == {"p": {"x": "aaaa"}}
    assert jsonschema.Draft7Validator(old).is_valid({"p": {"x": "aaaa"}})
