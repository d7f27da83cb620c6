"""Bad input ends as a counted rejection (with the line kept verbatim) or a one-line exit-2
error; never a traceback, never a silently dropped line."""

from __future__ import annotations

import base64
import gzip
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.datafactory.helpers import RunCli, branch, read_jsonl, write_jsonl

GOOD = orjson.dumps(branch("r", 0)) + b"\n"


def _single_reject(run_cli: RunCli, path: Path) -> Any:
    run = run_cli(path)
    assert run.exit_code == 0, run.stderr
    manifest = run.manifest()
    lines = manifest["lines"]
    assert lines["read"] == lines["accepted"] + lines["rejected"] + lines["blank"]
    assert lines["accepted"] == 1 and lines["rejected"] == 1
    (reject,) = run.rejects()
    assert manifest["rejected"] == {reject["reason"]: 1}
    assert len(run.ppo()) == 1
    return reject


def test_truncated_line(tmp_path: Path, run_cli: RunCli) -> None:
    path = tmp_path / "in.jsonl"
    path.write_bytes(GOOD + GOOD[:40])
    reject = _single_reject(run_cli, path)
    assert reject["file"] == str(path)
    assert reject["line"] == 2
    assert reject["reason"] == "invalid-json"
    assert reject["raw"] == GOOD[:40].decode()


def test_invalid_utf8(tmp_path: Path, run_cli: RunCli) -> None:
    path = tmp_path / "in.jsonl"
    bad = orjson.dumps(branch("r", 1, final_answer="X")).replace(b"X", b"\xff\xfe")
    path.write_bytes(GOOD + bad + b"\n")
    reject = _single_reject(run_cli, path)
    assert (reject["reason"], reject["line"]) == ("invalid-utf8", 2)
    assert base64.b64decode(str(reject["raw_base64"])) == bad  # verbatim


def test_nan_is_not_json(tmp_path: Path, run_cli: RunCli) -> None:
    path = tmp_path / "in.jsonl"
    path.write_bytes(
        GOOD
        + orjson.dumps(branch("r", 1))
        .replace(b'"total_score":0.0', b'"total_score":NaN')
        .replace(b'"total_score":1.0', b'"total_score":NaN')
        + b"\n"
    )
    reject = _single_reject(run_cli, path)
    assert reject["reason"] == "invalid-json"
    assert str(reject["detail"]).startswith("NaN and Infinity are not JSON")


def test_valid_json_past_what_is_read_is_unsupported_not_invalid(
    tmp_path: Path, run_cli: RunCli
) -> None:
    """1e400, a 400-digit integer and nesting past orjson's limit are valid JSON: each is an
    ``unsupported-value`` reject saying what it is, and ``wiregate validate`` says so too."""
    record = orjson.dumps(branch("r", 1))
    assert record.startswith(b'{"schema_version"')
    odd = [b'{"x":1e400,' + record[1:], b'{"x":' + b"9" * 400 + b"," + record[1:]]
    odd.append(b'{"x":' + b"[" * 2000 + b"]" * 2000 + b"," + record[1:])
    # Damaged after what orjson stops at: invalid, whatever came first.
    odd += [b'{"x":1e400,' + record[1:-20], b'{"x":' + b"[" * 2000 + b"]" * 1999 + b"}"]
    # Too deep for the standard library to check: never called valid, nor invalid (both were
    # "invalid-json", and wiregate validate said "not valid JSON" of the valid one)
    odd += [b'{"x":' + b"[" * 5000 + b"]" * n + b"," + record[1:] for n in (5000, 4999)]
    path = tmp_path / "in.jsonl"
    path.write_bytes(GOOD + b"".join(line + b"\n" for line in odd))
    run = run_cli(path)
    assert run.exit_code == 0
    rejects = read_jsonl(run.out / "rejects.jsonl")
    assert [(r["line"], r["reason"], r["detail"]) for r in rejects] == [
        (2, "unsupported-value", "a number beyond the range of a 64-bit float: number is "
         "infinity when parsed as double: line 1 column 6 (char 5)"),
        (3, "unsupported-value", f"integer {'9' * 400} does not fit in 64 bits"),
        (4, "unsupported-value", "nested deeper than 1,024 levels: depth limit exceeded: "
         "line 1 column 1030 (char 1029)"),
        (5, "invalid-json", "number is infinity when parsed as double: line 1 column 6 (char 5)"),
        (6, "invalid-json", "depth limit exceeded: line 1 column 1030 (char 1029)"),
        *((line, "unsupported-value", "nested deeper than 1,024 levels, too deep to check that "
          "it is valid JSON: depth limit exceeded: line 1 column 1030 (char 1029)")
          for line in (7, 8)),
    ]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", "from wiregate.cli import main; main()", "validate", str(path)],
        capture_output=True,
        text=True,
    )
    cannot = "valid JSON that cannot be read exactly"
    unchecked = (
        "cannot be read exactly: nested deeper than 1,024 levels, too deep to check that it is "
        "valid JSON (depth limit exceeded at char 1029)"
    )
    assert done.stdout.splitlines()[5:7] == [f"{path}:{n}: /: {unchecked}" for n in (7, 8)]
    assert done.stdout.splitlines()[:3] == [
        f"{path}:2: /: {cannot}: a number beyond the range of a 64-bit float (number is "
        "infinity when parsed as double at char 5)",
        f"{path}:3: /: {cannot}: a number beyond the range of a 64-bit float (number is "
        "infinity when parsed as double at char 5)",
        f"{path}:4: /: {cannot}: nested deeper than 1,024 levels (depth limit exceeded at "
        "char 1029)",
    ]


def test_wrong_types(tmp_path: Path, run_cli: RunCli) -> None:
    path = write_jsonl(tmp_path / "in.jsonl", [branch("r", 0), branch("r", 1, temperature="hot")])
    reject = _single_reject(run_cli, path)
    assert reject["reason"] == "contract-violation"
    assert reject["detail"] == 'RolloutBranchRecord /temperature: expected type number, got "hot"'


@pytest.mark.parametrize(("data", "shown"), [(None, "None"), (1, "1"), (True, "True"), ([], "[]")])
def test_event_data_not_an_object(tmp_path: Path, run_cli: RunCli, data: Any, shown: str) -> None:
    """Rejected at its pointer (the repairs' look for the producer's keys stopped the run)."""
    events = [{"event": "tool_call", "data": data}]
    bad = branch("r", 1, tool_call_sequence=events)
    path = write_jsonl(tmp_path / "in.jsonl", [branch("r", 0), bad])
    reject = _single_reject(run_cli, path)
    assert (reject["reason"], reject["detail"]) == (
        "contract-violation",
        f"RolloutBranchRecord /tool_call_sequence/0/data: expected type object, got {shown}",
    )


def test_fifty_megabyte_line(tmp_path: Path, run_cli: RunCli) -> None:
    path = tmp_path / "in.jsonl"
    huge = orjson.dumps(branch("r", 1, final_answer="x" * (50 * 1024 * 1024)))
    path.write_bytes(GOOD + huge + b"\n")
    reject = _single_reject(run_cli, path)
    assert reject["reason"] == "line-too-long"
    assert reject["detail"] == f"{len(huge)} bytes, more than the limit of {16 * 1024 * 1024}"
    # Never read whole: the rejects file gets its first KiB and its length.
    assert (reject["raw"], reject["raw_length"]) == (huge[:1024].decode(), len(huge))


def test_duplicate_rollout_and_branch_index(tmp_path: Path, run_cli: RunCli) -> None:
    first = write_jsonl(tmp_path / "a.jsonl", [branch("r", 0, final_answer="first")])
    second = write_jsonl(tmp_path / "b.jsonl", [branch("r", 0, final_answer="second")])
    run = run_cli(first, second)
    assert run.exit_code == 0
    (reject,) = run.rejects()
    assert (reject["file"], reject["line"], reject["reason"]) == (
        str(second),
        1,
        "duplicate-branch",
    )
    assert (
        reject["detail"]
        == f"duplicate (rollout_id, branch_index) = ('r', 0); first seen at {first}:1"
    )
    assert [r["messages"][-1]["content"] for r in run.ppo()] == ["first"]
    assert run.manifest()["lines"] == {"read": 2, "accepted": 1, "rejected": 1, "blank": 0}


def test_empty_file_and_blank_lines(tmp_path: Path, run_cli: RunCli) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    blank = tmp_path / "blank.jsonl"
    blank.write_bytes(b"\n   \n" + GOOD + b"\n")
    run = run_cli(empty, blank)
    assert run.exit_code == 0
    manifest = run.manifest()
    assert manifest["lines"] == {"read": 4, "accepted": 1, "rejected": 0, "blank": 3}
    assert [f["lines"] for f in manifest["inputs"]] == [0, 4]
    assert run.ppo() and run.dpo() == []


def test_missing_input_file(tmp_path: Path, run_cli: RunCli) -> None:
    run = run_cli(tmp_path / "nope.jsonl")
    assert (run.exit_code, run.stdout) == (2, "")
    assert run.stderr == f"datafactory: error: {tmp_path / 'nope.jsonl'}: no such file\n"
    assert list(run.out.iterdir()) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_unreadable_input_file(tmp_path: Path, run_cli: RunCli) -> None:
    path = tmp_path / "locked.jsonl"
    path.write_bytes(GOOD)
    path.chmod(0)
    run = run_cli(path)
    assert run.exit_code == 2
    assert run.stderr == f"datafactory: error: {path}: cannot read: permission denied\n"


def test_corrupt_gzip_is_an_input_error(tmp_path: Path, run_cli: RunCli) -> None:
    path = tmp_path / "in.jsonl.gz"
    path.write_bytes(gzip.compress(GOOD * 50)[:-30])
    run = run_cli(path)
    assert run.exit_code == 2
    assert run.stderr.startswith(f"datafactory: error: {path}: cannot read: ")
    assert run.stderr.count("\n") == 1
    assert list(run.out.iterdir()) == []


def test_output_directory_missing_is_a_usage_error(tmp_path: Path, run_cli: RunCli) -> None:
    run = run_cli(
        write_jsonl(tmp_path / "in.jsonl", [branch()]),
        args=("--output-dpo", str(tmp_path / "no/dir/d.jsonl")),
    )
    assert run.exit_code == 2
    assert run.stderr == (
        f"datafactory: error: {tmp_path / 'no/dir/d.jsonl'}: directory "
        f"'{tmp_path / 'no/dir'}' does not exist\n"
    )


def test_output_path_that_is_a_directory(tmp_path: Path, run_cli: RunCli) -> None:
    run = run_cli(
        write_jsonl(tmp_path / "in.jsonl", [branch()]), args=("--output-ppo", str(tmp_path))
    )
    assert (run.exit_code, run.stderr) == (2, f"datafactory: error: {tmp_path}: is a directory\n")
    assert list(run.out.iterdir()) == []


def test_missing_temp_dir(tmp_path: Path, run_cli: RunCli) -> None:
    run = run_cli(
        write_jsonl(tmp_path / "in.jsonl", [branch()]), args=("--temp-dir", str(tmp_path / "no"))
    )
    assert (run.exit_code, run.stderr) == (
        2,
        f"datafactory: error: --temp-dir {tmp_path / 'no'}: no such directory\n",
    )


def test_ngram_below_one(tmp_path: Path, run_cli: RunCli) -> None:
    run = run_cli(write_jsonl(tmp_path / "in.jsonl", [branch()]), args=("--ngram", "0"))
    assert (run.exit_code, run.stderr) == (
        2,
        "datafactory: error: --ngram must be at least 1, got 0\n",
    )
    assert list(run.out.iterdir()) == []


@pytest.mark.parametrize("output_format", ["both", "dpo"])
def test_branch_index_beyond_64_bits(tmp_path: Path, run_cli: RunCli, output_format: str) -> None:
    # orjson reads 2**64 as a float, which the contract's "integer" accepts when whole.
    path = tmp_path / "in.jsonl"
    path.write_bytes(
        GOOD
        + orjson.dumps(branch("r", 7)).replace(
            b'"branch_index":7', b'"branch_index":18446744073709551616'
        )
        + b"\n"
    )
    run = run_cli(path, args=("--format", output_format))
    assert run.exit_code == 0, run.stderr
    (reject,) = run.rejects()
    assert (reject["line"], reject["reason"], reject["detail"]) == (
        2,
        "unsupported-value",
        "integer 18446744073709551616 does not fit in 64 bits",
    )
    assert run.manifest()["lines"] == {"read": 2, "accepted": 1, "rejected": 1, "blank": 0}


def test_tool_arguments_nested_too_deep_to_write(tmp_path: Path, run_cli: RunCli) -> None:
    # orjson reads 1024 levels but writes 254: the contract accepts what cannot be exported.
    call = {"event": "tool_call", "data": {"name": "t", "args": "ARGS"}}
    line = orjson.dumps(branch("r", 1, tool_call_sequence=[call]))
    line = line.replace(b'"ARGS"', b'{"a":' * 300 + b"{}" + b"}" * 300)
    path = tmp_path / "in.jsonl"
    path.write_bytes(GOOD + line + b"\n")
    reject = _single_reject(run_cli, path)
    assert (reject["line"], reject["reason"], reject["detail"]) == (
        2,
        "unsupported-value",
        "RolloutBranchRecord: cannot be written: Recursion limit reached",
    )


@pytest.mark.parametrize(
    ("written", "kept"),
    [
        (b"12345678901234567890123", False),
        (b"-9223372036854775809", False),
        (b"18446744073709551615", True),  # the largest integer orjson reads exactly
        (b"-9223372036854775808", True),
        (b"12345678901234567890.5", True),  # a float: JSON numbers are doubles
    ],
)
def test_integers_orjson_would_change_are_rejected(
    tmp_path: Path, run_cli: RunCli, written: bytes, kept: bool
) -> None:
    call = {"event": "tool_call", "data": {"name": "t", "args": {"id": "ID"}}}
    line = orjson.dumps(branch("r", 1, tool_call_sequence=[call])).replace(b'"ID"', written)
    path = tmp_path / "in.jsonl"
    path.write_bytes(GOOD + line + b"\n")
    run = run_cli(path)
    assert run.exit_code == 0, run.stderr
    if kept:
        assert run.rejects() == [] and len(run.ppo()) == 2
        return
    (reject,) = run.rejects()
    assert (reject["line"], reject["reason"], reject["detail"]) == (
        2,
        "unsupported-value",
        f"integer {written.decode()} does not fit in 64 bits",
    )
    assert reject["raw"] == line.decode()


def test_a_long_run_of_digits_in_a_string_is_not_an_integer(
    tmp_path: Path, run_cli: RunCli
) -> None:
    path = tmp_path / "in.jsonl"
    path.write_bytes(
        orjson.dumps(branch("r", 0, final_answer="id:123456789012345678901234")) + b"\n"
    )
    run = run_cli(path)
    assert run.rejects() == []
    assert [p["messages"][-1]["content"] for p in run.ppo()] == ["id:123456789012345678901234"]


def test_a_byte_order_mark_may_open_an_input(tmp_path: Path, run_cli: RunCli) -> None:
    path = tmp_path / "in.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + GOOD + b"\xef\xbb\xbf" + GOOD.replace(b'"r"', b'"s"'))
    run = run_cli(path)
    (reject,) = run.rejects()  # only at the start of the input
    assert (reject["line"], reject["reason"]) == (2, "invalid-json")
    assert [p["provenance"]["rollout_id"] for p in run.ppo()] == ["r"]


@pytest.mark.parametrize(
    ("content", "line"),
    [
        (b"", "datafactory: error: no records in the inputs: they are empty"),
        (b"\n  \n\t\n", "datafactory: error: no records in the inputs: 3 blank lines"),
    ],
)
def test_inputs_without_a_record_are_an_input_error(
    tmp_path: Path, run_cli: RunCli, content: bytes, line: str
) -> None:
    data = tmp_path / "in.jsonl"
    data.write_bytes(content)
    run = run_cli(data)
    assert (run.exit_code, run.stderr) == (2, line + "\n")
    assert list(run.out.iterdir()) == []


#: Blank lines before a record: a Python step each, reading them took minutes (a gzip of
#: a billion, ``yes '' | head -c 1000000000 | gzip``, an hour and a half).
BLANK_RUN = 50_000_000


def _blank_run_export(out: Path) -> list[str]:
    """The exporter's command writing every output into ``out``; ``--input`` to be added."""
    outputs = [f"--output-{name}={out / name}.jsonl" for name in ("dpo", "ppo")]
    return [
        sys.executable, "-m", "datafactory", "--allow-missing-g3", *outputs,
        f"--rejects={out / 'rejects.jsonl'}", f"--manifest={out / 'manifest.json'}",
    ]  # fmt: skip


def test_a_gzip_of_fifty_million_blank_lines_is_counted_in_seconds(tmp_path: Path) -> None:
    data = tmp_path / "in.jsonl.gz"
    with gzip.open(data, "wb", compresslevel=1) as packed:
        packed.write(b"\n" * BLANK_RUN + b"{\n" + b"\n" * 3 + GOOD)
    blank = tmp_path / "blank.jsonl.gz"
    with gzip.open(blank, "wb", compresslevel=1) as packed:
        packed.write(b"\n" * BLANK_RUN)
    out = tmp_path / "out"
    out.mkdir()
    command = _blank_run_export(out)
    done = subprocess.run([*command, f"--input={data}"], capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    manifest = orjson.loads((out / "manifest.json").read_bytes())
    assert manifest["lines"] == {
        "read": BLANK_RUN + 5, "accepted": 1, "rejected": 1, "blank": BLANK_RUN + 3,
    }  # fmt: skip
    assert [source["lines"] for source in manifest["inputs"]] == [BLANK_RUN + 5]
    (reject,) = read_jsonl(out / "rejects.jsonl")
    assert (reject["line"], reject["reason"]) == (BLANK_RUN + 1, "invalid-json")
    assert len(read_jsonl(out / "ppo.jsonl")) == 1

    # Nothing but blank lines is no record: the one-line input error, nothing written.
    for name in out.iterdir():
        name.unlink()
    done = subprocess.run([*command, f"--input={blank}"], capture_output=True, timeout=60)
    assert (done.returncode, done.stdout) == (2, b"")
    assert done.stderr == b"datafactory: error: no records in the inputs: 50000000 blank lines\n"
    assert list(out.iterdir()) == []


@pytest.mark.parametrize(
    ("packed", "end"),
    [(False, b"\r\n"), (True, b"\r\n"), (False, b" \t\n"), (True, b" \t\n")],
    ids=["plain", "gzip", "spaces-plain", "spaces-gzip"],
)
def test_crlf_blank_lines_are_counted_in_seconds_too(
    tmp_path: Path, packed: bool, end: bytes
) -> None:
    """CRLF line ends (a Windows producer): a blank line is ``\r\n``, and a run of them is
    counted at once as well, in a plain file (read in chunks) as in a gzip (streamed); so is a
    run of lines of spaces and tabs."""
    data = tmp_path / ("in.jsonl.gz" if packed else "in.jsonl")
    body = end * BLANK_RUN + b"{" + end + b"\n\r\n\r\n" + GOOD
    if packed:
        with gzip.open(data, "wb", compresslevel=1) as stream:
            stream.write(body)
    else:
        data.write_bytes(body)
    out = tmp_path / "out"
    out.mkdir()
    command = _blank_run_export(out)
    done = subprocess.run([*command, f"--input={data}"], capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    manifest = orjson.loads((out / "manifest.json").read_bytes())
    assert manifest["lines"] == {
        "read": BLANK_RUN + 5, "accepted": 1, "rejected": 1, "blank": BLANK_RUN + 3,
    }  # fmt: skip
    (reject,) = read_jsonl(out / "rejects.jsonl")
    assert (reject["line"], reject["reason"]) == (BLANK_RUN + 1, "invalid-json")


def test_a_link_loop_or_a_link_to_nothing_says_so(tmp_path: Path, run_cli: RunCli) -> None:
    # both were "no such file", which the path plainly is
    loop, dangling = tmp_path / "loop.jsonl", tmp_path / "dangling.jsonl"
    loop.symlink_to(loop)
    dangling.symlink_to(tmp_path / "gone.jsonl")
    for path, reason in [(loop, "a symlink loop"), (dangling, "a dangling symlink")]:
        run = run_cli(path)
        assert (run.exit_code, run.stderr) == (2, f"datafactory: error: {path}: {reason}\n")
        assert list(run.out.iterdir()) == []


def test_gzip_data_under_a_plain_name_is_an_input_error(tmp_path: Path, run_cli: RunCli) -> None:
    # read as text, every line was rejected and the run ended with exit 0 and empty outputs
    path = tmp_path / "rollouts.jsonl"
    path.write_bytes(gzip.compress(GOOD + b"\n"))
    run = run_cli(path)
    assert (run.exit_code, run.stderr) == (
        2,
        f"datafactory: error: {path}: gzip data in a file whose name does not end in .gz\n",
    )
    assert list(run.out.iterdir()) == []
