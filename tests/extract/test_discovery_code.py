"""``wiregate drift --discover`` lists the types declared in code that cover a canonical
record type: exported TypeScript interfaces and type aliases, Python model classes (read with
``ast``, never imported), scored like schema files, with a ready-to-paste copy block."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from contracts import Contract
from wiregate.cli import main
from wiregate.drift import Verdict, run_drift
from wiregate.drift.config import load_mirrors
from wiregate.drift.discovery import discover, scan

from .conftest import lay_out_trace, lay_out_wasmagent

TREE_FIELDS = [("rollout_id", "str"), ("task", "str"), ("branches", "list"), ("fork_map", "dict")]


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _discover(repo_root: Path, *args: str) -> list[str]:
    result = CliRunner().invoke(main, ["--root", str(repo_root), "drift", "--discover", *args])
    assert result.exit_code == 0, result.output
    return result.stdout.splitlines()


def test_the_producer_types_are_found_and_proposed(
    repo_root: Path, corpus_dir: Path, tmp_path: Path
) -> None:
    root = lay_out_wasmagent(corpus_dir, "6a62876", tmp_path / "wasmagent-js")
    # An installed package's types are not the checkout's: node_modules is not searched.
    _write(root / "node_modules/@x/y/index.ts", "export interface DpoRecord { prompt: string }\n")
    # Not exported: the extractor could not read it.
    _write(root / "src/local.ts", "interface PpoRecord { prompt: string }\n")
    assert _discover(repo_root, "--repo", f"wasmagent-js={root}") == [
        f"wasmagent-js ({root}): 4 candidates, 3 proposed",
        "  packages/core/src/ranking/RolloutTreeExporter.ts:17 (typescript RolloutTreeRecord): "
        "rollout-wire #/$defs/RolloutTreeRecord, covers 92% (matched: type name; field names 4/5)",
        "  packages/core/src/ranking/RolloutExporter.ts:34 (typescript PpoRecord): rollout-wire "
        "#/$defs/PpoRecord, covers 90% (matched: type name; field names 5/5)",
        "  packages/core/src/ranking/RolloutExporter.ts:17 (typescript DpoRecord): rollout-wire "
        "#/$defs/DpoRecord, covers 84% (matched: type name; field names 6/6)",
        # The producer's v1 copy covers less of training-record/v2 (its SFT and facts defs).
        "  packages/core/src/ranking/schemas/training-record.schema.json: training-record #, "
        "covers 23%, below the 50% threshold: not proposed (matched: file name; $defs "
        "DpoTrainingRecord, LossWeightTokens, Message, PpoTrainingRecord, Provenance)",
        "  ready to paste under the [[repository]] entry of wasmagent-js in contracts/mirrors.toml:",
        "",
        "[[repository.copy]]",
        'id = "rollout-tree-record-type"',
        'kind = "typescript"',
        'schema = "rollout-wire"',
        'canonical_at = "#/$defs/RolloutTreeRecord"',
        'type = "RolloutTreeRecord"',
        'paths = ["packages/core/src/ranking/RolloutTreeExporter.ts"]',
        "",
        "[[repository.copy]]",
        'id = "ppo-record-type"',
        'kind = "typescript"',
        'schema = "rollout-wire"',
        'canonical_at = "#/$defs/PpoRecord"',
        'type = "PpoRecord"',
        'paths = ["packages/core/src/ranking/RolloutExporter.ts"]',
        "",
        "[[repository.copy]]",
        'id = "dpo-record-type"',
        'kind = "typescript"',
        'schema = "rollout-wire"',
        'canonical_at = "#/$defs/DpoRecord"',
        'type = "DpoRecord"',
        'paths = ["packages/core/src/ranking/RolloutExporter.ts"]',
    ]


def test_the_consumer_models_are_found_without_importing_them(
    contract: Contract, repo_root: Path, corpus_dir: Path, tmp_path: Path
) -> None:
    checkout = tmp_path / "trace-pipeline"
    lay_out_trace(corpus_dir, "692ee62", checkout / "src")  # a src layout: python_path "src"
    marker = tmp_path / "imported"
    fields = "".join(f"    {name}: {kind}\n" for name, kind in TREE_FIELDS)
    _write(
        checkout / "src/evomerge/tree.py",
        "import dataclasses\nfrom typing import TypedDict\nimport msgspec\n\n"
        f"open({str(marker)!r}, 'w').close()  # importing this module would leave a file\n\n"
        f"@dataclasses.dataclass\nclass TreeAsDataclass:\n{fields}\n"
        f"class TreeAsTypedDict(TypedDict):\n{fields}\n"
        f"class TreeAsStruct(msgspec.Struct):\n{fields}\n"
        f"class NotAModel:\n{fields}",
    )
    _write(checkout / "src/evomerge/broken.py", "class RolloutTreeRecord(BaseModel:\n")
    _write(
        checkout / "scripts/export-schemas.py",
        f"from pydantic import BaseModel\nclass RolloutTreeRecord(BaseModel):\n{fields}",
    )
    found = [
        (c.path, c.line, c.kind, c.declared, c.canonical_at, c.reasons, round(c.score, 4))
        for c in discover(contract, checkout)
    ]
    # Best coverage first; a class with four of the five names and nothing nested is listed,
    # below the threshold. NotAModel, the file that does not parse and the script (not a
    # module name) are not candidates.
    # Under training-record/v2 the consumer's v1 DPO and PPO models (no prompt, the old
    # provenance) share more field names with SftTrainingRecord than with their own v2
    # definitions: field names outweigh the type name here (the ranking, not the contract).
    assert found == [
        (
            "src/evomerge/schemas/training.py",
            37,
            "python",
            "evomerge.schemas.training:SftTrainingRecord",
            "#/$defs/SftTrainingRecord",
            ("type name", "field names 6/6"),
            0.8571,
        ),
        (
            "src/evomerge/schemas/training.py",
            50,
            "python",
            "evomerge.schemas.training:DpoTrainingRecord",
            "#/$defs/SftTrainingRecord",
            ("field names 5/6",),
            0.8095,
        ),
        (
            "src/evomerge/schemas/training.py",
            68,
            "python",
            "evomerge.schemas.training:PpoTrainingRecord",
            "#/$defs/SftTrainingRecord",
            ("field names 5/6",),
            0.8095,
        ),
        (
            "src/evomerge/schemas/rollout.py",
            74,
            "python",
            "evomerge.schemas.rollout:RolloutTreeRecord",
            "#/$defs/RolloutTreeRecord",
            ("type name", "field names 5/5"),
            0.7143,
        ),
        (
            "src/evomerge/schemas/rollout.py",
            41,
            "python",
            "evomerge.schemas.rollout:RolloutBranchRecord",
            "#/$defs/RolloutBranchRecord",
            ("type name", "field names 14/15"),
            0.6207,
        ),
        (
            "src/evomerge/tree.py",
            8,
            "python",
            "evomerge.tree:TreeAsDataclass",
            "#/$defs/RolloutTreeRecord",
            ("field names 4/5",),
            0.3571,
        ),
        (
            "src/evomerge/tree.py",
            14,
            "python",
            "evomerge.tree:TreeAsTypedDict",
            "#/$defs/RolloutTreeRecord",
            ("field names 4/5",),
            0.3571,
        ),
        (
            "src/evomerge/tree.py",
            20,
            "python",
            "evomerge.tree:TreeAsStruct",
            "#/$defs/RolloutTreeRecord",
            ("field names 4/5",),
            0.3571,
        ),
    ]
    assert not marker.exists()
    lines = _discover(repo_root, "--repo", f"trace-pipeline={checkout}")
    block = lines[lines.index('id = "rollout-branch-record-model"') - 1 :][:7]
    assert block == [
        "[[repository.copy]]",
        'id = "rollout-branch-record-model"',
        'kind = "python"',
        'schema = "rollout-wire"',
        'canonical_at = "#/$defs/RolloutBranchRecord"',
        'model = "evomerge.schemas.rollout:RolloutBranchRecord"',
        'python_path = "src"',
    ]

    # The block pasted into mirrors.toml is a copy the gate judges.
    config = tmp_path / "mirrors.toml"
    config.write_text(
        'version = 1\n\n[[repository]]\nname = "trace-pipeline"\nrole = "consumer"\n'
        f'checkout = "{checkout}"\n\n' + "\n".join(block) + "\n",
        encoding="utf-8",
    )
    (result,) = run_drift(contract, config=load_mirrors(contract, config)).results
    assert (result.copy_id, result.kind, result.path, result.verdict) == (
        "rollout-branch-record-model",
        "python",
        "src/evomerge/schemas/rollout.py",
        Verdict.COMPATIBLE,
    )


def test_the_code_walk_is_bounded_on_a_hostile_tree(
    contract: Contract, repo_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkout = tmp_path / "hostile"
    _write(
        checkout / "types.ts",
        "export interface RolloutTreeRecord {\n  rollout_id: string;\n  task: string;\n}\n",
    )
    os.mkfifo(checkout / "pipe.ts")
    (checkout / "big.py").write_bytes(b"class A:\n    pass\n" + b"#" * 20_000)
    (checkout / "loop").symlink_to(checkout, target_is_directory=True)
    deep = checkout.joinpath(*["d"] * 66)
    deep.mkdir(parents=True)
    _write(checkout / "nested.py", "x: " + "list[" * 2_000 + "int" + "]" * 2_000 + "\n")
    candidates, skipped = scan(contract, checkout, max_bytes=15_000)
    assert [(c.path, c.declared, c.reasons) for c in candidates] == [
        ("types.ts", "RolloutTreeRecord", ("type name",))
    ]
    assert [(s.path, s.reason) for s in skipped] == [
        ("d/" * 64 + "d", "deeper than 64 levels, not searched"),
        ("big.py", "20018 bytes, over the limit of 15000"),
        ("pipe.ts", "a FIFO, not a regular file"),
    ]
    # Without node the TypeScript files are not searched: one line, the Python ones still are.
    monkeypatch.setenv("WIREGATE_NODE", str(tmp_path / "no-node"))
    lines = _discover(repo_root, "--repo", f"x={checkout}", "--format", "json")
    (repository,) = json.loads("\n".join(lines))["repositories"]
    assert repository["candidates"] == []
    assert repository["skipped"][-1] == {
        "path": "1 TypeScript files",
        "reason": f"not searched: node not found ({tmp_path / 'no-node'}): TypeScript copies "
        "need Node.js 20 or newer on PATH (or WIREGATE_NODE)",
    }
