"""``wiregate diff OLD NEW [--def NAME] [--mode ...] [--policy ...] [--format ...]``."""

from __future__ import annotations

import sys

import click

from wiregate.cli import fail, main
from wiregate.errors import UserError

MODES = ("backward", "forward", "full")
POLICIES = ("strict", "lenient")
FORMATS = ("text", "json", "github", "markdown")


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
    type=click.Choice(MODES),
    default="backward",
    show_default=True,
    help="backward: new accepts all old data; forward: old accepts all new data; full: both.",
)
@click.option(
    "--policy",
    type=click.Choice(POLICIES),
    default="strict",
    show_default=True,
    help="lenient tolerates typed optional properties added to open models and "
    "closing additionalProperties.",
)
@click.option(
    "--format", "output_format", type=click.Choice(FORMATS), default="text", show_default=True
)
def diff_command(
    old: str, new: str, definition: str | None, mode: str, policy: str, output_format: str
) -> None:
    """Compare two JSON Schemas and judge every change.

    OLD and NEW are a file, - for stdin, or REPO_DIR@REF:PATH read from git without touching
    the work tree. Exit 0 when compatible under --mode, 1 when not, 2 on a usage or load error.
    """
    # Imported here so that other subcommands do not pay for the diff engine.
    from wiregate.diff import SchemaLoadError, diff
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
        try:
            result = diff(
                old_source.document,
                new_source.document,
                mode=mode,
                policy=policy,
                old_at=pointer,
                new_at=pointer,
            )
        except SchemaLoadError as exc:
            # The engine names the side; the user named the source.
            message = str(exc).replace("old schema", old_source.origin, 1)
            message = message.replace("new schema", new_source.origin, 1)
            raise UserError(message) from None
    except UserError as exc:
        fail(str(exc))
        return
    sys.stdout.write(DIFF_REPORTERS[output_format](result))
    sys.exit(0 if result.compatible else 1)
