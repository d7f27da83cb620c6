"""One record per branch and one DPO pair per rollout, whichever layers and files repeat them:
each repeat is a counted rejection that names the record kept in its place."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.datafactory.helpers import RunCli, branch, write_jsonl


def _provenance(**fields: Any) -> dict[str, Any]:
    return {
        "source": "wasmagent-rollout",
        "rollout_id": "r",
        "objective_score": 1,
        "exported_at_ms": 1750000000000,
        "n_gram_hash": "0123456789abcdef",
        **fields,
    }


def _dpo2(chosen: int = 0, rejected: int = 1, answer: str = "good") -> dict[str, Any]:
    return {
        "prompt": "Add a hello world button to the page",
        "chosen": answer,
        "rejected": "bad",
        "tool_call_sequence": [],
        "provenance": _provenance(
            chosen_branch=chosen,
            rejected_branch=rejected,
            objective_score={"chosen": 1, "rejected": 0},
        ),
    }


def _ppo2(branch_index: int, completion: str = "good") -> dict[str, Any]:
    return {
        "prompt": "Add a hello world button to the page",
        "completion": completion,
        "reward": 1.0,
        "tool_call_sequence": [],
        "provenance": _provenance(branch_index=branch_index),
    }


def _branches() -> list[dict[str, Any]]:
    return [
        branch("r", 0, final_answer="good"),
        branch("r", 1, rank=2, objective_score=0, total_score=0.0, final_answer="bad"),
    ]


def test_repeated_layer2_records_are_exported_once(tmp_path: Path, run_cli: RunCli) -> None:
    first = write_jsonl(tmp_path / "dpo-2026-06-23.jsonl", [_dpo2(), _ppo2(0)])
    again = write_jsonl(tmp_path / "dpo-2026-06-24.jsonl", [_ppo2(0), _dpo2(answer="other")])
    run = run_cli(first, again)
    assert run.exit_code == 0, run.stderr
    assert [d["chosen"] for d in run.dpo()] == ["good"]
    assert [p["provenance"]["branch_index"] for p in run.ppo()] == [0]
    assert [(r["file"], r["line"], r["reason"], r["detail"]) for r in run.rejects()] == [
        (
            str(again),
            1,
            "duplicate-branch",
            f"duplicate (rollout_id, branch_index) = ('r', 0); first seen at {first}:2",
        ),
        (
            str(again),
            2,
            "duplicate-pair",
            f"a second DPO record for rollout 'r'; first seen at {first}:1",
        ),
    ]
    manifest = run.manifest()
    assert manifest["lines"] == {"read": 4, "accepted": 2, "rejected": 2, "blank": 0}
    assert manifest["rejected"] == {"duplicate-branch": 1, "duplicate-pair": 1}
    assert manifest["accepted_by_type"] == {"DpoRecord": 1, "PpoRecord": 1}
    assert manifest["rollouts"] == 1
    assert (manifest["dpo"]["from_layer2"], manifest["ppo"]["from_layer2"]) == (1, 1)


def test_the_first_layer2_pair_in_input_order_is_kept(tmp_path: Path, run_cli: RunCli) -> None:
    # Sorted by chosen branch the second pair would come first: input order decides.
    path = write_jsonl(tmp_path / "in.jsonl", [_dpo2(chosen=1, rejected=0), _dpo2()])
    run = run_cli(path)
    assert [d["provenance"]["chosen_branch"] for d in run.dpo()] == [1]
    assert [(r["line"], r["reason"]) for r in run.rejects()] == [(2, "duplicate-pair")]


def test_branch_records_win_over_the_plugins_records(tmp_path: Path, run_cli: RunCli) -> None:
    plugin = write_jsonl(tmp_path / "plugin.jsonl", [_dpo2(), _ppo2(1, "bad"), _ppo2(2, "x")])
    branches = write_jsonl(tmp_path / "branches.jsonl", _branches())
    run = run_cli(plugin, branches)
    assert run.exit_code == 0, run.stderr
    (pair,) = run.dpo()
    assert "objective_score" not in pair["provenance"]  # the Layer 1 pair, not the plugin's
    assert [p["provenance"]["branch_index"] for p in run.ppo()] == [0, 1, 2]
    assert [p["messages"][-1]["content"] for p in run.ppo()] == ["good", "bad", "x"]
    assert [(r["file"], r["line"], r["reason"], r["detail"]) for r in run.rejects()] == [
        (
            str(plugin),
            2,
            "duplicate-branch",
            "duplicate (rollout_id, branch_index) = ('r', 1); the branch record at "
            f"{branches}:2 gives its PPO record",
        ),
        (
            str(plugin),
            1,
            "duplicate-pair",
            "a DPO record for rollout 'r', whose branch records give its pair "
            f"(branch 0 at {branches}:1)",
        ),
    ]
    manifest = run.manifest()
    assert manifest["lines"] == {"read": 5, "accepted": 3, "rejected": 2, "blank": 0}
    assert manifest["accepted_by_type"] == {"PpoRecord": 1, "RolloutBranchRecord": 2}
    assert (manifest["dpo"]["pairs"], manifest["dpo"]["from_layer2"]) == (1, 0)
    assert (manifest["ppo"]["records"], manifest["ppo"]["from_layer2"]) == (2, 1)
    assert manifest["rollouts"] == 1


def test_the_plugins_pair_stands_when_the_branch_records_give_none(
    tmp_path: Path, run_cli: RunCli
) -> None:
    # One usable branch gives no pair of its own: the plugin's pair is the rollout's pair.
    path = write_jsonl(tmp_path / "in.jsonl", [_branches()[0], _dpo2(), _dpo2(answer="other")])
    run = run_cli(path)
    assert run.exit_code == 0, run.stderr
    assert [d["chosen"] for d in run.dpo()] == ["good"]
    assert [(r["line"], r["reason"]) for r in run.rejects()] == [(3, "duplicate-pair")]
    manifest = run.manifest()
    assert (manifest["dpo"]["pairs"], manifest["dpo"]["from_layer2"]) == (0, 1)
    assert manifest["dpo"]["skipped_rollouts"] == {}
    assert manifest["lines"] == {"read": 3, "accepted": 2, "rejected": 1, "blank": 0}


def test_which_pair_is_a_repeat_does_not_depend_on_the_format(
    tmp_path: Path, run_cli: RunCli
) -> None:
    path = write_jsonl(tmp_path / "in.jsonl", [*_branches(), _dpo2()])
    for output_format in ("both", "dpo", "ppo"):
        run = run_cli(path, args=("--format", output_format))
        assert run.exit_code == 0, run.stderr
        assert [(r["line"], r["reason"]) for r in run.rejects()] == [(3, "duplicate-pair")]
