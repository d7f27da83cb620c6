"""``wiregate drift``: the cross-repo drift gate, ``--discover`` and ``drift history``."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from contracts import ContractError
from wiregate.cli import fail, main, pass_contract
from wiregate.cli.acceptance_options import acceptance_options
from wiregate.cli.choices import LazyChoice
from wiregate.errors import UserError


# The drift gate (with the diff engine and jsonschema_rs) is imported when a command runs (or
# its help is printed), so other commands start fast; its reporter registries are the choices.
def _drift_formats() -> list[str]:
    from wiregate.reporters.drift import DRIFT_REPORTERS

    return sorted(DRIFT_REPORTERS)


def _history_formats() -> list[str]:
    from wiregate.reporters.drift import HISTORY_REPORTERS

    return sorted(HISTORY_REPORTERS)


@main.group("drift", invoke_without_command=True)
@click.option(
    "--ref", default=None, help="Read every copy at this git ref instead of the work tree."
)
@click.option(
    "--repo",
    "repos",
    multiple=True,
    metavar="NAME[=PATH]",
    help="Check only repository NAME (repeatable), checked out at PATH (default: "
    "WIREGATE_REPO_<NAME>, else the place in mirrors.toml).",
)
@click.option(
    "--copy",
    "copies",
    multiple=True,
    metavar="ID",
    help="Check only the copies with this id (repeatable), in every selected repository.",
)
@click.option(
    "--strict",
    is_flag=True,
    help="Fail (exit 1) on any drift, and on a copy that is skipped or not found (even an "
    "optional one).",
)
@click.option(
    "--discover",
    is_flag=True,
    help="List the files in each checkout that look like a copy of the contract, ranked by "
    "how much of it they cover, with a ready-to-paste [[repository.copy]] block (with --ref: "
    "as committed at that ref).",
)
@click.option(
    "--new-since",
    "new_since",
    default=None,
    metavar="REF",
    help="Fail only on findings a copy did not already have at REF (a git ref of each "
    "checkout, e.g. HEAD in a pre-commit hook); in a repository without commits, every "
    "finding is new.",
)
@click.option(
    "--baseline",
    "baseline_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The accepted findings (default: contracts/drift-baseline.toml beside the contract).",
)
@click.option(
    "--format",
    "output_format",
    type=LazyChoice(_drift_formats),
    default="text",
    show_default=True,
    help="text, json, markdown, github (one annotation per root change, on its line; the "
    "Markdown report also goes to $GITHUB_STEP_SUMMARY when set), sarif (SARIF 2.1.0, for "
    "code scanning) or junit (JUnit XML, a test case per copy).",
)
@click.option(
    "--verbose",
    "-v",
    is_flag=True,
    help="Text format: under each root change, every change it causes with its witness; "
    "also the accepted and already-present findings.",
)
@click.pass_context
def drift_command(
    ctx: click.Context,
    ref: str | None,
    repos: tuple[str, ...],
    copies: tuple[str, ...],
    strict: bool,
    discover: bool,
    new_since: str | None,
    baseline_file: Path | None,
    output_format: str,
    verbose: bool,
) -> None:
    """Check every copy of the contract listed in contracts/mirrors.toml.

    A producer's copy must be forward compatible with the contract, a consumer's backward
    compatible, a mirror's both. Findings accepted in contracts/drift-baseline.toml (see
    'drift baseline') do not fail until their entry expires. Exit 0 no breaking drift, 1
    breaking drift with a finding neither accepted nor present at --new-since, an expired
    acceptance, or a copy not found in a checkout that is present (unless optional; with
    --strict: any such drift, or a copy skipped or not found), 2 configuration or load
    error, 130 interrupted, 143 terminated.
    """
    if ctx.invoked_subcommand is not None:
        # The group's options do not reach a subcommand: given before it, they would be
        # silently ignored.
        given = [
            f"--{name}"
            for name, value in (
                ("ref", ref),
                ("repo", repos),
                ("copy", copies),
                ("strict", strict),
                ("discover", discover),
                ("new-since", new_since),
                ("baseline", baseline_file),
                ("format", output_format != "text"),
                ("verbose", verbose),
            )
            if value
        ]
        if given:
            raise click.UsageError(
                f"{', '.join(given)} before '{ctx.invoked_subcommand}' would be ignored: "
                f"give the options of 'drift {ctx.invoked_subcommand}' after its name",
                ctx,
            )
        return
    from wiregate.drift import discover_repositories, run_drift
    from wiregate.drift.baseline import load_baseline
    from wiregate.drift.config import parse_repo_overrides
    from wiregate.reporters.drift import DISCOVERY_REPORTERS, DRIFT_REPORTERS, render_text

    contract = pass_contract(ctx)
    try:
        overrides = parse_repo_overrides(repos)
        if discover:
            if strict or copies:
                raise UserError("--discover looks for copies: --strict and --copy do not apply")
            if new_since or baseline_file or verbose:
                raise UserError(
                    "--discover looks for copies: --new-since, --baseline and --verbose do not "
                    "apply"
                )
            if output_format not in DISCOVERY_REPORTERS:
                choices = ", ".join(sorted(DISCOVERY_REPORTERS))
                raise UserError(f"--discover prints {choices}, not {output_format}")
            found = discover_repositories(contract, overrides, ref=ref)
            sys.stdout.write(DISCOVERY_REPORTERS[output_format](found))
            return
        # Inside one governed repository (pre-commit hook, composite action) --repo names the
        # repositories to check; without it every configured repository is checked.
        selected = list(overrides) or None
        report = run_drift(
            contract,
            overrides,
            ref=ref,
            strict=strict,
            repositories=selected,
            copies=list(copies) or None,
            baseline=load_baseline(contract, baseline_file, must_exist=True),
            new_since=new_since,
        )
    except (ContractError, UserError) as exc:
        fail(str(exc))
        return
    if output_format == "text":
        sys.stdout.write(render_text(report, verbose=verbose))
    else:
        sys.stdout.write(DRIFT_REPORTERS[output_format](report))
    if output_format == "github":
        from wiregate.reporters.drift import render_markdown
        from wiregate.reporters.github import write_step_summary

        warning = write_step_summary(render_markdown(report))
        if warning is not None:
            click.echo(f"wiregate: warning: {warning}", err=True)
    # One line per problem: an unknown ref is one problem however many copies it hides.
    for message in dict.fromkeys(result.message for result in report.errors):
        click.echo(f"wiregate: error: {message}", err=True)
    sys.exit(report.exit_code)


@drift_command.command("history")
@click.option(
    "--repo",
    "repo",
    required=True,
    metavar="NAME[=PATH]",
    help="The repository whose history to walk, and where it is checked out.",
)
@click.option(
    "--copy",
    "copies",
    multiple=True,
    metavar="ID",
    help="Walk only the copies with this id (repeatable; default: every copy).",
)
@click.option("--ref", default="HEAD", show_default=True, help="Walk the history of this ref.")
@click.option(
    "--format",
    "output_format",
    type=LazyChoice(_history_formats),
    default="text",
    show_default=True,
)
@click.pass_context
def history_command(
    ctx: click.Context, repo: str, copies: tuple[str, ...], ref: str, output_format: str
) -> None:
    """Judge every committed revision of a copy: against the contract, and against the
    revision before it. Renames are followed; deletions are listed.

    "since" is the first commit of the current unbroken run of the same verdict; unreadable
    revisions inside the run are listed and skipped. Exit 0 when the history was printed, 2
    on a configuration or git error, 130 interrupted, 143 terminated.
    """
    from wiregate.drift import run_history
    from wiregate.drift.config import parse_repo_overrides
    from wiregate.reporters.drift import HISTORY_REPORTERS, shallow_warning

    contract = pass_contract(ctx)
    try:
        overrides = parse_repo_overrides([repo])
        reports = run_history(contract, next(iter(overrides)), overrides, list(copies) or None, ref)
    except (ContractError, UserError) as exc:
        fail(str(exc))
        return
    sys.stdout.write(HISTORY_REPORTERS[output_format](reports))
    if output_format == "text":  # JSON carries it as `shallow_cut`
        for warning in dict.fromkeys(filter(None, map(shallow_warning, reports))):
            click.echo(f"wiregate: warning: {warning}", err=True)


@drift_command.command("baseline")
@acceptance_options("findings")
@click.option(
    "--repo",
    "repos",
    multiple=True,
    metavar="NAME[=PATH]",
    help="Only repository NAME (repeatable), checked out at PATH.",
)
@click.option("--copy", "copies", multiple=True, metavar="ID", help="Only the copies with this id.")
@click.option(
    "--baseline",
    "baseline_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The file to write (default: contracts/drift-baseline.toml beside the contract).",
)
@click.pass_context
def baseline_command(
    ctx: click.Context,
    reason: str | None,
    expires: str | None,
    prune: bool,
    repos: tuple[str, ...],
    copies: tuple[str, ...],
    baseline_file: Path | None,
) -> None:
    """Accept the current drift findings: add an entry, with --reason, for every finding of
    the selected copies that the baseline does not list yet (entries already there keep
    their reason and date). With --prune, remove the entries that match no finding.

    The file is rewritten atomically, entries in a stable order under a regenerated header.
    Exit 0 written (or nothing to change), 2 usage, configuration or load error (the file is
    then left as it was), 130 interrupted, 143 terminated.
    """
    from wiregate.acceptance import update_options
    from wiregate.drift import run_drift
    from wiregate.drift.baseline import load_baseline, update_baseline, write_baseline
    from wiregate.drift.config import parse_repo_overrides

    contract = pass_contract(ctx)
    try:
        on, until = update_options(reason, expires, prune, "findings")
        overrides = parse_repo_overrides(repos)
        baseline = load_baseline(contract, baseline_file)
        report = run_drift(
            contract,
            overrides,
            repositories=list(overrides) or None,
            copies=list(copies) or None,
            baseline=baseline,
            on=on,
        )
        if report.errors:
            # A copy that cannot be read: its findings are unknown, so nothing is written.
            for message in dict.fromkeys(result.message for result in report.errors):
                click.echo(f"wiregate: error: {message}", err=True)
            fail(f"{baseline.path}: not written: a copy could not be read")
            return
        update = update_baseline(baseline, report, reason=reason, expires=until, prune=prune)
        if update.changed or not baseline.path.exists():
            write_baseline(update.path, update.entries)
    except (ContractError, UserError) as exc:
        fail(str(exc))
        return
    click.echo(
        f"{update.path}: {len(update.added)} added, {len(update.pruned)} pruned, {update.kept} kept"
    )
