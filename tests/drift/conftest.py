"""Fixtures for the drift gate: replayed real repositories and the canonical contract."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import git
import pytest

from contracts import SCHEMA_FILES, Contract, locate

from .replay import REPLAY_ORDER, replay


@pytest.fixture(autouse=True)
def _no_checkout_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """A checkout named in the environment (WIREGATE_REPO_<NAME>) would override the layouts
    the tests build."""
    for name in [key for key in os.environ if key.startswith("WIREGATE_REPO_")]:
        monkeypatch.delenv(name)


#: The schema copies of the shipped mirrors.toml (its code copies are judged in
#: test_code_copies.py): tests of schema copies select these.
SCHEMA_COPIES = ["rollout-wire", "training-record", "dpo-training-record", "ppo-training-record"]
SCHEMA_COPIES_OF = {
    "wasmagent-js": ["rollout-wire", "training-record"],
    "trace-pipeline": ["rollout-wire", "dpo-training-record", "ppo-training-record"],
}


def schema_copies_only(mirrors: str) -> str:
    """The text of a mirrors.toml without its code copies (``kind = "typescript"`` or
    ``"python"``): for tests about schema copies on checkouts that hold only those."""
    blocks: list[list[str]] = [[]]
    for line in mirrors.splitlines(keepends=True):
        if line.startswith("[[") or (
            line.startswith("#") and blocks[-1] and blocks[-1][0].startswith("[[")
        ):
            blocks.append([])
        blocks[-1].append(line)
    code = ('kind = "typescript"\n', 'kind = "python"\n')
    return "".join("".join(b) for b in blocks if not any(line in code for line in b))


def schema_copy_args(repository: str) -> list[str]:
    """``--copy ID`` for each schema copy of ``repository``."""
    return [arg for copy in SCHEMA_COPIES_OF[repository] for arg in ("--copy", copy)]


@pytest.fixture(scope="session")
def replayed(corpus_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Both real repositories replayed once per session; tests copy them before changing them."""
    root = tmp_path_factory.mktemp("replayed")
    return {name: Path(replay(corpus_dir, name, root / name).working_dir) for name in REPLAY_ORDER}


@pytest.fixture
def replayed_copy(replayed: dict[str, Path], tmp_path: Path) -> Callable[[str], git.Repo]:
    """A private copy of a replayed repository that a test may add commits to."""

    def make(name: str) -> git.Repo:
        target = tmp_path / name
        shutil.copytree(replayed[name], target)
        return git.Repo(target)

    return make


@pytest.fixture(scope="session")
def contract(repo_root: Path) -> Contract:
    return locate(repo_root)


@pytest.fixture
def wiregate_root(tmp_path: Path, repo_root: Path) -> Callable[[str], Path]:
    """Builds a wiregate root holding our contract and the given mirrors.toml text."""

    def make(mirrors: str) -> Path:
        root = tmp_path / "wiregate"
        (root / "contracts").mkdir(parents=True)
        for name in SCHEMA_FILES.values():
            shutil.copy(repo_root / "contracts" / name, root / "contracts" / name)
        (root / "contracts" / "mirrors.toml").write_text(mirrors, encoding="utf-8")
        return root

    return make
