"""The ingest store: accepted records and the quarantine, in one SQLite database in WAL mode.

Why SQLite in WAL mode: one file in the store directory, no server to run beside the
endpoint; a transaction committed with ``synchronous=FULL`` is on disk (the WAL is fsynced
at each commit), so a record acknowledged after its commit survives SIGKILL and power loss;
readers see a consistent snapshot while the writer goes on (the exporter reads a store that
is still being filled). One writer at a time is what the endpoint needs: its group commit
(``datafactory.ingest.writer``) gathers concurrent requests into one transaction, one fsync.

Each accepted record has a unique key (``record_key``), so a retried request stores nothing
twice: ``INSERT OR IGNORE`` counts it as a duplicate. Rejected records are kept verbatim with
their reasons; nothing sent is ever dropped.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from datafactory.repair import BRANCH, LAYER2_DPO, LAYER2_PPO, TREE
from wiregate.exactjson import json_equal
from wiregate.files import not_a_regular_file

__all__ = [
    "BUSY_TIMEOUT",
    "DATABASE",
    "Accepted",
    "Quarantined",
    "StoreError",
    "check",
    "connect",
    "iter_accepted",
    "iter_quarantine",
    "key_conflict",
    "record_key",
    "stats",
]

#: The database file inside the store directory.
DATABASE = "ingest.sqlite3"
#: Seconds a write waits for another connection's write lock before failing.
BUSY_TIMEOUT = 10.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS accepted (
    id INTEGER PRIMARY KEY,
    record_key TEXT NOT NULL UNIQUE,
    record_type TEXT NOT NULL,
    record BLOB NOT NULL,           -- the record as sent (JSON), repaired again on export
    repairs TEXT NOT NULL,          -- the repairs it needed, comma-separated
    arrived_ms INTEGER NOT NULL,
    request_id TEXT NOT NULL,
    source_address TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS quarantine (
    id INTEGER PRIMARY KEY,
    record_sha256 TEXT NOT NULL UNIQUE,  -- a retried request quarantines nothing twice
    record BLOB NOT NULL,           -- verbatim
    reason TEXT NOT NULL,
    pointer TEXT NOT NULL,
    message TEXT NOT NULL,
    arrived_ms INTEGER NOT NULL,
    request_id TEXT NOT NULL,
    source_address TEXT NOT NULL
);
"""


class StoreError(Exception):
    """The store cannot be opened or written (the message names the directory)."""


@dataclass(frozen=True)
class Accepted:
    key: str
    record_type: str
    record: bytes
    repairs: tuple[str, ...]


@dataclass(frozen=True)
class Quarantined:
    record: bytes
    reason: str
    pointer: str
    message: str


def record_key(record_type: str, record: dict[str, Any]) -> str:
    """The identity of a valid record: Layer 1 ``rollout_id`` and ``branch_index`` (a tree:
    its ``rollout_id``); Layer 2 the kind, ``rollout_id``, branch (PPO) or pair (DPO) and
    ``exported_at_ms``. Numbers are written as JSON reads them back (``1`` and ``1.0``, one
    key)."""
    if record_type == BRANCH:
        parts: list[Any] = ["branch", record["rollout_id"], _number(record["branch_index"])]
    elif record_type == TREE:
        parts = ["tree", record["rollout_id"]]
    elif record_type == LAYER2_DPO:
        given = record["provenance"]
        parts = [
            "dpo", given["rollout_id"], _number(given["chosen_branch"]),
            _number(given["rejected_branch"]), _number(given["exported_at_ms"]),
        ]  # fmt: skip
    elif record_type == LAYER2_PPO:
        given = record["provenance"]
        parts = [
            "ppo", given["rollout_id"], _number(given["branch_index"]),
            _number(given["exported_at_ms"]),
        ]  # fmt: skip
    else:
        raise ValueError(f"no key for record type {record_type!r}")
    return orjson.dumps(parts).decode("utf-8")


def _number(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


def connect(directory: str | Path, *, readonly: bool = False) -> sqlite3.Connection:
    """A connection to the store in ``directory`` (created, with its tables, unless
    ``readonly``). Raises ``StoreError``."""
    path = Path(directory) / DATABASE
    why = not_a_regular_file(path)  # a FIFO or a device in its place is refused, not opened
    if why == "file not found" and path.is_symlink():  # SQLite would make its target 0644
        raise StoreError(f"{path}: a symbolic link to nothing ({os.readlink(path)})")
    if why == "file not found" and readonly:
        raise StoreError(f"{directory}: no ingest store there ({DATABASE} not found)")
    if why not in (None, "file not found"):
        raise StoreError(f"{path}: {why}")
    try:
        if readonly:
            connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
        else:
            Path(directory).mkdir(parents=True, exist_ok=True)
            if why == "file not found":  # it holds raw records, as the exporter's rejects file
                _create_private(path)  # does: 0600 (SQLite gives its WAL the same mode)
            connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=FULL")
            connection.executescript(_SCHEMA)
        connection.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT * 1000)}")
    except (sqlite3.Error, OSError) as exc:
        raise StoreError(f"{directory}: cannot open the ingest store: {exc}") from None
    return connection


def _same_record(stored: bytes, sent: bytes) -> bool:
    """The same JSON value, however written: a retry's NDJSON line is stored as sent, and a
    producer may write it again with other spacing, key order or number form (``1.0``)."""
    if stored == sent:
        return True
    try:
        return json_equal(orjson.loads(stored), orjson.loads(sent))
    except orjson.JSONDecodeError:  # stored before orjson's limits were checked: as written
        return False


def _create_private(path: Path) -> None:
    # One made meanwhile by another process is left as it is.
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))


def key_conflict(key: str) -> str:
    """The reason given for a record whose key holds another record already."""
    return f"another record with its key {key} is stored"


#: What became of an accepted record in ``write_batch``.
NEW, DUPLICATE, CONFLICT = "new", "duplicate", "conflict"
#: The quarantine reason of a record whose key holds another record already.
KEY_CONFLICT = "key-conflict"


def write_batch(
    connection: sqlite3.Connection,
    accepted: Sequence[tuple[Accepted, int, str, str]],
    quarantined: Sequence[tuple[Quarantined, int, str, str]],
) -> list[str]:
    """Insert in one transaction, committed before returning (``synchronous=FULL``): each
    accepted record with (arrival ms, request id, source address) and each quarantined one.
    Returns, per accepted record, ``NEW``, ``DUPLICATE`` (the same record is stored: a
    retry) or ``CONFLICT`` (another record holds its key: it is quarantined as
    ``KEY_CONFLICT``, never dropped). Raises ``sqlite3.Error`` with nothing written."""
    outcomes: list[str] = []
    conflicts: list[tuple[Quarantined, int, str, str]] = []
    connection.execute("BEGIN IMMEDIATE")
    try:
        for record, arrived, request_id, address in accepted:
            cursor = connection.execute(
                "INSERT OR IGNORE INTO accepted (record_key, record_type, record, repairs, "
                "arrived_ms, request_id, source_address) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    record.key, record.record_type, record.record, ",".join(record.repairs),
                    arrived, request_id, address,
                ),
            )  # fmt: skip
            if cursor.rowcount == 1:
                outcomes.append(NEW)
                continue
            (stored,) = connection.execute(
                "SELECT record FROM accepted WHERE record_key = ?", (record.key,)
            ).fetchone()
            if _same_record(bytes(stored), record.record):
                outcomes.append(DUPLICATE)
                continue
            outcomes.append(CONFLICT)
            conflict = Quarantined(record.record, KEY_CONFLICT, "/", key_conflict(record.key))
            conflicts.append((conflict, arrived, request_id, address))
        connection.executemany(
            "INSERT OR IGNORE INTO quarantine (record_sha256, record, reason, pointer, message, "
            "arrived_ms, request_id, source_address) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    hashlib.sha256(q.record).hexdigest(), q.record, q.reason, q.pointer,
                    q.message, arrived, request_id, address,
                )
                for q, arrived, request_id, address in [*quarantined, *conflicts]
            ],
        )  # fmt: skip
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    return outcomes


def check(directory: str | Path) -> None:
    """Raises ``StoreError`` unless ``directory`` holds a store that can be read."""
    connection = connect(directory, readonly=True)
    try:
        connection.execute("SELECT 1 FROM accepted LIMIT 1").fetchall()
    except sqlite3.Error as exc:
        raise StoreError(f"{directory}: cannot read the ingest store: {exc}") from None
    finally:
        connection.close()


def iter_accepted(directory: str | Path) -> Iterator[bytes]:
    """The JSON text of every accepted record, in arrival order, from one snapshot: records
    committed while it is read are not seen, none is half read. Raises ``StoreError``."""
    connection = connect(directory, readonly=True)
    try:
        connection.execute("BEGIN")  # a read transaction: one WAL snapshot until it ends
        for (record,) in connection.execute("SELECT record FROM accepted ORDER BY id"):
            yield bytes(record)
        connection.execute("COMMIT")
    except sqlite3.Error as exc:
        raise StoreError(f"{directory}: cannot read the ingest store: {exc}") from None
    finally:
        connection.close()


def iter_quarantine(directory: str | Path) -> Iterator[dict[str, Any]]:
    """Every quarantined record with its reason, in arrival order."""
    connection = connect(directory, readonly=True)
    try:
        yield from _quarantine_rows(connection)
    except sqlite3.Error as exc:
        raise StoreError(f"{directory}: cannot read the ingest store: {exc}") from None
    finally:
        connection.close()


def _quarantine_rows(connection: sqlite3.Connection) -> Iterator[dict[str, Any]]:
    rows = connection.execute(
        "SELECT id, record, reason, pointer, message, arrived_ms, request_id, "
        "source_address FROM quarantine ORDER BY id"
    )
    for row in rows:
        yield {
            "id": row[0],
            "record": bytes(row[1]).decode("utf-8", "replace"),
            "reason": row[2],
            "pointer": row[3],
            "message": row[4],
            "arrived_ms": row[5],
            "request_id": row[6],
            "source_address": row[7],
        }


def stats(directory: str | Path) -> dict[str, Any]:
    """Counts of the store: accepted by record type, quarantined by reason, the file sizes."""
    connection = connect(directory, readonly=True)
    try:
        by_type = dict(
            connection.execute(
                "SELECT record_type, count(*) FROM accepted GROUP BY record_type ORDER BY 1"
            ).fetchall()
        )
        by_reason = dict(
            connection.execute(
                "SELECT reason, count(*) FROM quarantine GROUP BY reason ORDER BY 1"
            ).fetchall()
        )
    except sqlite3.Error as exc:
        raise StoreError(f"{directory}: cannot read the ingest store: {exc}") from None
    finally:
        connection.close()
    return {
        "accepted": sum(by_type.values()),
        "accepted_by_type": by_type,
        "quarantined": sum(by_reason.values()),
        "quarantined_by_reason": by_reason,
        "bytes": store_bytes(directory),
    }


def store_bytes(directory: str | Path) -> int:
    """Bytes of the database and its WAL."""
    total = 0
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(OSError):  # no WAL: the store is closed
            total += os.path.getsize(Path(directory) / f"{DATABASE}{suffix}")
    return total
