"""GitHub workflow commands (``::error file=...,line=...,col=...,title=...::message``) for the
diff, check and drift reports: the one implementation of GitHub's escaping rules."""

from __future__ import annotations

import os
from collections.abc import Mapping

from wiregate.textlines import visible

__all__ = ["escape_data", "escape_property", "workflow_command", "write_step_summary"]


def escape_data(text: str) -> str:
    """A command's message: ``%``, CR and LF escaped as GitHub reads them, any other control
    or format character written visibly (``\\u001b``)."""
    return visible(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def escape_property(text: str) -> str:
    """A property value: the message escapes, and ``:`` and ``,`` that would end it."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workflow_command(
    level: str,
    message: str,
    *,
    title: str | None = None,
    file: str | None = None,
    line: int | None = None,
    col: int | None = None,
) -> str:
    """One annotation line: ``level`` is ``error``, ``warning`` or ``notice``; ``file`` is
    relative to the checked-out repository; ``line`` and ``col`` are 1-based."""
    properties = []
    if file:
        properties.append(f"file={escape_property(file)}")
        if line is not None:
            properties.append(f"line={line}")
            if col is not None:
                properties.append(f"col={col}")
    if title:
        properties.append(f"title={escape_property(title)}")
    head = f"::{level} {','.join(properties)}" if properties else f"::{level}"
    return f"{head}::{escape_data(message)}"


def write_step_summary(markdown: str, environ: Mapping[str, str] | None = None) -> str | None:
    """Append ``markdown`` to the file ``$GITHUB_STEP_SUMMARY`` names, when it is set (a
    GitHub Actions job shows it on the run's page). Returns a one-line warning when that file
    cannot be written (the annotations are printed all the same), else None."""
    path = (os.environ if environ is None else environ).get("GITHUB_STEP_SUMMARY")
    if not path:
        return None
    try:
        with open(path, "a", encoding="utf-8") as summary:
            summary.write(markdown)
    except OSError as exc:
        return f"GITHUB_STEP_SUMMARY: cannot write {path}: {exc.strerror or exc}"
    return None
