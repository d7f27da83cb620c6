"""The export run: load -> group -> rank/pair -> G3 -> validate -> write, with full accounting.

Two passes over the data, each cut into independent units that worker processes run:

1. Load (per chunk of input lines): parse, repair, validate against the contract, and
   convert each record on its own: a branch's conversation and PPO record, a Layer 2
   record's Layer 3 record (each output record validated). What the build stage needs is
   appended to the record's group-stage partition (``datafactory.group``); rejected lines go
   to the rejects file with their reason.
2. Build (per partition): group by ``rollout_id``, rank, pick the DPO pair, G3, and emit the
   rollout's records (DPO records are made and validated here).

The exporter works on the records' JSON (the generated TypedDicts of ``datafactory.records``)
rather than on the generated dataclasses: building those (about 30 objects per branch
record, there and back) cost more than all the rest of a record's conversion.

The parent process hands out the units and writes every result in unit order, and the build
stage sorts each partition, so the bytes written do not depend on the number of workers or
on which worker finished first.
"""

from __future__ import annotations

import base64
import codecs
import hashlib
import multiprocessing
import os
import tempfile
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import orjson

from datafactory import group, interrupts
from datafactory.contract import exporter_contract
from datafactory.g3 import (
    DEFAULT_NGRAM,
    Contamination,
    EvalIndex,
    check_ngram,
    first_confirmed,
    task_words,
    word_grams,
)
from datafactory.gcpause import no_cyclic_gc
from datafactory.manifest import (
    DUPLICATE_BRANCH,
    DUPLICATE_PAIR,
    Accounting,
    FileFacts,
    build_manifest,
)
from datafactory.normalise import (
    BRANCH,
    INT64_RANGE,
    LAYER2_DPO,
    LAYER2_PPO,
    TREE,
    Normalised,
    Reject,
    normalise_line,
)
from datafactory.output import AtomicOutput, commit_all, sha256_file
from datafactory.pairs import (
    choose_pair,
    conversation_of,
    dpo_from_layer2,
    dpo_record,
    ppo_from_layer2,
    ppo_record,
    provenance,
    task_hashes,
)
from datafactory.parallel import WorkerPool, ordered
from datafactory.rank import BranchScore, rank_disagreements
from datafactory.records import BranchJson, DpoRecordJson, PpoRecordJson
from datafactory.sources import (
    Chunk,
    InputSource,
    chunk_lines,
    expand_inputs,
    iter_chunks,
    read_line_at,
)
from wiregate.errors import UserError
from wiregate.jsonl import DEFAULT_MAX_LINE_BYTES, too_long
from wiregate.record_validator import RecordValidator, ValidatorSet

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "FORMATS",
    "OPTION_NAMES",
    "OutputInvalidError",
    "ProgressCallback",
    "RunResult",
    "SettingNames",
    "Settings",
    "check_settings",
    "run",
]

#: The ranges of the numeric settings (an n-gram longer than any text is still a range).
MAX_NGRAM = 10_000
MAX_LINE_BYTES = 1 << 30
FORMATS = {"dpo": frozenset({"dpo"}), "ppo": frozenset({"ppo"}), "both": frozenset({"dpo", "ppo"})}
# Below this much input, starting worker processes costs more than it saves.
PARALLEL_MIN_BYTES = 4 * 1024 * 1024
MANIFEST = "manifest"
G3_REPORT = "g3_report"

#: progress(phase, done, total): phase is "load" (bytes) or "build" (partitions).
ProgressCallback = Callable[[str, int, int], None]


class OutputInvalidError(Exception):
    """An output record failed the training-record contract: a bug in the exporter."""


@dataclass(frozen=True)
class Settings:
    """Everything a run needs; filled by the CLI or by the Python API."""

    inputs: tuple[str | InputSource, ...]  # an InputSource: a file shown by another name
    dpo_path: str | None = None
    ppo_path: str | None = None
    output_format: str = "both"
    rejects_path: str | None = None
    manifest_path: str | None = None
    eval_items: str | None = None
    eval_field: str | None = None
    eval_id_field: str | None = None
    ngram: int = DEFAULT_NGRAM
    allow_missing_g3: bool = False
    drop_contaminated: bool = False
    g3_report_path: str | None = None
    workers: int | None = None  # None: one per CPU
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    temp_dir: str | None = None
    chunk_bytes: int | None = None  # load-stage unit size; None: the default
    progress: ProgressCallback | None = None
    contract: str | None = None  # a contract directory; None: the bundled one

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
    check: _OutputCheck
    tasks: _RecentTasks


_CTX: _Context | None = None


def _context() -> _Context:
    assert _CTX is not None, "worker context not set"
    return _CTX


class _RecentTasks:
    """What the load stage works out once per task (the branches of a rollout repeat theirs,
    close together in the input): its ``task_hashes`` and its G3 candidates (the letters of
    the first n-grams whose fingerprints an eval item holds, ``EvalIndex.candidates``, joined
    with newlines; confirmed between the stages). Each process keeps the recent tasks only,
    bounded in number and in length, so neither many nor long tasks make it grow."""

    MAX_TASKS = 4096
    MAX_CHARS = 4 * 1024 * 1024

    def __init__(self, ngram: int, eval_index: EvalIndex | None) -> None:
        self.ngram = ngram
        self.eval_index = eval_index
        self._facts: dict[str, tuple[tuple[str, str], str]] = {}
        self._chars = 0

    def facts(self, task: str) -> tuple[tuple[str, str], str]:
        """(task_hashes, G3 candidates or "") of ``task``."""
        known = self._facts.get(task)
        if known is not None:
            return known
        words, pieces = task_words(task)
        grams = word_grams(words, self.ngram)
        hit = "\n".join(self.eval_index.candidates(words, grams, pieces)) if self.eval_index else ""
        known = (task_hashes(task, self.ngram, grams), hit)
        if len(self._facts) >= self.MAX_TASKS or self._chars + len(task) > self.MAX_CHARS:
            self._facts.clear()
            self._chars = 0
        self._facts[task] = known
        self._chars += len(task)
        return known


class _OutputCheck:
    """Validates each output record against the training-record contract, then serialises it:
    a record that fails is a bug in the exporter, and stops the run."""

    def __init__(self, validators: ValidatorSet) -> None:
        self.dpo = validators.get("DpoTrainingRecord")
        self.ppo = validators.get("PpoTrainingRecord")

    def line(
        self, validator: RecordValidator, record: Mapping[str, Any], messages: bytes = b""
    ) -> bytes:
        """The record's output line; ``messages``: the JSON of its ``messages``, when the
        caller has it already (the line is the same bytes either way)."""
        if not validator.is_valid(record):
            problem = validator.problems(record)[0]
            raise OutputInvalidError(
                f"output {validator.name} for rollout "
                f"{record.get('provenance', {}).get('rollout_id')!r} breaks the contract at "
                f"{problem.pointer}: {problem.message}"
            )
        if messages:  # the same bytes, without serialising the messages again
            record = {**record, "messages": orjson.Fragment(messages)}
        return orjson.dumps(record) + b"\n"


_SPILL: tuple[int, group.SpillWriter] | None = None  # (pid, this process's spill writer)


def _spill_writer(ctx: _Context) -> group.SpillWriter:
    global _SPILL
    if _SPILL is None or _SPILL[0] != os.getpid():  # a forked worker starts its own
        _SPILL = (os.getpid(), group.SpillWriter(ctx.spill_dir, ctx.partitions))
    return _SPILL[1]


def _close_spill_writer() -> None:
    global _SPILL
    if _SPILL is not None and _SPILL[0] == os.getpid():
        _SPILL[1].close()
    _SPILL = None


@dataclass
class ChunkResult:
    chunk: Chunk
    lines: int
    partitions: set[int]  # spilled to
    # (line in chunk, code, detail, raw line or its head, length when only the head is there)
    rejects: list[tuple[int, str, str, bytes, int]]
    acc: Accounting
    g3_candidates: dict[int, set[str]]  # partition -> the G3 candidates of its new entries


def load_chunk(chunk: Chunk) -> ChunkResult:
    """Stage 1 for one chunk: every line is blank, rejected, or converted and spilled."""
    ctx = _context()
    source = ctx.sources[chunk.source_index]
    acc = Accounting()
    entries: list[group.SpillEntry] = []
    rejects: list[tuple[int, str, str, bytes, int]] = []
    number = 0
    for offset, raw, length, over in chunk_lines(chunk, source, ctx.max_line_bytes):
        number += 1
        line = raw[:-1] if raw.endswith(b"\n") and not over else raw
        if offset == 0 and line.startswith(codecs.BOM_UTF8):
            line = line[3:]  # a byte-order mark opens the input: allowed, as validate does
        try:
            if over:  # only its head was read: the rejects file gets that and its length
                raise Reject("line-too-long", too_long(length, ctx.max_line_bytes))
            if not line.strip():
                acc.blank += 1
                continue
            record = normalise_line(line, ctx.validators)
            if record.record_type != TREE:  # fork topology: no training record comes from it
                entries.append(
                    _entry(ctx, record, (chunk.index, number, offset, chunk.source_index))
                )
        except Reject as exc:
            acc.rejected[exc.code] += 1
            rejects.append((number, exc.code, exc.detail, line, length if over else 0))
            continue
        acc.valid += 1
        acc.by_type[record.record_type] += 1
        if record.repairs:
            acc.repaired.update(record.repairs)
    acc.read = number
    partitions = _spill_writer(ctx).write(entries)
    candidates: dict[int, set[str]] = {}
    for entry in entries:
        if entry.g3_hit:
            candidates.setdefault(ctx.partitions.of(entry.key), set()).update(
                entry.g3_hit.split("\n")
            )
    return ChunkResult(chunk, number, partitions, rejects, acc, candidates)


def _entry(ctx: _Context, record: Normalised, where: tuple[int, int, int, int]) -> group.SpillEntry:
    """The record's spill entry; ``Reject`` when it holds what no JSON output can carry."""
    for value in _branch_indexes(record):
        if int(value) not in INT64_RANGE:  # e.g. written as 1e300, whole
            raise Reject(
                "unsupported-value",
                f"{record.record_type}: branch index {value!r} does not fit in 64 bits",
            )
    try:
        if record.record_type == BRANCH:
            return _branch_entry(ctx, record, where)
        return _layer2_entry(ctx, record, where)
    except orjson.JSONEncodeError as exc:  # e.g. tool arguments nested past orjson's limit
        raise Reject(
            "unsupported-value", f"{record.record_type}: cannot be written: {exc}"
        ) from None


def _branch_indexes(record: Normalised) -> tuple[float, ...]:
    """The branch indexes that go into the record's outputs."""
    if record.record_type == BRANCH:
        return (cast(BranchJson, record.data)["branch_index"],)
    if record.record_type == LAYER2_DPO:
        given = cast(DpoRecordJson, record.data)["provenance"]
        return (given["chosen_branch"], given["rejected_branch"])
    return (cast(PpoRecordJson, record.data)["provenance"]["branch_index"],)


def _branch_entry(
    ctx: _Context, record: Normalised, where: tuple[int, int, int, int]
) -> group.SpillEntry:
    branch = cast(BranchJson, record.data)  # contract-valid: the normaliser validated it
    conversation = conversation_of(branch)
    rollout_id = branch["rollout_id"]
    hashes, g3_hit = ctx.tasks.facts(branch["task"])
    messages = orjson.dumps(conversation.messages)  # for the DPO pair and the PPO line alike
    output = b""
    if "ppo" in ctx.formats:
        output = ctx.check.line(ctx.check.ppo, ppo_record(branch, conversation, hashes), messages)
    score = BranchScore.of(branch, record.rank_given)
    return group.SpillEntry(
        group.rollout_key(rollout_id),
        rollout_id,
        group.KIND_BRANCH,
        score.branch_index,
        *where,
        g3_hit=g3_hit,
        hashes=hashes,
        total=score.total,
        usable=score.usable,
        final_answer=score.final_answer,
        rank=score.rank,
        rank_given=score.rank_given,
        loss_weight=conversation.loss_weight_tokens,
        output=output,
        messages=messages if "dpo" in ctx.formats and not output else b"",
    )


def _layer2_entry(
    ctx: _Context, record: Normalised, where: tuple[int, int, int, int]
) -> group.SpillEntry:
    output = b""
    if record.record_type == LAYER2_DPO:
        dpo = cast(DpoRecordJson, record.data)
        kind, prompt, rollout_id = group.KIND_DPO, dpo["prompt"], dpo["provenance"]["rollout_id"]
        branch_index = dpo["provenance"]["chosen_branch"]
        hashes, g3_hit = ctx.tasks.facts(prompt)
        if "dpo" in ctx.formats:
            output = ctx.check.line(ctx.check.dpo, dpo_from_layer2(dpo, hashes))
    else:
        ppo = cast(PpoRecordJson, record.data)
        kind, prompt, rollout_id = group.KIND_PPO, ppo["prompt"], ppo["provenance"]["rollout_id"]
        branch_index = ppo["provenance"]["branch_index"]
        hashes, g3_hit = ctx.tasks.facts(prompt)
        if "ppo" in ctx.formats:
            output = ctx.check.line(ctx.check.ppo, ppo_from_layer2(ppo, hashes))
    return group.SpillEntry(
        group.rollout_key(rollout_id),
        rollout_id,
        kind,
        int(branch_index),
        *where,
        g3_hit=g3_hit,
        hashes=hashes,
        total=0.0,
        usable=False,
        final_answer="",
        rank=0,
        rank_given=False,
        loss_weight="default",
        output=output,
        messages=b"",
    )


@dataclass
class PartitionResult:
    partition: int
    dpo: list[bytes] = field(default_factory=list)
    ppo: list[bytes] = field(default_factory=list)
    duplicates: list[tuple[group.SpillEntry, group.SpillEntry]] = field(default_factory=list)
    contaminated: list[Contamination] = field(default_factory=list)
    acc: Accounting = field(default_factory=Accounting)


#: G3 candidates that an eval item holds -> (eval item id, its n-gram): ``EvalIndex.confirm``.
Confirmed = Mapping[str, tuple[str, str]]


def build_partition(work: tuple[int, Confirmed]) -> PartitionResult:
    """Stage 2 for one partition: each rollout's entries -> its validated Layer 3 records;
    ``work``: the partition and its confirmed G3 candidates."""
    ctx = _context()
    partition, confirmed = work
    result = PartitionResult(partition)
    for rollout_id, entries in group.read_partition(ctx.spill_dir, partition):
        branches, layer2, duplicates = group.split_rollout(entries)
        result.duplicates.extend(duplicates)
        result.acc.rollouts += 1
        if branches:
            result.acc.rank_disagreements += rank_disagreements(branches)
        shared = first_confirmed(
            (c for e in (*branches, *layer2) if e.g3_hit for c in e.g3_hit.split("\n")),
            confirmed,
        )
        if shared is not None:  # the load stage checked each task against the eval items
            result.contaminated.append(Contamination(rollout_id, *shared))
            continue  # never exported: the run stops, or the rollout is dropped
        _build_rollout(ctx, rollout_id, branches, layer2, result)
    return result


def _build_rollout(
    ctx: _Context,
    rollout_id: str,
    branches: list[group.SpillEntry],
    layer2: list[group.SpillEntry],
    result: PartitionResult,
) -> None:
    acc = result.acc
    plugin_pair = layer2[0] if layer2 and layer2[0].kind == group.KIND_DPO else None
    pair = choose_pair(branches) if branches and ("dpo" in ctx.formats or plugin_pair) else None
    if isinstance(pair, tuple) and plugin_pair is not None:
        # The branch records give the rollout's pair: the plugin's DPO record repeats it.
        result.duplicates.append((pair[0], plugin_pair))
        layer2 = layer2[1:]
    if "dpo" in ctx.formats:
        if isinstance(pair, str) and plugin_pair is None:
            acc.dpo_skipped[pair] += 1
        elif isinstance(pair, tuple):
            chosen, rejected = pair
            # The chosen branch's conversation: its own JSON, or the one inside its PPO line.
            messages = (
                orjson.loads(chosen.messages)
                if chosen.messages
                else orjson.loads(chosen.output)["messages"]
            )
            record = dpo_record(
                provenance(rollout_id, chosen.hashes),
                messages,
                chosen.loss_weight,
                chosen,
                rejected,
            )
            result.dpo.append(ctx.check.line(ctx.check.dpo, record))
            acc.dpo_pairs += 1
    if "ppo" in ctx.formats:
        result.ppo.extend(b.output for b in branches)  # in branch_index order
        acc.ppo_records += len(branches)
    for entry in layer2:
        if not entry.output:
            continue  # its kind of output is not wanted
        if entry.kind == group.KIND_DPO:
            result.dpo.append(entry.output)
            acc.layer2_dpo += 1
        else:
            result.ppo.append(entry.output)
            acc.layer2_ppo += 1


# ---------------------------------------------------------------------------------------
# Parent side.


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity mask), which bounds ``workers``."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def _worker_count(settings: Settings, sources: list[InputSource]) -> int:
    if settings.workers is not None:
        return max(1, settings.workers)
    if "fork" not in multiprocessing.get_all_start_methods():
        return 1  # workers share the parent's context by forking
    known = sum(os.path.getsize(s.path) for s in sources if not s.is_stdin)
    if known < PARALLEL_MIN_BYTES and not any(s.is_stdin for s in sources):
        return 1
    return available_cpus()


class _InputHashes:
    """sha256 of every input file, computed in a thread while the run goes on (hashlib
    releases the GIL, so this costs no worker time); stdin is hashed from its spool. A file
    is hashed only if it is still the file the run began with (``_Watched``), and the run
    checks again at its end, so the digest is of the bytes the run read."""

    def __init__(self, sources: list[InputSource], watched: _Watched) -> None:
        self.sources = sources
        self.watched = watched
        self.values: dict[int, str] = {}
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        for index, source in enumerate(self.sources):
            if source.is_stdin:
                continue
            try:
                with open(source.path, "rb") as handle:
                    if not self.watched.unchanged(source.path, os.fstat(handle.fileno())):
                        continue  # named by result()
                    digest = hashlib.sha256()
                    while block := handle.read(1 << 20):
                        digest.update(block)
                    self.values[index] = digest.hexdigest()
            except OSError:
                continue  # named by result()

    def result(self, spool_path: str | None) -> list[str]:
        self._thread.join()
        digests = []
        for index, source in enumerate(self.sources):
            if source.is_stdin:
                digests.append(sha256_file(spool_path or ""))
            elif index in self.values:
                digests.append(self.values[index])
            else:
                raise UserError(
                    f"{source.display}: changed while it was read (replaced, truncated or "
                    "rewritten during the run); nothing written"
                )
        return digests


_RECORD_TYPES = {group.KIND_BRANCH: BRANCH, group.KIND_DPO: LAYER2_DPO, group.KIND_PPO: LAYER2_PPO}


def _duplicate_reason(
    kept: group.SpillEntry, dropped: group.SpillEntry, where: str
) -> tuple[str, str]:
    """(reject code, detail) of a record ``group.split_rollout`` found to repeat ``kept``,
    which is at ``where``."""
    if dropped.kind == group.KIND_DPO:
        if kept.kind == group.KIND_BRANCH:
            return DUPLICATE_PAIR, (
                f"a DPO record for rollout {dropped.rollout_id!r}, whose branch records give "
                f"its pair (branch {kept.branch_index} at {where})"
            )
        return DUPLICATE_PAIR, (
            f"a second DPO record for rollout {dropped.rollout_id!r}; first seen at {where}"
        )
    key = f"(rollout_id, branch_index) = ({dropped.rollout_id!r}, {dropped.branch_index})"
    if kept.kind == group.KIND_BRANCH and dropped.kind == group.KIND_PPO:
        return (
            DUPLICATE_BRANCH,
            f"duplicate {key}; the branch record at {where} gives its PPO record",
        )
    return DUPLICATE_BRANCH, f"duplicate {key}; first seen at {where}"


def _g3_report(found: list[Contamination]) -> bytes:
    """The ``--g3-report`` file: each contaminated rollout, its eval item, the shared n-gram."""
    report = {
        "contaminated": [
            {"rollout_id": c.rollout_id, "eval_item_id": c.eval_item_id, "ngram": c.ngram}
            for c in found
        ]
    }
    return orjson.dumps(report, option=orjson.OPT_INDENT_2) + b"\n"


def _reject_line(
    display: str, number: int, code: str, detail: str, raw: bytes, length: int = 0
) -> bytes:
    """A rejects-file record; ``length``: the line's, when ``raw`` is only its first bytes
    (a line over the limit is never held whole), given as ``raw_length``."""
    record: dict[str, Any] = {"file": display, "line": number, "reason": code, "detail": detail}
    if length:
        record["raw_length"] = length
        raw = _whole_characters(raw)
    try:
        record["raw"] = raw.decode("utf-8")
    except UnicodeDecodeError:  # kept verbatim all the same, as base64
        record["raw_base64"] = base64.b64encode(raw).decode("ascii")
    return orjson.dumps(record) + b"\n"


def _whole_characters(head: bytes) -> bytes:
    """A line's first bytes without a UTF-8 sequence cut at their end (as they are when
    they are not UTF-8 anyway)."""
    for cut in range(4):
        try:
            head[: len(head) - cut].decode("utf-8")
        except UnicodeDecodeError:
            continue
        return head[: len(head) - cut]
    return head


def _open_outputs(settings: Settings, outputs: dict[str, AtomicOutput]) -> None:
    """Each output's temporary file, into ``outputs`` (which the caller discards on failure).
    The rejects file, which holds raw input lines, is created readable by its owner only."""
    wanted = {"dpo": settings.dpo_path, "ppo": settings.ppo_path}
    for name in sorted(settings.formats):
        path = wanted[name]
        assert path is not None, "check_settings requires the outputs of the format"
        outputs[name] = AtomicOutput(path)
    if settings.rejects_path:
        outputs["rejects"] = AtomicOutput(settings.rejects_path, new_mode=0o600)
    if settings.g3_report_path:
        outputs[G3_REPORT] = AtomicOutput(settings.g3_report_path)
    if settings.manifest_path:
        outputs[MANIFEST] = AtomicOutput(settings.manifest_path)


@dataclass(frozen=True)
class SettingNames:
    """What the settings checks call each setting: the command's options or the Python
    API's parameters."""

    names: Mapping[str, str]  # Settings field -> the user's name for it
    # Python keyword arguments (name=value), which have no --help: errors say what a
    # number counts.
    keywords: bool = False

    def __getitem__(self, setting: str) -> str:
        return self.names[setting]

    def given(self, setting: str, value: object) -> str:
        """A setting as the user gives it: ``--format both``, ``output_format='both'``."""
        name = self.names[setting]
        if self.keywords:
            return f"{name}={value!r}"
        return name if value is True else f"{name} {value}"


#: The command's options: what ``run`` calls the settings in its errors.
OPTION_NAMES = SettingNames(
    {
        "inputs": "--input",
        "dpo_path": "--output-dpo",
        "ppo_path": "--output-ppo",
        "output_format": "--format",
        "rejects_path": "--rejects",
        "manifest_path": "--manifest",
        "eval_items": "--eval-items",
        "eval_field": "--eval-field",
        "eval_id_field": "--eval-id-field",
        "ngram": "--ngram",
        "allow_missing_g3": "--allow-missing-g3",
        "g3_report_path": "--g3-report",
        "temp_dir": "--temp-dir",
        "workers": "--workers",
        "max_line_bytes": "--max-line-bytes",
        "chunk_bytes": "chunk_bytes",
        "contract": "--contract",
    }
)


def check_settings(settings: Settings, names: SettingNames = OPTION_NAMES) -> None:
    """Refuse settings a run cannot use, before anything is read; the errors call the
    settings by ``names``."""
    if not settings.inputs:
        raise UserError(f"no input: give at least one {names['inputs']}")
    check_ngram(settings.ngram, names["ngram"], UserError, explain=names.keywords)
    cpus = available_cpus()
    for setting, value, top, what in (
        ("ngram", settings.ngram, MAX_NGRAM, "words per n-gram"),
        ("workers", settings.workers, cpus, "the CPUs this process may use"),
        ("max_line_bytes", settings.max_line_bytes, MAX_LINE_BYTES, "bytes"),
        ("chunk_bytes", settings.chunk_bytes, MAX_LINE_BYTES, "bytes"),
    ):
        if value is not None and not 1 <= value <= top:
            raise UserError(f"{names[setting]} must be between 1 and {top} ({what}), got {value}")
    if settings.output_format not in FORMATS:
        raise UserError(
            f"{names['output_format']} must be one of {', '.join(FORMATS)}, "
            f"got {settings.output_format!r}"
        )
    for name in sorted(settings.formats):
        if not getattr(settings, f"{name}_path"):
            raise UserError(
                f"{names[f'{name}_path']} is required with "
                f"{names.given('output_format', settings.output_format)}"
            )
    if settings.eval_items is None and not settings.allow_missing_g3:
        raise UserError(
            f"no {names['eval_items']} given: the G3 contamination gate cannot run "
            f"(pass {names.given('allow_missing_g3', True)} to export without it)"
        )
    if settings.eval_items == "-":
        raise UserError(f"{names['eval_items']} must be a file (it is read twice), not stdin")
    if settings.temp_dir is not None and not os.path.isdir(settings.temp_dir):
        raise UserError(f"{names['temp_dir']} {settings.temp_dir}: no such directory")
    _check_distinct_files(settings, names)


def _check_distinct_files(settings: Settings, names: SettingNames) -> None:
    """No output may be an input, the eval file or another output: the rename at the end
    would destroy it. Files compare as the file system sees them (symlinks followed, hard
    links alike); a path not there yet by its resolved name."""

    def identity(path: str) -> tuple[int, int] | str:
        try:
            facts = os.stat(path)
        except OSError:
            return os.path.realpath(path)
        return (facts.st_dev, facts.st_ino)

    reads: list[tuple[str, str, str]] = []  # (setting, name shown, path)
    for given in settings.inputs:
        try:  # a missing input is reported later, in its turn
            sources = expand_inputs([given])
        except UserError:
            continue
        # Not stdin, and there: the API's records are checked before they are staged.
        reads += [
            ("inputs", s.display, s.path)
            for s in sources
            if not s.is_stdin and os.path.exists(s.path)
        ]
    if settings.eval_items:
        reads.append(("eval_items", settings.eval_items, settings.eval_items))
    writes = [f"{name}_path" for name in sorted(settings.formats)]
    writes += ["rejects_path", "manifest_path", "g3_report_path"]
    seen: dict[tuple[int, int] | str, tuple[str, str]] = {}
    for setting, shown, path in reads:
        seen.setdefault(identity(path), (names[setting], shown))
    for setting in writes:
        path = getattr(settings, setting)
        if not path:
            continue  # not written
        key = identity(path)
        if key in seen:
            first, first_path = seen[key]
            raise UserError(f"{names[setting]} {path} is the same file as {first} {first_path}")
        seen[key] = (names[setting], path)


def run(settings: Settings) -> RunResult:
    """One export run. Raises ``UserError`` (exit 2) and ``OutputInvalidError`` (a bug); at
    SIGINT ``KeyboardInterrupt``, at SIGTERM ``interrupts.Terminated``, nothing left behind
    (``datafactory.interrupts``)."""
    with interrupts.handled(), no_cyclic_gc():
        return _run_settings(settings)


def _run_settings(settings: Settings) -> RunResult:
    global _CTX
    check_settings(settings)
    validators = ValidatorSet(exporter_contract(settings.contract))
    watched = _Watched()
    if settings.eval_items:
        watched.add(settings.eval_items, settings.eval_items)
    eval_index = (
        EvalIndex.from_file(
            settings.eval_items, settings.ngram, settings.eval_field, settings.eval_id_field
        )
        if settings.eval_items
        else None
    )
    sources = expand_inputs(list(settings.inputs))
    for source in sources:
        if not source.is_stdin:
            watched.add(source.display, source.path)
    outputs: dict[str, AtomicOutput] = {}
    spill: tempfile.TemporaryDirectory[str] | None = None
    try:
        with interrupts.deferred():  # no temporary file made but not yet known
            _open_outputs(settings, outputs)
            spill = tempfile.TemporaryDirectory(prefix="datafactory-", dir=settings.temp_dir)
        tmp = spill.name
        spool_path = os.path.join(tmp, "stdin.jsonl")
        sources = [InputSource(s.display, spool_path, False) if s.is_stdin else s for s in sources]
        _CTX = _Context(
            sources=sources,
            validators=validators,
            eval_index=eval_index,
            ngram=settings.ngram,
            formats=settings.formats,
            max_line_bytes=settings.max_line_bytes,
            partitions=group.Partitioning.for_inputs(sources),
            spill_dir=tmp,
            check=_OutputCheck(validators),
            tasks=_RecentTasks(settings.ngram, eval_index),
        )
        return _run(settings, _CTX, outputs, spool_path, eval_index, watched)
    except BaseException:
        with interrupts.deferred():
            for output in outputs.values():
                output.discard()
        raise
    finally:
        _CTX = None
        with interrupts.deferred():
            if spill is not None:
                spill.cleanup()


class _Watched:
    """The files a run reads, with their identity when the run began: one that changes
    (replaced, truncated, grown, rewritten) before the outputs are committed is an input
    error, so the manifest never vouches for bytes that were not the ones read."""

    def __init__(self) -> None:
        self.files: list[tuple[str, str, tuple[int, int, int, int]]] = []

    @staticmethod
    def identity(facts: os.stat_result) -> tuple[int, int, int, int]:
        return (facts.st_dev, facts.st_ino, facts.st_size, facts.st_mtime_ns)

    def add(self, display: str, path: str) -> None:
        try:
            facts = os.stat(path)
        except OSError:
            return  # named when it is opened
        self.files.append((display, path, self.identity(facts)))

    def check(self) -> None:
        for display, path, before in self.files:
            try:
                after: tuple[int, int, int, int] | None = self.identity(os.stat(path))
            except OSError:
                after = None
            if after != before:
                raise UserError(
                    f"{display}: changed while it was read (replaced, truncated or rewritten "
                    "during the run); nothing written"
                )

    def unchanged(self, path: str, facts: os.stat_result) -> bool:
        return all(before == self.identity(facts) for _, p, before in self.files if p == path)


def _run(
    settings: Settings,
    ctx: _Context,
    outputs: dict[str, AtomicOutput],
    spool_path: str,
    eval_index: EvalIndex | None,
    watched: _Watched,
) -> RunResult:
    sources = ctx.sources
    workers = _worker_count(settings, sources)
    acc = Accounting()
    lines_per_source = [0] * len(sources)
    line_base: dict[int, int] = {}  # chunk index -> line number before its first line
    used: set[int] = set()  # partitions spilled to
    candidates: dict[int, set[str]] = {}  # partition -> its G3 candidates
    rejects = outputs.get("rejects")
    total_bytes = sum(os.path.getsize(s.path) for s in sources if s.display != "-")
    progress = settings.progress or (lambda phase, done, total: None)
    pool: WorkerPool | None = None
    try:
        # The workers fork before any thread starts (a fork copies only the calling thread),
        # all of them or none: a signal waits until the pool is known, to be closed.
        with interrupts.deferred():
            pool = WorkerPool(workers) if workers > 1 else None
        hashes = _InputHashes(sources, watched)
        with open(spool_path, "wb") as spool:
            chunks = iter_chunks(sources, spool, settings.chunk_bytes, settings.max_line_bytes)
            done = 0
            for result in ordered(pool, load_chunk, chunks, 2 * workers):
                chunk = result.chunk
                base = lines_per_source[chunk.source_index]
                line_base[chunk.index] = base
                lines_per_source[chunk.source_index] += result.lines
                acc.merge(result.acc)
                used |= result.partitions
                for partition, found in result.g3_candidates.items():
                    candidates.setdefault(partition, set()).update(found)
                if rejects is not None:
                    display = sources[chunk.source_index].display
                    rejects.write(
                        b"".join(
                            _reject_line(display, base + n, code, detail, raw, length)
                            for n, code, detail, raw, length in result.rejects
                        ),
                        len(result.rejects),
                    )
                done += chunk.end - chunk.offset
                progress("load", done, max(done, total_bytes))
        _close_spill_writer()
        dpo, ppo = outputs.get("dpo"), outputs.get("ppo")
        # Every candidate confirmed exactly (a second pass over the eval items) before any
        # rollout is built or left out; each partition gets its own.
        confirmed = eval_index.confirm(set().union(*candidates.values())) if eval_index else {}
        work = [
            (p, {c: confirmed[c] for c in candidates.get(p, ()) if c in confirmed})
            for p in sorted(used)
        ]
        contaminated: list[Contamination] = []
        duplicates: list[tuple[group.SpillEntry, group.SpillEntry]] = []
        partitions = ctx.partitions.count
        for result_p in ordered(pool, build_partition, work, 2 * workers):
            acc.merge(result_p.acc)
            if dpo is not None:
                dpo.write(b"".join(result_p.dpo), len(result_p.dpo))
            if ppo is not None:
                ppo.write(b"".join(result_p.ppo), len(result_p.ppo))
            duplicates.extend(result_p.duplicates)
            contaminated.extend(result_p.contaminated)
            progress("build", result_p.partition + 1, partitions)
    finally:
        with interrupts.deferred():  # the workers are gone before their spill files go
            _close_spill_writer()
            if pool is not None:
                pool.close()
    for kept, dropped in duplicates:
        where = f"{sources[kept.source_index].display}:{line_base[kept.chunk] + kept.line}"
        code, detail = _duplicate_reason(kept, dropped, where)
        acc.rejected[code] += 1
        acc.by_type[_RECORD_TYPES[dropped.kind]] -= 1
        if rejects is not None:
            source = sources[dropped.source_index]
            raw = read_line_at(source, dropped.offset, settings.max_line_bytes).rstrip(b"\n")
            number = line_base[dropped.chunk] + dropped.line
            rejects.write(_reject_line(source.display, number, code, detail, raw), 1)
    named = contaminated
    acc.contaminated_rollouts = len(named)
    report = outputs.get(G3_REPORT)
    if report is not None:
        report.write(_g3_report(named), len(named))
    digests = hashes.result(spool_path)
    eval_digest = sha256_file(settings.eval_items) if settings.eval_items else ""
    watched.check()  # every input and the eval file: the bytes hashed are the bytes read
    if named and not settings.drop_contaminated:  # nothing written but the G3 report
        for name, output in outputs.items():
            if name != G3_REPORT:
                output.discard()
        _commit([report] if report is not None else [])
        return RunResult(1, None, named)
    input_facts = [
        FileFacts(s.display, digest, lines)
        for s, digest, lines in zip(sources, digests, lines_per_source, strict=True)
    ]
    g3: dict[str, Any] = {
        "status": "skipped (--allow-missing-g3)" if eval_index is None else "passed",
        "ngram": settings.ngram,
        "eval_items": None,
        "contaminated_rollouts": len(named),
        "dropped": settings.drop_contaminated and bool(named),
    }
    if eval_index is not None and settings.eval_items is not None:
        g3["eval_items"] = FileFacts(settings.eval_items, eval_digest, eval_index.items).as_dict(
            "items"
        )
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
    # The manifest last: it vouches for the others.
    _commit(sorted(outputs.values(), key=lambda output: output is manifest_out))
    return RunResult(0, manifest, named)


def _commit(outputs: list[AtomicOutput]) -> None:
    """Put the outputs in place, in one step a signal does not cut; once they are, a signal
    changes nothing."""
    with interrupts.deferred():
        commit_all(outputs)
        interrupts.finished()
