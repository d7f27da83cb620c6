"""A ``patternProperties`` entry applies to every key it matches, declared properties
included, and with ``additionalProperties: false`` decides which keys are allowed. The value
under a declared name must meet ``properties[name]`` and every matching pattern's schema; an
undeclared key its matching patterns' schemas, else ``additionalProperties``. An added or
removed pattern (a declared or undeclared property) is judged with those effective schemas,
never as if the pattern concerned undeclared keys only.

Each case pins the exact findings in both directions; every error carries a witness that the
reference validator confirms, and a small exhaustive search of objects finds no value that
contradicts a direction the engine calls compatible.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from wiregate.diff import DiffResult, diff
from wiregate.diff.regex import never_both

Summary = tuple[str, str, str, bool, bool]

CLOSED_DECLARED: dict[str, Any] = {
    "type": "object",
    "properties": {"ab": {}},
    "additionalProperties": False,
}
STRING_B = {"b$": {"type": "string"}}
OVERLAPPING_OLD: dict[str, Any] = {
    "type": "object",
    "patternProperties": {"^a": {}},
    "additionalProperties": False,
}


def _summary(result: DiffResult) -> list[Summary]:
    return sorted(
        (c.id, c.old_pointer, c.new_pointer, c.backward, c.forward) for c in result.changes
    )


REVERSED = {
    "pattern-property-added": "pattern-property-removed",
    "property-added-to-open-model": "property-removed-from-open-model",
    "property-added-to-partially-open-model": "property-removed-from-partially-open-model",
}
REVERSED.update({removed: added for added, removed in REVERSED.items()})


def _flip(findings: list[Summary]) -> list[Summary]:
    """The findings of the reverse comparison: an added entry is a removed one, the pointers
    and the directions swap."""
    return sorted(
        (REVERSED[rule], new, old, forward, backward)
        for rule, old, new, backward, forward in findings
    )


def _values() -> list[Any]:
    return [None, 1, "s", {}, []]


def _instances(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    """Every object with at most two keys among the declared names, short keys the patterns
    match and a fresh key, each holding one of a few values of different types."""
    keys = {"zz", "a", "b", "ab", "ba", "x-", "xa", "_a"}
    for side in (old, new):
        keys |= set(side.get("properties") or {})
    out: list[dict[str, Any]] = [{}]
    for size in (1, 2):
        for chosen in itertools.combinations(sorted(keys), size):
            for values in itertools.product(_values(), repeat=size):
                out.append(dict(zip(chosen, values, strict=True)))
    return out


def _check(old: dict[str, Any], new: dict[str, Any], expected: list[Summary]) -> None:
    result = diff(old, new, mode="full")
    assert _summary(result) == sorted(expected)
    old_v, new_v = Draft202012Validator(old), Draft202012Validator(new)
    for change in result.changes:
        if change.level == "error":
            witness = change.witness
            assert witness is not None, change
            accepting, other = (old_v, new_v) if witness.direction == "backward" else (new_v, old_v)
            assert accepting.is_valid(witness.instance), (change, witness)
            assert not other.is_valid(witness.instance), (change, witness)
    # No value contradicts a direction called compatible.
    for instance in _instances(old, new):
        valid_old, valid_new = old_v.is_valid(instance), new_v.is_valid(instance)
        if result.backward_compatible:
            assert not (valid_old and not valid_new), instance
        if result.forward_compatible:
            assert not (valid_new and not valid_old), instance


def _both_ways(old: dict[str, Any], new: dict[str, Any], expected: list[Summary]) -> None:
    _check(old, new, expected)
    _check(new, old, _flip(expected))


# -- the reproducers ---------------------------------------------------------------------


def test_pattern_added_over_a_declared_name_of_a_closed_model() -> None:
    # U8a: ``ab`` matches ``b$``: {"ab": null} was valid and is rejected now.
    new = {**CLOSED_DECLARED, "patternProperties": STRING_B}
    _both_ways(
        CLOSED_DECLARED,
        new,
        [
            # undeclared keys matching b$ were rejected, now accepted as strings
            ("pattern-property-added", "#", "#/patternProperties/b$", True, False),
            # the declared ab must now be a string
            ("pattern-property-added", "#/properties/ab", "#/patternProperties/b$", False, True),
        ],
    )


def test_pattern_added_over_another_pattern_of_a_closed_model() -> None:
    # U8b: keys matching ``^a`` and ``a`` (such as "a") held any value; now only objects.
    new = {
        **OVERLAPPING_OLD,
        "patternProperties": {"^a": {}, "a": {"type": "object"}},
    }
    _both_ways(
        OVERLAPPING_OLD,
        new,
        [
            ("pattern-property-added", "#", "#/patternProperties/a", True, False),
            (
                "pattern-property-added",
                "#/patternProperties/^a",
                "#/patternProperties/a",
                False,
                True,
            ),
        ],
    )


def test_property_declared_where_a_pattern_accepted_any_value() -> None:
    # The pattern still applies to the declared ``a``: {"a": 1} was valid, is rejected now.
    new = {**OVERLAPPING_OLD, "properties": {"a": {"type": "object"}}}
    _both_ways(
        OVERLAPPING_OLD,
        new,
        [("property-added-to-open-model", "#", "#/properties/a", False, True)],
    )


# -- patterns that leave declared names alone ---------------------------------------------


def test_pattern_matching_no_declared_name_in_a_closed_model() -> None:
    # ``ab`` does not match ``^x-``: only undeclared keys are concerned, and those were
    # rejected before, so every old value stays valid.
    new = {**CLOSED_DECLARED, "patternProperties": {"^x-": {"type": "string"}}}
    _both_ways(
        CLOSED_DECLARED,
        new,
        [("pattern-property-added", "#", "#/patternProperties/^x-", True, False)],
    )


def test_pattern_matching_no_declared_name_in_an_open_model() -> None:
    # No finding for ``ab``; the undeclared keys matching ``^x-`` held any value and must be
    # strings now (that break is the pattern's own, as before).
    old = {"type": "object", "properties": {"ab": {"type": "integer"}}}
    new = {**old, "patternProperties": {"^x-": {"type": "string"}}}
    _both_ways(old, new, [("pattern-property-added", "#", "#/patternProperties/^x-", False, True)])


def test_pattern_with_the_empty_schema_over_a_declared_name_of_a_closed_model() -> None:
    # ``b$: {}`` constrains nothing: ``ab`` keeps its values (no finding for it); only
    # undeclared keys matching b$ are newly accepted.
    new = {**CLOSED_DECLARED, "patternProperties": {"b$": {}}}
    _both_ways(
        CLOSED_DECLARED,
        new,
        [("pattern-property-added", "#", "#/patternProperties/b$", True, False)],
    )


def test_pattern_with_the_empty_schema_in_an_open_model_is_compatible() -> None:
    old = {"type": "object", "properties": {"ab": {}}}
    new = {**old, "patternProperties": {"b$": {}}}
    _both_ways(old, new, [("pattern-property-added", "#", "#/patternProperties/b$", True, True)])
    assert diff(old, new, mode="full").compatible


def test_pattern_over_a_declared_name_of_an_open_model() -> None:
    old = {"type": "object", "properties": {"ab": {}}}
    new = {**old, "patternProperties": STRING_B}
    _both_ways(
        old,
        new,
        [
            ("pattern-property-added", "#", "#/patternProperties/b$", False, True),
            ("pattern-property-added", "#/properties/ab", "#/patternProperties/b$", False, True),
        ],
    )


def test_pattern_that_the_declaration_already_implies() -> None:
    # ``ab`` was a string already: the pattern adds nothing for it (no finding for ``ab``).
    old = {
        "type": "object",
        "properties": {"ab": {"type": "string"}},
        "additionalProperties": False,
    }
    new = {**old, "patternProperties": STRING_B}
    _both_ways(old, new, [("pattern-property-added", "#", "#/patternProperties/b$", True, False)])


# -- declaring a name a pattern matches ----------------------------------------------------


def test_declaring_a_name_keeps_the_pattern_constraint() -> None:
    # ``xa`` must meet both: new accepts no value under it, which old accepted too (forward),
    # but old strings under ``xa`` are now rejected (backward).
    old = {"type": "object", "patternProperties": {"^x": {"type": "string"}}}
    new = {**old, "properties": {"xa": {"type": "integer"}}}
    _both_ways(
        old,
        new,
        [("property-added-to-partially-open-model", "#", "#/properties/xa", False, True)],
    )


def test_declaring_a_name_while_a_matching_pattern_is_removed() -> None:
    # ``xy`` was checked by both ``^x`` and ``y$`` (at most 3 characters); new checks ``^x``
    # and the declaration only: longer strings are accepted now, under ``xy`` and under
    # undeclared keys matching both patterns.
    old = {
        "type": "object",
        "patternProperties": {"^x": {"type": "string"}, "y$": {"maxLength": 3}},
        "additionalProperties": False,
    }
    new = {
        "type": "object",
        "properties": {"xy": {"type": "string"}},
        "patternProperties": {"^x": {"type": "string"}},
        "additionalProperties": False,
    }
    _check(
        old,
        new,
        [
            ("property-added-to-partially-open-model", "#", "#/properties/xy", True, False),
            ("pattern-property-removed", "#/patternProperties/y$", "#", False, True),
            (
                "pattern-property-removed",
                "#/patternProperties/y$",
                "#/patternProperties/^x",
                True,
                False,
            ),
        ],
    )
    _check(
        new,
        old,
        [
            ("property-removed-from-partially-open-model", "#/properties/xy", "#", False, True),
            ("pattern-property-added", "#", "#/patternProperties/y$", True, False),
            (
                "pattern-property-added",
                "#/patternProperties/^x",
                "#/patternProperties/y$",
                False,
                True,
            ),
        ],
    )


# -- patterns proven apart, patterns beyond RE2 --------------------------------------------


def test_patterns_proven_apart_do_not_share_keys() -> None:
    old = {
        "type": "object",
        "patternProperties": {"^x-": {"type": "string"}},
        "additionalProperties": False,
    }
    new = {**old, "patternProperties": {"^x-": {"type": "string"}, "^y-": {"type": "integer"}}}
    _both_ways(old, new, [("pattern-property-added", "#", "#/patternProperties/^y-", True, False)])


def test_pattern_beyond_re2_over_a_declared_name_is_undecided() -> None:
    # Whether ``(?=a)b`` matches ``ab`` is not decided here: that finding claims neither
    # direction (level unknown); the undeclared keys' finding is judged as before.
    old = {"type": "object", "properties": {"ab": {}}}
    new = {**old, "patternProperties": {"(?=a)b": {"type": "string"}}}
    result = diff(old, new, mode="full")
    assert [(c.id, c.level, c.old_pointer, c.new_pointer) for c in result.changes] == [
        ("pattern-property-added", "error", "#", "#/patternProperties/(?=a)b"),
        ("pattern-property-added", "unknown", "#/properties/ab", "#/patternProperties/(?=a)b"),
    ]
    assert not result.backward_compatible
    result = diff(new, old, mode="full")
    assert [(c.id, c.level, c.old_pointer, c.new_pointer) for c in result.changes] == [
        ("pattern-property-removed", "error", "#/patternProperties/(?=a)b", "#"),
        ("pattern-property-removed", "unknown", "#/patternProperties/(?=a)b", "#/properties/ab"),
    ]
    assert not result.forward_compatible


def test_pattern_beyond_re2_sharing_keys_is_not_called_compatible() -> None:
    # Whether ``(?=a)b`` and ``^a`` share keys is not decided: never claimed compatible.
    old = {
        "type": "object",
        "patternProperties": {"(?=a)b": {}},
        "additionalProperties": False,
    }
    new = {**old, "patternProperties": {"(?=a)b": {}, "^a": {"type": "string"}}}
    result = diff(old, new, mode="full")
    assert _summary(result) == [
        ("pattern-property-added", "#", "#/patternProperties/^a", True, False),
        (
            "pattern-property-added",
            "#/patternProperties/(?=a)b",
            "#/patternProperties/^a",
            False,
            True,
        ),
    ]


@pytest.mark.parametrize(
    ("a", "b", "apart"),
    [
        ("^x-", "^a", True),
        ("^ab", "^ac", True),
        ("b$", "a$", True),
        ("^[a-c]", "^[d-f]", True),
        ("^a{2}$", "^a{3}$", True),
        ("^a", "a", False),  # "a" matches both
        ("^[^a]", "^b", False),
        ("^(?!x)a", "^b", False),  # beyond RE2: never proven apart
        ("^a|^b", "^c", False),  # not read: not proven
    ],
)
def test_patterns_are_proven_apart_only_when_certain(a: str, b: str, apart: bool) -> None:
    assert never_both(a, b) is apart
    assert never_both(b, a) is apart
