"""Acceptance against the real fixtures of the producer and the consumer (../shared/corpus)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.datafactory.helpers import RunCli


def _fixtures(corpus_dir: Path) -> Path:
    return corpus_dir / "fixtures"


def test_producer_data_loop_fixture_yields_its_manifest_counts(
    corpus_dir: Path, run_cli: RunCli
) -> None:
    folder = _fixtures(corpus_dir) / "wasmagent-js"
    expected = orjson.loads((folder / "manifest.json").read_bytes())["expected"]
    run = run_cli(
        folder / "rollout-branches.v1.jsonl",
        args=("--eval-items", str(folder / "eval-items.v1.jsonl")),
    )
    assert run.exit_code == 0, run.stderr
    dpo, ppo = run.dpo(), run.ppo()
    assert len(dpo) == expected["dpo_pairs"] == 1
    assert len(ppo) == expected["ppo_records"] == 2
    assert dpo[0]["provenance"]["chosen_branch"] == 0
    assert dpo[0]["provenance"]["rejected_branch"] == 1
    assert [r["reward"] for r in ppo] == [pytest.approx(1 / 1.3), 0.0]
    manifest = run.manifest()
    assert manifest["g3"]["status"] == "passed"
    assert manifest["g3"]["eval_items"]["items"] == expected["g3_eval_items"] == 2
    # camelCase keys and success/failed statuses in build_result, repaired and counted.
    assert manifest["repaired"] == {
        "build_result:camelcase_keys": 2,
        "build_result:status_alias": 2,
    }
    assert manifest["lines"] == {"read": 2, "accepted": 2, "rejected": 0, "blank": 0}


def test_producer_ranked_rollouts_match_the_branch_file(corpus_dir: Path, run_cli: RunCli) -> None:
    folder = _fixtures(corpus_dir) / "wasmagent-js"
    ranked = run_cli(folder / "ranked-rollouts.v1.jsonl")
    branches = run_cli(folder / "rollout-branches.v1.jsonl")
    assert ranked.exit_code == branches.exit_code == 0
    assert (ranked.out / "dpo.jsonl").read_bytes() == (branches.out / "dpo.jsonl").read_bytes()
    assert (ranked.out / "ppo.jsonl").read_bytes() == (branches.out / "ppo.jsonl").read_bytes()


def test_consumer_data_loop_fixture_yields_its_manifest_counts(
    corpus_dir: Path, run_cli: RunCli
) -> None:
    folder = _fixtures(corpus_dir) / "trace-pipeline"
    expected = orjson.loads((folder / "data-loop-manifest.json").read_bytes())["expected"]
    run = run_cli(folder / "data-loop-rollout-branches.v1.jsonl")
    assert run.exit_code == 0, run.stderr
    dpo, ppo = run.dpo(), run.ppo()
    assert len(dpo) == expected["n_dpo"] == 1
    assert len(ppo) == expected["n_ppo"] == 2
    assert dpo[0]["provenance"]["chosen_branch"] == expected["chosen_branch"] == 0
    assert dpo[0]["provenance"]["rejected_branch"] == expected["rejected_branch"] == 1
    assert dpo[0]["chosen"].startswith("Water evaporates")
    assert dpo[0]["rejected"] == "The water cycle is important."
    # task_hash agrees with the consumer's own training samples for the same task.
    assert dpo[0]["provenance"]["task_hash"] == "fad7e1bace9f56d3"
    assert [r["reward"] for r in ppo] == [pytest.approx(1 / 1.3), 0.0]


# Every other real fixture, exported or rejected, pinned:
# file -> (accepted, rejected by reason, DPO pairs, PPO records, DPO skips by reason, repairs)
Counts = dict[str, int]
OTHER_FIXTURES: dict[str, tuple[int, Counts, int, int, Counts, Counts]] = {
    "trace-pipeline/golden-rollout-policy-blocked.v1.jsonl": (
        1,
        {},
        0,
        1,
        {"fewer_than_two_usable_branches": 1},
        {},
    ),
    # rank 1 on the failing branch: the scores win, both ranks count as disagreements.
    "trace-pipeline/golden-rollout-repair-success.v1.jsonl": (2, {}, 1, 2, {}, {}),
    "trace-pipeline/golden-rollout-success.v1.jsonl": (
        1,
        {},
        0,
        1,
        {"fewer_than_two_usable_branches": 1},
        {},
    ),
    # Flat tool calls with timestamps and build results without a status.
    "trace-pipeline/smoke-rollout-smoke.jsonl": (
        3,
        {},
        0,
        3,
        {"fewer_than_two_usable_branches": 3},
        {"build_result:status_from_exit_code": 3, "tool_call:flat_args": 3},
    ),
    "wasmagent-js/ranked-rollouts.v1.jsonl": (
        2,
        {},
        1,
        2,
        {},
        {"build_result:camelcase_keys": 2, "build_result:status_alias": 2},
    ),
}


# Fixtures with no rollout record in them (Layer 3 records, eval items): the run stops
# (exit 2) saying what the lines were, instead of writing empty outputs.
NO_ROLLOUTS = {
    "trace-pipeline/samples-dpo.jsonl": "1 DpoTrainingRecord",
    "trace-pipeline/samples-ppo.jsonl": "2 PpoTrainingRecord",
    "wasmagent-js/dpo-training.v1.jsonl": "1 DpoTrainingRecord",
    "wasmagent-js/ppo-training.v1.jsonl": "2 PpoTrainingRecord",
    "wasmagent-js/eval-items.v1.jsonl": "2 unknown",
}


@pytest.mark.parametrize("name", sorted(NO_ROLLOUTS))
def test_a_fixture_without_rollouts_is_refused_naming_its_lines(
    corpus_dir: Path, run_cli: RunCli, name: str
) -> None:
    run = run_cli(_fixtures(corpus_dir) / name)
    assert run.exit_code == 2
    assert run.stderr == (
        f"datafactory: error: no rollout records in the inputs: {NO_ROLLOUTS[name]}\n"
    )
    assert not any(run.out.iterdir())


@pytest.mark.parametrize("name", sorted(OTHER_FIXTURES))
def test_every_real_fixture_is_exported_or_rejected_with_a_reason(
    corpus_dir: Path, run_cli: RunCli, name: str
) -> None:
    accepted, rejected, pairs, ppo, skipped, repaired = OTHER_FIXTURES[name]
    run = run_cli(_fixtures(corpus_dir) / name)
    assert run.exit_code == 0, run.stderr
    manifest = run.manifest()
    assert manifest["lines"]["accepted"] == accepted
    assert manifest["rejected"] == rejected
    assert manifest["dpo"]["pairs"] == pairs
    assert manifest["dpo"]["skipped_rollouts"] == skipped
    assert manifest["ppo"]["records"] == ppo
    assert manifest["repaired"] == repaired
    assert [r["reason"] for r in run.rejects()] == [
        reason for reason, count in rejected.items() for _ in range(count)
    ]


def test_the_pinned_list_covers_every_real_fixture(corpus_dir: Path) -> None:
    jsonl = {
        str(p.relative_to(_fixtures(corpus_dir))) for p in _fixtures(corpus_dir).glob("*/*.jsonl")
    }
    covered = (
        set(OTHER_FIXTURES)
        | set(NO_ROLLOUTS)
        | {
            "wasmagent-js/rollout-branches.v1.jsonl",
            "trace-pipeline/data-loop-rollout-branches.v1.jsonl",
        }
    )
    assert jsonl == covered


def test_golden_fixture_with_rank_on_the_failing_branch(corpus_dir: Path, run_cli: RunCli) -> None:
    run = run_cli(_fixtures(corpus_dir) / "trace-pipeline/golden-rollout-repair-success.v1.jsonl")
    (pair,) = run.dpo()
    assert (pair["provenance"]["chosen_branch"], pair["provenance"]["rejected_branch"]) == (1, 0)
    assert run.manifest()["rank_disagreements"] == 2


def test_smoke_fixture_tool_calls_become_openai_messages(corpus_dir: Path, run_cli: RunCli) -> None:
    run = run_cli(_fixtures(corpus_dir) / "trace-pipeline/smoke-rollout-smoke.jsonl")
    first = next(r for r in run.ppo() if r["provenance"]["rollout_id"] == "rollout-smoke-001")
    assert [m["role"] for m in first["messages"]] == ["user", "assistant", "tool", "assistant"]
    call = first["messages"][1]["tool_calls"][0]
    assert call["function"]["name"] == "execute_code"
    assert orjson.loads(call["function"]["arguments"])["language"] == "javascript"
    assert first["messages"][2] == {
        "role": "tool",
        "content": '{"exit_code":0,"stdout":""}',
        "tool_call_id": call["id"],
    }
