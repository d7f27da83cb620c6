"""A throwaway wiregate repository: the contract, the generated code and the root marker,
committed in a fresh git repository."""

from __future__ import annotations

import shutil
from pathlib import Path

import git
import pytest

COPIED = ("contracts", "datafactory/wire", "pyproject.toml", ".pre-commit-config.yaml")


def make_wiregate_repo(source: Path, target: Path) -> git.Repo:
    target.mkdir(parents=True, exist_ok=True)
    for name in COPIED:
        origin = source / name
        if origin.is_dir():
            shutil.copytree(origin, target / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(origin, target / name)
    repo = git.Repo.init(target, initial_branch="main")
    with repo.config_writer() as config:
        config.set_value("user", "name", "wiregate tests")
        config.set_value("user", "email", "tests@wiregate.invalid")
        config.set_value("commit", "gpgsign", "false")
    repo.git.add("--all")
    repo.index.commit("contract v1")
    return repo


@pytest.fixture
def wiregate_repo(repo_root: Path, tmp_path: Path) -> git.Repo:
    return make_wiregate_repo(repo_root, tmp_path / "wiregate")
