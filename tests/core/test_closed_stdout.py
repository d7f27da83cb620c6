"""A reader that stops reading (``| head``) ends a command quietly with exit 141, the status a
shell reports for a tool SIGPIPE ended, and leaves no temporary file; the exporter, whose
outputs are in place by then, keeps its run's exit code. Real processes, real pipes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.datafactory.helpers import branch

REPO = Path(__file__).resolve().parents[2]
WIREGATE = [sys.executable, "-m", "wiregate"]


def _environment(tmp: Path) -> dict[str, str]:
    return {**os.environ, "TMPDIR": str(tmp)}


def _invalid_lines(path: Path, count: int) -> Path:
    path.write_bytes(b"".join(b'{"x": %d}\n' % n for n in range(count)))
    return path


@pytest.mark.parametrize("form", ["text", "json"])
def test_validate_whose_reader_leaves_after_one_line(tmp_path: Path, form: str) -> None:
    records = _invalid_lines(tmp_path / "bad.jsonl", 50_000)  # far more than a pipe holds
    temp = tmp_path / "tmp"
    temp.mkdir()
    process = subprocess.Popen(
        [*WIREGATE, "validate", "--format", form, str(records)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO, env=_environment(temp),
    )  # fmt: skip
    assert process.stdout is not None
    first = process.stdout.readline()
    process.stdout.close()  # as `head -1` does
    _, stderr = process.communicate(timeout=60)
    assert (process.returncode, stderr) == (141, b"")
    assert first == (
        f"{records}:1: /: cannot tell the record type (a JSON object)\n".encode()
        if form == "text"
        else b"{\n"
    )
    assert list(temp.iterdir()) == []  # the JSON report's spooled file is gone too


def test_diff_whose_reader_left_before_it_printed(tmp_path: Path) -> None:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text('{"type": "object", "required": ["a"]}')
    new.write_text('{"type": "object", "required": ["a", "b"]}')
    process = subprocess.Popen(
        [*WIREGATE, "diff", str(old), str(new)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO,
    )  # fmt: skip
    assert process.stdout is not None
    process.stdout.close()  # before the command starts: its first write finds no reader
    _, stderr = process.communicate(timeout=60)
    assert (process.returncode, stderr) == (141, b"")


def test_the_exporter_keeps_its_exit_code_when_its_summary_finds_no_reader(
    tmp_path: Path,
) -> None:
    rollouts = tmp_path / "in.jsonl"
    rollouts.write_bytes(
        b"".join(
            orjson.dumps(branch("r1", i, objective_score=i % 2, total_score=0.3 * i)) + b"\n"
            for i in range(3)
        )
    )
    dpo, ppo = tmp_path / "dpo.jsonl", tmp_path / "ppo.jsonl"
    process = subprocess.Popen(
        [
            sys.executable, "-m", "datafactory", "--input", str(rollouts),
            "--output-dpo", str(dpo), "--output-ppo", str(ppo), "--allow-missing-g3",
        ],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO,
    )  # fmt: skip
    assert process.stdout is not None
    process.stdout.close()
    _, stderr = process.communicate(timeout=120)
    assert (process.returncode, stderr) == (0, b"")
    assert (len(dpo.read_bytes().splitlines()), len(ppo.read_bytes().splitlines())) == (1, 3)


def _schemas(tmp_path: Path, properties: int) -> tuple[Path, Path]:
    """OLD and NEW with ``properties`` properties changed from string to integer: that many
    findings (``properties`` 3,000: a report of 335 kB, more than a pipe holds)."""
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    for path, kind in ((old, "string"), (new, "integer")):
        fields = {f"p{n}": {"type": kind} for n in range(properties)}
        path.write_bytes(orjson.dumps({"type": "object", "properties": fields}))
    return old, new


def _close_stdout() -> None:
    os.close(1)


@pytest.mark.parametrize("arguments", [["--version"], ["--help"], ["diff", "OLD", "NEW"]])
def test_a_standard_output_closed_from_the_start_is_a_reader_that_left(
    tmp_path: Path, arguments: list[str]
) -> None:
    old, new = _schemas(tmp_path, 1)
    given = [str(old) if a == "OLD" else str(new) if a == "NEW" else a for a in arguments]
    process = subprocess.run(
        [*WIREGATE, *given], stderr=subprocess.PIPE, cwd=REPO, preexec_fn=_close_stdout,
        check=False,
    )  # fmt: skip
    assert (process.returncode, process.stderr) == (141, b"")


def test_a_closed_standard_error_changes_no_exit_code(tmp_path: Path) -> None:
    old, new = _schemas(tmp_path, 1)

    def close_stderr() -> None:
        os.close(2)

    process = subprocess.run(
        [*WIREGATE, "diff", str(old), str(new)], stdout=subprocess.PIPE, cwd=REPO,
        preexec_fn=close_stderr, check=False,
    )  # fmt: skip
    assert process.returncode == 1  # incompatible, as with standard error open
    assert process.stdout.endswith(b"INCOMPATIBLE (backward, strict): 1 change (1 error)\n")


@pytest.mark.parametrize("unbuffered", ["", "1"])
def test_a_report_larger_than_the_pipe_whose_reader_leaves(tmp_path: Path, unbuffered: str) -> None:
    """Under PYTHONUNBUFFERED a write the leaving reader cut short lost the rest without a
    word (standard output had no buffered layer to retry it): exit 1, as if all was read."""
    old, new = _schemas(tmp_path, 3000)
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        environment["PYTHONUNBUFFERED"] = unbuffered
    process = subprocess.Popen(
        [*WIREGATE, "diff", str(old), str(new)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO, env=environment,
    )  # fmt: skip
    assert process.stdout is not None
    first = process.stdout.readline()
    process.stdout.close()
    _, stderr = process.communicate(timeout=60)
    assert (first, process.returncode, stderr) == (
        b"old: 2020-12 (default: no draft-specific keyword)\n",
        141,
        b"",
    )


FULL = Path("/dev/full")  # every write fails with ENOSPC
needs_full = pytest.mark.skipif(not FULL.exists(), reason="no /dev/full here")


@needs_full
@pytest.mark.parametrize(
    ("arguments", "properties"),
    [(["--version"], 1), (["diff", "OLD", "NEW"], 1), (["diff", "OLD", "NEW"], 3000)],
)
def test_a_standard_output_on_a_full_disk_is_an_io_error(
    tmp_path: Path, arguments: list[str], properties: int
) -> None:
    """It was an internal error (exit 3), or exit 120 with a traceback at exit; a report
    larger than the buffer (written past it) was an internal error still."""
    old, new = _schemas(tmp_path, properties)
    given = [str(old) if a == "OLD" else str(new) if a == "NEW" else a for a in arguments]
    with FULL.open("wb") as full:
        process = subprocess.run(
            [*WIREGATE, *given], stdout=full, stderr=subprocess.PIPE, cwd=REPO, check=False
        )
    assert (process.returncode, process.stderr) == (
        2,
        b"wiregate: error: standard output: No space left on device\n",
    )


@needs_full
def test_the_exporter_keeps_its_exit_code_when_its_summary_cannot_be_written(
    tmp_path: Path,
) -> None:
    rollouts = tmp_path / "in.jsonl"
    rollouts.write_bytes(orjson.dumps(branch("r1", 0)) + b"\n")
    ppo = tmp_path / "ppo.jsonl"
    command = [sys.executable, "-m", "datafactory", "--input", str(rollouts), "--format", "ppo"]
    command += ["--output-ppo", str(ppo), "--allow-missing-g3"]
    with FULL.open("wb") as full:
        process = subprocess.run(
            command, stdout=full, stderr=subprocess.PIPE, cwd=REPO, check=False
        )
    assert (process.returncode, process.stderr) == (
        0,
        b"datafactory: warning: standard output: No space left on device; the rest of what "
        b"the run prints was not printed\n",
    )
    assert len(ppo.read_bytes().splitlines()) == 1


@needs_full
@pytest.mark.parametrize(
    ("program", "arguments", "code"),
    [
        ("datafactory", ["--bogus"], 2),
        ("datafactory", ["--input", "{bad", "--allow-missing-g3", "--format", "ppo",
                         "--output-ppo", "p.jsonl"], 2),
        ("wiregate", ["diff", "missing.json", "missing.json"], 2),
    ],
)  # fmt: skip
def test_a_standard_error_that_cannot_be_written_changes_no_exit_code(
    tmp_path: Path, program: str, arguments: list[str], code: int
) -> None:
    """click turned the failed error line into exit 1, which reads as "invalid" or as a G3
    violation."""
    with FULL.open("wb") as full:
        process = subprocess.run(
            [sys.executable, "-m", program, *arguments], stdout=subprocess.PIPE, stderr=full,
            cwd=tmp_path, check=False,
        )  # fmt: skip
    assert process.returncode == code


@needs_full
@pytest.mark.parametrize(
    ("arguments", "code", "stderr"),
    [
        (["--help"], 2, b"datafactory: error: standard output: No space left on device\n"),
        (["store", "--help"], 2, b"datafactory: error: standard output: No space left on device\n"),
    ],
)
def test_the_exporters_other_output_on_a_full_disk_is_an_io_error(
    arguments: list[str], code: int, stderr: bytes
) -> None:
    """--help printed a traceback, then "Exception ignored", and exited 120."""
    with FULL.open("wb") as full:
        process = subprocess.run(
            [sys.executable, "-m", "datafactory", *arguments], stdout=full,
            stderr=subprocess.PIPE, cwd=REPO, check=False,
        )  # fmt: skip
    assert (process.returncode, process.stderr) == (code, stderr)


def test_the_stores_quarantine_to_a_closed_standard_output(tmp_path: Path) -> None:
    """Written to the binary buffer and flushed at exit: "Exception ignored", exit 120."""
    from datafactory.ingest.store import connect

    connect(str(tmp_path / "store")).close()
    process = subprocess.run(
        [sys.executable, "-m", "datafactory", "store", "quarantine", "--format", "jsonl",
         str(tmp_path / "store")],
        stderr=subprocess.PIPE, cwd=REPO, preexec_fn=_close_stdout, check=False,
    )  # fmt: skip
    assert (process.returncode, process.stderr) == (0, b"")


def test_a_g3_failure_says_so_whatever_becomes_of_its_standard_output(tmp_path: Path) -> None:
    """Its verdict went to standard error after the details to standard output: a closed
    standard output left exit 1 without a word."""
    question = "What is the capital city of France and which river flows through it"
    eval_path = tmp_path / "eval.jsonl"
    eval_path.write_bytes(orjson.dumps({"id": "q", "question": question}) + b"\n")
    rollouts = tmp_path / "in.jsonl"
    rollouts.write_bytes(orjson.dumps(branch("r", 0, task=question)) + b"\n")
    command = [sys.executable, "-m", "datafactory", "--input", str(rollouts), "--format", "ppo"]
    command += ["--output-ppo", str(tmp_path / "p.jsonl"), "--eval-items", str(eval_path)]
    process = subprocess.run(
        command, stderr=subprocess.PIPE, cwd=REPO, preexec_fn=_close_stdout, check=False
    )
    assert (process.returncode, process.stderr) == (
        1,
        b"datafactory: G3 failed: 1 contaminated rollouts; nothing written (use "
        b"--drop-contaminated to export without them)\n",
    )
