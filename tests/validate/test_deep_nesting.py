"""Deeply nested values never end a `wiregate validate` run.

orjson parses up to 1024 levels. The compiled engine cannot hand over an error whose value is
nested more than about 255 levels, so such records are explained by the reference engine; one
deeper than REFERENCE_MAX_LEVELS gets one problem at the member holding the deep value.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from contracts import locate
from tests.validate.helpers import dpo_record, run
from wiregate.record_validator import REFERENCE_MAX_LEVELS, Problem, ValidatorSet

REPO_ROOT = Path(__file__).resolve().parents[2]
VALIDATORS = ValidatorSet(locate(REPO_ROOT))
# What the type error shows of {"a": {"a": ...}}: abbreviated, so any depth reads the same.
DEEP_DICT_SHOWN = "{'a': {'a': {'a': {'a': {'a': {'a': {'a': {'a': {'a': {'a..."


def nested(levels: int) -> str:
    """JSON text of ``{"a": {"a": ... {}}}``, ``levels`` objects deep (json.dumps recurses)."""
    return '{"a":' * (levels - 1) + "{}" + "}" * (levels - 1)


def with_member(record: dict[str, Any], name: str, raw_json: str) -> bytes:
    """``record`` as one JSON line with member ``name`` set to the JSON text ``raw_json``."""
    record = {**record, name: "@@"}
    return json.dumps(record).replace('"@@"', raw_json).encode()


def branch_record() -> dict[str, Any]:
    path = REPO_ROOT / "contracts/fixtures/rollout-wire/RolloutBranchRecord/valid/minimal.json"
    return dict(json.loads(path.read_text()))


@pytest.mark.parametrize("levels", [200, 256, 300, REFERENCE_MAX_LEVELS - 1])
def test_a_deep_bad_value_is_reported_normally_and_the_run_goes_on(
    tmp_path: Path, levels: int
) -> None:
    path = tmp_path / "f.jsonl"
    path.write_bytes(
        with_member(dpo_record(), "rejected", nested(levels))
        + b"\n"
        + json.dumps(dpo_record(chosen="")).encode()
        + b"\n"
    )

    code, out, err = run("validate", str(path))

    assert (code, err) == (1, "")
    assert out.splitlines() == [
        f"{path}:1: /rejected: expected type string, got {DEEP_DICT_SHOWN} [DpoRecord]",
        f'{path}:2: /chosen: must be at least 1 characters long, got "" [DpoRecord]',
        "2 records in 1 files, 0 valid, 2 invalid, 0 broken lines (auto picked: DpoRecord 2)",
    ]


def test_a_record_too_deep_to_explain_gets_one_problem_at_its_deep_member(
    tmp_path: Path,
) -> None:
    path = tmp_path / "f.jsonl"
    path.write_bytes(
        with_member(dpo_record(), "rejected", nested(1000))
        + b"\n"
        + json.dumps(dpo_record()).encode()
        + b"\n"
    )

    code, out, err = run("validate", str(path))

    assert (code, err) == (1, "")
    assert out.splitlines() == [
        f"{path}:1: /rejected: nested 1000 levels deep: too deep to explain the record's "
        "problems [DpoRecord]",
        "2 records in 1 files, 1 valid, 1 invalid, 0 broken lines (auto picked: DpoRecord 2)",
    ]


def test_too_deep_in_a_json_document_is_at_the_records_index(tmp_path: Path) -> None:
    path = tmp_path / "records.json"
    path.write_bytes(b"[" + with_member(dpo_record(), "chosen", nested(1000)) + b"]")

    code, out, _ = run("validate", str(path))

    assert code == 1
    assert out.splitlines()[0] == (
        f"{path}:1: /0/chosen: nested 1000 levels deep: too deep to explain the record's "
        "problems [DpoRecord]"
    )


def test_a_harmless_deep_member_does_not_hide_the_real_problem(tmp_path: Path) -> None:
    # A missing property is an error on the whole record, which holds the deep value: the
    # compiled engine cannot explain it, the reference engine names the missing property.
    record = branch_record()
    del record["task"]
    path = tmp_path / "f.jsonl"
    path.write_bytes(with_member(record, "notes", nested(300)) + b"\n")

    code, out, _ = run("validate", str(path))

    assert code == 1
    assert out.splitlines() == [
        f"{path}:1: /task: required property is missing [RolloutBranchRecord]",
        "1 records in 1 files, 0 valid, 1 invalid, 0 broken lines "
        "(auto picked: RolloutBranchRecord 1)",
    ]


@pytest.mark.parametrize("levels", [300, 1023])
def test_a_valid_record_with_a_deep_extra_member_is_valid(tmp_path: Path, levels: int) -> None:
    path = tmp_path / "f.jsonl"
    path.write_bytes(with_member(branch_record(), "notes", nested(levels)) + b"\n")

    assert run("validate", str(path)) == (
        0,
        "1 records in 1 files, 1 valid, 0 invalid, 0 broken lines "
        "(auto picked: RolloutBranchRecord 1)\n",
        "",
    )


def test_the_validator_api_never_raises_on_depth() -> None:
    validator = VALIDATORS.get("DpoRecord")
    record = orjson.loads(with_member(dpo_record(), "rejected", nested(1000)))

    assert validator.is_valid(record) is False
    assert validator.problems(record) == [
        Problem("/rejected", "nested 1000 levels deep: too deep to explain the record's problems")
    ]


def test_when_the_reference_engine_runs_out_of_stack_the_record_is_too_deep(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Within REFERENCE_MAX_LEVELS, but Python's recursion limit can still be hit (a caller
    # deep in its own stack, a lower limit): the same single problem, no crash.
    validator = VALIDATORS.get("DpoRecord")
    record = orjson.loads(with_member(dpo_record(), "rejected", nested(300)))

    def out_of_stack(_record: Any) -> list[Problem]:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(validator, "explain_reference", out_of_stack)

    assert validator.problems(record) == [
        Problem("/rejected", "nested 300 levels deep: too deep to explain the record's problems")
    ]


def test_other_value_errors_of_the_engine_are_not_taken_for_depth(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    validator = VALIDATORS.get("DpoRecord")

    def broken(_record: Any) -> list[Problem]:
        raise ValueError("something else")

    monkeypatch.setattr(validator, "explain", broken)

    with pytest.raises(ValueError, match="something else"):
        validator.problems(dpo_record(chosen=""))
