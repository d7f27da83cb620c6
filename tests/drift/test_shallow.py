"""``drift history`` in a shallow clone (what actions/checkout gives by default): the oldest
visible commit is not where the copy was added, and no "since" is claimed past it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import git
import pytest
from click.testing import CliRunner, Result

from wiregate.cli import main
from wiregate.gitsource import shallow_boundary

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
paths = ["schemas/rollout-wire.schema.json"]
"""
COPY = "schemas/rollout-wire.schema.json"
CUT_HERE = "first visible commit (shallow clone: history is cut here)"


@pytest.fixture
def root(wiregate_root: Callable[[str], Path]) -> Path:
    """A wiregate root holding our contract and a one-repository mirrors.toml."""
    return wiregate_root(MIRRORS)


def _producer(directory: Path, repo_root: Path, caps: list[float | None]) -> list[str]:
    """One commit per entry of ``caps``: the contract with the branch record's temperature
    capped at that maximum (None: uncapped, identical to the contract). Returns the shas."""
    repo = init_repo(directory)
    wire: dict[str, Any] = json.loads(
        (repo_root / "contracts/rollout-wire.schema.json").read_text()
    )
    temperature = wire["$defs"]["RolloutBranchRecord"]["properties"]["temperature"]
    shas = []
    for day, cap in enumerate(caps, start=1):
        temperature.pop("maximum", None)
        if cap is not None:
            temperature["maximum"] = cap
        data = json.dumps(wire, indent=2 + day % 2).encode()  # every commit changes the bytes
        subject = f"cap temperature at {cap}" if cap is not None else "copy the contract"
        date = f"2026-07-0{day}T00:00:00+0000"
        shas.append(commit_files(repo, {COPY: data}, subject, date).hexsha)
    repo.close()
    return shas


def _shallow_clone(source: Path, target: Path, depth: int) -> Path:
    git.Git().clone("-q", "--depth", str(depth), f"file://{source}", str(target))
    return target


def _history(root: Path, checkout: Path, *args: str) -> Result:
    return CliRunner().invoke(
        main, ["--root", str(root), "drift", "history", "--repo", f"producer={checkout}", *args]
    )


def test_the_oldest_visible_commit_is_a_cut_not_an_addition(
    root: Path, repo_root: Path, tmp_path: Path
) -> None:
    shas = _producer(tmp_path / "producer", repo_root, [2, 1.9, 1.8])
    clone = _shallow_clone(tmp_path / "producer", tmp_path / "clone", depth=2)
    with git.Repo(clone) as repo:
        assert shallow_boundary(repo) == {shas[1]}

    result = _history(root, clone)
    assert result.exit_code == 0
    assert result.stderr == (
        f"wiregate: warning: {clone}: shallow clone, history before {shas[1][:7]} is not "
        "available; fetch with --unshallow or fetch-depth: 0\n"
    )
    lines = result.stdout.splitlines()
    assert lines[0] == (
        "producer wire (producer, must be forward compatible with rollout-wire) at HEAD"
    )
    # Compatible drift since the first commit, which the clone does not hold: no claim past
    # the cut.
    assert lines[1] == (
        f"    now compatible drift at least since {shas[1][:7]} 2026-07-02: cap temperature at "
        "1.9 (shallow clone: history before it is not available)"
    )
    headings = [line for line in lines if line.startswith("  ") and not line.startswith("    ")]
    assert headings == [
        f"  {shas[2][:7]} 2026-07-03 modified {COPY}: cap temperature at 1.8",
        f"  {shas[1][:7]} 2026-07-02 {CUT_HERE} {COPY}: cap temperature at 1.9",
    ]
    assert lines[-1] == "      vs contract: compatible drift (1 changes, 0 breaking)"

    document = json.loads(_history(root, clone, "--format", "json").stdout)
    history = document["histories"][0]
    assert (history["verdict"], history["since"], history["shallow_cut"]) == (
        "compatible-drift",
        None,
        shas[1],
    )
    assert [(r["commit"], r["status"]) for r in history["revisions"]] == [
        (shas[2], "modified"),
        (shas[1], "first-visible"),
    ]
    assert _history(root, clone, "--format", "json").stderr == ""  # JSON has the field


def test_a_verdict_that_started_after_the_cut_keeps_its_since(
    root: Path, repo_root: Path, tmp_path: Path
) -> None:
    shas = _producer(tmp_path / "producer", repo_root, [None, None, 2])
    clone = _shallow_clone(tmp_path / "producer", tmp_path / "clone", depth=2)
    result = _history(root, clone)
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert (
        lines[1] == f"    now compatible drift since {shas[2][:7]} 2026-07-03: cap temperature at 2"
    )
    assert f"  {shas[1][:7]} 2026-07-02 {CUT_HERE} {COPY}: copy the contract" in lines
    assert result.stderr.startswith(f"wiregate: warning: {clone}: shallow clone, history before ")
    history = json.loads(_history(root, clone, "--format", "json").stdout)["histories"][0]
    assert (history["since"], history["shallow_cut"]) == (shas[2], shas[1])


def test_a_depth_1_clone_has_one_visible_revision(
    root: Path, repo_root: Path, tmp_path: Path
) -> None:
    shas = _producer(tmp_path / "producer", repo_root, [2, 1.9])
    clone = _shallow_clone(tmp_path / "producer", tmp_path / "clone", depth=1)
    lines = _history(root, clone).stdout.splitlines()
    assert lines[1:4] == [
        f"    now compatible drift at least since {shas[1][:7]} 2026-07-02: cap temperature at "
        "1.9 (shallow clone: history before it is not available)",
        f"  {shas[1][:7]} 2026-07-02 {CUT_HERE} {COPY}: cap temperature at 1.9",
        "      vs contract: compatible drift (1 changes, 0 breaking)",
    ]


def test_a_complete_clone_reports_the_addition_and_no_cut(
    root: Path, repo_root: Path, tmp_path: Path
) -> None:
    shas = _producer(tmp_path / "producer", repo_root, [2, 1.9, 1.8])
    clone = tmp_path / "clone"
    git.Git().clone("-q", f"file://{tmp_path / 'producer'}", str(clone))
    with git.Repo(clone) as repo:
        assert shallow_boundary(repo) == frozenset()
    result = _history(root, clone)
    assert (result.exit_code, result.stderr) == (0, "")
    lines = result.stdout.splitlines()
    assert (
        lines[1] == f"    now compatible drift since {shas[0][:7]} 2026-07-01: cap temperature at 2"
    )
    assert f"  {shas[0][:7]} 2026-07-01 added {COPY}: cap temperature at 2" in lines
    history = json.loads(_history(root, clone, "--format", "json").stdout)["histories"][0]
    assert (history["since"], history["shallow_cut"]) == (shas[0], None)
