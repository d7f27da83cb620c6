"""Faults: SIGKILL while many clients post, and a full disk. Every record acknowledged with a
2xx is in the store exactly once afterwards; a request answered otherwise stored nothing but
its quarantined records."""

from __future__ import annotations

import asyncio
import signal
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import httpx
import orjson

from datafactory.ingest.store import DATABASE, record_key
from tests.fulldisk import small_disk
from tests.ingest.server import Server, running, start

REPO = Path(__file__).resolve().parents[2]
PPO = orjson.loads(
    (REPO / "contracts/fixtures/rollout-wire/PpoRecord/valid/producer.json").read_bytes()
)


def _ppo(request: int, branch: int) -> dict[str, Any]:
    """A plugin PPO record of its own key (one rollout per request, a branch per record)."""
    return {
        **PPO,
        "provenance": {
            **PPO["provenance"],
            "rollout_id": f"r-{request}",
            "branch_index": branch,
            "exported_at_ms": 1750000000000 + request,
        },
    }


def _keys(store: Path) -> list[str]:
    with closing(sqlite3.connect(store / DATABASE)) as connection:
        return [key for (key,) in connection.execute("SELECT record_key FROM accepted")]


async def _flood(
    server: Server, requests: int, clients: int, per_request: int, kill_after: int | None
) -> tuple[set[str], set[str]]:
    """Post ``requests`` bodies of ``per_request`` records from ``clients`` concurrent
    clients; SIGKILL the server once ``kill_after`` were acknowledged. Returns the keys of
    the records acknowledged with 2xx and of those answered otherwise."""
    acknowledged: set[str] = set()
    refused: set[str] = set()
    pending = iter(range(requests))
    done = 0

    async def client() -> None:
        nonlocal done
        async with httpx.AsyncClient(timeout=20) as http:
            for request in pending:
                records = [_ppo(request, branch) for branch in range(per_request)]
                keys = {record_key("PpoRecord", r) for r in records}
                try:
                    response = await http.post(
                        f"{server.url}/ingest",
                        content=orjson.dumps({"records": records}),
                        headers={"Content-Type": "application/json"},
                    )
                except httpx.TransportError:
                    continue  # no answer: stored or not, nobody was told it was
                if 200 <= response.status_code < 300:
                    acknowledged.update(keys)
                    done += 1
                    if kill_after is not None and done == kill_after:
                        server.process.send_signal(signal.SIGKILL)
                else:
                    refused.update(keys)

    await asyncio.wait_for(asyncio.gather(*(client() for _ in range(clients))), timeout=120)
    return acknowledged, refused


def test_sigkill_under_50_clients_loses_nothing_acknowledged(tmp_path: Path) -> None:
    store = tmp_path / "store"
    server = start(store)
    try:
        acknowledged, refused = asyncio.run(_flood(server, 2000, 50, 10, kill_after=600))
    finally:
        server.process.kill()
        server.process.wait()
        assert server.process.stderr is not None
        server.process.stderr.close()
    assert server.process.returncode == -signal.SIGKILL
    assert len(acknowledged) >= 6000
    assert refused == set()
    # A restart recovers the store (the WAL is replayed); then every acknowledged record is
    # there exactly once (record_key is unique).
    with running(store) as again:
        assert httpx.get(f"{again.url}/healthz").status_code == 200
    keys = _keys(store)
    assert len(keys) == len(set(keys))
    assert acknowledged <= set(keys)


def test_a_full_disk_is_503_and_loses_nothing_acknowledged(tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk", "512k") as disk:
        store = disk / "store"
        with running(store) as server:
            acknowledged: set[str] = set()
            statuses: list[int] = []
            for request in range(400):
                records = [_ppo(request, branch) for branch in range(10)]
                response = httpx.post(
                    f"{server.url}/ingest", content=orjson.dumps({"records": records}),
                    headers={"Content-Type": "application/json"}, timeout=30,
                )  # fmt: skip
                statuses.append(response.status_code)
                if response.status_code == 200:
                    acknowledged.update(record_key("PpoRecord", r) for r in records)
                elif response.status_code == 503:
                    assert response.json()["error"].startswith(
                        "the store cannot write: database or disk is full"
                    )
            assert 503 in statuses and statuses[0] == 200
            assert set(statuses) == {200, 503}
            health = httpx.get(f"{server.url}/healthz")
            assert (health.status_code, health.json()) == (
                503,
                {"status": "failing", "error": "the store cannot write: database or disk is full"},
            )
            code, _ = server.stop()
        keys = _keys(store)
        assert len(keys) == len(set(keys))
        assert acknowledged <= set(keys)
        assert code == 143
