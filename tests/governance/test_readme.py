"""The README documents every command: a command that is not in it fails here."""

from __future__ import annotations

from pathlib import Path

import click

from wiregate.cli import main


def command_names(group: click.Group, prefix: str = "wiregate") -> list[str]:
    names = []
    for name, command in sorted(group.commands.items()):
        names.append(f"{prefix} {name}")
        if isinstance(command, click.Group):
            names.extend(command_names(command, f"{prefix} {name}"))
    return names


def test_every_subcommand_is_in_the_readme(repo_root: Path) -> None:
    readme = (repo_root / "README.md").read_text()
    names = command_names(main)
    assert "wiregate validate" in names
    missing = [name for name in names if f"`{name}" not in readme]
    assert missing == []


def test_the_two_commands_are_in_the_readme(repo_root: Path) -> None:
    readme = (repo_root / "README.md").read_text()
    assert "make demo" in readme
    assert "make test" in readme
