"""``wiregate drift --discover``: files that look like a copy, wherever they hide."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from contracts import Contract
from tests.extract.checkouts import (
    commit_all,
    commit_with_pkg,
    crafted_tree,
    git_output,
    write_files,
)
from wiregate.cli import main
from wiregate.drift.discovery import discover


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def test_finds_copies_in_node_modules_and_site_packages(contract: Contract, tmp_path: Path) -> None:
    canonical = contract.schema_path("rollout-wire").read_bytes()
    record = {"title": "RolloutBranchRecord", "type": "object"}
    _write(
        tmp_path / "node_modules/@wasmagent/protocol/schemas/compliance/rollout-wire.schema.json",
        canonical,
    )
    _write(
        tmp_path / ".venv/lib/python3.11/site-packages/wasmagent_protocol/branch.json",
        json.dumps(record).encode(),
    )
    _write(
        tmp_path / "vendor/training.json",
        json.dumps({"$defs": {"Message": {}, "Unrelated": {}}}).encode(),
    )
    _write(tmp_path / "broken/training-record.schema.json", b"{")
    _write(tmp_path / "node_modules/left-pad/package.json", b'{"name": "left-pad"}')
    _write(tmp_path / "other.schema.json", json.dumps({"$schema": "x", "title": "Other"}).encode())
    _write(tmp_path / ".git/rollout-wire.schema.json", canonical)
    _write(tmp_path / "odd.json", b'{"$id": ["x"], "title": {"a": 1}, "$defs": []}')

    found = [
        (c.path, c.schema, c.canonical_at, c.reasons, c.error is not None, c.score, c.proposed)
        for c in discover(contract, tmp_path)
    ]
    defs = ", ".join(sorted(json.loads(canonical)["$defs"]))
    # Best coverage first: the canonical copy covers all of it; a title alone, or a shared
    # $defs name, covers nothing of the records and properties: listed, never proposed.
    assert found == [
        (
            "node_modules/@wasmagent/protocol/schemas/compliance/rollout-wire.schema.json",
            "rollout-wire",
            "#",
            ("$id", "title", "file name", f"$defs {defs}"),
            False,
            1.0,
            True,
        ),
        (
            ".venv/lib/python3.11/site-packages/wasmagent_protocol/branch.json",
            "rollout-wire",
            "#/$defs/RolloutBranchRecord",
            ("title names $defs/RolloutBranchRecord",),
            False,
            1 / 29,  # the record type, none of its 28 property paths
            False,
        ),
        (
            "broken/training-record.schema.json",
            "training-record",
            "#",
            ("file name",),
            True,
            0.0,
            False,
        ),
        ("vendor/training.json", "training-record", "#", ("$defs Message",), False, 0.0, False),
    ]


def test_replayed_consumer(contract: Contract, replayed: dict[str, Path]) -> None:
    found = {
        c.path: (c.schema, c.canonical_at, c.reasons)
        for c in discover(contract, replayed["trace-pipeline"])
    }
    # training-record/v2 names the SFT record type and TurnAnnotation: the consumer's SFT
    # schema is found as its record type.
    assert found == {
        "schemas/dpo-training-record.schema.json": (
            "training-record",
            "#/$defs/DpoTrainingRecord",
            ("title names $defs/DpoTrainingRecord", "$defs Message, Provenance, TurnAnnotation"),
        ),
        "schemas/ppo-training-record.schema.json": (
            "training-record",
            "#/$defs/PpoTrainingRecord",
            ("title names $defs/PpoTrainingRecord", "$defs Message, Provenance, TurnAnnotation"),
        ),
        "schemas/rollout-wire.schema.json": (
            "rollout-wire",
            "#/$defs/RolloutBranchRecord",
            ("title names $defs/RolloutBranchRecord", "file name", "$defs BuildResult"),
        ),
        "schemas/sft-training-record.schema.json": (
            "training-record",
            "#/$defs/SftTrainingRecord",
            ("title names $defs/SftTrainingRecord", "$defs Message, Provenance, TurnAnnotation"),
        ),
    }


def test_cli_discover(repo_root: Path, replayed: dict[str, Path]) -> None:
    checkout = replayed["wasmagent-js"]
    result = CliRunner().invoke(
        main, ["--root", str(repo_root), "drift", "--discover", "--repo", f"anything={checkout}"]
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        f"anything ({checkout}): 2 candidates, 1 proposed",
        "  packages/core/src/ranking/schemas/rollout-wire.schema.json: rollout-wire #, "
        "covers 59% (matched: file name; $defs DpoProvenance, DpoRecord, PpoProvenance, "
        "PpoRecord, RolloutBranchRecord, RolloutTreeRecord)",
        # The producer's v1 copy covers less of training-record/v2 (its SFT and facts defs).
        "  packages/core/src/ranking/schemas/training-record.schema.json: training-record #, "
        "covers 23%, below the 50% threshold: not proposed (matched: file name; $defs "
        "DpoTrainingRecord, LossWeightTokens, Message, PpoTrainingRecord, Provenance)",
        "  ready to paste under the [[repository]] entry of anything in contracts/mirrors.toml:",
        "",
        "[[repository.copy]]",
        'id = "rollout-wire"',
        'schema = "rollout-wire"',
        'canonical_at = "#"',
        'paths = ["packages/core/src/ranking/schemas/rollout-wire.schema.json"]',
    ]
    as_json = CliRunner().invoke(
        main,
        [
            "--root",
            str(repo_root),
            "drift",
            "--discover",
            "--repo",
            f"x={checkout}",
            "--format",
            "json",
        ],
    )
    document = json.loads(as_json.stdout)
    assert [
        (c["path"], c["score"], c["proposed"]) for c in document["repositories"][0]["candidates"]
    ] == [
        ("packages/core/src/ranking/schemas/rollout-wire.schema.json", 0.5955, True),
        ("packages/core/src/ranking/schemas/training-record.schema.json", 0.2362, False),
    ]
    github = CliRunner().invoke(
        main,
        [
            "--root",
            str(repo_root),
            "drift",
            "--discover",
            "--format",
            "github",
            "--repo",
            f"x={checkout}",
        ],
    )
    assert github.exit_code == 2
    assert github.stderr == "wiregate: error: --discover prints json, text, not github\n"


def test_copies_behind_symlinked_packages_are_found(contract: Contract, tmp_path: Path) -> None:
    """pnpm links packages into node_modules; a link cycle does not hang the walk."""
    checkout = tmp_path / "producer"
    store = checkout / "node_modules" / ".pnpm" / "protocol@1.0.0" / "schemas" / "compliance"
    store.mkdir(parents=True)
    (store / "rollout-wire.schema.json").write_text(json.dumps(contract.schemas["rollout-wire"]))
    scoped = checkout / "node_modules" / "@wasmagent"
    scoped.mkdir(parents=True)
    (scoped / "protocol").symlink_to(store.parent.parent, target_is_directory=True)
    (store / "loop").symlink_to(checkout, target_is_directory=True)
    found = {c.path for c in discover(contract, checkout)}
    assert "node_modules/@wasmagent/protocol/schemas/compliance/rollout-wire.schema.json" in found


def test_a_crafted_tree_at_a_ref_is_one_line_not_an_internal_error(
    repo_root: Path, tmp_path: Path
) -> None:
    """A tree object holding ``..`` (git never commits one; a hostile repository's objects may)
    stopped GitPython's walk with a ValueError: exit 3, an internal error."""
    checkout = tmp_path / "gov"
    write_files(checkout, {"a.json": "{}\n"})
    commit_all(checkout)
    tree = git_output(checkout, "rev-parse", "HEAD^{tree}")
    commit = commit_with_pkg(checkout, crafted_tree(checkout, ("..", tree)))
    result = CliRunner().invoke(
        main,
        [
            "--root",
            str(repo_root),
            "drift",
            "--discover",
            "--repo",
            f"gov={checkout}",
            "--ref",
            commit,
        ],
    )
    assert result.exit_code == 2
    assert result.stderr == (
        f"wiregate: error: {checkout}@{commit}: a committed tree holds an entry git itself "
        "refuses (such as '..'): refused\n"
    )
