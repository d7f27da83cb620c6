"""Witnesses: every change that breaks the verdict carries a value that the reference validator
(jsonschema) accepts under the accepting schema and rejects under the other, checked here
again, independently of the engine, on every golden pair, every Karapace case labelled
incompatible and every real revision pair with breaks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema.validators import Draft202012Validator, validator_for

from tests.diff.test_karapace import _cases
from tests.diff.test_real_history import EXPECTED as HISTORY
from tests.diff.test_real_history import _load as load_revision
from wiregate.diff import Change, diff
from wiregate.diff.drafts import Drafts
from wiregate.diff.witness import Witness
from wiregate.metaschema import METASCHEMAS

GOLDEN = Path(__file__).resolve().parent / "golden"

# Findings the rules still call breaking although no value tells the two schemas apart (the
# change is only apparent); each has witness None.
APPARENT: dict[tuple[str, str], str] = {}


def _accepts(document: Any, at: str, instance: Any, draft: str) -> bool:
    """The reference validator of ``draft``, for the schema at ``at`` in ``document``
    (references resolve against the whole document); a location that does not exist accepts
    nothing."""
    if isinstance(document, dict):
        document = {**document, "$schema": METASCHEMAS[draft]}
    validator = validator_for(document, default=Draft202012Validator)(document)
    if at == "#":
        return bool(validator.is_valid(instance))
    node: Any = document
    for token in at[2:].split("/"):
        token = token.replace("~1", "/").replace("~0", "~")
        if token == "$defs" and "$defs" not in node:
            token = "definitions"
        if not isinstance(node, dict) or token not in node:
            return False
        node = node[token]
    return bool(validator.evolve(schema=node).is_valid(instance))


def _confirmed(old: Any, new: Any, change: Change, drafts: Drafts) -> bool:
    """The witness holds for the whole documents or, for a finding inside a ``$defs`` entry
    compared on its own (or added or removed), for that entry."""
    witness = change.witness
    assert witness is not None
    accepting, other = (old, new) if witness.direction == "backward" else (new, old)
    mine, theirs = (
        (drafts.old, drafts.new) if witness.direction == "backward" else (drafts.new, drafts.old)
    )
    selections = ["#"]
    for pointer in (change.old_pointer, change.new_pointer):
        if pointer.startswith(("#/$defs/", "#/definitions/")):
            selections.append("/".join(pointer.split("/")[:3]))
    return any(
        _accepts(accepting, at, witness.instance, mine.draft)
        and not _accepts(other, at, witness.instance, theirs.draft)
        for at in selections
    )


def _check_breaks(old: Any, new: Any, options: dict[str, Any], label: str) -> list[str]:
    """Every change breaking the verdict in backward and in forward mode has a confirmed
    witness of that direction; returns what is missing."""
    missing = []
    for mode in ("backward", "forward"):
        result = diff(old, new, **{**options, "mode": mode})
        for change in result.changes:
            if change.level != "error":
                assert change.witness is None
                continue
            if (change.id, mode) in APPARENT:
                assert change.witness is None, (change.id, change.witness)
                continue
            if change.witness is None:
                missing.append(f"{label} {mode}: {change.id} {change.old_pointer}")
                continue
            assert change.witness.direction == mode
            assert result.drafts is not None
            assert _confirmed(old, new, change, result.drafts), (label, change)
    return missing


def _golden(rule_id: str) -> tuple[Any, Any, dict[str, Any]]:
    folder = GOLDEN / rule_id
    expected = json.loads((folder / "expected.json").read_text(encoding="utf-8"))
    options = {k: v for k, v in expected.get("options", {}).items() if k != "mode"}
    return (
        json.loads((folder / "base.json").read_text(encoding="utf-8")),
        json.loads((folder / "revision.json").read_text(encoding="utf-8")),
        options,
    )


@pytest.mark.parametrize("rule_id", sorted(path.name for path in GOLDEN.iterdir()))
def test_every_golden_break_has_a_confirmed_witness(rule_id: str) -> None:
    old, new, options = _golden(rule_id)
    assert _check_breaks(old, new, options, rule_id) == []


def test_every_karapace_incompatible_case_has_confirmed_witnesses(corpus_dir: Path) -> None:
    checked = 0
    missing: list[str] = []
    for case in _cases(corpus_dir):
        if case["compatible"]:
            continue
        old, new = case["writer_schema"], case["reader_schema"]
        if diff(old, new).compatible:
            continue  # a documented disagreement: no break to witness
        checked += 1
        missing += _check_breaks(old, new, {}, f"case {case['id']}")
    assert (checked, missing) == (65, [])


def test_every_real_history_break_has_a_confirmed_witness(corpus_dir: Path) -> None:
    with_breaks = 0
    missing: list[str] = []
    for old_name, new_name in sorted(HISTORY):
        old, new = load_revision(corpus_dir, old_name), load_revision(corpus_dir, new_name)
        if diff(old, new, mode="full").compatible:
            continue
        with_breaks += 1
        missing += _check_breaks(old, new, {}, f"{old_name} -> {new_name}")
    assert (with_breaks, missing) == (10, [])


# rule id -> (direction, the exact witness)
PINNED = {
    "required-added": ("backward", {}),
    "type-narrowed": ("backward", {"v": 0}),
    "enum-narrowed": ("backward", {"v": "c"}),
    "max-length-tightened": ("backward", {"v": "aaaaaa"}),
    "property-added-to-closed-model": ("forward", {"v": ""}),
    "one-of-member-removed": ("backward", {"c": False}),
    "definition-removed": ("backward", 0),
}


@pytest.mark.parametrize("rule_id", sorted(PINNED))
def test_exact_witnesses(rule_id: str) -> None:
    old, new, options = _golden(rule_id)
    direction, instance = PINNED[rule_id]
    (change,) = diff(old, new, mode=direction, **options).changes
    assert change.witness == Witness(direction, instance)
    assert change.witness is not None and change.witness.instance == instance


def test_full_mode_witnesses_the_backward_break_first() -> None:
    old = {"type": "object", "properties": {"v": {"type": "string"}}}
    new = {"type": "object", "properties": {"v": {"type": "integer"}}}
    (change,) = diff(old, new, mode="full").changes
    assert (change.id, change.witness) == ("type-changed", Witness("backward", {"v": ""}))
    (change,) = diff(old, new, mode="forward").changes
    assert change.witness == Witness("forward", {"v": 0})


def test_no_witness_for_compatible_changes_or_tolerated_ones() -> None:
    old = {"type": "object", "properties": {"v": {"type": "string"}}}
    new = {"type": "object", "properties": {"v": {"type": "string"}, "w": {"type": "integer"}}}
    (strict,) = diff(old, new).changes
    assert (strict.level, strict.witness) == ("error", Witness("backward", {"w": 0}))
    (lenient,) = diff(old, new, policy="lenient").changes
    assert (lenient.level, lenient.witness) == ("warning", None)
    (forward,) = diff(old, new, mode="forward").changes
    assert (forward.level, forward.witness) == ("warning", None)


def test_a_break_without_any_value_keeps_its_level_with_no_witness() -> None:
    # Every value of the old root matches both members (the same but for a title), so oneOf
    # rejects it: the old schema accepts nothing and no value can witness the change of one
    # member. (With the members written exactly alike, the old oneOf is one member written
    # twice, which the engine reads as rejecting everything: no break backward then.)
    member = {"type": "object", "required": ["a"], "properties": {"a": {"type": "integer"}}}
    old: dict[str, Any] = {
        "$defs": {"A": member, "B": {**member, "title": "B"}},
        "oneOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}],
    }
    new = json.loads(json.dumps(old))
    new["$defs"]["B"]["required"] = ["a", "b"]
    changes = diff(old, new).changes
    assert [(c.id, c.level, c.witness) for c in changes] == [
        ("required-added", "error", None),
        ("one-of-overlap-changed", "warning", None),
    ]


def test_a_witness_inside_a_draft_07_tuple_and_a_selected_definition() -> None:
    draft7 = "http://json-schema.org/draft-07/schema#"
    old = {
        "$schema": draft7,
        "definitions": {"P": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]}},
    }
    new = json.loads(json.dumps(old))
    new["definitions"]["P"]["items"][1]["maximum"] = 3
    (change,) = diff(old, new, old_at="#/$defs/P", new_at="#/$defs/P").changes
    assert (change.id, change.witness) == ("maximum-added", Witness("backward", ["", 4]))


def test_format_assertion_witnesses_are_checked_with_formats() -> None:
    old, new = {"type": "string", "format": "date"}, {"type": "string", "format": "email"}
    (change,) = diff(old, new, mode="full", format_assertion=True).changes
    assert (change.id, change.witness) == ("format-changed", Witness("backward", "2020-01-01"))
    (annotation,) = diff(old, new, mode="full").changes
    assert (annotation.level, annotation.witness) == ("info", None)


def test_a_hostile_pattern_is_never_run_by_a_backtracking_engine() -> None:
    # jsonschema confirms the witness with the schema's regexes on RE2: under Python's re,
    # ``^(a+)+$`` against this key backtracks 2**40 times.
    long_key = "a" * 40 + "b"
    old: dict[str, Any] = {
        "type": "object",
        "patternProperties": {"^(a+)+$": {"type": "string"}},
        "additionalProperties": False,
        "properties": {long_key: {"type": "integer"}},
    }
    new = {k: v for k, v in old.items() if k != "properties"}
    (change,) = diff(old, new).changes
    assert change.witness == Witness("backward", {long_key: 0})


def test_a_string_outside_the_new_pattern_extends_a_sample_of_the_old_one() -> None:
    # Found by the differential test: "a" matches both patterns, "a0" only the old one.
    old = {"type": "string", "pattern": "^a"}
    new = {"type": ["array", "null", "string"], "pattern": "^[ab]*$"}
    changes = diff(old, new).changes
    assert [(c.id, c.witness) for c in changes] == [
        ("pattern-changed", Witness("backward", "a0")),
        ("type-widened", None),
    ]


def test_a_one_of_member_covered_only_by_overlapping_members_is_not_compatible() -> None:
    # Found by the differential test: the old oneOf has two string members, so it rejects every
    # string; the new one accepts "" (only its first member matches). The added member is
    # covered by an old member, but that member overlaps another one.
    old = {"oneOf": [{"type": "string"}, {"type": "string"}]}
    new = {"oneOf": [{"type": "string"}, {"type": "string", "minLength": 3}]}
    # The old member written twice is written once now: its values are accepted again.
    assert [(c.id, c.forward, c.witness) for c in diff(old, new, mode="forward").changes] == [
        ("one-of-member-added", False, Witness("forward", "")),
        ("one-of-duplicate-removed", False, Witness("forward", "")),
    ]
    assert [(c.id, c.backward, c.witness) for c in diff(new, old).changes] == [
        ("one-of-duplicate-added", False, Witness("backward", "")),
        ("one-of-member-removed", False, Witness("backward", "")),
    ]


@pytest.mark.parametrize("keyword", ["maxItems", "maxProperties"])
def test_a_huge_bound_gets_no_witness_rather_than_a_huge_value(keyword: str) -> None:
    # A witness would hold a billion and one members: the search gives none, at once.
    kind = "array" if keyword == "maxItems" else "object"
    old = {"type": kind}
    (change,) = diff(old, {**old, keyword: 10**9}).changes
    assert (change.level, change.witness) == ("error", None)


@pytest.mark.parametrize(
    ("at", "witness"),
    [
        ("#/components/schemas/A", {"x": "aaa"}),  # OpenAPI: below a keyword no draft knows
        ("#/properties/a", {"x": "aaa"}),  # a property of the root, not a definition
    ],
)
def test_a_selection_outside_the_definitions_has_its_witness(at: str, witness: Any) -> None:
    """The selection is checked inside its whole document (its references resolve there,
    the root's own keywords do not apply): before, only a selection in $defs was."""

    def document(name: dict[str, Any]) -> dict[str, Any]:
        selected = {"type": "object", "properties": {"x": {"$ref": "#/components/schemas/B"}}}
        return {
            "type": "integer",  # the root's: never applied to the selection
            "properties": {"a": selected},
            "components": {"schemas": {"A": selected, "B": name}},
        }

    result = diff(document({"type": "string"}), document({"type": "string", "maxLength": 2}),
                  old_at=at, new_at=at)  # fmt: skip
    assert [
        (c.id, c.old_pointer, c.witness and (c.witness.direction, c.witness.instance))
        for c in result.changes
    ] == [("max-length-added", "#/components/schemas/B", ("backward", witness))]


def test_each_witness_shows_its_own_finding() -> None:
    """A witness is a value whose rejection the finding's own change causes: with that change
    undone, the value passes. The search of the whole selection finds values that another
    change rejects; such a value is no witness of this finding (a dependentRequired change
    on a schema of arrays, which no object reaches, borrowed the items change's [""])."""
    old = {"type": "array", "dependentRequired": {"c": ["d"]}, "items": {"type": "string"}}
    new = {"type": "array", "dependentRequired": {"c": ["d", "f"]}, "items": {"type": "integer"}}
    result = diff(old, new, mode="full")
    assert [
        (c.id, c.level, c.witness and (c.witness.direction, c.witness.instance))
        for c in result.changes
    ] == [
        ("type-changed", "error", ("backward", [""])),
        # judged on the dependentRequired alone: no array reaches it
        ("dependent-required-extended", "info", None),
    ]
    # Two changes side by side: each witness is rejected for its own reason.
    old = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}
    new = {
        "type": "object",
        "properties": {"a": {"type": "string", "maxLength": 1}, "b": {"type": "integer"}},
    }
    rows = [
        (c.id, c.new_pointer, c.witness and c.witness.instance)
        for c in diff(old, new, mode="backward").changes
    ]
    assert rows == [
        ("max-length-added", "#/properties/a/maxLength", {"a": "aa"}),
        ("type-changed", "#/properties/b/type", {"b": ""}),
    ]


def test_the_witness_search_never_fetches_a_remote_schema() -> None:
    """A remote $ref the engine ignores (a sibling of a draft-07 $ref) was fetched by the fast
    validator while it looked for witnesses (over the network: 15 s past any time limit for
    an address that does not answer). A server on a loopback port counts the requests."""
    import http.server
    import threading

    requests: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            requests.append(self.path)
            body = b'{"type": "integer"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/schema+json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        remote = f"http://127.0.0.1:{server.server_address[1]}/e.json"
        old = {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "$ref": "#/definitions/B",
            "oneOf": [{"$ref": remote}],  # ignored: a sibling of $ref under draft-07
            "definitions": {"B": {"enum": [1]}},
        }
        result = diff(old, {}, mode="full")
        assert [(c.id, c.level) for c in result.changes] == [
            ("enum-removed", "error"),
            ("definition-removed", "info"),
        ]
    finally:
        server.shutdown()
        server.server_close()
    assert requests == []


@pytest.mark.parametrize(
    ("old", "new", "mode", "found"),
    [
        # The extra key obeys propertyNames: "wg_extra" broke maxLength 1, and no value was
        # found.
        (
            {
                "type": "object",
                "unevaluatedProperties": {"type": "string"},
                "propertyNames": {"maxLength": 1},
            },
            {"type": "object", "unevaluatedProperties": {}, "propertyNames": {"maxLength": 1}},
            "forward",
            ("unevaluated-properties-changed", "#/unevaluatedProperties", {"x": {}}),
        ),
        (
            {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "propertyNames": {"enum": ["b", "ab"]},
            },
            {
                "type": "object",
                "additionalProperties": {"type": "integer"},
                "propertyNames": {"enum": ["b", "ab"]},
            },
            "backward",
            ("type-changed", "#/additionalProperties/type", {"ab": ""}),
        ),
        # not A -> not B: a value of B that A rejects (a value of B alone is rejected by both).
        (
            {"not": {"type": "object", "additionalProperties": {}}},
            {"not": {"type": "object", "additionalProperties": {"type": "object"}}},
            "forward",
            ("additional-properties-narrowed", "#/not/additionalProperties", {"wg_extra": []}),
        ),
        # minContains 0: the contained value is not needed (the generator always put one in,
        # past maxItems 0).
        (
            {"type": "array", "contains": {"type": "object"}, "minContains": 0, "maxItems": 0},
            {"type": "number", "contains": {"type": "object"}, "minContains": 0, "maxItems": 0},
            "backward",
            ("type-changed", "#/type", []),
        ),
        (
            {
                "type": "array",
                "contains": {"type": "integer"},
                "minContains": 2,
                "uniqueItems": True,
            },
            {
                "type": "array",
                "contains": {"type": "integer"},
                "minContains": 2,
                "uniqueItems": True,
                "maxItems": 1,
            },
            "backward",
            ("max-items-added", "#/maxItems", [0, 1]),
        ),
        # The member is written alike on both sides; what its reference names changed. With
        # nothing to undo where the finding is, every value was refused as another's break.
        (
            {"oneOf": [{}, {"$ref": "#/$defs/d0"}], "$defs": {"d0": {"not": {"type": "integer"}}}},
            {
                "oneOf": [{}, {"$ref": "#/$defs/d0"}],
                "$defs": {"d0": {"not": {"type": "integer"}, "type": ["null"]}},
            },
            "forward",
            ("one-of-overlap-changed", "#/oneOf/1", False),
        ),
        # A value breaking a bound is of the type the bound applies to: the numbers that
        # minimum hinted at pass minItems.
        (
            {"if": {"minimum": 1}, "then": {"minItems": 1}},
            {"then": {"minItems": 1}},
            "forward",
            ("if-removed", "#", []),
        ),
        # The values of a conditional's branches: "a" only through else.
        (
            {"if": {"type": "number"}, "else": {"const": "a"}},
            {"type": "number"},
            "backward",
            ("type-narrowed", "#/type", "a"),
        ),
        # not (not X) is X.
        (
            {"not": {"not": {"const": {"a": 1}}}},
            {"not": {"not": {"const": {"a": 1}}}, "type": "array"},
            "backward",
            ("type-narrowed", "#/type", {"a": 1}),
        ),
    ],
)
def test_witnesses_the_generator_missed(
    old: dict[str, Any], new: dict[str, Any], mode: str, found: tuple[str, str, Any]
) -> None:
    result = diff(old, new, mode=mode)
    assert [
        (c.id, c.new_pointer, c.witness.instance)
        for c in result.changes
        if c.witness is not None and c.witness.direction == mode
    ] == [found]
