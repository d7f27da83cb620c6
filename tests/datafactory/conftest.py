"""Fixtures for the datafactory tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from datafactory.cli import main
from tests.datafactory.helpers import Run, RunCli


@pytest.fixture
def run_cli(tmp_path: Path) -> RunCli:
    """Run the command with the usual outputs in a fresh directory; extra args appended."""
    counter = iter(range(1000))

    def run(*inputs: Path | str, args: tuple[str, ...] = (), g3: bool = False) -> Run:
        out = tmp_path / f"out{next(counter)}"
        out.mkdir()
        argv = [a for i in inputs for a in ("--input", str(i))]
        argv += [
            "--output-dpo",
            str(out / "dpo.jsonl"),
            "--output-ppo",
            str(out / "ppo.jsonl"),
            "--rejects",
            str(out / "rejects.jsonl"),
            "--manifest",
            str(out / "manifest.json"),
        ]
        if not g3 and "--eval-items" not in args:
            argv.append("--allow-missing-g3")
        result = CliRunner().invoke(main, [*argv, *args], catch_exceptions=False)
        return Run(result.exit_code, result.stdout, result.stderr, out)

    return run
