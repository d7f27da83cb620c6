"""Every real fixture of the producer and consumer repositories through `wiregate validate`.

Pinned: which lines pass, which fail and why. They disagree with the contract in real ways:
build_result statuses "success"/"failed" (the contract says pass/fail/skip; the exporter
repairs them), tool-call entries in legacy shapes, Layer 2 records labelled training-record/v1,
the consumer's dpo/v1 and ppo/v1 training records with null tool fields."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXPECTED: dict[str, tuple[int, list[str], str]] = {
    "trace-pipeline/data-loop-rollout-branches.v1.jsonl": (
        0,
        [],
        "2 records in 1 files, 2 valid, 0 invalid, 0 broken lines (auto picked: RolloutBranchRecord 2)",
    ),
    "trace-pipeline/golden-rollout-policy-blocked.v1.jsonl": (
        0,
        [],
        "1 records in 1 files, 1 valid, 0 invalid, 0 broken lines (auto picked: RolloutBranchRecord 1)",
    ),
    "trace-pipeline/golden-rollout-repair-success.v1.jsonl": (
        0,
        [],
        "2 records in 1 files, 2 valid, 0 invalid, 0 broken lines (auto picked: RolloutBranchRecord 2)",
    ),
    "trace-pipeline/golden-rollout-success.v1.jsonl": (
        0,
        [],
        "1 records in 1 files, 1 valid, 0 invalid, 0 broken lines (auto picked: RolloutBranchRecord 1)",
    ),
    "trace-pipeline/samples-dpo.jsonl": (
        1,
        [
            "1: /messages/0/tool_call_id: expected type string, got None [DpoTrainingRecord]",
            "1: /messages/0/tool_calls: expected type array, got None [DpoTrainingRecord]",
            "1: /messages/1/tool_call_id: expected type string, got None [DpoTrainingRecord]",
            "1: /messages/1/tool_calls: expected type array, got None [DpoTrainingRecord]",
            "1: /prompt: required property is missing [DpoTrainingRecord]",
            "1: /prompt_messages/0/tool_call_id: expected type string, got None [DpoTrainingRecord]",
            "1: /prompt_messages/0/tool_calls: expected type array, got None [DpoTrainingRecord]",
            "1: /provenance/n_gram_hash: property is not allowed here (closed object) [DpoTrainingRecord]",
            "1: /provenance/task_id: property is not allowed here (closed object) [DpoTrainingRecord]",
            "1: /provenance/task_ngram_fingerprint: required property is missing [DpoTrainingRecord]",
            '1: /schema_version: must be "training-record/v2", got "dpo/v1" [DpoTrainingRecord]',
        ],
        "1 records in 1 files, 0 valid, 1 invalid, 0 broken lines (auto picked: DpoTrainingRecord 1)",
    ),
    "trace-pipeline/samples-ppo.jsonl": (
        1,
        [
            "1: /messages/0/tool_call_id: expected type string, got None [PpoTrainingRecord]",
            "1: /messages/0/tool_calls: expected type array, got None [PpoTrainingRecord]",
            "1: /messages/1/tool_call_id: expected type string, got None [PpoTrainingRecord]",
            "1: /messages/1/tool_calls: expected type array, got None [PpoTrainingRecord]",
            "1: /prompt: required property is missing [PpoTrainingRecord]",
            "1: /provenance/n_gram_hash: property is not allowed here (closed object) [PpoTrainingRecord]",
            "1: /provenance/task_id: property is not allowed here (closed object) [PpoTrainingRecord]",
            "1: /provenance/task_ngram_fingerprint: required property is missing [PpoTrainingRecord]",
            '1: /schema_version: must be "training-record/v2", got "ppo/v1" [PpoTrainingRecord]',
            "2: /messages/0/tool_call_id: expected type string, got None [PpoTrainingRecord]",
            "2: /messages/0/tool_calls: expected type array, got None [PpoTrainingRecord]",
            "2: /messages/1/tool_call_id: expected type string, got None [PpoTrainingRecord]",
            "2: /messages/1/tool_calls: expected type array, got None [PpoTrainingRecord]",
            "2: /prompt: required property is missing [PpoTrainingRecord]",
            "2: /provenance/n_gram_hash: property is not allowed here (closed object) [PpoTrainingRecord]",
            "2: /provenance/task_id: property is not allowed here (closed object) [PpoTrainingRecord]",
            "2: /provenance/task_ngram_fingerprint: required property is missing [PpoTrainingRecord]",
            '2: /schema_version: must be "training-record/v2", got "ppo/v1" [PpoTrainingRecord]',
        ],
        "2 records in 1 files, 0 valid, 2 invalid, 0 broken lines (auto picked: PpoTrainingRecord 2)",
    ),
    "trace-pipeline/smoke-rollout-smoke.jsonl": (
        1,
        [
            "1: /build_result/status: required property is missing [RolloutBranchRecord]",
            "1: /tool_call_sequence/0/data: required property is missing [RolloutBranchRecord]",
            "1: /tool_call_sequence/0/event: required property is missing [RolloutBranchRecord]",
            "2: /build_result/status: required property is missing [RolloutBranchRecord]",
            "2: /tool_call_sequence/0/data: required property is missing [RolloutBranchRecord]",
            "2: /tool_call_sequence/0/event: required property is missing [RolloutBranchRecord]",
            "3: /build_result/status: required property is missing [RolloutBranchRecord]",
            "3: /tool_call_sequence/0/data: required property is missing [RolloutBranchRecord]",
            "3: /tool_call_sequence/0/event: required property is missing [RolloutBranchRecord]",
        ],
        "3 records in 1 files, 0 valid, 3 invalid, 0 broken lines (auto picked: RolloutBranchRecord 3)",
    ),
    "wasmagent-js/dpo-training.v1.jsonl": (
        1,
        [
            "1: /messages: required property is missing [DpoTrainingRecord]",
            "1: /prompt_messages: required property is missing [DpoTrainingRecord]",
            "1: /provenance/n_gram_hash: property is not allowed here (closed object) [DpoTrainingRecord]",
            "1: /provenance/objective_score: property is not allowed here (closed object) [DpoTrainingRecord]",
            "1: /provenance/task_hash: required property is missing [DpoTrainingRecord]",
            "1: /provenance/task_ngram_fingerprint: required property is missing [DpoTrainingRecord]",
            '1: /schema_version: must be "training-record/v2", got "training-record/v1" [DpoTrainingRecord]',
        ],
        "1 records in 1 files, 0 valid, 1 invalid, 0 broken lines (auto picked: DpoTrainingRecord 1)",
    ),
    "wasmagent-js/eval-items.v1.jsonl": (
        1,
        [
            "1: /: cannot tell the record type (a JSON object)",
            "2: /: cannot tell the record type (a JSON object)",
        ],
        "2 records in 1 files, 0 valid, 2 invalid, 0 broken lines",
    ),
    "wasmagent-js/ppo-training.v1.jsonl": (
        1,
        [
            "1: /completion: property is not allowed here (closed object) [PpoTrainingRecord]",
            "1: /messages: required property is missing [PpoTrainingRecord]",
            "1: /provenance/n_gram_hash: property is not allowed here (closed object) [PpoTrainingRecord]",
            "1: /provenance/objective_score: property is not allowed here (closed object) [PpoTrainingRecord]",
            "1: /provenance/task_hash: required property is missing [PpoTrainingRecord]",
            "1: /provenance/task_ngram_fingerprint: required property is missing [PpoTrainingRecord]",
            '1: /schema_version: must be "training-record/v2", got "training-record/v1" [PpoTrainingRecord]',
            "2: /completion: property is not allowed here (closed object) [PpoTrainingRecord]",
            "2: /messages: required property is missing [PpoTrainingRecord]",
            "2: /provenance/n_gram_hash: property is not allowed here (closed object) [PpoTrainingRecord]",
            "2: /provenance/objective_score: property is not allowed here (closed object) [PpoTrainingRecord]",
            "2: /provenance/task_hash: required property is missing [PpoTrainingRecord]",
            "2: /provenance/task_ngram_fingerprint: required property is missing [PpoTrainingRecord]",
            '2: /schema_version: must be "training-record/v2", got "training-record/v1" [PpoTrainingRecord]',
        ],
        "2 records in 1 files, 0 valid, 2 invalid, 0 broken lines (auto picked: PpoTrainingRecord 2)",
    ),
    "wasmagent-js/ranked-rollouts.v1.jsonl": (
        1,
        [
            "1: /build_result/status: \"success\" is not one of ['pass', 'fail', 'skip'] [RolloutBranchRecord]",
            "2: /build_result/status: \"failed\" is not one of ['pass', 'fail', 'skip'] [RolloutBranchRecord]",
        ],
        "2 records in 1 files, 0 valid, 2 invalid, 0 broken lines (auto picked: RolloutBranchRecord 2)",
    ),
    "wasmagent-js/rollout-branches.v1.jsonl": (
        1,
        [
            "1: /build_result/status: \"success\" is not one of ['pass', 'fail', 'skip'] [RolloutBranchRecord]",
            "2: /build_result/status: \"failed\" is not one of ['pass', 'fail', 'skip'] [RolloutBranchRecord]",
        ],
        "2 records in 1 files, 0 valid, 2 invalid, 0 broken lines (auto picked: RolloutBranchRecord 2)",
    ),
}


def test_every_corpus_fixture_is_pinned(corpus_dir: Path) -> None:
    present = sorted(
        str(p.relative_to(corpus_dir / "fixtures"))
        for p in (corpus_dir / "fixtures").glob("*/*.jsonl")
    )
    assert present == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_corpus_fixture_validates_as_pinned(corpus_dir: Path, repo_root: Path, name: str) -> None:
    code, problems, summary = EXPECTED[name]
    wiregate = Path(sys.executable).with_name("wiregate")
    proc = subprocess.run(
        [str(wiregate), "--root", str(repo_root), "validate", name],
        cwd=corpus_dir / "fixtures",
        capture_output=True,
        text=True,
        check=False,
    )
    lines = proc.stdout.splitlines()
    assert proc.returncode == code
    assert [line.removeprefix(name + ":") for line in lines[:-1]] == problems
    assert lines[-1] == summary


def test_layer2_files_labelled_training_record_fail_only_on_tool_call_sequence(
    corpus_dir: Path, repo_root: Path
) -> None:
    """As Layer 2 records, the producer's *-training.v1 files only lack tool_call_sequence."""
    wiregate = Path(sys.executable).with_name("wiregate")
    for name, record in (
        ("dpo-training.v1.jsonl", "DpoRecord"),
        ("ppo-training.v1.jsonl", "PpoRecord"),
    ):
        proc = subprocess.run(
            [str(wiregate), "--root", str(repo_root), "validate", "--record", record, name],
            cwd=corpus_dir / "fixtures" / "wasmagent-js",
            capture_output=True,
            text=True,
            check=False,
        )
        problems = [line.split(": ", 1)[1] for line in proc.stdout.splitlines()[:-1]]
        assert proc.returncode == 1
        assert set(problems) == {f"/tool_call_sequence: required property is missing [{record}]"}
