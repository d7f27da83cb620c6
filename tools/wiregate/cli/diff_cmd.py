"""``wiregate diff OLD NEW [--def NAME] [--mode ...] [--policy ...] [--format ...] [-v]``."""

from __future__ import annotations

import sys

import click

from wiregate.cli import fail, main
from wiregate.cli.choices import LazyChoice
from wiregate.errors import UserError


# The diff engine is imported when the command runs (or its help is printed), so other
# subcommands do not pay for it; its registries are the option choices.
def _modes() -> tuple[str, ...]:
    from wiregate.diff import MODES

    return MODES


def _policies() -> tuple[str, ...]:
    from wiregate.diff import POLICIES

    return POLICIES


def _formats() -> list[str]:
    from wiregate.reporters.diff import DIFF_REPORTERS

    return list(DIFF_REPORTERS)


@main.command("diff")
@click.argument("old")
@click.argument("new")
@click.option(
    "--def",
    "definition",
    metavar="NAME",
    default=None,
    help="Compare the $defs (or definitions) entry NAME, with everything it references, "
    "instead of the root schema.",
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
    default="strict",
    show_default=True,
    help="lenient tolerates typed optional properties added to open models and "
    "closing additionalProperties.",
)
@click.option(
    "--format", "output_format", type=LazyChoice(_formats), default="text", show_default=True
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
    output_format: str,
    verbose: bool,
) -> None:
    """Compare two JSON Schemas and judge every change.

    OLD and NEW are a file, - for stdin, or REPO_DIR@REF:PATH (PATH inside REPO_DIR) read from
    git without touching the work tree. Exit 0 when compatible under --mode, 1 when not, 2 on a
    usage or load error.
    """
    from wiregate.diff import diff
    from wiregate.reporters.diff import DIFF_REPORTERS
    from wiregate.sources import load_source

    if old == "-" and new == "-":
        fail("OLD and NEW cannot both be stdin")
    pointer = (
        "#" if definition is None else "#/$defs/" + definition.replace("~", "~0").replace("/", "~1")
    )
    try:
        old_source = load_source(old)
        new_source = load_source(new)
        result = diff(
            old_source.document,
            new_source.document,
            mode=mode,
            policy=policy,
            old_at=pointer,
            new_at=pointer,
            old_origin=old_source.origin,
            new_origin=new_source.origin,
        )
    except UserError as exc:
        fail(str(exc))
        return
    if output_format == "text":
        from wiregate.reporters.diff import render_text

        sys.stdout.write(render_text(result, verbose=verbose))
    else:
        sys.stdout.write(DIFF_REPORTERS[output_format](result))
    sys.exit(0 if result.compatible else 1)
