"""The public API: names, result properties, modes, policies and load errors."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from wiregate.diff import Change, DiffResult, DraftChoice, Drafts, SchemaLoadError, diff
from wiregate.errors import UserError

OPEN_A = {"type": "object", "properties": {"a": {"type": "string"}}}
OPEN_AB = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}}


def test_identical_documents_have_no_changes() -> None:
    result = diff(OPEN_A, dict(OPEN_A))
    default = DraftChoice("2020-12", "default", "no draft-specific keyword")
    assert result == DiffResult("backward", "strict", (), Drafts(default, default))
    assert result.identical and result.equivalent and result.compatible


def test_formatting_only_differences_are_not_changes() -> None:
    old = {
        "definitions": {"S": {"type": "string"}},
        "type": "object",
        "required": ["b", "a"],
        "properties": {"a": {"$ref": "#/definitions/S"}, "b": {"enum": ["y", "x"]}},
    }
    new = {
        "properties": {"b": {"enum": ["x", "y"]}, "a": {"type": ["string"]}},
        "required": ["a", "b"],
        "type": ["object"],
        "$defs": {"S": {"type": "string"}},
    }
    assert diff(old, new).identical


def test_draft_07_dependencies_are_dependent_required_and_dependent_schemas() -> None:
    old = {
        "$schema": _DRAFT_07,
        "type": "object",
        "dependencies": {"a": ["c", "b"], "x": {"required": ["y"]}},
    }
    new = {
        "type": "object",
        "dependentRequired": {"a": ["b", "c"]},
        "dependentSchemas": {"x": {"required": ["y"]}},
    }
    # $schema is consumed by the choice of draft (reported with the result), not compared.
    result = diff(old, new, mode="full")
    assert result.identical
    narrowed = diff(old, {**new, "dependentRequired": {"a": ["b"]}}, mode="full")
    # Dropping a required name from a dependency only loosens the schema (an error under
    # --mode full, since old readers would reject what new writers may send). Each pointer
    # names the place as its document wrote it.
    assert [(c.id, c.level, c.old_pointer, c.new_pointer) for c in narrowed.changes] == [
        ("dependent-required-narrowed", "error", "#/dependencies/a", "#/dependentRequired/a"),
    ]
    assert narrowed.backward_compatible and not narrowed.forward_compatible


def test_each_draft_has_its_own_dependency_keywords() -> None:
    """``dependencies`` is draft-07's, ``dependentRequired``/``dependentSchemas`` 2020-12's:
    a document using both is read as 2020-12 (mixed signals), where jsonschema ignores
    ``dependencies``, and forced to draft-07 it ignores the other two."""
    both = {
        "dependencies": {"a": ["b"], "x": {"required": ["y"]}},
        "dependentRequired": {"a": ["c"]},
        "dependentSchemas": {"x": {"required": ["z"]}},
    }
    new_keywords = {
        "dependentRequired": {"a": ["c"]},
        "dependentSchemas": {"x": {"required": ["z"]}},
    }
    result = diff(both, new_keywords)
    assert result.identical
    assert result.drafts is not None
    assert result.drafts.old == DraftChoice(
        "2020-12",
        "default",
        "mixed signals: dependencies at #/dependencies (draft-07), dependentRequired at "
        "#/dependentRequired (2020-12), dependentSchemas at #/dependentSchemas (2020-12)",
    )
    assert diff(both, {"dependencies": both["dependencies"]}, draft="7").identical


def test_integer_to_number_is_a_widening() -> None:
    result = diff({"type": "integer"}, {"type": "number"}, mode="full")
    assert result.changes == (
        Change(
            id="type-widened",
            level="error",
            old_pointer="#/type",
            new_pointer="#/type",
            message="type widened from integer to number",
            backward=True,
            forward=False,
        ),
    )
    assert result.backward_compatible and not result.forward_compatible
    assert not result.compatible
    assert diff({"type": "integer"}, {"type": "number"}, mode="backward").compatible
    assert not diff({"type": "integer"}, {"type": "number"}, mode="forward").compatible


def test_optional_property_in_open_model_strict_and_lenient() -> None:
    strict = diff(OPEN_A, OPEN_AB)
    assert [(c.id, c.backward, c.forward, c.tolerated_by) for c in strict.changes] == [
        ("property-added-to-open-model", False, True, None)
    ]
    assert not strict.compatible and strict.forward_compatible
    lenient = diff(OPEN_A, OPEN_AB, policy="lenient")
    assert [(c.id, c.level, c.backward, c.tolerated_by) for c in lenient.changes] == [
        ("property-added-to-open-model", "warning", True, "lenient")
    ]
    assert lenient.compatible and not lenient.equivalent


def test_annotation_changes_are_equivalent() -> None:
    result = diff({"type": "string", "title": "A"}, {"type": "string", "title": "B"}, mode="full")
    assert [(c.id, c.level) for c in result.changes] == [("title-changed", "info")]
    assert result.equivalent and not result.identical and result.compatible


def test_def_pointer_compares_a_definition_with_a_root() -> None:
    canonical = {
        "$defs": {
            "R": {"type": "object", "properties": {"x": {"$ref": "#/$defs/X"}}},
            "X": {"type": "integer"},
        }
    }
    copy = {"type": "object", "properties": {"x": {"type": "number"}}}
    result = diff(canonical, copy, old_at="#/$defs/R", new_at="#")
    assert [(c.id, c.old_pointer, c.new_pointer) for c in result.changes] == [
        ("type-widened", "#/$defs/X/type", "#/properties/x/type")
    ]


def test_recursive_schemas_terminate() -> None:
    node = {
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
            }
        },
        "$ref": "#/$defs/Node",
    }
    changed = {
        "$defs": {
            "Node": {
                "type": "object",
                "required": ["children"],
                "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
            }
        },
        "$ref": "#/$defs/Node",
    }
    assert diff(node, node).identical
    result = diff(node, changed)
    assert [(c.id, c.old_pointer, c.new_pointer) for c in result.changes] == [
        ("required-added", "#/$defs/Node", "#/$defs/Node/required")
    ]


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"$ref": "https://example.com/s.json"}, "remote $ref 'https://example.com/s.json'"),
        ({"$ref": "other.json#/x"}, "remote $ref 'other.json#/x'"),
        ({"$ref": "#/$defs/missing"}, "$ref '#/$defs/missing' points to nothing"),
        (
            {
                "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}},
                "$ref": "#/$defs/A",
            },
            "cyclic $ref #/$defs/A -> #/$defs/B -> #/$defs/A",
        ),
        # A cycle through keywords that apply to the same value never ends: jsonschema
        # recursed until Python's limit, and a finding through it had no witness.
        (
            {
                "$defs": {"A": {"allOf": [{"$ref": "#/$defs/A"}], "type": "integer"}},
                "$ref": "#/$defs/A",
            },
            "schema: #/$defs/A/allOf/0: $ref cycle #/$defs/A -> #/$defs/A never applies to a part "
            "of the value: validating with it never ends",
        ),
        (
            {
                "properties": {"x": {"$ref": "#"}},
                "$defs": {"B": {"if": {"$ref": "#/$defs/C"}}, "C": {"not": {"$ref": "#/$defs/B"}}},
                "anyOf": [{"$ref": "#/$defs/B"}],
            },
            "schema: #/$defs/C/not: $ref cycle #/$defs/B -> #/$defs/C -> #/$defs/B never applies "
            "to a part of the value: validating with it never ends",
        ),
        (
            {"dependentSchemas": {"a": {"$ref": "#"}}},
            "schema: #/dependentSchemas/a: $ref cycle # -> # never applies to a part of the "
            "value: validating with it never ends",
        ),
        ({"properties": {"a": 3}}, "#/properties/a: 3 is not of type 'object', 'boolean'"),
        # An object inside a keyword that holds data was never read as a schema (its "type"
        # as written): it was misread as accepting anything, and string -> it was compatible.
        (
            {"$ref": "#/$defs/x/enum/0", "$defs": {"x": {"enum": [{"type": "integer"}]}}},
            "$ref '#/$defs/x/enum/0' points inside 'enum', whose value is data: only a "
            "schema's location can be compared",
        ),
        (
            {"$ref": "#/$defs", "$defs": {"type": {"type": "integer"}}},
            "$ref '#/$defs' points at the subschemas of '$defs', not at one: only a schema's "
            "location can be compared",
        ),
    ],
)
def test_malformed_documents_raise_schema_load_error(
    document: dict[str, object], message: str
) -> None:
    with pytest.raises(SchemaLoadError) as caught:
        diff(document, {})
    assert message in str(caught.value)
    assert str(caught.value).startswith("old schema: ")
    assert isinstance(caught.value, UserError)


_UNDER_2020_12 = " (not a valid schema under https://json-schema.org/draft/2020-12/schema)"
_UNDER_DRAFT_07 = " (not a valid schema under http://json-schema.org/draft-07/schema)"
_DRAFT_07 = "http://json-schema.org/draft-07/schema#"
_DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"enum": 5}, "#/enum: 5 is not of type 'array'" + _UNDER_2020_12),
        ({"minLength": "x"}, "#/minLength: 'x' is not of type 'integer'" + _UNDER_2020_12),
        ({"type": 5}, "#/type: 5 is not valid under any of the given schemas" + _UNDER_2020_12),
        ({"required": "abc"}, "#/required: 'abc' is not of type 'array'" + _UNDER_2020_12),
        (
            {"properties": {"name": {"type": "strin"}}},
            "#/properties/name/type: 'strin' is not valid under any of the given schemas"
            + _UNDER_2020_12,
        ),
        (
            {"$schema": _DRAFT_07, "definitions": {"A": {"maxItems": -1}}},
            "#/definitions/A/maxItems: -1 is less than the minimum of 0" + _UNDER_DRAFT_07,
        ),
        # Array-form items is draft-07 (and 2019-09) only.
        (
            {"$schema": _DRAFT_2020_12, "properties": {"v": {"items": [{}]}}},
            "#/properties/v/items: [{}] is not of type 'object', 'boolean'" + _UNDER_2020_12,
        ),
        # A $schema the compiled meta-validator does not know is checked as 2020-12 too.
        (
            {"$schema": "https://example.com/meta", "enum": 5},
            "#/enum: 5 is not of type 'array'" + _UNDER_2020_12,
        ),
    ],
)
def test_documents_are_checked_against_their_metaschema(
    document: dict[str, object], message: str
) -> None:
    with pytest.raises(SchemaLoadError) as old_side:
        diff(document, {"type": "string"})
    assert str(old_side.value) == "old schema: " + message
    with pytest.raises(SchemaLoadError) as new_side:
        diff({"type": "string"}, document)
    assert str(new_side.value) == "new schema: " + message


def test_load_errors_name_the_given_origins() -> None:
    with pytest.raises(SchemaLoadError) as old_side:
        diff({"enum": 5}, {}, old_origin="a.json", new_origin="b.json")
    assert str(old_side.value) == "a.json: #/enum: 5 is not of type 'array'" + _UNDER_2020_12
    with pytest.raises(SchemaLoadError) as new_side:
        diff({}, {}, new_at="#/$defs/Nope", old_origin="a.json", new_origin="b.json")
    assert str(new_side.value) == "b.json: schema location '#/$defs/Nope' points to nothing"


def test_draft_07_documents_keep_their_array_form_items() -> None:
    old = {"$schema": _DRAFT_07, "items": [{"type": "string"}, {"type": "integer"}]}
    new = {"$schema": _DRAFT_07, "items": [{"type": "string"}]}
    result = diff(old, new)
    assert [(c.id, c.old_pointer, c.new_pointer) for c in result.changes] == [
        ("tuple-item-removed", "#/items/1", "#")
    ]


def test_unknown_def_pointer_is_a_load_error() -> None:
    with pytest.raises(SchemaLoadError, match="schema location '#/\\$defs/Nope' points to nothing"):
        diff({}, {}, old_at="#/$defs/Nope")


@pytest.mark.parametrize(("mode", "policy"), [("sideways", "strict"), ("full", "loose")])
def test_unknown_mode_or_policy(mode: str, policy: str) -> None:
    with pytest.raises(ValueError, match="unknown"):
        diff({}, {}, mode=mode, policy=policy)


def test_pydantic_optional_is_the_same_as_a_nullable_type() -> None:
    pydantic = {"anyOf": [{"type": "string", "maxLength": 5}, {"type": "null"}], "default": None}
    typescript = {"type": ["string", "null"], "maxLength": 5, "default": None}
    assert diff(pydantic, typescript, mode="full").identical
    result = diff({"type": "string", "maxLength": 5}, pydantic, mode="full")
    assert [(c.id, c.backward, c.forward, c.message) for c in result.changes] == [
        ("nullable-added", True, False, "null is now accepted (string -> null|string)"),
        ("default-changed", True, True, "default added"),
    ]


def test_inside_not_the_directions_swap() -> None:
    result = diff({"not": {"type": "integer"}}, {"not": {"type": "number"}}, mode="full")
    assert [(c.id, c.old_pointer, c.backward, c.forward) for c in result.changes] == [
        ("type-widened", "#/not/type", False, True)
    ]


def test_equivalent_type_lists_are_not_changes() -> None:
    assert diff({"type": ["integer", "number"]}, {"type": "number"}, mode="full").changes == ()


def test_ref_with_sibling_keywords_applies_both() -> None:
    defs = {"S": {"type": "string"}}
    old = {"$defs": defs, "properties": {"a": {"$ref": "#/$defs/S", "description": "x"}}}
    new = {"$defs": defs, "properties": {"a": {"$ref": "#/$defs/S", "maxLength": 3}}}
    result = diff(old, new)
    assert [(c.id, c.old_pointer, c.new_pointer) for c in result.changes] == [
        ("max-length-added", "#/properties/a", "#/properties/a/maxLength"),
        ("description-changed", "#/properties/a/description", "#/properties/a"),
    ]


def test_closing_additional_properties_is_tolerated_only_when_lenient() -> None:
    old = {"type": "object", "properties": {"a": {"type": "string"}}}
    new = {**old, "additionalProperties": False}
    strict, lenient = diff(old, new), diff(old, new, policy="lenient")
    assert [(c.id, c.level, c.backward, c.tolerated_by) for c in strict.changes] == [
        ("additional-properties-closed", "error", False, None)
    ]
    assert [(c.id, c.level, c.backward, c.tolerated_by) for c in lenient.changes] == [
        ("additional-properties-closed", "warning", True, "lenient")
    ]
    assert not strict.compatible and lenient.compatible


def test_unreferenced_definitions_are_compared_as_record_types() -> None:
    old = {"$defs": {"A": {"type": "object", "properties": {"x": {"type": "integer"}}}}}
    new = {"$defs": {"A": {"type": "object", "properties": {"x": {"type": "string"}}}}}
    result = diff(old, new)
    assert [(c.id, c.old_pointer) for c in result.changes] == [
        ("type-changed", "#/$defs/A/properties/x/type")
    ]
    assert diff(old, new, old_at="#/$defs/A", new_at="#/$defs/A").changes == result.changes


def _nested(keyword: str, levels: int, leaf: str) -> dict[str, Any]:
    node: dict[str, Any] = {"type": leaf}
    for _ in range(levels):
        node = {keyword: node} if keyword != "properties" else {"properties": {"a": node}}
    return node


def test_deeply_nested_schemas_are_compared() -> None:
    result = diff(_nested("properties", 100, "string"), _nested("properties", 100, "integer"))
    assert [(c.id, c.old_pointer) for c in result.changes] == [
        ("type-changed", "#" + "/properties/a" * 100 + "/type")
    ]


def _reference_chain(length: int, leaf: str) -> dict[str, Any]:
    """``$defs`` entries each referencing the next: shallow JSON, deep once inlined."""
    defs: dict[str, Any] = {
        f"D{i}": {"properties": {"a": {"$ref": f"#/$defs/D{i + 1}"}}} for i in range(length)
    }
    defs[f"D{length}"] = {"type": leaf}
    return {"$defs": defs, "$ref": "#/$defs/D0"}


def test_a_schema_too_deep_for_the_walk_is_a_load_error_naming_it() -> None:
    too_deep = _reference_chain(2000, "string")
    shallow = {"type": "object"}
    reached = "nested too deeply to compare (Python's recursion limit was reached)"
    with pytest.raises(SchemaLoadError, match=r"^a\.json: nested too deeply") as caught:
        diff(too_deep, shallow, old_origin="a.json", new_origin="b.json")
    assert str(caught.value) == f"a.json: {reached}"
    with pytest.raises(SchemaLoadError) as caught:
        diff(shallow, too_deep, old_origin="a.json", new_origin="b.json")
    assert str(caught.value) == f"b.json: {reached}"
    # Deep enough to load, too deep to compare: both documents are named.
    with pytest.raises(SchemaLoadError) as caught:
        diff(_nested("not", 400, "string"), _nested("not", 400, "integer"))
    assert str(caught.value) == f"old schema and new schema: {reached}"


RECORDS: dict[str, Any] = {
    "$defs": {
        "Rec": {"type": "object", "properties": {"id": {"type": "integer"}}},
        "Side": {"type": "integer"},
    },
    "$ref": "#/$defs/Rec",
}


def _without(document: dict[str, Any], name: str) -> dict[str, Any]:
    return {**document, "$defs": {k: v for k, v in document["$defs"].items() if k != name}}


def _rows(
    old: Any, new: Any, mode: str = "backward"
) -> list[tuple[str, str, str, str, bool, bool]]:
    return [
        (c.id, c.level, c.old_pointer, c.new_pointer, c.backward, c.forward)
        for c in diff(old, new, mode=mode).changes
    ]


def test_removing_an_unreferenced_definition_breaks_like_changing_it() -> None:
    """``Side`` is a record type of its own (validated by name): changing its type breaks
    backward compatibility, so removing it, which rejects every such record, must too."""
    changed = {**RECORDS, "$defs": {**RECORDS["$defs"], "Side": {"type": "string"}}}
    assert _rows(RECORDS, changed) == [
        ("type-changed", "error", "#/$defs/Side/type", "#/$defs/Side/type", False, False)
    ]
    assert _rows(RECORDS, _without(RECORDS, "Side")) == [
        ("definition-removed", "error", "#/$defs/Side", "#", False, True)
    ]
    assert [c.message for c in diff(RECORDS, _without(RECORDS, "Side")).changes] == [
        "definition 'Side' removed: a record type of its own, records validated by that name "
        "are rejected"
    ]
    assert not diff(RECORDS, _without(RECORDS, "Side")).compatible
    assert diff(RECORDS, _without(RECORDS, "Side"), mode="forward").compatible


def test_adding_an_unreferenced_definition_is_not_forward_compatible() -> None:
    added = _without(RECORDS, "Side"), RECORDS
    assert _rows(*added) == [("definition-added", "warning", "#", "#/$defs/Side", True, False)]
    assert _rows(*added, mode="forward") == [
        ("definition-added", "error", "#", "#/$defs/Side", True, False)
    ]
    assert [c.message for c in diff(*added).changes] == [
        "definition 'Side' added: a record type of its own, unknown to old readers"
    ]


def test_adding_or_removing_a_referenced_definition_changes_nothing_by_itself() -> None:
    """Inlining a definition is normalisation; the reference is judged where it is."""
    inline = {"type": "object", "properties": {"id": {"type": "integer"}}}
    assert _rows(_without(RECORDS, "Side"), _without(inline | {"$defs": {}}, "Rec")) == [
        ("definition-removed", "info", "#/$defs/Rec", "#", True, True)
    ]
    assert _rows(inline, _without(RECORDS, "Side"), mode="full") == [
        ("definition-added", "info", "#", "#/$defs/Rec", True, True)
    ]
    assert [c.message for c in diff(inline, _without(RECORDS, "Side")).changes] == [
        "definition 'Rec' added"
    ]


STR_REF = {"type": "object", "properties": {"a": {"$ref": "#/$defs/Str"}}}
INLINE = {"$defs": {"Rec": {"type": "object", "properties": {"a": {"type": "string"}}}}}
EXTRACTED = {"$defs": {"Rec": STR_REF, "Str": {"type": "string"}}}


def test_a_definition_referenced_only_by_another_definition_is_a_building_block() -> None:
    """Neither root references ``Rec`` nor ``Str``; ``Rec`` references ``Str``, so every
    change ``Str`` makes shows up in ``Rec``: adding or removing it changes nothing by itself."""
    assert _rows(INLINE, EXTRACTED, mode="full") == [
        ("definition-added", "info", "#", "#/$defs/Str", True, True)
    ]
    assert [c.message for c in diff(INLINE, EXTRACTED).changes] == ["definition 'Str' added"]
    assert _rows(EXTRACTED, INLINE, mode="full") == [
        ("definition-removed", "info", "#/$defs/Str", "#", True, True)
    ]
    assert [c.message for c in diff(EXTRACTED, INLINE).changes] == ["definition 'Str' removed"]
    assert diff(INLINE, EXTRACTED, mode="full").compatible
    assert diff(EXTRACTED, INLINE, mode="full").compatible


def test_a_building_block_reached_through_a_chain_of_definitions() -> None:
    """``Rec`` -> ``Mid`` -> ``Str``: ``Str`` is referenced transitively; ``Mid`` and ``Str``
    removed together change nothing by themselves, ``Rec`` carries the change."""
    chain = {
        "$defs": {
            "Rec": {"type": "object", "properties": {"a": {"$ref": "#/$defs/Mid"}}},
            "Mid": {"$ref": "#/$defs/Str", "description": "a"},
            "Str": {"type": "string"},
        }
    }
    assert _rows(chain, INLINE, mode="full") == [
        ("definition-removed", "info", "#/$defs/Mid", "#", True, True),
        (
            "description-changed",
            "info",
            "#/$defs/Mid/description",
            "#/$defs/Rec/properties/a",
            True,
            True,
        ),
        ("definition-removed", "info", "#/$defs/Str", "#", True, True),
    ]
    assert diff(chain, INLINE, mode="full").compatible


def test_a_reference_into_a_definition_references_the_definition() -> None:
    """``Other`` now points inside ``Rec``: ``Rec`` is a building block, as is ``Str``."""
    before = {"$defs": {"Other": {"type": "string"}}}
    into = {"$defs": {**EXTRACTED["$defs"], "Other": {"$ref": "#/$defs/Rec/properties/a"}}}
    assert _rows(before, into, mode="full") == [
        ("definition-added", "info", "#", "#/$defs/Rec", True, True),
        ("definition-added", "info", "#", "#/$defs/Str", True, True),
    ]


def test_a_definition_nothing_references_is_still_a_record_type() -> None:
    """``Side`` is referenced by neither the root nor any other definition."""
    with_side = {"$defs": {**EXTRACTED["$defs"], "Side": {"type": "integer"}}}
    assert _rows(with_side, EXTRACTED) == [
        ("definition-removed", "error", "#/$defs/Side", "#", False, True)
    ]
    assert not diff(with_side, EXTRACTED).compatible
    assert _rows(EXTRACTED, with_side, mode="full") == [
        ("definition-added", "error", "#", "#/$defs/Side", True, False)
    ]
    # Removing the record type ``Rec`` itself is an error; its building block ``Str``, gone
    # with it, is not.
    only_side = {"$defs": {"Side": {"type": "integer"}}}
    assert _rows(with_side, only_side) == [
        ("definition-removed", "error", "#/$defs/Rec", "#", False, True),
        ("definition-removed", "info", "#/$defs/Str", "#", True, True),
    ]


def test_recursive_definitions_nothing_else_references_are_record_types() -> None:
    """A definition referencing itself, and two referencing only each other, are still
    referenced by nothing outside themselves: record types of their own."""
    tree = {
        "type": "object",
        "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}},
    }
    pair = {
        "A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}},
        "B": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}},
    }
    assert _rows({"$defs": {"Tree": tree}}, {}) == [
        ("definition-removed", "error", "#/$defs/Tree", "#", False, True)
    ]
    assert _rows({}, {"$defs": pair}, mode="full") == [
        ("definition-added", "error", "#", "#/$defs/A", True, False),
        ("definition-added", "error", "#", "#/$defs/B", True, False),
    ]
    # Referenced from outside the pair, both are building blocks.
    used = {"$defs": {**pair, "Rec": {"$ref": "#/$defs/A"}}}
    assert _rows({"$defs": {"Rec": {"type": "object"}}}, used, mode="full")[1:] == [
        ("definition-added", "info", "#", "#/$defs/A", True, True),
        ("definition-added", "info", "#", "#/$defs/B", True, True),
    ]


_INTEGER_BELOW_UNKNOWN: dict[str, dict[str, Any]] = {
    # Below keywords no draft knows, as validators read them: OpenAPI's components, and an
    # extension whose schema refers to another (it was misread as any value)
    "components": {"$ref": "#/components/schemas/A",
                   "components": {"schemas": {"A": {"type": "integer"}}}},
    "extension": {"$ref": "#/x-shared/A",
                  "x-shared": {"A": {"$ref": "#/x-shared/B"}, "B": {"type": "integer"}}},
    # A schema there named like a data keyword
    "named default": {"$ref": "#/components/schemas/default",
                      "components": {"schemas": {"default": {"type": "integer"}}}},
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(_INTEGER_BELOW_UNKNOWN))
def test_a_ref_below_a_keyword_no_draft_knows_reads_a_schema(name: str) -> None:
    document = _INTEGER_BELOW_UNKNOWN[name]
    validator = jsonschema.validators.validator_for(document)(document)
    assert (validator.is_valid(5), validator.is_valid("5")) == (True, False)  # the reference
    assert diff({"type": "integer"}, document).backward_compatible
    narrowed = diff({"type": ["integer", "string"]}, document)
    assert not narrowed.backward_compatible and narrowed.forward_compatible


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (
            {"$id": "http://x/root", "$defs": {"a": {"$id": "http://x/a"}}, "$ref": "http://x/a"},
            "remote $ref 'http://x/a' is not fetched, nor one by $id followed; bundle it into "
            "the document and refer to it by a JSON pointer (#/...)",
        ),
        (
            {"$defs": {"a": {"$anchor": "int"}}, "$ref": "#int"},
            "$ref '#int' names an anchor: only JSON-pointer references (#/...) are followed",
        ),
    ],
)  # fmt: skip
def test_references_not_followed_say_so(document: dict[str, Any], message: str) -> None:
    with pytest.raises(SchemaLoadError) as caught:
        diff({}, document)
    assert str(caught.value).endswith(message)


def test_the_empty_reference_names_the_document() -> None:
    """As "#" does (it was taken for a remote reference)."""
    recursive = {"type": "object", "properties": {"x": {"$ref": ""}}}
    same = {"type": "object", "properties": {"x": {"$ref": "#"}}}
    assert diff(recursive, same).equivalent


def test_data_that_looks_like_a_reference_is_data() -> None:
    """A $ref inside const made its target a schema to read, and that one's remote $ref an
    error."""
    document = {"const": {"$ref": "#/x-data/foo"}, "x-data": {"foo": {"$ref": "http://r/"}}}
    assert diff(document, document).changes == ()


def test_a_long_ref_costs_the_documents_depth_not_its_length() -> None:
    """Every prefix of a $ref 60,000 steps long was built: 20 s and 3.5 GB."""
    import time

    document = {"const": {"$ref": "#" + "/a" * 60_000}, "properties": {"x": {}}}
    started = time.process_time()
    assert diff(document, {"properties": {"x": {}}}).changes
    assert time.process_time() - started < 2


def test_a_source_pointer_below_a_keyword_no_draft_knows() -> None:
    old, new = (
        {"components": {"schemas": {"A": {"type": kind}}}} for kind in ("string", "integer")
    )
    at = "#/components/schemas/A"
    result = diff(old, new, old_at=at, new_at=at)
    assert [(c.id, c.old_pointer, c.new_pointer) for c in result.changes] == [
        ("type-changed", f"{at}/type", f"{at}/type")
    ]
