"""``wiregate validate FILE... [--record NAME|auto] [--baseline FILE] [--format text|json]``
and ``wiregate validate baseline``."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path
from typing import IO, Any, ClassVar

import click

from contracts import ContractError
from wiregate.cli import fail, main, pass_contract
from wiregate.cli.acceptance_options import acceptance_options
from wiregate.commandline.usage import OneLineCommand
from wiregate.errors import UserError

# The validator stack (jsonschema, referencing) is imported when the command runs, so other
# commands start fast. These mirror wiregate.validation.AUTO and VALIDATION_REPORTERS (tested).
AUTO = "auto"
FORMATS = ("json", "text")


class _CannotHold(Exception):
    """A write of the held JSON report failed (its temporary disk is full, say)."""


class _ValidateCommand(OneLineCommand):
    """``wiregate validate FILE...``, and ``wiregate validate baseline ...`` when its first
    argument names a subcommand (a record file of that name is ``./baseline``). A group would
    read the subcommand's name as one of the FILEs."""

    subcommands: ClassVar[dict[str, click.Command]] = {}

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        if args and args[0] in self.subcommands:
            name = args[0]
            command = self.subcommands[name]
            path = f"{info_name or self.name} {name}"
            return command.make_context(path, args[1:], parent=parent, **extra)
        return super().make_context(info_name, args, parent=parent, **extra)


_RECORD_HELP = (
    "Record type every record must be (a $defs name such as RolloutBranchRecord), "
    "or 'auto' to pick it from each record's shape."
)


@main.command("validate", cls=_ValidateCommand)
@click.argument("files", nargs=-1, required=True)
@click.option("--record", default=AUTO, show_default=True, help=_RECORD_HELP)
@click.option(
    "--baseline",
    "baseline_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    metavar="FILE",
    help="Accepted problems (written by 'wiregate validate baseline'): each is reported as "
    "accepted and does not fail the run until its entry expires.",
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
    ctx: click.Context,
    files: tuple[str, ...],
    record: str,
    baseline_file: Path | None,
    output_format: str,
) -> None:
    """Validate JSON or JSONL record files (.gz too, - for stdin) against the contract.

    *.json files hold one document (a record or an array of records), other files JSON Lines;
    stdin is read as either, as its first lines show. 'wiregate validate baseline --help':
    accept the current problems of files in a baseline.

    Exit 0 when every record is valid (or each of its problems accepted in --baseline), 1
    when a record is invalid, an acceptance has expired or a line is broken, 2 on a usage or
    I/O error (a baseline file that is not valid included).
    """
    from wiregate.record_validator import ValidatorSet
    from wiregate.reporters.validation import STREAMING_REPORTERS
    from wiregate.validation import FileProblem, validate_files
    from wiregate.validation_baseline import load_validation_baseline

    contract = pass_contract(ctx)
    try:
        baseline = (
            load_validation_baseline(baseline_file, must_exist=True)
            if baseline_file is not None
            else None
        )
    except UserError as exc:
        fail(str(exc))
        return
    writer = STREAMING_REPORTERS[output_format](baseline is not None)
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
            report = validate_files(
                list(files), record, ValidatorSet(contract), on_problem, baseline
            )
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


@click.command("baseline", cls=OneLineCommand)
@click.argument("files", nargs=-1)
@acceptance_options("problems")
@click.option(
    "--baseline",
    "baseline_file",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    metavar="FILE",
    help="The baseline file to write (created when missing).",
)
@click.option("--record", default=AUTO, show_default=True, help=_RECORD_HELP)
@click.pass_context
def baseline_command(
    ctx: click.Context,
    files: tuple[str, ...],
    reason: str | None,
    expires: str | None,
    prune: bool,
    baseline_file: Path,
    record: str,
) -> None:
    """Accept the current problems of record FILEs: add an entry, with --reason, for every
    problem the baseline does not list yet (entries already there keep their reason and
    date). With --prune, remove the entries that match no problem of FILEs, or name a file
    that is gone; without FILEs, --prune reads every regular file the baseline names.

    Give the --record the validate run uses. The file is rewritten atomically, entries in a
    stable order under a regenerated header; broken lines cannot be accepted. Exit 0 written
    (or nothing to change), 2 usage, configuration or read error (the file is then left as it
    was), 130 interrupted, 143 terminated.
    """
    from wiregate.acceptance import update_options
    from wiregate.record_validator import ValidatorSet
    from wiregate.validation import validate_files
    from wiregate.validation_baseline import (
        load_validation_baseline,
        update_validation_baseline,
        write_validation_baseline,
    )

    contract = pass_contract(ctx)
    try:
        _on, until = update_options(reason, expires, prune, "problems")
        if reason is not None and not files:
            raise UserError("--reason accepts the problems of FILEs: give the files")
        baseline = load_validation_baseline(baseline_file)
        paths = list(files) or baseline.files_present()
        report = validate_files(paths, record, ValidatorSet(contract), baseline=baseline)
        if report.file_errors:
            # A file that cannot be read: its problems are unknown, so nothing is written.
            for message in report.file_errors:
                click.echo(f"wiregate: error: {message}", err=True)
            fail(f"{baseline.path}: not written: a file could not be read")
            return
        update = update_validation_baseline(
            baseline, report, reason=reason, expires=until, prune=prune
        )
        if update.changed or not baseline.path.exists():
            write_validation_baseline(update.path, update.entries)
    except (ContractError, UserError) as exc:
        fail(str(exc))
        return
    click.echo(
        f"{update.path}: {len(update.added)} added, {len(update.pruned)} pruned, {update.kept} kept"
    )
    if report.broken_lines:
        click.echo(
            f"wiregate: warning: {report.broken_lines} broken lines not accepted: a line that "
            "is not a JSON record cannot be; fix it",
            err=True,
        )


_ValidateCommand.subcommands["baseline"] = baseline_command
