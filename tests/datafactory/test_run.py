"""Whole runs: input kinds, Layer 2 input, accounting, determinism, atomic outputs."""

from __future__ import annotations

import gzip
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from datafactory import export, load_rollouts
from datafactory.cli import main
from datafactory.run import run
from datafactory.settings import Settings
from datafactory.sources import expand_inputs
from datafactory.stages import group
from tests.datafactory.helpers import TWO_CPUS, RunCli, branch, read_jsonl, write_jsonl

REPO = Path(__file__).resolve().parents[2]


def _rollouts(count: int, branches: int = 3, seed: int = 1) -> list[dict[str, object]]:
    rng = random.Random(seed)
    records = []
    for r in range(count):
        task = f"Task number {r}: implement feature {rng.randint(0, 10**6)}"  # one per rollout
        for b in range(branches):
            objective = rng.randint(0, 1)
            records.append(
                branch(
                    f"roll-{r}",
                    b,
                    task=task,
                    final_answer=f"answer {r}.{b} {rng.random()}",
                    objective_score=objective,
                    judge_score=round(rng.uniform(0, 10), 1),
                    total_score=objective + rng.random() * 0.3,
                    tool_call_sequence=[
                        {"event": "tool_call", "data": {"name": "run", "args": {"n": b}}},
                        {
                            "event": "tool_result",
                            "data": {"output": "ok" if b else None, "error": None if b else "boom"},
                        },
                    ],
                )
            )
    return records


def test_gzip_directory_and_stdin_inputs(tmp_path: Path, run_cli: RunCli) -> None:
    records = _rollouts(4)
    folder = tmp_path / "dir"
    folder.mkdir()
    write_jsonl(folder / "a.jsonl", records[:4])
    (folder / "b.jsonl.gz").write_bytes(
        gzip.compress(b"".join(orjson.dumps(r) + b"\n" for r in records[4:8]))
    )
    (folder / "ignored.txt").write_text("not an input")
    stdin = b"".join(orjson.dumps(r) + b"\n" for r in records[8:])
    out = tmp_path / "out"
    out.mkdir()
    result = CliRunner().invoke(
        main,
        [
            "--input",
            str(folder),
            "--input",
            "-",
            "--allow-missing-g3",
            "--output-dpo",
            str(out / "d.jsonl"),
            "--output-ppo",
            str(out / "p.jsonl"),
            "--manifest",
            str(out / "m.json"),
        ],
        input=stdin,
    )
    assert result.exit_code == 0, result.stderr
    manifest = orjson.loads((out / "m.json").read_bytes())
    assert [(f["path"], f["lines"]) for f in manifest["inputs"]] == [
        (str(folder / "a.jsonl"), 4),
        (str(folder / "b.jsonl.gz"), 4),
        ("-", 4),
    ]
    assert manifest["rollouts"] == 4
    assert manifest["ppo"]["records"] == 12
    assert len(read_jsonl(out / "p.jsonl")) == 12


def test_layer2_records_convert_to_layer3(tmp_path: Path, run_cli: RunCli) -> None:
    dpo2 = {
        "prompt": "Fix the failing test",
        "chosen": "Fixed the off-by-one in parse()",
        "rejected": "Deleted the test",
        "tool_call_sequence": [
            {"event": "tool_call", "data": {"name": "run_tests", "args": {}}},
            {"event": "tool_result", "data": {"error": "1 failed"}},
        ],
        "provenance": {
            "source": "wasmagent-rollout",
            "rollout_id": "r-9",
            "chosen_branch": 2,
            "rejected_branch": 0,
            "objective_score": {"chosen": 1, "rejected": 0},
            "exported_at_ms": 1750000000000,
            "n_gram_hash": "0123456789abcdef",
        },
    }
    ppo2 = {
        "prompt": "Fix the failing test",
        "completion": "Fixed the off-by-one in parse()",
        "reward": 1.3,
        "tool_call_sequence": [],
        "provenance": {
            "source": "wasmagent-rollout",
            "rollout_id": "r-9",
            "branch_index": 2,
            "objective_score": 1,
            "exported_at_ms": 1750000000000,
            "n_gram_hash": "0123456789abcdef",
        },
    }
    path = write_jsonl(tmp_path / "dpo-2026-06-23.jsonl", [dpo2, ppo2])
    result = run_cli(path)
    assert result.exit_code == 0, result.stderr
    (pair,) = result.dpo()
    assert pair["provenance"]["chosen_branch"] == 2
    assert pair["loss_weight_tokens"] == "recovery"
    assert [m["role"] for m in pair["messages"]] == ["user", "assistant", "tool", "assistant"]
    (sample,) = result.ppo()
    assert sample["reward"] == 1.0
    manifest = result.manifest()
    assert (manifest["dpo"]["from_layer2"], manifest["ppo"]["from_layer2"]) == (1, 1)
    assert manifest["accepted_by_type"] == {"DpoRecord": 1, "PpoRecord": 1}


def test_integers_written_as_floats_come_out_as_integers(tmp_path: Path, run_cli: RunCli) -> None:
    # JSON Schema calls 1.0 an integer, so the contract accepts it; the output says 1.
    records = [
        branch(branch_index=0, total_score=1.0, final_answer="good"),
        branch(branch_index=1, rank=2, objective_score=0, total_score=0.1, final_answer="bad"),
    ]
    records[1].update(branch_index=1.0, rank=2.0)
    records[0].update(seed=7.0, objective_score=1.0)
    layer2 = {
        "prompt": "Fix the failing test",
        "completion": "Fixed it",
        "reward": 1.3,
        "tool_call_sequence": [],
        "provenance": {
            "source": "wasmagent-rollout",
            "rollout_id": "r-9",
            "branch_index": 3.0,
            "objective_score": 1,
            "exported_at_ms": 1750000000000,
            "n_gram_hash": "0123456789abcdef",
        },
    }
    path = write_jsonl(tmp_path / "in.jsonl", [*records, layer2])
    result = run_cli(path)
    assert result.exit_code == 0, result.stderr
    dpo = (result.out / "dpo.jsonl").read_bytes()
    ppo = (result.out / "ppo.jsonl").read_bytes()
    assert dpo.count(b'"chosen_branch":0,"rejected_branch":1,"chosen_facts":') == 1
    facts = b'{"temperature":0.7,"seed":7,"objective_score":1,"objective_status":"pass",'
    facts += b'"total_score":1.0}'
    assert (dpo.count(b'"chosen_facts":' + facts), ppo.count(b'"branch_facts":' + facts)) == (1, 1)
    assert [p["provenance"]["branch_index"] for p in result.ppo()] == [3, 0, 1]
    # The one float left is branch 0's total score in its facts: a number, written as 1.0.
    assert ppo.count(b".0}") == ppo.count(b'"total_score":1.0}') == 1
    assert dpo.count(b".0}") == dpo.count(b'"total_score":1.0}') == 1
    assert result.manifest()["rank_disagreements"] == 0


def _export(tmp_path: Path, name: str, inputs: list[Path], **options: object) -> bytes:
    out = tmp_path / name
    out.mkdir()
    settings = Settings(
        inputs=tuple(str(p) for p in inputs),
        dpo_path=str(out / "d.jsonl"),
        ppo_path=str(out / "p.jsonl"),
        rejects_path=str(out / "r.jsonl"),
        manifest_path=str(out / "m.json"),
        allow_missing_g3=True,
        **options,  # type: ignore[arg-type]
    )
    assert run(settings).exit_code == 0
    manifest = orjson.loads((out / "m.json").read_bytes())
    manifest["outputs"] = {k: v["sha256"] for k, v in manifest["outputs"].items()}
    manifest["inputs"] = len(manifest["inputs"])
    return b"".join(
        (out / n).read_bytes() for n in ("d.jsonl", "p.jsonl", "r.jsonl")
    ) + orjson.dumps(manifest)


# Both targets: the trl records are built per rollout in the workers, as Layer 3's pairs are.
TARGETS = [{}, {"target": "trl", "card": False}]


@TWO_CPUS
@pytest.mark.parametrize("target", TARGETS)
def test_workers_chunking_and_partitions_do_not_change_a_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: dict[str, object]
) -> None:
    records = _rollouts(120)
    random.Random(3).shuffle(records)
    lines = [orjson.dumps(r) for r in records] + [b"{broken", b"", orjson.dumps(records[7])]
    path = tmp_path / "in.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    single = _export(tmp_path, "one", [path], workers=1, **target)
    parallel = _export(tmp_path, "two", [path], workers=2, chunk_bytes=4096, **target)
    assert single == parallel
    # Many partitions, each spilled to by both workers (a file of each per partition).
    monkeypatch.setattr(group, "TARGET_PARTITION_BYTES", 4096)
    assert group.Partitioning.for_inputs(expand_inputs([str(path)])).count == 64
    partitioned = _export(tmp_path, "many", [path], workers=2, chunk_bytes=4096, **target)
    assert partitioned == single
    assert b"duplicate-branch" in single
    # trl: 120 DPO records and 360 prompt-only ones, each opening with its prompt.
    assert single.count(b'{"prompt":[{"role":"user"') == (480 if target else 0)


@pytest.mark.parametrize("target", TARGETS)
def test_input_order_does_not_change_the_outputs(tmp_path: Path, target: dict[str, object]) -> None:
    records = _rollouts(60)
    a = write_jsonl(tmp_path / "a.jsonl", records)
    shuffled = list(records)
    random.Random(5).shuffle(shuffled)
    b = write_jsonl(tmp_path / "b.jsonl", shuffled)
    first = _export(tmp_path, "a", [a], **target).split(b'{"schema_version":"datafactory')[0]
    second = _export(tmp_path, "b", [b], **target).split(b'{"schema_version":"datafactory')[0]
    assert first == second
    assert first.count(b'{"prompt":[{"role":"user"') == (60 + 180 if target else 0)


def test_python_api_matches_the_command(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "in.jsonl", _rollouts(10))
    typed = list(load_rollouts(str(path)))
    assert len(typed) == 30
    out = tmp_path / "api"
    out.mkdir()
    result = export(typed, str(out / "d.jsonl"), str(out / "p.jsonl"), allow_missing_g3=True)
    assert result.exit_code == 0
    via_settings = _export(tmp_path, "cmd", [path])
    assert via_settings.startswith((out / "d.jsonl").read_bytes() + (out / "p.jsonl").read_bytes())


def test_format_dpo_writes_only_dpo(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "in.jsonl", _rollouts(3))
    out = tmp_path / "o"
    out.mkdir()
    result = CliRunner().invoke(
        main,
        [
            "--input",
            str(path),
            "--allow-missing-g3",
            "--format",
            "dpo",
            "--output-dpo",
            str(out / "d.jsonl"),
        ],
    )
    assert result.exit_code == 0, result.stderr
    assert [p.name for p in out.iterdir()] == ["d.jsonl"]
    missing = CliRunner().invoke(
        main, ["--input", str(path), "--allow-missing-g3", "--format", "ppo"]
    )
    assert (missing.exit_code, missing.stderr) == (
        2,
        "datafactory: error: --output-ppo is required with --format ppo\n",
    )


def test_progress_is_silent_when_stderr_is_not_a_terminal(tmp_path: Path, run_cli: RunCli) -> None:
    result = run_cli(write_jsonl(tmp_path / "in.jsonl", _rollouts(2)))
    assert (result.exit_code, result.stderr) == (0, "")


def test_sigkill_midway_leaves_no_partial_output(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    with path.open("wb") as handle:
        for _ in range(60):
            handle.write(
                b"".join(orjson.dumps(r) + b"\n" for r in _rollouts(100, seed=2)).replace(
                    b"roll-", b"roll-%d-" % _
                )
            )
    out = tmp_path / "out"
    out.mkdir()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "datafactory",
            "--input",
            str(path),
            "--allow-missing-g3",
            "--output-dpo",
            str(out / "d.jsonl"),
            "--output-ppo",
            str(out / "p.jsonl"),
            "--manifest",
            str(out / "m.json"),
            "--workers",
            "1",
            "--temp-dir",  # SIGKILL leaves the spill behind: here, not in the system's temp
            str(tmp_path),
        ],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while not any(p.name.endswith(".tmp") for p in out.iterdir()):
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.005)
    time.sleep(0.2)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert process.returncode == -signal.SIGKILL
    assert not {"d.jsonl", "p.jsonl", "m.json"} & {p.name for p in out.iterdir()}


@pytest.mark.parametrize("workers", [1, pytest.param(2, marks=TWO_CPUS)])
def test_accounting_identity_with_mixed_input(tmp_path: Path, workers: int) -> None:
    lines = [orjson.dumps(r) for r in _rollouts(5)] + [b"", b"[]", b"{", b'{"a": 1}']
    path = tmp_path / "in.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    out = tmp_path / "o"
    out.mkdir()
    settings = Settings(
        inputs=(str(path),),
        dpo_path=str(out / "d"),
        ppo_path=str(out / "p"),
        allow_missing_g3=True,
        workers=workers,
        chunk_bytes=512,
    )
    manifest = run(settings).manifest
    assert manifest is not None
    assert manifest["lines"] == {"read": 19, "accepted": 15, "rejected": 3, "blank": 1}
    assert manifest["rejected"] == {
        "invalid-json": 1,
        "not-an-object": 1,
        "unsupported-record-type": 1,
    }


def test_an_invalid_output_record_is_a_bug_that_fails_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import datafactory.pairs

    monkeypatch.setattr(datafactory.pairs, "SCHEMA_VERSION", "training-record/v0")
    path = write_jsonl(tmp_path / "in.jsonl", _rollouts(2))
    out = tmp_path / "o"
    out.mkdir()
    result = CliRunner().invoke(
        main,
        ["--input", str(path), "--allow-missing-g3", "--workers", "1",
         "--output-dpo", str(out / "d.jsonl"), "--output-ppo", str(out / "p.jsonl")],
    )  # fmt: skip
    assert result.exit_code == 3
    assert result.stderr == (
        "datafactory: error: internal error, nothing written: output PpoTrainingRecord for "
        "rollout 'roll-0' breaks the contract at /schema_version: must be "
        '"training-record/v2", got "training-record/v0"\n'
    )
    assert list(out.iterdir()) == []


def test_missing_manifest_directory_fails_before_any_work(tmp_path: Path, run_cli: RunCli) -> None:
    path = write_jsonl(tmp_path / "in.jsonl", _rollouts(1))
    result = run_cli(path, args=("--manifest", str(tmp_path / "nowhere" / "m.json")))
    assert result.exit_code == 2
    assert list(result.out.iterdir()) == []


def test_fork_tree_records_are_accepted_and_export_nothing(tmp_path: Path, run_cli: RunCli) -> None:
    tree = {
        "rollout_id": "r-1",
        "task": "Add a hello world button to the page",
        "branches": [
            {
                "branch_index": 0,
                "forked_at_step": 0,
                "forked_at_event_id": "e0",
                "shared_prefix_steps": 0,
            }
        ],
        "fork_map": {"0": [0]},
    }
    result = run_cli(write_jsonl(tmp_path / "in.jsonl", [tree, branch("r-1", 0)]))
    assert result.exit_code == 0, result.stderr
    manifest = result.manifest()
    assert manifest["accepted_by_type"] == {"RolloutBranchRecord": 1, "RolloutTreeRecord": 1}
    assert manifest["lines"]["accepted"] == 2
    assert (manifest["rollouts"], manifest["ppo"]["records"]) == (1, 1)
