"""An output path that cannot be read or written ends ``wiregate codegen`` with exit 2 and one
line naming it, never a traceback."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from codegen.layout import OUTPUT_DIR

if TYPE_CHECKING:
    from tests.codegen.conftest import CliResult

    Cli = Callable[..., CliResult]


def _assert_one_error_line(result: CliResult, line: str) -> None:
    assert "Traceback" not in result.stdout + result.stderr
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", line + "\n")


def test_output_dir_that_is_a_file_exits_2_naming_it(cli: Cli, contract_copy: Path) -> None:
    shutil.rmtree(contract_copy / OUTPUT_DIR)
    (contract_copy / OUTPUT_DIR).write_text("not a package\n", encoding="utf-8")
    result = cli("--root", str(contract_copy), "codegen")
    _assert_one_error_line(
        result, "wiregate: error: datafactory/wire: cannot create directory: File exists"
    )
    assert (contract_copy / OUTPUT_DIR).read_text(encoding="utf-8") == "not a package\n"


def test_check_with_output_dir_a_file_exits_2_naming_the_unreadable_file(
    cli: Cli, contract_copy: Path
) -> None:
    shutil.rmtree(contract_copy / OUTPUT_DIR)
    (contract_copy / OUTPUT_DIR).write_text("not a package\n", encoding="utf-8")
    result = cli("--root", str(contract_copy), "codegen", "--check")
    _assert_one_error_line(
        result, "wiregate: error: datafactory/wire/__init__.py: cannot read: Not a directory"
    )


@pytest.mark.parametrize("command", [["codegen"], ["codegen", "--check"]])
def test_generated_file_that_is_a_directory_exits_2_naming_it(
    cli: Cli, contract_copy: Path, command: list[str]
) -> None:
    target = contract_copy / OUTPUT_DIR / "_runtime.py"
    target.unlink()
    target.mkdir()
    result = cli("--root", str(contract_copy), *command)
    action = "read" if "--check" in command else "write"
    _assert_one_error_line(
        result, f"wiregate: error: datafactory/wire/_runtime.py: cannot {action}: Is a directory"
    )
    assert target.is_dir()
