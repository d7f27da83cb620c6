"""Usage errors are one line naming the program, exit 2, as every other error (click's own
form is four lines: usage, hint, blank, error)."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from datafactory.cli import main as datafactory
from datafactory.ingest.cli import main as ingest
from wiregate.cli import main as wiregate

CASES = [
    (
        datafactory,
        ["--input", "x.jsonl", "--workers", "abc"],
        "datafactory: error: Invalid value for '--workers': 'abc' is not a valid integer range.",
    ),
    (
        datafactory,
        ["--input", "x.jsonl", "--workers", "0"],
        "datafactory: error: Invalid value for '--workers': 0 is not in the range x>=1.",
    ),
    (datafactory, ["--bogus"], "datafactory: error: No such option '--bogus'."),
    (
        ingest,
        ["serve", "--store", "s", "--port", "99999"],
        "datafactory: error: serve: Invalid value for '--port': 99999 is not in the range "
        "0<=x<=65535.",
    ),
    (ingest, ["store", "bogus"], "datafactory: error: store: No such command 'bogus'."),
    (
        wiregate,
        ["validate", "--format", "xml", "x.jsonl"],
        "wiregate: error: validate: Invalid value for '--format': 'xml' is not one of 'json', "
        "'text'.",
    ),
    (wiregate, ["nosuch"], "wiregate: error: No such command 'nosuch'."),
    (
        wiregate,
        ["drift", "baseline", "--bogus"],
        "wiregate: error: drift baseline: No such option '--bogus'.",
    ),
]


@pytest.mark.parametrize(("command", "args", "line"), CASES)
def test_a_usage_error_is_one_line(command: click.Command, args: list[str], line: str) -> None:
    result = CliRunner().invoke(command, args)
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", line + "\n")


def test_a_bare_group_still_shows_its_help() -> None:
    result = CliRunner().invoke(wiregate, [])
    assert result.exit_code == 2
    assert result.stderr.startswith("Usage: ")


@pytest.mark.parametrize("host", ["", " "])
def test_serve_refuses_an_empty_host(tmp_path: Path, host: str) -> None:
    # the socket layer reads "" as every interface: --host '' listened on 0.0.0.0
    result = CliRunner().invoke(ingest, ["serve", "--store", str(tmp_path / "s"), "--host", host])
    assert (result.exit_code, result.stderr) == (
        2,
        "datafactory: error: --host: give an address to bind (0.0.0.0 for every interface)\n",
    )
