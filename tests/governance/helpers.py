"""Throwaway wiregate repositories for the governance tests: the contract, the generated code
and the root marker, committed in a fresh git repository, and edits of the contract."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import git

COPIED = (
    "contracts",
    "datafactory/wire",
    "pyproject.toml",
    ".pre-commit-config.yaml",
    ".gitattributes",
)
WIRE = Path("contracts/rollout-wire.schema.json")


def copy_wiregate_files(source: Path, target: Path) -> Path:
    """The files a wiregate checkout needs for `wiregate check`, without git."""
    target.mkdir(parents=True, exist_ok=True)
    for name in COPIED:
        origin = source / name
        if origin.is_dir():
            shutil.copytree(origin, target / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(origin, target / name)
    return target


def make_wiregate_repo(source: Path, target: Path, *, commit: bool = True) -> git.Repo:
    """A git repository of the wiregate files; committed unless ``commit`` is false (then they
    are only added, and the branch has no commit yet)."""
    copy_wiregate_files(source, target)
    repo = git.Repo.init(target, initial_branch="main")
    with repo.config_writer() as config:
        config.set_value("user", "name", "wiregate tests")
        config.set_value("user", "email", "tests@wiregate.invalid")
        config.set_value("commit", "gpgsign", "false")
    repo.git.add("--all")
    if commit:
        repo.index.commit("contract v1")
    return repo


def root_of(repo: git.Repo) -> Path:
    return Path(repo.working_dir)


def edit_wire(repo: git.Repo, change: Callable[[dict[str, Any]], None]) -> None:
    path = root_of(repo) / WIRE
    schema = json.loads(path.read_text())
    change(schema)
    path.write_text(json.dumps(schema, indent=2) + "\n")


def add_required_field(schema: dict[str, Any]) -> None:
    branch = schema["$defs"]["RolloutBranchRecord"]
    branch["properties"]["policy_digest"] = {"type": "string"}
    branch["required"].append("policy_digest")


def add_optional_field(schema: dict[str, Any]) -> None:
    schema["$defs"]["RolloutBranchRecord"]["properties"]["policy_digest"] = {"type": "string"}


def add_optional_field_with_version_bump(schema: dict[str, Any]) -> None:
    """Breaking under the strict policy (the record is open), so it comes with a bump."""
    add_optional_field(schema)
    schema["$id"] = schema["$id"].replace("/v1", "/v2")
