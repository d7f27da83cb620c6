"""Governed checkouts written by a test: files by name, committed with git."""

from __future__ import annotations

import subprocess
from pathlib import Path


def write_files(base: Path, files: dict[str, str]) -> None:
    """Each file under ``base`` (its folders made) with its text."""
    for name, text in files.items():
        (base / name).parent.mkdir(parents=True, exist_ok=True)
        (base / name).write_text(text, encoding="utf-8")


def commit_all(checkout: Path, message: str = "types") -> None:
    """A new repository at ``checkout`` holding everything in it, in one commit."""
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", message]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
            cwd=checkout, check=True, capture_output=True,
        )  # fmt: skip
