"""`wiregate validate --baseline FILE` and `wiregate validate baseline`: known violations
accepted with a reason and an expiry date, so only new ones fail (a pre-commit hook switched on
in a repository whose fixtures already break the contract)."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from wiregate.cli import main

REASON = "the producer's build statuses, tracked in #20"
TODAY = "2026-11-24"
BASELINE = "validate-baseline.toml"
ENUM = "is not one of ['pass', 'fail', 'skip'] [RolloutBranchRecord]"
MARK = f"  [accepted until 2027-01-01: {REASON}]"


def run(*args: str, today: str = TODAY) -> tuple[int, str, str]:
    result = CliRunner(env={"WIREGATE_TODAY": today}).invoke(main, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def branch(index: int, status: str | None = None) -> dict[str, Any]:
    record: dict[str, Any] = {
        "rollout_id": "r-001",
        "task": "Add a hello world button to the page",
        "branch_index": index,
        "temperature": 0.2,
        "session_id": "s-001",
        "tool_call_sequence": [],
        "final_answer": "Added HelloButton to src/Button.tsx",
        "objective_score": 0,
        "rank": index + 1,
        "total_score": 0.15,
    }
    if status is not None:
        record["build_result"] = {"status": status}
    return record


def write(path: Path, *lines: str | dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = [line if isinstance(line, str) else json.dumps(line) for line in lines]
    path.write_text("".join(f"{line}\n" for line in text), encoding="utf-8")
    return path


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository whose fixture file has two known violations, the current directory."""
    monkeypatch.chdir(tmp_path)
    write(
        tmp_path / "fixtures/branches.jsonl",
        branch(0, "success"),
        branch(1, "failed"),
        branch(2, "pass"),
    )
    return tmp_path


def accept(*files: str, expires: str = "2027-01-01") -> tuple[int, str, str]:
    files = files or ("fixtures/branches.jsonl",)
    return run(
        "validate", "baseline", "--baseline", BASELINE, "--reason", REASON,
        "--expires", expires, *files,
    )  # fmt: skip


def test_accepted_violations_pass_and_are_still_reported(repo: Path) -> None:
    code, out, err = run("validate", "fixtures/branches.jsonl")
    assert (code, err) == (1, "")
    assert out.splitlines() == [
        f'fixtures/branches.jsonl:1: /build_result/status: "success" {ENUM}',
        f'fixtures/branches.jsonl:2: /build_result/status: "failed" {ENUM}',
        "3 records in 1 files, 1 valid, 2 invalid, 0 broken lines "
        "(auto picked: RolloutBranchRecord 3)",
    ]

    assert accept() == (0, f"{BASELINE}: 2 added, 0 pruned, 0 kept\n", "")
    code, out, err = run("validate", "--baseline", BASELINE, "fixtures/branches.jsonl")
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        f'fixtures/branches.jsonl:1: /build_result/status: "success" {ENUM}{MARK}',
        f'fixtures/branches.jsonl:2: /build_result/status: "failed" {ENUM}{MARK}',
        "3 records in 1 files, 1 valid, 0 invalid, 2 accepted, 0 broken lines "
        "(auto picked: RolloutBranchRecord 3); baseline: 2 problems accepted, 0 expired, "
        "0 stale entries",
    ]
    # Accepting again adds nothing; the entries keep their reason and date.
    assert accept(expires="2028-01-01") == (0, f"{BASELINE}: 0 added, 0 pruned, 2 kept\n", "")
    assert (repo / BASELINE).read_text(encoding="utf-8").count("expires = 2027-01-01") == 2


def test_a_moved_record_file_keeps_its_acceptances(repo: Path) -> None:
    """``git mv`` of a record file: its problems are found under the new path, accepted by the
    entries of the file that is gone, and `validate baseline` writes the new path with their
    reasons and dates. A copy of the records beside a file still there is not accepted."""
    accept()
    os.makedirs("data")
    os.rename("fixtures/branches.jsonl", "data/moved.jsonl")
    code, out, err = run("validate", "--baseline", BASELINE, "data/moved.jsonl")
    moved = f"{MARK[:-1]}; listed for fixtures/branches.jsonl, moved]"
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        f'data/moved.jsonl:1: /build_result/status: "success" {ENUM}{moved}',
        f'data/moved.jsonl:2: /build_result/status: "failed" {ENUM}{moved}',
        "2 accepted problems listed for a file that is gone (moved): record the new paths, "
        "reasons and dates kept, with wiregate validate baseline --prune --baseline "
        f"{BASELINE} data/moved.jsonl",
        "3 records in 1 files, 1 valid, 0 invalid, 2 accepted, 0 broken lines "
        "(auto picked: RolloutBranchRecord 3); baseline: 2 problems accepted, 0 expired, "
        "0 stale entries",
    ]
    assert run("validate", "baseline", "--prune", "--baseline", BASELINE, "data/moved.jsonl") == (
        0,
        f"{BASELINE}: 2 added, 2 pruned, 0 kept\n",
        "",
    )
    text = (repo / BASELINE).read_text(encoding="utf-8")
    assert text.count('file = "data/moved.jsonl"') == 2
    assert "fixtures/branches.jsonl" not in text.split("version = 1")[1]
    assert text.count(f"reason = {json.dumps(REASON)}") == 2
    assert text.count("expires = 2027-01-01") == 2
    code, out, _ = run("validate", "--baseline", BASELINE, "data/moved.jsonl")
    assert code == 0
    assert (
        out.splitlines()[0] == f'data/moved.jsonl:1: /build_result/status: "success" {ENUM}{MARK}'
    )
    # The same records in a second file, while the listed one is there: new problems.
    shutil.copyfile("data/moved.jsonl", "data/copy.jsonl")
    code, out, _ = run("validate", "--baseline", BASELINE, "data/copy.jsonl")
    assert code == 1
    assert out.splitlines()[0] == f'data/copy.jsonl:1: /build_result/status: "success" {ENUM}'


def test_records_on_stdin_are_not_a_moved_file(repo: Path) -> None:
    """The records of a file that is gone, piped on stdin: new problems. They were accepted
    as the file moved to `-`, and the command shown rewrote its entries as stdin's."""
    accept()
    text = Path("fixtures/branches.jsonl").read_text(encoding="utf-8")
    os.remove("fixtures/branches.jsonl")
    result = CliRunner(env={"WIREGATE_TODAY": TODAY}).invoke(
        main, ["validate", "--baseline", BASELINE, "-"], input=text
    )
    assert result.exit_code == 1
    assert result.stdout.splitlines()[:2] == [
        f'-:1: /build_result/status: "success" {ENUM}',
        f'-:2: /build_result/status: "failed" {ENUM}',
    ]
    assert "moved" not in result.stdout


def test_two_moved_files_with_the_same_problem_keep_their_own_reasons(repo: Path) -> None:
    """The same record accepted in two files, for two reasons, both files then moved: each
    keeps its own by file name; moved under other names, which reason holds is not known, and
    the problem is new."""
    write(repo / "fixtures/other.jsonl", branch(0, "success"))
    accept()
    run(
        "validate", "baseline", "--baseline", BASELINE, "--reason", "other fixture",
        "fixtures/other.jsonl",
    )  # fmt: skip
    os.makedirs("data")
    os.rename("fixtures/branches.jsonl", "data/branches.jsonl")
    os.rename("fixtures/other.jsonl", "data/other.jsonl")
    code, out, _ = run(
        "validate", "--baseline", BASELINE, "data/branches.jsonl", "data/other.jsonl"
    )
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == (
        f'data/branches.jsonl:1: /build_result/status: "success" {ENUM}'
        f"{MARK[:-1]}; listed for fixtures/branches.jsonl, moved]"
    )
    assert lines[2] == (
        f'data/other.jsonl:1: /build_result/status: "success" {ENUM}'
        "  [accepted: other fixture; listed for fixtures/other.jsonl, moved]"
    )
    os.rename("data/other.jsonl", "data/renamed.jsonl")
    code, out, _ = run("validate", "--baseline", BASELINE, "data/renamed.jsonl")
    assert code == 1
    assert out.splitlines()[0] == f'data/renamed.jsonl:1: /build_result/status: "success" {ENUM}'


def test_prune_without_files_reads_only_regular_files_the_baseline_names(repo: Path) -> None:
    """An entry naming a FIFO (a hostile or careless edit of the file): `--prune` without
    FILEs reads the regular files only, instead of waiting for a writer that never comes."""
    accept()
    os.mkfifo(repo / "fixtures/pipe.jsonl")
    with (repo / BASELINE).open("a", encoding="utf-8") as baseline:
        baseline.write(
            '\n[[accepted]]\nfile = "fixtures/pipe.jsonl"\npointer = "/"\nrule = "enum"\n'
            'value = "1"\nfingerprint = "0000000000000000"\nreason = "a pipe"\n'
        )
    code, out, err = run("validate", "baseline", "--prune", "--baseline", BASELINE)
    assert (code, out, err) == (0, f"{BASELINE}: 0 added, 0 pruned, 3 kept\n", "")


def test_the_baseline_file_as_written(repo: Path) -> None:
    accept()
    text = (repo / BASELINE).read_text(encoding="utf-8")
    body = text[text.index("version = 1") :]
    entries = body.split("\n\n")[1:]
    assert entries[0].splitlines()[:6] == [
        "[[accepted]]",
        'file = "fixtures/branches.jsonl"',
        'record_type = "RolloutBranchRecord"',
        'pointer = "/build_result/status"',
        'rule = "enum"',
        'value = "\\"failed\\""',
    ]
    assert entries[0].splitlines()[7:] == [f'reason = "{REASON}"', "expires = 2027-01-01"]
    assert [e.splitlines()[5] for e in entries] == [
        'value = "\\"failed\\""',
        'value = "\\"success\\""',
    ]


def test_a_new_violation_fails_and_only_it_is_unmarked(repo: Path) -> None:
    accept()
    path = repo / "fixtures/branches.jsonl"
    path.write_text(path.read_text() + json.dumps(branch(3, "ok")) + "\n")
    code, out, _ = run("validate", "--baseline", BASELINE, "fixtures/branches.jsonl")
    assert code == 1
    assert out.splitlines() == [
        f'fixtures/branches.jsonl:1: /build_result/status: "success" {ENUM}{MARK}',
        f'fixtures/branches.jsonl:2: /build_result/status: "failed" {ENUM}{MARK}',
        f'fixtures/branches.jsonl:4: /build_result/status: "ok" {ENUM}',
        "4 records in 1 files, 1 valid, 1 invalid, 2 accepted, 0 broken lines "
        "(auto picked: RolloutBranchRecord 4); baseline: 2 problems accepted, 0 expired, "
        "0 stale entries",
    ]


def test_an_expired_acceptance_fails_naming_its_reason(repo: Path) -> None:
    accept()
    for day, code in (("2026-12-31", 0), ("2027-01-01", 1)):
        exit_code, out, _ = run(
            "validate", "--baseline", BASELINE, "fixtures/branches.jsonl", today=day
        )
        assert exit_code == code
    expired = f"  [acceptance expired 2027-01-01: {REASON}]"
    assert out.splitlines() == [
        f'fixtures/branches.jsonl:1: /build_result/status: "success" {ENUM}{expired}',
        f'fixtures/branches.jsonl:2: /build_result/status: "failed" {ENUM}{expired}',
        "3 records in 1 files, 1 valid, 2 invalid, 0 accepted, 0 broken lines "
        "(auto picked: RolloutBranchRecord 3); baseline: 0 problems accepted, 2 expired, "
        "0 stale entries",
    ]


def test_reformatting_reordering_keys_and_moving_records_keep_the_match(repo: Path) -> None:
    accept()
    first = json.dumps(dict(reversed(branch(0, "success").items())), indent=None)
    second = json.dumps(branch(1, "failed"), separators=(" ,  ", " :\t"), sort_keys=True)
    write(
        repo / "fixtures/branches.jsonl",
        branch(5, "skip"),
        "",
        f"  {second}  ",
        json.dumps(branch(2, "pass")),
        first,
    )
    code, out, _ = run(
        "validate", "--baseline", BASELINE, "--format", "json", "fixtures/branches.jsonl"
    )
    assert code == 0
    report = json.loads(out)
    assert [(p["line"], p["accepted"]["entry"], p["expired"]) for p in report["problems"]] == [
        (3, "accepted[0]", False),
        (5, "accepted[1]", False),
    ]
    assert report["summary"]["accepted"] == 2
    assert report["summary"]["accepted_problems"] == 2
    assert report["stale"] == []
    assert report["prune"] is None
    assert report["baseline"] == BASELINE


def test_records_of_a_json_array_match_wherever_they_move(repo: Path) -> None:
    """In a .json document the pointer shown starts with the record's index; the fingerprint
    takes the pointer inside the record, so reordering the array keeps the match."""
    path = repo / "fixtures/branches.json"
    path.write_text(json.dumps([branch(0, "success"), branch(1, "pass")]), encoding="utf-8")
    assert accept("fixtures/branches.json") == (0, f"{BASELINE}: 1 added, 0 pruned, 0 kept\n", "")
    pretty = json.dumps([branch(1, "pass"), branch(0, "success")], indent=2)
    path.write_text(pretty, encoding="utf-8")
    code, out, _ = run("validate", "--baseline", BASELINE, "fixtures/branches.json")
    assert code == 0
    assert out.splitlines()[0] == (
        f'fixtures/branches.json:1: /1/build_result/status: "success" {ENUM}{MARK}'
    )


def test_a_changed_offending_value_is_new_and_its_old_entry_stale(repo: Path) -> None:
    accept()
    write(
        repo / "fixtures/branches.jsonl",
        branch(0, "succeeded"),
        branch(1, "failed"),
        branch(2, "pass"),
    )
    code, out, _ = run("validate", "--baseline", BASELINE, "fixtures/branches.jsonl")
    assert code == 1
    assert out.splitlines()[:2] == [
        f'fixtures/branches.jsonl:1: /build_result/status: "succeeded" {ENUM}',
        f'fixtures/branches.jsonl:2: /build_result/status: "failed" {ENUM}{MARK}',
    ]
    stale = out.splitlines()[2]
    assert stale.startswith(
        "stale baseline entry accepted[1]: fixtures/branches.jsonl /build_result/status enum "
        '"success" [RolloutBranchRecord] ('
    )
    assert stale.endswith(f"): {REASON}: matches no problem")
    assert out.splitlines()[3:] == [
        "1 stale baseline entry: remove with wiregate validate baseline --prune --baseline "
        f"{BASELINE} fixtures/branches.jsonl",
        "3 records in 1 files, 1 valid, 1 invalid, 1 accepted, 0 broken lines "
        "(auto picked: RolloutBranchRecord 3); baseline: 1 problem accepted, 0 expired, "
        "1 stale entry",
    ]
    # The command it gives removes the stale entry, and nothing else.
    assert run(
        "validate", "baseline", "--prune", "--baseline", BASELINE, "fixtures/branches.jsonl"
    ) == (0, f"{BASELINE}: 0 added, 1 pruned, 1 kept\n", "")
    code, out, _ = run("validate", "--baseline", BASELINE, "fixtures/branches.jsonl")
    assert code == 1
    assert out.splitlines()[-1].endswith(
        "; baseline: 1 problem accepted, 0 expired, 0 stale entries"
    )


def test_a_run_with_another_record_option_says_why_nothing_matches(repo: Path) -> None:
    """A baseline written with one --record and a hook run with another: every entry of the
    file is stale, since a record's type is part of its fingerprint. The report says so, next
    to the prune command that would throw the reasons away."""
    accept()  # --record auto: the records were judged as RolloutBranchRecord
    code, out, _ = run(
        "validate", "--record", "DpoRecord", "--baseline", BASELINE, "fixtures/branches.jsonl"
    )
    assert code == 1
    assert out.splitlines()[-3:] == [
        "2 stale baseline entries: remove with wiregate validate baseline --prune --baseline "
        f"{BASELINE} --record DpoRecord fixtures/branches.jsonl",
        "note: 2 of them name RolloutBranchRecord, which this run judged no record of their "
        "files as (--record DpoRecord): a record's type is part of its fingerprint; if the "
        "baseline was written with another --record, run with that one (or write the "
        "baseline again with this one) rather than pruning",
        "3 records in 1 files, 0 valid, 3 invalid, 0 accepted, 0 broken lines; baseline: 0 "
        "problems accepted, 0 expired, 2 stale entries",
    ]
    # The other way round: written with --record DpoRecord, run with auto.
    (repo / BASELINE).unlink()
    run(
        "validate", "baseline", "--baseline", BASELINE, "--reason", REASON,
        "--record", "DpoRecord", "fixtures/branches.jsonl",
    )  # fmt: skip
    code, out, _ = run("validate", "--baseline", BASELINE, "fixtures/branches.jsonl")
    assert code == 1
    assert out.splitlines()[-2].startswith(
        "note: 12 of them name DpoRecord, which this run judged no record of their files as "
        "(--record auto): "
    )
    # With the --record the baseline was written with, every problem is accepted.
    code, out, _ = run(
        "validate", "--record", "DpoRecord", "--baseline", BASELINE, "fixtures/branches.jsonl"
    )
    assert code == 0
    assert "note:" not in out


def test_stale_is_information_and_only_for_files_read(repo: Path) -> None:
    """Fixed violations are stale (exit 0); entries of a file not given are left alone (a
    pre-commit hook passes only the files a commit touches); a file that is gone makes its
    entries stale, and --prune without FILEs reads the files the baseline names."""
    write(repo / "fixtures/other.jsonl", branch(7, "success"))
    accept("fixtures/branches.jsonl", "fixtures/other.jsonl")
    write(repo / "fixtures/branches.jsonl", branch(0, "pass"), branch(1, "fail"))
    code, out, _ = run("validate", "--baseline", BASELINE, "fixtures/branches.jsonl")
    assert code == 0
    assert out.splitlines()[-2:] == [
        "2 stale baseline entries: remove with wiregate validate baseline --prune --baseline "
        f"{BASELINE} fixtures/branches.jsonl",
        "2 records in 1 files, 2 valid, 0 invalid, 0 accepted, 0 broken lines "
        "(auto picked: RolloutBranchRecord 2); baseline: 0 problems accepted, 0 expired, "
        "2 stale entries",
    ]
    (repo / "fixtures/other.jsonl").unlink()
    write(repo / "fixtures/new.jsonl", branch(0, "pass"))
    code, out, _ = run("validate", "--baseline", BASELINE, "fixtures/new.jsonl")
    assert code == 0
    assert out.splitlines()[-2:] == [
        "1 stale baseline entry: remove with wiregate validate baseline --prune --baseline "
        f"{BASELINE}",
        "1 records in 1 files, 1 valid, 0 invalid, 0 accepted, 0 broken lines "
        "(auto picked: RolloutBranchRecord 1); baseline: 0 problems accepted, 0 expired, "
        "1 stale entry",
    ]
    assert run("validate", "baseline", "--prune", "--baseline", BASELINE) == (
        0,
        f"{BASELINE}: 0 added, 3 pruned, 0 kept\n",
        "",
    )
    assert "\n[[accepted]]" not in (repo / BASELINE).read_text(encoding="utf-8")


def test_paths_are_relative_to_the_baseline_file(repo: Path) -> None:
    """The baseline names files relative to its own folder, so a hook run from the root and
    a run from a subfolder match the same entries."""
    assert accept() == (0, f"{BASELINE}: 2 added, 0 pruned, 0 kept\n", "")
    os.chdir(repo / "fixtures")
    code, out, _ = run("validate", "--baseline", f"../{BASELINE}", "branches.jsonl")
    assert code == 0
    assert out.splitlines()[-1].endswith(
        "; baseline: 2 problems accepted, 0 expired, 0 stale entries"
    )


def test_broken_lines_cannot_be_accepted(repo: Path) -> None:
    path = repo / "fixtures/branches.jsonl"
    path.write_text(path.read_text() + '{"rollout_id": "trunc\n')
    code, out, err = accept()
    assert (code, out) == (0, f"{BASELINE}: 2 added, 0 pruned, 0 kept\n")
    assert err == (
        "wiregate: warning: 1 broken lines not accepted: a line that is not a JSON record "
        "cannot be; fix it\n"
    )
    code, out, _ = run("validate", "--baseline", BASELINE, "fixtures/branches.jsonl")
    assert code == 1
    assert out.splitlines()[2].startswith("fixtures/branches.jsonl:4: /: not valid JSON: ")


def test_a_file_name_that_is_not_utf8_cannot_be_accepted(repo: Path) -> None:
    """Its entry would hold U+FFFD for the byte and never match: refused, nothing written."""
    name = os.fsdecode(b"fixtures/r\xff.jsonl")
    os.rename(repo / "fixtures/branches.jsonl", name)
    code, out, err = accept(name)
    assert (code, out) == (2, "")
    assert err == (
        "wiregate: error: b'fixtures/r\\xff.jsonl': a file name that is not UTF-8 cannot be "
        "named in the baseline (TOML holds text): rename the file\n"
    )
    assert not (repo / BASELINE).exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "give --reason TEXT to accept the current problems, or --prune"),
        (("--reason", "why"), "--reason accepts the problems of FILEs: give the files"),
        (("--reason", " ", "x"), "--reason: give the reason the problems are accepted (in words)"),
        (("--prune", "--expires", "2027-01-01"), "--expires dates the entries --reason adds: give --reason too"),
        (("--reason", "r", "--expires", TODAY, "x"), f"--expires {TODAY}: not after today ({TODAY})"),
        (("--reason", "r", "--expires", "2027-02-30", "x"), "--expires: '2027-02-30' is not a date (YYYY-MM-DD)"),
    ],
)  # fmt: skip
def test_baseline_command_usage_errors(repo: Path, args: tuple[str, ...], message: str) -> None:
    assert run("validate", "baseline", "--baseline", BASELINE, *args) == (
        2,
        "",
        f"wiregate: error: {message}\n",
    )
    assert not (repo / BASELINE).exists()


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ('expires = "2026-02-30"', "accepted[0].expires: '2026-02-30' is not a date (YYYY-MM-DD)"),
        ('colour = "red"', "accepted[0]: Additional properties are not allowed ('colour' was unexpected)"),
        ('reason = "\u200b"', "accepted[0].reason: holds no visible word"),
    ],
)  # fmt: skip
def test_a_bad_baseline_file_is_one_line_naming_the_key(
    repo: Path, entry: str, message: str
) -> None:
    fields = {
        "file": '"fixtures/branches.jsonl"',
        "pointer": '"/build_result/status"',
        "rule": '"enum"',
        "fingerprint": '"0123456789abcdef"',
        "reason": '"why"',
    }
    name, _, value = entry.partition(" = ")
    fields[name] = value
    body = "".join(f"{key} = {text}\n" for key, text in fields.items())
    (repo / BASELINE).write_text(f"version = 1\n[[accepted]]\n{body}", encoding="utf-8")
    code, out, err = run("validate", "--baseline", BASELINE, "fixtures/branches.jsonl")
    assert (code, out, err) == (2, "", f"wiregate: error: {BASELINE}: {message}\n")


def test_a_baseline_named_to_be_read_must_exist(repo: Path) -> None:
    code, out, err = run("validate", "--baseline", "nope.toml", "fixtures/branches.jsonl")
    assert (code, out, err) == (2, "", "wiregate: error: nope.toml: file not found\n")


@pytest.mark.parametrize("kind", ["symlink", "read-only"])
def test_a_symlink_or_read_only_baseline_is_not_replaced(repo: Path, kind: str) -> None:
    target = repo / "real.toml"
    target.write_text("version = 1\n", encoding="utf-8")
    if kind == "symlink":
        (repo / BASELINE).symlink_to(target)
        why = "a symbolic link"
    else:
        shutil.copy(target, repo / BASELINE)
        (repo / BASELINE).chmod(stat.S_IRUSR | stat.S_IRGRP)
        why = "a read-only file"
    assert accept() == (2, "", f"wiregate: error: {BASELINE}: cannot write: {why}\n")
    assert (repo / BASELINE).read_text(encoding="utf-8") == "version = 1\n"
    assert os.path.islink(repo / BASELINE) == (kind == "symlink")


def test_baseline_after_validate_is_the_subcommand(repo: Path) -> None:
    """`wiregate validate baseline` names the subcommand; a record file called `baseline` is
    validated as `./baseline`."""
    write(repo / "baseline", branch(0, "pass"))
    assert run("validate", "baseline") == (
        2,
        "",
        "wiregate: error: validate baseline: Missing option '--baseline'.\n",
    )
    code, out, _ = run("validate", "./baseline")
    assert (code, out) == (
        0,
        "1 records in 1 files, 1 valid, 0 invalid, 0 broken lines "
        "(auto picked: RolloutBranchRecord 1)\n",
    )


def test_real_producer_fixtures_adopt_the_hook(
    corpus_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's adoption: wasmagent-js's fixtures fail `wiregate validate` (its build
    statuses, its v1 training records, eval items that are no record type); accepting them
    once makes the hook pass, and a new violation fails it again."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fixtures").mkdir()
    names = []
    for path in sorted((corpus_dir / "fixtures/wasmagent-js").glob("*.jsonl")):
        names.append(f"fixtures/{path.name}")
        shutil.copyfile(path, tmp_path / names[-1])
    code, out, _ = run("validate", *names)
    assert code == 1
    summary = (
        "9 records in 5 files, 0 valid, {} invalid, {}0 broken lines (auto picked: "
        "DpoTrainingRecord 1, PpoTrainingRecord 2, RolloutBranchRecord 4)"
    )
    assert out.splitlines()[-1] == summary.format(9, "")
    assert len(out.splitlines()) == 28  # 27 problems

    reason = "producer fixtures of July 2026, tracked in #20"
    code, out, err = run("validate", "baseline", "--baseline", BASELINE, "--reason", reason, *names)
    assert (code, out, err) == (0, f"{BASELINE}: 27 added, 0 pruned, 0 kept\n", "")
    code, out, _ = run("validate", "--baseline", BASELINE, *names)
    assert code == 0
    assert out.splitlines()[-1] == summary.format(0, "9 accepted, ") + (
        "; baseline: 27 problems accepted, 0 expired, 0 stale entries"
    )
    assert all(line.endswith(f"  [accepted: {reason}]") for line in out.splitlines()[:-1])

    added = "fixtures/rollout-branches.v1.jsonl"
    with open(tmp_path / added, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(branch(9, "done")) + "\n")
    code, out, _ = run("validate", "--baseline", BASELINE, added)
    assert code == 1
    assert out.splitlines()[-2] == f'{added}:3: /build_result/status: "done" {ENUM}'
