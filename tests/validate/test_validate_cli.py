"""`wiregate validate`: output format, exit codes, broken lines, formats of input."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.validate.helpers import TASK, dpo_record, run, write_jsonl


def test_valid_fixtures_exit_0(repo_root: Path) -> None:
    files = sorted(
        str(p)
        for p in (repo_root / "contracts/fixtures/rollout-wire/DpoRecord/valid").glob("*.json")
    )
    code, out, _ = run("validate", "--record", "DpoRecord", *files)
    assert code == 0
    assert out == "3 records in 3 files, 3 valid, 0 invalid, 0 broken lines\n"


def test_elizaos_single_run_quirks_are_reported_with_the_field(tmp_path: Path) -> None:
    bad_hash = dpo_record()
    bad_hash["provenance"]["n_gram_hash"] = TASK[:16]  # the plugin's single-run mode
    path = write_jsonl(
        tmp_path / "dpo-2026-07-01.jsonl", [dpo_record(), bad_hash, dpo_record(rejected="")]
    )
    code, out, _ = run("validate", str(path))
    assert code == 1
    assert out.splitlines() == [
        f'{path}:2: /provenance/n_gram_hash: "Add a hello worl" does not match ^[0-9a-f]{{16}}$ [DpoRecord]',
        f'{path}:3: /rejected: must be at least 1 characters long, got "" [DpoRecord]',
        "3 records in 1 files, 1 valid, 2 invalid, 0 broken lines (auto picked: DpoRecord 3)",
    ]


def test_broken_lines_are_reported_and_the_run_goes_on(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "mixed.jsonl",
        [dpo_record(), b'{"prompt": "trunc', b"", b'{"prompt": "\xff\xfe"}', dpo_record(chosen=5)],
    )
    code, out, _ = run("validate", "--record", "DpoRecord", str(path))
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith(f"{path}:2: /: not valid JSON: ")
    assert lines[1] == f"{path}:4: /: not valid UTF-8"
    assert lines[2] == f"{path}:5: /chosen: expected type string, got 5 [DpoRecord]"
    assert lines[3] == "2 records in 1 files, 1 valid, 1 invalid, 2 broken lines"


def test_missing_file_exits_2_with_one_line(tmp_path: Path) -> None:
    code, out, err = run("validate", str(tmp_path / "nope.jsonl"))
    assert code == 2
    assert err == f"wiregate: error: {tmp_path / 'nope.jsonl'}: no such file\n"
    assert "Traceback" not in out + err


def test_a_file_that_is_not_json_at_all_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "notes.jsonl"
    path.write_text("hello\nworld\n")
    code, out, err = run("validate", str(path))
    assert code == 2
    assert err == f"wiregate: error: {path}: not JSON or JSON Lines (no line parses)\n"
    assert "error:" not in out  # said once, on stderr


def test_directory_argument_exits_2(tmp_path: Path) -> None:
    code, _out, err = run("validate", str(tmp_path))
    assert code == 2
    assert err == f"wiregate: error: {tmp_path}: is a directory, not a file\n"


def test_unknown_record_type_exits_2(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "a.jsonl", [dpo_record()])
    code, _out, err = run("validate", "--record", "Nope", str(path))
    assert code == 2
    assert err.startswith(
        "wiregate: error: unknown record type 'Nope' (record types: RolloutBranchRecord,"
    )


def test_gzip_and_stdin(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl.gz"
    path.write_bytes(gzip.compress(json.dumps(dpo_record()).encode() + b"\n"))
    assert run("validate", str(path))[0] == 0
    code, out, _ = run("validate", "-", stdin=json.dumps(dpo_record(rejected="")).encode() + b"\n")
    assert code == 1
    assert (
        out.splitlines()[0]
        == '-:1: /rejected: must be at least 1 characters long, got "" [DpoRecord]'
    )


def test_json_document_with_an_array_of_records(tmp_path: Path) -> None:
    path = tmp_path / "records.json"
    path.write_text(json.dumps([dpo_record(), dpo_record(prompt="")]))
    code, out, _ = run("validate", str(path))
    assert code == 1
    assert (
        out.splitlines()[0]
        == f'{path}:1: /1/prompt: must be at least 1 characters long, got "" [DpoRecord]'
    )


def test_record_that_fits_no_type(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "eval.jsonl", [{"id": "e1", "question": "q"}, b"[1, 2]"])
    code, out, _ = run("validate", str(path))
    assert code == 1
    assert out.splitlines() == [
        f"{path}:1: /: cannot tell the record type (a JSON object)",
        f"{path}:2: /: cannot tell the record type (not a JSON object)",
        "2 records in 1 files, 0 valid, 2 invalid, 0 broken lines",
    ]


def test_json_format(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "a.jsonl", [dpo_record(), b"{", dpo_record(rejected="")])
    code, out, _ = run("validate", "--format", "json", str(path))
    assert code == 1
    document = json.loads(out)
    assert document == {
        "valid": False,
        "record": "auto",
        "summary": {
            "files": 1,
            "records": 2,
            "valid": 1,
            "invalid": 1,
            "broken_lines": 1,
            "blank_lines": 0,
            "file_errors": 0,
            "picked": {"DpoRecord": 2},
        },
        "problems": [
            {
                "path": str(path),
                "line": 2,
                "pointer": "/",
                "message": document["problems"][0]["message"],
                "record_type": None,
            },
            {
                "path": str(path),
                "line": 3,
                "pointer": "/rejected",
                "message": 'must be at least 1 characters long, got ""',
                "record_type": "DpoRecord",
            },
        ],
        "file_errors": [],
    }
    assert document["problems"][0]["message"].startswith("not valid JSON: ")


def test_console_script_end_to_end(tmp_path: Path, repo_root: Path) -> None:
    path = write_jsonl(tmp_path / "a.jsonl", [dpo_record(rejected="")])
    wiregate = Path(sys.executable).with_name("wiregate")
    proc = subprocess.run(
        [str(wiregate), "validate", str(path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert proc.returncode == 1
    assert (
        proc.stdout.splitlines()[-1]
        == "1 records in 1 files, 0 valid, 1 invalid, 0 broken lines (auto picked: DpoRecord 1)"
    )
    assert proc.stderr == ""


def test_a_file_of_only_truncated_records_is_broken_lines_not_a_file_error(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "cut.jsonl", [b'{"prompt": "trunc'])
    code, out, err = run("validate", str(path))
    assert code == 1
    assert out.splitlines()[-1] == "0 records in 1 files, 0 valid, 0 invalid, 1 broken lines"
    assert err == ""


def test_gzip_on_stdin_is_recognised(tmp_path: Path) -> None:
    data = gzip.compress(json.dumps(dpo_record(rejected="")).encode() + b"\n")
    code, out, _ = run("validate", "-", stdin=data)
    assert code == 1
    assert (
        out.splitlines()[0]
        == '-:1: /rejected: must be at least 1 characters long, got "" [DpoRecord]'
    )


def test_a_records_invisible_characters_are_shown_escaped_one_problem_a_line(
    tmp_path: Path,
) -> None:
    """A value with a newline, a bidi override and a bell is printed escaped: each problem
    stays one line, and nothing reaches the terminal that it would act on."""
    record = {
        "schema_version": "rollout-wire/v1", "rollout_id": "r", "task": "t", "branch_index": 0,
        "temperature": 0.5, "session_id": "s", "tool_call_sequence": [], "final_answer": "a",
        "objective_score": "x\u202e\u0007\nNEXT", "rank": 1, "total_score": 1,
    }  # fmt: skip
    path = write_jsonl(tmp_path / "a.jsonl", [record])
    code, out, _ = run("validate", "--record", "RolloutBranchRecord", str(path))
    assert code == 1
    assert out.splitlines() == [
        f'{path}:1: /objective_score: "x\\u202e\\u0007\\u000aNEXT" is not one of [0, 1] '
        "[RolloutBranchRecord]",
        f'{path}:1: /objective_score: expected type integer, got "x\\u202e\\u0007\\u000aNEXT" '
        "[RolloutBranchRecord]",
        "1 records in 1 files, 0 valid, 1 invalid, 0 broken lines",
    ]


#: Blank lines before the records: a Python step each, a gzip of a billion took hours.
BLANK_RUN = 50_000_000


@pytest.mark.parametrize(
    ("end", "blank_tail"),
    [(b"\n", b"\n" * 3), (b"\r\n", b"\n\r\n\r\n"), (b" \t\n", b" \n\t\n\n")],
    ids=["lf", "crlf", "spaces"],
)
def test_a_gzip_of_fifty_million_blank_lines_is_counted_in_seconds(
    tmp_path: Path, end: bytes, blank_tail: bytes
) -> None:
    """Also with CRLF line ends (a Windows producer: a blank line is then ``\\r\\n``) and with
    lines of spaces and tabs, blank as much (they took a Python step each: 85 times longer)."""
    path = tmp_path / "in.jsonl.gz"
    with gzip.open(path, "wb", compresslevel=1) as packed:
        record = json.dumps(dpo_record()).encode()
        packed.write(end * BLANK_RUN + b"{" + end + blank_tail + record + end)
    done = subprocess.run(
        [sys.executable, "-m", "wiregate", "validate", "--format", "json", str(path)],
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert [(p["line"], p["message"][:15]) for p in report["problems"]] == [
        (BLANK_RUN + 1, "not valid JSON:")
    ]
    summary = report["summary"]
    assert (summary["records"], summary["valid"], summary["broken_lines"]) == (1, 1, 1)
    assert summary["blank_lines"] == BLANK_RUN + 3
