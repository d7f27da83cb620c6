"""A :class:`click.Choice` whose values come from the core's registry, read when first needed.

A subcommand's options are built when ``wiregate.cli`` is imported; reading a registry there
would import the engine behind it for every command. This choice imports it only when the
option is parsed or its help is printed, and the registry stays the one list of values.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import click

__all__ = ["LazyChoice"]

if TYPE_CHECKING:
    _Choice = click.Choice[str]
else:
    _Choice = click.Choice  # not generic before click 8.4


class LazyChoice(_Choice):
    def __init__(self, load: Callable[[], Iterable[str]]) -> None:
        # click.Choice.__init__ would store the values now; store how to read them instead.
        self._load = load
        self._choices: tuple[str, ...] | None = None
        self.case_sensitive = True

    @property
    def choices(self) -> tuple[str, ...]:
        if self._choices is None:
            self._choices = tuple(self._load())
        return self._choices

    @choices.setter
    def choices(self, values: Iterable[str]) -> None:
        self._choices = tuple(values)
