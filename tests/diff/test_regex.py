"""ECMA-262 patterns analysed without a backtracking engine (``wiregate.diff.regex``)."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wiregate.diff import DiffResult, diff
from wiregate.diff.regex import (
    UndecidableRegex,
    includes,
    length_bounds,
    matches_everything,
    reference_validator,
    sample,
    sample_not,
    translate,
)

REDOS = ("^(a+)+$", "^(.*){16}X$", "^(a|a)*$", "^(a|aa)+$", "(x+x+)+y")


@pytest.mark.parametrize(
    ("pattern", "re2_source"),
    [
        ("^abc$", "\\Aabc\\z"),
        ("\\d", "[0-9]"),
        ("[^]", "[\\x00-\\x{10ffff}]"),
        ("[]", "[^\\x00-\\x{10ffff}]"),
        ("\\/", "\\x{2f}"),
        ("\\cJ", "\\x{a}"),
        ("\\u{1F600}", "\\x{1f600}"),
        ("\\u00e9", "\\x{e9}"),
        ("\\uD83D\\uDE00", "\\x{1f600}"),
        ("\\x41", "A"),
        ("(?<year>\\d{4})", "(?:[0-9]{4})"),
        ("a|b", "(?:a|b)"),
        ("a{2,}?", "a{2,}?"),
        (".", "[^\\x{a}\\x{d}\\x{2028}-\\x{2029}]"),
        ("[\\d-z]", "[\\x{2d}0-9z]"),
        ("\\p{Script=Greek}", "[\\p{Greek}]"),
        ("\\p{Letter}", "[\\p{L}]"),
        ("x{", "x\\x{7b}"),
    ],
)
def test_translation_table(pattern: str, re2_source: str) -> None:
    regex = translate(pattern)
    assert regex is not None
    assert regex.re2_source == re2_source


def test_word_class_is_ascii() -> None:
    regex = translate("\\w")
    assert regex is not None
    assert regex.re2_source == "[0-9A-Z\\x{5f}a-z]"
    assert [regex.search(c) for c in "aZ_9\u00e9"] == [True, True, True, True, False]


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        ("^\\d$", "7", True),
        ("^\\d$", "\u0663", False),  # ARABIC-INDIC DIGIT THREE: ECMA \d is ASCII
        ("^\\s$", "\u00a0", True),
        ("^\\s$", "\ufeff", True),
        ("^\\s$", "\u3000", True),
        ("^\\s$", "\u0085", False),  # NEL is no ECMA white space
        ("^\\S$", "x", True),
        ("^.$", "\n", False),
        ("^.$", "\r", False),
        ("^.$", "\u2028", False),
        ("^.$", "\u2029", False),
        ("^.$", "\U0001f600", True),  # one code point, one character
        ("a$", "a\n", False),  # $ is the end of the string, not before a final newline
        ("a$", "ba", True),
        ("^b", "ab", False),
        ("[^]", "\n", True),
        ("[]", "", False),
        ("\\bfoo\\b", "a foo.", True),
        ("\\bfoo\\b", "afoo", False),
        ("^[\\b]$", "\b", True),
        ("^\\cJ$", "\n", True),
        ("^\\0$", "\x00", True),
        ("^\\p{L}+$", "\u00e9t\u00e9", True),
        ("^\\P{L}$", "1", True),
        ("^\\p{ASCII}+$", "abc", True),
        ("^\\p{ASCII}+$", "\u00e9", False),
        ("^[\\w-]+$", "a-b", True),
        ("colou?r", "my color", True),
        ("a", "\ud800a", True),  # a lone surrogate in the text is no error
    ],
)
def test_search_has_ecma_meaning(pattern: str, text: str, expected: bool) -> None:
    regex = translate(pattern)
    assert regex is not None
    assert regex.search(text) is expected


@pytest.mark.parametrize(
    "pattern",
    [
        "(?=a)b",  # lookahead
        "(?!a)b",
        "(?<=a)b",  # lookbehind
        "(?<!a)b",
        "(a)\\1",  # backreference
        "(?<x>a)\\k<x>",
        "a{1001}",  # RE2 refuses repetitions above 1000
        "(",  # syntax errors
        "a)",
        "[a",
        "*a",
        "a**",
        "\\q",
        "[z-a]",
        "a{3,2}",
        "(?i)a",
        "\\p{Script_Extensions=Greek}",
    ],
)
def test_untranslatable_is_none(pattern: str) -> None:
    assert translate(pattern) is None
    assert sample(pattern) is None
    assert sample_not(pattern) is None


@pytest.mark.parametrize("pattern", REDOS)
def test_catastrophic_patterns_run_in_linear_time(pattern: str) -> None:
    regex = translate(pattern)
    assert regex is not None
    start = time.process_time()
    for text in ("a" * 40 + "b", "a" * 10_000 + "!", "x" * 5_000):
        assert regex.search(text) is False
    assert time.process_time() - start < 0.5


@pytest.mark.parametrize(
    ("pattern", "bounds"),
    [
        ("^[0-9a-f]{16}$", (16, 16)),
        ("^a+$", (1, None)),
        ("^(ab|c)?$", (0, 2)),
        ("^(?:ab|c)$", (1, 2)),
        ("[0-9a-f]{16}", (16, None)),  # unanchored: longer strings contain a match
        ("^[0-9a-f]{16}", (16, None)),
        ("^a$|^bb$", (1, 2)),
        ("^a|bb$", (1, None)),
        ("^\\b\\d{2,4}\\b$", (2, 4)),
        ("^(?=x)\\w{3}$", (3, 3)),  # lookahead is zero width
        ("^(a)\\1$", (1, None)),  # a backreference has unknown width
        ("^\\u{1F600}{2}$", (2, 2)),  # code points, as minLength counts
        ("^$", (0, 0)),
        ("", (0, None)),
        ("^(a{2}){3}$", (6, 6)),
        ("(", None),
    ],
)
def test_length_bounds(pattern: str, bounds: tuple[int, int | None] | None) -> None:
    assert length_bounds(pattern) == bounds


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("", True),
        ("^", True),
        ("a*", True),
        (".*", True),
        ("(?:)", True),
        ("^|x", True),
        ("^.*$", False),  # "\n" is rejected
        ("$", False),
        ("a", False),
        ("\\b", False),
        ("(?=)", False),  # undecided here, so kept
        ("(", False),
    ],
)
def test_matches_everything(pattern: str, expected: bool) -> None:
    assert matches_everything(pattern) is expected


@pytest.mark.parametrize(
    ("pattern", "accepted", "rejected"),
    [
        ("^[0-9a-f]{16}$", "aaaaaaaaaaaaaaaa", ""),
        ("^a+$", "a", ""),
        ("^(ab|c)?$", "", "a"),
        ("^(a+)+$", "a", ""),
        ("^(.*){16}X$", "X", ""),
        ("\\d", "0", ""),
        ("^[^a]*$", "", "a"),
        ("^.*$", "", "\n"),
        ("\\bfoo\\b", "foo", ""),
        ("^x-\\d{2}$", "x-00", ""),
        ("[]", None, ""),
        ("a*", "", None),
        ("^\\p{Lu}$", "A", ""),
    ],
)
def test_samples(pattern: str, accepted: str | None, rejected: str | None) -> None:
    assert sample(pattern) == accepted
    assert sample_not(pattern) == rejected
    regex = translate(pattern)
    assert regex is not None
    if accepted is not None:
        assert regex.search(accepted)
    if rejected is not None:
        assert not regex.search(rejected)


def test_nesting_too_deep_is_none_not_a_crash() -> None:
    pattern = "(" * 5_000 + "a" + ")" * 5_000
    assert translate(pattern) is None
    assert length_bounds(pattern) is None
    assert matches_everything(pattern) is False


# -- the diff engine runs schema regexes on RE2 ---------------------------------------------

LONG_KEY = "a" * 40 + "b"  # ``^(a+)+$`` backtracks 2**40 times on it under Python's re


def _summary(result: DiffResult) -> list[tuple[str, str, str, str, bool, bool]]:
    return [
        (c.id, c.level, c.old_pointer, c.new_pointer, c.backward, c.forward) for c in result.changes
    ]


def _timed_diff(old: dict[str, Any], new: dict[str, Any]) -> DiffResult:
    start = time.process_time()
    result = diff(old, new)
    assert time.process_time() - start < 2
    return result


@pytest.mark.parametrize("pattern", ["^(a+)+$", "^(.*){16}X$"])
def test_redos_pattern_properties_key_gets_the_right_verdict_fast(pattern: str) -> None:
    old = {
        "type": "object",
        "patternProperties": {pattern: {"type": "string"}},
        "additionalProperties": False,
    }
    new = {**old, "properties": {LONG_KEY: {"type": "integer"}}}
    assert _summary(_timed_diff(old, new)) == [
        ("property-added-to-closed-model", "warning", "#", f"#/properties/{LONG_KEY}", True, False)
    ]
    assert _summary(_timed_diff(new, old)) == [
        (
            "property-removed-from-closed-model",
            "error",
            f"#/properties/{LONG_KEY}",
            "#",
            False,
            True,
        )
    ]


def test_redos_pattern_properties_matching_key_moves_to_its_schema() -> None:
    old = {"type": "object", "patternProperties": {"^(a+)+$": {"type": "string"}}}
    new = {**old, "properties": {"a" * 40: {"type": "string"}}}
    assert _summary(_timed_diff(old, new)) == [
        (
            "property-added-to-partially-open-model",
            "info",
            "#",
            "#/properties/" + "a" * 40,
            True,
            True,
        )
    ]


@pytest.mark.parametrize("pattern", ["^(a+)+$", "^(.*){16}X$", "^(\\w+\\s?)*$"])
def test_redos_pattern_keyword_gets_the_right_verdict_fast(pattern: str) -> None:
    old = {"type": "string", "pattern": pattern}
    assert _summary(_timed_diff(old, {"type": "string"})) == [
        ("pattern-removed", "warning", "#/pattern", "#", True, False)
    ]


def test_lookahead_pattern_properties_is_undecided_not_run_by_python_re() -> None:
    # The negative lookahead passes and ``(a+)+`` would backtrack for hours under Python's
    # re: the pattern is not run at all.
    old = {
        "type": "object",
        "patternProperties": {"^(?!x)(a+)+$": {"type": "string"}},
        "additionalProperties": False,
    }
    new = {**old, "properties": {LONG_KEY: {"type": "string"}}}
    result = _timed_diff(old, new)
    # Undecided: level unknown, never a break (both directions count as compatible).
    assert _summary(result) == [
        (
            "property-added-to-partially-open-model",
            "unknown",
            "#",
            f"#/properties/{LONG_KEY}",
            True,
            True,
        )
    ]
    assert result.compatible
    assert result.changes[0].message == (
        f"property {LONG_KEY!r} added where old records were checked by a patternProperties "
        "pattern that cannot be evaluated here ('^(?!x)(a+)+$': lookaround, backreference or "
        "beyond RE2)"
    )


def test_disjoint_one_of_members_use_re2_for_closed_patterns() -> None:
    # Adding a oneOf member that cannot overlap the others is compatible both ways: a record
    # with ``kind`` never matches the closed member, whose only keys match ``^(a+)+$``.
    closed = {
        "type": "object",
        "patternProperties": {"^(a+)+$": {}},
        "additionalProperties": False,
    }
    tagged = {"type": "object", "required": ["kind"], "properties": {"kind": {"const": "t"}}}
    old = {"oneOf": [closed]}
    new = {"oneOf": [closed, tagged]}
    assert _summary(_timed_diff(old, new)) == [
        ("one-of-member-added", "warning", "#/oneOf", "#/oneOf/1", True, False)
    ]
    # A pattern that matches ``kind`` makes them overlap: a record may match both.
    overlapping = {**closed, "patternProperties": {"^k": {}}}
    assert _summary(_timed_diff({"oneOf": [overlapping]}, {"oneOf": [overlapping, tagged]})) == [
        ("one-of-member-added", "error", "#/oneOf", "#/oneOf/1", False, False)
    ]


# -- differential: RE2 translation vs Python's re where ECMA and Python agree ----------------

# Texts and patterns over characters on which ECMA-262 and Python's re agree (no line
# terminators: Python's ``$`` also matches before a final newline and its ``.`` accepts
# ``\r``; no \x1c-\x1f, which Python's ``\s`` accepts).
_ALPHABET = "ab0_ -.X"
_ATOMS = ["a", "b", "0", ".", "\\d", "\\w", "\\s", "\\S", "[ab]", "[^a]", "[a-c0]", "\\.", "X"]


@st.composite
def _patterns(draw: st.DrawFn, depth: int = 0) -> str:
    kind = draw(st.integers(0, 5 if depth < 2 else 1))
    if kind <= 1:
        return draw(st.sampled_from(_ATOMS))
    if kind == 2:
        return "".join(draw(st.lists(_patterns(depth + 1), min_size=1, max_size=3)))
    if kind == 3:
        options = draw(st.lists(_patterns(depth + 1), min_size=2, max_size=3))
        return "(?:" + "|".join(options) + ")"
    if kind == 4:
        quantifier = draw(st.sampled_from(["*", "+", "?", "{2}", "{1,3}", "{0,2}?"]))
        return "(?:" + draw(_patterns(depth + 1)) + ")" + quantifier
    anchors = draw(st.sampled_from([("^", ""), ("", "$"), ("^", "$"), ("\\b", "")]))
    return anchors[0] + draw(_patterns(depth + 1)) + anchors[1]


@settings(max_examples=200, deadline=None)
@given(pattern=_patterns(), texts=st.lists(st.text(_ALPHABET, max_size=8), max_size=6))
def test_translation_agrees_with_python_re_on_the_common_fragment(
    pattern: str, texts: list[str]
) -> None:
    regex = translate(pattern)
    assert regex is not None, pattern
    reference = re.compile(pattern)
    for text in texts:
        assert regex.search(text) is (reference.search(text) is not None), (pattern, text)
    accepted, rejected = sample(pattern), sample_not(pattern)
    if accepted is not None:
        assert reference.search(accepted), (pattern, accepted)
    if rejected is not None and "\n" not in rejected and "\r" not in rejected:
        assert not reference.search(rejected), (pattern, rejected)
    bounds = length_bounds(pattern)
    assert bounds is not None
    for text in [*texts, accepted or ""]:
        if reference.search(text):
            assert len(text) >= bounds[0], (pattern, text)
            assert bounds[1] is None or len(text) <= bounds[1], (pattern, text)


# -- the reference validator with its regexes on RE2 ----------------------------------------


@pytest.mark.parametrize(
    ("schema", "instance", "valid"),
    [
        ({"pattern": "^(a+)+$"}, "a" * 40 + "b", False),
        ({"pattern": "^(a+)+$"}, "a" * 40, True),
        ({"pattern": "^(.*){16}X$"}, "objective_score", False),
        ({"pattern": "^\\d+$"}, 7, True),  # not a string: pattern does not apply
        (
            {"patternProperties": {"^(a+)+$": {"type": "string"}}, "additionalProperties": False},
            {LONG_KEY: "x"},
            False,
        ),
        (
            {"patternProperties": {"^(a+)+$": {"type": "string"}}, "additionalProperties": False},
            {"a" * 40: "x"},
            True,
        ),
        (
            {"patternProperties": {"^(a+)+$": {"type": "string"}}},
            {"a" * 40: 1},
            False,
        ),
        (
            {"patternProperties": {"^x-": {}}, "additionalProperties": {"type": "integer"}},
            {"x-a": "s", "b": 1},
            True,
        ),
        (
            {
                "$schema": "http://json-schema.org/draft-07/schema#",
                "properties": {"id": {"type": "integer"}},
                "additionalProperties": False,
            },
            {"id": 1, "other": 2},
            False,
        ),
        ({"properties": {"n": {"pattern": "^\\w+$"}}}, {"n": "\u00e9"}, False),  # ECMA \w
    ],
)
def test_reference_validator_runs_regexes_on_re2(
    schema: dict[str, Any], instance: Any, valid: bool
) -> None:
    start = time.process_time()
    assert reference_validator(schema).is_valid(instance) is valid
    assert time.process_time() - start < 1


@pytest.mark.parametrize(
    ("schema", "instance"),
    [
        ({"pattern": "^(?!x)(a+)+$"}, "a" * 40 + "b"),
        ({"patternProperties": {"(a)\\1": {}}}, {"aa": 1}),
        (
            {"patternProperties": {"^x-": {}}, "unevaluatedProperties": False},
            {"x-a": 1},
        ),
    ],
)
def test_reference_validator_refuses_what_it_cannot_run_in_linear_time(
    schema: dict[str, Any], instance: Any
) -> None:
    with pytest.raises(UndecidableRegex):
        reference_validator(schema).is_valid(instance)


def test_reference_validator_keeps_unevaluated_properties_without_patterns() -> None:
    schema = {"properties": {"a": {}}, "unevaluatedProperties": False}
    validator = reference_validator(schema)
    assert validator.is_valid({"a": 1}) is True
    assert validator.is_valid({"a": 1, "b": 2}) is False


@pytest.mark.parametrize(
    ("wide", "narrow", "held"),
    [
        ("^[a-z0-9]+$", "^[a-z]+$", True),
        ("^[a-z]+$", "^[a-z0-9]+$", False),
        ("^[0-9a-fA-F]{16}$", "^[0-9a-f]{16}$", True),
        ("^[a-z]+$", "^[a-z]{2,8}$", True),
        ("^[a-z]{2,8}$", "^[a-z]+$", False),
        ("^(a|b)$", "^a$", True),
        ("^a$", "^(a|b)$", False),
        (".", "x", True),
        ("^[^0-9]$", "^[a-z]$", True),
        ("^[^a]$", "^[^ab]$", True),
        ("^[^ab]$", "^[^a]$", False),
        (r"^\d+$", "^[0-9]+$", True),
        ("^(?=a)a$", "^a$", False),  # lookaround: beyond RE2, never proven
        ("^a+b$", "^a+$", False),  # another shape: not proven (nor disproven)
    ],
)
def test_includes_is_proven_on_aligned_shapes_only(wide: str, narrow: str, held: bool) -> None:
    assert includes(wide, narrow) is held


def test_a_loosened_pattern_is_backward_compatible_and_its_narrowing_has_a_witness() -> None:
    old = {"type": "string", "pattern": "^[a-z]+$"}
    new = {"type": "string", "pattern": "^[a-z0-9]+$"}
    (change,) = diff(old, new, mode="full").changes
    assert (change.id, change.backward, change.forward, change.message) == (
        "pattern-changed",
        True,
        False,
        "pattern changed from '^[a-z]+$' to '^[a-z0-9]+$': the new one accepts every string "
        "the other does",
    )
    assert change.witness is not None and change.witness.direction == "forward"
    (lookahead,) = diff(old, {"type": "string", "pattern": "^(?=a)[a-z]+$"}).changes
    assert (lookahead.level, lookahead.backward, lookahead.forward) == ("unknown", True, True)
