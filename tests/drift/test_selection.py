"""Selecting repositories and copies (``--copy``), copies that are absent (failing, unless
optional), and the "since" of a history with an unreadable revision inside the run."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner, Result

from contracts import Contract
from wiregate.cli import main
from wiregate.drift import expected_copy, load_mirrors

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
[[repository.copy]]
id = "training"
schema = "training-record"
paths = ["schemas/training-record.schema.json"]
"""
WIRE = "schemas/rollout-wire.schema.json"


def _invoke(root: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["--root", str(root), *args])


def _checkout_with_wire(contract: Contract, tmp_path: Path) -> Path:
    checkout = tmp_path / "producer"
    (checkout / "schemas").mkdir(parents=True)
    spec = load_mirrors(contract).repository("wasmagent-js").copy("rollout-wire")
    (checkout / WIRE).write_text(json.dumps(expected_copy(contract, spec)))
    return checkout


def test_copy_selects_and_a_missing_copy_fails_with_the_paths_tried(
    wiregate_root: Callable[[str], Path], contract: Contract, tmp_path: Path
) -> None:
    root = wiregate_root(MIRRORS)
    checkout = _checkout_with_wire(contract, tmp_path)
    everything = _invoke(root, "drift", "--repo", f"producer={checkout}")
    assert everything.exit_code == 1
    assert everything.stdout.splitlines() == [
        f"producer wire (producer, must be forward compatible) {WIRE}: identical",
        "producer training (producer, must be forward compatible): not found",
        f"    {checkout}: copy 'training' not found (tried: schemas/training-record.schema.json)",
        "2 copies: 1 identical, 1 not found (strict)",
    ]
    only_wire = _invoke(root, "drift", "--repo", f"producer={checkout}", "--copy", "wire")
    assert only_wire.exit_code == 0
    assert only_wire.stdout.splitlines() == [
        f"producer wire (producer, must be forward compatible) {WIRE}: identical",
        "1 copy: 1 identical (strict)",
    ]
    both = _invoke(
        root, "drift", "--repo", f"producer={checkout}", "--copy", "wire", "--copy", "training"
    )
    assert both.stdout.splitlines()[-1] == "2 copies: 1 identical, 1 not found (strict)"
    typo = _invoke(root, "drift", "--copy", "wires")
    assert typo.exit_code == 2
    assert typo.stderr == (
        "wiregate: error: --copy 'wires': no such copy in producer (known: training, wire)\n"
    )


def test_an_optional_copy_may_be_absent(
    wiregate_root: Callable[[str], Path], contract: Contract, tmp_path: Path
) -> None:
    root = wiregate_root(MIRRORS.replace('id = "training"', 'id = "training"\noptional = true'))
    checkout = _checkout_with_wire(contract, tmp_path)
    result = _invoke(root, "drift", "--repo", f"producer={checkout}")
    assert result.exit_code == 0
    assert result.stdout.splitlines()[1:] == [
        "producer training (producer, must be forward compatible): not found (optional)",
        f"    {checkout}: copy 'training' not found (tried: schemas/training-record.schema.json)",
        "2 copies: 1 identical, 1 not found (strict)",
    ]
    report = json.loads(
        _invoke(root, "drift", "--repo", f"producer={checkout}", "--format", "json").stdout
    )
    assert [(c["copy"], c["verdict"], c["optional"]) for c in report["copies"]] == [
        ("wire", "identical", False),
        ("training", "not-found", True),
    ]
    assert _invoke(root, "drift", "--repo", f"producer={checkout}", "--strict").exit_code == 1


def test_check_selects_copies_too(
    wiregate_root: Callable[[str], Path], contract: Contract, tmp_path: Path
) -> None:
    root = wiregate_root(MIRRORS)
    checkout = _checkout_with_wire(contract, tmp_path)
    args = ("check", "--repo", f"producer={checkout}")
    failing = _invoke(root, *args)
    assert "drift     failed   2 copies: 1 identical, 1 not found (strict)" in failing.stdout
    passing = _invoke(root, *args, "--copy", "wire")
    assert "drift     passed   1 copy: 1 identical (strict)" in passing.stdout.splitlines()


def test_history_since_skips_an_unreadable_revision(
    wiregate_root: Callable[[str], Path], contract: Contract, tmp_path: Path
) -> None:
    """identical, breaking, unreadable, breaking (another edit): breaking since the first
    breaking commit, the unreadable one listed and skipped; --copy selects the copy."""
    root = wiregate_root(MIRRORS)
    repo = init_repo(tmp_path / "producer")
    spec = load_mirrors(contract).repository("wasmagent-js").copy("rollout-wire")
    good = expected_copy(contract, spec)
    breaking = json.loads(json.dumps(good))
    breaking["$defs"]["RolloutBranchRecord"]["properties"]["task"] = {"type": "integer"}
    worse = json.loads(json.dumps(breaking))
    worse["$defs"]["RolloutBranchRecord"]["properties"]["seed"] = {"type": "string"}
    shas = [
        commit_files(repo, {WIRE: json.dumps(document).encode()}, subject, date).hexsha
        for document, subject, date in (
            (good, "add the copy", "2026-07-01T10:00:00"),
            (breaking, "retype task", "2026-07-02T10:00:00"),
            ("{", "broken edit", "2026-07-03T10:00:00"),
            (worse, "add seed", "2026-07-04T10:00:00"),
        )
    ]
    result = _invoke(
        root, "drift", "history", "--repo", f"producer={repo.working_dir}", "--copy", "wire"
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[1:3] == [
        f"    now breaking drift since {shas[1][:7]} 2026-07-02: retype task",
        f"    skipped unreadable revisions in that run: {shas[2][:7]}",
    ]
    document = json.loads(
        _invoke(
            root,
            "drift",
            "history",
            "--repo",
            f"producer={repo.working_dir}",
            "--copy",
            "wire",
            "--format",
            "json",
        ).stdout
    )
    (history,) = document["histories"]
    assert (history["verdict"], history["since"], history["unreadable_in_run"]) == (
        "breaking-drift",
        shas[1],
        [shas[2]],
    )


def test_a_checkout_given_as_a_subfolder_of_its_work_tree_says_so(
    wiregate_root: Callable[[str], Path], contract: Contract, tmp_path: Path
) -> None:
    """``--repo producer=.`` run from a subfolder: the copies' paths are the root's, and the
    line says which root to give."""
    root = wiregate_root(MIRRORS)
    checkout = _checkout_with_wire(contract, tmp_path)
    init_repo(checkout)
    result = _invoke(root, "drift", "--repo", f"producer={checkout / 'schemas'}", "--copy", "wire")
    assert result.exit_code == 1
    assert result.stdout.splitlines()[1] == (
        f"    {checkout / 'schemas'}: copy 'wire' not found (tried: {WIRE}, "
        f"vendor/rollout-wire.schema.json); {checkout / 'schemas'} is inside the git work tree "
        f"{checkout}, which has it: give its root"
    )
    # A folder inside a work tree that has no such copy either: no advice.
    (checkout / WIRE).unlink()
    bare = _invoke(root, "drift", "--repo", f"producer={checkout / 'schemas'}", "--copy", "wire")
    assert bare.stdout.splitlines()[1] == (
        f"    {checkout / 'schemas'}: copy 'wire' not found (tried: {WIRE}, "
        "vendor/rollout-wire.schema.json)"
    )
