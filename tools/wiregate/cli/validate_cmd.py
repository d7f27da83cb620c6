"""``wiregate validate FILE... [--record NAME|auto] [--format text|json]``."""

from __future__ import annotations

import shutil
import sys
import tempfile
from typing import IO

import click

from contracts import ContractError
from wiregate.cli import fail, main, pass_contract
from wiregate.errors import UserError

# The validator stack (jsonschema, referencing) is imported when the command runs, so other
# commands start fast. These mirror wiregate.validation.AUTO and VALIDATION_REPORTERS (tested).
AUTO = "auto"
FORMATS = ("json", "text")


class _CannotHold(Exception):
    """A write of the held JSON report failed (its temporary disk is full, say)."""


@main.command("validate")
@click.argument("files", nargs=-1, required=True)
@click.option(
    "--record",
    default=AUTO,
    show_default=True,
    help="Record type every record must be (a $defs name such as RolloutBranchRecord), "
    "or 'auto' to pick it from each record's shape.",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
)
@click.pass_context
def validate_command(
    ctx: click.Context, files: tuple[str, ...], record: str, output_format: str
) -> None:
    """Validate JSON or JSONL record files (.gz too, - for stdin) against the contract.

    *.json files hold one document (a record or an array of records), other files JSON Lines;
    stdin is read as either, as its first lines show.

    Exit 0 when every record is valid, 1 when a record is invalid or a line is broken,
    2 on a usage or I/O error.
    """
    from wiregate.record_validator import ValidatorSet
    from wiregate.reporters.validation import STREAMING_REPORTERS
    from wiregate.validation import FileProblem, validate_files

    contract = pass_contract(ctx)
    writer = STREAMING_REPORTERS[output_format]()
    # Text goes out as each problem is found. One JSON document goes out whole or not at all
    # (an error or a signal halfway must not leave half a document): its problems wait in a
    # spooled file, in memory up to a few MB, then on disk, so memory stays bounded.
    with tempfile.SpooledTemporaryFile(max_size=8 << 20, mode="w+", encoding="utf-8") as held:
        out: IO[str] = held if output_format == "json" else sys.stdout

        def on_problem(problem: FileProblem) -> None:
            try:
                out.write(writer.problem(problem))
            except OSError as exc:
                if out is sys.stdout:  # not the held report's disk: as any other write
                    raise
                raise _CannotHold(exc.strerror or str(exc)) from None

        try:
            report = validate_files(list(files), record, ValidatorSet(contract), on_problem)
        except (ContractError, UserError) as exc:
            fail(str(exc))
            return
        except _CannotHold as exc:
            fail(f"{tempfile.gettempdir()}: cannot hold the JSON report: {exc}")
            return
        held.seek(0)
        shutil.copyfileobj(held, sys.stdout)
    sys.stdout.write(writer.end(report))
    for message in report.file_errors:
        click.echo(f"wiregate: error: {message}", err=True)
    sys.exit(report.exit_code)
