"""Accepted findings (``contracts/drift-baseline.toml``) on the real checkouts, laid out as in
the README: wiregate beside wasmagent-js and trace-pipeline, replayed from
``../shared/corpus/schemas``. The gate is red; ``drift baseline`` makes it green; a new
breaking edit, an expired entry and a fixed finding each show as they should."""

from __future__ import annotations

import copy as copy_module
import hashlib
import json
import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import git
import pytest
from click.testing import CliRunner, Result

from wiregate.cli import main

from .conftest import schema_copies_only

REASON = "known drift of the July 2026 state, tracked in #13"
TODAY = "2026-11-24"
WIRE = "packages/core/src/ranking/schemas/rollout-wire.schema.json"
RECORD = "#/$defs/RolloutBranchRecord"

Run = Callable[..., Result]


@pytest.fixture
def layout(
    replayed_copy: Callable[[str], git.Repo],
    wiregate_root: Callable[[str], Path],
    repo_root: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Path:
    """The wiregate root, its checkouts beside it (wasmagent-protocol absent: skipped)."""
    for name in ("WASMAGENT_JS", "TRACE_PIPELINE", "WASMAGENT_PROTOCOL"):
        monkeypatch.delenv(f"WIREGATE_REPO_{name}", raising=False)
    shipped = (repo_root / "contracts" / "mirrors.toml").read_text(encoding="utf-8")
    root = wiregate_root(schema_copies_only(shipped))  # the code copies: tests/extract
    replayed_copy("wasmagent-js")
    replayed_copy("trace-pipeline")
    monkeypatch.chdir(root)
    return root


@pytest.fixture
def run(layout: Path) -> Run:
    def invoke(*args: str, today: str = TODAY) -> Result:
        return CliRunner(env={"WIREGATE_TODAY": today}).invoke(
            main, ["--root", str(layout), "drift", *args]
        )

    return invoke


def _lines(result: Result, layout: Path) -> list[str]:
    """stdout, every line, with the temporary folder shown as TMP."""
    return result.stdout.replace(str(layout.parent), "TMP").splitlines()


def _edit(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    document = json.loads(path.read_text(encoding="utf-8"))
    change(document)
    path.write_text(json.dumps(document, indent=4) + "\n", encoding="utf-8")  # reformatted too


def _drop_task_min_length(document: dict[str, Any]) -> None:
    del document["$defs"]["RolloutBranchRecord"]["properties"]["task"]["minLength"]


HEADINGS = [
    "wasmagent-js rollout-wire (producer, must be forward compatible) "
    f"{WIRE}: breaking drift: the producer writes records the canonical contract rejects",
    "wasmagent-js training-record (producer, must be forward compatible) "
    "packages/core/src/ranking/schemas/training-record.schema.json: breaking drift: "
    "the producer writes records the canonical contract rejects",
    "trace-pipeline rollout-wire (consumer, must be backward compatible) "
    "schemas/rollout-wire.schema.json: compatible drift",
    "trace-pipeline dpo-training-record (producer, must be forward compatible) "
    "schemas/dpo-training-record.schema.json: breaking drift: "
    "the producer writes records the canonical contract rejects",
    "trace-pipeline ppo-training-record (producer, must be forward compatible) "
    "schemas/ppo-training-record.schema.json: breaking drift: "
    "the producer writes records the canonical contract rejects",
]
SKIPPED = (
    "wasmagent-protocol rollout-wire, training-record (mirror): skipped: TMP/wasmagent-protocol: "
    "no checkout of 'wasmagent-protocol' (set --repo wasmagent-protocol=PATH or "
    "WIREGATE_REPO_WASMAGENT_PROTOCOL)"
)


def _quiet(repository: str, copies: list[tuple[str, str, int, int]]) -> str:
    """A repository's copies with nothing to act on, on one line: id, verdict, accepted and
    info-level counts of each."""
    parts = "; ".join(
        f"{copy} {verdict} ({accepted} accepted, {info} info-level)"
        for copy, verdict, accepted, info in copies
    )
    return (
        f"{repository}: {len(copies)} copies with nothing to act on (--verbose lists each): {parts}"
    )


WASMAGENT_GREEN = _quiet(
    "wasmagent-js",
    [("rollout-wire", "breaking drift", 33, 36), ("training-record", "breaking drift", 42, 24)],
)
TRACE_GREEN = _quiet(
    "trace-pipeline",
    [
        ("rollout-wire", "compatible drift", 12, 34),
        ("dpo-training-record", "breaking drift", 52, 30),
        ("ppo-training-record", "breaking drift", 49, 27),
    ],
)


def test_baseline_makes_the_real_gate_green_and_a_new_break_red_again(
    run: Run, layout: Path
) -> None:
    red = run()
    assert red.exit_code == 1
    assert red.stdout.splitlines()[-1] == (
        "7 copies: 1 compatible drift, 4 breaking drift, 2 skipped (strict)"
    )
    baseline = layout / "contracts" / "drift-baseline.toml"
    assert not baseline.exists()

    accepted = run("baseline", "--reason", REASON)
    assert (accepted.exit_code, accepted.stdout) == (
        0,
        f"{baseline}: 188 added, 0 pruned, 0 kept\n",
    )
    text = baseline.read_text(encoding="utf-8")
    assert text.count("\n[[accepted]]\n") == 188
    assert text.count(f'reason = "{REASON}"') == 188

    green = run()
    assert green.exit_code == 0, green.stdout
    assert _lines(green, layout) == [
        WASMAGENT_GREEN,
        TRACE_GREEN,
        SKIPPED,
        "7 copies: 1 compatible drift, 4 breaking drift, 2 skipped (strict); "
        "findings: 188 accepted",
    ]
    # Accepted findings are neither annotated nor SARIF results: only the skipped checkout
    # (its two copies) is annotated.
    github = run("--format", "github").stdout.splitlines()
    assert [line.split("::", 2)[1] for line in github] == [
        "warning title=wiregate drift wasmagent-protocol (2 copies)",
    ]
    sarif = json.loads(run("--format", "sarif").stdout)
    assert sarif["runs"][0]["results"] == []
    # Running it again adds nothing and leaves the file as it was.
    again = run("baseline", "--reason", "another reason")
    assert again.stdout == f"{baseline}: 0 added, 0 pruned, 188 kept\n"
    assert baseline.read_text(encoding="utf-8") == text

    # One more loosening in the producer's copy, which is also reformatted (indent 4): only
    # the new finding is named; the accepted ones still match.
    _edit(layout.parent / "wasmagent-js" / WIRE, _drop_task_min_length)
    red_again = run()
    assert red_again.exit_code == 1
    assert _lines(red_again, layout) == [
        f"{HEADINGS[0]} (1 new, 33 accepted, 36 info-level)",
        "    error: wasmagent-js has no minLength at `RolloutBranchRecord.task`; the contract has "
        "minLength 1 (min-length-removed): wasmagent-js may write records the contract rejects "
        "[1 change in RolloutBranchRecord; copy 39:17, contract 83:37]",
        "    reproduce: wiregate diff contracts/rollout-wire.schema.json "
        f"TMP/wasmagent-js/{WIRE} --mode forward --policy strict",
        f"{HEADINGS[1]} (42 accepted, 24 info-level)",  # alone: one line of its own
        TRACE_GREEN,
        SKIPPED,
        "7 copies: 1 compatible drift, 4 breaking drift, 2 skipped (strict); "
        "findings: 1 new, 188 accepted",
    ]
    assert len(red_again.stdout.splitlines()) <= 12
    # --verbose lists the accepted ones too, each with its reason.
    verbose = _lines(run("--verbose", "--copy", "rollout-wire", "--repo", "wasmagent-js"), layout)
    # The new root change with its change and witness, then the accepted ones: the 33
    # accepted findings are 17 root changes, each marked, each change under it with its
    # witness.
    marked = [line for line in verbose if line.endswith(f"  [accepted: {REASON}]")]
    assert verbose[4] == marked[0]
    assert (len(verbose), len(marked)) == (89, 17)


def test_an_expired_entry_fails_naming_its_reason(run: Run, layout: Path) -> None:
    assert run("baseline", "--reason", REASON).exit_code == 0
    _edit(layout.parent / "wasmagent-js" / WIRE, _drop_task_min_length)
    dated = run(
        "baseline", "--reason", "editor may send an empty task until v2", "--expires", "2026-12-01"
    )
    assert dated.stdout.endswith(": 1 added, 0 pruned, 188 kept\n")
    assert run().exit_code == 0
    assert run(today="2026-11-30").exit_code == 0  # the day before

    expired = run(today="2026-12-01")
    assert expired.exit_code == 1
    assert _lines(expired, layout) == [
        f"{HEADINGS[0]} (33 accepted, 1 expired, 36 info-level)",
        "    error: wasmagent-js has no minLength at `RolloutBranchRecord.task`; the contract has "
        "minLength 1 (min-length-removed): wasmagent-js may write records the contract rejects "
        "[1 change in RolloutBranchRecord; copy 39:17, contract 83:37]"
        "  [acceptance expired 2026-12-01: editor may send an empty task until v2]",
        "    reproduce: wiregate diff contracts/rollout-wire.schema.json "
        f"TMP/wasmagent-js/{WIRE} --mode forward --policy strict",
        f"{HEADINGS[1]} (42 accepted, 24 info-level)",
        TRACE_GREEN,
        SKIPPED,
        "7 copies: 1 compatible drift, 4 breaking drift, 2 skipped (strict); "
        "findings: 188 accepted, 1 expired",
    ]
    document = json.loads(run("--format", "json", today="2026-12-01").stdout)
    assert [e["reason"] for e in document["expired"]] == ["editor may send an empty task until v2"]
    (finding,) = [c for c in document["copies"][0]["changes"] if c["id"] == "min-length-removed"]
    assert finding["accepted"] == {
        "reason": "editor may send an empty task until v2",
        "expires": "2026-12-01",
        "expired": True,
    }
    assert (finding["breaking"], finding["blocking"]) == (True, True)
    # The GitHub annotation says it too: it was the plain break, with no expiry or reason.
    github = run("--format", "github", today="2026-12-01").stdout.splitlines()
    (annotation,) = [line for line in github if "min-length-removed" in line]
    assert annotation == (
        f"::error file={WIRE},line=39,col=17,title=wiregate drift wasmagent-js rollout-wire%3A "
        "min-length-removed::wasmagent-js has no minLength at `RolloutBranchRecord.task`; the "
        "contract has minLength 1 (min-length-removed): wasmagent-js may write records the "
        "contract rejects (1 change in RolloutBranchRecord) [acceptance expired 2026-12-01: "
        "editor may send an empty task until v2]"
    )


def test_a_fixed_finding_makes_its_entry_stale_and_prune_removes_it(run: Run, layout: Path) -> None:
    assert run("baseline", "--reason", REASON).exit_code == 0
    baseline = layout / "contracts" / "drift-baseline.toml"

    def restore_rank(document: dict[str, Any]) -> None:
        document["$defs"]["RolloutBranchRecord"]["properties"]["rank"]["minimum"] = 1

    _edit(layout.parent / "wasmagent-js" / WIRE, restore_rank)
    fixed = run()
    assert fixed.exit_code == 0
    lines = _lines(fixed, layout)
    assert lines[:3] == [
        WASMAGENT_GREEN.replace("(33 accepted", "(32 accepted"),
        TRACE_GREEN,
        SKIPPED,
    ]
    (stale,) = lines[3:-2]
    assert stale.startswith(
        "stale baseline entry accepted[122]: wasmagent-js rollout-wire minimum-loosened at "
        f"{RECORD}/properties/rank/minimum ("
    )
    assert stale.endswith(f"): {REASON}: matches no finding")
    assert lines[-2:] == [
        "1 stale baseline entry: remove with wiregate drift baseline --prune",
        "7 copies: 1 compatible drift, 4 breaking drift, 2 skipped (strict); "
        "findings: 187 accepted; 1 stale baseline entry",
    ]

    pruned = run("baseline", "--prune")
    assert (pruned.exit_code, pruned.stdout) == (0, f"{baseline}: 0 added, 1 pruned, 187 kept\n")
    assert "minimum-loosened" not in baseline.read_text(encoding="utf-8")
    after = run()
    assert _lines(after, layout)[-1] == (
        "7 copies: 1 compatible drift, 4 breaking drift, 2 skipped (strict); findings: 187 accepted"
    )


def test_baseline_file_errors_are_one_line_naming_the_key(run: Run, layout: Path) -> None:
    baseline = layout / "contracts" / "drift-baseline.toml"
    entry = (
        '[[accepted]]\nrepository = "wasmagent-js"\ncopy = "rollout-wire"\n'
        'rule = "minimum-loosened"\ncanonical_pointer = "#/a"\ncopy_pointer = "#/a"\n'
        'fingerprint = "0123456789abcdef"\n'
    )
    cases = {
        "version = 1\n[[accepted]\n": "not valid TOML: ",
        f"version = 1\n{entry}": 'accepted[0]: "reason" is a required property',
        f'version = 1\n{entry}reason = "r"\nexpires = 2026-02-30\n': "not valid TOML: ",
        f'version = 1\n{entry}reason = "r"\nexpires = "2026-02-30"\n': (
            "accepted[0].expires: '2026-02-30' is not a date (YYYY-MM-DD)"
        ),
        f'version = 1\n{entry}reason = "r"\nexpires = "soon"\n': (
            'accepted[0].expires: "soon" does not match "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"'
        ),
        f'version = 1\n{entry}reason = "r"\nexpires = 2026-12-01T10:00:00\n': (
            'accepted[0].expires: "2026-12-01T10:00:00" does not match '
        ),
        f'version = 1\n{entry}reason = " "\n': 'accepted[0].reason: " " does not match "\\S"',
        f'version = 1\n{entry}reason = "\\u200b\\u3000"\n': "accepted[0].reason: holds no visible word",
        f'version = 1\n{entry}reason = "r"\n{entry}reason = "r"\n': (
            "accepted[1].fingerprint: 0123456789abcdef is accepted twice for wasmagent-js "
            "rollout-wire (also accepted[0])"
        ),
        "version = 2\n": "version: 1 was expected",
    }
    for text, message in cases.items():
        baseline.write_text(text, encoding="utf-8")
        for args in ((), ("baseline", "--prune")):
            result = run(*args)
            assert result.exit_code == 2, (text, result.output)
            lines = result.stderr.splitlines()
            assert len(lines) == 1 and "Traceback" not in result.output, result.output
            assert lines[0].startswith(f"wiregate: error: {baseline}: {message}"), lines[0]
        assert baseline.read_text(encoding="utf-8") == text  # never rewritten


def test_baseline_command_usage_errors(run: Run, layout: Path) -> None:
    cases = {
        (): "give --reason TEXT to accept the current findings, or --prune",
        ("--reason", " "): "--reason: give the reason the findings are accepted (in words)",
        ("--reason", "\u200b\u00a0\u202e"): (
            "--reason: give the reason the findings are accepted (in words)"
        ),
        ("--expires", "2027-01-01", "--prune"): (
            "--expires dates the entries --reason adds: give --reason too"
        ),
        ("--reason", "r", "--expires", "2027-13-01"): (
            "--expires: '2027-13-01' is not a date (YYYY-MM-DD)"
        ),
        ("--reason", "r", "--expires", TODAY): f"--expires {TODAY}: not after today ({TODAY})",
        # ISO week and ordinal forms of 10 characters, which fromisoformat takes
        ("--reason", "r", "--expires", "2027-W01-1"): (
            "--expires: '2027-W01-1' is not a date (YYYY-MM-DD)"
        ),
        ("--reason", "r", "--expires", "2027W011"): (
            "--expires: '2027W011' is not a date (YYYY-MM-DD)"
        ),
    }
    for args, message in cases.items():
        result = run("baseline", *args)
        assert (result.exit_code, result.stderr) == (2, f"wiregate: error: {message}\n"), args
    bad_today = run(today="tomorrow")
    assert (bad_today.exit_code, bad_today.stderr) == (
        2,
        "wiregate: error: WIREGATE_TODAY: 'tomorrow' is not a date (YYYY-MM-DD)\n",
    )
    assert not (layout / "contracts" / "drift-baseline.toml").exists()


def test_entries_of_unconfigured_copies_are_stale_and_unjudged_copies_keep_theirs(
    run: Run, layout: Path
) -> None:
    baseline = layout / "contracts" / "drift-baseline.toml"
    baseline.write_text(
        "version = 1\n"
        + "".join(
            f'[[accepted]]\nrepository = "{repository}"\ncopy = "{copy}"\nrule = "r"\n'
            'canonical_pointer = "#"\ncopy_pointer = "#"\n'
            f'fingerprint = "{fingerprint}"\nreason = "why"\n'
            for repository, copy, fingerprint in (
                ("wasmagent-protocol", "rollout-wire", "0000000000000001"),  # skipped: kept
                ("wasmagent-js", "renamed-copy", "0000000000000002"),  # no such copy: stale
            )
        ),
        encoding="utf-8",
    )
    result = run("--format", "json")
    document = json.loads(result.stdout)
    assert [(e["entry"], e["copy"]) for e in document["stale"]] == [("accepted[1]", "renamed-copy")]
    assert document["prune"] == "wiregate drift baseline --prune"
    assert run("baseline", "--prune").stdout.endswith(": 0 added, 1 pruned, 1 kept\n")


def test_the_file_is_stable_readable_toml(run: Run, layout: Path, tmp_path: Path) -> None:
    assert run("baseline", "--reason", 'quoted "reason"\\ with\ttab').exit_code == 0
    baseline = layout / "contracts" / "drift-baseline.toml"
    text = baseline.read_text(encoding="utf-8")
    assert text.startswith("# Drift findings accepted for now:")
    assert '\nversion = 1\n\n[[accepted]]\nrepository = "trace-pipeline"\n' in text
    assert 'reason = "quoted \\"reason\\"\\\\ with\\ttab"' in text
    # Rewritten from scratch, the same findings give the same bytes; no temporary file stays.
    shutil.copy(baseline, tmp_path / "first.toml")
    baseline.unlink()
    assert run("baseline", "--reason", 'quoted "reason"\\ with\ttab').exit_code == 0
    assert baseline.read_bytes() == (tmp_path / "first.toml").read_bytes()
    assert sorted(p.name for p in baseline.parent.iterdir() if p.name.startswith(".")) == []


def test_the_fingerprint_is_the_documented_hash_of_rule_copy_pointers_and_values(
    run: Run, layout: Path
) -> None:
    """docs/drift-report.md: 16 hex digits of the SHA-256 of the JSON array of the scheme, the
    rule id, repository, copy, both pointers and the canonical JSON of the keyword value at
    each (null when absent, or when the pointer names a whole schema object)."""
    _edit(layout.parent / "wasmagent-js" / WIRE, _drop_task_min_length)
    document = json.loads(run("--format", "json", "--repo", "wasmagent-js").stdout)
    changes = {c["id"]: c for c in document["copies"][0]["changes"]}

    def expected(rule: str, old: str, new: str, old_value: str, new_value: str) -> str:
        scheme, copy = "wiregate-drift-finding/1", ["wasmagent-js", "rollout-wire"]
        text = json.dumps([scheme, rule, *copy, old, new, old_value, new_value])
        return hashlib.sha256(text.encode("ascii")).hexdigest()[:16]

    task = f"{RECORD}/properties/task"
    assert changes["min-length-removed"]["fingerprint"] == expected(
        "min-length-removed", f"{task}/minLength", task, "1", "null"
    )
    rank = f"{RECORD}/properties/rank/minimum"
    assert changes["minimum-loosened"]["fingerprint"] == expected(
        "minimum-loosened", rank, rank, "1", "0"
    )
    # Not the message, not the layout: the same finding after rewording and reformatting.
    assert "minLength 1 removed" in changes["min-length-removed"]["message"]


def test_accepted_findings_are_not_annotated(run: Run, layout: Path) -> None:
    assert run("baseline", "--reason", REASON).exit_code == 0
    github = run("--format", "github")
    assert github.exit_code == 0
    assert [line.split("::", 2)[1] for line in github.stdout.splitlines()] == [
        "warning title=wiregate drift wasmagent-protocol (2 copies)",
    ]
    markdown = run("--format", "markdown").stdout
    assert "Findings: 33 accepted (accepted ones: `--format json` lists them)." in markdown


def test_restoring_one_required_name_keeps_the_others_accepted() -> None:
    """A ``required`` finding is fingerprinted by its name, not by the whole array: putting
    one name back (a more compatible copy) leaves the other accepted findings as they were."""
    from wiregate.diff import diff
    from wiregate.drift.baseline import finding_fingerprints

    contract = {"type": "object", "required": ["a", "b", "c"]}

    def fingerprints(copy: dict[str, Any]) -> dict[str, str]:
        changes = diff(contract, copy, mode="forward").changes
        prints = finding_fingerprints(changes, contract, copy, "producer", "wire")
        return {change.subject or "": fp for change, fp in zip(changes, prints, strict=True)}

    before = fingerprints({"type": "object", "required": ["a"]})
    after = fingerprints({"type": "object", "required": ["a", "b"]})
    assert sorted(before) == ["b", "c"] and sorted(after) == ["c"]
    assert after["c"] == before["c"]


def test_invisible_characters_in_a_reason_are_written_escaped() -> None:
    """A bidi override or zero-width character in a reason would make the reviewed file read
    as something else: it is written as an escape and reads back as given."""
    import sys

    from wiregate.acceptance import toml_string

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    reason = "ok\u202eevil\u200b\U000e0041 \u00e9"
    written = toml_string(reason)
    assert written == '"ok\\u202Eevil\\u200B\\U000E0041 \u00e9"'
    assert tomllib.loads(f"x = {written}")["x"] == reason


#: A baseline whose one entry names a copy mirrors.toml does not have: ``--prune`` rewrites it.
STALE = (
    'version = 1\n[[accepted]]\nrepository = "wasmagent-js"\ncopy = "renamed-copy"\n'
    'rule = "r"\ncanonical_pointer = "#"\ncopy_pointer = "#"\n'
    'fingerprint = "0000000000000002"\nreason = "why"\n'
)


def test_a_rewritten_file_keeps_its_mode_and_a_new_one_follows_the_umask(
    run: Run, layout: Path
) -> None:
    baseline = layout / "contracts" / "drift-baseline.toml"
    previous = os.umask(0o002)
    try:
        assert run("baseline", "--prune").exit_code == 0  # no file yet: one is written
        assert stat.S_IMODE(baseline.stat().st_mode) == 0o664
        baseline.write_text(STALE, encoding="utf-8")
        baseline.chmod(0o640)
        pruned = run("baseline", "--prune")
        assert (pruned.exit_code, pruned.stdout) == (0, f"{baseline}: 0 added, 1 pruned, 0 kept\n")
        assert stat.S_IMODE(baseline.stat().st_mode) == 0o640
        baseline.chmod(0o644)
        added = run("baseline", "--reason", REASON)
        assert (added.exit_code, added.stdout) == (0, f"{baseline}: 188 added, 0 pruned, 0 kept\n")
        assert stat.S_IMODE(baseline.stat().st_mode) == 0o644
    finally:
        os.umask(previous)


@pytest.mark.parametrize("refused", ["a symbolic link", "a read-only file"])
def test_a_symlink_or_a_read_only_file_is_refused_and_left_untouched(
    run: Run, layout: Path, tmp_path: Path, refused: str
) -> None:
    """As ``wiregate codegen --out``: the rename would replace the link, not its target, and
    would bypass the file's permissions."""
    baseline = layout / "contracts" / "drift-baseline.toml"
    target = tmp_path / "shared-baseline.toml" if refused == "a symbolic link" else baseline
    target.write_text(STALE, encoding="utf-8")
    target.chmod(0o644 if refused == "a symbolic link" else 0o444)
    if refused == "a symbolic link":
        baseline.symlink_to(target)
    result = run("baseline", "--prune")
    assert (result.exit_code, result.stdout, result.stderr) == (
        2,
        "",
        f"wiregate: error: {baseline}: cannot write: {refused}\n",
    )
    assert baseline.is_symlink() == (refused == "a symbolic link")
    assert target.read_text(encoding="utf-8") == STALE
    assert stat.S_IMODE(target.stat().st_mode) == (0o644 if baseline.is_symlink() else 0o444)
    assert sorted(p.name for p in baseline.parent.iterdir() if p.name.startswith(".")) == []


def test_an_added_property_is_fingerprinted_by_what_it_accepts() -> None:
    """A finding about a whole subschema (a property the copy added) hashes that subschema,
    its annotations left out: accepted as "extra is a string", it stayed accepted when the
    copy made ``extra`` false (every record holding it rejected). The record around it is only
    where the property sits: editing another of its properties keeps the match."""
    from wiregate.diff import diff
    from wiregate.drift.baseline import finding_fingerprints

    contract: dict[str, Any] = {"type": "object", "properties": {"a": {"type": "integer"}}}

    def fingerprint(extra: Any, a: Any = None) -> tuple[str, str]:
        copy = copy_module.deepcopy(contract)
        copy["properties"]["extra"] = extra
        if a is not None:
            copy["properties"]["a"] = a
        (change,) = [
            c for c in diff(contract, copy, mode="full").changes if "extra" in c.new_pointer
        ]
        (found,) = finding_fingerprints([change], contract, copy, "consumer", "wire")
        return change.id, found

    string = fingerprint({"type": "string"})
    assert string[0] == "property-added-to-open-model"
    assert fingerprint(False) != string
    assert fingerprint({"type": "string", "maxLength": 1}) != string
    assert fingerprint({"type": "string", "description": "free text", "title": "t"}) == string
    # a property named like an annotation is a constraint, not an annotation
    named = {"type": "object", "properties": {"title": {"type": "string"}}}
    assert fingerprint(named) != fingerprint({"type": "object", "properties": {}})
    assert fingerprint({"type": "string"}, a={"type": "integer", "minimum": 0}) == string


def test_a_new_name_dropped_from_required_is_named_alone(run: Run, layout: Path) -> None:
    """The producer's copy already omits three names the contract requires, accepted; a fourth
    dropped in the same list is the one new finding of that root change, and its line names it
    alone, not the accepted three with it."""
    assert run("baseline", "--reason", REASON).exit_code == 0

    def drop_task(document: dict[str, Any]) -> None:
        document["$defs"]["RolloutBranchRecord"]["required"].remove("task")

    _edit(layout.parent / "wasmagent-js" / WIRE, drop_task)
    result = run()
    assert result.exit_code == 1
    (line,) = [line for line in _lines(result, layout) if "required-removed" in line]
    assert line == (
        "    error: wasmagent-js may omit task in `RolloutBranchRecord`; the contract requires it "
        "(required-removed): wasmagent-js may write records the contract rejects "
        "[1 change in RolloutBranchRecord; copy 24:13, contract 67:7]"
    )
