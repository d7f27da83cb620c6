"""The ingest endpoint over HTTP: the real server process on a free loopback port, talked to
with httpx and with Node's own fetch sending exactly the plugin's request."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import threading
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from datafactory import export
from datafactory.ingest.store import DATABASE, iter_quarantine
from tests.ingest.server import WITHOUT_HTTPTOOLS, Server, running
from wiregate.jsonl import BOM

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "contracts" / "fixtures" / "rollout-wire"
DEMO = REPO / "contracts" / "examples" / "rollouts.jsonl"


def _fixture(record_type: str, name: str) -> Any:
    return orjson.loads((FIXTURES / record_type / "valid" / f"{name}.json").read_bytes())


def _demo() -> list[Any]:
    """Seven valid branch records (one with producer quirks to repair) and one invalid."""
    return [orjson.loads(line) for line in DEMO.read_bytes().splitlines() if line.strip()]


def _post(server: Server, body: bytes, **headers: str) -> httpx.Response:
    return httpx.post(
        f"{server.url}/ingest",
        content=body,
        headers={"Content-Type": "application/json", **headers},
        timeout=30,
    )


def _stored(store: Path) -> list[tuple[str, str]]:
    with closing(sqlite3.connect(store / DATABASE)) as connection:
        return connection.execute(
            "SELECT record_type, repairs FROM accepted ORDER BY id"
        ).fetchall()


def _quarantined(store: Path) -> list[tuple[str, str, str]]:
    with closing(sqlite3.connect(store / DATABASE)) as connection:
        return connection.execute(
            "SELECT reason, pointer, message FROM quarantine ORDER BY id"
        ).fetchall()


INVALID_DEMO = {
    "index": 5,
    "pointer": "/objective_score",
    "message": 'RolloutBranchRecord: "1" is not one of [0, 1]',
}


def test_valid_repairable_and_invalid_records_and_a_retry(tmp_path: Path) -> None:
    store = tmp_path / "store"
    body = orjson.dumps({"records": _demo()})
    with running(store) as server:
        first = _post(server, body)
        assert (first.status_code, first.json()) == (
            200,
            {"accepted": 7, "duplicates": 0, "rejected": [INVALID_DEMO]},
        )
        again = _post(server, body)  # the plugin's retry: nothing stored twice
        assert (again.status_code, again.json()) == (
            200,
            {"accepted": 0, "duplicates": 7, "rejected": [INVALID_DEMO]},
        )
    assert [t for t, _ in _stored(store)] == ["RolloutBranchRecord"] * 7
    assert [r for _, r in _stored(store) if r] == [
        "build_result:camelcase_keys,build_result:status_alias"
    ]
    assert _quarantined(store) == [
        ("contract-violation", "/objective_score", 'RolloutBranchRecord: "1" is not one of [0, 1]')
    ]


def test_gzip_and_ndjson_bodies(tmp_path: Path) -> None:
    ppo, dpo = _fixture("PpoRecord", "producer"), _fixture("DpoRecord", "producer")
    with running(tmp_path / "store") as server:
        zipped = _post(
            server, gzip.compress(orjson.dumps({"records": [ppo]})), **{"Content-Encoding": "gzip"}
        )
        assert (zipped.status_code, zipped.json()) == (
            200, {"accepted": 1, "duplicates": 0, "rejected": []},
        )  # fmt: skip
        lines = orjson.dumps(ppo) + b"\n" + orjson.dumps(dpo) + b"\n\n{broken\n"
        ndjson = _post(server, lines, **{"Content-Type": "application/x-ndjson"})
        assert ndjson.status_code == 200
        assert ndjson.json()["accepted"] == 1 and ndjson.json()["duplicates"] == 1
        assert [(r["index"], r["pointer"]) for r in ndjson.json()["rejected"]] == [(2, "/")]
        assert ndjson.json()["rejected"][0]["message"] == (
            "invalid-json: unexpected character, expected a string key: line 1 column 2 (char 1)"
        )


@pytest.mark.parametrize(
    ("body", "headers", "status", "error"),
    [
        (b"{", {}, 400, "the body is not valid JSON: "),
        (b"[1]", {}, 400, 'the body is {"records": [...]}'),
        (b'{"records": 5}', {}, 400, 'the body is {"records": [...]}'),
        (b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + b"\xff" * 16, {"Content-Encoding": "gzip"}, 400, "the gzip body cannot be read: Error -3 while decompressing data: invalid block type"),
        (gzip.compress(b'{"records": []}')[:-9], {"Content-Encoding": "gzip"}, 400, "the gzip body is truncated"),
        (b"x" * 2048, {}, 413, "the body is over 1024 bytes"),
        (gzip.compress(b" " * 4096), {"Content-Encoding": "gzip"}, 413, "the body is over 1024 bytes once decompressed"),
        (b"{}", {"Content-Type": "text/plain"}, 415, "content type 'text/plain': send application/json or application/x-ndjson"),
        (b"{}", {"Content-Encoding": "br"}, 415, "content encoding 'br': send gzip or identity"),
    ],
)  # fmt: skip
def test_bodies_that_are_not_the_documented_shape(
    tmp_path: Path, body: bytes, headers: dict[str, str], status: int, error: str
) -> None:
    with running(tmp_path / "store", "--max-body-bytes", "1024") as server:
        response = _post(server, body, **headers)
    assert response.status_code == status
    assert response.json()["error"].startswith(error)
    assert not (tmp_path / "store" / DATABASE).exists() or _stored(tmp_path / "store") == []


def test_nothing_stored_is_422(tmp_path: Path) -> None:
    with running(tmp_path / "store") as server:
        empty = _post(server, b'{"records": []}')
        assert (empty.status_code, empty.json()) == (
            422, {"accepted": 0, "duplicates": 0, "rejected": []},
        )  # fmt: skip
        bad = _post(server, orjson.dumps({"records": [{"hello": 1}, [1]]}))
    assert bad.status_code == 422
    assert bad.json()["rejected"] == [
        {
            "index": 0,
            "pointer": "/",
            "message": "unsupported-record-type: not a rollout-wire record; expected a Layer 1 "
            "or Layer 2 record",
        },
        {"index": 1, "pointer": "/", "message": "not-an-object: a record is a JSON object, got list"},
    ]  # fmt: skip
    assert [reason for reason, _, _ in _quarantined(tmp_path / "store")] == [
        "unsupported-record-type", "not-an-object",
    ]  # fmt: skip


def test_bearer_tokens_and_sighup(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("# producers\nalpha-token\n")
    body = orjson.dumps({"records": [_fixture("PpoRecord", "producer")]})
    with running(tmp_path / "store", "--token-file", str(tokens)) as server:
        assert _post(server, body).status_code == 401
        assert _post(server, body, Authorization="Bearer wrong").status_code == 401
        assert _post(server, body, Authorization="alpha-token").status_code == 401
        assert _post(server, body, Authorization="Bearer alpha-token").status_code == 200
        tokens.write_text("beta-token\n")
        server.process.send_signal(signal.SIGHUP)
        for _ in range(100):  # the handler runs between the server's own steps
            if _post(server, body, Authorization="Bearer beta-token").status_code == 200:
                break
        assert _post(server, body, Authorization="Bearer beta-token").status_code == 200
        assert _post(server, body, Authorization="Bearer alpha-token").status_code == 401
        assert httpx.get(f"{server.url}/healthz").json() == {"status": "ok"}
        tokens.write_text("# none\n")  # a file emptied by mistake keeps the tokens in force
        server.process.send_signal(signal.SIGHUP)
        time.sleep(0.5)
        assert _post(server, body, Authorization="Bearer beta-token").status_code == 200
        code, stderr = server.stop()
    assert (code, stderr) == (
        143,
        f"datafactory serve: token file not re-read: {tokens}: holds no token (one a line; "
        "# starts a comment)\ndatafactory: terminated\n",
    )


def test_the_plugin_request_from_node_fetch(tmp_path: Path) -> None:
    """Exactly what writeToSink sends: a PPO record per branch and the DPO record."""
    node = shutil.which("node")
    assert node is not None, "node is on the machine (the TypeScript tools need it too)"
    records = tmp_path / "records.json"
    records.write_bytes(
        orjson.dumps([_fixture("PpoRecord", "producer"), _fixture("DpoRecord", "producer")])
    )
    with running(tmp_path / "store", "--token-file", str(_token(tmp_path))) as server:
        sent = subprocess.run(
            [node, str(Path(__file__).with_name("plugin_sink.mjs")), f"{server.url}/ingest",
             str(records), json.dumps({"Authorization": "Bearer t0ken"})],
            capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
        retried = subprocess.run(
            [node, str(Path(__file__).with_name("plugin_sink.mjs")), f"{server.url}/ingest",
             str(records), json.dumps({"Authorization": "Bearer t0ken"})],
            capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
    assert sent.stdout.splitlines() == ["200", '{"accepted":2,"duplicates":0,"rejected":[]}']
    assert retried.stdout.splitlines() == ["200", '{"accepted":0,"duplicates":2,"rejected":[]}']
    assert [t for t, _ in _stored(tmp_path / "store")] == ["PpoRecord", "DpoRecord"]


def _token(tmp_path: Path) -> Path:
    path = tmp_path / "token"
    path.write_text("t0ken\n")
    return path


def test_metrics_count_what_happened(tmp_path: Path) -> None:
    with running(tmp_path / "store") as server:
        _post(server, orjson.dumps({"records": _demo()}))
        _post(server, orjson.dumps({"records": _demo()}))
        _post(server, b"{", **{"Content-Type": "text/plain"})
        text = httpx.get(f"{server.url}/metrics").text
    lines = text.splitlines()
    for expected in (
        "ingest_records_accepted_total 7",
        "ingest_records_duplicate_total 7",
        'ingest_records_rejected_total{reason="contract-violation"} 2',
        'ingest_records_repaired_total{repair="build_result:camelcase_keys"} 2',
        'ingest_requests_total{code="200"} 2',
        'ingest_requests_total{code="415"} 1',
        'ingest_request_duration_seconds_bucket{le="+Inf"} 3',
        "ingest_request_duration_seconds_count 3",
    ):
        assert expected in lines, expected
    assert any(
        line.startswith("ingest_store_bytes ") and int(line.split()[1]) > 0 for line in lines
    )


def test_sigterm_drains_and_closes_cleanly(tmp_path: Path) -> None:
    with running(tmp_path / "store") as server:
        assert _post(server, orjson.dumps({"records": _demo()})).status_code == 200
        code, stderr = server.stop(signal.SIGTERM)
    assert (code, stderr) == (143, "datafactory: terminated\n")
    assert sorted(os.listdir(tmp_path / "store")) == [DATABASE]  # WAL checkpointed, closed


def test_sigterm_answers_a_request_no_commit_took_in_time_503(tmp_path: Path) -> None:
    """Another connection holds the store's write lock: one request's commit waits for it, a
    second request's records queue behind, both bodies sent after SIGTERM. The queued one is
    answered 503 once the drain time is over (it was a 500 with a traceback when uvicorn's own
    deadline cancelled it), the one being committed gets its outcome."""
    store = tmp_path / "store"
    records = _demo()
    committed_body = orjson.dumps({"records": records[:3]})
    refused_body = orjson.dumps({"records": records[3:5]})
    head = (
        b"POST /ingest HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n"
    )
    with (
        running(store) as server,
        _client(server.url) as committing,
        _client(server.url) as queued,
    ):
        locker = sqlite3.connect(store / DATABASE, isolation_level=None)
        try:
            locker.execute("BEGIN IMMEDIATE")
            for client, body in ((committing, committed_body), (queued, refused_body)):
                client.sendall(head % len(body) + body[:10])  # in flight: its body is coming
            time.sleep(0.3)
            server.process.send_signal(signal.SIGTERM)
            signalled = time.monotonic()
            time.sleep(0.5)
            committing.sendall(committed_body[10:])  # its commit waits for the lock
            time.sleep(0.5)
            queued.sendall(refused_body[10:])  # behind that commit
            refused = _read_to_close(queued)
            waited = time.monotonic() - signalled
        finally:
            locker.close()  # the lock is let go: the commit under way goes on
        committed = _read_to_close(committing)
        code, stderr = server.stop()
    assert refused.startswith(b"HTTP/1.1 503 ")
    assert refused.endswith(
        b'\r\n\r\n{"error":"the server is shutting down: nothing of the request is stored"}'
    )
    assert 9.5 < waited < 14
    assert committed.startswith(b"HTTP/1.1 200 ")
    assert committed.endswith(b'\r\n\r\n{"accepted":3,"duplicates":0,"rejected":[]}')
    assert len(_stored(store)) == 3  # the first request's records, none of the second's
    assert _quarantined(store) == []
    assert (code, stderr) == (143, "datafactory: terminated\n")
    assert sorted(os.listdir(store)) == [DATABASE]


def test_export_from_the_store_equals_export_from_the_file(tmp_path: Path) -> None:
    with running(tmp_path / "store") as server:
        assert _post(server, orjson.dumps({"records": _demo()})).status_code == 200
        # Read while the server is up: a snapshot of what is committed.
        from_store = tmp_path / "from-store"
        from_store.mkdir()
        result = export(
            [], str(from_store / "dpo.jsonl"), str(from_store / "ppo.jsonl"),
            inputs=(f"store:{tmp_path / 'store'}",), allow_missing_g3=True, workers=1,
        )  # fmt: skip
        assert result.exit_code == 0
    from_file = tmp_path / "from-file"
    from_file.mkdir()
    export(
        [], str(from_file / "dpo.jsonl"), str(from_file / "ppo.jsonl"), inputs=(str(DEMO),),
        allow_missing_g3=True, workers=1,
    )  # fmt: skip
    for name in ("dpo.jsonl", "ppo.jsonl"):
        assert (from_store / name).read_bytes() == (from_file / name).read_bytes(), name
    assert result.manifest is not None
    assert result.manifest["lines"] == {"read": 7, "accepted": 7, "rejected": 0, "blank": 0}
    assert result.manifest["repaired"] == {
        "build_result:camelcase_keys": 1, "build_result:status_alias": 1,
    }  # fmt: skip


def test_a_record_under_a_stored_key_with_other_content_is_quarantined(tmp_path: Path) -> None:
    first = _demo()[0]
    other = {**first, "final_answer": "another answer"}
    store = tmp_path / "store"
    with running(store) as server:
        response = _post(server, orjson.dumps({"records": [first, other, first]}))
    key = '["branch","demo-fizzbuzz",0]'
    assert (response.status_code, response.json()) == (
        200,
        {
            "accepted": 1,
            "duplicates": 1,
            "rejected": [
                {"index": 1, "pointer": "/", "message": f"another record with its key {key} is stored"}
            ],
        },
    )  # fmt: skip
    assert _quarantined(store) == [
        ("key-conflict", "/", f"another record with its key {key} is stored")
    ]


def test_a_retry_written_another_way_is_a_duplicate(tmp_path: Path) -> None:
    """The same record again, as NDJSON with other spacing, as a JSON body, with its keys in
    another order or an integral number written 1.0: a duplicate, not a key conflict (a line
    was compared byte for byte with the line stored)."""
    first = _demo()[0]
    line = json.dumps(first, indent=None, separators=(", ", ": ")).encode()
    reordered = orjson.dumps(dict(reversed(list(first.items()))))
    as_float = orjson.dumps(first).replace(b'"objective_score":1', b'"objective_score":1.0')
    assert as_float != orjson.dumps(first)
    ndjson = {"Content-Type": "application/x-ndjson"}
    store = tmp_path / "store"
    with running(store) as server:
        answers = [
            _post(server, orjson.dumps(first), **ndjson).json(),
            _post(server, line, **ndjson).json(),
            _post(server, orjson.dumps({"records": [first]})).json(),
            _post(server, reordered, **ndjson).json(),
            _post(server, as_float, **ndjson).json(),
        ]
    assert answers[0] == {"accepted": 1, "duplicates": 0, "rejected": []}
    assert answers[1:] == [{"accepted": 0, "duplicates": 1, "rejected": []}] * 4
    assert _quarantined(store) == []


def test_a_record_json_cannot_carry_costs_only_itself(tmp_path: Path) -> None:
    """A record nested deeper than orjson writes, one with an integer beyond 64 bits and one
    with a lone surrogate (JavaScript's JSON.stringify writes one for a cut emoji) are
    quarantined; the good record beside them is stored."""
    good = orjson.dumps(_demo()[0]).decode()
    deep = '{"x": ' + "[" * 300 + "]" * 300 + "}"
    wide = '{"rollout_id": "r", "branch_index": 18446744073709551616}'
    cut = json.dumps({**_demo()[1], "final_answer": "ok \ud83d"})
    body = f'{{"records": [{good}, {deep}, {wide}, {cut}]}}'.encode()
    store = tmp_path / "store"
    with running(store) as server:
        response = _post(server, body)
        lines = _post(
            server, f"{good}\n{wide}\n".encode(), **{"Content-Type": "application/x-ndjson"}
        )
    assert response.status_code == 200
    assert response.json() == {
        "accepted": 1,
        "duplicates": 0,
        "rejected": [
            {"index": 1, "pointer": "/", "message": "unsupported-value: cannot be stored: Recursion limit reached"},
            {"index": 2, "pointer": "/", "message": "unsupported-value: cannot be stored: Integer exceeds 64-bit range"},
            {"index": 3, "pointer": "/", "message": "unsupported-value: cannot be stored: str is not valid UTF-8: surrogates not allowed"},
        ],
    }  # fmt: skip
    assert lines.json() == {
        "accepted": 0,
        "duplicates": 1,
        "rejected": [
            {"index": 1, "pointer": "/", "message": "unsupported-value: integer 18446744073709551616 does not fit in 64 bits"}
        ],
    }  # fmt: skip
    quarantined = [reason for reason, _, _ in _quarantined(store)]
    # The NDJSON line is kept as sent; the body's record as written compactly, as every
    # stored record is (two texts)
    assert quarantined == ["unsupported-value"] * 4


def test_gzip_members_trailing_bytes_and_too_many_records(tmp_path: Path) -> None:
    ppo, dpo = _fixture("PpoRecord", "producer"), _fixture("DpoRecord", "producer")
    members = gzip.compress(orjson.dumps(ppo) + b"\n") + gzip.compress(orjson.dumps(dpo) + b"\n")
    ndjson = {"Content-Type": "application/x-ndjson", "Content-Encoding": "gzip"}
    with running(tmp_path / "store") as server:
        both = _post(server, members, **ndjson)
        trailing = _post(server, members + b"GARBAGE", **ndjson)
        many = _post(server, orjson.dumps({"records": [0] * 10_001}))
        missing = httpx.get(f"{server.url}/nothing")
        method = httpx.get(f"{server.url}/ingest")
    assert (both.status_code, both.json()) == (
        200, {"accepted": 2, "duplicates": 0, "rejected": []},
    )  # fmt: skip
    assert (trailing.status_code, trailing.json()) == (
        400, {"error": "the gzip body has bytes after its last member"},
    )  # fmt: skip
    assert (many.status_code, many.json()) == (
        413, {"error": "10001 records: at most 10000 a request"},
    )  # fmt: skip
    assert (missing.status_code, missing.json()) == (404, {"error": "Not Found"})
    assert (method.status_code, method.json()) == (405, {"error": "Method Not Allowed"})


def test_token_forms(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_bytes("  # an indented comment\r\nünï\r\n".encode())
    body = orjson.dumps({"records": [_fixture("PpoRecord", "producer")]})
    with running(tmp_path / "store", "--token-file", str(tokens)) as server:

        def status(header: bytes) -> int:
            return httpx.post(
                f"{server.url}/ingest", content=body,
                headers=[(b"Content-Type", b"application/json"), (b"Authorization", header)],
            ).status_code  # fmt: skip

        assert status("Bearer ünï".encode()) == 200  # UTF-8 on the wire, as the file
        assert status("bearer ünï".encode()) == 200  # the scheme is case-insensitive
        assert status(b"Bearer # an indented comment") == 401
        assert status(b"Bearer") == 401


def test_a_body_that_never_arrives_is_408(tmp_path: Path) -> None:
    with running(tmp_path / "store") as server:
        host, port = server.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=30) as client:
            client.sendall(
                b"POST /ingest HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: 50\r\n\r\n{"
            )
            started = time.monotonic()
            answer = client.recv(4096)
            waited = time.monotonic() - started
            while b"\r\n\r\n" not in answer or not answer.endswith(b"}"):
                more = client.recv(4096)  # the body may follow the head in a segment of its own
                if not more:
                    break
                answer += more
        code, stderr = server.stop()
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert b'{"error":"the body was not received within 10 s"}' in answer
    assert 9 < waited < 20
    assert (code, stderr) == (143, "datafactory: terminated\n")


def _client(url: str) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=30)


def _read_to_close(client: socket.socket) -> bytes:
    answer = b""
    while more := client.recv(4096):
        answer += more
    return answer


def _trickle(client: socket.socket, head: bytes, every: float) -> None:
    """The head a byte at a time, until the server closes the connection."""
    try:
        for byte in head:
            client.sendall(bytes([byte]))
            time.sleep(every)
    except OSError:  # closed under us: what is measured
        pass


@pytest.mark.parametrize("server_code", [None, WITHOUT_HTTPTOOLS], ids=["httptools", "h11"])
def test_a_head_that_never_completes_is_closed_within_10_s(
    tmp_path: Path, server_code: str | None
) -> None:
    """Slowloris: a connection that sends nothing, one that trickles a head, one that
    trickles the next head after a response. Each is closed about HEAD_TIMEOUT after it
    was opened or answered; a head sent slowly but in time is served."""
    slow_head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 200
    outcomes: dict[str, tuple[bytes, float]] = {}

    def silent(client: socket.socket) -> None:
        started = time.monotonic()
        outcomes["silent"] = (_read_to_close(client), time.monotonic() - started)

    def trickled(client: socket.socket, name: str) -> None:
        """The slow head a byte every 0.5 s, until the server closes the connection."""
        started = time.monotonic()
        sender = threading.Thread(target=_trickle, args=(client, slow_head, 0.5))
        sender.start()
        answer = _read_to_close(client)
        outcomes[name] = (answer, time.monotonic() - started)
        sender.join()

    def trickling(client: socket.socket) -> None:
        trickled(client, "trickling")

    def kept_alive(client: socket.socket) -> None:
        client.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        first = b""
        while not first.endswith(b'{"status":"ok"}'):  # its body may come in a segment of its own
            first += client.recv(4096)
        assert first.startswith(b"HTTP/1.1 200 "), first
        trickled(client, "kept alive")  # timed from the response

    def answered_early(client: socket.socket, name: str, every: float) -> None:
        """A 401 before the body: the rest of it, idle or trickled, held the connection."""
        body = b"x" * 100
        client.sendall(
            b"POST /ingest HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body)
        )
        first = b""
        while not first.endswith(b"}"):
            first += client.recv(4096)
        assert first.startswith(b"HTTP/1.1 401 "), first
        started = time.monotonic()
        sender = threading.Thread(target=_trickle, args=(client, body, every))
        sender.start()
        outcomes[name] = (_read_to_close(client), time.monotonic() - started)
        sender.join()

    def body_then_idle(client: socket.socket) -> None:
        answered_early(client, "body then idle", 0)

    def body_trickled(client: socket.socket) -> None:
        answered_early(client, "body trickled", 0.3)  # 30 s for the whole body

    def slow_in_time(client: socket.socket) -> None:
        for part in (b"GET /heal", b"thz HTTP/1.1\r\n", b"Host: x\r\n", b"\r\n"):
            client.sendall(part)
            time.sleep(2)  # 6 s in all, within the 10 s
        outcomes["slow in time"] = (client.recv(4096), 0.0)

    timed_out = b'{"error":"the request head was not received within 10 s"}'
    jobs = (silent, trickling, kept_alive, body_then_idle, body_trickled, slow_in_time)
    token = _token(tmp_path)
    with running(tmp_path / "store", "--token-file", str(token), code=server_code) as server:
        clients = {job: _client(server.url) for job in jobs}
        threads = [threading.Thread(target=job, args=(c,)) for job, c in clients.items()]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        for client in clients.values():
            client.close()
        healthy = httpx.get(f"{server.url}/healthz", timeout=30).status_code
        code, stderr = server.stop()
    assert outcomes["silent"][0] == b""
    for name in ("trickling", "kept alive"):
        answer, _ = outcomes[name]
        assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), (name, answer)
        assert answer.endswith(b"\r\n\r\n" + timed_out), (name, answer)
    assert outcomes["body then idle"][0] == outcomes["body trickled"][0] == b""
    closed = ("silent", "trickling", "kept alive", "body then idle", "body trickled")
    assert all(9 < outcomes[name][1] < 15 for name in closed), outcomes
    assert outcomes["slow in time"][0].startswith(b"HTTP/1.1 200 ")
    assert healthy == 200
    assert (code, stderr) == (143, "datafactory: terminated\n")


def test_a_number_beyond_a_double_is_quarantined_as_written(tmp_path: Path) -> None:
    """1e400 in a {"records": [...]} body: rejected as the exporter rejects it, and kept
    verbatim (it was a contract violation, "got inf", stored with the number as null)."""
    record = (
        orjson.dumps(_demo()[0]).decode().replace('"temperature":', '"huge":1e400,"temperature":')
    )
    store = tmp_path / "store"
    with running(store) as server:
        response = _post(server, f'{{"records": [{record}]}}'.encode())
    assert response.json()["rejected"] == [
        {
            "index": 0,
            "pointer": "/",
            "message": "unsupported-value: cannot be stored: a number beyond the range of a "
            "64-bit float",
        }
    ]
    (kept,) = iter_quarantine(store)
    assert '"huge":1e400' in kept["record"].replace(" ", "")


def test_a_byte_order_mark_may_open_an_ndjson_body(tmp_path: Path) -> None:
    """As it may open an input file (the first record was quarantined as invalid JSON)."""
    body = BOM + b"".join(orjson.dumps(record) + b"\n" for record in _demo()[:2])
    with running(tmp_path / "store") as server:
        response = _post(server, body, **{"Content-Type": "application/x-ndjson"})
    assert response.json() == {"accepted": 2, "duplicates": 0, "rejected": []}


def test_a_record_is_judged_the_same_whatever_its_neighbours(tmp_path: Path) -> None:
    """A 19-digit run elsewhere in the body makes the standard library read it: 1e-400 was
    then kept exact and refused, where alone it reads as 0.0, as the exporter reads it."""
    record = (
        orjson.dumps(_demo()[0]).decode().replace('"temperature":', '"tiny":1e-400,"temperature":')
    )
    store = tmp_path / "store"
    with running(store) as server:
        alone = _post(server, f'{{"records": [{record}]}}'.encode())
        beside = _post(
            server, f'{{"records": [{record}, {{"n": "1234567890123456789"}}]}}'.encode()
        )
    assert alone.json() == {"accepted": 1, "duplicates": 0, "rejected": []}
    assert beside.json()["duplicates"] == 1  # the same record, judged the same


def test_a_record_costs_only_itself_and_the_body_says_which_list_it_means(tmp_path: Path) -> None:
    """An integer of 4,301 digits in one record refused the whole body (400, the others
    neither stored nor quarantined); "records" written twice kept the last list silently; a
    bare carriage return between the tokens of a line (JSON whitespace) cut it in two."""
    first, second = (orjson.dumps(record).decode() for record in _demo()[:2])
    wide = '{"n": ' + "9" * 4301 + "}"
    store = tmp_path / "store"
    with running(store) as server:
        mixed = _post(server, f'{{"records": [{first}, {second}, {wide}]}}'.encode())
        twice = _post(server, f'{{"records": [{first}], "records": [{second}]}}'.encode())
        third, fourth = (orjson.dumps(record).decode() for record in _demo()[2:4])
        spaced = third.replace(',"', ',\r"', 1)
        ndjson = _post(
            server, f"{spaced}\r\n{fourth}\n".encode(), **{"Content-Type": "application/x-ndjson"}
        )
    assert (mixed.status_code, mixed.json()) == (
        200,
        {
            "accepted": 2,
            "duplicates": 0,
            "rejected": [
                {
                    "index": 2,
                    "pointer": "/",
                    "message": "unsupported-value: cannot be stored: a number beyond the range "
                    "of a 64-bit float",
                }
            ],
        },
    )
    assert (twice.status_code, twice.json()) == (
        400,
        {"error": 'the body holds "records" twice: which list is meant?'},
    )
    assert ndjson.json() == {"accepted": 2, "duplicates": 0, "rejected": []}
    (kept,) = iter_quarantine(store)
    assert kept["record"].replace(" ", "") == wide.replace(" ", "")


def test_gzip_members_are_read_in_windows() -> None:
    """A body of many members: each member's end made zlib copy the rest of the body, so
    100,000 empty members (2 MB) took seconds (quadratic). Members that span the windows
    the body is now fed in read the same."""
    import gzip
    import os

    from datafactory.ingest.app import _BadRequest, _gunzip

    big = os.urandom(200_000)  # incompressible: its member spans several windows
    body = gzip.compress(b"a") + gzip.compress(big) + gzip.compress(b"") * 100_000
    body += gzip.compress(b"z")
    assert _gunzip(body, 1 << 20) == b"a" + big + b"z"
    with pytest.raises(_BadRequest) as caught:
        _gunzip(body + b"\x00\x01", 1 << 20)
    assert (caught.value.status, caught.value.message) == (
        400,
        "the gzip body has bytes after its last member",
    )
    with pytest.raises(_BadRequest) as caught:
        _gunzip(gzip.compress(big)[:-10], 1 << 20)
    assert (caught.value.status, caught.value.message) == (400, "the gzip body is truncated")
    with pytest.raises(_BadRequest) as caught:
        _gunzip(body, 100_000)
    assert caught.value.status == 413
