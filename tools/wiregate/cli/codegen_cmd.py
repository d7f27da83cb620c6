"""``wiregate codegen [--check]``: regenerate ``datafactory/wire`` from the contract."""

from __future__ import annotations

import sys

import click

from codegen import CodegenError, check, write
from wiregate.cli import fail, main, pass_contract


@main.command("codegen")
@click.option(
    "--check",
    "check_only",
    is_flag=True,
    help="Do not write: exit 1 with a unified diff when the generated code is stale.",
)
@click.pass_context
def codegen_command(ctx: click.Context, check_only: bool) -> None:
    """Generate the typed dataclasses and wire converters in datafactory/wire/.

    Exit 0 when written (or fresh with --check), 1 when --check finds stale or edited
    generated code, 2 on a broken schema (invalid JSON, a $ref that does not resolve).
    """
    contract = pass_contract(ctx)
    if contract.bundled:
        fail("codegen needs a wiregate checkout: run it inside one or pass --root")
    root = contract.directory.parent
    try:
        if check_only:
            result = check(root)
            if not result.fresh:
                sys.stdout.write(result.diff)
                click.echo(
                    "wiregate: generated code is stale: run `wiregate codegen` and commit",
                    err=True,
                )
                sys.exit(1)
            return
        for path in write(root):
            click.echo(f"wrote {path}")
    except CodegenError as exc:
        fail(str(exc))
