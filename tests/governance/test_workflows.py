"""The GitHub workflows are linted here with actionlint, so a broken workflow fails here."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def actionlint() -> str:
    found = shutil.which("actionlint", path=str(Path(sys.executable).parent))
    if found is None:
        pytest.fail("actionlint is not installed in the environment (dev extra)")
    return found


def test_workflows_pass_actionlint(repo_root: Path) -> None:
    workflows = sorted(str(p) for p in (repo_root / ".github" / "workflows").glob("*.yml"))
    assert [Path(w).name for w in workflows] == ["ci.yml", "drift-gate.yml"]
    proc = subprocess.run(
        [actionlint(), "-no-color", *workflows],
        cwd=repo_root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert (proc.returncode, proc.stdout) == (0, "")


def test_actionlint_catches_a_broken_workflow(tmp_path: Path) -> None:
    broken = tmp_path / ".github" / "workflows" / "broken.yml"
    broken.parent.mkdir(parents=True)
    broken.write_text(
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: echo ${{ inputs.nope }}\n"
    )
    proc = subprocess.run(
        [actionlint(), "-no-color", str(broken)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1
    assert 'property "nope" is not defined' in proc.stdout
