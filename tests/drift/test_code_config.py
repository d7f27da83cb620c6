"""mirrors.toml code copies: kind = "typescript" and kind = "python", and their mistakes."""

from __future__ import annotations

from pathlib import Path

import pytest

from contracts import Contract
from wiregate.drift.config import load_mirrors
from wiregate.errors import UserError

HEAD = """
version = 1
[[repository]]
name = "trace-pipeline"
checkout = "../trace-pipeline"
role = "consumer"
"""

TS = """
[[repository.copy]]
id = "dpo-record"
kind = "typescript"
schema = "rollout-wire"
canonical_at = "#/$defs/DpoRecord"
type = "DpoRecord"
paths = ["packages/core/src/ranking/RolloutExporter.ts"]
"""

PY = """
[[repository.copy]]
id = "branch-model"
kind = "python"
schema = "rollout-wire"
canonical_at = "#/$defs/RolloutBranchRecord"
model = "evomerge.schemas.rollout:RolloutBranchRecord"
"""


def _load(contract: Contract, tmp_path: Path, text: str) -> object:
    path = tmp_path / "mirrors.toml"
    path.write_text(text, encoding="utf-8")
    return load_mirrors(contract, path)


def test_code_copies_are_read(contract: Contract, tmp_path: Path) -> None:
    text = (
        HEAD
        + TS
        + PY
        + PY.replace('"branch-model"', '"tree-model"')
        .replace("RolloutBranchRecord", "RolloutTreeRecord")
        .replace('model = "', 'python_path = "src"\nrole = "producer"\nmodel = "')
    )
    config = _load(contract, tmp_path, text)
    copies = config.repositories[0].copies  # type: ignore[attr-defined]
    assert [(c.kind, c.name, c.type, c.model, c.python_path, c.mode, c.paths) for c in copies] == [
        (
            "typescript",
            "DpoRecord",
            "DpoRecord",
            None,
            ".",
            None,
            ("packages/core/src/ranking/RolloutExporter.ts",),
        ),
        (
            "python",
            "RolloutBranchRecord",
            None,
            "evomerge.schemas.rollout:RolloutBranchRecord",
            ".",
            "validation",
            ("evomerge/schemas/rollout.py", "evomerge/schemas/rollout/__init__.py"),
        ),
        (
            "python",
            "RolloutTreeRecord",
            None,
            "evomerge.schemas.rollout:RolloutTreeRecord",
            "src",
            "serialization",
            ("src/evomerge/schemas/rollout.py", "src/evomerge/schemas/rollout/__init__.py"),
        ),
    ]
    assert [c.code for c in copies] == [True, True, True]


@pytest.mark.parametrize(
    ("copy", "message"),
    [
        (
            TS.replace('type = "DpoRecord"\n', ""),
            "repository[0].copy[0]: a copy of kind 'typescript' needs 'type'",
        ),
        (
            TS + 'model = "a:B"\n',
            "repository[0].copy[0].model: not a key of a copy of kind 'typescript'",
        ),
        (
            PY.replace("model = ", 'paths = ["x.py"]\nmodel = '),
            "repository[0].copy[0].paths: not a key of a copy of kind 'python'",
        ),
        (
            PY.replace("model = ", "type = 'X'\nmodel = "),
            "repository[0].copy[0].type: not a key of a copy of kind 'python'",
        ),
        (
            PY.replace('model = "evomerge.schemas.rollout:RolloutBranchRecord"\n', ""),
            "repository[0].copy[0]: a copy of kind 'python' needs 'model'",
        ),
        (
            PY.replace(":RolloutBranchRecord", ""),
            'repository[0].copy[0].model: "evomerge.schemas.rollout" does not match',
        ),
        (
            PY + 'python_path = "../elsewhere"\n',
            "repository[0].copy[0].python_path: '../elsewhere' contains '..': paths must stay inside the checkout",
        ),
        (
            PY + 'mode = "json"\n',
            'repository[0].copy[0].mode: "json" is not one of "validation" or "serialization"',
        ),
        (
            TS.replace("RolloutExporter.ts", "RolloutExporter.js"),
            'repository[0].copy[0].paths[0]: "packages/core/src/ranking/RolloutExporter.js" does not match',
        ),
        (
            TS.replace('kind = "typescript"', 'kind = "rust"'),
            'repository[0].copy[0].kind: "rust" is not one of',
        ),
        (
            TS.replace('kind = "typescript"\n', ""),
            "repository[0].copy[0].type: not a key of a copy of kind 'schema'",
        ),
    ],
)
def test_code_copy_mistakes_are_one_line(
    contract: Contract, tmp_path: Path, copy: str, message: str
) -> None:
    with pytest.raises(UserError) as caught:
        _load(contract, tmp_path, HEAD + copy)
    assert str(caught.value).startswith(f"{tmp_path / 'mirrors.toml'}: {message}")
    assert "\n" not in str(caught.value)
