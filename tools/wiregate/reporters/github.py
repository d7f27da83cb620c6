"""GitHub workflow commands (``::error file=...,line=...,col=...,title=...::message``) for the
diff, check and drift reports: the one implementation of GitHub's escaping rules."""

from __future__ import annotations

import os
import stat
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
        # Appended to a regular file only: a FIFO would block until read, a device never end.
        descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o666)
        try:
            if not stat.S_ISREG(os.fstat(descriptor).st_mode):
                return f"GITHUB_STEP_SUMMARY: cannot write {path}: not a regular file"
            os.set_blocking(descriptor, True)
            # A name the input spelled with a lone surrogate is written escaped, never lost.
            data = markdown.encode("utf-8", "backslashreplace")
            written = 0
            while written < len(data):
                written += os.write(descriptor, data[written:])
        finally:
            os.close(descriptor)
    except OSError as exc:
        return f"GITHUB_STEP_SUMMARY: cannot write {path}: {exc.strerror or exc}"
    return None
