"""Start-up cost: ``wiregate`` must not import the validator stack, the diff engine, the drift
gate or DeepDiff just to start; every ``cli/*_cmd.py`` module imports them when it runs."""

from __future__ import annotations

import subprocess
import sys

import click

from wiregate.cli import drift_cmd, validate_cmd
from wiregate.reporters.drift import DRIFT_REPORTERS, HISTORY_REPORTERS
from wiregate.reporters.validation import VALIDATION_REPORTERS
from wiregate.validation import AUTO


def test_validate_command_mirrors_its_lazy_imports() -> None:
    assert tuple(sorted(VALIDATION_REPORTERS)) == validate_cmd.FORMATS
    assert validate_cmd.AUTO == AUTO


def test_drift_format_choices_are_the_reporter_registries() -> None:
    group = drift_cmd.drift_command
    history = group.commands["history"]
    assert _format_choices(group) == tuple(sorted(DRIFT_REPORTERS))
    assert _format_choices(history) == tuple(sorted(HISTORY_REPORTERS))


def _format_choices(command: click.Command) -> tuple[str, ...]:
    (param,) = (p for p in command.params if p.name == "output_format")
    assert isinstance(param.type, click.Choice)
    return tuple(param.type.choices)


HEAVY_MODULES = (
    "deepdiff",
    "git",
    "jsonschema",
    "jsonschema_rs",
    "referencing",
    "wiregate.diff",
    "wiregate.drift",
)


def test_cli_import_stays_light() -> None:
    # Importing wiregate.cli registers (imports) every cli/*_cmd.py module.
    code = (
        f"import sys, wiregate.cli; print(sorted(m for m in {HEAVY_MODULES!r} if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
