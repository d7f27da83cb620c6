"""`wiregate validate -`: stdin is told JSON from JSON Lines by its first lines, gives the same
results as the same bytes in a file, streams JSON Lines, and can be given only once."""

from __future__ import annotations

import gzip
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from contracts import locate
from tests.fulldisk import small_disk
from tests.validate.helpers import dpo_record, run, write_jsonl
from wiregate.record_validator import ValidatorSet
from wiregate.validation import FileProblem, validate_files

REPO_ROOT = Path(__file__).resolve().parents[2]
PRODUCER = REPO_ROOT / "contracts/fixtures/rollout-wire/DpoRecord/valid/producer.json"
ONE_VALID = "1 records in 1 files, 1 valid, 0 invalid, 0 broken lines (auto picked: DpoRecord 1)\n"
SECOND_HAS_NO_PROMPT = [
    '-:1: /1/prompt: must be at least 1 characters long, got "" [DpoRecord]',
    "2 records in 1 files, 1 valid, 1 invalid, 0 broken lines (auto picked: DpoRecord 2)",
]


def test_a_pretty_printed_record_on_stdin_is_one_document_as_in_a_file() -> None:
    data = PRODUCER.read_bytes()
    assert data.count(b"\n") == 37  # one record over many lines

    assert run("validate", str(PRODUCER)) == (0, ONE_VALID, "")
    assert run("validate", "-", stdin=data) == (0, ONE_VALID, "")


@pytest.mark.parametrize(
    "data",
    [
        json.dumps([dpo_record(), dpo_record(prompt="")], indent=2).encode(),
        json.dumps([dpo_record(), dpo_record(prompt="")]).encode() + b"\n\n",
        gzip.compress(json.dumps([dpo_record(), dpo_record(prompt="")], indent=4).encode()),
        # a pretty array whose records are written one per line, the last without a comma
        b"[\n" + json.dumps(dpo_record()).encode() + b",\n"
        b"\n" + json.dumps(dpo_record(prompt="")).encode() + b"\n]\n",
    ],
    ids=["pretty-array", "one-line-array", "gzip-pretty-array", "array-of-lines"],
)
def test_an_array_of_records_on_stdin_is_one_document(data: bytes) -> None:
    code, out, err = run("validate", "-", stdin=data)

    assert (code, err) == (1, "")
    assert out.splitlines() == SECOND_HAS_NO_PROMPT


def test_a_one_element_array_written_as_lines_is_one_document() -> None:
    data = b"[\n" + json.dumps(dpo_record(prompt="")).encode() + b"\n]\n"

    code, out, _ = run("validate", "-", stdin=data)

    assert code == 1
    assert out.splitlines() == [
        '-:1: /0/prompt: must be at least 1 characters long, got "" [DpoRecord]',
        "1 records in 1 files, 0 valid, 1 invalid, 0 broken lines (auto picked: DpoRecord 1)",
    ]


def test_json_lines_on_stdin_give_what_the_file_gives(tmp_path: Path) -> None:
    lines: list[bytes | dict[str, Any]] = [
        dpo_record(),
        dpo_record(rejected=""),
        b"",
        dpo_record(chosen=5),
    ]
    path = write_jsonl(tmp_path / "a.jsonl", lines)

    code, out, _ = run("validate", "-", stdin=path.read_bytes())

    assert code == 1
    assert out.splitlines() == [
        '-:2: /rejected: must be at least 1 characters long, got "" [DpoRecord]',
        "-:4: /chosen: expected type string, got 5 [DpoRecord]",
        "3 records in 1 files, 1 valid, 2 invalid, 0 broken lines (auto picked: DpoRecord 3)",
    ]
    assert run("validate", str(path))[1] == out.replace("-:", f"{path}:")


def test_json_lines_whose_first_line_is_broken_stay_json_lines() -> None:
    data = b'{"prompt": "trunc\n' + json.dumps(dpo_record()).encode() + b"\n"

    code, out, _ = run("validate", "-", stdin=data)

    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("-:1: /: not valid JSON: ")
    assert lines[1:] == [
        "1 records in 1 files, 1 valid, 0 invalid, 1 broken lines (auto picked: DpoRecord 1)"
    ]


def test_a_truncated_document_on_stdin_is_not_valid_json_as_in_a_file(tmp_path: Path) -> None:
    data = PRODUCER.read_bytes()[:-40]
    path = tmp_path / "cut.json"
    path.write_bytes(data)
    _, _, file_err = run("validate", str(path))

    code, out, err = run("validate", "-", stdin=data)

    assert code == 2
    assert out == "0 records in 1 files, 0 valid, 0 invalid, 0 broken lines, 1 file errors\n"
    assert err.startswith("wiregate: error: -: not valid JSON: ")
    assert err == file_err.replace(str(path), "-")


def test_a_document_on_stdin_over_64_mib_names_the_limit() -> None:
    """The limit as documented, whatever the lines read before the rest (it said 67108862,
    or another number each run, less the bytes of the first lines)."""
    data = b"{\n" + b'"a": 1,\n' * 9_000_000  # 72 MB of one pretty-printed document
    assert run("validate", "-", stdin=data) == (
        2,
        "0 records in 1 files, 0 valid, 0 invalid, 0 broken lines, 1 file errors\n",
        "wiregate: error: -: larger than the limit of 67108864 bytes\n",
    )


def test_empty_stdin_is_no_records_as_an_empty_jsonl_file() -> None:
    assert run("validate", "-", stdin=b"") == (
        0,
        "0 records in 1 files, 0 valid, 0 invalid, 0 broken lines\n",
        "",
    )


@pytest.mark.parametrize("files", [["-", "-"], ["a.jsonl", "-", "b.jsonl", "-"]])
def test_stdin_given_twice_is_refused_before_anything_is_read(files: list[str]) -> None:
    assert run("validate", *files, stdin=b"{}\n") == (
        2,
        "",
        "wiregate: error: two FILES cannot both be stdin\n",
    )


class _CountingStdin(io.RawIOBase):
    """Stdin that counts how many bytes have been taken from it."""

    def __init__(self, data: bytes) -> None:
        self._data = io.BytesIO(data)
        self.taken = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        n = self._data.readinto(buffer)
        self.taken += n
        return n


class _Stdin:
    def __init__(self, raw: _CountingStdin) -> None:
        self.buffer = io.BufferedReader(raw)


def test_json_lines_on_stdin_are_streamed_not_read_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [json.dumps(dpo_record(rejected="" if n == 2 else "r")).encode() for n in range(5000)]
    data = b"\n".join(lines) + b"\n"
    raw = _CountingStdin(data)
    monkeypatch.setattr(sys, "stdin", _Stdin(raw))
    taken_at_first_problem: list[int] = []

    def on_problem(_problem: FileProblem) -> None:
        taken_at_first_problem.append(raw.taken)

    report = validate_files(["-"], "auto", ValidatorSet(locate(REPO_ROOT)), on_problem)

    assert (report.records, report.invalid) == (5000, 1)
    assert len(data) > 1_000_000
    assert taken_at_first_problem[0] <= 64 * 1024  # the third line, from the first buffers


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_json_report_is_whole_or_absent_when_interrupted(tmp_path: Path, signum: int) -> None:
    """The JSON report is one document: a signal halfway leaves nothing on stdout (the text
    report prints each problem as it is found)."""
    wiregate = Path(sys.executable).with_name("wiregate")
    process = subprocess.Popen(
        [str(wiregate), "validate", "--format", "json", "-"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
    )  # fmt: skip
    assert process.stdin is not None
    process.stdin.write(b'{"record_type": "nope"}\n' * 2000)
    process.stdin.flush()
    time.sleep(1.0)  # started and reading (a signal while starting gives the same outcome)
    process.send_signal(signum)
    stdout, stderr = process.communicate(timeout=30)
    code = 130 if signum == signal.SIGINT else 143
    word = "interrupted" if signum == signal.SIGINT else "terminated"
    assert (process.returncode, stdout, stderr) == (code, b"", f"wiregate: {word}\n".encode())


def test_json_report_on_a_full_temporary_disk_is_one_line(tmp_path: Path) -> None:
    """The JSON report's problems wait in the temporary directory: a full one is an input
    error naming it (exit 2), not an internal error."""
    data = tmp_path / "many.jsonl"
    data.write_bytes(b"{}\n" * 150_000)  # about 20 MB of problems: past the 8 MB in memory
    with small_disk(tmp_path / "disk", "1m") as disk:
        wiregate = Path(sys.executable).with_name("wiregate")
        done = subprocess.run(
            [str(wiregate), "validate", "--format", "json", str(data)],
            capture_output=True, text=True, env={**os.environ, "TMPDIR": str(disk)},
        )  # fmt: skip
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"wiregate: error: {disk}: cannot hold the JSON report: No space left on device\n"
    )
