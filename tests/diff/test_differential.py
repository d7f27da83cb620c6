"""Differential property test of the diff engine against the reference validator.

For random schema pairs drawn from the fragment the engine supports (a schema and an edited
copy of it): whenever the engine says a direction is compatible, no value generated from the
accepting side (hypothesis-jsonschema) is rejected by the other side; whenever it says a
direction is incompatible, every witness it gives holds under jsonschema, and when generated
values show the break is real, a witness was given.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from jsonschema import Draft202012Validator

from wiregate.diff import diff
from wiregate.diff.verdict import DiffResult

# Small value pools, so edits often meet the values generated from the other side.
NAMES = ("a", "b", "c")
STRINGS = ("", "a", "b", "ab", "zz")
PATTERNS = ("^a", "^[ab]*$", "b$", "^[0-9]+$")


def _scalar_schema() -> st.SearchStrategy[dict[str, Any]]:
    string = st.fixed_dictionaries(
        {"type": st.just("string")},
        optional={
            "minLength": st.integers(0, 3),
            "maxLength": st.integers(1, 4),
            "pattern": st.sampled_from(PATTERNS),
        },
    )
    integer = st.fixed_dictionaries(
        {"type": st.sampled_from(["integer", "number"])},
        optional={
            "minimum": st.integers(-2, 3),
            "maximum": st.integers(2, 8),
            "exclusiveMinimum": st.integers(-3, 1),
            "exclusiveMaximum": st.integers(4, 9),
            "multipleOf": st.sampled_from([2, 3, 0.5]),
        },
    )
    enum = st.builds(
        lambda values: {"enum": values},
        st.lists(
            st.sampled_from([*STRINGS, 0, 1, 2, True, None]), min_size=1, max_size=4, unique=True
        ),
    )
    const = st.builds(lambda value: {"const": value}, st.sampled_from([*STRINGS, 0, 1, None]))
    simple = st.builds(
        lambda types: {"type": types},
        st.lists(
            st.sampled_from(["string", "integer", "number", "boolean", "null"]),
            min_size=1,
            max_size=3,
            unique=True,
        ),
    )
    return string | integer | enum | const | simple


def _schemas() -> st.SearchStrategy[dict[str, Any]]:
    def containers(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[Any]:
        obj = st.builds(
            _object,
            st.dictionaries(st.sampled_from(NAMES), children, max_size=3),
            st.lists(st.sampled_from(NAMES), max_size=2, unique=True),
            st.sampled_from(["open", "closed", "typed"]),
            children,
        )
        array = st.fixed_dictionaries(
            {"type": st.just("array"), "items": children},
            optional={
                "minItems": st.integers(0, 2),
                "maxItems": st.integers(1, 3),
                "uniqueItems": st.just(True),
            },
        )
        union = st.builds(
            lambda keyword, members: {keyword: members},
            st.sampled_from(["anyOf", "oneOf"]),
            st.lists(children, min_size=2, max_size=3),
        )
        return obj | array | union

    return st.recursive(_scalar_schema(), containers, max_leaves=6)


def _object(
    props: dict[str, Any], required: list[str], model: str, extra: dict[str, Any]
) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    if model == "closed":
        schema["additionalProperties"] = False
    elif model == "typed":
        schema["additionalProperties"] = extra
    return schema


def schema_nodes(schema: Any) -> list[dict[str, Any]]:
    """Every object node of ``schema`` (definitions included), ``schema`` first: every
    value of a keyword but data (``const``, ``enum``) and name lists."""
    found: list[dict[str, Any]] = []
    pending = [schema]
    while pending:
        node = pending.pop()
        if not isinstance(node, dict):
            continue
        found.append(node)
        for keyword, value in node.items():
            if keyword in ("properties", "patternProperties", "dependentSchemas", "$defs"):
                pending += list(value.values())
            elif keyword in ("allOf", "anyOf", "oneOf", "prefixItems"):
                pending += value
            elif keyword not in ("const", "enum", "required", "dependentRequired"):
                pending.append(value)
    return found


@st.composite
def _pairs(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """A schema and a copy with one to three edits at random nodes."""
    old = draw(_schemas())
    new = copy.deepcopy(old)
    for _ in range(draw(st.integers(1, 3))):
        node = draw(st.sampled_from(schema_nodes(new)))
        _edit(draw, node)
    return old, new


def _edit(draw: st.DrawFn, node: dict[str, Any]) -> None:
    edit = draw(st.integers(0, 7))
    if edit == 0:
        node.clear()
        node.update(draw(_scalar_schema()))
    elif edit == 1 and node.get("type") == "object":
        props = node.setdefault("properties", {})
        name = draw(st.sampled_from(NAMES))
        if name in props:
            del props[name]
        else:
            props[name] = draw(_scalar_schema())
    elif edit == 2 and node.get("type") == "object":
        required = set(node.get("required") or ())
        required ^= {draw(st.sampled_from(NAMES))}
        node["required"] = sorted(required)
        if not required:
            del node["required"]
    elif edit == 3 and node.get("type") == "object":
        if "additionalProperties" in node:
            del node["additionalProperties"]
        else:
            node["additionalProperties"] = draw(st.just(False) | _scalar_schema())
    elif edit == 4:
        keyword = draw(
            st.sampled_from(
                ["minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems"]
            )
        )
        if keyword in node:
            node[keyword] = max(0, node[keyword] + draw(st.sampled_from([-1, 1])))
        else:
            node[keyword] = draw(st.integers(0, 3))
    elif edit == 5 and isinstance(node.get("enum"), list):
        value = draw(st.sampled_from([*STRINGS, 0, 1, 2, True, None]))
        values = [v for v in node["enum"] if v != value or type(v) is not type(value)]
        node["enum"] = values if len(values) < len(node["enum"]) or not values else [*values, value]
        if not node["enum"]:
            node["enum"] = [value]
    elif edit == 6:
        types = {"string", "integer", "number", "boolean", "null", "object", "array"}
        node["type"] = sorted(draw(st.sets(st.sampled_from(sorted(types)), min_size=1, max_size=3)))
    elif edit == 7:
        for keyword in ("anyOf", "oneOf"):
            if isinstance(node.get(keyword), list) and len(node[keyword]) > 1:
                del node[keyword][draw(st.integers(0, len(node[keyword]) - 1))]
                return
        node["pattern"] = draw(st.sampled_from(PATTERNS))


_NONE = object()
_PAIRS = (("minLength", "maxLength"), ("minItems", "maxItems"), ("minimum", "maximum"))


def _contradictory(schema: dict[str, Any]) -> bool:
    """A lower bound above its upper bound somewhere: hypothesis-jsonschema refuses such a
    schema instead of generating nothing."""
    return any(
        isinstance(node.get(low), (int, float))
        and isinstance(node.get(high), (int, float))
        and node[low] > node[high]
        for node in schema_nodes(schema)
        for low, high in _PAIRS
    )


def _valid(schema: dict[str, Any], instance: Any) -> bool:
    return bool(Draft202012Validator(schema).is_valid(instance))


# Both differential tests: the suite's profile, bounded examples, schemas drawn and filtered.
DIFFERENTIAL = settings(
    parent=settings.get_profile("ci"),
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
    ],
)


@settings(DIFFERENTIAL, max_examples=150)
@given(pair=_pairs(), data=st.data())
def test_verdicts_and_witnesses_agree_with_the_reference_validator(
    pair: tuple[dict[str, Any], dict[str, Any]], data: st.DataObject
) -> None:
    old, new = pair
    for direction, (accepting, other) in (("backward", (old, new)), ("forward", (new, old))):
        result = diff(old, new, mode=direction)
        generated = st.nothing() if _contradictory(accepting) else from_schema(accepting)
        values = data.draw(st.lists(generated | st.just(_NONE), max_size=4))
        escaped = [v for v in values if v is not _NONE and not _valid(other, v)]
        check_verdict(old, new, direction, result, escaped)


def check_verdict(
    old: dict[str, Any],
    new: dict[str, Any],
    direction: str,
    result: DiffResult,
    escaped: list[Any],
    *,
    witness_required: bool = True,
) -> None:
    """The engine's verdict on ``direction`` against ``escaped``, the values the accepting
    side validates and the other rejects: a direction called compatible with nothing left
    undecided lets none through; every witness holds; a break a value shows is witnessed
    (``witness_required``), unless a change is undecided."""
    accepting, other = (old, new) if direction == "backward" else (new, old)
    decided = all(c.level != "unknown" for c in result.changes)
    if result.compatible:
        assert escaped == [] or not decided, (direction, old, new, escaped[:1])
        return
    witnesses = [c.witness for c in result.changes if c.witness is not None]
    for witness in witnesses:
        assert witness.direction == direction
        assert _valid(accepting, witness.instance), (direction, old, new, witness)
        assert not _valid(other, witness.instance), (direction, old, new, witness)
    if decided and witness_required:
        assert witnesses or not escaped, (direction, old, new, escaped[:1])
