"""``wiregate drift --new-since REF``: fail only on findings a copy did not have at REF. On the
replayed wasmagent-js checkout (real drift committed), and through the real pre-commit in a
throwaway governed repository using the hook as ``.pre-commit-hooks.yaml`` declares it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import git
import pytest
import yaml
from click.testing import CliRunner, Result

from wiregate.cli import main

from .replay import init_repo

WIRE = "packages/core/src/ranking/schemas/rollout-wire.schema.json"
TRAINING = "packages/core/src/ranking/schemas/training-record.schema.json"
RECORD = "#/$defs/RolloutBranchRecord"
BIN = Path(sys.executable).parent


def _new_finding(copy_at: str) -> str:
    """The root change dropping the task's minLength makes, where the copy writes it."""
    return (
        "    error: wasmagent-js has no minLength at `RolloutBranchRecord.task`; the contract has "
        "minLength 1 (min-length-removed): wasmagent-js may write records the contract rejects "
        f"[1 change in RolloutBranchRecord; copy {copy_at}, contract 83:37]"
    )


def _edit(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    document = json.loads(path.read_text(encoding="utf-8"))
    change(document)
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")


def _drop_task_min_length(document: dict[str, Any]) -> None:
    del document["$defs"]["RolloutBranchRecord"]["properties"]["task"]["minLength"]


def _restore_rank_minimum(document: dict[str, Any]) -> None:
    document["$defs"]["RolloutBranchRecord"]["properties"]["rank"]["minimum"] = 1


@pytest.fixture
def producer(replayed_copy: Callable[[str], git.Repo], monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("WIREGATE_REPO_WASMAGENT_JS", raising=False)
    return Path(replayed_copy("wasmagent-js").working_dir)


def _drift(root: Path, checkout: Path, *args: str) -> Result:
    return CliRunner().invoke(
        main,
        [
            "--root",
            str(root),
            "drift",
            "--repo",
            f"wasmagent-js={checkout}",
            "--copy",
            "rollout-wire",
            *args,
        ],
    )


def test_only_findings_added_since_the_ref_fail(producer: Path, repo_root: Path) -> None:
    plain = _drift(repo_root, producer, "--new-since", "HEAD")
    assert plain.exit_code == 0, plain.stdout
    lines = plain.stdout.splitlines()
    assert lines[0].endswith(
        "the producer writes records the canonical contract rejects "
        "(0 new, 33 present at HEAD, 36 info-level)"
    )
    assert lines[-1] == ("1 copy: 1 breaking drift (strict); findings: 0 new, 33 present at HEAD")
    assert _drift(repo_root, producer).exit_code == 1  # without it: the drift of old

    # More compatible: one finding goes, nothing comes.
    _edit(producer / WIRE, _restore_rank_minimum)
    better = _drift(repo_root, producer, "--new-since", "HEAD")
    assert better.exit_code == 0
    assert better.stdout.splitlines()[-1].endswith("findings: 0 new, 32 present at HEAD")

    # A new loosening: only it is named.
    _edit(producer / WIRE, _drop_task_min_length)
    worse = _drift(repo_root, producer, "--new-since", "HEAD")
    assert worse.exit_code == 1
    assert worse.stdout.splitlines()[:2] == [
        f"wasmagent-js rollout-wire (producer, must be forward compatible) {WIRE}: breaking "
        "drift: the producer writes records the canonical contract rejects "
        "(1 new, 32 present at HEAD, 36 info-level)",
        _new_finding("39:9"),
    ]
    document = json.loads(
        _drift(repo_root, producer, "--new-since", "HEAD", "--format", "json").stdout
    )
    head = git.Repo(producer).head.commit.hexsha
    copy = document["copies"][0]
    assert (document["new_since"], copy["new_since_commit"], copy["fails"]) == ("HEAD", head, True)
    assert copy["findings"] == {"new": 1, "accepted": 0, "expired": 0, "present_at_ref": 32}
    assert [c["id"] for c in copy["changes"] if c["present_at_ref"] is False] == [
        "min-length-removed"
    ]


def test_an_unknown_ref_is_exit_2(producer: Path, repo_root: Path) -> None:
    unknown = _drift(repo_root, producer, "--new-since", "no-such-ref")
    assert unknown.exit_code == 2
    assert unknown.stderr == f"wiregate: error: {producer}: unknown git ref 'no-such-ref'\n"


def test_a_repository_without_commits_has_only_new_findings(
    tmp_path: Path, repo_root: Path
) -> None:
    """The first commit has no previous state: every finding is the commit's own."""
    fresh = tmp_path / "fresh"
    init_repo(fresh)
    target = fresh / WIRE
    target.parent.mkdir(parents=True)
    target.write_bytes((repo_root / "contracts" / "rollout-wire.schema.json").read_bytes())
    identical = _drift(repo_root, fresh, "--new-since", "HEAD")
    assert identical.exit_code == 0, identical.stdout
    _edit(target, _drop_task_min_length)
    broken = _drift(repo_root, fresh, "--new-since", "HEAD")
    assert broken.exit_code == 1
    assert broken.stdout.splitlines()[:2] == [
        f"wasmagent-js rollout-wire (producer, must be forward compatible) {WIRE}: breaking "
        "drift: the producer writes records the canonical contract rejects "
        "(1 new, 0 present at HEAD)",
        _new_finding("152:9"),  # the contract file copied, then rewritten
    ]


def _run(cwd: Path, *args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PATH": f"{BIN}:{os.environ['PATH']}"}
    env.pop("CI", None)
    env.pop("WIREGATE_REPO_WASMAGENT_JS", None)
    return subprocess.run(
        args,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=False,
    )


def test_the_real_hook_passes_a_better_copy_and_refuses_a_new_break(
    producer: Path, repo_root: Path, tmp_path: Path
) -> None:
    """The wiregate-drift hook as the manifest declares it (run as a local hook on this
    environment's wiregate, so nothing is installed from the network), in wasmagent-js with
    its real drift committed and no baseline: only what a commit adds can refuse it."""
    (hook,) = [
        h
        for h in yaml.safe_load((repo_root / ".pre-commit-hooks.yaml").read_text())
        if h["id"] == "wiregate-drift"
    ]
    config = {
        "repos": [
            {
                "repo": "local",
                "hooks": [
                    {
                        "id": hook["id"],
                        "name": hook["name"],
                        "entry": f"{BIN}/{hook['entry']}",
                        "language": "system",
                        "files": hook["files"],
                        "pass_filenames": hook["pass_filenames"],
                        # The schema copies (the TypeScript types: tests/extract).
                        "args": [
                            "--repo",
                            "wasmagent-js=.",
                            "--copy",
                            "rollout-wire",
                            "--copy",
                            "training-record",
                        ],
                    }
                ],
            }
        ]
    }
    (producer / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    home = tmp_path / "pc-home"
    repo = git.Repo(producer)
    repo.git.add(".pre-commit-config.yaml")
    repo.index.commit("pre-commit config")
    installed = _run(producer, str(BIN / "pre-commit"), "install", home=home)
    assert installed.returncode == 0, installed.stdout

    def commit(message: str) -> subprocess.CompletedProcess[str]:
        repo.git.add("--all")
        return _run(producer, "git", "commit", "-m", message, home=home)

    _edit(producer / WIRE, _restore_rank_minimum)
    better = commit("rank starts at 1, as the contract says")
    assert better.returncode == 0, better.stdout
    assert "wiregate drift" in better.stdout and "Passed" in better.stdout
    assert str(repo.head.commit.message).strip() == "rank starts at 1, as the contract says"

    head = repo.head.commit.hexsha
    _edit(producer / WIRE, _drop_task_min_length)
    worse = commit("task may be empty")
    assert worse.returncode == 1, worse.stdout
    assert _new_finding("39:9") in worse.stdout.splitlines()
    assert "(1 new, 32 present at HEAD, 36 info-level)" in worse.stdout
    assert repo.head.commit.hexsha == head  # refused

    # The hook judges every copy of the repository: a commit that touches only the other
    # copy is refused while the staged break is there.
    _edit(producer / TRAINING, lambda document: document.update(title="Training records"))
    still = commit("retitle the training records")
    assert still.returncode == 1
