"""``--target trl`` through the export engine: the builders of ``datafactory.targets.trl``
run per rollout in the build stage, every line checked for its trainer's shape, counted in
the manifest, written atomically behind G3, with a dataset card next to the outputs; and a
run with no rollout record in it stops (exit 2) saying what the lines were."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, cast

import orjson
import pytest
from click.testing import CliRunner

from datafactory import export
from datafactory.card import features
from datafactory.cli import main
from datafactory.contract import exporter_contract
from datafactory.records import BranchJson
from datafactory.repair import normalise_value
from datafactory.stages import build
from datafactory.targets.shape import TrlCheck
from datafactory.targets.trl import (
    TrlOptions,
    arguments_as_objects,
    rollout_records,
    sft_input_record,
)
from tests.datafactory.helpers import RunCli, branch, read_jsonl, write_jsonl
from wiregate.record_validator import ValidatorSet

REPO = Path(__file__).resolve().parents[2]
VALIDATORS = ValidatorSet(exporter_contract())

CALLS = [
    {"tool_name": "read_file", "arguments": {"path": "a.py"}, "result": "def f(): pass"},
    {"tool_name": "write_file", "arguments": {"path": "a.py", "text": "x"}, "result": "ok"},
]


def _rollout(rollout_id: str = "r-1", first_rank: int = 0) -> list[dict[str, Any]]:
    """A rollout whose passing branch is branch 1, ranked from 0 as wasmagent-js ranks."""
    return [
        branch(
            rollout_id, 0, objective_score=0, total_score=0.2, rank=first_rank + 1,
            final_answer="gave up", tool_call_sequence=CALLS[:1],
        ),
        branch(
            rollout_id, 1, objective_score=1, total_score=1.3, rank=first_rank,
            final_answer="done", tool_call_sequence=CALLS, judge_score=10,
            provenance={"source": "bscode-smoke", "model_id": "m-7"},
        ),
    ]  # fmt: skip


def _trl(run_cli: RunCli, path: Path, *args: str) -> Any:
    return run_cli(path, args=("--target", "trl", *args))


def test_trl_writes_the_builders_records_with_each_branch_own_trajectory(
    run_cli: RunCli, tmp_path: Path
) -> None:
    path = write_jsonl(tmp_path / "in.jsonl", _rollout())
    result = _trl(run_cli, path)
    assert result.exit_code == 0, result.stderr
    [dpo] = result.dpo()
    assert dpo["prompt"] == [{"role": "user", "content": "Add a hello world button to the page"}]
    assert (dpo["chosen_branch"], dpo["rejected_branch"]) == (1, 0)  # rank 0 costs nothing
    assert [m["role"] for m in dpo["chosen"]] == ["assistant", "tool"] * 2 + ["assistant"]
    assert [m["role"] for m in dpo["rejected"]] == ["assistant", "tool", "assistant"]
    assert dpo["chosen"][-1]["content"] == "done"
    assert dpo["rejected"][-1]["content"] == "gave up"
    assert dpo["chosen"][2]["tool_calls"][0]["function"] == {
        "name": "write_file",
        "arguments": '{"path":"a.py","text":"x"}',
    }
    assert (dpo["source"], dpo["model_id"]) == ("bscode-smoke", "m-7")
    assert [(p["branch_index"], p["reward"]) for p in result.ppo()] == [(0, 0.2 / 1.3), (1, 1.0)]
    # The engine writes what the builders make of the repaired branches, byte for byte.
    validators = ValidatorSet(exporter_contract())
    repaired = [cast(BranchJson, normalise_value(b, validators).data) for b in _rollout()]
    expected = rollout_records(repaired, TrlOptions())
    assert (result.out / "dpo.jsonl").read_bytes() == orjson.dumps(expected.dpo) + b"\n"
    assert (result.out / "ppo.jsonl").read_bytes() == b"".join(
        orjson.dumps(r) + b"\n" for r in expected.prompt
    )
    manifest = result.manifest()
    assert manifest["target"] == "trl"
    assert manifest["trl"] == {
        "format": "both",
        "tool_arguments": "string",
        "tools": None,
        "kto": {"records": 0},
        "sft": {"records": 0, "from_input": 0},
        "skipped": {},
    }
    assert manifest["dpo"]["pairs"] == 1 and manifest["ppo"]["records"] == 2
    assert {k: v["records"] for k, v in manifest["outputs"].items()} == {
        "dpo": 1,
        "ppo": 2,
        "rejects": 0,
    }
    assert manifest["repaired"] == {"rank:out_of_range": 1, "tool_call:flat_arguments": 2}


def test_layer3_manifest_has_no_target_and_no_card(run_cli: RunCli, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "in.jsonl", _rollout())
    result = run_cli(path)
    assert result.exit_code == 0, result.stderr
    assert "target" not in result.manifest()
    assert sorted(p.name for p in result.out.iterdir()) == [
        "dpo.jsonl",
        "manifest.json",
        "ppo.jsonl",
        "rejects.jsonl",
    ]


def test_kto_and_sft_through_export_count_what_they_leave_out(tmp_path: Path) -> None:
    records = [
        *_rollout("r-1"),
        branch("r-2", 0, objective_score=1, final_answer="  "),
        branch("r-2", 1, objective_score=0, objective_status="unknown"),
    ]
    for name, kept in (("kto", [("r-1", 0), ("r-1", 1)]), ("sft", [("r-1", 1)])):
        out = tmp_path / name
        out.mkdir()
        path = str(out / f"{name}.jsonl")
        result = export(
            records, None, None, target="trl", **{f"{name}_path": path},
            manifest_path=str(out / "m.json"), allow_missing_g3=True, card=False,
        )  # fmt: skip
        assert result.exit_code == 0
        written = read_jsonl(Path(path))
        assert [(r["rollout_id"], r["branch_index"]) for r in written] == kept
        assert result.manifest is not None
        trl = result.manifest["trl"]
        assert trl[name] == (
            {"records": len(kept), "from_input": 0} if name == "sft" else {"records": len(kept)}
        )
        assert (
            trl["skipped"]
            == {
                "kto": {"kto:blank-answer": 1, "kto:objective-unknown": 1},
                "sft": {"sft:blank-answer": 1, "sft:not-passed": 2},
            }[name]
        )
        assert sorted(os.listdir(out)) == sorted([f"{name}.jsonl", "m.json"])
    kto = read_jsonl(tmp_path / "kto" / "kto.jsonl")
    assert [r["label"] for r in kto] == [False, True]
    sft = read_jsonl(tmp_path / "sft" / "sft.jsonl")
    assert [m["role"] for m in sft[0]["messages"]][:2] == ["user", "assistant"]


def test_layer2_records_give_no_trl_record_and_are_counted(run_cli: RunCli, tmp_path: Path) -> None:
    layer2 = {
        "prompt": "Fix the failing test",
        "completion": "Fixed it",
        "reward": 0.5,
        "tool_call_sequence": [],
        "provenance": {
            "source": "wasmagent-rollout",
            "rollout_id": "r-9",
            "branch_index": 0,
            "objective_score": 1,
            "exported_at_ms": 1750000000000,
            "n_gram_hash": "0123456789abcdef",
        },
    }
    path = write_jsonl(tmp_path / "in.jsonl", [*_rollout(), layer2])
    result = _trl(run_cli, path)
    assert result.exit_code == 0, result.stderr
    assert result.manifest()["trl"]["skipped"] == {"PpoRecord-input": 1}
    assert len(result.ppo()) == 2


def test_tools_file_fills_the_tools_column(run_cli: RunCli, tmp_path: Path) -> None:
    tools = tmp_path / "tools.jsonl"
    write_jsonl(
        tools,
        [
            {"name": "write_file", "description": "Write", "parameters": {"type": "object"}},
            {"type": "function", "function": {"name": "read_file"}},
        ],
    )
    path = write_jsonl(tmp_path / "in.jsonl", _rollout())
    result = _trl(run_cli, path, "--tools", str(tools), "--tool-arguments", "object")
    assert result.exit_code == 0, result.stderr
    [dpo] = result.dpo()
    assert [t["function"]["name"] for t in orjson.loads(dpo["tools"])] == [
        "write_file",
        "read_file",
    ]  # the file's order; read_file is called by neither branch
    assert {r["tools"] for r in result.ppo()} == {dpo["tools"]}
    assert dpo["chosen"][2]["tool_calls"][0]["function"]["arguments"] == {
        "path": "a.py",
        "text": "x",
    }
    assert result.manifest()["trl"]["tools"] == str(tools)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--format", "kto"), "--format kto needs --target trl (Layer 3 has no such record)"),
        (("--tool-arguments", "object"), "--tool-arguments applies only to --target trl"),
        (("--tools", "t.json"), "--tools applies only to --target trl"),
        # Were silently ignored: no card is written for Layer 3 anyway, and the KTO and SFT
        # outputs only with their formats.
        (("--license", "mit"), "--license applies only to --target trl"),
        (("--no-card",), "--no-card applies only to --target trl"),
        (("--output-kto", "{tmp}/k.jsonl"), "--output-kto is written only with --format kto"),
        (
            ("--target", "trl", "--output-sft", "{tmp}/s.jsonl"),
            "--output-sft is written only with --format sft",
        ),
        (
            ("--target", "trl", "--tools", "{tmp}/missing.json"),
            "--tools {tmp}/missing.json: cannot read: No such file or directory",
        ),
        (
            ("--target", "trl", "--tools", "{tmp}/bad.jsonl"),
            "--tools {tmp}/bad.jsonl: line 2: not JSON: invalid literal, expected 'null': "
            "line 1 column 1 (char 0)",
        ),
        (
            ("--target", "trl", "--tools", "{tmp}/nameless.json"),
            "--tools {tmp}/nameless.json: tool spec 0: no function name",
        ),
        (
            ("--target", "trl", "--format", "sft"),
            "--output-sft is required with --format sft",
        ),
    ],
)
def test_trl_settings_errors(
    run_cli: RunCli, tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    (tmp_path / "bad.jsonl").write_text('{"name": "a"}\nnope\n')
    (tmp_path / "nameless.json").write_text('[{"description": "no name"}]')
    path = write_jsonl(tmp_path / "in.jsonl", _rollout())
    result = run_cli(path, args=tuple(a.format(tmp=tmp_path) for a in args))
    assert result.exit_code == 2
    assert result.stderr == f"datafactory: error: {message.format(tmp=tmp_path)}\n"
    assert not any(result.out.iterdir())


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_tools_from_a_fifo_is_refused_not_waited_on(run_cli: RunCli, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "tools.json")  # nobody writes it: opening it would block for ever
    path = write_jsonl(tmp_path / "in.jsonl", _rollout())
    result = run_cli(path, args=("--target", "trl", "--tools", str(tmp_path / "tools.json")))
    assert result.exit_code == 2
    assert result.stderr == (
        f"datafactory: error: --tools {tmp_path}/tools.json: not a regular file\n"
    )
    assert not any(result.out.iterdir())


def test_a_record_its_trainer_would_misread_is_exit_3(
    run_cli: RunCli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(branches: Any, options: TrlOptions, wanted: Any) -> Any:
        records = rollout_records(branches, options, wanted)
        assert isinstance(records.dpo, dict)
        bad = {**records.dpo, "rejected": [{"role": "user", "content": "x"}]}
        return records._replace(dpo=bad)

    monkeypatch.setattr(build, "rollout_records", broken)  # an exporter bug, in-process
    path = write_jsonl(tmp_path / "in.jsonl", _rollout())
    result = _trl(run_cli, path, "--workers", "1")
    assert result.exit_code == 3
    assert result.stderr == (
        "datafactory: error: internal error, nothing written: output trl dpo record for "
        "rollout 'r-1' is not what its trainer reads at /rejected/0/role: one of assistant, "
        "tool, got 'user'\n"
    )
    assert not any(result.out.iterdir())


def test_no_rollout_records_is_exit_2_naming_what_the_lines_were(
    run_cli: RunCli, tmp_path: Path
) -> None:
    path = write_jsonl(tmp_path / "in.jsonl", [*_rollout("r-1"), *_rollout("r-2")])
    first = run_cli(path)
    assert first.exit_code == 0, first.stderr
    # Real Layer 3 lines (this exporter's own output) are no input of it.
    layer3 = tmp_path / "layer3.jsonl"
    layer3.write_bytes(
        (first.out / "dpo.jsonl").read_bytes()
        + (first.out / "ppo.jsonl").read_bytes()
        + b'{"hello": 1}\n\n'
    )
    for args in ((), ("--target", "trl")):
        result = run_cli(layer3, args=args)
        assert result.exit_code == 2
        wanted = "rollout branch records" if args else "rollout records"
        assert result.stderr == (
            f"datafactory: error: no {wanted} in the inputs: 4 PpoTrainingRecord, "
            "2 DpoTrainingRecord, 1 unknown\n"
        )
        assert not any(result.out.iterdir())
    # A line that may have been a rollout (it is not JSON) goes to the rejects as before.
    with layer3.open("ab") as handle:
        handle.write(b"{broken\n")
    kept = run_cli(layer3)
    assert kept.exit_code == 0
    assert kept.manifest()["rejected"] == {"invalid-json": 1, "unsupported-record-type": 7}


def test_g3_stops_a_trl_run_before_anything_is_written(run_cli: RunCli, tmp_path: Path) -> None:
    records = _rollout()
    for record in records:
        record["task"] = "Add a hello world button to the page and ship it to everyone today"
    evals = write_jsonl(tmp_path / "eval.jsonl", [{"id": "e1", "question": records[0]["task"]}])
    path = write_jsonl(tmp_path / "in.jsonl", records)
    result = _trl(run_cli, path, "--eval-items", str(evals))
    assert result.exit_code == 1
    assert not any(result.out.iterdir())
    dropped = _trl(run_cli, path, "--eval-items", str(evals), "--drop-contaminated")
    assert dropped.exit_code == 0, dropped.stderr
    assert dropped.dpo() == [] and dropped.ppo() == []
    card = (dropped.out / "README.md").read_text()
    assert "G3 contamination gate: contaminated rollouts dropped; 8-word n-grams" in card
    assert "1 contaminated rollouts dropped." in card


def test_dataset_card_loads_with_datasets_and_declares_the_features(
    run_cli: RunCli, tmp_path: Path
) -> None:
    datasets = pytest.importorskip("datasets")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    records = [*_rollout("r-1"), *_rollout("r-2")]
    records[0]["seed"] = 7
    path = write_jsonl(tmp_path / "in.jsonl", records)
    result = _trl(run_cli, path, "--license", "apache-2.0")
    assert result.exit_code == 0, result.stderr
    card = (result.out / "README.md").read_text()
    header = card.split("---\n")[1]
    assert header.startswith('license: "apache-2.0"\ntask_categories:\n')
    manifest = result.manifest()
    assert f"`{path}`: 4 lines, sha256 `{manifest['inputs'][0]['sha256']}`" in card
    assert "G3 contamination gate: skipped (--allow-missing-g3)" in card
    assert "https://wiregate.dev/schemas/training-record/v2" in card
    cache = str(tmp_path / "cache")
    for name, count in (("dpo", 2), ("ppo", 4)):
        loaded = datasets.load_dataset(str(result.out), name, split="train", cache_dir=cache)
        assert loaded.num_rows == count
        declared = datasets.Features._from_yaml_list(_card_features(header, name))
        assert loaded.features == declared
        assert loaded.features == datasets.Features.from_dict(_as_dict(features(name)))
    default = datasets.load_dataset(str(result.out), cache_dir=cache)
    assert list(default) == ["train"] and default["train"].num_rows == 2
    assert loaded[1]["seed"] is None and loaded[0]["reward"] == 0.2 / 1.3
    # KTO and SFT, each a run of its own: every config the card declares loads as declared
    # (SFT's lacked its output_type column: every SFT output failed to load).
    for name, count in (("kto", 4), ("sft", 2)):
        out = tmp_path / name
        out.mkdir()
        single = _trl(run_cli, path, "--format", name, f"--output-{name}", str(out / "x.jsonl"))
        assert single.exit_code == 0, single.stderr
        header = (out / "README.md").read_text().split("---\n")[1]
        loaded = datasets.load_dataset(str(out), name, split="train", cache_dir=cache)
        assert loaded.num_rows == count
        assert loaded.features == datasets.Features._from_yaml_list(_card_features(header, name))
        assert loaded.features == datasets.Features.from_dict(_as_dict(features(name)))


def test_no_card_and_the_card_in_place_of_an_input(run_cli: RunCli, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "in.jsonl", _rollout())
    result = _trl(run_cli, path, "--no-card")
    assert result.exit_code == 0 and not (result.out / "README.md").exists()
    readme = write_jsonl(tmp_path / "README.md", _rollout())
    argv = ["--input", str(readme), "--target", "trl", "--allow-missing-g3"]
    argv += ["--output-dpo", str(tmp_path / "d.jsonl"), "--output-ppo", str(tmp_path / "p.jsonl")]
    clash = CliRunner().invoke(main, argv)
    assert clash.exit_code == 2
    assert clash.stderr == (
        f"datafactory: error: the dataset card {tmp_path}/README.md is the same file as "
        f"--input {readme} (turn the card off: --no-card)\n"
    )


def _card_features(header: str, name: str) -> list[Any]:
    yaml = pytest.importorskip("yaml")
    for info in yaml.safe_load(header)["dataset_info"]:
        if info["config_name"] == name:
            return list(info["features"])
    raise AssertionError(name)


def _as_dict(columns: dict[str, Any]) -> dict[str, Any]:
    """``card.features`` as ``datasets.Features.to_dict`` writes them."""

    def one(feature: Any) -> Any:
        if isinstance(feature, str):
            return {"dtype": feature, "_type": "Value"}
        if isinstance(feature, list):
            return {"feature": one(feature[0]), "_type": "List"}
        return {k: one(v) for k, v in feature.items()}

    return {k: one(v) for k, v in columns.items()}


def test_rollout_records_builds_only_the_kinds_wanted() -> None:
    validators = ValidatorSet(exporter_contract())
    branches = [cast(BranchJson, normalise_value(b, validators).data) for b in _rollout()]
    every = rollout_records(branches, TrlOptions())
    only = rollout_records(branches, TrlOptions(), {"prompt"})
    assert only == (None, every.prompt, [], [])
    assert len(every.prompt) == 2 and len(every.sft) == 1


_COMPLETION: list[dict[str, Any]] = [
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    },
    {"role": "tool", "content": "ok", "tool_call_id": "c"},
    {"role": "assistant", "content": "done"},
]
_GOOD: dict[str, Any] = {
    **orjson.loads(
        (REPO / "contracts/fixtures/trl-record/TrlPromptRecord/valid/tool-calls.json").read_bytes()
    ),
    "prompt": [{"role": "user", "content": "t"}],
    "completion": _COMPLETION,
    "reward": 0.5,
}
_CONTRACT = "breaks the contract (TrlPromptRecord): "


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({}, None),
        ({"reward": 1.5}, ("/reward", _CONTRACT + "must be <= 1, got 1.5")),
        ({"completion": []}, ("/completion", _CONTRACT + "must have at least 1 items")),
        (
            {"tools": None, "rank": 1},
            ("/rank", _CONTRACT + "property is not allowed here (closed object)"),
        ),
        (
            {"prompt": [{"role": "assistant", "content": "x"}]},
            ("/prompt/0/role", "one of system, user, got 'assistant'"),
        ),
        (
            {"prompt": [{"role": "user", "content": "t"}, {"role": "system", "content": "s"}]},
            ("/prompt/1/role", "a system turn only opens the conversation"),
        ),
        (
            {"prompt": [{"role": "system", "content": "s"}]},
            ("/prompt/0/role", "the prompt ends with a user turn"),
        ),
        (
            {"completion": _COMPLETION[:2]},
            ("/completion/1/role", "a completion ends with an assistant turn"),
        ),
        (
            {"completion": [_COMPLETION[1] | {"role": "assistant"}]},
            ("/completion/0", "a tool turn, and only a tool turn, names its call"),
        ),
        (
            {"completion": [_COMPLETION[0] | {"role": "tool", "tool_call_id": "c"}]},
            ("/completion/0/tool_calls", "only an assistant turn calls tools"),
        ),
        (
            {"completion": [{"role": "assistant", "content": None}]},
            ("/completion/0/content", _CONTRACT + "expected type string, got None"),
        ),
        (
            {"completion": [_COMPLETION[0] | {"tool_calls": [{"type": "function"}]}]},
            ("/completion/0/tool_calls/0/function", _CONTRACT + "required property is missing"),
        ),
        (
            {
                "completion": [
                    {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [
                            {
                                "id": "c",
                                "type": "function",
                                "function": {"name": "f", "arguments": {}},
                            }
                        ],
                    },
                    *_COMPLETION[1:],
                ]
            },
            (
                "/completion/0/tool_calls/0/function/arguments",
                "a JSON string (--tool-arguments string)",
            ),
        ),
    ],
)
def test_trl_check_names_the_first_misread(
    change: dict[str, Any], problem: tuple[str, str] | None
) -> None:
    record = {**_GOOD, **change}
    assert TrlCheck(VALIDATORS, "string").problem("ppo", record) == problem
    missing = {k: v for k, v in _GOOD.items() if k != "tools"}
    assert TrlCheck(VALIDATORS, "string").problem("ppo", missing) == (
        "/tools",
        _CONTRACT + "required property is missing",
    )


# SFT input records (the contract's SftTrainingRecord) with --target trl --format sft.

_SFT_FIXTURES = REPO / "contracts/fixtures/training-record/SftTrainingRecord/valid"


def _sft_inputs() -> list[Any]:
    return [
        orjson.loads((_SFT_FIXTURES / f"{name}.json").read_bytes())
        for name in ("tool-calls-and-annotations", "trace-pipeline-model-dump", "minimal-keys")
    ]


def _sft_run(run_cli: RunCli, path: Path, *args: str) -> Any:
    out = path.parent / "sft.jsonl"
    return run_cli(
        path, args=("--target", "trl", "--format", "sft", "--output-sft", str(out), *args)
    ), out


def test_sft_inputs_become_trl_sft_records(run_cli: RunCli, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "in.jsonl", [*_sft_inputs(), *_rollout("r-1")])
    result, out = _sft_run(run_cli, path)
    assert result.exit_code == 0, result.stderr
    # In the order of their groups' keys (the rollout id, else "sft:" and the task hash).
    records = read_jsonl(out)
    assert sorted(
        (r["rollout_id"] or "", r["output_type"], r["branch_index"] or 0) for r in records
    ) == [
        ("", "repair_patch", 0),
        ("", "tool_call", 0),
        ("00000000-0000-0000-0000-000000000001", "final_answer", 0),
        ("r-1", "final_answer", 1),
    ]
    written = {r["output_type"] + (r["rollout_id"] or ""): r for r in records}
    assert written["tool_call"] == {
        "messages": [
            {"role": "system", "content": "You are a coding agent."},
            {"role": "user", "content": "Add a hello world button to the page"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "call00000",
                        "type": "function",
                        "function": {
                            "name": "write_file",
                            "arguments": '{"path": "src/Button.tsx"}',
                        },
                    }
                ],
            },
            {"role": "tool", "content": "ok", "tool_call_id": "call00000"},
            {"role": "assistant", "content": "Added HelloButton to src/Button.tsx"},
        ],
        "output_type": "tool_call",
        "tools": None,
        "rollout_id": None,
        "task_hash": "a8fb558cfae2e1e3",
        "source": "bscode-smoke",
        "model_id": None,
        "upstream_provenance": '{"source":"bscode-smoke"}',
        **dict.fromkeys(
            (
                "temperature", "seed", "objective_score", "objective_status", "judge_score",
                "total_score", "branch_index",
            )
        ),
    }  # fmt: skip
    # trace-pipeline's null message keys are dropped; its task hash is the first user turn's.
    from_dump = written["final_answer00000000-0000-0000-0000-000000000001"]
    assert from_dump["task_hash"] == "fad7e1bace9f56d3"
    assert from_dump["messages"][0] == {
        "role": "user",
        "content": "Write a two-sentence summary of the water cycle.",
    }
    for record in records:
        assert VALIDATORS.get("TrlSftRecord").problems(record) == []
    manifest = result.manifest()
    assert manifest["trl"]["sft"] == {"records": 4, "from_input": 3}
    assert manifest["accepted_by_type"] == {"RolloutBranchRecord": 2, "SftTrainingRecord": 3}
    assert manifest["rollouts"] == 1


def test_sft_inputs_are_rejected_where_no_target_reads_them(
    run_cli: RunCli, tmp_path: Path
) -> None:
    path = write_jsonl(tmp_path / "in.jsonl", [*_sft_inputs(), *_rollout("r-1")])
    hint = (
        "a Layer 3 SftTrainingRecord; expected a Layer 1 or Layer 2 record (SFT records are "
        "read by --target trl --format sft)"
    )
    kto = ("--output-kto", str(tmp_path / "kto.jsonl"))
    for args in ((), ("--target", "trl"), ("--target", "trl", "--format", "kto", *kto)):
        result = run_cli(path, args=args)
        assert result.exit_code == 0, result.stderr
        rejects = read_jsonl(result.out / "rejects.jsonl")
        assert [(r["line"], r["reason"], r["detail"]) for r in rejects] == [
            (line, "unsupported-record-type", hint) for line in (1, 2, 3)
        ]
    only = write_jsonl(tmp_path / "only.jsonl", _sft_inputs())
    result = run_cli(only, args=("--target", "trl"))
    assert (result.exit_code, result.stderr) == (
        2,
        "datafactory: error: no rollout branch records in the inputs: 3 SftTrainingRecord\n",
    )
    alone, out = _sft_run(run_cli, only)
    assert alone.exit_code == 0, alone.stderr
    assert len(read_jsonl(out)) == 3


def test_an_sft_input_the_trl_form_cannot_hold_is_rejected(run_cli: RunCli, tmp_path: Path) -> None:
    ends_with_user, tool_first = _sft_inputs()[1], _sft_inputs()[2]
    ends_with_user["messages"] = ends_with_user["messages"][:1]
    ends_with_user["messages"].append(ends_with_user["messages"][0])
    tool_first["messages"].insert(0, {"role": "tool", "content": "x"})
    no_user = {**_sft_inputs()[2], "messages": [{"role": "assistant", "content": "done"}] * 2}
    tool_after_text = _sft_inputs()[0]
    tool_after_text["messages"][3:3] = [{"role": "assistant", "content": "thinking"}]
    # A call never answered: exported, it had no tool turn (the OpenAI API refuses that).
    unanswered = _sft_inputs()[0]
    del unanswered["messages"][3]
    # A blank training target: branches with a blank answer were left out, such inputs not.
    blank = _sft_inputs()[2]
    blank["messages"][-1]["content"] = " \n"
    lines = [ends_with_user, tool_first, no_user, tool_after_text, unanswered, blank]
    lines += _rollout("r-1")
    result, out = _sft_run(run_cli, write_jsonl(tmp_path / "in.jsonl", lines))
    assert result.exit_code == 0, result.stderr
    rejects = read_jsonl(result.out / "rejects.jsonl")
    answered = "a tool call is answered by a tool turn before the next turn"
    assert [(r["line"], r["reason"], r["detail"]) for r in rejects] == [
        (1, "unsupported-value", "SftTrainingRecord /messages/1/role: a conversation ends with an assistant turn"),
        (2, "unsupported-value", "SftTrainingRecord /messages/0: a tool turn, and only a tool turn, names its call"),
        (3, "unsupported-value", "SftTrainingRecord /messages/0/role: an assistant turn follows a user turn"),
        (4, "unsupported-value", f"SftTrainingRecord /messages/2/tool_calls/0: {answered}"),
        (5, "unsupported-value", f"SftTrainingRecord /messages/2/tool_calls/0: {answered}"),
        (6, "unsupported-value", "SftTrainingRecord /messages/1/content: the last turn, the training target, is blank"),
    ]  # fmt: skip
    assert [r["rollout_id"] for r in read_jsonl(out)] == ["r-1"]


def test_g3_gates_sft_inputs_on_every_system_and_user_turn(run_cli: RunCli, tmp_path: Path) -> None:
    question = "Summarise the causes of the French revolution in three short numbered points"
    later_user = _sft_inputs()[2]  # no rollout_id: a group of its own
    later_user["messages"][1:1] = [
        {"role": "assistant", "content": "Which topic?"},
        {"role": "user", "content": f"This one: {question}."},
    ]
    in_system = _sft_inputs()[2]
    in_system["messages"].insert(0, {"role": "system", "content": question})
    clean = _sft_inputs()[2]  # the same first user turn as both: not dropped with them
    evals = write_jsonl(tmp_path / "eval.jsonl", [{"id": "e7", "question": question}])
    for number, record in enumerate((later_user, in_system)):
        (tmp_path / str(number)).mkdir()
        path = write_jsonl(tmp_path / str(number) / "in.jsonl", [record, clean, *_rollout("r-1")])
        result, out = _sft_run(run_cli, path, "--eval-items", str(evals))
        assert result.exit_code == 1
        assert not out.exists()
        report = tmp_path / str(number) / "g3.json"
        dropped, out = _sft_run(
            run_cli, path, "--eval-items", str(evals), "--drop-contaminated", "--no-card",
            "--g3-report", str(report),
        )  # fmt: skip
        assert dropped.exit_code == 0, dropped.stderr
        assert sorted(r["rollout_id"] or "" for r in read_jsonl(out)) == ["", "r-1"]
        assert dropped.manifest()["g3"]["contaminated_rollouts"] == 1
        digest = hashlib.sha256(orjson.dumps(record)).hexdigest()[:16]
        assert f'"sft-record:{digest}"' in report.read_text()


def test_sft_input_calls_sharing_an_id_are_answered_in_order() -> None:
    call = {"id": "x", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    record = {
        "messages": [
            {"role": "user", "content": "Q1 do the thing"},
            {"role": "assistant", "content": "", "tool_calls": [call, call]},
            {"role": "tool", "content": "a", "tool_call_id": "x"},
            {"role": "tool", "content": "b", "tool_call_id": "x"},
            {"role": "assistant", "content": "done"},
        ],
        "output_type": "final_answer",
        "provenance": {"source": "s"},
    }
    written = sft_input_record(record)
    assert [m.get("tool_call_id") for m in written["messages"]] == [
        None, None, "call00000", "call00001", None,
    ]  # fmt: skip
    assert TrlCheck(VALIDATORS, "string").problem("sft", written) is None


def _calls_record(calls: list[str], answers: list[str | None]) -> dict[str, Any]:
    """An SFT input: a user turn, one assistant turn making ``calls`` (by id), a tool turn
    per answer (its ``tool_call_id``, None: absent), the final answer."""
    made = [
        {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in calls
    ]
    tools = [
        {"role": "tool", "content": f"r{n}", **({} if a is None else {"tool_call_id": a})}
        for n, a in enumerate(answers)
    ]
    return {
        "messages": [
            {"role": "user", "content": "Q1 do the thing"},
            {"role": "assistant", "content": "", "tool_calls": made},
            *tools,
            {"role": "assistant", "content": "done"},
        ],
        "output_type": "final_answer",
        "provenance": {"source": "s"},
    }


@pytest.mark.parametrize(
    ("calls", "answers", "ids", "answered", "problem"),
    [
        # Tool turns naming no call answer the oldest unanswered one, as a branch's results
        # are paired (both went to the latest call, and the record was then refused).
        (["a", "b"], [None, None], "short", ["call00000", "call00001"], None),
        (["a", "b"], ["b", "a"], "short", ["call00001", "call00000"], None),
        (["a", "b"], ["zzz"], "short", ["call00000"], "/messages/1/tool_calls/1"),
        # The producer's ids, one of them twice: one answer leaves the other call waiting
        # (one tool turn removed both from the check).
        (["a", "a"], ["a"], "given", ["a"], "/messages/1/tool_calls/1"),
        (["a", "a"], ["a", "a"], "given", ["a", "a"], None),
    ],
)
def test_sft_input_tool_turns_answer_their_calls(
    calls: list[str], answers: list[str | None], ids: str, answered: list[str], problem: str | None
) -> None:
    options = TrlOptions(tool_call_ids=cast(Any, ids))
    written = sft_input_record(_calls_record(calls, answers), options)
    assert [m["tool_call_id"] for m in written["messages"] if m["role"] == "tool"] == answered
    found = TrlCheck(VALIDATORS, "string").problem("sft", written)
    assert (found and found[0]) == problem
    if problem is not None:
        assert found == (problem, "a tool call is answered by a tool turn before the next turn")


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ('{"a": 1}', {"a": 1}),
        ('{"a": 1, "b": {"c": [1, 2]}}', {"a": 1, "b": {"c": [1, 2]}}),
        ('{"a": 123456789012345678901234567890}', None),
        ('{"a": 1, "a": 2}', None),
        ('{"a": {"b": 1, "b": 1}}', None),
        ('{"a": "123456789012345678901234567890"}', {"a": "123456789012345678901234567890"}),
        ("[1, 2]", None),
        ("not json", None),
    ],
)
def test_object_arguments_keep_the_text_when_the_object_would_not_say_it(
    text: str, kept: Any
) -> None:
    """--tool-arguments object: an argument text becomes its object only when the object says
    what the text says (None: the text is kept)."""
    call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": text}}
    loaded = arguments_as_objects(
        {"messages": [{"role": "assistant", "content": "", "tool_calls": [call]}]}
    )
    arguments = loaded["messages"][0]["tool_calls"][0]["function"]["arguments"]
    assert arguments == (text if kept is None else kept)


@pytest.mark.parametrize("target", ["layer3", "trl"])
def test_a_rollout_whose_branches_disagree_on_the_task_yields_no_pair(
    run_cli: RunCli, tmp_path: Path, target: str
) -> None:
    """The prompt is the chosen branch's task: paired, the rejected answer was to another
    task. Its PPO records (each with its own task) stay."""
    records = [
        branch("r-1", 0, task="Write a poem about cats", objective_score=1),
        branch("r-1", 1, task="Delete the production database", objective_score=0),
    ]
    path = write_jsonl(tmp_path / "in.jsonl", records)
    result = run_cli(path, args=("--target", target))
    assert result.exit_code == 0, result.stderr
    assert result.dpo() == []
    assert [
        r["branch_index"] if target == "trl" else r["provenance"]["branch_index"]
        for r in result.ppo()
    ] == [0, 1]
    assert result.manifest()["dpo"] == {
        "pairs": 0, "from_layer2": 0, "skipped_rollouts": {"branches_disagree_on_task": 1},
    }  # fmt: skip


@pytest.mark.parametrize("target", ["layer3", "trl"])
def test_tool_results_that_answer_no_call_are_counted(
    run_cli: RunCli, tmp_path: Path, target: str
) -> None:
    """A result before any call, and one after every call was answered, have no turn of
    their own: they were dropped without a count."""
    orphan = {"event": "tool_result", "data": {"output": "stray"}}
    call = {"event": "tool_call", "data": {"name": "ls", "args": {}, "call_id": "c1"}}
    answer = {"event": "tool_result", "data": {"output": "a", "call_id": "c1"}}
    records = [
        branch("r-1", 0, objective_score=1, tool_call_sequence=[orphan, call, answer, orphan]),
        branch("r-1", 1, objective_score=0, tool_call_sequence=[call, answer]),
    ]
    path = write_jsonl(tmp_path / "in.jsonl", records)
    result = run_cli(path, args=("--target", target))
    assert result.exit_code == 0, result.stderr
    assert result.manifest()["repaired"] == {"tool_result:without_call": 2}
    assert "repaired: tool_result:without_call 2" in result.stdout
    tools = [m for r in result.ppo() for m in r["completion" if target == "trl" else "messages"]]
    assert [m["content"] for m in tools if m["role"] == "tool"] == ["a", "a"]
