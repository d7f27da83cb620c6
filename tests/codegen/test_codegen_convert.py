"""from_wire / to_wire (and decode / encode) of the generated package: round trips and errors."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import pytest
from msgspec import UNSET

import datafactory.wire as wire
from contracts import locate
from datafactory.wire import (
    BuildResult,
    DpoRecord,
    DpoTrainingRecord,
    Message,
    PpoTrainingRecord,
    RolloutBranchRecord,
    RolloutTreeRecord,
    ToolCallEvent,
    WireError,
    WireExtra,
    decode,
    encode,
    from_wire,
    to_wire,
)
from wiregate.record_validator import ValidatorSet

if TYPE_CHECKING:
    from typing_extensions import assert_type

REPO_ROOT = Path(__file__).resolve().parents[2]
CONTRACT = locate(REPO_ROOT)
VALID_FIXTURES = [(d, p) for _s, d, valid, p in CONTRACT.fixtures() if valid]


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _fixture(schema: str, definition: str, label: str, name: str) -> Any:
    return _load(CONTRACT.fixtures_dir / schema / definition / label / f"{name}.json")


def test_every_defs_name_is_importable_under_its_own_name() -> None:
    for name in CONTRACT.definitions:
        assert hasattr(wire, name), name
        assert name in wire.__all__
    assert sorted(wire.__all__) == sorted(
        [
            *CONTRACT.definitions,
            "RolloutWire",
            "TrainingRecord",
            "TrlRecord",
            "INEXACT",
            "NO_EXTRA",
            "WireError",
            "WireExtra",
            "WireStruct",
            "decode",
            "encode",
            "from_wire",
            "to_wire",
        ]
    )
    # Every record type's Structs carry each constraint of its schema: none defers for good.
    assert wire.INEXACT == {}


@pytest.mark.parametrize(
    ("definition", "path"), VALID_FIXTURES, ids=[f"{d}/{p.stem}" for d, p in VALID_FIXTURES]
)
def test_round_trip_of_every_valid_fixture(definition: str, path: Path) -> None:
    record = _load(path)
    original = copy.deepcopy(record)
    model = from_wire(getattr(wire, definition), record)
    assert type(model).__name__ == definition
    assert to_wire(model) == original
    assert record == original  # the input is not modified
    line = path.read_bytes()
    assert decode(getattr(wire, definition), line) == model
    assert json.loads(encode(model)) == original


def test_there_are_valid_fixtures_for_every_record_type() -> None:
    assert len(VALID_FIXTURES) == 37
    assert {d for d, _ in VALID_FIXTURES} == set(CONTRACT.record_types)


def test_models_are_typed_and_nested() -> None:
    record = _fixture("rollout-wire", "RolloutBranchRecord", "valid", "full")
    model = from_wire(RolloutBranchRecord, record)
    if TYPE_CHECKING:
        assert_type(model, RolloutBranchRecord)
    assert isinstance(model.build_result, BuildResult)
    assert all(isinstance(event, ToolCallEvent) for event in model.tool_call_sequence)
    assert model.build_result.status == "pass"
    assert model.rank == 1


def test_absent_null_and_extra_keys_survive_a_round_trip() -> None:
    record = {
        "rollout_id": "r",
        "task": "t",
        "branch_index": 0,
        "temperature": 0,
        "session_id": "s",
        "seed": None,
        "build_result": None,
        "tool_call_sequence": [
            {"event": "tool_result", "data": {"call_id": "c", "output": None, "x-extra": [1]}}
        ],
        "final_answer": "",
        "objective_score": 0,
        "rank": 2,
        "total_score": 0.0,
        "provenance": {"model": "m"},
    }
    model = from_wire(RolloutBranchRecord, record)
    # An explicit null is None; an absent field is UNSET (and stays absent).
    assert (model.seed, model.build_result, model.judge_score) == (None, None, UNSET)
    assert model.wire_extra == {"provenance": {"model": "m"}}
    assert isinstance(model.wire_extra, WireExtra)
    data = model.tool_call_sequence[0].data
    assert (data.output, data.error, dict(data.wire_extra)) == (None, UNSET, {"x-extra": [1]})
    # A JSON integer in a number field stays an integer: the round trip is exact as JSON too.
    assert (type(model.temperature), type(model.total_score)) == (int, float)
    assert to_wire(model) == record
    assert "judge_score" not in to_wire(model)
    assert json.loads(encode(model)) == record
    assert encode(decode(RolloutBranchRecord, json.dumps(record))) == encode(model)


def test_extra_keys_are_never_written_nested_by_msgspec() -> None:
    """msgspec alone cannot put wire_extra back in its object: it refuses to encode one."""
    model = from_wire(RolloutBranchRecord, {**_minimal_branch(), "x": 1})
    with pytest.raises(TypeError, match="Encoding objects of type WireExtra is unsupported"):
        msgspec.json.encode(model)
    assert json.loads(encode(model)) == {**_minimal_branch(), "x": 1}
    assert msgspec.json.encode(from_wire(RolloutBranchRecord, _minimal_branch())) == (
        msgspec.json.encode(_minimal_branch())
    )


def test_a_wire_key_named_wire_extra_is_an_extra_key() -> None:
    record = {**_minimal_branch(), "wire_extra": {"a": 1}}
    model = from_wire(RolloutBranchRecord, record)
    assert model.wire_extra == {"wire_extra": {"a": 1}}
    assert to_wire(model) == record
    with pytest.raises(
        msgspec.ValidationError, match=r"^Expected `WireExtra`, got `dict` - at `\$.wire_extra`$"
    ):
        msgspec.json.decode(json.dumps(record), type=RolloutBranchRecord)


def test_msgspec_alone_refuses_unknown_keys_rather_than_dropping_them() -> None:
    line = json.dumps({**_minimal_branch(), "provenance": {"model": "m"}})
    with pytest.raises(
        msgspec.ValidationError, match=r"^Object contains unknown field `provenance`$"
    ):
        msgspec.json.decode(line, type=RolloutBranchRecord)
    assert decode(RolloutBranchRecord, line).wire_extra == {"provenance": {"model": "m"}}


def _minimal_branch() -> dict[str, Any]:
    return dict(_fixture("rollout-wire", "RolloutBranchRecord", "valid", "minimal"))


def test_the_structs_hold_what_the_generator_drops() -> None:
    """propertyNames, dependentRequired and ECMA-262 `$` are checked by msgspec itself."""
    tree = _fixture("rollout-wire", "RolloutTreeRecord", "valid", "two-branches")
    with pytest.raises(WireError) as error:
        from_wire(RolloutTreeRecord, {**tree, "fork_map": {"3a": [0]}})
    assert str(error.value) == ("/fork_map: Expected `str` matching regex '^[0-9]+\\\\Z' (a key)")
    record = _fixture("training-record", "PpoTrainingRecord", "valid", "reward-zero")
    provenance = {**record["provenance"], "chosen_branch": 1}
    with pytest.raises(WireError) as error:
        from_wire(PpoTrainingRecord, {**record, "provenance": provenance})
    assert str(error.value) == (
        "/provenance: rejected_branch required when chosen_branch is present"
    )
    hashed = {**record["provenance"], "task_hash": record["provenance"]["task_hash"] + "\n"}
    with pytest.raises(WireError) as error:
        from_wire(PpoTrainingRecord, {**record, "provenance": hashed})
    assert str(error.value) == (
        "/provenance/task_hash: Expected `str` matching regex '^[0-9a-f]{16}\\\\Z'"
    )


def test_models_built_in_code_emit_plain_json() -> None:
    message = Message(role="assistant", content=None)
    record = PpoTrainingRecord(
        schema_version="training-record/v2",
        prompt="hi",
        messages=[Message(role="user", content="hi"), message],
        reward=0.5,
        loss_weight_tokens="default",
        provenance=wire.Provenance(
            source="wasmagent-rollout",
            rollout_id="r",
            task_hash="0123456789abcdef",
            task_ngram_fingerprint="0123456789abcdef",
            branch_index=1,
        ),
    )
    assert to_wire(record) == {
        "schema_version": "training-record/v2",
        "prompt": "hi",
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": None}],
        "reward": 0.5,
        "loss_weight_tokens": "default",
        "provenance": {
            "source": "wasmagent-rollout",
            "rollout_id": "r",
            "task_hash": "0123456789abcdef",
            "task_ngram_fingerprint": "0123456789abcdef",
            "branch_index": 1,
        },
    }
    assert ValidatorSet(CONTRACT).get("PpoTrainingRecord").is_valid(to_wire(record))


def test_integral_float_is_an_integer_and_bool_is_not() -> None:
    record = _fixture("rollout-wire", "RolloutBranchRecord", "valid", "minimal")
    model = from_wire(RolloutBranchRecord, {**record, "rank": 2.0, "objective_score": 1.0})
    assert (model.rank, type(model.rank), model.objective_score) == (2, int, 1)
    assert type(model.objective_score) is int
    with pytest.raises(WireError) as error:
        from_wire(RolloutBranchRecord, {**record, "rank": True})
    assert (error.value.pointer, str(error.value)) == (
        "/rank",
        "/rank: Expected `int`, got `bool`",
    )
    with pytest.raises(WireError) as error:
        from_wire(RolloutBranchRecord, {**record, "rank": 2.5})
    assert str(error.value) == "/rank: Expected `int`, got `float`"
    # Inside unions, lists and maps too; a number field keeps its float.
    nested = from_wire(
        RolloutBranchRecord,
        {**record, "seed": 5.0, "build_result": {"status": "pass", "exit_code": 0.0}},
    )
    assert (nested.seed, type(nested.seed)) == (5, int)
    assert isinstance(nested.build_result, BuildResult)
    assert type(nested.build_result.exit_code) is int
    assert type(from_wire(RolloutBranchRecord, {**record, "total_score": 1.0}).total_score) is float
    tree = _fixture("rollout-wire", "RolloutTreeRecord", "valid", "two-branches")
    model = from_wire(RolloutTreeRecord, {**tree, "fork_map": {"3": [0.0, 1]}})
    assert [type(i) for i in model.fork_map["3"]] == [int, int]


@pytest.mark.parametrize(
    ("definition", "name", "pointer", "message"),
    [
        (
            "DpoRecord",
            "provenance-extra-key",
            "/provenance/task_id",
            "Object contains unknown field `task_id`",
        ),
        (
            "DpoRecord",
            "missing-provenance",
            "/provenance",
            "Object missing required field `provenance`",
        ),
        (
            "DpoRecord",
            "objective-score-bad-enum",
            "/provenance/objective_score/rejected",
            "Invalid enum value 2",
        ),
        ("PpoRecord", "reward-wrong-type", "/reward", "Expected `int | float`, got `str`"),
        (
            "RolloutTreeRecord",
            "forked-at-step-wrong-type",
            "/branches/1/forked_at_step",
            "Expected `int`, got `str`",
        ),
        (
            "DpoTrainingRecord",
            "tool-call-arguments-object",
            "/messages/1/tool_calls/0/function/arguments",
            "Expected `str`, got `object`",
        ),
        (
            "DpoTrainingRecord",
            "extra-top-level-key",
            "/completion",
            "Object contains unknown field `completion`",
        ),
        (
            "PpoTrainingRecord",
            "message-extra-key",
            "/messages/0/is_error",
            "Object contains unknown field `is_error`",
        ),
        (
            "RolloutBranchRecord",
            "build-status-success",
            "/build_result/status",
            "Invalid enum value 'success'",
        ),
    ],
)
def test_wire_error_names_the_field_at_its_pointer(
    definition: str, name: str, pointer: str, message: str
) -> None:
    schema = CONTRACT.definitions[definition]
    record = _fixture(schema, definition, "invalid", name)
    with pytest.raises(WireError) as error:
        from_wire(getattr(wire, definition), record)
    assert isinstance(error.value, ValueError)
    assert error.value.pointer == pointer
    assert str(error.value) == f"{pointer}: {message}"


def test_not_an_object_and_wrong_container_types() -> None:
    with pytest.raises(WireError, match=r"^/: Expected `object`, got `array`$"):
        from_wire(DpoRecord, [])
    tree = _fixture("rollout-wire", "RolloutTreeRecord", "valid", "two-branches")
    with pytest.raises(WireError) as error:
        from_wire(RolloutTreeRecord, {**tree, "fork_map": {"3": [0, "x"]}})
    # msgspec does not say which key of a map holds the bad value: the map is pointed at.
    assert str(error.value) == "/fork_map: Expected `int`, got `str`"
    with pytest.raises(WireError) as error:
        from_wire(RolloutTreeRecord, {**tree, "branches": {}})
    assert str(error.value) == "/branches: Expected `array`, got `object`"


def test_only_generated_models_are_converted() -> None:
    with pytest.raises(TypeError, match="is not a generated wire model"):
        from_wire(dict, {})  # type: ignore[type-var]
    with pytest.raises(TypeError, match="is not a generated wire model"):
        to_wire({"a": 1})  # type: ignore[arg-type]


def test_dpo_training_record_round_trip_keeps_tool_calls() -> None:
    record = _fixture("training-record", "DpoTrainingRecord", "valid", "with-tool-calls")
    model = from_wire(DpoTrainingRecord, record)
    calls = [m.tool_calls for m in model.messages if m.tool_calls]
    assert calls and calls[0][0].function.name
    assert to_wire(model) == record


# Real records of the corpus: every one the contract accepts converts and round-trips.


def _corpus_records(corpus_dir: Path) -> list[tuple[str, int, Any]]:
    records = []
    for path in sorted((corpus_dir / "fixtures").rglob("*.jsonl")):
        lines = path.read_text(encoding="utf-8").splitlines()
        relative = path.relative_to(corpus_dir / "fixtures").as_posix()
        records += [(relative, n, json.loads(line)) for n, line in enumerate(lines, 1) if line]
    return records


def test_round_trip_of_every_corpus_record_the_contract_accepts(corpus_dir: Path) -> None:
    validators = ValidatorSet(CONTRACT)
    accepted: dict[str, int] = {}
    for relative, line, record in _corpus_records(corpus_dir):
        for name in CONTRACT.record_types:
            if validators.get(name).is_valid(record):
                model = from_wire(getattr(wire, name), record)
                assert to_wire(model) == record, f"{relative}:{line} as {name}"
                accepted[relative] = accepted.get(relative, 0) + 1
    # Only Layer 1 records of trace-pipeline meet the canonical contract today.
    assert accepted == {
        "trace-pipeline/data-loop-rollout-branches.v1.jsonl": 2,
        "trace-pipeline/golden-rollout-policy-blocked.v1.jsonl": 1,
        "trace-pipeline/golden-rollout-repair-success.v1.jsonl": 2,
        "trace-pipeline/golden-rollout-success.v1.jsonl": 1,
    }


def test_corpus_records_that_convert_round_trip_even_when_constraints_fail(
    corpus_dir: Path,
) -> None:
    """Whatever from_wire accepts must come back unchanged."""
    converted = 0
    for relative, line, record in _corpus_records(corpus_dir):
        for name in CONTRACT.record_types:
            try:
                model = from_wire(getattr(wire, name), record)
            except WireError:
                continue
            assert to_wire(model) == record, f"{relative}:{line} as {name}"
            converted += 1
    assert converted == 6
