"""Start-up cost: ``wiregate`` must not import the validator stack or DeepDiff just to start."""

from __future__ import annotations

import subprocess
import sys

from wiregate.cli import validate_cmd
from wiregate.reporters.validation import VALIDATION_REPORTERS
from wiregate.validation import AUTO


def test_validate_command_mirrors_its_lazy_imports() -> None:
    assert tuple(sorted(VALIDATION_REPORTERS)) == validate_cmd.FORMATS
    assert validate_cmd.AUTO == AUTO


def test_cli_import_stays_light() -> None:
    code = (
        "import sys, wiregate.cli; "
        "print(sorted(m for m in ('jsonschema', 'referencing', 'deepdiff', 'git') "
        "if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
