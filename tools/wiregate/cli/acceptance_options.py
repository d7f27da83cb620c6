"""The options of a ``baseline`` command (``wiregate drift baseline``, ``wiregate validate
baseline``): ``--reason``, ``--expires`` and ``--prune``, said of what the baseline accepts
(findings, problems). Parsed by :func:`wiregate.acceptance.update_options`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import click

__all__ = ["acceptance_options"]

F = TypeVar("F", bound=Callable[..., object])


def acceptance_options(what: str) -> Callable[[F], F]:
    """``--reason``, ``--expires`` and ``--prune`` of a command accepting ``what`` (plural:
    ``findings``, ``problems``)."""
    one = what.removesuffix("s")

    def decorate(command: F) -> F:
        for option in reversed(
            (
                click.option(
                    "--reason",
                    default=None,
                    metavar="TEXT",
                    help=f"Why the current {what} are accepted: written to each new entry.",
                ),
                click.option(
                    "--expires",
                    default=None,
                    metavar="YYYY-MM-DD",
                    help="From this day on the new entries accept nothing: their "
                    f"{what} fail again.",
                ),
                click.option(
                    "--prune",
                    is_flag=True,
                    help=f"Remove the entries that match no {one} any more (alone, or with "
                    "--reason).",
                ),
            )
        ):
            command = option(command)
        return command

    return decorate
