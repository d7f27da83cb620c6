"""Outputs never destroy an input or each other, never replace a device or FIFO, follow
symlinks, and are committed together: the G3 report with them, a failed sync discarding all,
a failed rename naming what is already in place."""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

import datafactory.outputs
from datafactory import export, load_rollouts
from datafactory.api import InputRecord
from datafactory.cli import main
from tests.datafactory.helpers import branch, write_jsonl
from tests.fulldisk import small_disk
from wiregate.errors import UserError

CLEAN = [
    branch("clean", 0, task="Write a haiku about autumn leaves", final_answer="leaves fall"),
    branch(
        "clean",
        1,
        task="Write a haiku about autumn leaves",
        final_answer="no",
        objective_score=0,
        total_score=0.0,
    ),
]
DIRTY = branch("dirty", 0, task="Explain: what is the capital of France, in one word?")
EVAL = [{"id": "q1", "question": "What is the capital of France, answer in one word"}]
EMPTY_REPORT = b'{\n  "contaminated": []\n}\n'
DIRTY_REPORT = (
    b'{\n  "contaminated": [\n    {\n      "rollout_id": "dirty",\n      "eval_item_id": "q1",'
    b'\n      "ngram": "what is the capital of"\n    }\n  ]\n}\n'
)


def _invoke(*argv: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [str(a) for a in argv], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def _tree(root: Path) -> dict[str, bytes | str]:
    """Every entry under ``root``: a file's bytes, or what else it is."""
    found: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        name = str(path.relative_to(root))
        if path.is_symlink():
            found[name] = f"symlink -> {os.readlink(path)}"
        elif stat.S_ISFIFO(path.lstat().st_mode):
            found[name] = "fifo"
        elif path.is_dir():
            found[name] = "directory"
        else:
            found[name] = path.read_bytes()
    return found


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """in.jsonl, a directory of inputs (dir/a.jsonl, dir/b.jsonl), eval.jsonl, out/."""
    write_jsonl(tmp_path / "in.jsonl", CLEAN)
    (tmp_path / "dir").mkdir()
    write_jsonl(tmp_path / "dir" / "a.jsonl", [branch("a", 0)])
    write_jsonl(tmp_path / "dir" / "b.jsonl", [branch("b", 0)])
    write_jsonl(tmp_path / "eval.jsonl", EVAL)
    (tmp_path / "out").mkdir()
    (tmp_path / "link-to-in.jsonl").symlink_to(tmp_path / "in.jsonl")
    (tmp_path / "dangling").symlink_to(tmp_path / "out" / "later.jsonl")
    return tmp_path


# The same file twice: (extra arguments, the option and path named second, named first).
SAME_FILE = {
    "output is an input": (
        ["--input", "in.jsonl", "--output-dpo", "in.jsonl"],
        "--output-dpo in.jsonl",
        "--input in.jsonl",
    ),
    "output is a file inside an input directory": (
        ["--input", "dir", "--output-ppo", "dir/b.jsonl"],
        "--output-ppo dir/b.jsonl",
        "--input dir/b.jsonl",
    ),
    "output is an input through a symlink": (
        ["--input", "in.jsonl", "--manifest", "link-to-in.jsonl"],
        "--manifest link-to-in.jsonl",
        "--input in.jsonl",
    ),
    "output is the eval file": (
        ["--input", "in.jsonl", "--rejects", "eval.jsonl"],
        "--rejects eval.jsonl",
        "--eval-items eval.jsonl",
    ),
    "three outputs share a new path": (
        ["--input", "in.jsonl", "--output-dpo", "x", "--output-ppo", "x", "--manifest", "x"],
        "--output-ppo x",
        "--output-dpo x",
    ),
    "the G3 report is an output": (
        ["--input", "in.jsonl", "--g3-report", "out/d.jsonl"],
        "--g3-report out/d.jsonl",
        "--output-dpo out/d.jsonl",
    ),
    "a dangling symlink and its target": (
        ["--input", "in.jsonl", "--output-dpo", "dangling", "--output-ppo", "out/later.jsonl"],
        "--output-ppo out/later.jsonl",
        "--output-dpo dangling",
    ),
}


@pytest.mark.parametrize("args, second, first", SAME_FILE.values(), ids=SAME_FILE.keys())
def test_an_output_may_not_be_an_input_the_eval_file_or_another_output(
    work: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], second: str, first: str
) -> None:
    monkeypatch.chdir(work)
    before = _tree(work)
    defaults = ["--output-dpo", "out/d.jsonl", "--output-ppo", "out/p.jsonl"]
    code, stdout, stderr = _invoke("--eval-items", "eval.jsonl", *defaults, *args)
    assert (code, stdout) == (2, "")
    assert stderr == f"datafactory: error: {second} is the same file as {first}\n"
    assert _tree(work) == before  # no byte changed, no file added


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["--output-dpo", "dir/new.jsonl"],
            "--output-dpo dir/new.jsonl is in --input dir, whose *.jsonl files the next run "
            "would read as inputs",
        ),
        (
            ["--manifest", "link-into-dir"],
            "--manifest link-into-dir is in --input dir, whose *.jsonl files the next run "
            "would read as inputs",
        ),
        (
            ["--rejects", "./dir/../dir/r.jsonl.gz"],
            "--rejects ./dir/../dir/r.jsonl.gz is in --input dir, whose *.jsonl files the next "
            "run would read as inputs",
        ),
    ],
)
def test_a_new_output_a_later_run_would_read_as_an_input_is_refused(
    work: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], line: str
) -> None:
    monkeypatch.chdir(work)
    (work / "link-into-dir").symlink_to(work / "dir" / "later.jsonl")  # dangling until written
    before = _tree(work)
    defaults = ["--input", "dir", "--allow-missing-g3", "--output-dpo", "out/d.jsonl"]
    code, stdout, stderr = _invoke(*defaults, "--output-ppo", "out/p.jsonl", *args)
    assert (code, stdout, stderr) == (2, "", f"datafactory: error: {line}\n")
    assert _tree(work) == before


def test_other_outputs_in_an_input_directory_are_allowed(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(work)
    code, _, stderr = _invoke(
        "--input", "dir", "--allow-missing-g3", "--format", "ppo",
        "--output-ppo", "out/p.jsonl", "--manifest", "dir/manifest.json",
    )  # fmt: skip
    assert (code, stderr) == (0, "")
    assert (work / "dir" / "manifest.json").exists()


def test_an_unused_output_of_the_other_format_is_ignored(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(work)
    before = _tree(work)
    code, _, stderr = _invoke(
        "--input", "in.jsonl", "--allow-missing-g3", "--format", "dpo",
        "--output-dpo", "out/d.jsonl", "--output-ppo", "in.jsonl",
    )  # fmt: skip
    assert (code, stderr) == (0, "")
    after = _tree(work)
    assert after.pop("out/d.jsonl") != b""
    assert after == before  # in.jsonl untouched


API_SAME_FILE = {
    "dpo and ppo": (
        {"dpo_path": "same.jsonl", "ppo_path": "same.jsonl", "allow_missing_g3": True},
        "ppo_path same.jsonl is the same file as dpo_path same.jsonl",
    ),
    "rejects and dpo": (
        {"dpo_path": "d.jsonl", "ppo_path": None, "allow_missing_g3": True,
         "rejects_path": "d.jsonl"},
        "rejects_path d.jsonl is the same file as dpo_path d.jsonl",
    ),
    "manifest and eval items": (
        {"dpo_path": "d.jsonl", "ppo_path": None, "eval_items": "eval.jsonl",
         "manifest_path": "eval.jsonl"},
        "manifest_path eval.jsonl is the same file as eval_items eval.jsonl",
    ),
}  # fmt: skip


@pytest.mark.parametrize("options, message", API_SAME_FILE.values(), ids=API_SAME_FILE.keys())
def test_the_python_api_refuses_the_same_file_twice_in_its_own_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, options: dict[str, Any], message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    write_jsonl(tmp_path / "eval.jsonl", EVAL)
    records = list(load_rollouts(str(write_jsonl(tmp_path / "in.jsonl", CLEAN))))
    consumed = []

    def given() -> Iterator[InputRecord]:
        for record in records:
            consumed.append(record)
            yield record

    before = _tree(tmp_path)
    with pytest.raises(UserError) as refused:
        export(given(), **options)
    assert str(refused.value) == message
    assert consumed == []  # refused before a record is read
    assert _tree(tmp_path) == before


def test_an_output_that_is_a_fifo_is_refused(work: Path) -> None:
    fifo = work / "out" / "p.fifo"
    os.mkfifo(fifo)
    code, stdout, stderr = _invoke(
        "--input", work / "in.jsonl", "--allow-missing-g3",
        "--output-dpo", work / "out" / "d.jsonl", "--output-ppo", fifo,
    )  # fmt: skip
    assert (code, stdout) == (2, "")
    assert stderr == (
        f"datafactory: error: {fifo}: not a regular file (outputs are written to a "
        "temporary file and renamed into place)\n"
    )
    assert _tree(work / "out") == {"p.fifo": "fifo"}


def test_an_output_symlink_is_followed_and_stays_a_symlink(work: Path) -> None:
    reference = work / "reference"
    reference.mkdir()
    argv: list[str | Path] = ["--input", work / "in.jsonl", "--allow-missing-g3"]
    code, _, _ = _invoke(*argv, "--output-dpo", reference / "d", "--output-ppo", reference / "p")
    assert code == 0
    real = work / "real"
    real.mkdir()
    (real / "d.jsonl").write_bytes(b"old content\n")
    out = work / "out"
    (out / "d.jsonl").symlink_to(real / "d.jsonl")
    (out / "p.jsonl").symlink_to(real / "p.jsonl")  # dangling: its target is created
    code, _, stderr = _invoke(
        *argv, "--output-dpo", out / "d.jsonl", "--output-ppo", out / "p.jsonl",
        "--manifest", out / "m.json",
    )  # fmt: skip
    assert (code, stderr) == (0, "")
    written = _tree(out)
    manifest = orjson.loads(written.pop("m.json"))
    assert written == {
        "d.jsonl": f"symlink -> {real / 'd.jsonl'}",
        "p.jsonl": f"symlink -> {real / 'p.jsonl'}",
    }
    dpo, ppo = (reference / "d").read_bytes(), (reference / "p").read_bytes()
    assert _tree(real) == {"d.jsonl": dpo, "p.jsonl": ppo}  # no temporary file left either
    assert manifest["outputs"]["dpo"] == {
        "path": str(out / "d.jsonl"),
        "sha256": _sha256(dpo),
        "records": 1,
    }


def test_g3_report_in_a_missing_directory_fails_before_any_work(work: Path) -> None:
    report = work / "nowhere" / "g3.json"
    code, stdout, stderr = _invoke(
        "--input", work / "in.jsonl", "--eval-items", work / "eval.jsonl",
        "--output-dpo", work / "out" / "d.jsonl", "--output-ppo", work / "out" / "p.jsonl",
        "--g3-report", report,
    )  # fmt: skip
    assert (code, stdout) == (2, "")
    assert stderr == (
        f"datafactory: error: {report}: directory '{work / 'nowhere'}' does not exist\n"
    )
    assert _tree(work / "out") == {}


def test_g3_report_that_is_a_directory_fails_before_any_work(work: Path) -> None:
    code, stdout, stderr = _invoke(
        "--input", work / "in.jsonl", "--eval-items", work / "eval.jsonl",
        "--output-dpo", work / "out" / "d.jsonl", "--output-ppo", work / "out" / "p.jsonl",
        "--g3-report", work / "dir",
    )  # fmt: skip
    assert (code, stdout, stderr) == (
        2,
        "",
        f"datafactory: error: {work / 'dir'}: is a directory\n",
    )
    assert _tree(work / "out") == {}


def _g3_run(work: Path, records: list[Any], *extra: str) -> tuple[int, str, dict[str, Any]]:
    out = work / "out"
    code, _, stderr = _invoke(
        "--input", write_jsonl(work / "g3-in.jsonl", records), "--ngram", "5",
        "--eval-items", work / "eval.jsonl", "--output-dpo", out / "d.jsonl",
        "--output-ppo", out / "p.jsonl", "--manifest", out / "m.json",
        "--g3-report", out / "g3.json", *extra,
    )  # fmt: skip
    return code, stderr, _tree(out)


def test_g3_violation_commits_the_report_alone(work: Path) -> None:
    code, stderr, written = _g3_run(work, [*CLEAN, DIRTY])
    assert code == 1
    assert stderr == (
        "datafactory: G3 failed: 1 contaminated rollouts; nothing written but "
        f"{work / 'out' / 'g3.json'} (use --drop-contaminated to export without them)\n"
    )
    assert written == {"g3.json": DIRTY_REPORT}


def test_g3_report_of_a_clean_run_is_committed_and_in_the_manifest(work: Path) -> None:
    code, stderr, written = _g3_run(work, CLEAN)
    assert (code, stderr) == (0, "")
    assert sorted(written) == ["d.jsonl", "g3.json", "m.json", "p.jsonl"]
    assert written["g3.json"] == EMPTY_REPORT
    manifest = orjson.loads(written["m.json"])
    assert manifest["outputs"]["g3_report"] == {
        "path": str(work / "out" / "g3.json"),
        "sha256": _sha256(EMPTY_REPORT),
        "records": 0,
    }


def test_g3_report_lists_dropped_rollouts(work: Path) -> None:
    code, _, written = _g3_run(work, [*CLEAN, DIRTY], "--drop-contaminated")
    assert code == 0
    assert written["g3.json"] == DIRTY_REPORT
    assert orjson.loads(written["m.json"])["outputs"]["g3_report"] == {
        "path": str(work / "out" / "g3.json"),
        "sha256": _sha256(DIRTY_REPORT),
        "records": 1,
    }


def test_the_python_api_writes_the_g3_report(work: Path) -> None:
    records = list(load_rollouts(str(work / "in.jsonl")))
    out = work / "out"
    result = export(
        records, str(out / "d.jsonl"), None, allow_missing_g3=True,
        g3_report_path=str(out / "g3.json"),
    )  # fmt: skip
    assert result.exit_code == 0
    assert sorted(_tree(out)) == ["d.jsonl", "g3.json"]
    assert (out / "g3.json").read_bytes() == EMPTY_REPORT


def _failing_on_call(number: int, real: Callable[..., Any], error: OSError) -> Callable[..., Any]:
    calls = iter(range(1, 1000))

    def call(*args: Any) -> Any:
        if next(calls) == number:
            raise error
        return real(*args)

    return call


def _four_outputs(work: Path) -> tuple[int, str, str]:
    out = work / "out"
    return _invoke(
        "--input", work / "in.jsonl", "--allow-missing-g3", "--workers", "1",
        "--output-dpo", out / "d.jsonl", "--output-ppo", out / "p.jsonl",
        "--rejects", out / "r.jsonl", "--manifest", out / "m.json",
    )  # fmt: skip


def test_a_failed_sync_discards_every_output(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    full = OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(os, "fsync", _failing_on_call(2, os.fsync, full))
    code, stdout, stderr = _four_outputs(work)
    assert (code, stdout) == (2, "")
    assert stderr == (
        f"datafactory: error: {work / 'out' / 'p.jsonl'}: No space left on device; "
        "nothing written\n"
    )
    assert _tree(work / "out") == {}


def test_a_directory_removed_during_the_run_discards_every_output(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (work / "va").mkdir()
    (work / "vb").mkdir()
    finish = datafactory.outputs.AtomicOutput.finish

    def finish_after_vb_is_gone(output: datafactory.outputs.AtomicOutput) -> None:
        if (work / "vb").exists():  # rm -r vb, while the run writes there
            shutil.rmtree(work / "vb")
        finish(output)

    monkeypatch.setattr(datafactory.outputs.AtomicOutput, "finish", finish_after_vb_is_gone)
    code, _, stderr = _invoke(
        "--input", work / "in.jsonl", "--allow-missing-g3", "--output-dpo", work / "va" / "d",
        "--output-ppo", work / "vb" / "p", "--manifest", work / "va" / "m",
    )  # fmt: skip
    assert (code, stderr) == (
        2,
        f"datafactory: error: {work / 'vb' / 'p'}: No such file or directory; nothing written\n",
    )
    assert _tree(work / "va") == {}


def test_a_failed_rename_names_the_files_already_in_place(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _four_outputs(work)[0] == 0
    expected = _tree(work / "out")
    for path in (work / "out").iterdir():
        path.unlink()
    gone = OSError(errno.ENOENT, "No such file or directory")
    monkeypatch.setattr(os, "replace", _failing_on_call(2, os.replace, gone))
    code, stdout, stderr = _four_outputs(work)
    out = work / "out"
    assert (code, stdout) == (2, "")
    assert stderr == (
        f"datafactory: error: {out / 'p.jsonl'}: No such file or directory; already in place: "
        f"{out / 'd.jsonl'}; not written: {out / 'p.jsonl'}, {out / 'r.jsonl'}, "
        f"{out / 'm.json'}\n"
    )
    assert _tree(out) == {"d.jsonl": expected["d.jsonl"]}


def test_a_failed_first_rename_writes_nothing(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    denied = OSError(errno.EACCES, "Permission denied")
    monkeypatch.setattr(os, "replace", _failing_on_call(1, os.replace, denied))
    code, _, stderr = _four_outputs(work)
    assert (code, stderr) == (
        2,
        f"datafactory: error: {work / 'out' / 'd.jsonl'}: Permission denied; nothing written\n",
    )
    assert _tree(work / "out") == {}


@pytest.mark.parametrize("where", ["temp-dir", "outputs"])
def test_a_full_disk_names_the_file_it_could_not_write(work: Path, where: str) -> None:
    """A real full disk (a 1 MiB tmpfs) under the spill or the outputs: one line naming the
    file whose write failed, exit 2, nothing written, nothing left on that disk."""
    with small_disk(work / "disk", "1m") as disk:
        data = work / "big.jsonl"
        write_jsonl(data, [branch(f"r{n}", b, task="x" * 2000) for n in range(400) for b in (0, 1)])
        out = disk if where == "outputs" else work / "out"
        spill = disk if where == "temp-dir" else work / "out"
        code, stdout, stderr = _invoke(
            "--input", data, "--allow-missing-g3", "--workers", "1", "--temp-dir", spill,
            "--output-dpo", out / "d.jsonl", "--output-ppo", out / "p.jsonl",
        )  # fmt: skip
        assert (code, stdout) == (2, "")
        assert stderr.startswith("datafactory: error: ")
        path, reason = stderr.removeprefix("datafactory: error: ").split(": ", 1)
        assert reason == "No space left on device; nothing written\n"
        named = Path(path)
        # a spill file (in the run's own directory under --temp-dir), or an output's
        assert (named.parent.parent if where == "temp-dir" else named.parent) == disk
        assert list(disk.iterdir()) == []


@pytest.mark.parametrize("target", ["layer3", "trl"])
def test_file_names_that_are_no_utf8_are_written_escaped(tmp_path: Path, target: str) -> None:
    """Linux keeps any bytes in a name (Python: lone surrogates), JSON holds text: the run
    stopped with a traceback and exit 1 (a G3 violation's code) at the manifest, the rejects
    file or the dataset card."""
    inputs, out = tmp_path / "in", tmp_path / "out"
    inputs.mkdir()
    out.mkdir()
    name = os.fsdecode(b"\xff.jsonl")
    write_jsonl(inputs / name, [branch("r", 0), branch("r", 1, objective_score=0), {"x": 1}])
    dpo = str(out / os.fsdecode(b"d\xfe.jsonl"))
    argv = ["--input", str(inputs), "--allow-missing-g3", "--target", target]
    argv += ["--output-dpo", dpo, "--output-ppo", str(out / "p.jsonl")]
    argv += ["--manifest", str(out / "m.json"), "--rejects", str(out / "r.jsonl")]
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == 0, result.output
    manifest = orjson.loads((out / "m.json").read_bytes())
    assert manifest["inputs"][0]["path"] == f"{inputs}/\\xff.jsonl"
    assert manifest["outputs"]["dpo"]["path"] == f"{out}/d\\xfe.jsonl"
    rejected = orjson.loads((out / "r.jsonl").read_bytes())
    assert (rejected["file"], rejected["line"]) == (f"{inputs}/\\xff.jsonl", 3)
