"""``wiregate codegen [--check]``: regenerate ``datafactory/wire`` from the contract."""

from __future__ import annotations

import sys

import click

from codegen import CodegenError, check, write
from codegen.layout import OUTPUT_DIR
from contracts import ContractError, locate
from wiregate.cli import fail, main


@main.command("codegen")
@click.option(
    "--check",
    "check_only",
    is_flag=True,
    help="Do not write: exit 1 with a unified diff when the generated code is stale.",
)
@click.pass_context
def codegen_command(ctx: click.Context, check_only: bool) -> None:
    """Generate the msgspec Structs, their wire stubs and TypedDict shapes in datafactory/wire/.

    Exit 0 when written (or fresh with --check), 1 when --check finds stale or edited
    generated code, 2 on a broken schema (invalid JSON, not a valid draft 2020-12 schema, a
    $ref that does not resolve, a construct codegen does not support), an output path that
    cannot be read or written, or the generator (the codegen extra) not installed.
    """
    # Not pass_contract: codegen reads the schemas itself and names a broken one relative to
    # the root (contracts/<file>), the path the generated headers and the user's repo use.
    try:
        contract = locate(ctx.find_root().obj)
    except ContractError as exc:
        fail(str(exc))
        raise AssertionError("unreachable") from exc
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
        changed = write(root)
        for path in changed:
            click.echo(f"wrote {path}")
        if not changed:
            click.echo(f"{OUTPUT_DIR} is up to date")
    except CodegenError as exc:
        fail(str(exc))
