"""Verdicts decided by set containment across keywords, and the root edit of each finding.

The cross-keyword probes pin exact findings; the property tests check that containment is
sound against the reference validator: whenever one schema is said to contain another, every
instance that hypothesis-jsonschema generates from the smaller one validates under the larger.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument, Unsatisfiable
from hypothesis_jsonschema import from_schema
from jsonschema import Draft202012Validator

from wiregate.diff import diff
from wiregate.diff.containment import Containment, length_bounds
from wiregate.diff.load import normalise_document, resolve
from wiregate.reporters.diff import change_to_json

Row = tuple[str, str, str, bool, bool]


def _rows(old: Any, new: Any) -> list[Row]:
    return [
        (c.id, c.old_pointer, c.new_pointer, c.backward, c.forward)
        for c in diff(old, new, mode="full").changes
    ]


HEX16 = {"type": "string", "pattern": "^[0-9a-f]{16}$"}
STRING_OR_INTEGER = [{"type": "string"}, {"type": "integer"}]


@pytest.mark.parametrize(
    ("old", "new", "rows"),
    [
        # Every 16-hex string has at least one character: backward yes; forward no.
        (
            HEX16,
            {"type": "string", "minLength": 1},
            [
                ("pattern-removed", "#/pattern", "#", True, False),
                ("min-length-added", "#", "#/minLength", True, True),
            ],
        ),
        # The anchors bound the length to 16, or 17 with the final newline that `$` admits
        # under the reference validator's reading of patterns: maxLength 16 is not implied.
        (
            HEX16,
            {"type": "string", "maxLength": 16},
            [
                ("max-length-added", "#", "#/maxLength", False, True),
                ("pattern-removed", "#/pattern", "#", True, False),
            ],
        ),
        # Disjoint members: oneOf and anyOf are the same set, both ways round.
        (
            {"oneOf": STRING_OR_INTEGER},
            {"anyOf": STRING_OR_INTEGER},
            [
                ("any-of-added", "#", "#/anyOf", True, True),
                ("one-of-removed", "#/oneOf", "#", True, True),
            ],
        ),
        (
            {"anyOf": STRING_OR_INTEGER},
            {"oneOf": STRING_OR_INTEGER},
            [
                ("one-of-added", "#", "#/oneOf", True, True),
                ("any-of-removed", "#/anyOf", "#", True, True),
            ],
        ),
        # {0, 1, 2} lies inside [0, 10]: every new value was accepted (forward), not the
        # reverse (backward: 5 is now rejected).
        (
            {"minimum": 0, "maximum": 10},
            {"enum": [0, 1, 2]},
            [
                ("enum-added", "#", "#/enum", False, True),
                ("maximum-removed", "#/maximum", "#", True, True),
                ("minimum-removed", "#/minimum", "#", True, True),
            ],
        ),
        # The integers 0..2 are exactly the enum: equivalent.
        (
            {"type": "integer", "minimum": 0, "maximum": 4, "multipleOf": 2},
            {"enum": [0, 2, 4]},
            [
                ("enum-added", "#", "#/enum", True, True),
                ("maximum-removed", "#/maximum", "#", True, True),
                ("minimum-removed", "#/minimum", "#", True, True),
                ("multiple-of-removed", "#/multipleOf", "#", True, True),
            ],
        ),
        ({"type": "string"}, {"enum": ["a", "b"]}, [("enum-added", "#", "#/enum", False, True)]),
        ({"enum": ["a"]}, {"type": "string"}, [("enum-removed", "#/enum", "#", True, False)]),
        ({"const": 1}, {"type": "integer"}, [("const-removed", "#/const", "#", True, False)]),
        ({"type": "integer"}, {"const": 1}, [("const-added", "#", "#/const", False, True)]),
        # multipleOf 1 makes numbers integers: the same set.
        (
            {"type": "integer"},
            {"type": "number", "multipleOf": 1},
            [
                ("multiple-of-added", "#", "#/multipleOf", True, True),
                ("type-widened", "#/type", "#/type", True, True),
            ],
        ),
        # allOf [A, B] is the merged schema.
        (
            {"allOf": [{"type": "string"}, {"minLength": 1}]},
            {"type": "string", "minLength": 1},
            [
                ("min-length-added", "#", "#/minLength", True, True),
                ("all-of-removed", "#/allOf", "#", True, True),
            ],
        ),
    ],
)
def test_cross_keyword_verdicts(old: Any, new: Any, rows: list[Row]) -> None:
    assert _rows(old, new) == rows


def test_pattern_to_min_length_is_backward_compatible_only() -> None:
    result = diff(HEX16, {"type": "string", "minLength": 1}, mode="full")
    assert (result.backward_compatible, result.forward_compatible) == (True, False)
    assert [c.message for c in result.changes] == [
        "pattern '^[0-9a-f]{16}$' removed",
        "minLength 1 added; every value the old schema accepts already meets it",
    ]


def test_all_of_and_its_merged_schema_are_equivalent() -> None:
    merged = {"type": "object", "required": ["a", "b"], "properties": {"a": {"type": "string"}}}
    split = {
        "allOf": [
            {"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}},
            {"required": ["b"]},
        ]
    }
    assert diff(split, merged, mode="full").equivalent
    assert diff(merged, split, mode="full").equivalent


def test_keywords_beyond_the_normal_form_are_never_assumed_to_hold() -> None:
    contains = Containment(_never).contains
    conditional = {"if": {"minimum": 0}, "then": {"maximum": 5}}
    assert not contains(_tree(conditional), _tree({"type": "integer", "minimum": 7}))
    assert not contains(_tree({"not": {"type": "string"}}), _tree({"type": "integer"}))
    # A keyword JSON Schema does not define constrains nothing: the same set.
    assert contains(_tree({"vendor": 1}), _tree({"type": "string"}))


def test_keywords_that_read_one_another_are_compared_as_a_group() -> None:
    contains = Containment(_never).contains
    rest = {"type": "array", "contains": {"type": "string"}}
    # minContains 0 makes contains accept every array: not inside contains alone.
    assert not contains(_tree(rest), _tree({**rest, "minContains": 0}))
    closed = {"type": "object", "additionalProperties": False}
    assert not contains(_tree(closed), _tree({**closed, "properties": {"v": {}}}))
    assert contains(
        _tree({"type": "object", "required": ["a"]}), _tree({**closed, "required": ["a", "b"]})
    )


def test_format_is_a_constraint_only_when_asserted() -> None:
    date, text = _tree({"type": "string", "format": "date"}), _tree({"type": "string"})
    assert Containment(_never).contains(date, text)
    assert not Containment(_never, formats=True).contains(date, text)
    assert Containment(_never, formats=True).contains(text, date)


@pytest.mark.parametrize(
    ("pattern", "bounds"),
    [
        ("^[0-9a-f]{16}$", (16, 17)),
        ("[0-9a-f]{16}", (16, None)),
        ("^a|b$", (1, None)),
        ("^(a|bb)$", (1, 3)),
        ("(?<=a)b", (1, None)),
        ("(", None),
    ],
)
def test_length_bounds_of_a_pattern(pattern: str, bounds: tuple[int, int | None] | None) -> None:
    assert length_bounds(pattern) == bounds


# -- one widening, one finding --------------------------------------------------------------


def test_a_union_containing_the_old_items_schema_is_one_items_widened_finding() -> None:
    entry = {"type": "object", "required": ["tool_name"], "properties": {"tool_name": {}}}
    old = {"$defs": {"Entry": entry}, "type": "array", "items": {"$ref": "#/$defs/Entry"}}
    new = {
        "$defs": {"Entry": entry},
        "type": "array",
        "items": {"anyOf": [{"$ref": "#/$defs/Entry"}, {"type": "object"}]},
    }
    (change,) = diff(old, new).changes
    assert (change.id, change.old_pointer, change.new_pointer) == (
        "items-widened",
        "#/items",
        "#/items",
    )
    assert change.message == (
        "items widened from Entry to anyOf [Entry, any object], which accepts every value the "
        "old one did"
    )
    (back,) = diff(new, old).changes
    assert (back.id, back.backward, back.forward) == ("items-narrowed", False, True)


def test_a_union_that_only_overlaps_is_still_explained_member_by_member() -> None:
    old = {"type": "array", "items": {"type": "string"}}
    new = {"type": "array", "items": {"anyOf": [{"type": "integer"}, {"type": "boolean"}]}}
    assert _rows(old, new) == [
        ("any-of-added", "#/items", "#/items/anyOf", False, False),
        ("type-changed", "#/items/type", "#/items", False, False),
    ]


def test_one_of_member_removed_says_which_records_are_rejected() -> None:
    tree = {
        "type": "object",
        "required": ["kind", "branches"],
        "properties": {"kind": {"const": "tree"}, "branches": {"type": "array"}},
    }
    branch = {
        "type": "object",
        "required": ["kind"],
        "properties": {"kind": {"const": "branch"}},
    }
    old = {
        "$defs": {"Tree": tree, "Branch": branch},
        "oneOf": [{"$ref": "#/$defs/Branch"}, {"$ref": "#/$defs/Tree"}],
    }
    new = {"$defs": {"Branch": branch}, "oneOf": [{"$ref": "#/$defs/Branch"}]}
    changes = [c for c in diff(old, new).changes if c.id == "one-of-member-removed"]
    assert [(c.old_pointer, c.backward, c.forward, c.message) for c in changes] == [
        (
            "#/oneOf/1",
            False,
            True,
            'oneOf member Tree removed: records matching it (objects with kind = "tree"; '
            "required branches, kind) are now rejected",
        )
    ]


# -- root changes ---------------------------------------------------------------------------

RECORD_A = {
    "type": "object",
    "required": ["id"],
    "properties": {"id": {"type": "string"}, "n": {"type": "integer"}},
}
RECORD_B = {"type": "object", "required": ["id", "name"], "properties": {"id": {"type": "integer"}}}


def _roots(old: Any, new: Any) -> list[tuple[str, str, str, str, str]]:
    return [
        (c.id, c.old_pointer, c.new_pointer, c.root_old_pointer, c.root_new_pointer)
        for c in diff(old, new, mode="full").changes
    ]


def test_findings_of_a_retargeted_ref_share_the_place_of_the_ref() -> None:
    old = {
        "$defs": {"A": RECORD_A, "B": RECORD_B},
        "type": "object",
        "properties": {"rec": {"$ref": "#/$defs/A"}, "other": {"$ref": "#/$defs/B"}},
    }
    new = {
        "$defs": {"A": RECORD_A, "B": RECORD_B},
        "type": "object",
        "properties": {"rec": {"$ref": "#/$defs/B"}, "other": {"$ref": "#/$defs/B"}},
    }
    rec = "#/properties/rec"
    assert _roots(old, new) == [
        ("type-changed", "#/$defs/A/properties/id/type", "#/$defs/B/properties/id/type", rec, rec),
        ("property-removed-from-open-model", "#/$defs/A/properties/n", "#/$defs/B", rec, rec),
        ("required-added", "#/$defs/A/required", "#/$defs/B/required", rec, rec),
    ]


def test_a_change_inside_a_shared_definition_is_its_own_root() -> None:
    def document(id_type: str) -> dict[str, Any]:
        return {
            "$defs": {"Id": {"type": id_type}},
            "type": "object",
            "properties": {
                "a": {"$ref": "#/$defs/Id"},
                "b": {"$ref": "#/$defs/Id"},
                "c": {"type": "array", "items": {"$ref": "#/$defs/Id"}},
            },
        }

    assert _roots(document("string"), document("integer")) == [
        ("type-changed", "#/$defs/Id/type", "#/$defs/Id/type", "#/$defs/Id/type", "#/$defs/Id/type")
    ]


def test_the_json_reporter_names_the_root() -> None:
    old = {"type": "object", "properties": {"rec": {"$ref": "#/$defs/A"}}, "$defs": {"A": RECORD_A}}
    new = {"type": "object", "properties": {"rec": {"$ref": "#/$defs/B"}}, "$defs": {"B": RECORD_B}}
    documents = [change_to_json(c) for c in diff(old, new).changes]
    inside = [d for d in documents if d["old_pointer"].startswith("#/$defs/A/")]
    assert inside and all(
        d["root"] == {"old_pointer": "#/properties/rec", "new_pointer": "#/properties/rec"}
        for d in inside
    )


# -- soundness against the reference validator -----------------------------------------------

VALUES = [0, 1, 2, 3, -1, 1.5, "", "a", "ab", "b", "0f", True, False, None]
PATTERNS = ["^a", "^[ab]{2}$", "^[0-9a-f]{2}$", "b", "^[a-c]*$"]


def _scalar() -> st.SearchStrategy[dict[str, Any]]:
    keywords: dict[str, st.SearchStrategy[Any]] = {
        "type": st.sampled_from(
            ["string", "integer", "number", "boolean", "null", ["string", "integer"]]
        ),
        "minLength": st.integers(0, 3),
        "maxLength": st.integers(0, 3),
        "pattern": st.sampled_from(PATTERNS),
        "minimum": st.integers(-2, 3),
        "maximum": st.integers(-2, 3),
        "exclusiveMinimum": st.integers(-2, 3),
        "exclusiveMaximum": st.integers(-2, 3),
        "multipleOf": st.sampled_from([1, 2, 3]),
        "enum": st.lists(st.sampled_from(VALUES), min_size=1, max_size=4, unique_by=repr),
        "const": st.sampled_from(VALUES),
    }
    return st.fixed_dictionaries({}, optional=keywords).filter(lambda s: 1 <= len(s) <= 3)


def _schema() -> st.SearchStrategy[dict[str, Any]]:
    members = st.lists(_scalar(), min_size=1, max_size=3)
    return (
        _scalar()
        | _scalar()
        | members.map(lambda m: {"anyOf": m})
        | members.map(lambda m: {"oneOf": m})
        | members.map(lambda m: {"allOf": m})
        | st.tuples(_scalar(), members).map(lambda t: {**t[0], "anyOf": t[1]})
    )


def _tree(schema: dict[str, Any]) -> dict[str, Any]:
    return resolve(normalise_document(schema)).tree


def _never(sub: dict[str, Any], sup: dict[str, Any]) -> bool:
    return False  # no objects or arrays in this fragment get this far unless unconstrained


SCALARS = {"type": ["null", "boolean", "number", "string"]}
CONTAINERS: list[Any] = [{}, [], {"a": 1}, [1, "a"]]


def _instances(data: st.DataObject, schema: dict[str, Any]) -> list[Any]:
    """Scalars generated from ``schema``, and the few objects and arrays it accepts (the
    fragment does not constrain them; hypothesis-jsonschema's open objects are not used)."""
    validator = Draft202012Validator(schema)
    found = list(CONTAINERS)
    try:
        strategy = from_schema({"allOf": [schema, SCALARS]})
        found += [data.draw(strategy) for _ in range(4)]
    except (Unsatisfiable, InvalidArgument):  # no such scalar (minLength > maxLength, ...)
        pass
    # The generator is not always right (it drew null for type null and anyOf [string]):
    # only what the reference validator accepts counts.
    return [value for value in found if validator.is_valid(value)]


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
@given(_schema(), _schema(), st.data())
def test_containment_is_sound(
    sub: dict[str, Any], sup: dict[str, Any], data: st.DataObject
) -> None:
    if not Containment(_never).contains(_tree(sup), _tree(sub)):
        return
    validator = Draft202012Validator(sup)
    for instance in _instances(data, sub):
        assert validator.is_valid(instance), (instance, sub, sup)


@settings(
    max_examples=100, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True
)
@given(_schema(), _scalar(), st.data())
def test_containment_of_a_narrowed_schema_is_sound(
    sup: dict[str, Any], extra: dict[str, Any], data: st.DataObject
) -> None:
    # allOf [sup, extra] is always inside sup: the answer must say so when it can, and every
    # answer must hold.
    sub = {"allOf": [sup, extra]}
    assume(Containment(_never).contains(_tree(sup), _tree(sub)))
    validator = Draft202012Validator(sup)
    for instance in _instances(data, sub):
        assert validator.is_valid(instance), (instance, sub, sup)


def _engine_schema() -> st.SearchStrategy[dict[str, Any]]:
    members = st.lists(_scalar(), min_size=1, max_size=3)
    return (
        _scalar()
        | members.map(lambda m: {"anyOf": m})
        | members.map(lambda m: {"allOf": m})
        | members.map(lambda m: {"oneOf": m})
        | st.tuples(_scalar(), members).map(lambda t: {**t[0], "anyOf": t[1]})
    )


def test_a_widened_one_of_member_that_overlaps_another_is_not_backward_compatible() -> None:
    old = {"oneOf": [{"type": "string"}, {"type": "integer"}]}
    new = {"oneOf": [{"type": ["boolean", "integer", "string"]}, {"type": "integer"}]}
    result = diff(old, new, mode="full")  # 5 matched one member, now it matches two
    assert [
        (c.id, c.old_pointer, c.new_pointer, c.backward, c.forward) for c in result.changes
    ] == [
        ("one-of-overlap-added", "#/oneOf/0", "#/oneOf/0", False, True),
        ("type-widened", "#/oneOf/0/type", "#/oneOf/0/type", True, False),
    ]
    # and back: the overlap goes, so 5 (rejected by the overlapping pair) is accepted again
    back = diff(new, old, mode="full")
    assert [(c.id, c.backward, c.forward) for c in back.changes] == [
        ("one-of-overlap-removed", True, False),
        ("type-narrowed", False, True),
    ]


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(_engine_schema(), _engine_schema(), st.data())
def test_the_engine_is_sound_on_random_pairs(
    old: dict[str, Any], new: dict[str, Any], data: st.DataObject
) -> None:
    """Whenever the engine says a direction is compatible, no instance generated from the
    schema it reads from is rejected by the other."""
    result = diff(old, new, mode="full")
    for compatible, source, target in (
        (result.backward_compatible, old, new),
        (result.forward_compatible, new, old),
    ):
        if not compatible:
            continue
        validator = Draft202012Validator(target)
        for instance in _instances(data, source):
            assert validator.is_valid(instance), (instance, old, new)


def test_containment_answers_yes_where_it_should() -> None:
    """The property tests only check the yes answers: these pin that there are some."""
    contains = Containment(_never).contains
    yes: list[tuple[dict[str, Any], dict[str, Any]]] = [
        ({"type": "string", "minLength": 1}, HEX16),
        ({"anyOf": STRING_OR_INTEGER}, {"oneOf": STRING_OR_INTEGER}),
        ({"oneOf": STRING_OR_INTEGER}, {"anyOf": STRING_OR_INTEGER}),
        ({"minimum": 0, "maximum": 10}, {"enum": [0, 1, 2]}),
        ({"enum": [0, 1, 2]}, {"type": "integer", "minimum": 0, "exclusiveMaximum": 3}),
        ({"type": "integer"}, {"type": "number", "multipleOf": 2}),
        ({"multipleOf": 2}, {"type": "integer", "multipleOf": 4}),
        ({"type": "string"}, {"enum": ["a", "b"]}),
        ({"type": ["boolean", "integer", "string"]}, {"const": 1}),
        ({"type": "string", "maxLength": 3}, {"type": "string", "pattern": "^[0-9a-f]{2}$"}),
        ({"allOf": [{"type": "string"}, {"minLength": 1}]}, {"type": "string", "minLength": 2}),
        ({"not": {}}, {"not": {}}),
        ({"type": "null"}, {"enum": [None]}),
    ]
    no: list[tuple[dict[str, Any], dict[str, Any]]] = [
        ({"type": "string", "maxLength": 16}, HEX16),
        ({"oneOf": [{"type": "integer"}, {"minimum": 0}]}, {"type": "integer"}),
        ({"enum": [0, 1, 2]}, {"type": "integer", "minimum": 0, "maximum": 3}),
        ({"multipleOf": 4}, {"type": "integer", "multipleOf": 2}),
        ({"multipleOf": 0.5}, {"type": "integer"}),
        ({"not": {"type": "string"}}, {"type": "integer"}),
        ({"pattern": "^a"}, {"type": "string", "pattern": "^ab"}),
    ]
    assert [contains(_tree(sup), _tree(sub)) for sup, sub in yes] == [True] * len(yes)
    assert [contains(_tree(sup), _tree(sub)) for sup, sub in no] == [False] * len(no)


def test_overlap_that_is_neither_proven_nor_ruled_out_is_a_break_the_witness_shows() -> None:
    # The containment normal forms prove these members apart (no string of length 2 or more
    # is "b"): the oneOf is an anyOf on both sides, and no overlap finding is due.
    old: dict[str, Any] = {"oneOf": [{"enum": ["a"]}, {"enum": ["b"]}]}
    new: dict[str, Any] = {"oneOf": [{"type": "string", "minLength": 2}, {"enum": ["b"]}]}
    changes = [c for c in diff(old, new, mode="full").changes if c.id.startswith("one-of")]
    assert changes == []
    # Overlap neither proven nor ruled out: backward is not granted (it was an undecided
    # finding, which the verdict counted as compatible); the witness search finds "".
    old = {"oneOf": [{"type": "integer"}, {"type": "string"}]}
    new = {"oneOf": [{"not": {"type": "null"}}, {"type": "string"}]}
    changes = [c for c in diff(old, new, mode="full").changes if c.id.startswith("one-of")]
    assert [(c.id, c.level, c.backward, c.forward, c.message) for c in changes] == [
        (
            "one-of-overlap-added",
            "error",
            False,
            True,
            "oneOf member accepting any type may now overlap another member: a value matching "
            "both is rejected",
        )
    ]
    assert changes[0].witness is not None and changes[0].witness.instance == ""
