"""Settings read from the environment: a timeout in range, and the step summary GitHub reads
written only to a regular file, whatever the report's text holds."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from wiregate.errors import UserError
from wiregate.extract.typescript import timeout_seconds
from wiregate.reporters.github import write_step_summary


@pytest.mark.parametrize("value", ["inf", "1e300", "nan", "0", "-1", "86400.5"])
def test_an_extraction_timeout_out_of_range_is_one_line(value: str) -> None:
    # inf and 1e300 overflowed the timer: an internal error (exit 3)
    with pytest.raises(UserError) as caught:
        timeout_seconds({"WIREGATE_EXTRACT_TIMEOUT": value})
    assert str(caught.value) == (
        f"WIREGATE_EXTRACT_TIMEOUT={value!r}: must be more than 0 and at most 86400 seconds"
    )


def test_an_extraction_timeout_in_range() -> None:
    assert timeout_seconds({"WIREGATE_EXTRACT_TIMEOUT": "86400"}) == 86_400.0
    assert timeout_seconds({}) == 60.0


def test_the_step_summary_is_never_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "summary"
    os.mkfifo(fifo)  # nobody reads it: opening it to write blocked for ever
    warning = write_step_summary("# report\n", {"GITHUB_STEP_SUMMARY": str(fifo)})
    assert warning == f"GITHUB_STEP_SUMMARY: cannot write {fifo}: No such device or address"


def test_the_step_summary_is_never_a_device() -> None:
    warning = write_step_summary("# report\n", {"GITHUB_STEP_SUMMARY": "/dev/null"})
    assert warning == "GITHUB_STEP_SUMMARY: cannot write /dev/null: not a regular file"


def test_a_lone_surrogate_in_the_summary_is_written_escaped(tmp_path: Path) -> None:
    # A property name read from JSON as "\ud800" made the write raise: the verdict was lost
    summary = tmp_path / "summary.md"
    summary.write_text("before\n", encoding="utf-8")
    assert write_step_summary("name \ud800\n", {"GITHUB_STEP_SUMMARY": str(summary)}) is None
    assert summary.read_bytes() == b"before\nname \\ud800\n"
