"""`wiregate validate` on damaged gzip input: one `cannot read` line naming the file, exit 2.

As for any file that cannot be read, the other files are still validated: their problems and
the summary are printed (stdout), the file error comes last (stderr). For JSON Lines, the
records read before the damage are validated too; a JSON document is all or nothing.
"""

from __future__ import annotations

import gzip
import io
import json
import random
import string
import zlib
from pathlib import Path

from tests.validate.helpers import dpo_record, run, write_jsonl

TRUNCATED = "Compressed file ended before the end-of-stream marker was reached"


def varied_records(count: int) -> list[dict[str, object]]:
    """Valid records with random text: compressed, they span several deflate blocks, so one
    damaged byte can break a block's codes (a zlib error) rather than only the checksum."""
    rng = random.Random(7)
    return [
        dpo_record(chosen="".join(rng.choice(string.ascii_letters) for _ in range(300)))
        for _ in range(count)
    ]


def varied_jsonl(count: int) -> bytes:
    return b"".join(json.dumps(record).encode() + b"\n" for record in varied_records(count))


def read_as_the_stdlib_does(packed: bytes) -> tuple[list[bytes], BaseException | None]:
    """The lines Python's own gzip reader yields from ``packed``, and the error it ends in."""
    lines: list[bytes] = []
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(packed)) as stream:
            lines.extend(stream)
    except (OSError, EOFError, zlib.error) as exc:
        return lines, exc
    return lines, None


def corrupt_in_the_middle(data: bytes) -> tuple[bytes, str, int]:
    """``data`` gzip-compressed with one byte flipped past the middle so that inflating fails
    with a zlib error before any damaged line comes out; with that error's text and how many
    (intact) lines come out before it."""
    packed = gzip.compress(data, mtime=0)
    original = data.splitlines(keepends=True)
    for at in range(len(packed) // 2, len(packed) - 8):
        damaged = packed[:at] + bytes([packed[at] ^ 0xFF]) + packed[at + 1 :]
        lines, error = read_as_the_stdlib_does(damaged)
        if isinstance(error, zlib.error) and lines == original[: len(lines)]:
            return damaged, str(error), len(lines)
    raise AssertionError("no single flipped byte gives a zlib error")


def test_corrupt_jsonl_gz_reports_the_records_before_the_damage_then_exits_2(
    tmp_path: Path,
) -> None:
    damaged, message, lines_before = corrupt_in_the_middle(varied_jsonl(400))
    assert message.startswith("Error -3 while decompressing data: ")
    assert 0 < lines_before < 400
    path = tmp_path / "rollouts.jsonl.gz"
    path.write_bytes(damaged)

    code, out, err = run("validate", str(path))

    assert code == 2
    assert err == f"wiregate: error: {path}: cannot read: {message}\n"
    assert out == (
        f"{lines_before} records in 1 files, {lines_before} valid, 0 invalid, 0 broken lines, "
        f"1 file errors (auto picked: DpoRecord {lines_before})\n"
    )


def test_corrupt_json_gz_is_one_line_and_exit_2(tmp_path: Path, repo_root: Path) -> None:
    document = json.dumps(varied_records(300)).encode()
    damaged, message, _ = corrupt_in_the_middle(document)
    path = tmp_path / "records.json.gz"
    path.write_bytes(damaged)

    code, out, err = run("validate", str(path))

    assert (code, out) == (
        2,
        "0 records in 1 files, 0 valid, 0 invalid, 0 broken lines, 1 file errors\n",
    )
    assert err == f"wiregate: error: {path}: cannot read: {message}\n"


def test_truncated_json_gz_is_one_line_and_the_other_files_are_still_validated(
    tmp_path: Path, repo_root: Path
) -> None:
    producer = repo_root / "contracts/fixtures/rollout-wire/DpoRecord/valid/producer.json"
    truncated = tmp_path / "t.json.gz"
    truncated.write_bytes(gzip.compress(producer.read_bytes())[:100])
    before = write_jsonl(tmp_path / "before.jsonl", [dpo_record(rejected="")])
    after = write_jsonl(tmp_path / "after.jsonl", [dpo_record(), dpo_record()])

    code, out, err = run("validate", str(before), str(truncated), str(after))

    assert code == 2
    assert out.splitlines() == [
        f'{before}:1: /rejected: must be at least 1 characters long, got "" [DpoRecord]',
        "3 records in 3 files, 2 valid, 1 invalid, 0 broken lines, 1 file errors "
        "(auto picked: DpoRecord 3)",
    ]
    assert err == f"wiregate: error: {truncated}: cannot read: {TRUNCATED}\n"


def test_truncated_jsonl_gz_keeps_the_records_before_the_cut(tmp_path: Path) -> None:
    data = varied_jsonl(400)
    packed = gzip.compress(data, mtime=0)
    cut = packed[: len(packed) // 2]
    lines, error = read_as_the_stdlib_does(cut)
    assert isinstance(error, EOFError)
    assert 0 < len(lines) < 400 and lines == data.splitlines(keepends=True)[: len(lines)]
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(cut)

    code, out, err = run("validate", str(path))

    assert code == 2
    assert out == (
        f"{len(lines)} records in 1 files, {len(lines)} valid, 0 invalid, 0 broken lines, "
        f"1 file errors (auto picked: DpoRecord {len(lines)})\n"
    )
    assert err == f"wiregate: error: {path}: cannot read: {TRUNCATED}\n"


def test_damaged_gzip_on_stdin_is_one_line_and_exit_2() -> None:
    damaged, message, lines_before = corrupt_in_the_middle(varied_jsonl(400))

    code, out, err = run("validate", "-", stdin=damaged)

    assert code == 2
    assert out == (
        f"{lines_before} records in 1 files, {lines_before} valid, 0 invalid, 0 broken lines, "
        f"1 file errors (auto picked: DpoRecord {lines_before})\n"
    )
    assert err == f"wiregate: error: -: cannot read: {message}\n"


def test_a_json_gz_whose_data_is_not_gzip_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "plain.json.gz"
    path.write_bytes(json.dumps(dpo_record()).encode())

    code, _out, err = run("validate", str(path))

    assert code == 2
    assert err == f"wiregate: error: {path}: cannot read: Not a gzipped file (b'{{\"')\n"
