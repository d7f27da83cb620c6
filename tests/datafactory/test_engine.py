"""One engine for the command and the Python API: ``export()`` of the records and the command
on a file of them write byte-identical outputs, with one worker and with two."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from datafactory import export, load_rollouts
from datafactory.cli import main
from tests.datafactory.helpers import TWO_CPUS, branch, write_jsonl

OUTPUTS = ("dpo.jsonl", "ppo.jsonl", "rejects.jsonl", "manifest.json", "g3.json")
WORKERS = [1, pytest.param(2, marks=TWO_CPUS)]


def _mixed(seed: int) -> list[Any]:
    """Branches with repairs, duplicates, contract violations and Layer 2 records."""
    rng = random.Random(seed)
    records: list[Any] = []
    for r in range(40):
        for b in range(rng.randint(1, 4)):
            record = branch(
                f"roll-{r}",
                b,
                task=f"Task {r}: implement feature {rng.randint(0, 10**6)} in the module",
                final_answer=rng.choice(["", "  ", f"answer {r}.{b}", "same", "x" * 40 + str(b)]),
                objective_score=rng.randint(0, 1),
                total_score=rng.random(),
                tool_call_sequence=[
                    {"tool_name": "run", "arguments": {"n": b}, "result": "ok"},
                    {"event": "tool_call", "data": {"toolName": "read", "callId": "c1"}},
                    {"event": "tool_result", "data": {"callId": "c1", "error": "boom"}},
                ],
            )
            if rng.random() < 0.2:
                del record["rank"], record["total_score"]
            records.append(record)
    records += [records[3], records[10], {"rollout_id": "r-x", "task": 5}, [1, 2]]
    records.append(
        {
            "prompt": "Fix the failing test",
            "completion": "Fixed it",
            "reward": 1.3,
            "tool_call_sequence": [],
            "provenance": {
                "source": "wasmagent-rollout",
                "rollout_id": "roll-1",
                "branch_index": 7,
                "objective_score": 1,
                "exported_at_ms": 1750000000000,
                "n_gram_hash": "0123456789abcdef",
            },
        }
    )
    rng.shuffle(records)
    return records


def _values(paths: list[Path]) -> list[Any]:
    """The JSON value of every line of the inputs that parses."""
    values = []
    for path in paths:
        for line in path.read_bytes().splitlines():
            try:
                values.append(orjson.loads(line))
            except orjson.JSONDecodeError:
                continue
    return values


def _outputs(out: Path, records_name: str | None = None) -> dict[str, Any]:
    """Each output's bytes; ``records_name``: the input's name, made ``<records>``. The
    manifest as data, without the paths of the outputs and the rejects file's digest (the
    rejects file names its input)."""
    found: dict[str, Any] = {}
    for name in OUTPUTS:
        data = (out / name).read_bytes() if (out / name).exists() else b""
        if records_name is not None:
            data = data.replace(records_name.encode(), b"<records>")
        found[name] = data
    if found["manifest.json"]:
        manifest = orjson.loads(found["manifest.json"])
        for facts in manifest["outputs"].values():
            del facts["path"]
        manifest["outputs"]["rejects"].pop("sha256", None)
        found["manifest.json"] = manifest
    return found


def _options(out: Path, evals: Path | None, workers: int) -> dict[str, Any]:
    options: dict[str, Any] = {
        "rejects_path": str(out / "rejects.jsonl"),
        "manifest_path": str(out / "manifest.json"),
        "workers": workers,
    }
    if evals is None:
        options["allow_missing_g3"] = True
    else:
        options |= {"eval_items": str(evals), "g3_report_path": str(out / "g3.json")}
    return options


def _command(inputs: list[Path], out: Path, options: dict[str, Any]) -> int:
    argv = [a for path in inputs for a in ("--input", str(path))]
    argv += ["--output-dpo", str(out / "dpo.jsonl"), "--output-ppo", str(out / "ppo.jsonl")]
    argv += ["--rejects", options["rejects_path"], "--manifest", options["manifest_path"]]
    argv += ["--workers", str(options["workers"])]
    if "eval_items" in options:
        argv += ["--eval-items", options["eval_items"], "--g3-report", options["g3_report_path"]]
    else:
        argv.append("--allow-missing-g3")
    result = CliRunner().invoke(main, argv, catch_exceptions=False)
    return result.exit_code


def _export(records: list[Any], out: Path, options: dict[str, Any]) -> int:
    return export(records, str(out / "dpo.jsonl"), str(out / "ppo.jsonl"), **options).exit_code


def _both(tmp_path: Path, inputs: list[Path], evals: Path | None, workers: int) -> None:
    """The command on ``inputs`` and ``export`` of their records write the same DPO and PPO
    bytes; on one file of exactly those records, every output is the same."""
    values = _values(inputs)
    same = write_jsonl(tmp_path / "records.jsonl", values)
    outs = [tmp_path / name for name in ("files", "one-file", "api")]
    for out in outs:
        out.mkdir()
    codes = [
        _command(inputs, outs[0], _options(outs[0], evals, workers)),
        _command([same], outs[1], _options(outs[1], evals, workers)),
        _export(values, outs[2], _options(outs[2], evals, workers)),
    ]
    assert codes[0] == codes[1] == codes[2]
    files, one_file, api = _outputs(outs[0]), _outputs(outs[1], str(same)), _outputs(outs[2])
    assert one_file == api
    assert (files["dpo.jsonl"], files["ppo.jsonl"]) == (api["dpo.jsonl"], api["ppo.jsonl"])
    assert files["g3.json"] == api["g3.json"]


@pytest.mark.parametrize("workers", WORKERS)
def test_export_and_the_command_write_the_same_bytes(tmp_path: Path, workers: int) -> None:
    inputs = [
        write_jsonl(tmp_path / "a.jsonl", _mixed(1)),
        write_jsonl(tmp_path / "b.jsonl", _mixed(2)),
    ]
    with inputs[1].open("ab") as handle:
        handle.write(b"{broken\n\n")
    _both(tmp_path, inputs, None, workers)
    assert b"duplicate-branch" in (tmp_path / "api" / "rejects.jsonl").read_bytes()


@pytest.mark.parametrize("workers", WORKERS)
def test_export_and_the_command_agree_on_the_corpus(
    tmp_path: Path, corpus_dir: Path, workers: int
) -> None:
    fixtures = corpus_dir / "fixtures"
    inputs = sorted(fixtures.glob("*/*.jsonl"))
    inputs = [p for p in inputs if "eval-items" not in p.name]
    evals = fixtures / "wasmagent-js" / "eval-items.v1.jsonl"
    _both(tmp_path, inputs, evals, workers)
    manifest = orjson.loads((tmp_path / "api" / "manifest.json").read_bytes())
    assert manifest["g3"]["status"] == "passed"
    assert manifest["ppo"]["records"] > 0


@pytest.mark.parametrize("workers", WORKERS)
def test_export_of_typed_records_matches_the_command(tmp_path: Path, workers: int) -> None:
    path = write_jsonl(tmp_path / "in.jsonl", [r for r in _mixed(3) if isinstance(r, dict)])
    typed = list(load_rollouts(str(path)))
    out, api = tmp_path / "cmd", tmp_path / "typed"
    out.mkdir()
    api.mkdir()
    assert _command([path], out, _options(out, None, workers)) == 0
    assert _export(typed, api, _options(api, None, workers)) == 0
    for name in ("dpo.jsonl", "ppo.jsonl"):
        assert (out / name).read_bytes() == (api / name).read_bytes()


def test_a_refused_setting_names_its_field_in_each_callers_words(tmp_path: Path) -> None:
    from datafactory.cli import OPTION_NAMES
    from datafactory.run import run
    from datafactory.settings import SettingError, Settings

    settings = Settings(inputs=(str(tmp_path),), ppo_path=str(tmp_path / "p"), ngram=0)
    with pytest.raises(SettingError) as refused:
        run(settings)
    assert refused.value.setting == "ngram"
    assert str(refused.value) == "ngram must be at least 1 (words per n-gram), got 0"
    assert refused.value.render(OPTION_NAMES) == "--ngram must be at least 1, got 0"
    with pytest.raises(SettingError) as missing:
        run(Settings(inputs=(str(tmp_path),), output_format="ppo", allow_missing_g3=True))
    assert missing.value.setting == "ppo_path"
    assert str(missing.value) == "ppo_path is required with output_format='ppo'"
    assert missing.value.render(OPTION_NAMES) == "--output-ppo is required with --format ppo"


@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gzip"])
def test_eval_file_is_read_once_with_the_inputs_rules(
    tmp_path: Path, run_cli: Any, compressed: bool
) -> None:
    """Hashed as it is read (the manifest's digest is of the bytes stored), a byte-order
    mark allowed at its start, and --max-line-bytes its line limit too."""
    import gzip
    import hashlib

    rollouts = write_jsonl(tmp_path / "in.jsonl", [branch("r", 0), branch("r", 1)])
    data = b'\xef\xbb\xbf{"id": "q1", "question": "what is the capital of france"}\n'
    evals = tmp_path / ("eval.jsonl.gz" if compressed else "eval.jsonl")
    evals.write_bytes(gzip.compress(data) if compressed else data)
    result = run_cli(rollouts, args=("--eval-items", str(evals)))
    assert result.exit_code == 0, result.stderr
    assert result.manifest()["g3"]["eval_items"] == {
        "path": str(evals),
        "sha256": hashlib.sha256(evals.read_bytes()).hexdigest(),
        "items": 1,
    }
    limited = run_cli(rollouts, args=("--eval-items", str(evals), "--max-line-bytes", "20"))
    assert (limited.exit_code, limited.stderr) == (
        2,
        f"datafactory: error: {evals}:1: eval item too long: "
        f"{len(data) - 1} bytes, more than the limit of 20\n",  # the mark counted
    )
