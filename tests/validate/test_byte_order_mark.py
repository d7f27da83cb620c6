"""A UTF-8 byte-order mark is accepted at the start of an input (a file, `.gz` or not, or stdin,
JSON or JSON Lines), and only there; "not valid UTF-8" is said only of invalid UTF-8."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tests.validate.helpers import dpo_record, run

BOM = b"\xef\xbb\xbf"
ONE_VALID = "1 records in 1 files, 1 valid, 0 invalid, 0 broken lines (auto picked: DpoRecord 1)\n"
TWO_VALID = "2 records in 1 files, 2 valid, 0 invalid, 0 broken lines (auto picked: DpoRecord 2)\n"
MARK_LATER = "starts with a UTF-8 byte-order mark (accepted only at the start of the input)"


def jsonl(*records: object) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("a.jsonl", BOM + jsonl(dpo_record())),
        ("a.jsonl.gz", gzip.compress(BOM + jsonl(dpo_record()))),
        ("a.json", BOM + json.dumps(dpo_record(), indent=2).encode()),
        ("a.json.gz", gzip.compress(BOM + json.dumps([dpo_record()]).encode())),
    ],
)
def test_a_file_may_start_with_a_byte_order_mark(tmp_path: Path, name: str, content: bytes) -> None:
    path = tmp_path / name
    path.write_bytes(content)

    assert run("validate", str(path)) == (0, ONE_VALID, "")


# Two records: a single line alone on stdin is read as one JSON document, not JSON Lines.
@pytest.mark.parametrize(
    ("content", "summary"),
    [
        (BOM + jsonl(dpo_record(), dpo_record(prompt="again")), TWO_VALID),
        (BOM + json.dumps(dpo_record(), indent=2).encode(), ONE_VALID),
        (gzip.compress(BOM + jsonl(dpo_record(), dpo_record(prompt="again"))), TWO_VALID),
    ],
    ids=["jsonl", "pretty-json", "gzip"],
)
def test_stdin_may_start_with_a_byte_order_mark(content: bytes, summary: str) -> None:
    assert run("validate", "-", stdin=content) == (0, summary, "")


def test_line_numbers_are_unchanged_after_a_leading_mark(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(BOM + jsonl(dpo_record(), dpo_record(rejected="")))

    code, out, _ = run("validate", str(path))

    assert code == 1
    assert out.splitlines() == [
        f'{path}:2: /rejected: must be at least 1 characters long, got "" [DpoRecord]',
        "2 records in 1 files, 1 valid, 1 invalid, 0 broken lines (auto picked: DpoRecord 2)",
    ]


def test_a_mark_anywhere_else_is_a_broken_line_said_as_such(tmp_path: Path) -> None:
    # e.g. two files joined with cat, the second written by a tool that adds a mark
    path = tmp_path / "joined.jsonl"
    path.write_bytes(jsonl(dpo_record()) + BOM + jsonl(dpo_record()) + jsonl(dpo_record()))

    code, out, _ = run("validate", str(path))

    assert code == 1
    assert out.splitlines() == [
        f"{path}:2: /: {MARK_LATER}",
        "2 records in 1 files, 2 valid, 0 invalid, 1 broken lines (auto picked: DpoRecord 2)",
    ]


def test_invalid_utf8_after_a_leading_mark_is_still_invalid_utf8(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(BOM + b'{"prompt": "\xff"}\n' + jsonl(dpo_record()))

    code, out, _ = run("validate", str(path))

    assert code == 1
    assert out.splitlines() == [
        f"{path}:1: /: not valid UTF-8",
        "1 records in 1 files, 1 valid, 0 invalid, 1 broken lines (auto picked: DpoRecord 1)",
    ]


def test_a_json_document_that_is_not_utf8_is_one_file_error(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_bytes(b'{"prompt": "caf\xe9"}')  # Latin-1

    code, out, err = run("validate", str(path))

    assert code == 2
    assert out == "0 records in 1 files, 0 valid, 0 invalid, 0 broken lines, 1 file errors\n"
    assert err == f"wiregate: error: {path}: not valid UTF-8\n"


def test_a_json_document_with_a_syntax_error_says_not_valid_json(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_bytes(BOM + b'{"prompt": }')

    code, _out, err = run("validate", str(path))

    assert code == 2
    assert err.startswith(f"wiregate: error: {path}: not valid JSON: ")
