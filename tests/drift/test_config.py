"""contracts/mirrors.toml: the shipped config, and one clear line for every kind of mistake."""

from __future__ import annotations

from pathlib import Path

import pytest

from contracts import Contract
from wiregate.drift.config import env_var_name, load_mirrors, parse_repo_overrides
from wiregate.errors import UserError

VALID = """
version = 1
[[repository]]
name = "wasmagent-js"
checkout = "../wasmagent-js"
role = "producer"
[[repository.copy]]
id = "rollout-wire"
schema = "rollout-wire"
paths = ["a.json"]
"""


def test_shipped_config(contract: Contract) -> None:
    config = load_mirrors(contract)
    summary = [
        (
            r.name,
            r.checkout,
            r.role,
            c.id,
            c.schema,
            c.canonical_at,
            c.role,
            c.direction,
            c.paths[0],
        )
        for r in config.repositories
        for c in r.copies
    ]
    assert summary == [
        (
            "wasmagent-js",
            "../wasmagent-js",
            "producer",
            "rollout-wire",
            "rollout-wire",
            "#",
            "producer",
            "forward",
            "packages/core/src/ranking/schemas/rollout-wire.schema.json",
        ),
        (
            "wasmagent-js",
            "../wasmagent-js",
            "producer",
            "training-record",
            "training-record",
            "#",
            "producer",
            "forward",
            "packages/core/src/ranking/schemas/training-record.schema.json",
        ),
        (
            "wasmagent-js",
            "../wasmagent-js",
            "producer",
            "dpo-record-type",
            "rollout-wire",
            "#/$defs/DpoRecord",
            "producer",
            "forward",
            "packages/core/src/ranking/RolloutExporter.ts",
        ),
        (
            "wasmagent-js",
            "../wasmagent-js",
            "producer",
            "ppo-record-type",
            "rollout-wire",
            "#/$defs/PpoRecord",
            "producer",
            "forward",
            "packages/core/src/ranking/RolloutExporter.ts",
        ),
        (
            "trace-pipeline",
            "../trace-pipeline",
            "consumer",
            "rollout-wire",
            "rollout-wire",
            "#/$defs/RolloutBranchRecord",
            "consumer",
            "backward",
            "schemas/rollout-wire.schema.json",
        ),
        (
            "trace-pipeline",
            "../trace-pipeline",
            "consumer",
            "dpo-training-record",
            "training-record",
            "#/$defs/DpoTrainingRecord",
            "producer",
            "forward",
            "schemas/dpo-training-record.schema.json",
        ),
        (
            "trace-pipeline",
            "../trace-pipeline",
            "consumer",
            "ppo-training-record",
            "training-record",
            "#/$defs/PpoTrainingRecord",
            "producer",
            "forward",
            "schemas/ppo-training-record.schema.json",
        ),
        (
            "trace-pipeline",
            "../trace-pipeline",
            "consumer",
            "branch-record-model",
            "rollout-wire",
            "#/$defs/RolloutBranchRecord",
            "consumer",
            "backward",
            "evomerge/schemas/rollout.py",
        ),
        (
            "trace-pipeline",
            "../trace-pipeline",
            "consumer",
            "tree-record-model",
            "rollout-wire",
            "#/$defs/RolloutTreeRecord",
            "consumer",
            "backward",
            "evomerge/schemas/rollout.py",
        ),
        (
            "trace-pipeline",
            "../trace-pipeline",
            "consumer",
            "dpo-training-record-model",
            "training-record",
            "#/$defs/DpoTrainingRecord",
            "producer",
            "forward",
            "evomerge/schemas/training.py",
        ),
        (
            "trace-pipeline",
            "../trace-pipeline",
            "consumer",
            "ppo-training-record-model",
            "training-record",
            "#/$defs/PpoTrainingRecord",
            "producer",
            "forward",
            "evomerge/schemas/training.py",
        ),
        (
            "wasmagent-protocol",
            "../wasmagent-protocol",
            "mirror",
            "rollout-wire",
            "rollout-wire",
            "#",
            "mirror",
            "full",
            "schemas/compliance/rollout-wire.schema.json",
        ),
        (
            "wasmagent-protocol",
            "../wasmagent-protocol",
            "mirror",
            "training-record",
            "training-record",
            "#",
            "mirror",
            "full",
            "schemas/compliance/training-record.schema.json",
        ),
    ]
    assert config.repository("trace-pipeline").copy("rollout-wire").paths == (
        "schemas/rollout-wire.schema.json",
        "src/datafactory/rollout-wire.schema.json",
    )
    assert config.repository("wasmagent-js").copy("rollout-wire").paths[1] == (
        "node_modules/@wasmagent/protocol/schemas/compliance/rollout-wire.schema.json"
    )
    assert config.base_dir == contract.directory.parent


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("version = 1\nrepository = [", "not valid TOML: "),
        # Python's recursion limit inside tomllib, and a 20,000-level table built without
        # recursion that the schema check then recursed into: internal errors (exit 3).
        ("version = 1\nx = " + "[" * 900 + "]" * 900 + "\n", "nested too deeply to read"),
        ("version = 1\n" + "a." * 20000 + "b = 1\n", "nested over 32 levels deep"),
        (VALID.replace("version = 1", "version = 2"), "version: 1 was expected"),
        (
            VALID.replace('role = "producer"', 'role = "reader"'),
            'repository[0].role: "reader" is not one of "producer", "consumer" or "mirror"',
        ),
        (
            VALID.replace('paths = ["a.json"]', "paths = []"),
            "repository[0].copy[0].paths: [] has less than 1 item",
        ),
        (
            VALID.replace('paths = ["a.json"]', 'paths = ["/abs.json"]'),
            "repository[0].copy[0].paths[0]: '/abs.json' is absolute: paths are relative to "
            "the checkout",
        ),
        (
            VALID.replace('checkout = "../wasmagent-js"\n', ""),
            'repository[0]: "checkout" is a required property',
        ),
        (
            VALID + 'colour = "red"\n',
            "repository[0].copy[0]: Additional properties are not allowed "
            "('colour' was unexpected)",
        ),
        (
            VALID.replace('schema = "rollout-wire"', 'schema = "wire"'),
            "repository[0].copy[0].schema: unknown schema 'wire' (known: rollout-wire, "
            "training-record, trl-record)",
        ),
        (
            VALID.replace(
                'schema = "rollout-wire"', 'schema = "rollout-wire"\ncanonical_at = "#/$defs/Nope"'
            ),
            "repository[0].copy[0].canonical_at: '#/$defs/Nope' does not exist in "
            "rollout-wire.schema.json",
        ),
        (
            VALID + VALID.replace("version = 1", ""),
            "repository[1].name: 'wasmagent-js' is declared twice",
        ),
        (
            VALID + VALID.replace("version = 1", "").replace("wasmagent-js", "wasmagent.js"),
            "repository[1].name: 'wasmagent.js' and 'wasmagent-js' share the override variable "
            "WIREGATE_REPO_WASMAGENT_JS: rename one",
        ),
        (
            VALID
            + '[[repository.copy]]\nid = "rollout-wire"\nschema = "rollout-wire"\npaths = ["b"]\n',
            "repository[0].copy[1].id: 'rollout-wire' is declared twice",
        ),
        (
            VALID.replace('name = "wasmagent-js"', 'name = "Wasm Agent"'),
            'repository[0].name: "Wasm Agent" does not match "^[a-z0-9][a-z0-9._-]*$"',
        ),
    ],
)
def test_invalid_config_is_one_line_naming_file_and_key(
    contract: Contract, tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "mirrors.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UserError) as caught:
        load_mirrors(contract, path)
    assert str(caught.value).startswith(f"{path}: {message}")
    assert "\n" not in str(caught.value)


def test_missing_config(contract: Contract, tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"mirrors.toml: file not found$"):
        load_mirrors(contract, tmp_path / "mirrors.toml")


def test_checkout_precedence(contract: Contract, tmp_path: Path) -> None:
    config = load_mirrors(contract)
    repository = config.repository("wasmagent-js")
    env = {"WIREGATE_REPO_WASMAGENT_JS": str(tmp_path / "env")}
    option = {"wasmagent-js": tmp_path / "option"}
    sibling = config.base_dir.parent / "wasmagent-js"
    assert config.checkout(repository, {}, {}) == (sibling, False)
    assert config.checkout(repository, {}, env) == (tmp_path / "env", True)
    assert config.checkout(repository, option, env) == (tmp_path / "option", True)
    assert env_var_name("trace-pipeline") == "WIREGATE_REPO_TRACE_PIPELINE"


def test_repo_overrides() -> None:
    assert parse_repo_overrides(["a=x", "b=y=z", "c"]) == {
        "a": Path("x"),
        "b": Path("y=z"),
        "c": None,
    }
    for bad in ("", "=x", "a="):
        with pytest.raises(UserError, match=rf"^--repo '{bad}': expected NAME=PATH or NAME$"):
            parse_repo_overrides([bad])


def test_unknown_repository_and_copy(contract: Contract) -> None:
    config = load_mirrors(contract)
    with pytest.raises(UserError, match=r"no repository named 'nope' \(known: wasmagent-js, "):
        config.repository("nope")
    with pytest.raises(UserError, match=r"^repository 'wasmagent-js' has no copy 'x' \(known: "):
        config.repository("wasmagent-js").copy("x")
