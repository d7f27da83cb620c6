"""The verdict is sound on every golden pair: when a direction is claimed compatible (strict
policy), every generated value that the one schema accepts, the other accepts too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema.protocols import Validator

from wiregate.diff import diff
from wiregate.diff.drafts import choose_draft
from wiregate.metaschema import validator_class

GOLDEN = Path(__file__).resolve().parent / "golden"

# Small alphabets so that generated values often hit the bounds, patterns and enums of the
# golden pairs; each pair adds the constants, bounds and property names it mentions.
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-3, max_value=12)
    | st.sampled_from([0.5, 1.5, 2.5, 7.25, -1.5])
    | st.sampled_from(["", "a", "b", "c", "x", "x-", "abc", "aaaaaaaaaaaa", "2026-01-01"])
    | st.text(alphabet="abcxz0-", max_size=12)
)
BOUNDS = ("minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")


def _mentioned(schemas: list[Any]) -> tuple[list[Any], list[str]]:
    """Values and property names that a pair of schemas mentions."""
    values: list[Any] = []
    names: list[str] = ["v", "a", "zz"]
    for node in (n for schema in schemas for n in _nodes(schema)):
        if not isinstance(node, dict):
            continue
        values += node.get("enum") or []
        if "const" in node:
            values.append(node["const"])
        for keyword in BOUNDS:
            bound = node.get(keyword)
            if isinstance(bound, (int, float)) and not isinstance(bound, bool):
                values += [bound - 1, bound, bound + 1, bound + 0.5, "a" * max(int(bound), 0)]
        names += list(node.get("properties") or {})
        names += [str(name) for name in node.get("required") or []]
    return values, names


def _values(schemas: list[Any]) -> st.SearchStrategy[Any]:
    values, names = _mentioned(schemas)
    mentioned = st.sampled_from(values) if values else SCALARS
    # one_of flattens: the mentioned values get about a third of the scalar draws.
    scalars = mentioned | mentioned | mentioned | SCALARS
    keys = [*sorted(set(names)), "x-a", "longer-key-name"]
    json_values = st.recursive(
        scalars,
        lambda children: (
            st.lists(children, max_size=5)
            | st.dictionaries(st.sampled_from(keys), children, max_size=4)
        ),
        max_leaves=10,
    )
    objects = st.fixed_dictionaries({}, optional={key: json_values for key in keys})
    return objects | objects | json_values


def _load(rule_id: str, name: str) -> Any:
    return json.loads((GOLDEN / rule_id / name).read_text(encoding="utf-8"))


def _validator(schema: Any) -> Validator:
    """The reference validator of the draft the engine reads ``schema`` under."""
    validator: Validator = validator_class(choose_draft(schema).draft)(schema)
    return validator


def _nodes(schema: Any) -> list[Any]:
    found = [schema]
    if isinstance(schema, dict):
        for value in schema.values():
            found += _nodes(value)
    elif isinstance(schema, list):
        for value in schema:
            found += _nodes(value)
    return found


def _claims() -> list[tuple[str, str]]:
    """(rule id, direction) for every direction a golden pair claims compatible (an undecided
    change claims nothing)."""
    claims = []
    for folder in sorted(GOLDEN.iterdir()):
        result = diff(_load(folder.name, "base.json"), _load(folder.name, "revision.json"))
        for direction in ("backward", "forward"):
            if all(getattr(c, direction) and c.level != "unknown" for c in result.changes):
                claims.append((folder.name, direction))
    return claims


FIXED = [
    None,
    True,
    False,
    0,
    1,
    -1,
    2,
    3,
    5,
    0.5,
    1.5,
    2.5,
    "",
    "a",
    "b",
    "c",
    "x",
    "x-",
    "abc",
    "aaaaaaaaaaaa",
    "2026-01-01",
    [],
    [1],
    ["a", "a"],
    [1, "a"],
    {},
    {"a": 1},
]


def _candidates(schemas: list[Any]) -> list[Any]:
    """A small exhaustive domain: the values a pair mentions and some plain ones, alone, under
    each property name, and in short arrays."""
    values, names = _mentioned(schemas)
    scalars = FIXED + values
    found: list[Any] = [*scalars, {}]
    for name in [*sorted(set(names)), "x-a"]:
        found += [{name: value} for value in scalars]
    found += [[value] for value in scalars] + [[value, value] for value in scalars]
    found += [[value, other] for value in scalars[:12] for other in scalars[:12]]
    return found


def _holds(rule_id: str, direction: str) -> None:
    """Fail when a value accepted by one side is rejected by the other."""
    base, revision = _load(rule_id, "base.json"), _load(rule_id, "revision.json")
    source, target = (base, revision) if direction == "backward" else (revision, base)
    accepts, must_accept = _validator(source), _validator(target)
    for value in _candidates([base, revision]):
        if accepts.is_valid(value):
            assert must_accept.is_valid(value), value

    @settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
    @given(_values([base, revision]))
    def check(value: Any) -> None:
        if accepts.is_valid(value):
            assert must_accept.is_valid(value), value

    check()


@pytest.mark.parametrize(("rule_id", "direction"), _claims())
def test_claimed_compatible_direction_holds(rule_id: str, direction: str) -> None:
    _holds(rule_id, direction)


@pytest.mark.parametrize(
    ("rule_id", "direction"),
    [("enum-narrowed", "backward"), ("type-widened", "forward"), ("required-added", "backward")],
)
def test_the_check_catches_an_incompatible_direction(rule_id: str, direction: str) -> None:
    """The check above can fail: it finds the counterexample of a known incompatibility."""
    with pytest.raises(AssertionError):
        _holds(rule_id, direction)


def test_every_compatible_claim_on_the_karapace_cases_holds(corpus_dir: Path) -> None:
    """Across all 321 Karapace pairs, in both directions: wherever the engine says compatible,
    no candidate value accepted by the one schema is rejected by the other."""
    cases = json.loads((corpus_dir / "compat" / "karapace-cases.json").read_text(encoding="utf-8"))
    unsound = []
    checked = 0
    for case in cases["cases"]:
        writer, reader = case["writer_schema"], case["reader_schema"]
        result = diff(writer, reader, mode="full")
        mentioned = [s for s in (writer, reader) if isinstance(s, dict)]
        for direction in ("backward", "forward"):
            if not all(getattr(change, direction) for change in result.changes):
                continue
            checked += 1
            source, target = (writer, reader) if direction == "backward" else (reader, writer)
            accepts, must_accept = _validator(source), _validator(target)
            for value in _candidates(mentioned):
                if accepts.is_valid(value) and not must_accept.is_valid(value):
                    unsound.append((case["id"], direction, value))
                    break
    assert unsound == []
    assert checked == 399
