"""``wiregate diff OLD NEW [--def NAME] [--mode ...] [--policy ...] [--draft ...]
[--format-assertion] [--format ...] [--verbose]``."""

from __future__ import annotations

import math
import sys

import click

from wiregate.cli import fail, main
from wiregate.cli.choices import LazyChoice
from wiregate.errors import UserError
from wiregate.policy import DEFAULT_POLICY


# The diff engine is imported when the command runs (or its help is printed), so other
# subcommands do not pay for it; its registries are the option choices.
def _modes() -> tuple[str, ...]:
    from wiregate.diff import MODES

    return MODES


def _policies() -> tuple[str, ...]:
    from wiregate.diff import POLICIES

    return POLICIES


def _drafts() -> list[str]:
    from wiregate.diff.drafts import ALIASES

    return list(ALIASES)


def _formats() -> list[str]:
    from wiregate.reporters.diff import DIFF_FORMATS

    return list(DIFF_FORMATS)


MAX_TIME_LIMIT = 3600.0  # the limit is what keeps a hostile schema from running for ever


def _a_number(param: click.Parameter, value: float | None) -> float | None:
    if value is not None and math.isnan(value):  # passes every range check: no comparison holds
        raise click.BadParameter("nan is not a number of seconds", param=param)
    return value


@main.command("diff")
@click.argument("old")
@click.argument("new")
@click.option(
    "--def",
    "definition",
    metavar="NAME",
    default=None,
    help="Compare the $defs (or definitions) entry NAME, with everything it references, "
    "instead of the root schema: the same as OLD#/$defs/NAME NEW#/$defs/NAME.",
)
@click.option(
    "--mode",
    type=LazyChoice(_modes),
    default="backward",
    show_default=True,
    help="backward: new accepts all old data; forward: old accepts all new data; full: both.",
)
@click.option(
    "--policy",
    type=LazyChoice(_policies),
    default=DEFAULT_POLICY,
    show_default=True,
    help="lenient tolerates typed optional properties added to open models and "
    "closing additionalProperties.",
)
@click.option(
    "--draft",
    type=LazyChoice(_drafts),
    default=None,
    help="Read both schemas under this JSON Schema draft (default: each one's $schema, else "
    "the draft its keywords show, else 2020-12).",
)
@click.option(
    "--format-assertion",
    is_flag=True,
    help="Judge format as a constraint (as with the format-assertion vocabulary); by default "
    "it is an annotation and its changes are info.",
)
@click.option(
    "--format", "output_format", type=LazyChoice(_formats), default="text", show_default=True
)
@click.option(
    "--time-limit",
    type=click.FloatRange(min=0, min_open=True, max=MAX_TIME_LIMIT),
    callback=lambda _ctx, param, value: _a_number(param, value),
    default=None,
    metavar="SECONDS",
    help="Wall-clock limit of the comparison (default 10); beyond it, or beyond 50,000 "
    "compared schema nodes, the schemas are refused (exit 2).",
)
@click.option(
    "--verbose",
    "-v",
    is_flag=True,
    help="Text format: show under each breaking change its witness, a value the accepting "
    "schema validates and the other rejects (the JSON format always carries it).",
)
def diff_command(
    old: str,
    new: str,
    definition: str | None,
    mode: str,
    policy: str,
    draft: str | None,
    format_assertion: bool,
    output_format: str,
    time_limit: float | None,
    verbose: bool,
) -> None:
    """Compare two JSON Schemas and judge every change.

    OLD and NEW are a file, - for stdin, or REPO_DIR@REF:PATH (PATH inside REPO_DIR) read from
    git without touching the work tree (REF: any form git accepts), each optionally followed by
    #POINTER, the schema to compare inside the document (a JSON pointer as a URI fragment:
    schema.json#/$defs/Name). Exit 0 when compatible under --mode, 1 when not, 2 on a usage or
    load error (a pair too large or too recursive to compare within the limits included), 3 on
    an internal error (a bug). Changes the engine cannot decide are reported at level unknown
    and never fail the verdict.
    """
    from wiregate.diff import TIME_LIMIT, diff
    from wiregate.pointer import fragment
    from wiregate.reporters.diff import DIFF_REPORTERS
    from wiregate.sources import load_source, split_pointer

    if split_pointer(old)[0] == "-" and split_pointer(new)[0] == "-":
        fail("OLD and NEW cannot both be stdin")
    try:
        old_source = load_source(old)
        new_source = load_source(new)
        if definition is not None and (old_source.pointer or new_source.pointer) is not None:
            typed = old if old_source.pointer is not None else new
            raise UserError(f"--def {definition} cannot be combined with a #POINTER ({typed})")
        if definition is not None:
            old_at = new_at = fragment("$defs", definition)
        else:
            old_at, new_at = old_source.pointer or "#", new_source.pointer or "#"
        result = diff(
            old_source.document,
            new_source.document,
            mode=mode,
            policy=policy,
            old_at=old_at,
            new_at=new_at,
            old_origin=old_source.origin,
            new_origin=new_source.origin,
            draft=draft,
            format_assertion=format_assertion,
            time_limit=TIME_LIMIT if time_limit is None else time_limit,
        )
    except UserError as exc:
        fail(str(exc))
        return
    if output_format == "text":
        from wiregate.reporters.diff import render_text

        sys.stdout.write(render_text(result, verbose=verbose))
    elif output_format in ("github", "sarif"):
        from wiregate.reporters.diff import (
            SourceFile,
            render_github_located,
            render_markdown,
            render_sarif_located,
        )
        from wiregate.reporters.github import write_step_summary

        old_file = SourceFile(old_source.file, old_source.text, old_source.document)
        new_file = SourceFile(new_source.file, new_source.text, new_source.document)
        if output_format == "sarif":
            sys.stdout.write(render_sarif_located(result, old_file, new_file))
        else:
            sys.stdout.write(render_github_located(result, new_file))
            warning = write_step_summary(render_markdown(result))
            if warning is not None:
                click.echo(f"wiregate: warning: {warning}", err=True)
    else:
        sys.stdout.write(DIFF_REPORTERS[output_format](result))
    sys.exit(0 if result.compatible else 1)
