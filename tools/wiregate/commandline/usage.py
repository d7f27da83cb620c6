"""Usage errors as one line, as every other error of our commands.

click prints a usage error as four lines (the usage, a hint, a blank line, the error), and a
script reading stderr sees only the first. Commands and groups of these classes print
``<program>: error: [<subcommand>: ]<message>`` and exit 2 instead; ``--help`` still shows
the usage. A reader of their output that stops reading ends them quietly, exit 141, and a
standard output that cannot be written is exit 2 (``wiregate.commandline.pipes``).
"""

from __future__ import annotations

import sys
from typing import Any, NoReturn

import click

from wiregate.commandline.pipes import StandardOutputError, output_failed, reader_left

__all__ = ["OneLineCommand", "OneLineGroup"]


def _refuse(program: str, exc: click.UsageError) -> NoReturn:
    from wiregate.textlines import visible

    if type(exc).__name__ == "NoArgsIsHelpError":  # a group run bare: its help, as click shows
        raise exc

    message = " ".join(exc.format_message().split())
    # The subcommand it is about (click names only the option): "drift baseline: ...".
    where = exc.ctx.command_path.split(" ", 1)[1:] if exc.ctx is not None else []
    message = f"{where[0]}: {message}" if where else message
    click.echo(f"{program}: error: {visible(message)}", err=True)
    sys.exit(exc.exit_code)


class OneLineCommand(click.Command):
    program = "wiregate"

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        try:
            return super().make_context(*args, **kwargs)
        except click.UsageError as exc:
            _refuse(self.program, exc)
        except BrokenPipeError:  # --help or --version, whose reader left
            reader_left()
        except StandardOutputError as exc:
            output_failed(self.program, exc)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:  # raised by the command (or a group's subcommand)
            _refuse(self.program, exc)
        except BrokenPipeError:  # the reader of its output stopped reading (``| head``)
            reader_left()
        except StandardOutputError as exc:  # a full disk, say: an I/O error, not a bug
            output_failed(self.program, exc)


class OneLineGroup(OneLineCommand, click.Group):
    """Its subcommands are ``command_class``; a subclass for another program sets both."""

    command_class = OneLineCommand
    group_class = type  # a subgroup is of the same class (click's convention)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as exc:  # no such command
            _refuse(self.program, exc)
