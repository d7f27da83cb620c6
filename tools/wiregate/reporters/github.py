"""GitHub workflow commands (``::error file=...,title=...::message``) for the check and drift
reports. The escaping is the diff reporter's, one implementation of GitHub's rules."""

from __future__ import annotations

__all__ = ["workflow_command"]


def workflow_command(
    level: str, message: str, *, title: str | None = None, file: str | None = None
) -> str:
    """One annotation line: ``level`` is ``error``, ``warning`` or ``notice``; ``file`` is
    relative to the checked-out repository."""
    # The diff reporter's escaping, one set of rules for every report. Imported here: it loads
    # the diff engine, and the CLI imports the check reporters at start-up, which must stay
    # light (tests/diff/test_startup.py).
    from wiregate.reporters.diff import _escape_data, _escape_property

    properties = []
    if file:
        properties.append(f"file={_escape_property(file)}")
    if title:
        properties.append(f"title={_escape_property(title)}")
    head = f"::{level} {','.join(properties)}" if properties else f"::{level}"
    return f"{head}::{_escape_data(message)}"
