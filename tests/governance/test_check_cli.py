"""`wiregate check` end to end on throwaway wiregate repositories: summary and exit codes."""

from __future__ import annotations

import json
import shutil
from itertools import pairwise
from pathlib import Path
from typing import Any

import git
from click.testing import CliRunner

from codegen.layout import generated_files
from wiregate.cli import main

from .helpers import (
    add_required_field,
    copy_wiregate_files,
    edit_wire,
    make_wiregate_repo,
    root_of,
)


def check(repo: git.Repo, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["--root", str(root_of(repo)), "check", *args])
    return result.exit_code, result.output


def test_fresh_repository_passes(wiregate_repo: git.Repo) -> None:
    code, out = check(wiregate_repo, "--repo", "wasmagent-js")
    lines = out.splitlines()
    assert code == 0
    assert lines[:3] == [
        "contract  passed   3 schemas valid, 101 fixtures as labelled",
        "codegen   passed   generated code is fresh",
        "breaking  passed   no breaking change since HEAD (strict)",
    ]
    assert lines[3] == "drift     skipped  4 copies: 4 skipped (strict)"
    assert lines[-1] == "check passed: 3 passed, 1 skipped"


def test_breaking_change_without_version_bump_fails(wiregate_repo: git.Repo) -> None:
    edit_wire(wiregate_repo, add_required_field)
    code, out = check(wiregate_repo, "--repo", "wasmagent-js")
    assert code == 1
    assert "breaking  failed   breaking change without a version bump since HEAD" in out
    assert "codegen   failed   generated code is stale" in out
    # The valid branch-record fixtures lack the new field: the contract step says so too.
    assert "contract  failed   3 of 101 fixtures mislabelled" in out
    assert out.splitlines()[-1] == "check failed: 3 failed, 1 skipped"


def test_allow_breaking_states_it_in_the_output(wiregate_repo: git.Repo) -> None:
    edit_wire(wiregate_repo, add_required_field)
    code, out = check(
        wiregate_repo, "--allow-breaking", "all readers updated", "--repo", "wasmagent-js"
    )
    assert code == 1  # the generated code is still stale
    assert (
        "breaking  passed   2 breaking changes since HEAD allowed by --allow-breaking: "
        "all readers updated (strict)"
    ) in out
    code, _ = check(wiregate_repo, "--allow-breaking", " ", "--repo", "wasmagent-js")
    assert code == 2


def test_unknown_against_ref_exits_2(wiregate_repo: git.Repo) -> None:
    result = CliRunner().invoke(
        main,
        [
            "--root",
            str(root_of(wiregate_repo)),
            "check",
            "--against",
            "nope",
            "--repo",
            "wasmagent-js",
        ],
    )
    assert result.exit_code == 2
    assert result.stdout.splitlines()[-1] == "check could not run: 2 passed, 1 error, 1 skipped"
    assert result.stderr == (
        f"wiregate: error: breaking: {root_of(wiregate_repo)}: unknown git ref 'nope'\n"
    )


def run_check(root: Path, *args: str) -> tuple[int, list[str], str]:
    """Exit code, stdout lines without the drift step's per-copy details, and stderr."""
    result = CliRunner().invoke(main, ["--root", str(root), "check", *args])
    lines = [line for line in result.stdout.splitlines() if not line.startswith("    ")]
    return result.exit_code, lines, result.stderr


def test_first_commit_has_no_previous_version_to_break(repo_root: Path, tmp_path: Path) -> None:
    """`git init && git add -A && wiregate check`: the hook must let the first commit through."""
    root = root_of(make_wiregate_repo(repo_root, tmp_path / "unborn", commit=False))
    assert run_check(root) == (
        0,
        [
            "contract  passed   3 schemas valid, 101 fixtures as labelled",
            "codegen   passed   generated code is fresh",
            f"breaking  skipped  no previous version to compare ({root}: no commit yet)",
            "drift     skipped  13 copies: 13 skipped (strict)",
            "check passed: 2 passed, 2 skipped",
        ],
        "",
    )


def test_a_source_tree_without_git_has_no_previous_version(repo_root: Path, tmp_path: Path) -> None:
    root = copy_wiregate_files(repo_root, tmp_path / "tarball")
    code, lines, stderr = run_check(root)
    assert (code, stderr) == (0, "")
    assert lines[2:] == [
        f"breaking  skipped  no previous version to compare ({root}: not a git repository)",
        "drift     skipped  13 copies: 13 skipped (strict)",
        "check passed: 2 passed, 2 skipped",
    ]


def test_an_explicit_against_must_exist_even_without_history(
    repo_root: Path, tmp_path: Path
) -> None:
    unborn = root_of(make_wiregate_repo(repo_root, tmp_path / "unborn", commit=False))
    code, lines, stderr = run_check(unborn, "--against", "HEAD")
    assert (code, lines[2], lines[-1]) == (
        2,
        f"breaking  error    {unborn}: unknown git ref 'HEAD'",
        "check could not run: 2 passed, 1 error, 1 skipped",
    )
    assert stderr == f"wiregate: error: breaking: {unborn}: unknown git ref 'HEAD'\n"

    tarball = copy_wiregate_files(repo_root, tmp_path / "tarball")
    code, lines, stderr = run_check(tarball, "--against", "v1.0")
    assert (code, lines[2]) == (2, f"breaking  error    {tarball}: not a git repository")
    assert stderr == f"wiregate: error: breaking: {tarball}: not a git repository\n"


def test_missing_named_checkout_exits_2_naming_the_path(
    wiregate_repo: git.Repo, tmp_path: Path
) -> None:
    absent = tmp_path / "absent"
    code, lines, stderr = run_check(root_of(wiregate_repo), "--repo", f"trace-pipeline={absent}")
    assert (code, lines[3:]) == (
        2,
        ["drift     error    7 copies: 7 error (strict)", "check could not run: 3 passed, 1 error"],
    )
    # One line for the one problem, however many copies the checkout holds.
    assert stderr == (
        f"wiregate: error: drift: {absent}: checkout of 'trace-pipeline' not found: "
        "no such directory\n"
    )


def test_invalid_json_in_a_contract_schema_is_the_contract_steps_error(
    wiregate_repo: git.Repo,
) -> None:
    root = root_of(wiregate_repo)
    wire = root / "contracts/rollout-wire.schema.json"
    wire.write_text("{,\n" + wire.read_text()[1:])
    message = (
        f"{wire}: not valid JSON: Expecting property name enclosed in double quotes: "
        "line 1 column 2 (char 1)"
    )
    result = CliRunner().invoke(main, ["--root", str(root), "check"])
    assert (result.exit_code, result.stdout.splitlines(), result.stderr) == (
        2,
        [
            "contract  error    a contract schema cannot be loaded",
            f"    {message}",
            "codegen   skipped  not run: the contract step could not run",
            "breaking  skipped  not run: the contract step could not run",
            "drift     skipped  not run: the contract step could not run",
            "check could not run: 1 error, 3 skipped",
        ],
        f"wiregate: error: contract: {message}\n",
    )
    github = CliRunner().invoke(main, ["--root", str(root), "check", "--format", "github"])
    assert github.stdout.splitlines()[0] == (
        "::error file=contracts/rollout-wire.schema.json,title=wiregate check%3A contract::"
        + message
    )


def test_both_broken_schemas_are_named(wiregate_repo: git.Repo) -> None:
    root = root_of(wiregate_repo)
    for name in ("rollout-wire", "training-record"):
        (root / f"contracts/{name}.schema.json").write_text("[]\n")
    code, lines, stderr = run_check(root)
    assert (code, lines[0]) == (2, "contract  error    2 contract schemas cannot be loaded")
    assert stderr.splitlines() == [
        f"wiregate: error: contract: {root}/contracts/{name}.schema.json: "
        "a schema must be a JSON object"
        for name in ("rollout-wire", "training-record")
    ]


def test_json_and_github_formats(wiregate_repo: git.Repo) -> None:
    def cap_temperature(schema: dict[str, Any]) -> None:
        schema["$defs"]["RolloutBranchRecord"]["properties"]["temperature"]["maximum"] = 2

    edit_wire(wiregate_repo, cap_temperature)
    code, out = check(wiregate_repo, "--format", "json", "--repo", "wasmagent-js")
    document = json.loads(out)
    assert code == 1
    assert document["exit_code"] == 1
    assert [(s["name"], s["status"]) for s in document["steps"]] == [
        ("contract", "passed"),
        ("codegen", "failed"),
        ("breaking", "failed"),
        ("drift", "skipped"),
    ]
    assert document["steps"][2]["problems"] == [
        {
            "message": "contracts/rollout-wire.schema.json: 1 breaking change since HEAD without "
            "a version bump of $id or schema_version",
            "file": "contracts/rollout-wire.schema.json",
        }
    ]
    code, out = check(wiregate_repo, "--format", "github", "--repo", "wasmagent-js")
    assert code == 1
    # One annotation per stale generated file and per breaking contract file, at that file.
    assert out.splitlines()[:9] == [
        *(
            f"::error file=datafactory/wire/{name},title=wiregate check%3A codegen::"
            f"datafactory/wire/{name}: stale or edited: run `wiregate codegen` and commit it"
            for name in generated_files()
        ),
        "::error file=contracts/rollout-wire.schema.json,title=wiregate check%3A breaking::"
        "contracts/rollout-wire.schema.json: 1 breaking change since HEAD without a version bump "
        "of $id or schema_version",
    ]
    checkout = root_of(wiregate_repo).parent / "wasmagent-js"
    assert out.splitlines()[9:11] == [
        f"::warning title=wiregate drift wasmagent-js (4 copies)::{checkout}: no checkout of "
        "'wasmagent-js' (set --repo wasmagent-js=PATH or WIREGATE_REPO_WASMAGENT_JS)",
        "contract  passed   3 schemas valid, 101 fixtures as labelled",
    ]


def test_github_annotations_are_escaped(repo_root: Path, tmp_path: Path) -> None:
    """GitHub's rules: %, CR and LF escaped in the message; also : and , in a property."""
    repo = make_wiregate_repo(repo_root, tmp_path / "50%\nroot")
    root = root_of(repo)
    valid = root / "contracts/fixtures/rollout-wire/DpoRecord/valid/producer.json"
    odd = valid.parent.parent / "invalid" / "100%, by:design.json"
    odd.write_bytes(valid.read_bytes())
    code, out = check(repo, "--format", "github", "--repo", "wasmagent-js")
    assert code == 1
    assert out.splitlines()[0] == (
        "::error file=contracts/fixtures/rollout-wire/DpoRecord/invalid/100%25%2C by%3Adesign.json,"
        "title=wiregate check%3A contract::contracts/fixtures/rollout-wire/"
        "DpoRecord/invalid/100%25, by:design.json: labelled invalid but is valid as DpoRecord: "
        "the validator finds no problem in it"
    )


def test_a_schema_that_breaks_the_metaschema_stops_the_gate(wiregate_repo: git.Repo) -> None:
    def typo(schema: dict[str, Any]) -> None:
        schema["$defs"]["RolloutBranchRecord"]["properties"]["rank"]["type"] = "integr"

    edit_wire(wiregate_repo, typo)
    code, out = check(wiregate_repo, "--repo", "wasmagent-js")
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == "contract  failed   schema breaks the metaschema"
    assert lines[1].endswith(
        "contracts/rollout-wire.schema.json: /$defs/RolloutBranchRecord/properties/rank/type: "
        "'integr' is not valid under any of the given schemas"
    )
    assert lines[2:5] == [
        "codegen   skipped  not run: the contract step failed",
        "breaking  skipped  not run: the contract step failed",
        "drift     skipped  not run: the contract step failed",
    ]
    assert "Traceback" not in out


def test_wiregate_in_a_subfolder_of_a_larger_repository(repo_root: Path, tmp_path: Path) -> None:
    """The breaking step reads the previous contract at its path from the git root."""
    outer = git.Repo.init(tmp_path / "mono", initial_branch="main")
    with outer.config_writer() as config:
        config.set_value("user", "name", "t")
        config.set_value("user", "email", "t@wiregate.invalid")
    inner = make_wiregate_repo(repo_root, tmp_path / "mono" / "tools" / "wiregate")
    shutil.rmtree(root_of(inner) / ".git")
    outer.git.add("--all")
    outer.index.commit("monorepo with wiregate in tools/wiregate")
    wire = root_of(inner) / "contracts" / "rollout-wire.schema.json"
    schema = json.loads(wire.read_text())
    add_required_field(schema)
    wire.write_text(json.dumps(schema, indent=2) + "\n")
    result = CliRunner().invoke(
        main, ["--root", str(root_of(inner)), "check", "--repo", "wasmagent-js"]
    )
    assert result.exit_code == 1
    assert "breaking  failed   breaking change without a version bump since HEAD" in result.stdout


def test_copy_too_costly_to_compare_exits_2_naming_it(
    wiregate_repo: git.Repo, tmp_path: Path
) -> None:
    # Every level an anyOf of three references to the level below: 3**30 paths in 3 KB.
    defs: dict[str, Any] = {"L0": {"type": "integer"}}
    for level in range(1, 31):
        defs[f"L{level}"] = {
            "anyOf": [{"$ref": f"#/$defs/L{level - 1}", "title": f"m{i}"} for i in range(3)]
        }
    checkout = tmp_path / "wasmagent-js"
    copy = checkout / "packages/core/src/ranking/schemas/rollout-wire.schema.json"
    copy.parent.mkdir(parents=True)
    copy.write_text(json.dumps({"$defs": defs, "$ref": "#/$defs/L30"}), encoding="utf-8")
    code, lines, stderr = run_check(root_of(wiregate_repo), "--repo", f"wasmagent-js={checkout}")
    assert (code, lines[3:]) == (
        2,
        [
            # The other schema copy and the two TypeScript types are not in the checkout.
            "drift     error    4 copies: 3 not found, 1 error (strict)",
            "check could not run: 3 passed, 1 error",
        ],
    )
    assert stderr == (
        f"wiregate: error: drift: {copy}: canonical contract vs copy: comparison exceeded its "
        "budget of 50,000 schema nodes (schemas too large or too recursive to compare)\n"
    )


def test_sarif_and_junit_formats(wiregate_repo: git.Repo) -> None:
    """SARIF: one result per problem of each failed step, at its file; JUnit: one case per
    step (the drift gate adds one per copy when it judges any)."""
    from tests.sarif_schema import check_sarif

    def cap_temperature(schema: dict[str, Any]) -> None:
        schema["$defs"]["RolloutBranchRecord"]["properties"]["temperature"]["maximum"] = 2

    edit_wire(wiregate_repo, cap_temperature)
    code, out = check(wiregate_repo, "--format", "sarif", "--repo", "wasmagent-js")
    assert code == 1
    log = json.loads(out)
    check_sarif(log)
    (run,) = log["runs"]
    assert [rule["id"] for rule in run["tool"]["driver"]["rules"]] == [
        "check-breaking",
        "check-codegen",
    ]
    located = [
        (
            r["ruleId"],
            r["level"],
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["message"]["text"],
        )
        for r in run["results"]
    ]
    assert located == [
        *(
            (
                "check-codegen",
                "error",
                f"datafactory/wire/{name}",
                f"datafactory/wire/{name}: stale or edited: run `wiregate codegen` and commit it",
            )
            for name in generated_files()
        ),
        (
            "check-breaking",
            "error",
            "contracts/rollout-wire.schema.json",
            "contracts/rollout-wire.schema.json: 1 breaking change since HEAD without a version "
            "bump of $id or schema_version",
        ),
    ]
    assert run["invocations"] == [{"executionSuccessful": True}]

    code, out = check(wiregate_repo, "--format", "junit", "--repo", "wasmagent-js")
    assert code == 1
    lines = out.splitlines()
    assert lines[1] == ('<testsuites name="wiregate check" tests="8" failures="2" errors="0">')
    cases = [line.strip() for line in lines if line.strip().startswith("<testcase ")]
    assert cases == [
        '<testcase classname="wiregate.check" name="contract"/>',
        '<testcase classname="wiregate.check" name="codegen">',
        '<testcase classname="wiregate.check" name="breaking">',
        '<testcase classname="wiregate.check" name="drift">',
        *(
            f'<testcase classname="wiregate.drift.wasmagent-js" name="{copy}">'
            for copy in ("rollout-wire", "training-record", "dpo-record-type", "ppo-record-type")
        ),
    ]


def test_the_drift_step_takes_new_since_and_a_baseline(
    wiregate_repo: git.Repo, tmp_path: Path
) -> None:
    from contracts import locate
    from wiregate.drift import expected_copy, load_mirrors

    contract = locate(root_of(wiregate_repo))
    (producer,) = [r for r in load_mirrors(contract).repositories if r.name == "wasmagent-js"]
    checkout = tmp_path / "wasmagent-js"
    for spec in (s for s in producer.copies if not s.code):
        target = checkout / spec.paths[0]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(expected_copy(contract, spec)), encoding="utf-8")
    governed = git.Repo.init(checkout)
    governed.index.add([str(p) for p in checkout.rglob("*.json")])
    governed.index.commit("the copies")
    repo = f"wasmagent-js={checkout}"
    copies = ["--copy", "rollout-wire", "--copy", "training-record"]
    missing = tmp_path / "no-such-baseline.toml"
    code, out = check(wiregate_repo, "--repo", repo, *copies, "--baseline", str(missing))
    assert code == 2
    assert f"wiregate: error: drift: {missing}: file not found" in out.splitlines()
    code, out = check(wiregate_repo, "--repo", repo, *copies, "--new-since", "no-such-ref")
    assert code == 2
    assert f"wiregate: error: drift: {checkout}: unknown git ref 'no-such-ref'" in out
    code, out = check(wiregate_repo, "--repo", repo, *copies, "--new-since", "HEAD")
    assert code == 0, out
    assert out.splitlines()[-4:] == [
        "drift     passed   2 copies: 2 identical (strict); findings: 0 new, 0 present at HEAD",
        "    wasmagent-js rollout-wire (producer, must be forward compatible) "
        "packages/core/src/ranking/schemas/rollout-wire.schema.json: identical",
        "    wasmagent-js training-record (producer, must be forward compatible) "
        "packages/core/src/ranking/schemas/training-record.schema.json: identical",
        "check passed: 4 passed",
    ]


def test_junit_counts_a_drift_failure_once_and_sarif_reports_copies_not_judged(
    wiregate_repo: git.Repo, tmp_path: Path
) -> None:
    """The drift step's case passes (the gate's summary as its output) when its copies carry
    the failures and errors: the header counts what a reader calls failures. SARIF has a
    result for each copy that cannot be judged, in its repository's base."""
    from tests.sarif_schema import check_sarif

    checkout = tmp_path / "wasmagent-js"
    copy = checkout / "packages/core/src/ranking/schemas/rollout-wire.schema.json"
    copy.parent.mkdir(parents=True)
    copy.write_text('{\n  "type": "object",\n  "required": [1,,\n}\n', encoding="utf-8")
    repo = ("--repo", f"wasmagent-js={checkout}")

    def stdout(*args: str, code: int = 2) -> str:
        root = str(root_of(wiregate_repo))
        result = CliRunner().invoke(main, ["--root", root, "check", *repo, *args])
        assert result.exit_code == code
        return result.stdout

    lines = stdout("--format", "junit").splitlines()
    assert lines[1:3] == [
        '<testsuites name="wiregate check" tests="8" failures="3" errors="1">',
        '  <testsuite name="wiregate check" tests="8" failures="3" errors="1" skipped="0">',
    ]
    drift = lines.index('    <testcase classname="wiregate.check" name="drift">')
    assert lines[drift + 1] == ("      <system-out>4 copies: 3 not found, 1 error (strict)")
    cases = [
        (line.strip(), following.strip().split(" ", 1)[0])
        for line, following in pairwise(lines)
        if line.strip().startswith('<testcase classname="wiregate.drift')
    ]
    assert cases == [
        ('<testcase classname="wiregate.drift.wasmagent-js" name="rollout-wire">', "<error"),
        *(
            (f'<testcase classname="wiregate.drift.wasmagent-js" name="{name}">', "<failure")
            for name in ("training-record", "dpo-record-type", "ppo-record-type")
        ),
    ]

    log = json.loads(stdout("--format", "sarif"))
    check_sarif(log)
    (run,) = log["runs"]
    located = [
        (
            r["ruleId"],
            r["level"],
            r["locations"][0]["physicalLocation"]["artifactLocation"],
            r["locations"][0]["physicalLocation"].get("region"),
        )
        for r in run["results"]
    ]
    base = {"uriBaseId": "WASMAGENT_JS"}
    assert located == [
        (
            "copy-unreadable",
            "error",
            {"uri": "packages/core/src/ranking/schemas/rollout-wire.schema.json", **base},
            {"startLine": 3, "startColumn": 18},
        ),
        # Where each copy is expected: its first configured path.
        (
            "copy-not-found",
            "error",
            {"uri": "packages/core/src/ranking/schemas/training-record.schema.json", **base},
            None,
        ),
        *(
            (
                "copy-not-found",
                "error",
                {"uri": "packages/core/src/ranking/RolloutExporter.ts", **base},
                None,
            )
            for _ in range(2)
        ),
    ]
    assert sorted(run["originalUriBaseIds"]) == ["WASMAGENT_JS", "WIREGATE"]
    (notification,) = run["invocations"][0]["toolExecutionNotifications"]
    assert notification["message"]["text"].startswith(
        f"wiregate drift wasmagent-js rollout-wire: {copy}: not valid JSON: "
    )
    assert run["invocations"][0]["executionSuccessful"] is False

    # No copy there at all: the gate fails (exit 1) on four copies, counted once each.
    copy.unlink()
    lines = stdout("--format", "junit", code=1).splitlines()
    assert lines[1] == '<testsuites name="wiregate check" tests="8" failures="4" errors="0">'
    assert '    <testcase classname="wiregate.check" name="drift">' in lines
