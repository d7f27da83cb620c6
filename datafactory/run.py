"""The export engine: records or input files and ``Settings`` in, a ``RunResult`` out.

load (``stages.load``, per chunk, in the workers) -> group (``stages.group``: the spill)
-> G3 candidates confirmed -> build (``stages.build``, per partition, in the workers) ->
outputs written in unit order -> manifest. The parent hands out the units and writes every
result in unit order, and the build stage sorts each partition, so the bytes written do not
depend on the number of workers or on which worker finished first.
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, cast

import orjson

from datafactory import interrupts
from datafactory.card import contract_version, dataset_card
from datafactory.contamination import Contamination, EvalIndex
from datafactory.contract import exporter_contract
from datafactory.gcpause import no_cyclic_gc
from datafactory.manifest import (
    Accounting,
    FileFacts,
    build_manifest,
    file_facts,
    g3_facts,
)
from datafactory.outputs import (
    CARD,
    G3_REPORT,
    MANIFEST,
    AtomicOutput,
    append_lines,
    commit_all,
    g3_report,
    reject_line,
    workspace,
)
from datafactory.parallel import WorkerPool, ordered
from datafactory.repair import BRANCH, LAYER2_DPO, LAYER2_PPO, SFT
from datafactory.settings import Settings, check_settings, worker_count
from datafactory.sources import InputHashes, Watched, expand_inputs, iter_chunks, records_source
from datafactory.stages import group
from datafactory.stages.build import build_partition
from datafactory.stages.load import LoadContext, Worker, load_chunk
from datafactory.targets.catalogue import read_tools
from datafactory.targets.trl import ToolArguments, TrlOptions
from wiregate.errors import UserError
from wiregate.record_validator import ValidatorSet

__all__ = ["RECORDS_NAME", "RunResult", "run"]

#: How the manifest and the rejects file name records given in memory (stdin is "-").
RECORDS_NAME = "<records>"


@dataclass
class RunResult:
    """exit_code 0: outputs written; 1: G3 violation, nothing but the G3 report written."""

    exit_code: int
    manifest: dict[str, Any] | None
    contaminated: list[Contamination] = field(default_factory=list)


def run(settings: Settings, records: Iterable[Any] | None = None) -> RunResult:
    """One export run of ``settings.inputs``, then ``records`` (dicts or generated records,
    named ``<records>``) when given. Raises ``SettingError`` naming a field and ``UserError``
    (exit 2), ``OutputInvalidError`` (a bug); at SIGINT ``KeyboardInterrupt``, at SIGTERM
    ``interrupts.Terminated``, nothing left behind (``datafactory.interrupts``)."""
    with interrupts.handled(), no_cyclic_gc():
        check_settings(settings, records=records is not None)
        validators = ValidatorSet(exporter_contract(settings.contract))
        watched = Watched()
        eval_index = None
        eval_digest = hashlib.sha256()  # of the eval file, as its first reading reads it
        if settings.eval_items:
            watched.add(settings.eval_items, settings.eval_items)
            eval_index = EvalIndex.from_file(
                settings.eval_items, settings.ngram, settings.eval_field,
                settings.eval_id_field, settings.max_line_bytes, eval_digest,
            )  # fmt: skip
        sources = expand_inputs(list(settings.inputs))
        if records is not None:
            sources.append(records_source(RECORDS_NAME, records))
        for source in sources:
            if not source.is_stream:
                watched.add(source.display, source.path)
        trl = None
        if settings.target == "trl":
            tools = read_tools(settings.tools_path) if settings.tools_path else None
            trl = TrlOptions(
                tool_arguments=cast(ToolArguments, settings.tool_arguments), tools=tools
            )
        with workspace(settings) as (outputs, spill_dir):
            ctx = LoadContext(
                sources, validators, eval_index, settings.ngram, settings.formats,
                settings.max_line_bytes, group.Partitioning.for_inputs(sources), spill_dir,
                trl,
            )  # fmt: skip
            return _export(settings, ctx, outputs, watched, eval_digest.hexdigest())


@dataclass
class _Loaded:
    acc: Accounting = field(default_factory=Accounting)
    lines: list[int] = field(default_factory=list)  # per source
    line_base: dict[int, int] = field(default_factory=dict)  # chunk -> lines before it
    used: set[int] = field(default_factory=set)  # partitions spilled to
    candidates: dict[int, set[str]] = field(default_factory=dict)  # partition -> G3 candidates
    streams: dict[int, Any] = field(default_factory=dict)  # source -> sha256 of a stream


def _export(
    settings: Settings,
    ctx: LoadContext,
    outputs: dict[str, AtomicOutput],
    watched: Watched,
    eval_digest: str,
) -> RunResult:
    workers = worker_count(settings, ctx.sources)
    pool: WorkerPool | None = None
    local = Worker(ctx)
    files = group.SpillFiles(ctx.spill_dir)
    try:
        # The workers fork before any thread starts (a fork copies only the calling thread),
        # all of them or none: a signal waits until the pool is known, to be closed.
        with interrupts.deferred():
            pool = WorkerPool(workers, Worker, (ctx,)) if workers > 1 else None
        hashes = InputHashes(ctx.sources, watched)
        loaded = _load(settings, ctx, pool, local, outputs)
        _check_rollouts(settings, loaded.acc)
        local.close()
        built = _build(settings, ctx, pool, local, loaded, outputs)
        group.reject_duplicates(
            built.duplicates,
            ctx.sources,
            loaded.line_base,
            loaded.acc,
            outputs.get("rejects"),
            files,
        )
    finally:
        with interrupts.deferred():  # the workers are gone before their spill files go
            local.close()
            files.close()
            if pool is not None:
                pool.close()
    digests = hashes.result(loaded.streams)
    return _finish(settings, ctx, outputs, watched, loaded, built, digests, eval_digest)


def _load(
    settings: Settings,
    ctx: LoadContext,
    pool: WorkerPool | None,
    local: Worker,
    outputs: dict[str, AtomicOutput],
) -> _Loaded:
    loaded = _Loaded(lines=[0] * len(ctx.sources))
    rejects = outputs.get("rejects")
    total = sum(os.path.getsize(s.path) for s in ctx.sources if not s.is_stream)
    chunks = iter_chunks(ctx.sources, settings.chunk_bytes, ctx.max_line_bytes, loaded.streams)
    done = 0
    for result in ordered(pool, local, load_chunk, chunks, 2 * _size(pool)):
        chunk = result.chunk
        base = loaded.line_base[chunk.index] = loaded.lines[chunk.source_index]
        loaded.lines[chunk.source_index] += result.lines
        loaded.acc.merge(result.acc)
        loaded.used |= result.partitions
        for partition, found in result.g3_candidates.items():
            loaded.candidates.setdefault(partition, set()).update(found)
        if rejects is not None:
            display = ctx.sources[chunk.source_index].display
            lines = [
                reject_line(display, base + n, code, detail, raw, length)
                for n, code, detail, raw, length in result.rejects
            ]
            rejects.write(b"".join(lines), len(lines))
        done += chunk.end - chunk.offset
        if settings.progress:
            settings.progress("load", done, max(done, total))
    return loaded


#: The input record types each target makes its records from.
_USED_TYPES = {"layer3": (BRANCH, LAYER2_DPO, LAYER2_PPO), "trl": (BRANCH, SFT)}


def _check_rollouts(settings: Settings, acc: Accounting) -> None:
    """A run whose every line (blank ones aside) is a record of a type the target does not
    use, or of no rollout type at all, writes nothing: it stops with what the lines were
    (exit 2), not with empty outputs. A line rejected for another reason (bad JSON, a broken
    contract) may have been a rollout: it goes to the rejects file as usual. Inputs without
    a line that is not blank are an input error too: a producer that died before writing
    must not become an empty training set."""
    if any(acc.by_type[name] for name in _USED_TYPES[settings.target]):
        return
    if acc.read == acc.blank:
        found = f"{acc.blank} blank lines" if acc.blank else "they are empty"
        raise UserError(f"no records in the inputs: {found}")
    kinds: Counter[str] = Counter({k: n for k, n in acc.by_type.items() if n})
    kinds.update(acc.unsupported)
    if not kinds or sum(kinds.values()) != acc.read - acc.blank:
        return
    found = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items(), key=_most_first))
    wanted = "rollout branch records" if settings.target == "trl" else "rollout records"
    raise UserError(f"no {wanted} in the inputs: {found}")


def _most_first(item: tuple[str, int]) -> tuple[int, str]:
    return -item[1], item[0]


@dataclass
class _Built:
    contaminated: list[Contamination] = field(default_factory=list)
    duplicates: list[tuple[int, group.SpillEntry, group.SpillEntry]] = field(default_factory=list)


def _build(
    settings: Settings,
    ctx: LoadContext,
    pool: WorkerPool | None,
    local: Worker,
    loaded: _Loaded,
    outputs: dict[str, AtomicOutput],
) -> _Built:
    # Every candidate confirmed exactly (a second pass over the eval items) before any
    # rollout is built or left out; each partition gets its own.
    index, candidates = ctx.eval_index, loaded.candidates
    confirmed = index.confirm(set().union(*candidates.values())) if index else {}
    work = [
        (p, {c: confirmed[c] for c in candidates.get(p, ()) if c in confirmed})
        for p in sorted(loaded.used)
    ]
    built = _Built()
    for result in ordered(pool, local, build_partition, work, 2 * _size(pool)):
        loaded.acc.merge(result.acc)
        for name, (path, lines) in result.outputs.items():
            append_lines(outputs.get(name), path, lines)
        built.duplicates += [(result.partition, k, d) for k, d in result.duplicates]
        built.contaminated += result.contaminated
        if settings.progress:
            settings.progress("build", result.partition + 1, ctx.partitions.count)
    return built


def _finish(
    settings: Settings,
    ctx: LoadContext,
    outputs: dict[str, AtomicOutput],
    watched: Watched,
    loaded: _Loaded,
    built: _Built,
    digests: list[str],
    eval_digest: str,
) -> RunResult:
    named = built.contaminated
    loaded.acc.contaminated_rollouts = len(named)
    report = outputs.get(G3_REPORT)
    if report is not None:
        report.write(g3_report(named), len(named))
    watched.check()  # every input and the eval file: the bytes hashed are the bytes read
    if named and not settings.drop_contaminated:  # nothing written but the G3 report
        for name, output in outputs.items():
            if name != G3_REPORT:
                output.discard()
        _commit([report] if report is not None else [], exit_code=1)
        return RunResult(1, None, named)
    index, eval_path = ctx.eval_index, settings.eval_items
    eval_facts = FileFacts(eval_path, eval_digest, index.items) if index and eval_path else None
    g3 = g3_facts(settings.ngram, eval_facts, len(named), settings.drop_contaminated)
    inputs = [s.display for s in ctx.sources]
    written = {n: FileFacts(o.path, o.sha256, o.records) for n, o in outputs.items()}
    written.pop(MANIFEST, None)
    written.pop(CARD, None)
    input_facts = file_facts(inputs, digests, loaded.lines)
    target = _target_facts(settings) if settings.target == "trl" else None
    manifest = build_manifest(loaded.acc, input_facts, written, g3, target)
    card = outputs.get(CARD)
    if card is not None:
        contract = exporter_contract(settings.contract)
        card.write(dataset_card(settings, manifest, card.path, contract_version(contract)), 0)
    manifest_out = outputs.get(MANIFEST)
    if manifest_out is not None:
        manifest_out.write(orjson.dumps(manifest, option=orjson.OPT_INDENT_2) + b"\n", 1)
    # The manifest last: it vouches for the others.
    _commit(sorted(outputs.values(), key=lambda output: output is manifest_out))
    return RunResult(0, manifest, named)


def _target_facts(settings: Settings) -> dict[str, Any]:
    """The manifest's ``target`` facts of a trl run."""
    return {
        "name": settings.target,
        "format": settings.output_format,
        "tool_arguments": settings.tool_arguments,
        "tools": settings.tools_path,
    }


def _commit(outputs: list[AtomicOutput], exit_code: int = 0) -> None:
    """Put the outputs in place, in one step a signal does not cut; once they are, a signal
    changes nothing."""
    with interrupts.deferred():
        commit_all(outputs)
        interrupts.finished(exit_code)


def _size(pool: WorkerPool | None) -> int:
    return pool.size if pool is not None else 1
