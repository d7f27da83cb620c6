"""The real pre-commit, in a throwaway clone: this repository's own hook refuses a schema edit
committed without regenerating, and lets it through after `wiregate codegen`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import git
import pytest
import yaml

from contracts import SCHEMA_FILES

from .helpers import (
    add_optional_field_with_version_bump,
    add_required_field,
    edit_wire,
    make_wiregate_repo,
    root_of,
)

BIN = Path(sys.executable).parent


def run(cwd: Path, *args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PATH": f"{BIN}:{os.environ['PATH']}"}
    env.pop("CI", None)  # pre-commit prints differently under CI; not relevant here
    # One stream: git prints the hook's output on stderr.
    return subprocess.run(
        args,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=False,
    )


@pytest.fixture
def hooked_repo(wiregate_repo: git.Repo, tmp_path: Path) -> git.Repo:
    root = root_of(wiregate_repo)
    (root / ".venv").symlink_to(Path(sys.prefix))  # the hook's entry is .venv/bin/wiregate
    (root / ".gitignore").write_text(".venv\n")
    wiregate_repo.git.add(".gitignore")
    wiregate_repo.index.commit("ignore the environment")
    installed = run(root, str(BIN / "pre-commit"), "install", home=tmp_path / "pc-home")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return wiregate_repo


def commit(repo: git.Repo, message: str, home: Path) -> subprocess.CompletedProcess[str]:
    root = root_of(repo)
    repo.git.add("--all")
    return run(root, "git", "commit", "-m", message, home=home)


def test_schema_edit_without_regenerating_is_refused_then_accepted(
    hooked_repo: git.Repo, tmp_path: Path
) -> None:
    home = tmp_path / "pc-home"
    head = hooked_repo.head.commit.hexsha
    edit_wire(hooked_repo, add_optional_field_with_version_bump)
    refused = commit(hooked_repo, "add policy_digest", home)
    assert refused.returncode == 1
    assert "wiregate check" in refused.stdout and "Failed" in refused.stdout
    assert "codegen   failed   generated code is stale" in refused.stdout
    assert "+    policy_digest: str | UnsetType = UNSET" in refused.stdout
    assert hooked_repo.head.commit.hexsha == head

    regenerated = run(root_of(hooked_repo), str(BIN / "wiregate"), "codegen", home=home)
    assert regenerated.returncode == 0, regenerated.stderr
    accepted = commit(hooked_repo, "add policy_digest", home)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert str(hooked_repo.head.commit.message).strip() == "add policy_digest"


def test_required_field_is_refused_even_after_regenerating(
    hooked_repo: git.Repo, tmp_path: Path
) -> None:
    home = tmp_path / "pc-home"
    edit_wire(hooked_repo, add_required_field)
    assert run(root_of(hooked_repo), str(BIN / "wiregate"), "codegen", home=home).returncode == 0
    refused = commit(hooked_repo, "require policy_digest", home)
    assert refused.returncode == 1
    assert "breaking  failed   breaking change without a version bump since HEAD" in refused.stdout
    assert "codegen   passed   generated code is fresh" in refused.stdout


def test_the_first_commit_of_a_repository_goes_through(repo_root: Path, tmp_path: Path) -> None:
    """No HEAD yet: the breaking step has nothing to compare and is skipped, not an error."""
    home = tmp_path / "pc-home"
    repo = make_wiregate_repo(repo_root, tmp_path / "wiregate", commit=False)
    root = root_of(repo)
    (root / ".venv").symlink_to(Path(sys.prefix))
    (root / ".gitignore").write_text(".venv\n")
    assert run(root, str(BIN / "pre-commit"), "install", home=home).returncode == 0
    done = commit(repo, "contract v1", home)
    assert done.returncode == 0, done.stdout
    hook_lines = [line for line in done.stdout.splitlines() if line.startswith("wiregate check")]
    assert len(hook_lines) == 1 and hook_lines[0].endswith("Passed"), done.stdout
    assert str(repo.head.commit.message).strip() == "contract v1"


def test_files_outside_the_contract_do_not_run_the_gate(
    hooked_repo: git.Repo, tmp_path: Path
) -> None:
    (root_of(hooked_repo) / "NOTES.md").write_text("notes\n")
    done = commit(hooked_repo, "notes", tmp_path / "pc-home")
    assert done.returncode == 0
    assert "(no files to check)Skipped" in done.stdout


def test_hook_manifest_and_config_are_valid(repo_root: Path, tmp_path: Path) -> None:
    home = tmp_path / "pc-home"
    manifest = run(
        repo_root, str(BIN / "pre-commit"), "validate-manifest", ".pre-commit-hooks.yaml", home=home
    )
    assert manifest.returncode == 0, manifest.stdout
    config = run(
        repo_root, str(BIN / "pre-commit"), "validate-config", ".pre-commit-config.yaml", home=home
    )
    assert config.returncode == 0, config.stdout
    hooks = yaml.safe_load((repo_root / ".pre-commit-hooks.yaml").read_text())
    assert [(h["id"], h["entry"], h.get("pass_filenames", True)) for h in hooks] == [
        ("wiregate-validate", "wiregate validate", True),
        ("wiregate-drift", "wiregate drift --new-since HEAD", False),
        ("wiregate-codegen", "wiregate codegen --check", False),
    ]


def test_the_drift_hook_runs_for_what_an_extraction_reads(repo_root: Path) -> None:
    """A commit changing only a tsconfig (its paths, its extends) changes what a TypeScript
    copy extracts to: the hook did not run for it."""
    manifest = {
        h["id"]: h for h in yaml.safe_load((repo_root / ".pre-commit-hooks.yaml").read_text())
    }
    files = re.compile(manifest["wiregate-drift"]["files"])
    names = [
        "packages/core/src/wire.ts", "src/x.mts", "evomerge/schemas/rollout.py",
        "schemas/rollout-wire.schema.json", "tsconfig.json", "packages/core/tsconfig.base.json",
        "config/jsconfig.json", "package.json", "packages/core/package.json",
        # not read by an extraction
        "fixtures/data.json", "package-lock.json", "README.md", "notes.tsconfig.txt",
    ]  # fmt: skip
    assert [name for name in names if files.search(name)] == names[:9]


def test_published_hooks_run_as_their_manifest_says(repo_root: Path, tmp_path: Path) -> None:
    """The manifest's entries and file patterns, run by pre-commit in a governed repository
    (as local hooks on this environment's wiregate, so nothing is installed from the network)."""
    manifest = {
        h["id"]: h for h in yaml.safe_load((repo_root / ".pre-commit-hooks.yaml").read_text())
    }
    governed = git.Repo.init(tmp_path / "governed", initial_branch="main")
    root = root_of(governed)
    (root / "package.json").write_text('{"name": "wasmagent-js"}\n')
    (root / "fixtures").mkdir()
    good = json.loads(
        (repo_root / "contracts/fixtures/rollout-wire/DpoRecord/valid/producer.json").read_text()
    )
    (root / "fixtures" / "dpo.jsonl").write_text(json.dumps(dict(good, rejected="")) + "\n")
    # Both schema copies mirrors.toml declares for the producer: a missing one fails the gate.
    vendored = root / "packages/core/src/ranking/schemas"
    vendored.mkdir(parents=True)
    for name in SCHEMA_FILES.values():
        (vendored / name).write_bytes((repo_root / "contracts" / name).read_bytes())
    hooks = []
    for hook_id, args in (
        ("wiregate-validate", []),
        # The schema copies: the TypeScript types are judged in tests/drift/test_code_copies.py.
        (
            "wiregate-drift",
            ["--repo", "wasmagent-js=.", "--copy", "rollout-wire", "--copy", "training-record"],
        ),
    ):
        hook = manifest[hook_id]
        hooks.append(
            {
                "id": hook_id,
                "name": hook["name"],
                "entry": f"{BIN}/{hook['entry']}",
                "language": "system",
                "files": hook["files"],
                "pass_filenames": hook.get("pass_filenames", True),
                "args": args,
            }
        )
    (root / ".pre-commit-config.yaml").write_text(
        yaml.safe_dump({"repos": [{"repo": "local", "hooks": hooks}]})
    )
    governed.git.add("--all")
    home = tmp_path / "pc-home"
    failed = run(root, str(BIN / "pre-commit"), "run", "--all-files", "--verbose", home=home)
    assert failed.returncode == 1
    assert (
        'fixtures/dpo.jsonl:1: /rejected: must be at least 1 characters long, got "" [DpoRecord]'
        in failed.stdout
    )
    assert "package.json" not in failed.stdout  # not a record file
    assert "wasmagent-js rollout-wire (producer, must be forward compatible) " in failed.stdout
    assert "packages/core/src/ranking/schemas/rollout-wire.schema.json: identical" in failed.stdout

    (root / "fixtures" / "dpo.jsonl").write_text(json.dumps(good) + "\n")
    governed.git.add("--all")
    passed = run(root, str(BIN / "pre-commit"), "run", "--all-files", home=home)
    assert passed.returncode == 0, passed.stdout
