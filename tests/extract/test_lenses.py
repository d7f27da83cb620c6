"""Language lenses: one golden pair per lens (contract part, extracted schema) with the schema
as the lens leaves it and its exact findings; docs/lenses.md documents each one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from wiregate.extract.lenses import LENSES, apply_lenses

# (lens, language, mode, direction, contract part, extracted, lensed, findings)
PAIRS: list[tuple[str, str, str | None, str, Any, Any, Any, list[tuple[str, str, str]]]] = [
    (
        "ts-number-for-integer",
        "typescript",
        None,
        "forward",
        {"type": "object", "properties": {"n": {"type": "integer"}}},
        {"type": "object", "properties": {"n": {"type": "number"}}},
        {"type": "object", "properties": {"n": {"type": "integer"}}},
        [("ts-number-for-integer", "#/properties/n/type", "#/properties/n/type")],
    ),
    (
        "ts-no-string-constraints",
        "typescript",
        None,
        "forward",
        {"type": "string", "minLength": 1, "pattern": "^[0-9a-f]{16}$"},
        {"type": "string"},
        {"type": "string", "minLength": 1, "pattern": "^[0-9a-f]{16}$"},
        [("ts-no-string-constraints", "#", "#")],
    ),
    (
        "ts-no-numeric-bounds",
        "typescript",
        None,
        "forward",
        {"type": "integer", "minimum": 0},
        {"type": "number"},
        {"type": "integer", "minimum": 0},
        [("ts-no-numeric-bounds", "#", "#"), ("ts-number-for-integer", "#/type", "#/type")],
    ),
    (
        "ts-no-array-bounds",
        "typescript",
        None,
        "forward",
        {"type": "array", "items": {"type": "string"}, "minItems": 1},
        {"type": "array", "items": {"type": "string"}},
        {"type": "array", "items": {"type": "string"}, "minItems": 1},
        [("ts-no-array-bounds", "#", "#")],
    ),
    (
        "ts-open-object",
        "typescript",
        None,
        "backward",
        {"type": "object", "properties": {"a": {"type": "string"}}},
        {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False},
        {"type": "object", "properties": {"a": {"type": "string"}}},
        [("ts-open-object", "#", "#")],
    ),
    (
        "pydantic-declared-fields-only",
        "python",
        "serialization",
        "forward",
        {"type": "object", "properties": {"a": {"type": "string"}}},
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
        {
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "required": ["a"],
            "additionalProperties": False,
        },
        [("pydantic-declared-fields-only", "#", "#")],
    ),
]


@pytest.mark.parametrize(
    ("lens", "language", "mode", "direction", "contract", "extracted", "lensed", "findings"),
    PAIRS,
    ids=[p[0] for p in PAIRS],
)
def test_golden_pair(
    lens: str,
    language: str,
    mode: str | None,
    direction: str,
    contract: Any,
    extracted: Any,
    lensed: Any,
    findings: list[tuple[str, str, str]],
) -> None:
    document, changes = apply_lenses(language, mode, direction, contract, "#", extracted)
    assert document == lensed
    assert [(c.id, c.old_pointer, c.new_pointer) for c in changes] == findings
    assert {(c.level, c.backward, c.forward) for c in changes} == {("info", True, True)}
    assert lens in {c.id for c in changes}


def test_a_producer_type_stays_closed_and_nothing_else_moves() -> None:
    """A TypeScript producer writes the keys it declares: closed is faithful. A union member
    (X | null) is seen through the lens too; a contract that says nothing changes nothing."""
    contract = {
        "type": "object",
        "properties": {"n": {"type": ["integer", "null"]}, "s": {"type": "string"}},
    }
    extracted: dict[str, Any] = {
        "type": "object",
        "properties": {
            "n": {"anyOf": [{"type": "number"}, {"type": "null"}]},
            "s": {"type": "string"},
            "extra": {"type": "number"},
        },
        "additionalProperties": False,
    }
    document, changes = apply_lenses("typescript", None, "forward", contract, "#", extracted)
    assert document["additionalProperties"] is False
    assert document["properties"]["n"] == {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    assert document["properties"]["extra"] == {"type": "number"}
    assert [(c.id, c.new_pointer) for c in changes] == [
        ("ts-number-for-integer", "#/properties/n/anyOf/0/type")
    ]
    assert extracted["properties"]["n"]["anyOf"][0] == {"type": "number"}  # not mutated


def test_a_consumer_model_is_seen_as_it_is(repo_root: Path) -> None:
    """Validation mode (what a reader accepts) needs no lens: Pydantic says it all."""
    extracted = {"type": "object", "properties": {"a": {"type": "string"}}}
    assert apply_lenses("python", "validation", "backward", {}, "#", extracted) == (
        extracted,
        (),
    )


def test_every_lens_has_a_golden_pair_and_is_documented(repo_root: Path) -> None:
    assert [pair[0] for pair in PAIRS] == list(LENSES)
    doc = (repo_root / "docs" / "lenses.md").read_text(encoding="utf-8")
    for lens, _, _, _, contract, extracted, _, _ in PAIRS:
        section = doc.split(f"### `{lens}`", 1)[1].split("###", 1)[0]
        assert json.dumps(contract) in section, lens
        assert json.dumps(extracted) in section, lens


def test_a_recursive_type_with_two_recursive_members_is_walked_once() -> None:
    # A binary tree: each level doubles the paths, 2**64 of them before the depth limit.
    canonical = {
        "$defs": {
            "T": {
                "type": "object",
                "properties": {
                    "l": {"$ref": "#/$defs/T"},
                    "r": {"$ref": "#/$defs/T"},
                    "n": {"type": "integer"},
                },
            }
        },
        "$ref": "#/$defs/T",
    }
    extracted = json.loads(
        json.dumps(canonical).replace("$defs", "definitions").replace("integer", "number")
    )
    document, found = apply_lenses("typescript", None, "forward", canonical, "#", extracted)
    assert [(c.id, c.old_pointer, c.new_pointer) for c in found] == [
        (
            "ts-number-for-integer",
            "#/$defs/T/properties/n/type",
            "#/definitions/T/properties/n/type",
        )
    ]
    assert document["definitions"]["T"]["properties"]["n"] == {"type": "integer"}
