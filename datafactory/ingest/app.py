"""The ingest endpoint as an ASGI application (Starlette): ``POST /ingest``, ``GET /healthz``,
``GET /metrics``.

``POST /ingest`` takes the eliza rollout plugin's body, ``{"records": [...]}`` as
``application/json``, or JSON Lines as ``application/x-ndjson``, either one optionally
``Content-Encoding: gzip``. Every record is repaired and validated as the exporter does
(``datafactory.repair.normalise_value``, the bundled contract); the valid ones are stored,
the others quarantined verbatim with their reasons, all in the request's one share of a group
commit, and only then is the request answered:

* 200 ``{"accepted": n, "duplicates": n, "rejected": [{"index", "pointer", "message"}]}``
  when at least one record is stored (new, or already there: a retry);
* 422 (same body) when none is; 400 a body that is not the documented shape; 401 no valid
  bearer token (when a token file is configured); 408 a body not received within
  ``BODY_TIMEOUT`` seconds; 413 over the body limit (compressed or not) or over
  ``MAX_RECORDS`` records; 415 another content type or encoding; 503 the store cannot write
  (nothing of the request is acknowledged), or the server is shutting down and no commit had
  taken the request's records ``DRAIN_TIMEOUT`` seconds after it began (nothing of them is
  stored).

A record is judged on its own: one that cannot be stored as JSON (an integer beyond 64 bits,
nesting orjson cannot write, a lone surrogate) is quarantined as ``unsupported-value``, and
another record already stored under the same key is ``key-conflict``; neither costs the
request's other records.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
import uuid
import zlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from datafactory.contract import exporter_contract
from datafactory.ingest.metrics import Metrics
from datafactory.ingest.settings import IngestSettings
from datafactory.ingest.store import (
    CONFLICT,
    DUPLICATE,
    KEY_CONFLICT,
    NEW,
    Accepted,
    Quarantined,
    StoreError,
    key_conflict,
    record_key,
    store_bytes,
)
from datafactory.ingest.writer import Batch, GroupCommitter, ShuttingDown
from datafactory.records import may_hold_wide_integer
from datafactory.repair import (
    BRANCH,
    LAYER2_DPO,
    LAYER2_PPO,
    TREE,
    Reject,
    normalise_line,
    normalise_value,
)
from wiregate.exactjson import ExactNumber, parse_int
from wiregate.exactjson import dumps as exact_dumps
from wiregate.jsonl import BOM
from wiregate.record_validator import ValidatorSet

__all__ = ["BODY_TIMEOUT", "DRAIN_TIMEOUT", "create_app"]

_JSON, _NDJSON = "application/json", "application/x-ndjson"
#: The most records one request may carry (the plugin sends a run's branches and a pair).
MAX_RECORDS = 10_000
#: Bodies up to this size are judged on the event loop (about a millisecond of work).
INLINE_BODY_BYTES = 64 * 1024
#: Seconds a client has to send its whole body.
BODY_TIMEOUT = 10.0
#: Seconds the requests in flight when a graceful shutdown begins have to reach a commit: each
#: had begun, so its body has come (or it was answered 408) by then.
DRAIN_TIMEOUT = BODY_TIMEOUT


class _BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def create_app(settings: IngestSettings, shutting_down: asyncio.Event | None = None) -> Starlette:
    """The application; the server sets ``shutting_down`` when its graceful shutdown begins."""
    validators = ValidatorSet(exporter_contract(settings.contract))
    metrics = Metrics()
    state: dict[str, GroupCommitter] = {}

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        for record_type in (BRANCH, TREE, LAYER2_DPO, LAYER2_PPO):
            validators.get(record_type)  # compiled now, not by the first requests
        writer = state["writer"] = GroupCommitter(settings.store)
        drain = None if shutting_down is None else asyncio.ensure_future(
            _refuse_when_drained(shutting_down, writer)
        )  # fmt: skip
        try:
            yield
        finally:  # in-flight requests are drained by the server first; then the last commit
            if drain is not None:
                drain.cancel()
            state.pop("writer").close()

    async def ingest(request: Request) -> Response:
        started = time.perf_counter()
        try:
            response = await _ingest(request)
        except _BadRequest as exc:
            metrics.requests[str(exc.status)] += 1
            response = JSONResponse({"error": exc.message}, status_code=exc.status)
        metrics.observe(time.perf_counter() - started)
        return response

    async def _ingest(request: Request) -> Response:
        if not settings.tokens.allows(request.headers.get("authorization")):
            raise _BadRequest(401, "a valid bearer token is required")
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind not in (_JSON, _NDJSON):
            raise _BadRequest(415, f"content type {kind or 'none'!r}: send {_JSON} or {_NDJSON}")
        encoding = request.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("identity", "gzip"):
            raise _BadRequest(415, f"content encoding {encoding!r}: send gzip or identity")
        try:
            body = await asyncio.wait_for(
                _read_body(request, settings.max_body_bytes), BODY_TIMEOUT
            )
        except asyncio.TimeoutError:  # builtins.TimeoutError only from Python 3.11
            raise _BadRequest(408, f"the body was not received within {BODY_TIMEOUT:g} s") from None
        except ClientDisconnect:
            raise _BadRequest(400, "the client went away before its body was read") from None
        metrics.bytes += len(body)

        # Parsing and judging are CPU work: a large body goes to a worker thread, so /healthz
        # and other requests go on meanwhile; a plugin's body (a few records) costs less than
        # handing it over.
        def judge() -> _Judged:
            return _judge_body(body, encoding, kind, settings.max_body_bytes, validators)

        judged = judge() if len(body) <= INLINE_BODY_BYTES else await run_in_threadpool(judge)
        accepted, quarantined, rejected = judged
        metrics.repaired.update(repair for _, record in accepted for repair in record.repairs)
        outcomes: list[str] = []
        if accepted or quarantined:
            request_id = request.headers.get("x-request-id") or str(uuid.uuid4())
            address = request.client.host if request.client else ""
            batch = Batch(
                [record for _, record in accepted], quarantined, int(time.time() * 1000),
                request_id, address,
            )  # fmt: skip
            try:
                outcomes = await asyncio.wrap_future(state["writer"].submit(batch))
            except (StoreError, ShuttingDown) as exc:
                raise _BadRequest(503, str(exc)) from None
        stored, duplicates = outcomes.count(NEW), outcomes.count(DUPLICATE)
        for (index, record), outcome in zip(accepted, outcomes, strict=True):
            if outcome == CONFLICT:
                message = key_conflict(record.key)
                rejected.append({"index": index, "pointer": "/", "message": message})
                metrics.rejected[KEY_CONFLICT] += 1
        rejected.sort(key=lambda item: int(item["index"]))
        metrics.accepted += stored
        metrics.duplicates += duplicates
        for item in quarantined:
            metrics.rejected[item.reason] += 1
        status = 200 if stored or duplicates else 422
        metrics.requests[str(status)] += 1
        return JSONResponse(
            {"accepted": stored, "duplicates": duplicates, "rejected": rejected},
            status_code=status,
        )

    async def healthz(_request: Request) -> Response:
        failing = state["writer"].failing
        if failing is not None:  # the last commit failed: requests are answered 503
            return JSONResponse({"status": "failing", "error": failing}, status_code=503)
        return JSONResponse({"status": "ok"})

    async def metrics_page(_request: Request) -> Response:
        text = metrics.render(store_bytes(settings.store))
        return PlainTextResponse(text, media_type="text/plain; version=0.0.4; charset=utf-8")

    async def http_error(_request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        return JSONResponse({"error": exc.detail}, status_code=exc.status_code)

    return Starlette(
        routes=[
            Route("/ingest", ingest, methods=["POST"]),
            Route("/healthz", healthz, methods=["GET"]),
            Route("/metrics", metrics_page, methods=["GET"]),
        ],
        lifespan=lifespan,
        exception_handlers={HTTPException: http_error},
    )


async def _refuse_when_drained(shutting_down: asyncio.Event, writer: GroupCommitter) -> None:
    """``DRAIN_TIMEOUT`` seconds into a graceful shutdown, the records no commit has taken
    (the store is slow or locked) are refused: their requests are answered 503 at once, not
    cancelled by the server's own deadline with a 500 and a traceback."""
    await shutting_down.wait()
    await asyncio.sleep(DRAIN_TIMEOUT)
    writer.refuse_queued()


async def _read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _BadRequest(413, f"the body is over {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _BadRequest(413, f"the body is over {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _gunzip(body: bytes, limit: int) -> bytes:
    """The gzip body decompressed (every member, as ``cat a.gz b.gz`` makes), never more than
    ``limit`` bytes held (a bomb is 413); bytes after the last member are 400. The body is
    fed in windows: zlib copies what follows a member's end, so a body of many tiny members
    fed whole cost time quadratic in its size."""
    out: list[bytes] = []
    size = 0
    view = memoryview(body)
    position = 0
    while position < len(view):
        inflater = zlib.decompressobj(wbits=31)
        started = position
        while not inflater.eof:
            if position >= len(view):
                raise _BadRequest(400, "the gzip body is truncated")
            window = view[position : position + _GZIP_WINDOW]
            try:
                data = inflater.decompress(window, limit + 1 - size)
            except zlib.error as exc:
                if out and position == started:
                    raise _BadRequest(
                        400, "the gzip body has bytes after its last member"
                    ) from None
                raise _BadRequest(400, f"the gzip body cannot be read: {exc}") from None
            size += len(data)
            if size > limit or inflater.unconsumed_tail:
                raise _BadRequest(413, f"the body is over {limit} bytes once decompressed")
            out.append(data)
            position += len(window) - len(inflater.unused_data)
    return b"".join(out)


_GZIP_WINDOW = 64 * 1024


@dataclass(frozen=True)
class _Invalid:
    code: str
    message: str


_Record = tuple[bytes, Any]  # a record's bytes and its parsed value (or ``_Invalid``)
_Judged = tuple[list[tuple[int, Accepted]], list[Quarantined], list[dict[str, Any]]]


def _judge_body(
    body: bytes, encoding: str, kind: str, limit: int, validators: ValidatorSet
) -> _Judged:
    if encoding == "gzip":
        body = _gunzip(body, limit)
    records = _ndjson(body) if kind == _NDJSON else _document(body)
    if len(records) > MAX_RECORDS:
        raise _BadRequest(413, f"{len(records)} records: at most {MAX_RECORDS} a request")
    return _judge(records, validators)


def _ndjson(body: bytes) -> list[_Record]:
    """Each line, verbatim: parsed by the exporter's own line reader (``normalise_line``:
    invalid UTF-8 or JSON, NaN, integers beyond 64 bits are its rejections). A byte-order
    mark may open the body, as it may open an input file."""
    # Lines end at "\n" only (a "\r\n" ending is stripped with the line's blanks), as the
    # exporter reads them: splitlines() cut a record at a bare "\r" inside a string.
    return [(line, None) for line in body.removeprefix(BOM).split(b"\n") if line.strip()]


def _document(body: bytes) -> list[_Record]:
    """The records of a ``{"records": [...]}`` body, each with its own JSON text. Read by
    orjson; a body orjson refuses or reads inexactly (a lone surrogate, which JavaScript's
    JSON.stringify writes; an integer beyond 64 bits) is read by the standard library, so
    that only the records that hold such a value are refused."""
    try:
        # The standard library reads every integer exactly (one parse of its own, not two).
        document = None if may_hold_wide_integer(body) else orjson.loads(body)
    except orjson.JSONDecodeError:
        document = None
    if document is None or body.count(b'"records"') > 1:
        try:
            # A number beyond a double's range (1e400), or an integer too long for Python's
            # int (4,300 digits), stays as written: its record is refused on its own, stored
            # verbatim in the quarantine, not the whole body refused.
            tops: list[bool] = []
            document = json.loads(
                body,
                parse_constant=_no_constant,
                parse_float=_as_orjson,
                parse_int=parse_int,
                object_pairs_hook=lambda pairs: _members(pairs, tops),
            )
        except (ValueError, RecursionError) as exc:
            raise _BadRequest(400, f"the body is not valid JSON: {exc}") from None
        if tops and tops[-1]:  # the last object read is the body itself
            raise _BadRequest(400, 'the body holds "records" twice: which list is meant?')
    if not isinstance(document, dict) or not isinstance(document.get("records"), list):
        raise _BadRequest(400, 'the body is {"records": [...]}')
    records: list[_Record] = []
    for record in document["records"]:
        try:
            records.append((orjson.dumps(record, default=_beyond_double), record))
        except (TypeError, orjson.JSONEncodeError) as exc:  # 64 bits, nesting, surrogates
            beyond = isinstance(exc.__cause__, _BeyondDouble)
            why = "a number beyond the range of a 64-bit float" if beyond else exc
            text = _as_text(record)
            records.append((text, _Invalid("unsupported-value", f"cannot be stored: {why}")))
    return records


class _BeyondDouble(Exception):
    """orjson met an ``ExactNumber`` (``_as_orjson``): a number a double cannot hold."""


def _beyond_double(value: Any) -> Any:
    """orjson's ``default``: what it cannot write itself here is an ``ExactNumber``."""
    raise _BeyondDouble if isinstance(value, ExactNumber) else TypeError(type(value).__name__)


def _as_orjson(text: str) -> float | ExactNumber:
    """A number as orjson reads it (``1e-400`` is 0.0), or, beyond a double's range where
    orjson refuses it, kept as written: a record is judged the same whatever its
    neighbours in the body made the standard library read it."""
    value = float(text)
    return ExactNumber(text) if math.isinf(value) else value


def _members(pairs: list[tuple[str, Any]], tops: list[bool]) -> dict[str, Any]:
    """An object; ``tops`` records, per object read, whether it holds "records" twice."""
    tops.append(sum(1 for key, _ in pairs if key == "records") > 1)
    return dict(pairs)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _as_text(record: Any) -> bytes:
    """A record orjson cannot write, as JSON text the standard library can (numbers beyond a
    double's range as written), for the quarantine; ``b"null"`` if even that fails (deeper
    than it recurses)."""
    try:
        return exact_dumps(record).encode("utf-8")
    except (ValueError, TypeError, RecursionError):
        return b"null"


def _judge(records: list[_Record], validators: ValidatorSet) -> _Judged:
    accepted: list[tuple[int, Accepted]] = []
    quarantined: list[Quarantined] = []
    rejected: list[dict[str, Any]] = []
    for index, (raw, value) in enumerate(records):
        try:
            if isinstance(value, _Invalid):
                raise Reject(value.code, value.message)
            normalised = (
                normalise_line(raw, validators)
                if value is None
                else normalise_value(value, validators)
            )
            key = record_key(normalised.record_type, normalised.data)
        except Reject as exc:
            pointer, message = _where(exc)
            quarantined.append(Quarantined(raw, exc.code, pointer, message))
            rejected.append({"index": index, "pointer": pointer, "message": message})
            continue
        # The record's JSON as sent: its line, or its text in the body as orjson wrote it.
        accepted.append(
            (index, Accepted(key, normalised.record_type, raw, tuple(normalised.repairs)))
        )
    return accepted, quarantined, rejected


def _where(reject: Reject) -> tuple[str, str]:
    """(pointer, message) of a rejection: a contract violation's first problem; anything else
    is about the whole record."""
    return reject.where or ("/", f"{reject.code}: {reject.detail}")
