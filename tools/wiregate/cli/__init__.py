"""The ``wiregate`` command line: a thin adapter over the library. Each subcommand lives in its
own module, fills plain arguments and calls the core; the core never imports click."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from contracts import Contract, ContractError, locate
from wiregate import __version__
from wiregate.cli.signals import InterruptibleGroup

__all__ = ["fail", "main", "pass_contract"]


def fail(message: str, code: int = 2) -> None:
    """Print one error line and exit: user mistakes never show a traceback."""
    click.echo(f"wiregate: error: {message}", err=True)
    sys.exit(code)


# Ctrl-C exits 130 and SIGTERM 143, one line, after cleaning up (wiregate.cli.signals).
@click.group(cls=InterruptibleGroup, context_settings={"help_option_names": ["-h", "--help"]})
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
    """Govern the rollout-wire data contract: validate records, diff schemas, gate drift."""
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
