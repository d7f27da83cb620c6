"""Build stage, per partition: group by ``rollout_id``, rank, pick the DPO pair, apply G3,
and write the partition's DPO and PPO lines, in order, to files of its own in the spill
directory, which the parent appends to the outputs. The DPO record of a pair is made here;
every other output line was made by the load stage and is copied from the spill file by
range. Memory holds a rollout's small entries, never its output lines.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import IO

import orjson

from datafactory.contamination import Contamination, first_confirmed
from datafactory.conversation import unmatched_results
from datafactory.manifest import UNMATCHED_RESULTS, Accounting
from datafactory.outputs import naming
from datafactory.pairs import DpoSkip, branch_facts, choose_pair, dpo_record, provenance
from datafactory.rank import BranchScore, rank_disagreements
from datafactory.records import BranchJson
from datafactory.repair import LAYER2_DPO, LAYER2_PPO
from datafactory.stages import group
from datafactory.stages.load import OutputInvalidError, Worker
from datafactory.targets.trl import TrlRecord, passed, rollout_records

__all__ = ["Confirmed", "PartitionResult", "build_partition"]

#: G3 candidates that an eval item holds -> (eval item id, its n-gram): ``EvalIndex.confirm``.
Confirmed = Mapping[str, tuple[str, str]]


@dataclass
class PartitionResult:
    partition: int
    # Output name ("dpo", "ppo") -> (the file holding the partition's lines, their count).
    outputs: dict[str, tuple[str, int]] = field(default_factory=dict)
    duplicates: list[tuple[group.SpillEntry, group.SpillEntry]] = field(default_factory=list)
    contaminated: list[Contamination] = field(default_factory=list)
    acc: Accounting = field(default_factory=Accounting)


class _Lines:
    """One output's lines of a partition, written to a file of the spill directory."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.count = 0
        self.handle: IO[bytes] = open(path, "wb", buffering=1 << 20)  # noqa: SIM115

    def add(self, line: bytes) -> None:
        try:
            self.handle.write(line)
        except OSError as exc:
            raise naming(exc, self.path) from None
        self.count += 1

    def close(self) -> None:
        try:
            self.handle.close()
        except OSError as exc:
            raise naming(exc, self.path) from None


def build_partition(worker: Worker, work: tuple[int, Confirmed]) -> PartitionResult:
    """Each rollout's entries -> its outputs; ``work``: the partition and its confirmed G3
    candidates."""
    partition, confirmed = work
    directory = worker.ctx.spill_dir
    result = PartitionResult(partition)
    files = group.SpillFiles(directory)
    names = sorted(worker.ctx.formats)
    outputs = {n: _Lines(os.path.join(directory, f"out-{partition:04d}.{n}")) for n in names}
    failed: list[OSError] = []
    try:
        for rollout_id, entries in group.read_partition(directory, partition):
            branches, layer2, duplicates = group.split_rollout(entries)
            del entries
            result.duplicates.extend(duplicates)
            if branches or any(e.kind != group.KIND_SFT for e in layer2):
                result.acc.rollouts += 1  # SFT input records alone make no rollout
            if branches:
                result.acc.rank_disagreements += rank_disagreements(branches)
            shared = first_confirmed(
                (c for e in (*branches, *layer2) if e.g3_hit for c in e.g3_hit.split("\n")),
                confirmed,
            )
            if shared is not None:  # the load stage checked each task against the eval items
                result.contaminated.append(Contamination(rollout_id, *shared))
                continue  # never exported: the run stops, or the rollout is dropped
            rollout = _Rollout(worker, files, partition, outputs, result.acc)
            if worker.trl:
                rollout.build_trl(branches, layer2)
            else:
                rollout.build(rollout_id, branches, layer2, result)
    finally:
        files.close()
        for lines in outputs.values():  # every one closed; a failure raised after
            try:
                lines.close()
            except OSError as exc:
                failed.append(exc)
    if failed:  # (an exception already on its way is not replaced by it)
        raise failed[0]
    if not result.duplicates:  # else the rejects file takes their input lines from it
        group.remove_partition(directory, partition)
    result.outputs = {name: (lines.path, lines.count) for name, lines in outputs.items()}
    return result


class _Rollout:
    def __init__(
        self,
        worker: Worker,
        files: group.SpillFiles,
        partition: int,
        outputs: dict[str, _Lines],
        acc: Accounting,
    ) -> None:
        self.worker = worker
        self.files = files
        self.partition = partition
        self.outputs = outputs
        self.dpo = outputs.get("dpo")
        self.ppo = outputs.get("ppo")
        self.acc = acc

    def read(self, entry: group.SpillEntry, at: int, length: int) -> bytes:
        return self.files.read(self.partition, entry.writer, at, length)

    def output(self, entry: group.SpillEntry) -> bytes:
        """The entry's own output line, from the spill."""
        at, length = group.OUTPUT.unpack_from(entry.ref)
        return self.read(entry, at, length)

    def build(
        self,
        rollout_id: str,
        branches: list[group.SpillEntry],
        layer2: list[group.SpillEntry],
        result: PartitionResult,
    ) -> None:
        acc = self.acc
        plugin_pair = layer2[0] if layer2 and layer2[0].kind == group.KIND_DPO else None
        wanted = branches and (self.dpo or plugin_pair)
        pair = choose_pair(branches, tasks=(b.hashes[0] for b in branches)) if wanted else None
        if isinstance(pair, tuple) and plugin_pair is not None:
            # The branch records give the rollout's pair: the plugin's DPO record repeats it.
            result.duplicates.append((pair[0], plugin_pair))
            layer2 = layer2[1:]
        if self.dpo is not None:
            if isinstance(pair, str) and plugin_pair is None:
                acc.dpo_skipped[pair] += 1
            elif isinstance(pair, tuple):
                self.dpo.add(self.dpo_line(rollout_id, *pair))
                acc.dpo_pairs += 1
        if self.ppo is not None:
            for branch in branches:  # in branch_index order
                self.ppo.add(self.output(branch))
            acc.ppo_records += len(branches)
        for entry in layer2:
            lines = self.dpo if entry.kind == group.KIND_DPO else self.ppo
            if lines is None:
                continue  # its kind of output is not wanted
            lines.add(self.output(entry))
            if entry.kind == group.KIND_DPO:
                acc.layer2_dpo += 1
            else:
                acc.layer2_ppo += 1

    def dpo_line(
        self, rollout_id: str, chosen: group.SpillEntry, rejected: group.SpillEntry
    ) -> bytes:
        """The pair's DPO line, from the conversation, answers and facts (``dpo_fact_fields``)
        the load stage carried forward (the conversation's JSON is decoded for the contract
        check, and written as it is)."""
        mine, theirs = chosen.where, rejected.where
        # The conversation, the answer and the facts, in one read: they follow each other.
        start = mine.at + mine.messages_at
        data = self.read(chosen, start, mine.at + mine.facts_at + mine.facts_len - start)
        messages = data[: mine.messages_len]
        facts_from = len(data) - mine.facts_len
        answer = data[facts_from - mine.answer_len : facts_from].decode()
        chosen_branch = orjson.loads(data[facts_from:])
        data = self.read(
            rejected, theirs.at + theirs.answer_at, theirs.answer_len + theirs.facts_len
        )
        other = data[: theirs.answer_len].decode()
        rejected_branch = orjson.loads(data[theirs.answer_len :])
        record = dpo_record(
            provenance(rollout_id, chosen.hashes, chosen_branch),
            orjson.loads(messages),
            chosen.loss_weight,
            BranchScore(chosen.branch_index, chosen.total, True, answer, chosen.rank),
            BranchScore(rejected.branch_index, rejected.total, True, other, rejected.rank),
            (
                branch_facts(chosen_branch, chosen.total),
                branch_facts(rejected_branch, rejected.total),
            ),
        )
        check = self.worker.check
        return check.line(check.dpo, record, messages)

    def build_trl(self, branches: list[group.SpillEntry], layer2: list[group.SpillEntry]) -> None:
        """The rollout's records of the trl target, from its repaired branches (spilled as
        their JSON); Layer 2 records give none (they hold no trajectory), and are counted."""
        acc = self.acc
        sft_inputs = [entry for entry in layer2 if entry.kind == group.KIND_SFT]
        for entry in layer2:
            if entry.kind != group.KIND_SFT:
                acc.trl_skipped[f"{_LAYER2_TYPES[entry.kind]}-input"] += 1
        self.sft_inputs(sft_inputs)
        if not branches:
            return
        options = self.worker.ctx.trl
        assert options is not None
        data = [orjson.loads(self.branch_json(branch)) for branch in branches]
        unmatched = sum(unmatched_results(branch["tool_call_sequence"]) for branch in data)
        if unmatched:  # results that answer no call have no turn in any record
            acc.repaired[UNMATCHED_RESULTS] += unmatched
        wanted = {_KINDS[name] for name in self.outputs}
        records = rollout_records(data, options, wanted)
        self.worker.trl_check.forget()  # the lists of the rollout before are gone
        if self.dpo is not None and records.dpo is not None:
            if isinstance(records.dpo, DpoSkip):
                acc.dpo_skipped[records.dpo.reason] += 1
            else:
                self.trl_line(self.dpo, "dpo", records.dpo)
                acc.dpo_pairs += 1
        for name, written in (("ppo", records.prompt), ("kto", records.kto), ("sft", records.sft)):
            lines = self.outputs.get(name)
            if lines is None:
                continue
            for record in written:
                self.trl_line(lines, name, record)
            if name == "ppo":
                acc.ppo_records += len(written)
            elif name == "kto":
                acc.kto_records += len(written)
                acc.trl_skipped.update(f"kto:{r}" for r in map(_kto_skip, data) if r)
            else:
                acc.sft_records += len(written)
                acc.trl_skipped.update(f"sft:{r}" for r in map(_sft_skip, data) if r)

    def sft_inputs(self, entries: list[group.SpillEntry]) -> None:
        """SFT input records (read only when SFT records are wanted): each one's line, made
        and checked by the load stage, copied from the spill."""
        lines = self.outputs.get("sft")
        if lines is None or not entries:
            return
        for entry in entries:
            lines.add(self.output(entry))
        self.acc.sft_records += len(entries)
        self.acc.sft_from_input += len(entries)

    def branch_json(self, entry: group.SpillEntry) -> bytes:
        """A branch's JSON as the load stage repaired it: its output line, or when nothing
        was repaired (no output line) its input line."""
        ref = entry.where
        if ref.output_len:
            return self.read(entry, ref.at, ref.output_len)
        return self.read(entry, ref.at + ref.raw_at, ref.raw_len)

    def trl_line(self, lines: _Lines, name: str, record: TrlRecord) -> None:
        """Write one record after checking it against the contract and for what its trainer
        reads (``targets.shape``): a record that fails is a bug in the exporter, and stops the
        run."""
        problem = self.worker.trl_check.problem(name, record)
        if problem is not None:
            raise OutputInvalidError(
                f"output trl {name} record for rollout {record.get('rollout_id')!r} is not "
                f"what its trainer reads at {problem[0]}: {problem[1]}"
            )
        lines.add(orjson.dumps(record) + b"\n")


_LAYER2_TYPES = {group.KIND_DPO: LAYER2_DPO, group.KIND_PPO: LAYER2_PPO}
#: Output name -> the ``rollout_records`` kind written to it.
_KINDS = {"dpo": "dpo", "ppo": "prompt", "kto": "kto", "sft": "sft"}


def _kto_skip(branch: BranchJson) -> str | None:
    """Why ``targets.trl.kto_records`` leaves the branch out, or None."""
    if branch.get("objective_status") == "unknown":
        return "objective-unknown"
    return None if branch["final_answer"].strip() else "blank-answer"


def _sft_skip(branch: BranchJson) -> str | None:
    """Why ``targets.trl.sft_records`` leaves the branch out, or None."""
    if not passed(branch):
        return "not-passed"
    return None if branch["final_answer"].strip() else "blank-answer"
