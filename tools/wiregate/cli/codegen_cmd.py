"""``wiregate codegen [--check]``: regenerate ``datafactory/wire`` from the contract;
``--target typescript|pydantic --out FILE``: write the contract's types for another language."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from codegen import CodegenError, check, write
from codegen.layout import OUTPUT_DIR
from codegen.targets import TARGETS
from contracts import ContractError, locate
from wiregate.cli import fail, main


@main.command("codegen")
@click.option(
    "--check",
    "check_only",
    is_flag=True,
    help="Do not write: exit 1 with a unified diff when the generated code is stale.",
)
@click.option(
    "--target",
    type=click.Choice(tuple(TARGETS)),
    default=None,
    help="Write the contract's types for a governed repository instead: TypeScript "
    "(json-schema-to-typescript) or Pydantic v2 models (datamodel-code-generator).",
)
@click.option(
    "--out",
    default=None,
    help="With --target: the file to write (`-` or none: standard output). A path into the "
    "contract, a symbolic link or anything but a regular file is refused.",
)
@click.pass_context
def codegen_command(
    ctx: click.Context, check_only: bool, target: str | None, out: str | None
) -> None:
    """Generate the msgspec Structs, their wire stubs and TypedDict shapes in datafactory/wire/.

    Exit 0 when written (or fresh with --check), 1 when --check finds stale or edited
    generated code, 2 on a broken schema (invalid JSON, not a valid draft 2020-12 schema, a
    $ref that does not resolve, a construct codegen does not support), an output path that
    cannot be read or written, or the generator (the codegen extra) not installed.

    With --target: the types of every record type of the contract in one file (--out; none or
    `-`: standard output), with --check exit 1 when that file is not what would be written;
    exit 2 when the generator cannot run (node or the npm packages missing,
    datamodel-code-generator not installed, a generator failure) or --out names a file of the
    contract, a symbolic link, anything but a regular file, or a read-only file.
    """
    if out == "":
        fail("--out: an empty path (use --out - for standard output)")
    if target is not None:
        _target(ctx, target, None if out == "-" else Path(out) if out else None, check_only)
        return
    if out is not None:
        fail("--out needs --target")
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


def _target(ctx: click.Context, target: str, out: Path | None, check_only: bool) -> None:
    """``--target``: any contract will do, the bundled one too (a governed repository's hook)."""
    from codegen.targets import (
        check_output,
        generate,
        regenerate_command,
        stale_diff,
        write_output,
    )
    from wiregate.errors import UserError

    try:
        contract = locate(ctx.find_root().obj)
        if out is not None and not check_only:
            check_output(out, contract)  # before the generator runs
        text = generate(target, contract)
        if check_only:
            if out is None:
                fail("--check with --target needs --out FILE")
                return
            diff = stale_diff(out, text)
            if diff is not None:
                sys.stdout.write(diff)
                command = regenerate_command(target, str(out))
                click.echo(f"wiregate: {out} is stale: run `{command}`", err=True)
                sys.exit(1)
        elif out is None:
            sys.stdout.write(text)
        else:
            written = write_output(out, text, contract)
            click.echo(f"wrote {out}" if written else f"{out} is up to date")
    except (ContractError, UserError) as exc:
        fail(str(exc))
