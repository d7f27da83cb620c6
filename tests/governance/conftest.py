"""Fixtures for the governance tests."""

from __future__ import annotations

from pathlib import Path

import git
import pytest

from .helpers import make_wiregate_repo


@pytest.fixture
def wiregate_repo(repo_root: Path, tmp_path: Path) -> git.Repo:
    return make_wiregate_repo(repo_root, tmp_path / "wiregate")
