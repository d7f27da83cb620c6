"""The export run: load -> group -> rank/pair -> G3 -> validate -> write, with full accounting.

Two passes over the data, each cut into independent units that worker processes run:

1. Load (per chunk of input lines): parse, repair, validate against the contract; accepted
   records are appended to their group-stage partition (``datafactory.group``), rejected
   lines go to the rejects file with their reason.
2. Build (per partition): group by ``rollout_id``, rank, pair, G3, convert to Layer 3 and
   validate every output record.

The parent process hands out the units and writes every result in unit order, so the bytes
written do not depend on the number of workers or on which worker finished first.
"""

from __future__ import annotations

import base64
import multiprocessing
import os
import tempfile
import threading
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

import orjson

from contracts import locate
from datafactory import group
from datafactory.conversation import Conversation
from datafactory.g3 import DEFAULT_NGRAM, Contamination, EvalIndex, name_contaminations
from datafactory.gcpause import no_cyclic_gc
from datafactory.manifest import Accounting, FileFacts, build_manifest
from datafactory.normalise import BRANCH, TREE, Reject, normalise_line
from datafactory.output import AtomicOutput, sha256_file
from datafactory.pairs import (
    DpoSkip,
    conversation_of,
    dpo_from_layer2,
    ppo_from_layer2,
    to_dpo,
    to_ppo,
)
from datafactory.rank import rank_disagreements
from datafactory.records import (
    DpoRecord,
    PpoRecord,
    RolloutBranchRecord,
    TrainingRecord,
    from_wire,
    to_wire,
)
from datafactory.sources import (
    Chunk,
    InputSource,
    chunk_lines,
    expand_inputs,
    iter_chunks,
    read_line_at,
)
from wiregate.errors import UserError
from wiregate.record_validator import ValidatorSet

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "FORMATS",
    "OutputInvalidError",
    "ProgressCallback",
    "RunResult",
    "Settings",
    "run",
]

FORMATS = {"dpo": frozenset({"dpo"}), "ppo": frozenset({"ppo"}), "both": frozenset({"dpo", "ppo"})}
DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024
# Below this much input, starting worker processes costs more than it saves.
PARALLEL_MIN_BYTES = 4 * 1024 * 1024
MANIFEST = "manifest"

#: progress(phase, done, total): phase is "load" (bytes) or "build" (partitions).
ProgressCallback = Callable[[str, int, int], None]


class OutputInvalidError(Exception):
    """An output record failed the training-record contract: a bug in the exporter."""


@dataclass(frozen=True)
class Settings:
    """Everything a run needs; filled by the CLI or by the Python API."""

    inputs: tuple[str, ...]
    dpo_path: str | None = None
    ppo_path: str | None = None
    output_format: str = "both"
    rejects_path: str | None = None
    manifest_path: str | None = None
    eval_items: str | None = None
    eval_field: str | None = None
    ngram: int = DEFAULT_NGRAM
    allow_missing_g3: bool = False
    drop_contaminated: bool = False
    g3_report_path: str | None = None
    workers: int | None = None  # None: one per CPU
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    temp_dir: str | None = None
    chunk_bytes: int | None = None  # load-stage unit size; None: the default
    progress: ProgressCallback | None = None

    @property
    def formats(self) -> frozenset[str]:
        return FORMATS[self.output_format]


@dataclass
class RunResult:
    """exit_code 0: outputs written; 1: G3 violation, nothing but the G3 report written."""

    exit_code: int
    manifest: dict[str, Any] | None
    contaminated: list[Contamination] = field(default_factory=list)


# ---------------------------------------------------------------------------------------
# Worker side. The context is set in the parent before the workers fork, so they share it.


@dataclass
class _Context:
    sources: list[InputSource]
    validators: ValidatorSet
    eval_index: EvalIndex | None
    ngram: int
    formats: frozenset[str]
    max_line_bytes: int
    partitions: group.Partitioning
    spill_dir: str


_CTX: _Context | None = None


def _context() -> _Context:
    assert _CTX is not None, "worker context not set"
    return _CTX


@dataclass
class ChunkResult:
    chunk: Chunk
    lines: int
    spill: dict[int, bytes]
    rejects: list[tuple[int, str, str, bytes]]  # (line in chunk, code, detail, raw line)
    acc: Accounting


def load_chunk(chunk: Chunk) -> ChunkResult:
    """Stage 1 for one chunk: every line is blank, rejected, or spilled to its partition."""
    ctx = _context()
    source = ctx.sources[chunk.source_index]
    acc = Accounting()
    buckets: dict[int, list[bytes]] = defaultdict(list)
    rejects: list[tuple[int, str, str, bytes]] = []
    number = 0
    for offset, raw in chunk_lines(chunk, source):
        number += 1
        line = raw[:-1] if raw.endswith(b"\n") else raw
        if not line.strip():
            acc.blank += 1
            continue
        try:
            if len(line) > ctx.max_line_bytes:
                raise Reject(
                    "line-too-long",
                    f"{len(line)} bytes, more than the limit of {ctx.max_line_bytes}",
                )
            record = normalise_line(line, ctx.validators)
        except Reject as exc:
            acc.rejected[exc.code] += 1
            rejects.append((number, exc.code, exc.detail, line))
            continue
        acc.valid += 1
        acc.by_type[record.record_type] += 1
        if record.repairs:
            acc.repaired.update(record.repairs)
        if record.record_type == TREE:
            continue  # fork topology: valid input, but no training record comes from it
        body = orjson.dumps(record.data) if record.repairs else line
        entry = group.SpillEntry.for_record(record, chunk, number, offset)
        partition, data = ctx.partitions.encode(entry, body)
        buckets[partition].append(data)
    acc.read = number
    spill = {p: b"".join(parts) for p, parts in buckets.items()}
    return ChunkResult(chunk, number, spill, rejects, acc)


@dataclass
class PartitionResult:
    partition: int
    dpo: bytes = b""
    ppo: bytes = b""
    dpo_count: int = 0
    ppo_count: int = 0
    duplicates: list[tuple[group.SpillEntry, group.SpillEntry]] = field(default_factory=list)
    contaminated: list[tuple[str, str]] = field(default_factory=list)  # (rollout, n-gram)
    acc: Accounting = field(default_factory=Accounting)


class _Writer:
    """Serialises validated output records of one kind."""

    def __init__(self, validators: ValidatorSet, record_type: str) -> None:
        self.validator = validators.get(record_type)
        self.record_type = record_type
        self.parts: list[bytes] = []

    def add(self, record: TrainingRecord) -> None:
        wire = to_wire(record)
        if not self.validator.is_valid(wire):
            problem = self.validator.problems(wire)[0]
            raise OutputInvalidError(
                f"output {self.record_type} for rollout "
                f"{wire.get('provenance', {}).get('rollout_id')!r} breaks the contract at "
                f"{problem.pointer}: {problem.message}"
            )
        self.parts.append(orjson.dumps(wire) + b"\n")


def build_partition(partition: int) -> PartitionResult:
    """Stage 2 for one partition: each rollout's records -> validated Layer 3 records."""
    ctx = _context()
    result = PartitionResult(partition)
    dpo = _Writer(ctx.validators, "DpoTrainingRecord")
    ppo = _Writer(ctx.validators, "PpoTrainingRecord")
    for rollout_id, entries in group.read_partition(ctx.spill_dir, partition):
        branches, layer2, duplicates = group.split_rollout(entries)
        result.duplicates.extend(duplicates)
        typed_branches = [from_wire(RolloutBranchRecord, orjson.loads(e.body)) for e in branches]
        typed_layer2: list[DpoRecord | PpoRecord] = [
            from_wire(DpoRecord, orjson.loads(e.body))
            if e.kind == group.KIND_DPO
            else from_wire(PpoRecord, orjson.loads(e.body))
            for e in layer2
        ]
        if typed_branches:
            result.acc.rollouts += 1
            result.acc.rank_disagreements += rank_disagreements(
                typed_branches, [e.rank_given for e in branches]
            )
        if ctx.eval_index is not None:
            texts = dict.fromkeys(
                [b.task for b in typed_branches] + [r.prompt for r in typed_layer2]
            )
            shared = next((g for t in texts for g in ctx.eval_index.hits(t)), None)
            if shared is not None:
                result.contaminated.append((rollout_id, shared))
                continue  # never exported: the run stops, or the rollout is dropped
        _build_rollout(ctx, typed_branches, typed_layer2, dpo, ppo, result.acc)
    result.dpo, result.ppo = b"".join(dpo.parts), b"".join(ppo.parts)
    result.dpo_count, result.ppo_count = len(dpo.parts), len(ppo.parts)
    return result


def _build_rollout(
    ctx: _Context,
    branches: list[RolloutBranchRecord],
    layer2: list[DpoRecord | PpoRecord],
    dpo: _Writer,
    ppo: _Writer,
    acc: Accounting,
) -> None:
    if branches:
        conversations: dict[int, Conversation] = {
            b.branch_index: conversation_of(b) for b in branches
        }
        if "dpo" in ctx.formats:
            pair = to_dpo(branches, ctx.ngram, conversations)
            if isinstance(pair, DpoSkip):
                acc.dpo_skipped[pair.reason] += 1
            else:
                dpo.add(pair)
                acc.dpo_pairs += 1
        if "ppo" in ctx.formats:
            for sample in to_ppo(branches, ctx.ngram, conversations):
                ppo.add(sample)
                acc.ppo_records += 1
    for record in layer2:
        if isinstance(record, DpoRecord):
            if "dpo" in ctx.formats:
                dpo.add(dpo_from_layer2(record, ctx.ngram))
                acc.layer2_dpo += 1
        elif "ppo" in ctx.formats:
            ppo.add(ppo_from_layer2(record, ctx.ngram))
            acc.layer2_ppo += 1


# ---------------------------------------------------------------------------------------
# Parent side.

_T = TypeVar("_T")
_R = TypeVar("_R")


def _ordered(
    pool: Any, function: Callable[[_T], _R], items: Iterable[_T], window: int
) -> Iterator[_R]:
    """Results of ``function`` over ``items`` in item order, with at most ``window`` units in
    flight (``Pool.imap`` would read a whole stdin or gzip input ahead into memory)."""
    if pool is None:
        yield from map(function, items)
        return
    pending: deque[Any] = deque()
    for item in items:
        pending.append(pool.apply_async(function, (item,)))
        if len(pending) >= window:
            yield pending.popleft().get()
    while pending:
        yield pending.popleft().get()


def _worker_count(settings: Settings, sources: list[InputSource]) -> int:
    if settings.workers is not None:
        return max(1, settings.workers)
    if "fork" not in multiprocessing.get_all_start_methods():
        return 1  # workers share the parent's context by forking
    known = sum(os.path.getsize(s.path) for s in sources if not s.is_stdin)
    if known < PARALLEL_MIN_BYTES and not any(s.is_stdin for s in sources):
        return 1
    return os.cpu_count() or 1


class _InputHashes:
    """sha256 of every input file, computed in a thread while the run goes on (hashlib
    releases the GIL, so this costs no worker time); stdin is hashed from its spool."""

    def __init__(self, sources: list[InputSource]) -> None:
        self.sources = sources
        self.values: dict[int, str] = {}
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        for index, source in enumerate(self.sources):
            if not source.is_stdin:
                self.values[index] = sha256_file(source.path)

    def result(self, spool_path: str | None) -> list[str]:
        self._thread.join()
        return [
            self.values[i] if not s.is_stdin else sha256_file(spool_path or "")
            for i, s in enumerate(self.sources)
        ]


def _reject_line(display: str, number: int, code: str, detail: str, raw: bytes) -> bytes:
    record: dict[str, Any] = {"file": display, "line": number, "reason": code, "detail": detail}
    try:
        record["raw"] = raw.decode("utf-8")
    except UnicodeDecodeError:  # kept verbatim all the same, as base64
        record["raw_base64"] = base64.b64encode(raw).decode("ascii")
    return orjson.dumps(record) + b"\n"


def _open_outputs(settings: Settings) -> dict[str, AtomicOutput]:
    outputs: dict[str, AtomicOutput] = {}
    wanted = {"dpo": settings.dpo_path, "ppo": settings.ppo_path}
    try:
        for name in sorted(settings.formats):
            path = wanted[name]
            if path is None:
                raise UserError(
                    f"--output-{name} is required with --format {settings.output_format}"
                )
            outputs[name] = AtomicOutput(path)
        if settings.rejects_path:
            outputs["rejects"] = AtomicOutput(settings.rejects_path)
        if settings.manifest_path:
            outputs[MANIFEST] = AtomicOutput(settings.manifest_path)
    except UserError:
        for output in outputs.values():
            output.discard()
        raise
    return outputs


def _check_settings(settings: Settings) -> None:
    if not settings.inputs:
        raise UserError("no input: give at least one --input")
    if settings.ngram < 1:
        raise UserError(f"--ngram must be at least 1, got {settings.ngram}")
    if settings.output_format not in FORMATS:
        raise UserError(f"--format must be one of {', '.join(FORMATS)}")
    if settings.eval_items is None and not settings.allow_missing_g3:
        raise UserError(
            "no --eval-items given: the G3 contamination gate cannot run "
            "(pass --allow-missing-g3 to export without it)"
        )
    if settings.eval_items == "-":
        raise UserError("--eval-items must be a file (it is read twice), not stdin")
    if settings.temp_dir is not None and not os.path.isdir(settings.temp_dir):
        raise UserError(f"--temp-dir {settings.temp_dir}: no such directory")


def run(settings: Settings) -> RunResult:
    """One export run. Raises ``UserError`` (exit 2) and ``OutputInvalidError`` (a bug)."""
    with no_cyclic_gc():
        return _run_settings(settings)


def _run_settings(settings: Settings) -> RunResult:
    global _CTX
    _check_settings(settings)
    eval_index = (
        EvalIndex.from_file(settings.eval_items, settings.ngram, settings.eval_field)
        if settings.eval_items
        else None
    )
    sources = expand_inputs(list(settings.inputs))
    outputs = _open_outputs(settings)
    try:
        with tempfile.TemporaryDirectory(prefix="datafactory-", dir=settings.temp_dir) as tmp:
            spool_path = os.path.join(tmp, "stdin.jsonl")
            sources = [
                InputSource(s.display, spool_path, False) if s.is_stdin else s for s in sources
            ]
            _CTX = _Context(
                sources=sources,
                validators=ValidatorSet(locate(None)),
                eval_index=eval_index,
                ngram=settings.ngram,
                formats=settings.formats,
                max_line_bytes=settings.max_line_bytes,
                partitions=group.Partitioning.for_inputs(sources),
                spill_dir=tmp,
            )
            return _run(settings, _CTX, outputs, spool_path, eval_index)
    except BaseException:
        for output in outputs.values():
            output.discard()
        raise
    finally:
        _CTX = None


def _run(
    settings: Settings,
    ctx: _Context,
    outputs: dict[str, AtomicOutput],
    spool_path: str,
    eval_index: EvalIndex | None,
) -> RunResult:
    sources = ctx.sources
    hashes = _InputHashes(sources)
    workers = _worker_count(settings, sources)
    acc = Accounting()
    lines_per_source = [0] * len(sources)
    line_base: dict[int, int] = {}  # chunk index -> line number before its first line
    spill = group.SpillWriter(ctx.spill_dir, ctx.partitions)
    rejects = outputs.get("rejects")
    total_bytes = sum(os.path.getsize(s.path) for s in sources if s.display != "-")
    progress = settings.progress or (lambda phase, done, total: None)
    pool = multiprocessing.get_context("fork").Pool(workers) if workers > 1 else None
    try:
        with open(spool_path, "wb") as spool:
            chunks = iter_chunks(sources, spool, settings.chunk_bytes)
            done = 0
            for result in _ordered(pool, load_chunk, chunks, 2 * workers):
                chunk = result.chunk
                base = lines_per_source[chunk.source_index]
                line_base[chunk.index] = base
                lines_per_source[chunk.source_index] += result.lines
                acc.merge(result.acc)
                spill.write(result.spill)
                if rejects is not None:
                    display = sources[chunk.source_index].display
                    rejects.write(
                        b"".join(
                            _reject_line(display, base + n, code, detail, raw)
                            for n, code, detail, raw in result.rejects
                        ),
                        len(result.rejects),
                    )
                done += chunk.end - chunk.offset
                progress("load", done, max(done, total_bytes))
        spill.close()
        dpo, ppo = outputs.get("dpo"), outputs.get("ppo")
        contaminated: list[tuple[str, str]] = []
        duplicates: list[tuple[group.SpillEntry, group.SpillEntry]] = []
        partitions = ctx.partitions.count
        for result_p in _ordered(pool, build_partition, spill.used(), 2 * workers):
            acc.merge(result_p.acc)
            if dpo is not None:
                dpo.write(result_p.dpo, result_p.dpo_count)
            if ppo is not None:
                ppo.write(result_p.ppo, result_p.ppo_count)
            duplicates.extend(result_p.duplicates)
            contaminated.extend(result_p.contaminated)
            progress("build", result_p.partition + 1, partitions)
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
    for kept, dropped in duplicates:
        acc.rejected["duplicate-branch"] += 1
        acc.by_type[BRANCH] -= 1
        if rejects is not None:
            first = sources[kept.source_index].display
            detail = (
                f"duplicate (rollout_id, branch_index) = ({kept.rollout_id!r}, "
                f"{kept.branch_index}); first seen at {first}:{line_base[kept.chunk] + kept.line}"
            )
            source = sources[dropped.source_index]
            raw = read_line_at(source, dropped.offset).rstrip(b"\n")
            number = line_base[dropped.chunk] + dropped.line
            rejects.write(_reject_line(source.display, number, "duplicate-branch", detail, raw), 1)
    named = name_contaminations(eval_index, contaminated) if eval_index and contaminated else []
    acc.contaminated_rollouts = len(named)
    if named and not settings.drop_contaminated:
        for output in outputs.values():
            output.discard()
        return RunResult(1, None, named)
    input_facts = [
        FileFacts(s.display, digest, lines)
        for s, digest, lines in zip(
            sources, hashes.result(spool_path), lines_per_source, strict=True
        )
    ]
    g3: dict[str, Any] = {
        "status": "skipped (--allow-missing-g3)" if eval_index is None else "passed",
        "ngram": settings.ngram,
        "eval_items": None,
        "contaminated_rollouts": len(named),
        "dropped": settings.drop_contaminated and bool(named),
    }
    if eval_index is not None and settings.eval_items is not None:
        g3["eval_items"] = FileFacts(
            settings.eval_items, sha256_file(settings.eval_items), eval_index.items
        ).as_dict("items")
        if named:
            g3["status"] = "contaminated rollouts dropped"
    output_facts = {
        name: FileFacts(out.path, out.sha256, out.records)
        for name, out in outputs.items()
        if name != MANIFEST
    }
    manifest = build_manifest(acc, input_facts, output_facts, g3)
    manifest_out = outputs.get(MANIFEST)
    if manifest_out is not None:
        manifest_out.write(orjson.dumps(manifest, option=orjson.OPT_INDENT_2) + b"\n", 1)
    for output in outputs.values():  # the manifest last: it vouches for the others
        output.commit()
    return RunResult(0, manifest, named)
