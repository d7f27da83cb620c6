"""from_wire / to_wire of the generated package: round trips and errors."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

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
            "WireError",
            "from_wire",
            "to_wire",
        ]
    )


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


def test_there_are_valid_fixtures_for_every_record_type() -> None:
    assert len(VALID_FIXTURES) == 18
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
    assert (model.seed, model.build_result, model.judge_score) == (None, None, None)
    assert model.wire_nulls == frozenset({"seed", "build_result"})
    assert model.wire_extra == {"provenance": {"model": "m"}}
    data = model.tool_call_sequence[0].data
    assert (data.wire_nulls, data.wire_extra) == (frozenset({"output"}), {"x-extra": [1]})
    assert to_wire(model) == record
    assert "judge_score" not in to_wire(model)


def test_models_built_in_code_emit_plain_json() -> None:
    message = Message(role="assistant", content=None)
    record = PpoTrainingRecord(
        schema_version="training-record/v1",
        messages=[Message(role="user", content="hi"), message],
        reward=0.5,
        loss_weight_tokens="default",
        provenance=wire.Provenance(
            source="wasmagent-rollout",
            rollout_id="r",
            task_hash="0123456789abcdef",
            n_gram_hash="0123456789abcdef",
            branch_index=1,
        ),
    )
    assert to_wire(record) == {
        "schema_version": "training-record/v1",
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": None}],
        "reward": 0.5,
        "loss_weight_tokens": "default",
        "provenance": {
            "source": "wasmagent-rollout",
            "rollout_id": "r",
            "task_hash": "0123456789abcdef",
            "n_gram_hash": "0123456789abcdef",
            "branch_index": 1,
        },
    }
    assert ValidatorSet(CONTRACT).get("PpoTrainingRecord").is_valid(to_wire(record))


def test_integral_float_is_an_integer_and_bool_is_not() -> None:
    record = _fixture("rollout-wire", "RolloutBranchRecord", "valid", "minimal")
    model = from_wire(RolloutBranchRecord, {**record, "rank": 2.0, "objective_score": 1.0})
    assert (model.rank, type(model.rank), model.objective_score) == (2, int, 1)
    with pytest.raises(WireError) as error:
        from_wire(RolloutBranchRecord, {**record, "rank": True})
    assert (error.value.pointer, str(error.value)) == (
        "/rank",
        "/rank: 'rank' must be integer, not boolean",
    )


@pytest.mark.parametrize(
    ("definition", "name", "pointer", "message"),
    [
        (
            "DpoRecord",
            "provenance-extra-key",
            "/provenance/task_id",
            "field 'task_id' is not allowed in DpoProvenance",
        ),
        (
            "DpoRecord",
            "missing-provenance",
            "/provenance",
            "required field 'provenance' of DpoRecord is missing",
        ),
        (
            "DpoRecord",
            "objective-score-bad-enum",
            "/provenance/objective_score/rejected",
            "'rejected' must be one of 0, 1, not 2",
        ),
        ("PpoRecord", "reward-wrong-type", "/reward", "'reward' must be number, not string"),
        (
            "RolloutTreeRecord",
            "forked-at-step-wrong-type",
            "/branches/1/forked_at_step",
            "'forked_at_step' must be integer, not string",
        ),
        (
            "DpoTrainingRecord",
            "tool-call-arguments-object",
            "/messages/1/tool_calls/0/function/arguments",
            "'arguments' must be string, not object",
        ),
        (
            "DpoTrainingRecord",
            "extra-top-level-key",
            "/prompt",
            "field 'prompt' is not allowed in DpoTrainingRecord",
        ),
        (
            "PpoTrainingRecord",
            "message-extra-key",
            "/messages/0/is_error",
            "field 'is_error' is not allowed in Message",
        ),
        (
            "RolloutBranchRecord",
            "build-status-success",
            "/build_result/status",
            "'status' must be one of 'fail', 'pass', 'skip', not 'success'",
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
    with pytest.raises(
        WireError, match=r"^/: the record must be an object \(DpoRecord\), not array$"
    ):
        from_wire(DpoRecord, [])
    tree = _fixture("rollout-wire", "RolloutTreeRecord", "valid", "two-branches")
    with pytest.raises(WireError) as error:
        from_wire(RolloutTreeRecord, {**tree, "fork_map": {"3": [0, "x"]}})
    assert str(error.value) == "/fork_map/3/1: '1' must be integer, not string"
    with pytest.raises(WireError) as error:
        from_wire(RolloutTreeRecord, {**tree, "branches": {}})
    assert str(error.value) == "/branches: 'branches' must be array, not object"


def test_only_generated_models_are_converted() -> None:
    with pytest.raises(TypeError, match="is not a generated wire model"):
        from_wire(dict, {})
    with pytest.raises(TypeError, match="is not a generated wire model"):
        to_wire({"a": 1})


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
    """from_wire checks shapes, not constraints; whatever it accepts must come back unchanged."""
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
