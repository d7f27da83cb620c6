"""Fixtures of the codegen tests: the repository, the corpus, a temp copy of the contract and
its generated package, and the CLI."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from codegen.layout import OUTPUT_DIR
from wiregate.cli import main

REPO_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class CliResult:
    exit_code: int
    stdout: str
    stderr: str


def run_cli(*args: str) -> CliResult:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return CliResult(result.exit_code, result.stdout, result.stderr)


@pytest.fixture(scope="session")
def cli() -> Callable[..., CliResult]:
    """Run ``wiregate ARGS...`` in-process; stdout and stderr apart."""
    return run_cli


@pytest.fixture
def contract_copy(tmp_path: Path) -> Path:
    """A root holding a copy of the contract schemas and of the committed generated package."""
    root = tmp_path / "repo"
    (root / "contracts").mkdir(parents=True)
    for schema in (REPO_ROOT / "contracts").glob("*.schema.json"):
        shutil.copyfile(schema, root / "contracts" / schema.name)
    shutil.copytree(REPO_ROOT / OUTPUT_DIR, root / OUTPUT_DIR, ignore=_ignore_caches)
    shutil.copyfile(REPO_ROOT / "datafactory" / "__init__.py", root / "datafactory" / "__init__.py")
    return root


def _ignore_caches(_directory: str, names: list[str]) -> list[str]:
    return [name for name in names if name == "__pycache__"]
