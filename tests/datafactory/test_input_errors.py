"""Damaged and unusual inputs and eval files: a corrupt gzip (file, eval file, stdin, with
worker processes), gzip on stdin, eval files that are pipes, empty or nameless, and the NaN
reject detail. Each is a counted result or one exit-2 line naming the file, never a traceback,
and nothing is written."""

from __future__ import annotations

import errno
import gzip
import hashlib
import os
import subprocess
import sys
import threading
import zlib
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from contracts import locate
from datafactory import sources
from datafactory.cli import main
from datafactory.repair import Reject, normalise_line
from tests.datafactory.helpers import TWO_CPUS, RunCli, branch, read_jsonl, write_jsonl
from wiregate.record_validator import ValidatorSet

REPO = Path(__file__).resolve().parents[2]
# One rollout: two branches that make one DPO pair.
GOOD = b"".join(
    orjson.dumps(r) + b"\n" for r in (branch("r", 0), branch("r", 1, objective_score=0))
)
EVAL = b'{"id": "q1", "question": "What is the capital of France, answer in one word"}\n'

# A gzip member whose deflate data starts with a block of the reserved type 3.
_BAD_MEMBER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff\x07"


def _bit_flipped(data: bytes) -> bytes:
    """A gzip file whose first member is sound and whose second is damaged (zlib.error)."""
    return gzip.compress(data) + _BAD_MEMBER


def _bad_crc(data: bytes) -> bytes:
    """A gzip file whose trailer names the wrong CRC (gzip.BadGzipFile)."""
    blob = gzip.compress(data)
    return blob[:-8] + b"\0\0\0\0" + blob[-4:]


def _truncated(data: bytes) -> bytes:
    """A gzip file cut short (EOFError)."""
    return gzip.compress(data)[:-30]


_TRUNCATED = "Compressed file ended before the end-of-stream marker was reached"
_DAMAGED = "Error -3 while decompressing data: invalid block type"
DAMAGE = [
    pytest.param(_bit_flipped, _DAMAGED, id="bit-flipped"),
    pytest.param(_truncated, _TRUNCATED, id="truncated"),
    pytest.param(_bad_crc, "CRC check failed 0x0 != {crc:#x}", id="bad-crc"),
]


# --- corrupt gzip ------------------------------------------------------------------------


@pytest.mark.parametrize(("damage", "reason"), DAMAGE)
def test_corrupt_gzip_input(tmp_path: Path, run_cli: RunCli, damage: Any, reason: str) -> None:
    data = GOOD * 50
    path = tmp_path / "in.jsonl.gz"
    path.write_bytes(damage(data))
    run = run_cli(path)
    reason = reason.format(crc=zlib.crc32(data))
    assert (run.exit_code, run.stdout) == (2, "")
    assert run.stderr == f"datafactory: error: {path}: cannot read: corrupt gzip data ({reason})\n"
    assert list(run.out.iterdir()) == []


@pytest.mark.parametrize(("damage", "reason"), DAMAGE)
def test_corrupt_gzip_eval_file(tmp_path: Path, run_cli: RunCli, damage: Any, reason: str) -> None:
    data = EVAL * 50
    eval_path = tmp_path / "eval.jsonl.gz"
    eval_path.write_bytes(damage(data))
    run = run_cli(
        write_jsonl(tmp_path / "in.jsonl", [branch()]), args=("--eval-items", str(eval_path))
    )
    reason = reason.format(crc=zlib.crc32(data))
    assert (run.exit_code, run.stdout) == (2, "")
    assert run.stderr == (
        f"datafactory: error: {eval_path}: cannot read: corrupt gzip data ({reason})\n"
    )
    assert list(run.out.iterdir()) == []


def _command(out: Path, *args: str, g3: bool = False) -> list[str]:
    """The command line of a run into ``out``; without ``g3``, with --allow-missing-g3."""
    return [
        sys.executable,
        "-m",
        "datafactory",
        *([] if g3 else ["--allow-missing-g3"]),
        "--output-dpo",
        str(out / "dpo.jsonl"),
        "--output-ppo",
        str(out / "ppo.jsonl"),
        "--manifest",
        str(out / "manifest.json"),
        *args,
    ]


@TWO_CPUS
def test_corrupt_gzip_input_with_worker_processes(tmp_path: Path) -> None:
    # 9 MB before the damage: the first 8 MB chunk goes to a worker while the parent reads on.
    padding = (b" " * 100_000 + b"\n") * 90
    path = tmp_path / "big.jsonl.gz"
    path.write_bytes(_bit_flipped(GOOD + padding + GOOD.replace(b'"r"', b'"s"')))
    out = tmp_path / "out"
    out.mkdir()
    result = subprocess.run(
        _command(out, "--input", str(path), "--workers", "2"),
        cwd=REPO,
        capture_output=True,
        timeout=120,
    )
    assert (result.returncode, result.stdout) == (2, b"")
    assert result.stderr.decode() == (
        f"datafactory: error: {path}: cannot read: corrupt gzip data ({_DAMAGED})\n"
    )
    assert list(out.iterdir()) == []


@TWO_CPUS
def test_a_read_error_in_a_worker_is_one_line(
    tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker reads its own byte range of a plain file; its failure reaches the user as the
    same one line as the parent's would."""
    path = write_jsonl(tmp_path / "in.jsonl", [branch("r", 0), branch("r", 1)])
    parent = os.getpid()

    def failing_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if os.getpid() != parent:
            raise PermissionError(errno.EACCES, "Permission denied", str(file))
        return open(file, *args, **kwargs)

    monkeypatch.setattr(sources, "open", failing_open, raising=False)
    run = run_cli(path, args=("--workers", "2"))
    assert (run.exit_code, run.stdout) == (2, "")
    assert run.stderr == f"datafactory: error: {path}: cannot read: Permission denied\n"
    assert list(run.out.iterdir()) == []


# --- gzip on stdin -----------------------------------------------------------------------


def test_gzip_on_stdin_is_decompressed(tmp_path: Path) -> None:
    lines = GOOD + b"\n" + b"{broken\n"
    out = tmp_path / "out"
    out.mkdir()
    result = subprocess.run(
        _command(out, "--input", "-"),
        cwd=REPO,
        input=gzip.compress(lines),
        capture_output=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == b"datafactory: 1 lines rejected; pass --rejects FILE to keep them\n"
    manifest = orjson.loads((out / "manifest.json").read_bytes())
    assert manifest["lines"] == {"read": 4, "accepted": 2, "rejected": 1, "blank": 1}
    assert manifest["rejected"] == {"invalid-json": 1}
    # stdin is named "-" and hashed as read (decompressed): it has no file to hash.
    assert manifest["inputs"] == [
        {"path": "-", "sha256": hashlib.sha256(lines).hexdigest(), "lines": 4}
    ]
    assert [r["provenance"]["branch_index"] for r in read_jsonl(out / "ppo.jsonl")] == [0, 1]
    assert len(read_jsonl(out / "dpo.jsonl")) == 1


def test_corrupt_gzip_on_stdin(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    result = subprocess.run(
        _command(out, "--input", "-"),
        cwd=REPO,
        input=_bit_flipped(GOOD),
        capture_output=True,
        timeout=60,
    )
    assert (result.returncode, result.stdout) == (2, b"")
    assert result.stderr.decode() == (
        f"datafactory: error: -: cannot read: corrupt gzip data ({_DAMAGED})\n"
    )
    assert list(out.iterdir()) == []


def test_plain_stdin_is_read_as_it_is(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    result = CliRunner().invoke(main, _command(out, "--input", "-")[3:], input=GOOD)
    assert result.exit_code == 0, result.stderr
    manifest = orjson.loads((out / "manifest.json").read_bytes())
    assert manifest["lines"] == {"read": 2, "accepted": 2, "rejected": 0, "blank": 0}


# --- eval files the gate cannot use ------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_eval_items_from_a_pipe_are_refused(tmp_path: Path) -> None:
    """As ``--eval-items <(cat eval.jsonl)``: a pipe holds the items once, for the first read."""
    fifo = tmp_path / "eval.fifo"
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "wb") as pipe:  # waits for a reader
            pipe.write(EVAL)

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    out = tmp_path / "out"
    out.mkdir()
    inputs = write_jsonl(tmp_path / "in.jsonl", [branch()])
    try:  # in a process of its own: reading the pipe a second time would wait for ever
        result = subprocess.run(
            _command(out, "--input", str(inputs), "--eval-items", str(fifo), g3=True),
            cwd=REPO,
            capture_output=True,
            timeout=60,
        )
    finally:  # the run never opened the pipe: open it here, so the feeder ends
        reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        feeder.join(timeout=10)
        os.close(reader)
    assert not feeder.is_alive()
    assert (result.returncode, result.stdout) == (2, b"")
    assert result.stderr.decode() == (
        f"datafactory: error: {fifo}: not a regular file: the eval items are read twice, "
        "and a pipe or device would be empty the second time\n"
    )
    assert list(out.iterdir()) == []


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"", "no eval items"),
        (b"\n  \n\n", "no eval items"),
        # An item without a word is refused at its own line (it used to be skipped).
        (
            b'{"id": 1, "question": "?!"}\n{"id": 2, "question": ""}\n',
            "1: eval item has no word in question/prompt/task/text/input",
        ),
    ],
    ids=["empty", "blank", "no-words"],
)
def test_an_eval_set_with_nothing_to_check_is_refused(
    tmp_path: Path, run_cli: RunCli, content: bytes, problem: str
) -> None:
    eval_path = tmp_path / "eval.jsonl"
    eval_path.write_bytes(content)
    run = run_cli(
        write_jsonl(tmp_path / "in.jsonl", [branch()]), args=("--eval-items", str(eval_path))
    )
    assert (run.exit_code, run.stdout) == (2, "")
    if problem.startswith("1:"):
        assert run.stderr == f"datafactory: error: {eval_path}:{problem}\n"
    else:
        assert run.stderr == (
            f"datafactory: error: {eval_path}: {problem}: the G3 gate would check nothing\n"
        )
    assert list(run.out.iterdir()) == []


def test_an_eval_item_after_a_run_of_blank_lines_is_named_by_its_line(
    tmp_path: Path, run_cli: RunCli
) -> None:
    eval_path = tmp_path / "eval.jsonl"
    eval_path.write_bytes(EVAL + b"\n" * 100_000 + b'{"id": 2, "question": ""}\n')
    run = run_cli(
        write_jsonl(tmp_path / "in.jsonl", [branch()]), args=("--eval-items", str(eval_path))
    )
    assert (run.exit_code, run.stdout) == (2, "")
    assert run.stderr == (
        f"datafactory: error: {eval_path}:100002: eval item has no word in "
        "question/prompt/task/text/input\n"
    )


def test_an_empty_eval_field_name_is_a_usage_error(tmp_path: Path, run_cli: RunCli) -> None:
    eval_path = tmp_path / "eval.jsonl"
    eval_path.write_bytes(EVAL)
    run = run_cli(
        write_jsonl(tmp_path / "in.jsonl", [branch()]),
        args=("--eval-items", str(eval_path), "--eval-field", ""),
    )
    assert (run.exit_code, run.stdout) == (2, "")
    assert run.stderr == (
        "datafactory: error: the eval field name is empty: name the field that holds each "
        "eval item's text (or leave it out to search question/prompt/task/text/input)\n"
    )
    assert list(run.out.iterdir()) == []


# --- the NaN reject detail ---------------------------------------------------------------

VALIDATORS = ValidatorSet(locate(None))


@pytest.mark.parametrize(
    ("line", "detail"),
    [
        (
            b'{"total_score": NaN}',
            "NaN and Infinity are not JSON: unexpected character, expected a JSON value: "
            "line 1 column 17 (char 16)",
        ),
        (
            '{"t\u00e2che": "\u00e9t\u00e9", "x": [1, Infinity]}'.encode(),
            "NaN and Infinity are not JSON: unexpected character, expected a JSON value: "
            "line 1 column 27 (char 26)",
        ),
        (
            b'{"total_score": -Infinity}',
            "NaN and Infinity are not JSON: no digit after sign: line 1 column 18 (char 17)",
        ),
        # The word inside a string is not the token: the line is only cut short.
        (
            b'{"final_answer": "to Infinity and beyond, not NaN',
            "unexpected end of data: line 1 column 50 (char 49)",
        ),
        (b'{"task": "Infinity"', "unexpected end of data: line 1 column 20 (char 19)"),
    ],
    ids=["nan", "infinity-after-non-ascii", "minus-infinity", "word-in-string", "word-value"],
)
def test_nan_detail_only_at_a_nan_or_infinity_token(line: bytes, detail: str) -> None:
    with pytest.raises(Reject) as caught:
        normalise_line(line, VALIDATORS)
    assert (caught.value.code, caught.value.detail) == ("invalid-json", detail)


def test_truncated_line_mentioning_infinity_is_rejected_as_truncated(
    tmp_path: Path, run_cli: RunCli
) -> None:
    cut = orjson.dumps(branch("r", 2, final_answer="to Infinity and beyond"))[:-60]
    path = tmp_path / "in.jsonl"
    path.write_bytes(GOOD + cut + b"\n")
    run = run_cli(path)
    assert run.exit_code == 0, run.stderr
    (reject,) = run.rejects()
    assert (reject["line"], reject["reason"], reject["raw"]) == (3, "invalid-json", cut.decode())
    assert (
        reject["detail"]
        == f"unexpected end of data: line 1 column {len(cut) + 1} (char {len(cut)})"
    )


def test_a_file_name_with_a_newline_is_named_on_one_line(tmp_path: Path, run_cli: RunCli) -> None:
    """The name is written as it would be in JSON: a newline in it cannot start a line of
    its own (it split the error in two)."""
    missing = tmp_path / "a\nb\u202e.jsonl"
    run = run_cli(missing)
    assert (run.exit_code, run.stdout) == (2, "")
    assert run.stderr == f"datafactory: error: {tmp_path}/a\\u000ab\\u202e.jsonl: no such file\n"
