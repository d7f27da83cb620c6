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
