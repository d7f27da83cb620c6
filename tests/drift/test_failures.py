"""Every failure mode of ``wiregate drift`` gives one clear line and the documented exit code."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from tests.sarif_schema import check_sarif
from wiregate.cli import main

from .replay import commit_files, init_repo

MIRRORS = """
version = 1
[[repository]]
name = "producer"
checkout = "../producer"
role = "producer"
[[repository.copy]]
id = "wire"
schema = "rollout-wire"
paths = ["schemas/rollout-wire.schema.json", "vendor/rollout-wire.schema.json"]
"""

Run = Callable[..., Result]


@pytest.fixture
def root(wiregate_root: Callable[[str], Path]) -> Path:
    """A wiregate root holding our contract and a one-repository mirrors.toml."""
    return wiregate_root(MIRRORS)


@pytest.fixture
def run(root: Path) -> Run:
    def invoke(*args: str) -> Result:
        return CliRunner().invoke(main, ["--root", str(root), "drift", *args])

    return invoke


def _one_error_line(result: Result) -> str:
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("wiregate: error: ")
    assert "Traceback" not in result.output
    return lines[0].removeprefix("wiregate: error: ")


def test_missing_checkout_is_skipped_and_fails_only_with_strict(run: Run, root: Path) -> None:
    result = run()
    assert result.exit_code == 0, result.output
    expected = (
        f"{root.parent / 'producer'}: no checkout of 'producer' "
        "(set --repo producer=PATH or WIREGATE_REPO_PRODUCER)"
    )
    assert result.stdout.splitlines() == [
        "producer wire (producer, must be forward compatible): skipped",
        f"    {expected}",
        "1 copy: 1 skipped (strict)",
    ]
    strict = run("--strict")
    assert strict.exit_code == 1
    assert strict.stderr == ""


def test_missing_checkout_named_by_the_user_is_an_error(run: Run, tmp_path: Path) -> None:
    result = run("--repo", f"producer={tmp_path / 'nope'}")
    assert result.exit_code == 2
    assert _one_error_line(result) == (
        f"{tmp_path / 'nope'}: checkout of 'producer' not found: no such directory"
    )


def test_missing_checkout_named_by_environment(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WIREGATE_REPO_PRODUCER", str(tmp_path / "gone"))
    result = run()
    assert result.exit_code == 2
    assert _one_error_line(result).startswith(f"{tmp_path / 'gone'}: checkout of 'producer'")


def test_unknown_repository_name(run: Run, tmp_path: Path, root: Path) -> None:
    result = run("--repo", f"nobody={tmp_path}")
    assert result.exit_code == 2
    mirrors = root / "contracts" / "mirrors.toml"
    assert _one_error_line(result) == f"{mirrors}: no repository named 'nobody' (known: producer)"


def test_bad_repo_option(run: Run) -> None:
    result = run("--repo", "producer=")
    assert result.exit_code == 2
    assert _one_error_line(result) == "--repo 'producer=': expected NAME=PATH or NAME"


def test_invalid_mirrors_toml(run: Run, root: Path) -> None:
    mirrors = root / "contracts" / "mirrors.toml"
    mirrors.write_text(MIRRORS.replace('role = "producer"', 'role = "writer"'), encoding="utf-8")
    result = run()
    assert result.exit_code == 2
    assert _one_error_line(result) == (
        f'{mirrors}: repository[0].role: "writer" is not one of "producer", "consumer" or "mirror"'
    )


def test_not_found_lists_the_paths_tried(run: Run, tmp_path: Path) -> None:
    """A checkout that is present but lacks a configured copy fails the gate (it used to pass:
    a wrong --repo path checked nothing and exited 0)."""
    (tmp_path / "producer").mkdir()
    result = run("--repo", f"producer={tmp_path / 'producer'}")
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "producer wire (producer, must be forward compatible): not found",
        f"    {tmp_path / 'producer'}: copy 'wire' not found "
        "(tried: schemas/rollout-wire.schema.json, vendor/rollout-wire.schema.json)",
        "1 copy: 1 not found (strict)",
    ]
    strict = run("--repo", f"producer={tmp_path / 'producer'}", "--strict")
    assert strict.exit_code == 1


def test_invalid_json_in_a_copy(run: Run, tmp_path: Path) -> None:
    copy = tmp_path / "producer" / "vendor" / "rollout-wire.schema.json"
    copy.parent.mkdir(parents=True)
    text = '{"type": "object",}'
    copy.write_text(text, encoding="utf-8")
    # The parser's own wording differs between Python versions; the place is what matters.
    with pytest.raises(json.JSONDecodeError) as parsed:
        json.loads(text)
    result = run("--repo", f"producer={tmp_path / 'producer'}")
    assert result.exit_code == 2
    assert _one_error_line(result) == f"{copy}: not valid JSON: {parsed.value}"


def test_copy_that_is_not_an_object(run: Run, tmp_path: Path) -> None:
    copy = tmp_path / "producer" / "schemas" / "rollout-wire.schema.json"
    copy.parent.mkdir(parents=True)
    copy.write_text("[]", encoding="utf-8")
    result = run("--repo", f"producer={tmp_path / 'producer'}")
    assert result.exit_code == 2
    assert _one_error_line(result) == f"{copy}: a schema document must be a JSON object"


def test_ref_on_a_directory_that_is_not_a_git_repository(run: Run, tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    result = run("--repo", f"producer={tmp_path / 'plain'}", "--ref", "HEAD")
    assert result.exit_code == 2
    assert _one_error_line(result) == f"{tmp_path / 'plain'}: not a git repository"


def test_unknown_ref(run: Run, tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "producer")
    commit_files(repo, {"README": b"x"}, "start", "2026-07-01T00:00:00")
    result = run("--repo", f"producer={tmp_path / 'producer'}", "--ref", "v1.0")
    assert result.exit_code == 2
    assert _one_error_line(result) == f"{tmp_path / 'producer'}: unknown git ref 'v1.0'"


def test_path_not_found_at_a_ref(run: Run, tmp_path: Path, repo_root: Path) -> None:
    repo = init_repo(tmp_path / "producer")
    commit_files(repo, {"README": b"x"}, "start", "2026-07-01T00:00:00")
    repo.create_tag("v1.0")
    schema = (repo_root / "contracts" / "rollout-wire.schema.json").read_bytes()
    commit_files(repo, {"schemas/rollout-wire.schema.json": schema}, "copy", "2026-07-02T00:00:00")
    checkout = tmp_path / "producer"
    old = run("--repo", f"producer={checkout}", "--ref", "v1.0", "--strict")
    assert old.exit_code == 1
    assert old.stdout.splitlines()[1] == (
        f"    {checkout}@v1.0: copy 'wire' not found at that ref "
        "(tried: schemas/rollout-wire.schema.json, vendor/rollout-wire.schema.json)"
    )
    # The work tree is never touched: a ref is read from git objects only.
    (checkout / "schemas" / "rollout-wire.schema.json").write_text("broken", encoding="utf-8")
    now = run("--repo", f"producer={checkout}", "--ref", "HEAD", "--strict")
    assert now.exit_code == 0, now.output
    assert now.stdout.splitlines()[0] == (
        "producer wire (producer, must be forward compatible) "
        f"schemas/rollout-wire.schema.json at {repo.head.commit.hexsha[:7]}: identical"
    )


def test_history_failures(root: Path, tmp_path: Path) -> None:
    def history(*args: str) -> Result:
        return CliRunner().invoke(main, ["--root", str(root), "drift", "history", *args])

    (tmp_path / "plain").mkdir()
    cases = [
        (
            ("--repo", f"producer={tmp_path / 'plain'}"),
            f"{tmp_path / 'plain'}: not a git repository",
        ),
        (
            ("--repo", f"producer={tmp_path / 'nope'}"),
            f"{tmp_path / 'nope'}: checkout of 'producer' not found: no such directory",
        ),
        (
            ("--repo", f"other={tmp_path}"),
            f"{root / 'contracts' / 'mirrors.toml'}: no repository named 'other' (known: producer)",
        ),
        (
            ("--repo", f"producer={tmp_path}", "--copy", "x"),
            "--copy 'x': no such copy in producer (known: wire)",
        ),
    ]
    init_repo(tmp_path / "git")
    commit_files(init_repo(tmp_path / "git"), {"README": b"x"}, "start", "2026-07-01T00:00:00")
    cases.append(
        (
            ("--repo", f"producer={tmp_path / 'git'}", "--ref", "v9"),
            f"{tmp_path / 'git'}: unknown git ref 'v9'",
        )
    )
    for args, message in cases:
        result = history(*args)
        assert result.exit_code == 2, (args, result.output)
        assert _one_error_line(result) == message


def test_github_annotations_for_unreadable_and_missing_copies(run: Run, tmp_path: Path) -> None:
    copy = tmp_path / "elsewhere" / "schemas" / "rollout-wire.schema.json"
    copy.parent.mkdir(parents=True)
    copy.write_text("{", encoding="utf-8")
    result = run("--repo", f"producer={tmp_path / 'elsewhere'}", "--format", "github")
    assert result.exit_code == 2
    # The copy's path relative to its checkout, and where the parser stopped in it.
    assert result.stdout == (
        "::error file=schemas/rollout-wire.schema.json,line=1,col=2,"
        f"title=wiregate drift producer wire::{copy}: not valid JSON: "
        "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)\n"
    )
    skipped = run("--format", "github", "--strict")
    assert skipped.exit_code == 1
    assert skipped.stdout.startswith("::error title=wiregate drift producer wire::")
    assert run("--format", "github").stdout.startswith(
        "::warning title=wiregate drift producer wire::"
    )


def test_discover_rejects_options_that_do_not_apply(run: Run, tmp_path: Path) -> None:
    for option in ("--strict", "--copy=wire"):
        result = run("--discover", option, "--repo", f"producer={tmp_path}")
        assert result.exit_code == 2
        assert _one_error_line(result) == (
            "--discover looks for copies: --strict and --copy do not apply"
        )
    at_ref = run("--discover", "--ref", "HEAD", "--repo", f"producer={tmp_path}")
    assert at_ref.exit_code == 2
    assert _one_error_line(at_ref) == f"{tmp_path}: not a git repository"


def test_a_copy_the_diff_engine_cannot_load(run: Run, tmp_path: Path) -> None:
    copy = tmp_path / "elsewhere" / "schemas" / "rollout-wire.schema.json"
    copy.parent.mkdir(parents=True)
    copy.write_text('{"$ref": "https://example.com/remote.json"}', encoding="utf-8")
    result = run("--repo", f"producer={tmp_path / 'elsewhere'}")
    assert result.exit_code == 2
    assert _one_error_line(result) == (
        f"{copy}: copy: #/$ref: remote $ref 'https://example.com/remote.json' is not "
        "fetched, nor one by $id followed; bundle it into the document and refer to it by a "
        "JSON pointer (#/...)"
    )


@pytest.mark.parametrize(
    ("args", "given"),
    [
        (("--ref", "NOPE"), "--ref"),
        (("--ref", "NOPE", "--strict", "--format", "markdown"), "--ref, --strict, --format"),
        (("--repo", "producer=x"), "--repo"),
        (("--discover",), "--discover"),
    ],
)
def test_group_options_before_a_subcommand_are_a_usage_error(
    run: Run, tmp_path: Path, args: tuple[str, ...], given: str
) -> None:
    result = run(*args, "history", "--repo", f"producer={tmp_path}")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        f"wiregate: error: drift: {given} before 'history' would be ignored: "
        "give the options of 'drift history' after its name\n"
    )


def test_discover_without_any_checkout_is_an_error(run: Run) -> None:
    result = run("--discover")
    assert (result.exit_code, result.stdout) == (2, "")
    assert _one_error_line(result) == "no checkout to search: pass --repo NAME=PATH"


def test_history_reports_a_rename_off_the_configured_paths(
    root: Path, tmp_path: Path, repo_root: Path
) -> None:
    repo = init_repo(tmp_path / "producer")
    contract = (repo_root / "contracts" / "rollout-wire.schema.json").read_bytes()
    commit_files(
        repo, {"schemas/rollout-wire.schema.json": contract}, "add", "2026-07-01T00:00:00+0000"
    )
    (tmp_path / "producer" / "moved").mkdir()
    repo.index.move(["schemas/rollout-wire.schema.json", "moved/wire.json"])
    moved = repo.index.commit(
        "move", author_date="2026-07-01T00:01:00+0000", commit_date="2026-07-01T00:01:00+0000"
    )
    result = CliRunner().invoke(
        main,
        ["--root", str(root), "drift", "history", "--repo", f"producer={tmp_path / 'producer'}"],
    )
    assert (result.exit_code, result.stderr) == (0, "")
    lines = result.stdout.splitlines()
    assert lines[1:5] == [
        f"    now renamed away since {moved.hexsha[:7]} 2026-07-01: move",
        f"  {moved.hexsha[:7]} 2026-07-01 renamed schemas/rollout-wire.schema.json -> "
        "moved/wire.json: move",
        "      vs contract: renamed away",
        "      renamed to moved/wire.json (not a configured path)",
    ]


def test_a_copy_too_costly_to_compare_is_one_error_line_fast(run: Run, tmp_path: Path) -> None:
    # Every level an anyOf of three references to the level below: 3**30 paths in 3 KB.
    defs: dict[str, object] = {"L0": {"type": "integer"}}
    for level in range(1, 31):
        defs[f"L{level}"] = {
            "anyOf": [{"$ref": f"#/$defs/L{level - 1}", "title": f"m{i}"} for i in range(3)]
        }
    copy = tmp_path / "producer" / "schemas" / "rollout-wire.schema.json"
    copy.parent.mkdir(parents=True)
    copy.write_text(json.dumps({"$defs": defs, "$ref": "#/$defs/L30"}), encoding="utf-8")
    start = time.process_time()
    result = run("--repo", f"producer={tmp_path / 'producer'}")
    assert time.process_time() - start < 2
    assert result.exit_code == 2
    assert _one_error_line(result) == (
        f"{copy}: canonical contract vs copy: comparison exceeded its budget of 50,000 schema "
        "nodes (schemas too large or too recursive to compare)"
    )


def test_a_copy_with_catastrophic_regexes_is_judged_fast(
    run: Run, tmp_path: Path, repo_root: Path
) -> None:
    # A mirror copy with ``^(.*){16}X$`` as a pattern and as a patternProperties key that the
    # name of a removed property (``objective_score``) is matched against: Python's re
    # backtracks for many minutes on each.
    copy_doc = json.loads((repo_root / "contracts/rollout-wire.schema.json").read_text())
    branch = copy_doc["$defs"]["ForkBranch"]
    del branch["properties"]["objective_score"]
    branch["patternProperties"] = {"^(.*){16}X$": {"type": "string"}}
    branch["properties"]["final_answer"]["pattern"] = "^(.*){16}X$"
    copy = tmp_path / "producer" / "schemas" / "rollout-wire.schema.json"
    copy.parent.mkdir(parents=True)
    copy.write_text(json.dumps(copy_doc), encoding="utf-8")
    start = time.process_time()
    result = run("--repo", f"producer={tmp_path / 'producer'}", "--format", "json")
    assert time.process_time() - start < 2
    (copy_result,) = json.loads(result.stdout)["copies"]
    assert (result.exit_code, copy_result["verdict"]) == (1, "breaking-drift")
    # ``objective_score`` has no X: the open model, not the pattern's schema, checks it now.
    assert [(c["id"], c["level"], c["new_pointer"]) for c in copy_result["changes"]] == [
        ("property-removed-from-open-model", "error", "#/$defs/ForkBranch"),
        (
            "pattern-property-added",
            "warning",
            "#/$defs/ForkBranch/patternProperties/^(.*){16}X$",
        ),
        ("pattern-added", "warning", "#/$defs/ForkBranch/properties/final_answer/pattern"),
    ]


_SARIF_PROPERTIES = {
    "repository": "producer",
    "copy": "wire",
    "role": "producer",
    "tried": ["schemas/rollout-wire.schema.json", "vendor/rollout-wire.schema.json"],
}


def _sarif_run(result: Result) -> dict[str, Any]:
    log = json.loads(result.stdout)
    check_sarif(log)
    (sarif_run,) = log["runs"]
    run_: dict[str, Any] = sarif_run
    return run_


def _bases(root: Path, checkout: Path) -> dict[str, Any]:
    return {
        "WIREGATE": {
            "uri": f"{root.as_uri()}/",
            "description": {"text": "the contract's repository"},
        },
        "PRODUCER": {
            "uri": f"{checkout.as_uri()}/",
            "description": {"text": "the checkout of producer"},
        },
    }


def test_an_unreadable_copy_is_placed_where_the_parser_stopped(
    run: Run, root: Path, tmp_path: Path
) -> None:
    """The load error's own line and column (never parsed from its message) place the
    annotation, the SARIF result and the JSON report's error_location in the copy."""
    checkout = tmp_path / "producer"
    copy = checkout / "schemas" / "rollout-wire.schema.json"
    copy.parent.mkdir(parents=True)
    copy.write_text('{\n  "type": "object",\n  "properties": {,\n}\n', encoding="utf-8")
    message = (
        f"{copy}: not valid JSON: Expecting property name enclosed in double quotes: "
        "line 3 column 18 (char 39)"
    )
    repo = ("--repo", f"producer={checkout}")
    github = run(*repo, "--format", "github")
    assert (github.exit_code, github.stdout) == (
        2,
        "::error file=schemas/rollout-wire.schema.json,line=3,col=18,"
        f"title=wiregate drift producer wire::{message}\n",
    )
    document = json.loads(run(*repo, "--format", "json").stdout)
    assert document["copies"][0]["error_location"] == {
        "file": "schemas/rollout-wire.schema.json",
        "line": 3,
        "column": 18,
    }
    sarif = run(*repo, "--format", "sarif")
    assert sarif.exit_code == 2
    sarif_run = _sarif_run(sarif)
    assert sarif_run["originalUriBaseIds"] == _bases(root, checkout)
    assert [rule["id"] for rule in sarif_run["tool"]["driver"]["rules"]] == ["copy-unreadable"]
    assert sarif_run["tool"]["driver"]["rules"][0]["shortDescription"]["text"].startswith(
        "The copy, or its repository at the ref, cannot be read or compared"
    )
    assert sarif_run["invocations"] == [
        {
            "executionSuccessful": False,
            "toolExecutionNotifications": [
                {"level": "error", "message": {"text": f"wiregate drift producer wire: {message}"}}
            ],
        }
    ]
    (result,) = sarif_run["results"]
    del result["partialFingerprints"]
    assert result == {
        "ruleId": "copy-unreadable",
        "ruleIndex": 0,
        "level": "error",
        "message": {"text": f"producer wire: error: {message}"},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {
                        "uri": "schemas/rollout-wire.schema.json",
                        "uriBaseId": "PRODUCER",
                    },
                    "region": {"startLine": 3, "startColumn": 18},
                },
                "message": {"text": "the copy"},
            }
        ],
        "properties": {**_SARIF_PROPERTIES, "verdict": "error"},
    }


def test_sarif_reports_a_copy_not_found_and_a_checkout_skipped_with_strict(
    run: Run, root: Path, tmp_path: Path
) -> None:
    """A copy that fails the gate without a finding is a result (code scanning would show
    green otherwise), located at its first configured path; a skipped checkout only when it
    fails the gate (--strict)."""
    checkout = tmp_path / "elsewhere"
    checkout.mkdir()
    missing = run("--repo", f"producer={checkout}", "--format", "sarif")
    assert missing.exit_code == 1
    sarif_run = _sarif_run(missing)
    assert sarif_run["originalUriBaseIds"] == _bases(root, checkout)
    assert sarif_run["invocations"] == [{"executionSuccessful": True}]
    (result,) = sarif_run["results"]
    assert result == {
        "ruleId": "copy-not-found",
        "ruleIndex": 0,
        "level": "error",
        "message": {
            "text": f"producer wire: not found: {checkout}: copy 'wire' not found "
            "(tried: schemas/rollout-wire.schema.json, vendor/rollout-wire.schema.json)"
        },
        "partialFingerprints": {"wiregate/v1": result["partialFingerprints"]["wiregate/v1"]},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {
                        "uri": "schemas/rollout-wire.schema.json",
                        "uriBaseId": "PRODUCER",
                    }
                },
                "message": {"text": "where the copy is expected (its first configured path)"},
            }
        ],
        "properties": {**_SARIF_PROPERTIES, "verdict": "not-found"},
    }
    # The same copy has the same fingerprint run after run.
    again = _sarif_run(run("--repo", f"producer={checkout}", "--format", "sarif"))
    assert again["results"][0]["partialFingerprints"] == result["partialFingerprints"]

    assert _sarif_run(run("--format", "sarif"))["results"] == []  # skipped: the gate passes
    strict = run("--format", "sarif", "--strict")
    assert strict.exit_code == 1
    (skipped,) = _sarif_run(strict)["results"]
    assert (skipped["ruleId"], skipped["level"], skipped["message"]["text"]) == (
        "copy-skipped",
        "error",
        f"producer wire: skipped: {root.parent / 'producer'}: no checkout of 'producer' "
        "(set --repo producer=PATH or WIREGATE_REPO_PRODUCER)",
    )
