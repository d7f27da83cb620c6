"""`wiregate check` end to end on throwaway wiregate repositories: summary and exit codes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import git
from click.testing import CliRunner

from wiregate.cli import main

from .helpers import add_required_field, edit_wire, root_of


def check(repo: git.Repo, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["--root", str(root_of(repo)), "check", *args])
    return result.exit_code, result.output


def test_fresh_repository_passes(wiregate_repo: git.Repo) -> None:
    code, out = check(wiregate_repo, "--repo", "wasmagent-js")
    lines = out.splitlines()
    assert code == 0
    assert lines[:3] == [
        "contract  passed   2 schemas valid, 49 fixtures as labelled",
        "codegen   passed   generated code is fresh",
        "breaking  passed   no breaking change since HEAD",
    ]
    assert lines[3] == "drift     passed   2 copies: 2 skipped"
    assert lines[-1] == "check passed: 4 passed"


def test_breaking_change_without_version_bump_fails(wiregate_repo: git.Repo) -> None:
    edit_wire(wiregate_repo, add_required_field)
    code, out = check(wiregate_repo, "--repo", "wasmagent-js")
    assert code == 1
    assert "breaking  failed   breaking change without a version bump since HEAD" in out
    assert "codegen   failed   generated code is stale" in out
    # The valid branch-record fixtures lack the new field: the contract step says so too.
    assert "contract  failed   3 of 49 fixtures mislabelled" in out
    assert out.splitlines()[-1] == "check failed: 1 passed, 3 failed"


def test_allow_breaking_states_it_in_the_output(wiregate_repo: git.Repo) -> None:
    edit_wire(wiregate_repo, add_required_field)
    code, out = check(wiregate_repo, "--allow-breaking", "--repo", "wasmagent-js")
    assert code == 1  # the generated code is still stale
    assert "breaking  passed   breaking change since HEAD allowed by --allow-breaking" in out


def test_unknown_against_ref_exits_2(wiregate_repo: git.Repo) -> None:
    code, out = check(wiregate_repo, "--against", "nope", "--repo", "wasmagent-js")
    assert code == 2
    assert out.splitlines()[-1] == "check could not run: 3 passed, 1 error"


def test_missing_named_checkout_exits_2(wiregate_repo: git.Repo, tmp_path: Path) -> None:
    code, out = check(wiregate_repo, "--repo", f"wasmagent-js={tmp_path / 'absent'}")
    assert code == 2
    assert "drift     error" in out


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
        ("drift", "passed"),
    ]
    code, out = check(wiregate_repo, "--format", "github", "--repo", "wasmagent-js")
    assert code == 1
    assert out.splitlines()[:2] == [
        "::error title=wiregate check: codegen::generated code is stale: run `wiregate codegen` "
        "and commit datafactory/wire/",
        "::error title=wiregate check: breaking::breaking change without a version bump since HEAD",
    ]
