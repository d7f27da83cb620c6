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
  bearer token (when a token file is configured); 413 over the body limit (compressed or
  not); 415 another content type or encoding; 503 the store cannot write (nothing of the
  request is acknowledged).
"""

from __future__ import annotations

import asyncio
import time
import uuid
import zlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from datafactory.contract import exporter_contract
from datafactory.ingest.metrics import Metrics
from datafactory.ingest.settings import IngestSettings
from datafactory.ingest.store import Accepted, Quarantined, StoreError, record_key, store_bytes
from datafactory.ingest.writer import Batch, GroupCommitter
from datafactory.repair import Reject, normalise_value
from wiregate.record_validator import ValidatorSet

__all__ = ["create_app"]

_JSON, _NDJSON = "application/json", "application/x-ndjson"


class _BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def create_app(settings: IngestSettings) -> Starlette:
    validators = ValidatorSet(exporter_contract(settings.contract))
    metrics = Metrics()
    state: dict[str, GroupCommitter] = {}

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        state["writer"] = GroupCommitter(settings.store)
        try:
            yield
        finally:  # in-flight requests are drained by the server first; then the last commit
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
        body = await _read_body(request, settings.max_body_bytes)
        metrics.bytes += len(body)
        if encoding == "gzip":
            body = _gunzip(body, settings.max_body_bytes)
        records = _records(body, kind)
        arrived = int(time.time() * 1000)
        accepted, quarantined, rejected = _judge(records, validators, metrics)
        if accepted or quarantined:
            request_id = request.headers.get("x-request-id") or str(uuid.uuid4())
            address = request.client.host if request.client else ""
            batch = Batch(accepted, quarantined, arrived, request_id, address)
            try:
                new = await asyncio.wrap_future(state["writer"].submit(batch))
            except StoreError as exc:
                raise _BadRequest(503, str(exc)) from None
        else:
            new = []
        stored, duplicates = sum(new), len(new) - sum(new)
        metrics.accepted += stored
        metrics.duplicates += duplicates
        for item in quarantined:
            metrics.rejected[item.reason] += 1
        status = 200 if new else 422
        metrics.requests[str(status)] += 1
        return JSONResponse(
            {"accepted": stored, "duplicates": duplicates, "rejected": rejected},
            status_code=status,
        )

    async def healthz(_request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def metrics_page(_request: Request) -> Response:
        text = metrics.render(store_bytes(settings.store))
        return PlainTextResponse(text, media_type="text/plain; version=0.0.4; charset=utf-8")

    return Starlette(
        routes=[
            Route("/ingest", ingest, methods=["POST"]),
            Route("/healthz", healthz, methods=["GET"]),
            Route("/metrics", metrics_page, methods=["GET"]),
        ],
        lifespan=lifespan,
    )


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
    """The gzip body decompressed, never more than ``limit`` bytes held (a bomb is 413)."""
    inflater = zlib.decompressobj(wbits=31)
    try:
        data = inflater.decompress(body, limit + 1)
    except zlib.error as exc:
        raise _BadRequest(400, f"the gzip body cannot be read: {exc}") from None
    if len(data) > limit or inflater.unconsumed_tail:
        raise _BadRequest(413, f"the body is over {limit} bytes once decompressed")
    if not inflater.eof:
        raise _BadRequest(400, "the gzip body is truncated")
    return data


_Record = tuple[bytes, Any]  # the record's own bytes (verbatim) and its value, or an error


def _records(body: bytes, kind: str) -> list[_Record]:
    if kind == _NDJSON:
        out: list[_Record] = []
        for line in body.splitlines():
            if not line.strip():
                continue
            try:
                out.append((line, orjson.loads(line)))
            except orjson.JSONDecodeError as exc:
                out.append((line, _Invalid(f"not valid JSON: {exc}")))
        return out
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise _BadRequest(400, f"the body is not valid JSON: {exc}") from None
    if not isinstance(document, dict) or not isinstance(document.get("records"), list):
        raise _BadRequest(400, 'the body is {"records": [...]}')
    return [(orjson.dumps(record), record) for record in document["records"]]


@dataclass(frozen=True)
class _Invalid:
    message: str


def _judge(
    records: list[_Record], validators: ValidatorSet, metrics: Metrics
) -> tuple[list[Accepted], list[Quarantined], list[dict[str, Any]]]:
    accepted: list[Accepted] = []
    quarantined: list[Quarantined] = []
    rejected: list[dict[str, Any]] = []
    for index, (raw, value) in enumerate(records):
        try:
            if isinstance(value, _Invalid):
                raise Reject("invalid-json", value.message)
            normalised = normalise_value(value, validators)
            key = record_key(normalised.record_type, normalised.data)
        except Reject as exc:
            pointer, message = _where(exc)
            quarantined.append(Quarantined(raw, exc.code, pointer, message))
            rejected.append({"index": index, "pointer": pointer, "message": message})
            continue
        metrics.repaired.update(normalised.repairs)
        accepted.append(
            Accepted(key, normalised.record_type, orjson.dumps(value), tuple(normalised.repairs))
        )
    return accepted, quarantined, rejected


def _where(reject: Reject) -> tuple[str, str]:
    """(pointer, message) of a rejection: a contract violation's detail is ``TYPE /pointer:
    message``; anything else is about the whole record."""
    if reject.code == "contract-violation":
        record_type, _, rest = reject.detail.partition(" ")
        pointer, _, message = rest.partition(": ")
        return pointer, f"{record_type}: {message}"
    return "/", f"{reject.code}: {reject.detail}"
