"""``datafactory serve`` and ``datafactory store stats|quarantine``: thin adapters over
``datafactory.ingest``. Exit 0 done, 2 usage or store error (one line), 130/143 interrupted."""

from __future__ import annotations

import json
import sys
from typing import NoReturn

import click
import orjson

from contracts import ContractError
from datafactory.contract import exporter_contract
from datafactory.ingest.settings import (
    DEFAULT_MAX_BODY_BYTES,
    IngestSettings,
    TokenFileError,
    Tokens,
)
from datafactory.ingest.store import StoreError, connect, iter_quarantine, stats
from wiregate.commandline.usage import OneLineCommand, OneLineGroup
from wiregate.textlines import visible

__all__ = ["main"]


def _fail(message: str) -> NoReturn:
    """One line, exit 2, as the exporter's input errors."""
    # A file name holding a newline cannot add a line of its own.
    click.echo(f"datafactory: error: {visible(message)}", err=True)
    sys.exit(2)


class _Command(OneLineCommand):
    program = "datafactory"


class _Group(OneLineGroup):
    program = "datafactory"
    command_class = _Command


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """The ingest endpoint of the rollout plugin's HTTP sink, and its store."""


@main.command()
@click.option("--store", "store", required=True, help="Directory of the store (created).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535))
@click.option("--token-file", help="Bearer tokens, one per line; re-read on SIGHUP.")
@click.option(
    "--max-body-bytes",
    default=DEFAULT_MAX_BODY_BYTES,
    show_default=True,
    type=click.IntRange(1, 1 << 30),
    help="Larger bodies (compressed or not) are refused with 413.",
)
@click.option("--contract", metavar="DIR", help="Validate against this contract directory.")
def serve(
    store: str,
    host: str,
    port: int,
    token_file: str | None,
    max_body_bytes: int,
    contract: str | None,
) -> None:
    """Serve POST /ingest, GET /healthz and GET /metrics until SIGTERM or SIGINT."""
    try:
        from datafactory.ingest.serve import bind
        from datafactory.ingest.serve import serve as run
    except ImportError as exc:
        _fail(
            f"the ingest endpoint needs the serve extra ({exc.name} is missing): "
            "pip install 'wiregate[serve]'"
        )

    settings = IngestSettings(store, max_body_bytes, Tokens(token_file), contract)
    try:
        settings.tokens.reload()
        # A contract that does not load: one line now, not a traceback when the app starts.
        exporter_contract(contract).schemas  # noqa: B018
        connect(store).close()  # the store opens (or the error is one line now)
    except (TokenFileError, StoreError, ContractError) as exc:
        _fail(str(exc))
    if not host.strip():  # the socket layer reads "" as every interface
        _fail("--host: give an address to bind (0.0.0.0 for every interface)")
    try:
        sock = bind(host, port)
    except OSError as exc:
        _fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
    run(settings, sock)


@main.group()
def store() -> None:
    """What an ingest store holds."""


@store.command("stats")
@click.argument("directory")
def stats_command(directory: str) -> None:
    """Counts of accepted records by type and quarantined ones by reason, as JSON."""
    try:
        click.echo(json.dumps(stats(directory), indent=2, sort_keys=True))
    except StoreError as exc:
        _fail(str(exc))


@store.command("quarantine")
@click.argument("directory")
@click.option("--format", "output_format", type=click.Choice(["text", "jsonl"]), default="text")
def quarantine_command(directory: str, output_format: str) -> None:
    """The quarantined records with their reasons, in arrival order."""
    try:
        for item in iter_quarantine(directory):
            if output_format == "jsonl":
                sys.stdout.buffer.write(orjson.dumps(item, option=orjson.OPT_APPEND_NEWLINE))
            else:
                click.echo(
                    f"{item['id']}: {item['reason']} at {item['pointer']}: {item['message']} "
                    f"(request {item['request_id']} from {item['source_address'] or '?'})"
                )
    except StoreError as exc:
        _fail(str(exc))
