"""``datafactory store stats|quarantine`` and the command's one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import orjson

from tests.ingest.server import running
from tests.ingest.test_endpoint import _demo, _post


def _datafactory(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "datafactory", *args],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def test_stats_and_quarantine_show_what_the_store_holds(tmp_path: Path) -> None:
    store = tmp_path / "store"
    with running(store) as server:
        assert _post(server, orjson.dumps({"records": [*_demo(), {"x": 1}]})).status_code == 200
        live = _datafactory("store", "stats", str(store))  # while the server writes
    assert live.returncode == 0
    stats = json.loads(live.stdout)
    assert {k: v for k, v in stats.items() if k != "bytes"} == {
        "accepted": 7,
        "accepted_by_type": {"RolloutBranchRecord": 7},
        "quarantined": 2,
        "quarantined_by_reason": {"contract-violation": 1, "unsupported-record-type": 1},
    }
    assert stats["bytes"] > 0
    text = _datafactory("store", "quarantine", str(store))
    assert text.returncode == 0
    lines = text.stdout.splitlines()
    assert [line.split(" (request ")[0] for line in lines] == [
        '1: contract-violation at /objective_score: RolloutBranchRecord: "1" is not one of [0, 1]',
        "2: unsupported-record-type at /: unsupported-record-type: not a rollout-wire record; "
        "expected a Layer 1 or Layer 2 record",
    ]
    assert all(line.endswith(" from 127.0.0.1)") for line in lines)
    jsonl = _datafactory("store", "quarantine", str(store), "--format", "jsonl")
    items = [json.loads(line) for line in jsonl.stdout.splitlines()]
    assert [json.loads(item["record"]) for item in items] == [_demo()[5], {"x": 1}]


def test_a_new_store_is_the_owners_only(tmp_path: Path) -> None:
    """It holds raw records, as the exporter's rejects file does (the database and its WAL
    were 0644 whatever the umask)."""
    store = tmp_path / "store"
    with running(store) as server:
        assert _post(server, orjson.dumps({"records": _demo()[:2]})).status_code == 200
        modes = {p.name: p.stat().st_mode & 0o777 for p in store.iterdir()}
    assert modes == {
        "ingest.sqlite3": 0o600,
        "ingest.sqlite3-wal": 0o600,
        "ingest.sqlite3-shm": 0o600,
    }


def test_errors_are_one_line_with_exit_2(tmp_path: Path) -> None:
    missing = tmp_path / "none"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    no_token = tmp_path / "no-token"
    no_token.write_text("# tokens\n\n  \n")
    dangling = tmp_path / "dangling"
    dangling.mkdir()
    (dangling / "ingest.sqlite3").symlink_to("elsewhere/db")
    for args, message in (
        (("store", "stats", str(missing)), f"{missing}: no ingest store there (ingest.sqlite3 not found)"),
        (("store", "quarantine", str(missing)), f"{missing}: no ingest store there (ingest.sqlite3 not found)"),
        (("serve", "--store", str(tmp_path / "s"), "--token-file", str(fifo)), f"{fifo}: a FIFO, not a regular file"),
        # SQLite created the link's target, 0644 whatever the store's own mode
        (("serve", "--store", str(dangling)),
         f"{dangling}/ingest.sqlite3: a symbolic link to nothing (elsewhere/db)"),
        # It locked everyone out without a word
        (("serve", "--store", str(tmp_path / "s"), "--token-file", str(no_token)),
         f"{no_token}: holds no token (one a line; # starts a comment)"),
        # It was a traceback, exit 1, when the app started
        (("serve", "--store", str(tmp_path / "s"), "--port", "0", "--contract", str(tmp_path)),
         f"{tmp_path}: no contract there (neither rollout-wire.schema.json nor "
         "contracts/rollout-wire.schema.json)"),
        (("--input", f"store:{missing}", "--allow-missing-g3", "--output-ppo", str(tmp_path / "p.jsonl"), "--format", "ppo"),
         f"store:{missing}: no ingest store there (ingest.sqlite3 not found)"),
    ):  # fmt: skip
        result = _datafactory(*args)
        assert (result.returncode, result.stderr) == (2, f"datafactory: error: {message}\n")
