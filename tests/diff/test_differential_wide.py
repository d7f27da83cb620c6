"""Differential property test of the diff engine over the wider fragment.

``test_differential`` draws values from the schemas themselves (hypothesis-jsonschema), which
cannot generate for references, ``unevaluated*``, ``if``, ``contains`` or ``dependent*``. Here
the schemas use those too, and the values come from small pools shared with the schemas'
names and constants, so edits meet them: whenever the engine says a direction is compatible,
no value the accepting side validates is rejected by the other side; every witness holds
under the reference validator; and a break that a value shows is witnessed.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, reject, settings
from hypothesis import strategies as st

from tests.diff.test_differential import DIFFERENTIAL, _valid, check_verdict, schema_nodes
from wiregate.diff import SchemaLoadError, diff

NAMES = ("a", "b", "c")
STRINGS = ("", "a", "b", "ab")
PATTERNS = ("^a", "^[ab]*$", "b$")
CONSTANTS: tuple[Any, ...] = ("a", "", 0, 1, 1.5, True, None, [], {}, [1], {"a": 1})

# Each schema names its definitions d0 and d1; a reference names one of them.
DEFINITIONS = ("d0", "d1")


def _values() -> st.SearchStrategy[Any]:
    scalars = st.sampled_from([None, True, False, 0, 1, 2, -1, 1.5, 2.0, *STRINGS])
    return st.recursive(
        scalars,
        lambda children: (
            st.lists(children, max_size=3)
            | st.dictionaries(st.sampled_from([*NAMES, "ab", "x"]), children, max_size=3)
        ),
        max_leaves=6,
    )


def _leaf() -> st.SearchStrategy[Any]:
    typed = st.builds(
        lambda types: {"type": types[0] if len(types) == 1 else types},
        st.lists(
            st.sampled_from(["string", "integer", "number", "boolean", "null", "object", "array"]),
            min_size=1,
            max_size=2,
            unique=True,
        ),
    )
    bounded = st.fixed_dictionaries(
        {},
        optional={
            "minimum": st.integers(-1, 2),
            "maximum": st.integers(0, 2),
            "minLength": st.integers(0, 2),
            "pattern": st.sampled_from(PATTERNS),
            "minItems": st.integers(0, 2),
            "maxProperties": st.integers(0, 2),
        },
    )
    return (
        typed
        | bounded
        | st.builds(lambda v: {"const": v}, st.sampled_from(CONSTANTS))
        | st.builds(
            lambda vs: {"enum": vs},
            st.lists(st.sampled_from(CONSTANTS), min_size=1, max_size=3, unique_by=repr),
        )
        | st.builds(lambda name: {"$ref": f"#/$defs/{name}"}, st.sampled_from(DEFINITIONS))
        | st.sampled_from([True, False])
    )


def _branch(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    names = st.sampled_from(NAMES)
    obj = st.fixed_dictionaries(
        {"type": st.just("object")},
        optional={
            "properties": st.dictionaries(names, children, max_size=2),
            "patternProperties": st.dictionaries(st.sampled_from(PATTERNS), children, max_size=1),
            "additionalProperties": children,
            "required": st.lists(names, min_size=1, max_size=2, unique=True),
            "propertyNames": st.sampled_from(
                [{"pattern": "^[ab]*$"}, {"maxLength": 1}, {"enum": ["a", "b"]}]
            ),
            "dependentRequired": st.dictionaries(
                names, st.lists(names, max_size=2, unique=True), max_size=1
            ),
            "dependentSchemas": st.dictionaries(names, children, max_size=1),
            "unevaluatedProperties": children,
        },
    )
    array = st.fixed_dictionaries(
        {"type": st.just("array")},
        optional={
            "prefixItems": st.lists(children, min_size=1, max_size=2),
            "items": children,
            "contains": children,
            "minContains": st.integers(0, 2),
            "maxContains": st.integers(1, 2),
            "uniqueItems": st.booleans(),
            "maxItems": st.integers(0, 3),
            "unevaluatedItems": children,
        },
    )
    members = st.lists(children, min_size=1, max_size=3)
    composed = (
        st.builds(lambda k, m: {k: m}, st.sampled_from(["allOf", "anyOf", "oneOf"]), members)
        | st.builds(lambda m: {"not": m}, children)
        | st.fixed_dictionaries({"if": children}, optional={"then": children, "else": children})
    )
    return obj | array | composed


def _schema() -> st.SearchStrategy[dict[str, Any]]:
    """A root and its definitions, in one object, for edits to reach both."""
    body = st.recursive(_leaf(), _branch, max_leaves=5)
    return st.fixed_dictionaries(
        {"root": body, "$defs": st.fixed_dictionaries({name: body for name in DEFINITIONS})}
    )


def _document(drawn: dict[str, Any]) -> dict[str, Any]:
    """The schema document: the root, and a reference to each definition that constrains
    nothing, so that every definition is a building block judged where it is referenced (a
    definition nothing references is a record type of its own, validated by name)."""
    reachable = {"anyOf": [*({"$ref": f"#/$defs/{name}"} for name in DEFINITIONS), True]}
    return {"allOf": [drawn["root"], reachable], "$defs": drawn["$defs"]}


@st.composite
def _pairs(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any], int]:
    """A schema, a copy with one or two edits at random nodes, and the number of edits."""
    drawn = draw(_schema())
    edited = copy.deepcopy(drawn)
    edits = draw(st.integers(1, 2))
    for _ in range(edits):
        nodes = schema_nodes(edited)[1:]
        replacement = draw(_leaf() | _branch(_leaf()))
        if not nodes or draw(st.integers(0, 7)) == 0:  # a whole schema replaced
            slot = draw(st.sampled_from(("root", *DEFINITIONS)))
            (edited if slot == "root" else edited["$defs"])[slot] = replacement
            continue
        node = draw(st.sampled_from(nodes))
        keyword = draw(st.sampled_from(sorted(k for k in node if k != "$defs") or ["-"]))
        if keyword != "-" and draw(st.booleans()):
            del node[keyword]  # drop one keyword
        elif isinstance(replacement, dict):
            node.update(replacement)  # add or replace keywords
    return _document(drawn), _document(edited), edits


@settings(DIFFERENTIAL, max_examples=250)
@given(pair=_pairs(), values=st.lists(_values(), min_size=8, max_size=16))
def test_verdicts_and_witnesses_over_the_wider_fragment(
    pair: tuple[dict[str, Any], dict[str, Any], int], values: list[Any]
) -> None:
    old, new, edits = pair
    for direction, (accepting, other) in (("backward", (old, new)), ("forward", (new, old))):
        try:
            result = diff(old, new, mode=direction)
        except SchemaLoadError as error:  # refused: only a reference cycle that never ends
            assert "cyclic $ref" in str(error) or "never applies to a part" in str(error)
            reject()
        escaped = [v for v in values if _valid(accepting, v) and not _valid(other, v)]
        # Two edits need not be witnessed: a witness must fail with its own finding's change
        # undone, and an edit that breaks only with another (a definition both use) has none.
        check_verdict(old, new, direction, result, escaped, witness_required=edits == 1)
