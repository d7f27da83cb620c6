"""The ``datafactory`` command (also ``python -m datafactory``): a thin adapter that parses
options into ``datafactory.settings.Settings`` and calls ``datafactory.run.run``. Exit 0
done, 1 G3 violation, 2 usage or input error, 3 an output record failed the contract (a bug
in the exporter), 129 hung up (SIGHUP), 130 interrupted (SIGINT), 131 quit (SIGQUIT), 143
terminated (SIGTERM)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import click

from contracts import ContractError
from datafactory import interrupts
from datafactory.contamination import DEFAULT_NGRAM
from datafactory.manifest import summary_lines
from datafactory.outputs import OutputsPartlyWritten
from datafactory.parallel import WorkerDied
from datafactory.run import RunResult, run
from datafactory.settings import (
    DEFAULT_MAX_LINE_BYTES,
    FORMATS,
    TARGETS,
    TOOL_ARGUMENTS,
    SettingError,
    SettingNames,
    Settings,
)
from datafactory.stages.load import OutputInvalidError
from wiregate.commandline.pipes import discard_stdout
from wiregate.commandline.signals import EXIT_INTERRUPTED, EXIT_TERMINATED
from wiregate.commandline.usage import OneLineCommand
from wiregate.errors import UserError
from wiregate.textlines import visible

__all__ = ["main"]

EXIT_HUNG_UP = 128 + 1  # SIGHUP, as a shell reports a process it ended
EXIT_QUIT = 128 + 3  # SIGQUIT

EXIT_OK, EXIT_G3, EXIT_USAGE, EXIT_BUG = 0, 1, 2, 3

#: What the command calls each setting in its errors: its options.
OPTION_NAMES = SettingNames(
    {
        "inputs": "--input",
        "dpo_path": "--output-dpo",
        "ppo_path": "--output-ppo",
        "output_format": "--format",
        "rejects_path": "--rejects",
        "manifest_path": "--manifest",
        "eval_items": "--eval-items",
        "eval_field": "--eval-field",
        "eval_id_field": "--eval-id-field",
        "ngram": "--ngram",
        "allow_missing_g3": "--allow-missing-g3",
        "g3_report_path": "--g3-report",
        "temp_dir": "--temp-dir",
        "workers": "--workers",
        "max_line_bytes": "--max-line-bytes",
        "contract": "--contract",
        "target": "--target",
        "kto_path": "--output-kto",
        "sft_path": "--output-sft",
        "tool_arguments": "--tool-arguments",
        "tools_path": "--tools",
        "card": "--no-card",
        "license": "--license",
    }
)


def _fail(message: str, code: int = EXIT_USAGE) -> None:
    # A file name holding a newline cannot add a line of its own.
    click.echo(f"datafactory: error: {visible(message)}", err=True)
    sys.exit(code)


@contextmanager
def _progress(enabled: bool) -> Iterator[Callable[[str, int, int], None] | None]:
    """A progress bar on stderr, only when stderr is a terminal."""
    if not enabled:
        yield None
        return
    bars: dict[str, Any] = {}

    def update(phase: str, done: int, total: int) -> None:
        bar = bars.get(phase)
        if bar is None:
            for other in bars.values():
                other.render_finish()
            label = "loading " if phase == "load" else "building"
            bar = bars[phase] = click.progressbar(length=total, label=label, file=sys.stderr)
        bar.length = total
        bar.update(done - bar.pos)

    try:
        yield update
    finally:
        for bar in bars.values():
            bar.render_finish()


def _report(result: RunResult, settings: Settings) -> None:
    if result.exit_code == EXIT_G3:
        written = (
            f"nothing written but {settings.g3_report_path}"
            if settings.g3_report_path
            else "nothing written"
        )
        # The verdict first: a standard output that fails below cuts only the details short.
        click.echo(
            f"datafactory: G3 failed: {len(result.contaminated)} contaminated rollouts; "
            f"{written} (use --drop-contaminated to export without them)",
            err=True,
        )
        for c in result.contaminated:
            click.echo(
                f"G3 violation: rollout {c.rollout_id!r} shares the n-gram {c.ngram!r} "
                f"with eval item {c.eval_item_id!r}"
            )
    elif result.manifest is not None:
        for line in summary_lines(result.manifest):
            click.echo(line)


class _Command(OneLineCommand):
    program = "datafactory"


@click.command(cls=_Command, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--input",
    "inputs",
    multiple=True,
    required=True,
    help="JSONL rollouts (.jsonl, .jsonl.gz, a directory of them, or - for stdin); repeatable.",
)
@click.option("--eval-items", help="JSONL eval set for the G3 contamination gate.")
@click.option("--output-dpo", help="Where to write the DPO training records (JSONL).")
@click.option(
    "--output-ppo",
    help="Where to write the PPO training records (JSONL; with --target trl: prompt-only "
    "records with reward columns, for GRPO and RLOO).",
)
@click.option("--output-kto", help="--target trl --format kto: where to write the KTO records.")
@click.option("--output-sft", help="--target trl --format sft: where to write the SFT records.")
@click.option(
    "--target",
    type=click.Choice(TARGETS),
    default="layer3",
    show_default=True,
    help="layer3: the contract's training records; trl: the dataset formats of TRL's trainers.",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(sorted(FORMATS)),
    default="both",
    show_default=True,
    help="Which training records to write (kto and sft: --target trl only).",
)
@click.option(
    "--tool-arguments",
    type=click.Choice(TOOL_ARGUMENTS),
    default="string",
    show_default=True,
    help="--target trl: tool-call arguments as a JSON string (OpenAI form) or an object.",
)
@click.option(
    "--tools",
    "tools_path",
    metavar="FILE",
    help="--target trl: JSON or JSONL tool specs by name, for the records' tools column.",
)
@click.option(
    "--license",
    "license_",
    default="other",
    show_default=True,
    help="--target trl: the license the dataset card declares.",
)
@click.option(
    "--no-card",
    is_flag=True,
    help="--target trl: write no dataset card (README.md next to the first output).",
)
@click.option("--rejects", help="Write each rejected line here, verbatim, with its reason.")
@click.option("--manifest", help="Write the run's manifest (counts, sha256 of every file) here.")
@click.option("--allow-missing-g3", is_flag=True, help="Export without --eval-items.")
@click.option(
    "--drop-contaminated",
    is_flag=True,
    help="Leave contaminated rollouts out and go on, instead of failing the run.",
)
@click.option(
    "--ngram",
    type=int,
    default=DEFAULT_NGRAM,
    show_default=True,
    help="G3 n-gram length in words, 1 to 10,000.",
)
@click.option(
    "--eval-field",
    help="Field holding an eval item's text (default: the first of "
    "question, prompt, task, text, input that holds a word).",
)
@click.option(
    "--eval-id-field",
    help="Field holding an eval item's id (default: first of id, key, item_id; "
    "else the line number).",
)
@click.option(
    "--g3-report",
    "g3_report",
    help="Also write the G3 findings here (JSON); on a G3 violation, the only file written.",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    help="Worker processes, at most the CPUs available (default: one per CPU).",
)
@click.option(
    "--temp-dir", help="Directory for the group stage's spill files (default: system temp)."
)
@click.option(
    "--max-line-bytes",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_LINE_BYTES,
    show_default=True,
    help="Longer input lines are rejected (line-too-long), never read whole (at most 1 GiB).",
)
@click.option(
    "--contract",
    metavar="DIR",
    help="Validate against this contract (a contracts/ directory or a checkout holding "
    "one) instead of the one bundled with datafactory.",
)
@click.version_option(package_name="wiregate", prog_name="datafactory")
def main(
    inputs: tuple[str, ...],
    eval_items: str | None,
    output_dpo: str | None,
    output_ppo: str | None,
    output_kto: str | None,
    output_sft: str | None,
    target: str,
    output_format: str,
    tool_arguments: str,
    tools_path: str | None,
    license_: str,
    no_card: bool,
    rejects: str | None,
    manifest: str | None,
    allow_missing_g3: bool,
    drop_contaminated: bool,
    ngram: int,
    eval_field: str | None,
    eval_id_field: str | None,
    g3_report: str | None,
    workers: int | None,
    temp_dir: str | None,
    max_line_bytes: int,
    contract: str | None,
) -> None:
    """Export agent rollouts (Layer 1 branch records, Layer 2 DPO/PPO records) as DPO/PPO
    training records (Layer 3), or with --target trl as the datasets TRL's trainers read
    (DPO, prompt-only with rewards, KTO, SFT, and a dataset card), behind the G3
    eval-contamination gate.

    Exit 0 done, 1 G3 violation (nothing but the G3 report written), 2 usage or input
    error, 3 an output record failed the contract (a bug), 129 hung up (SIGHUP),
    130 interrupted (SIGINT), 131 quit (SIGQUIT), 143 terminated (SIGTERM); an interrupted
    run leaves nothing behind.
    """
    settings = Settings(
        inputs=inputs,
        dpo_path=output_dpo,
        ppo_path=output_ppo,
        output_format=output_format,
        rejects_path=rejects,
        manifest_path=manifest,
        eval_items=eval_items,
        eval_field=eval_field,
        eval_id_field=eval_id_field,
        ngram=ngram,
        allow_missing_g3=allow_missing_g3,
        drop_contaminated=drop_contaminated,
        g3_report_path=g3_report,
        workers=workers,
        max_line_bytes=max_line_bytes,
        temp_dir=temp_dir,
        contract=contract,
        target=target,
        kto_path=output_kto,
        sft_path=output_sft,
        tool_arguments=tool_arguments,
        tools_path=tools_path,
        card=not no_card,
        license=license_,
    )
    with interrupts.handled():  # the whole command: a late signal is one line too
        _main(settings, rejects)


def _main(settings: Settings, rejects: str | None) -> None:
    try:
        with _progress(sys.stderr.isatty()) as progress:
            result = run(_with_progress(settings, progress))
    except KeyboardInterrupt:  # nothing is left behind: see datafactory.interrupts
        click.echo("datafactory: interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except interrupts.HungUp:
        click.echo("datafactory: hung up", err=True)
        sys.exit(EXIT_HUNG_UP)
    except interrupts.Quit:
        click.echo("datafactory: quit", err=True)
        sys.exit(EXIT_QUIT)
    except interrupts.Terminated:
        click.echo("datafactory: terminated", err=True)
        sys.exit(EXIT_TERMINATED)
    except SettingError as exc:
        _fail(exc.render(OPTION_NAMES))
        return
    except (UserError, ContractError) as exc:
        _fail(str(exc))
        return
    except (OutputInvalidError, WorkerDied) as exc:
        _fail(f"internal error, nothing written: {exc}", EXIT_BUG)
        return
    except OutputsPartlyWritten as exc:  # a rename failed after others succeeded
        _fail(str(exc))
        return
    except OSError as exc:  # a full disk or a vanished directory while writing
        where = f"{exc.filename}: " if exc.filename else ""
        _fail(f"{where}{exc.strerror or exc}; nothing written")
        return
    try:
        _report(result, settings)
    except OSError as exc:  # the run is over: what it printed is in its manifest or report
        discard_stdout()
        if not isinstance(exc, BrokenPipeError):  # a reader that left (``| head``) is no news
            click.echo(
                f"datafactory: warning: standard output: {exc.strerror}; the rest of what "
                "the run prints was not printed",
                err=True,
            )
    if result.manifest is not None:
        rejected = result.manifest["lines"]["rejected"]
        if rejected and not rejects:
            click.echo(
                f"datafactory: {rejected} lines rejected; pass --rejects FILE to keep them",
                err=True,
            )
    sys.exit(result.exit_code)


def _with_progress(
    settings: Settings, progress: Callable[[str, int, int], None] | None
) -> Settings:
    from dataclasses import replace

    return replace(settings, progress=progress)
