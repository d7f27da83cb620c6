"""The ``wiregate`` command line: a thin adapter over the library. Each subcommand lives in its
own module, fills plain arguments and calls the core; the core never imports click."""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from contracts import Contract, ContractError, locate
from wiregate import __version__
from wiregate.commandline.signals import InterruptibleGroup
from wiregate.commandline.usage import OneLineGroup

__all__ = ["fail", "internal_errors", "main", "pass_contract"]

T = TypeVar("T")


def fail(message: str, code: int = 2) -> None:
    """Print one error line and exit: user mistakes never show a traceback (and a name or
    value in the message never adds a line of its own)."""
    from wiregate.textlines import visible

    click.echo(f"wiregate: error: {visible(message)}", err=True)
    sys.exit(code)


def internal_errors(function: Callable[..., T], *args: Any) -> T:
    """``function(*args)``, where an exception nobody handled is a bug: one line on stderr and
    exit 3, never a traceback, and never exit 1, which means "incompatible" or "invalid".

    Output goes out with lone surrogates (``"\\ud800"`` in a schema) escaped as ``\\ud800``.
    """
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    try:
        return function(*args)
    except (click.ClickException, click.exceptions.Exit, click.Abort):
        raise  # click's own ways to end a command
    except Exception as exc:  # SystemExit and KeyboardInterrupt are not Exceptions: they pass
        message = " ".join(str(exc).split())
        click.echo(f"wiregate: internal error: {type(exc).__name__}: {message}", err=True)
        sys.exit(3)


class _Main(OneLineGroup, InterruptibleGroup):
    # Ctrl-C exits 130 and SIGTERM 143 (wiregate.commandline.signals); any other exception is a bug.
    def invoke(self, ctx: click.Context) -> Any:
        return internal_errors(super().invoke, ctx)


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="wiregate")
@click.option(
    "--root",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The wiregate repository to act on (default: the one containing the current "
    "directory; outside one, the contract bundled with the package).",
)
@click.pass_context
def main(ctx: click.Context, root: Path | None) -> None:
    """Govern the rollout-wire data contract: validate records, diff schemas, gate drift.

    Every command exits 3 on an internal error (a bug), with one line on stderr.
    """
    ctx.obj = root


def pass_contract(ctx: click.Context) -> Contract:
    """The contract the command acts on; a missing or broken contract ends the command."""
    try:
        contract = locate(ctx.find_root().obj)
        contract.schemas  # noqa: B018  (load now so a broken file is reported here)
    except ContractError as exc:
        fail(str(exc))
        raise AssertionError("unreachable") from exc
    return contract


# Subcommands register themselves on import.
from wiregate.cli import check_cmd, codegen_cmd, diff_cmd, drift_cmd, validate_cmd  # noqa: E402, F401
