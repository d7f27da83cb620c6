"""``wiregate check``: the one command a maintainer or CI runs."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from contracts import ContractError, locate
from wiregate.check.model import Problem, StepStatus
from wiregate.cli import fail, main
from wiregate.errors import UserError
from wiregate.policy import DEFAULT_POLICY
from wiregate.reporters.check import CHECK_REPORTERS


@main.command("check")
@click.option(
    "--against",
    metavar="REF",
    default=None,
    help="Git ref of the previous contract that a breaking change is judged against "
    "[default: HEAD; without a commit or a git repository the step is skipped, while an "
    "explicit REF must exist].",
)
@click.option(
    "--allow-breaking",
    metavar="REASON",
    default=None,
    help="Let a breaking change without a version bump pass; REASON is stated in the output.",
)
@click.option(
    "--policy",
    type=click.Choice(["lenient", "strict"]),
    default=DEFAULT_POLICY,
    show_default=True,
    help="Diff policy for the breaking-change step, the same default as diff and drift "
    "(lenient: adding a typed optional property to an open record is not breaking).",
)
@click.option(
    "--repo",
    "repos",
    multiple=True,
    metavar="NAME[=PATH]",
    help="Drift step: check only repository NAME (repeatable), checked out at PATH.",
)
@click.option(
    "--copy",
    "copies",
    multiple=True,
    metavar="ID",
    help="Drift step: check only the copies with this id (repeatable).",
)
@click.option("--ref", default=None, help="Drift step: read every copy at this git ref.")
@click.option("--strict", is_flag=True, help="Drift step: fail on any drift or missing copy.")
@click.option(
    "--new-since",
    "new_since",
    default=None,
    metavar="REF",
    help="Drift step: fail only on findings a copy did not already have at REF (as "
    "'wiregate drift --new-since').",
)
@click.option(
    "--baseline",
    "baseline_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Drift step: the accepted findings (default: contracts/drift-baseline.toml beside "
    "the contract).",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(sorted(CHECK_REPORTERS)),
    default="text",
    show_default=True,
)
@click.pass_context
def check_command(
    ctx: click.Context,
    against: str | None,
    allow_breaking: str | None,
    policy: str,
    repos: tuple[str, ...],
    copies: tuple[str, ...],
    ref: str | None,
    strict: bool,
    new_since: str | None,
    baseline_file: Path | None,
    output_format: str,
) -> None:
    """Run the whole gate: contract files and fixtures, generated code, breaking changes
    since --against, and the drift of every mirror. One summary at the end.

    Exit 0 all steps pass, 1 a step fails, 2 a step cannot run (configuration or load error),
    130 interrupted, 143 terminated.
    """
    # Imported here: the steps pull in git, jsonschema and the generator's checks, which
    # other commands need not pay for at start-up.
    from wiregate.check.run import CheckOptions, run_check
    from wiregate.drift.config import parse_repo_overrides

    # Not pass_contract: a contract schema that cannot be loaded is the contract step's error,
    # reported in the step table like any other.
    try:
        contract = locate(ctx.find_root().obj)
    except ContractError as exc:
        fail(str(exc))
        return
    try:
        options = CheckOptions(
            against=against,
            allow_breaking=allow_breaking,
            policy=policy,
            repos=parse_repo_overrides(repos),
            copies=tuple(copies) or None,
            ref=ref,
            strict=strict,
            new_since=new_since,
            baseline=baseline_file,
        )
    except UserError as exc:
        fail(str(exc))
        return
    if allow_breaking is not None and not allow_breaking.strip():
        fail("--allow-breaking needs a reason (it is stated in the output)")
    report = run_check(contract, options)
    sys.stdout.write(CHECK_REPORTERS[output_format](report))
    for step in report.steps:
        if step.status is StepStatus.ERROR:
            for problem in step.problems or (Problem(step.summary),):
                click.echo(f"wiregate: error: {step.name}: {problem.message}", err=True)
    sys.exit(report.exit_code)
