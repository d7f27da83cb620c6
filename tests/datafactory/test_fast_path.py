"""The fast path of acceptance (``datafactory.records.decode_branch`` and its siblings, msgspec
in C) against the judge (orjson, then the jsonschema-rs validator of the record type): the fast
path never accepts a line the judge rejects, and what it accepts is the value the judge read.
Where it defers (None), the judge decides; the deferrals are pinned."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from contracts import locate
from datafactory import records
from datafactory.records import to_wire
from wiregate.record_validator import ValidatorSet, guess_record_type

REPO_ROOT = Path(__file__).resolve().parents[2]
CONTRACT = locate(REPO_ROOT)
VALIDATORS = ValidatorSet(CONTRACT)

DECODERS: dict[str, Callable[[bytes], Any]] = {
    "RolloutBranchRecord": records.decode_branch,
    "RolloutTreeRecord": records.decode_tree,
    "DpoRecord": records.decode_dpo_record,
    "PpoRecord": records.decode_ppo_record,
    "DpoTrainingRecord": records.decode_dpo_training,
    "PpoTrainingRecord": records.decode_ppo_training,
    "SftTrainingRecord": records.decode_sft_training,
    "TrlPreferenceRecord": records.decode_trl_preference,
    "TrlPromptRecord": records.decode_trl_prompt,
    "TrlKtoRecord": records.decode_trl_kto,
    "TrlSftRecord": records.decode_trl_sft,
}
INPUT_TYPES = ("RolloutBranchRecord", "RolloutTreeRecord", "DpoRecord", "PpoRecord")


def judge(record_type: str, line: bytes) -> Any:
    """The value the validating path reads from ``line`` when it accepts it, else None."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return value if VALIDATORS.get(record_type).is_valid(value) else None


def verdict(record_type: str, line: bytes) -> str:
    """``accepted`` (both), ``deferred`` (judge accepts, fast path defers), ``rejected``
    (both reject); a fast acceptance the judge does not share fails the test."""
    fast = DECODERS[record_type](line)
    judged = judge(record_type, line)
    if fast is not None:
        assert judged is not None, f"fast path accepted what the validator rejects: {line!r}"
        assert to_wire(fast) == judged, line
        assert type(fast).__name__ == record_type
        if record_type in INPUT_TYPES:
            assert guess_record_type(judged) == record_type
        return "accepted"
    return "rejected" if judged is None else "deferred"


def test_the_contract_has_a_fast_decoder_per_record_type() -> None:
    assert sorted(DECODERS) == sorted(CONTRACT.record_types)


FIXTURES = [(d, valid, p) for _s, d, valid, p in CONTRACT.fixtures()]


def test_every_fixture_against_every_record_type() -> None:
    outcomes: dict[str, list[str]] = {"accepted": [], "deferred": [], "rejected": []}
    for definition, valid, path in FIXTURES:
        line = path.read_bytes()
        for record_type in DECODERS:
            outcome = verdict(record_type, line)
            if record_type == definition:
                assert (outcome != "rejected") == valid, path
            outcomes[outcome].append(f"{record_type}:{definition}/{path.stem}")
    assert len(FIXTURES) == 101
    assert len(outcomes["accepted"]) == 33
    # Valid, but with keys their schema does not name: from_wire keeps them, the judge decides.
    assert outcomes["deferred"] == [
        "DpoRecord:DpoRecord/no-tool-calls",
        "PpoRecord:PpoRecord/extra-keys",
        "RolloutBranchRecord:RolloutBranchRecord/unknown-status-extra-keys",
        "RolloutTreeRecord:RolloutTreeRecord/extra-keys",
    ]
    assert len(outcomes["rejected"]) == 101 * 11 - 33 - 4


def _corpus_lines(corpus_dir: Path) -> list[tuple[str, bytes]]:
    lines = []
    for path in sorted((corpus_dir / "fixtures").rglob("*.jsonl")):
        relative = path.relative_to(corpus_dir / "fixtures").as_posix()
        for number, line in enumerate(path.read_bytes().splitlines(), 1):
            if line.strip():
                lines.append((f"{relative}:{number}", line))
    return lines


def test_every_corpus_record_against_every_record_type(corpus_dir: Path) -> None:
    outcomes: dict[str, list[str]] = {"accepted": [], "deferred": [], "rejected": []}
    lines = _corpus_lines(corpus_dir)
    for where, line in lines:
        for record_type in DECODERS:
            outcomes[verdict(record_type, line)].append(f"{record_type} {where}")
    assert len(lines) == 21
    assert outcomes["deferred"] == []
    # Only Layer 1 records of trace-pipeline meet the canonical contract today.
    assert outcomes["accepted"] == [
        "RolloutBranchRecord trace-pipeline/data-loop-rollout-branches.v1.jsonl:1",
        "RolloutBranchRecord trace-pipeline/data-loop-rollout-branches.v1.jsonl:2",
        "RolloutBranchRecord trace-pipeline/golden-rollout-policy-blocked.v1.jsonl:1",
        "RolloutBranchRecord trace-pipeline/golden-rollout-repair-success.v1.jsonl:1",
        "RolloutBranchRecord trace-pipeline/golden-rollout-repair-success.v1.jsonl:2",
        "RolloutBranchRecord trace-pipeline/golden-rollout-success.v1.jsonl:1",
    ]


# Lines where a decoder and the validating path could part: each with its exact outcome.


def _fixture(record_type: str, name: str) -> dict[str, Any]:
    schema = CONTRACT.definitions[record_type]
    path = CONTRACT.fixtures_dir / schema / record_type / "valid" / f"{name}.json"
    value: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return value


BRANCH = _fixture("RolloutBranchRecord", "full")
BRANCH_TEXT = json.dumps(BRANCH)
PPO = _fixture("PpoRecord", "empty-completion")
HASH = PPO["provenance"]["n_gram_hash"]
TREE = _fixture("RolloutTreeRecord", "two-branches")
TRAINING = _fixture("PpoTrainingRecord", "reward-zero")


def _with(record: dict[str, Any], **changes: Any) -> bytes:
    return json.dumps({**record, **changes}).encode()


def _replace(old: str, new: str, text: str = BRANCH_TEXT) -> bytes:
    assert text.count(old) == 1, old
    return text.replace(old, new).encode()


EDGE_CASES: list[tuple[str, str, bytes, str]] = [
    ("valid", "RolloutBranchRecord", BRANCH_TEXT.encode(), "accepted"),
    ("trailing newline", "RolloutBranchRecord", BRANCH_TEXT.encode() + b"\r\n", "accepted"),
    # JSON Schema counts 1.0 as an integer; msgspec wants a JSON integer: the judge decides.
    ("1.0 in an integer field", "RolloutBranchRecord", _with(BRANCH, rank=1.0), "deferred"),
    (
        "1.0 in an enum of integers",
        "RolloutBranchRecord",
        _with(BRANCH, objective_score=1.0),
        "deferred",
    ),
    ("1.5 in an integer field", "RolloutBranchRecord", _with(BRANCH, rank=1.5), "rejected"),
    ("true in an integer field", "RolloutBranchRecord", _with(BRANCH, rank=True), "rejected"),
    (
        "a JSON integer in a number field",
        "RolloutBranchRecord",
        _with(BRANCH, total_score=1),
        "accepted",
    ),
    # Duplicate keys: both read the last; msgspec also checks the first, so it may only defer.
    (
        "duplicate key, last valid",
        "RolloutBranchRecord",
        _replace('"rank": 1', '"rank": 0, "rank": 1'),
        "deferred",
    ),
    (
        "duplicate key, last invalid",
        "RolloutBranchRecord",
        _replace('"rank": 1', '"rank": 1, "rank": 0'),
        "rejected",
    ),
    (
        "duplicate key, both valid",
        "RolloutBranchRecord",
        _replace('"rank": 1', '"rank": 2, "rank": 1'),
        "accepted",
    ),
    # ECMA-262 `$` ends the text; Python's also matches before a final newline.
    (
        "$ against a trailing newline",
        "PpoRecord",
        _with(PPO, provenance={**PPO["provenance"], "n_gram_hash": HASH + "\n"}),
        "rejected",
    ),
    (
        "$ against a trailing newline (training)",
        "PpoTrainingRecord",
        _with(TRAINING, provenance={**TRAINING["provenance"], "task_hash": HASH + "\n"}),
        "rejected",
    ),
    (
        "pattern: uppercase hex",
        "PpoRecord",
        _with(PPO, provenance={**PPO["provenance"], "n_gram_hash": HASH.upper()}),
        "rejected",
    ),
    ("propertyNames", "RolloutTreeRecord", _with(TREE, fork_map={"2\n": [0]}), "rejected"),
    ("propertyNames, valid", "RolloutTreeRecord", _with(TREE, fork_map={"12": [0, 1]}), "accepted"),
    (
        "dependentRequired",
        "PpoTrainingRecord",
        _with(TRAINING, provenance={**TRAINING["provenance"], "chosen_branch": 1}),
        "rejected",
    ),
    (
        "minLength counts code points",
        "RolloutBranchRecord",
        _with(BRANCH, task="\U0001f600"),
        "accepted",
    ),
    ("minLength", "RolloutBranchRecord", _with(BRANCH, task=""), "rejected"),
    ("maximum", "RolloutBranchRecord", _with(BRANCH, judge_score=10.000001), "rejected"),
    ("minimum of -0.0", "RolloutBranchRecord", _with(BRANCH, temperature=-0.0), "accepted"),
    # Integers beyond 64 bits: orjson reads them as floats (the exporter rejects them).
    ("huge int in an integer field", "RolloutBranchRecord", _with(BRANCH, seed=10**20), "deferred"),
    (
        "huge int in free-form data",
        "RolloutBranchRecord",
        _replace('"content": "export const B = 1;"', '"content": 123456789012345678901234567890'),
        "deferred",
    ),
    ("huge negative int", "RolloutBranchRecord", _with(BRANCH, seed=-(10**19)), "deferred"),
    (
        "19 digits inside a string",
        "RolloutBranchRecord",
        _with(BRANCH, session_id="s-1234567890123456789"),
        "deferred",
    ),
    (
        "1e400",
        "RolloutBranchRecord",
        _replace('"total_score": 1.24', '"total_score": 1e400'),
        "rejected",
    ),
    (
        "NaN",
        "RolloutBranchRecord",
        _replace('"total_score": 1.24', '"total_score": NaN'),
        "rejected",
    ),
    # Lone surrogates: neither reads them.
    ("lone high surrogate", "RolloutBranchRecord", _with(BRANCH, session_id="\ud800"), "rejected"),
    (
        "lone low surrogate in a key",
        "RolloutBranchRecord",
        _replace('"seed"', '"\\udc00"', json.dumps({**BRANCH, "seed": 1})),
        "rejected",
    ),
    ("surrogate pair", "RolloutBranchRecord", _with(BRANCH, session_id="\U0001f600"), "accepted"),
    (
        "invalid UTF-8",
        "RolloutBranchRecord",
        _replace('"s-001"', '"s-\xff"').replace(b"\xc3\xbf", b"\xff"),
        "rejected",
    ),
    ("byte-order mark", "RolloutBranchRecord", b"\xef\xbb\xbf" + BRANCH_TEXT.encode(), "rejected"),
    ("trailing garbage", "RolloutBranchRecord", BRANCH_TEXT.encode() + b" x", "rejected"),
    ("not an object", "RolloutBranchRecord", b"[]", "rejected"),
    # Keys the schema does not name: kept by from_wire, so the judge decides.
    (
        "unknown key of an open object",
        "RolloutBranchRecord",
        _with(BRANCH, provenance={}),
        "deferred",
    ),
    (
        "a wire key named wire_extra",
        "RolloutBranchRecord",
        _with(BRANCH, wire_extra={}),
        "deferred",
    ),
    (
        "unknown key of a closed object",
        "PpoTrainingRecord",
        _with(TRAINING, completion="x"),
        "rejected",
    ),
    (
        "explicit null where optional",
        "RolloutBranchRecord",
        _with(BRANCH, judge_score=None),
        "rejected",
    ),
    (
        "explicit null where nullable",
        "RolloutBranchRecord",
        _with(BRANCH, seed=None, build_result=None),
        "accepted",
    ),
    # Nesting past what orjson writes back (254): the validating path's to judge.
    (
        "deep free-form data",
        "RolloutBranchRecord",
        _replace('"content": "export const B = 1;"', '"content": ' + "[" * 300 + "]" * 300),
        "deferred",
    ),
    (
        "nesting beyond the recursion limit",
        "RolloutBranchRecord",
        _replace('"content": "export const B = 1;"', '"content": ' + "[" * 5000 + "]" * 5000),
        "rejected",
    ),
]


@pytest.mark.parametrize(
    ("record_type", "line", "expected"),
    [case[1:] for case in EDGE_CASES],
    ids=[case[0] for case in EDGE_CASES],
)
def test_edge_cases(record_type: str, line: bytes, expected: str) -> None:
    assert verdict(record_type, line) == expected


# Hypothesis: valid records of every type, mutated at a random place in a random way.


def _draft7_spelling(node: Any) -> Any:
    """hypothesis-jsonschema knows ``dependentRequired`` by its draft-7 name ``dependencies``."""
    if isinstance(node, dict):
        return {
            ("dependencies" if key == "dependentRequired" else key): _draft7_spelling(value)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_draft7_spelling(value) for value in node]
    return node


def _valid(record_type: str) -> st.SearchStrategy[Any]:
    schema = CONTRACT.schemas[CONTRACT.record_types[record_type]]
    return from_schema(
        {"$defs": _draft7_spelling(schema["$defs"]), "$ref": f"#/$defs/{record_type}"}
    )


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.sampled_from([0, 1, 2, -1, 1.0, 0.0, -0.0, 2.5, 10.5, 1e300])
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
    | st.sampled_from(["", "x", HASH, HASH + "\n", HASH.upper(), "1", "12\n", "pass", "fail"])
    | st.sampled_from(["\ud800", "a\udc00b", "\udbff\udfff", "\U0001f600"]),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


def _places(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside ``value`` (the root excluded)."""
    found = []
    if isinstance(value, dict):
        for key, item in value.items():
            found.append((*path, key))
            found.extend(_places(item, (*path, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.append((*path, index))
            found.extend(_places(item, (*path, index)))
    return found


def _mutate(record: Any, data: st.DataObject) -> Any:
    places = _places(record)
    if not places:
        return record
    path = data.draw(st.sampled_from(places))
    parent = record
    for step in path[:-1]:
        parent = parent[step]
    how = data.draw(st.sampled_from(["set", "delete", "add-key", "integral-float"]))
    last = path[-1]
    if how == "set":
        parent[last] = data.draw(JSON_VALUES)
    elif how == "delete" and isinstance(parent, dict):
        del parent[last]
    elif how == "add-key" and isinstance(parent[last], dict):
        parent[last][data.draw(st.text(max_size=8))] = data.draw(JSON_VALUES)
    elif how == "integral-float" and type(parent[last]) is int:
        parent[last] = float(parent[last])
    return record


def _serialise(record: Any, data: st.DataObject) -> bytes:
    """JSON text of the record, sometimes with a key given twice (an earlier, other value)."""
    text = json.dumps(record, ensure_ascii=data.draw(st.booleans()))
    if isinstance(record, dict) and record and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(sorted(record)))
        earlier = json.dumps({key: data.draw(JSON_VALUES)})[1:-1]
        text = "{" + earlier + ", " + text[1:]
    # A lone surrogate unescaped is no UTF-8: the bytes Python would write for it anyway.
    return text.encode("utf-8", "surrogatepass")


@pytest.mark.parametrize("record_type", sorted(DECODERS))
def test_mutated_records_never_fool_the_fast_path(record_type: str) -> None:
    seen: dict[str, int] = {"accepted": 0, "deferred": 0, "rejected": 0}

    @settings(
        max_examples=60,
        deadline=None,
        database=None,
        # A trl record has some 30 required columns beside its message lists: large inputs.
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.filter_too_much,
            HealthCheck.data_too_large,
        ],
    )
    @given(_valid(record_type), st.data())
    def property_(record: Any, data: st.DataObject) -> None:
        assert verdict(record_type, json.dumps(record).encode()) in ("accepted", "deferred")
        line = _serialise(_mutate(record, data), data)
        seen[verdict(record_type, line)] += 1

    property_()
    assert sum(seen.values()) >= 60
