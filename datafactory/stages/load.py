"""Load stage, per chunk of input lines: parse, repair, validate against the contract, and
convert each record on its own (a branch's conversation and PPO record, a Layer 2 record's
Layer 3 record, each output validated), then spill what the build stage needs to the
record's partition (``datafactory.stages.group``). Rejected lines come back with their
reason, for the rejects file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

import orjson
from msgspec import UNSET

from datafactory.contamination import EvalIndex, task_words, word_grams
from datafactory.conversation import Conversation, build_typed_messages, unmatched_results
from datafactory.manifest import UNMATCHED_RESULTS, Accounting
from datafactory.pairs import (
    conversation_of,
    dpo_fact_fields,
    dpo_from_layer2,
    ppo_from_layer2,
    ppo_record,
    task_hashes,
)
from datafactory.rank import MAX_TOTAL, BranchScore
from datafactory.records import (
    INT64_RANGE,
    BranchJson,
    DpoRecordJson,
    PpoRecordJson,
    RolloutBranchRecord,
    decode_branch,
    decode_branch_forms,
)
from datafactory.repair import (
    BRANCH,
    LAYER2_DPO,
    SFT,
    TREE,
    Normalised,
    Reject,
    normalise_line,
)
from datafactory.sources import Chunk, InputSource, lines
from datafactory.stages import group
from datafactory.targets.shape import TrlCheck
from datafactory.targets.trl import TrlOptions, sft_input_record
from wiregate.jsonl import too_long
from wiregate.record_validator import RecordValidator, ValidatorSet

__all__ = [
    "ChunkResult",
    "LoadContext",
    "OutputCheck",
    "OutputInvalidError",
    "RecentTasks",
    "Worker",
    "load_chunk",
]


# A PPO line is {"schema_version":...,"messages":[...],"reward":...}: keys in this order
# (``ppo_record``), and inside a JSON string a quote is escaped, so ``,"reward":`` is a key
# of the line itself: its last one (found from the short end) ends the messages.
_MESSAGES = b'"messages":'
_AFTER_MESSAGES = b',"reward":'
_CLAMPED = ("reward:clamped",)


class OutputInvalidError(Exception):
    """An output record failed the training-record contract: a bug in the exporter."""


class OutputCheck:
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
        return orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)


def _exact(data: bytes) -> bytes:
    """``data`` in memory of its own size, for bytes held until the chunk is spilled:
    orjson's buffer for a text of 1.7 kB takes 8 KiB, for 100 bytes 4 KiB."""
    return memoryview(data).tobytes()


class RecentTasks:
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


@dataclass(frozen=True)
class LoadContext:
    """What every process of a run shares: made by the parent before the workers fork."""

    sources: list[InputSource]
    validators: ValidatorSet
    eval_index: EvalIndex | None
    ngram: int
    formats: frozenset[str]
    max_line_bytes: int
    partitions: group.Partitioning
    spill_dir: str
    trl: TrlOptions | None = None  # the trl target: branches are spilled as their JSON


class Worker:
    """One process's state (``datafactory.parallel``'s initializer): the run's context, its
    own spill files, its recent tasks."""

    def __init__(self, ctx: LoadContext) -> None:
        self.ctx = ctx
        self.check = OutputCheck(ctx.validators)
        self.tasks = RecentTasks(ctx.ngram, ctx.eval_index)
        self.spill = group.SpillWriter(ctx.spill_dir, ctx.partitions)
        self.trl = ctx.trl is not None
        arguments = ctx.trl.tool_arguments if ctx.trl is not None else "string"
        self.trl_check = TrlCheck(ctx.validators, arguments)
        self.sft = self.trl and "sft" in ctx.formats  # SFT input records are read too
        self.dpo = "dpo" in ctx.formats and not self.trl
        self.ppo = "ppo" in ctx.formats and not self.trl
        # The typed decoder is the bundled contract's: another contract's validator judges all.
        self.typed = ctx.validators.contract.bundled
        self.form = 0  # the form of the last branch read (``records.decode_branch_forms``)
        # Tool results that answered no call in the branches spilled since the chunk began.
        self.unmatched_results = 0

    def close(self) -> None:
        self.spill.close()


@dataclass
class ChunkResult:
    chunk: Chunk
    lines: int
    partitions: set[int]  # spilled to
    # (line in chunk, code, detail, raw line or its head, length when only the head is there)
    rejects: list[tuple[int, str, str, bytes, int]]
    acc: Accounting
    g3_candidates: dict[int, set[str]]  # partition -> the G3 candidates of its new entries


def load_chunk(worker: Worker, chunk: Chunk) -> ChunkResult:
    """Every line of the chunk is blank, rejected, or converted and spilled."""
    ctx = worker.ctx
    acc = Accounting()
    spilled: list[group.Spilled] = []
    rejects: list[tuple[int, str, str, bytes, int]] = []
    number = 0
    base = chunk.index << 32
    source = ctx.sources[chunk.source_index]
    for _, line, length, over, count in lines(chunk, source, ctx.max_line_bytes):
        number += count
        if count > 1:  # a run of blank lines, counted at once
            acc.blank += count
            continue
        try:
            if over:  # only its head was read: the rejects file gets that and its length
                raise Reject("line-too-long", too_long(length, ctx.max_line_bytes))
            # The fast path: a valid branch that needs no repair (``records.fast_decoder``),
            # or whose only repairs are the producer's forms (tool events' and build result's
            # keys, statuses: layer3; the trl target's build stage reads the input line).
            typed, repairs = None, cast(tuple[str, ...], ())
            if worker.trl:
                typed = decode_branch(line) if worker.typed else None
            elif worker.typed:
                typed, worker.form, repairs = decode_branch_forms(line, worker.form)
            if typed is not None:
                item = _typed_branch(worker, typed, line, base | number, chunk.source_index)
                spilled.append(item)
                acc.valid += 1
                acc.by_type[BRANCH] += 1
                if repairs:
                    acc.repaired.update(repairs)
                if not 0 <= typed.total_score <= MAX_TOTAL:  # counted as the normaliser does
                    acc.repaired.update(_CLAMPED)
                continue
            if not line.strip():
                acc.blank += 1
                continue
            record = normalise_line(line, ctx.validators, worker.sft)
            if record.record_type != TREE:  # fork topology: no training record comes from it
                spilled.append(_spilled(worker, record, line, base | number, chunk.source_index))
        except Reject as exc:
            acc.rejected[exc.code] += 1
            if exc.record_type is not None:
                acc.unsupported[exc.record_type] += 1
            rejects.append((number, exc.code, exc.detail, line, length if over else 0))
            continue
        acc.valid += 1
        acc.by_type[record.record_type] += 1
        if record.repairs:
            acc.repaired.update(record.repairs)
    acc.read = number
    if worker.unmatched_results:
        acc.repaired[UNMATCHED_RESULTS] += worker.unmatched_results
        worker.unmatched_results = 0
    partitions = worker.spill.write(spilled)
    candidates: dict[int, set[str]] = {}
    for item in spilled:
        hit = cast(str, item.facts[6])
        if hit:
            partition = ctx.partitions.of(cast(int, item.facts[0]))
            candidates.setdefault(partition, set()).update(hit.split("\n"))
    return ChunkResult(chunk, number, partitions, rejects, acc, candidates)


def _spilled(
    worker: Worker, record: Normalised, raw: bytes, seq: int, source_index: int
) -> group.Spilled:
    """The record's spill entry; ``Reject`` when it holds what no JSON output can carry."""
    for value in _branch_indexes(record):
        if int(value) not in INT64_RANGE:  # e.g. written as 1e300, whole
            raise Reject(
                "unsupported-value",
                f"{record.record_type}: branch index {value!r} does not fit in 64 bits",
            )
    try:
        if record.record_type == BRANCH:
            return _branch(worker, record, raw, seq, source_index)
        if record.record_type == SFT:
            return _sft_input(worker, record, raw, seq, source_index)
        return _layer2(worker, record, raw, seq, source_index)
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
    if record.record_type == SFT:
        return ()
    return (cast(PpoRecordJson, record.data)["provenance"]["branch_index"],)


def _branch(
    worker: Worker, record: Normalised, raw: bytes, seq: int, source_index: int
) -> group.Spilled:
    branch = cast(BranchJson, record.data)  # contract-valid: the normaliser validated it
    # The trl target builds its own turns in the build stage: no conversation needed here.
    conversation = None if worker.trl else conversation_of(branch)
    hashes, g3_hit = worker.tasks.facts(branch["task"])
    score = BranchScore.of(branch, record.rank_given)
    return _branch_entry(
        worker, branch, conversation, hashes, g3_hit, score, raw, seq, source_index,
        repaired=bool(record.repairs),
    )  # fmt: skip


def _branch_entry(
    worker: Worker,
    branch: BranchJson,
    conversation: Conversation | None,
    hashes: tuple[str, str],
    g3_hit: str,
    score: BranchScore,
    raw: bytes,
    seq: int,
    source_index: int,
    *,
    repaired: bool = False,
) -> group.Spilled:
    rollout_id = branch["rollout_id"]
    output, messages = b"", b""
    if worker.trl:  # the build stage makes the records from the repaired branch itself
        # (unrepaired, the branch is the input line, which the spill holds anyway)
        output = _exact(orjson.dumps(branch)) if repaired else b""
        messages_at, messages_len = 0, 0
    elif worker.ppo:  # the conversation's JSON is the one inside the PPO line, found by range
        assert conversation is not None
        check = worker.check
        output = _exact(check.line(check.ppo, ppo_record(branch, conversation, hashes)))
        messages_at = output.index(_MESSAGES) + len(_MESSAGES)
        messages_len = output.rindex(_AFTER_MESSAGES, messages_at) - messages_at
    else:
        assert conversation is not None
        messages = _exact(orjson.dumps(conversation.messages))
        messages_at, messages_len = 0, len(messages)
    answer = score.final_answer.encode("utf-8") if worker.dpo else b""
    # A DPO record's facts of a branch are its input's (``pairs.branch_facts``): no repair
    # touches ``DPO_FACT_KEYS``, so the repaired branch says the same.
    dpo_facts = _exact(orjson.dumps(dpo_fact_fields(branch))) if worker.dpo else b""
    facts = (
        group.rollout_key(rollout_id), rollout_id, group.KIND_BRANCH, score.branch_index,
        seq, source_index, g3_hit, hashes, score.total, score.usable,
        group.answer_key(score.final_answer), score.rank, score.rank_given,
        "default" if conversation is None else conversation.loss_weight_tokens,
    )  # fmt: skip
    separate = messages if worker.dpo else b""
    if conversation is not None:
        worker.unmatched_results += conversation.unmatched_results
    return group.Spilled(facts, output, separate, messages_at, messages_len, answer, dpo_facts, raw)


def _typed_branch(
    worker: Worker, branch: RolloutBranchRecord, raw: bytes, seq: int, source_index: int
) -> group.Spilled:
    """``_branch`` of a record the typed decoder accepted: read from its Struct, no dict made
    of it; the same spill entry, to the byte."""
    task, rollout_id, answer_text = branch.task, branch.rollout_id, branch.final_answer
    # The trl target builds its turns in the build stage, from the input line the spill holds.
    conversation = (
        None if worker.trl else build_typed_messages(task, branch.tool_call_sequence, answer_text)
    )
    hashes, g3_hit = worker.tasks.facts(task)
    total = float(branch.total_score)
    score = BranchScore(
        branch.branch_index, total, branch.objective_status != "unknown", answer_text, branch.rank
    )
    # The fields ``ppo_record`` reads of a branch (its prompt and ``branch_facts``); the typed
    # decoder defers on an unknown key, so no upstream ``provenance`` or ``model_id`` is here.
    fields: dict[str, Any] = {
        "rollout_id": rollout_id,
        "task": task,
        "branch_index": score.branch_index,
        "temperature": branch.temperature,
        "objective_score": branch.objective_score,
        "total_score": total,
    }
    for key in ("seed", "objective_status", "judge_score"):
        value = getattr(branch, key)
        if value is not UNSET:
            fields[key] = value
    try:
        return _branch_entry(
            worker, cast(BranchJson, fields), conversation, hashes, g3_hit, score, raw, seq,
            source_index,
        )  # fmt: skip
    except orjson.JSONEncodeError as exc:  # e.g. tool arguments nested past orjson's limit
        raise Reject("unsupported-value", f"{BRANCH}: cannot be written: {exc}") from None


def _layer2(
    worker: Worker, record: Normalised, raw: bytes, seq: int, source_index: int
) -> group.Spilled:
    output = b""
    check = worker.check
    if record.record_type == LAYER2_DPO:
        dpo = cast(DpoRecordJson, record.data)
        kind, prompt, rollout_id = group.KIND_DPO, dpo["prompt"], dpo["provenance"]["rollout_id"]
        branch_index = dpo["provenance"]["chosen_branch"]
        hashes, g3_hit = worker.tasks.facts(prompt)
        if worker.dpo:
            output = _exact(check.line(check.dpo, dpo_from_layer2(dpo, hashes)))
    else:
        ppo = cast(PpoRecordJson, record.data)
        kind, prompt, rollout_id = group.KIND_PPO, ppo["prompt"], ppo["provenance"]["rollout_id"]
        branch_index = ppo["provenance"]["branch_index"]
        hashes, g3_hit = worker.tasks.facts(prompt)
        if worker.ppo:
            output = _exact(check.line(check.ppo, ppo_from_layer2(ppo, hashes)))
    if output:  # its conversation is written: results that answer no call have no turn
        worker.unmatched_results += unmatched_results(record.data["tool_call_sequence"])
    facts = (
        group.rollout_key(rollout_id), rollout_id, kind, int(branch_index), seq, source_index,
        g3_hit, hashes, 0.0, False, "", 0, False, "default",
    )  # fmt: skip
    return group.Spilled(facts, output, b"", 0, 0, b"", b"", raw)


def _sft_input(
    worker: Worker, record: Normalised, raw: bytes, seq: int, source_index: int
) -> group.Spilled:
    """An SFT input record's entry: its trl SFT line made here (``sft_input_record``), its G3
    candidates those of every system and user turn (the prompt text). Grouped under its
    provenance's ``rollout_id``, or when it names none on its own, as ``sft-record:`` and the
    sha256 of its line (the same for identical lines, whatever the chunking). ``Reject`` when
    the trl form cannot hold its conversation."""
    options = worker.ctx.trl
    assert options is not None
    output = sft_input_record(record.data, options)
    problem = worker.trl_check.problem("sft", output)
    worker.trl_check.forget()
    if problem is not None:
        raise Reject("unsupported-value", f"{SFT} {problem[0]}: {problem[1]}")
    hits: list[str] = []
    hashes: tuple[str, str] | None = None
    for message in record.data["messages"]:
        if message["role"] in ("system", "user"):
            facts, hit = worker.tasks.facts(message["content"])
            if message["role"] == "user":
                hashes = hashes or facts
            if hit:
                hits.append(hit)
    own = f"sft-record:{hashlib.sha256(raw).hexdigest()[:16]}"
    rollout_id = output["rollout_id"] or own
    facts_tuple = (
        group.rollout_key(rollout_id), rollout_id, group.KIND_SFT, 0, seq, source_index,
        "\n".join(hits), hashes or ("", ""), 0.0, False, "", 0, False, "default",
    )  # fmt: skip
    line = _exact(orjson.dumps(output, option=orjson.OPT_APPEND_NEWLINE))
    return group.Spilled(facts_tuple, line, b"", 0, 0, b"", b"", raw)
