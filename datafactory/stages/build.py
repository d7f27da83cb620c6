"""Build stage, per partition: group by ``rollout_id``, rank, pick the DPO pair, apply G3,
and say which bytes each output gets, in order. The DPO record of a pair is made here; every
other output line was made by the load stage and stays in the spill file: the result names
its range (``Piece``), and the parent copies it into the output.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

import orjson

from datafactory.contamination import Contamination, first_confirmed
from datafactory.manifest import Accounting
from datafactory.pairs import choose_pair, dpo_record, provenance
from datafactory.rank import rank_disagreements
from datafactory.stages import group
from datafactory.stages.load import Worker

__all__ = ["Confirmed", "PartitionResult", "build_partition"]

#: G3 candidates that an eval item holds -> (eval item id, its n-gram): ``EvalIndex.confirm``.
Confirmed = Mapping[str, tuple[str, str]]


@dataclass
class PartitionResult:
    partition: int
    # What each output gets, in order: a line made here, or (writer, at, length) of a line
    # in this partition's spill files (``refs``: three numbers per line).
    dpo: list[bytes | tuple[int, int, int]] = field(default_factory=list)
    ppo: array[int] = field(default_factory=lambda: array("Q"))
    duplicates: list[tuple[group.SpillEntry, group.SpillEntry]] = field(default_factory=list)
    contaminated: list[Contamination] = field(default_factory=list)
    acc: Accounting = field(default_factory=Accounting)

    def ppo_pieces(self) -> Iterator[tuple[int, int, int]]:
        refs = self.ppo
        return ((refs[i], refs[i + 1], refs[i + 2]) for i in range(0, len(refs), 3))


def build_partition(worker: Worker, work: tuple[int, Confirmed]) -> PartitionResult:
    """Each rollout's entries -> its outputs; ``work``: the partition and its confirmed G3
    candidates."""
    partition, confirmed = work
    result = PartitionResult(partition)
    files = group.SpillFiles(worker.ctx.spill_dir)
    try:
        for rollout_id, entries in group.read_partition(worker.ctx.spill_dir, partition):
            branches, layer2, duplicates = group.split_rollout(entries)
            del entries
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
            _build_rollout(worker, files, rollout_id, branches, layer2, result)
    finally:
        files.close()
    return result


def _build_rollout(
    worker: Worker,
    files: group.SpillFiles,
    rollout_id: str,
    branches: list[group.SpillEntry],
    layer2: list[group.SpillEntry],
    result: PartitionResult,
) -> None:
    acc = result.acc
    plugin_pair = layer2[0] if layer2 and layer2[0].kind == group.KIND_DPO else None
    pair = choose_pair(branches) if branches and (worker.dpo or plugin_pair) else None
    if isinstance(pair, tuple) and plugin_pair is not None:
        # The branch records give the rollout's pair: the plugin's DPO record repeats it.
        result.duplicates.append((pair[0], plugin_pair))
        layer2 = layer2[1:]
    if worker.dpo:
        if isinstance(pair, str) and plugin_pair is None:
            acc.dpo_skipped[pair] += 1
        elif isinstance(pair, tuple):
            result.dpo.append(_dpo_line(worker, files, result.partition, rollout_id, *pair))
            acc.dpo_pairs += 1
    output = group.OUTPUT.unpack_from
    if worker.ppo:
        refs = result.ppo
        for branch in branches:  # in branch_index order
            refs.append(branch.writer)
            refs.extend(output(branch.ref))
        acc.ppo_records += len(branches)
    for entry in layer2:
        at, length = output(entry.ref)
        if not length:
            continue  # its kind of output is not wanted
        if entry.kind == group.KIND_DPO:
            result.dpo.append((entry.writer, at, length))
            acc.layer2_dpo += 1
        else:
            result.ppo.extend((entry.writer, at, length))
            acc.layer2_ppo += 1


def _dpo_line(
    worker: Worker,
    files: group.SpillFiles,
    partition: int,
    rollout_id: str,
    chosen: group.SpillEntry,
    rejected: group.SpillEntry,
) -> bytes:
    """The pair's DPO line, from the conversation and answers the load stage carried
    forward (the conversation's JSON is decoded for the contract check, not re-encoded)."""

    def read(entry: group.SpillEntry, at: int, length: int) -> bytes:
        return files.read(partition, entry.writer, entry.where.at + at, length)

    where = chosen.where
    messages = read(chosen, where.messages_at, where.messages_len)
    answers = [read(e, e.where.answer_at, e.where.answer_len).decode() for e in (chosen, rejected)]
    record = dpo_record(
        provenance(rollout_id, chosen.hashes),
        orjson.loads(messages),
        chosen.loss_weight,
        chosen._replace(final_answer=answers[0]),
        rejected._replace(final_answer=answers[1]),
    )
    return worker.check.line(worker.check.dpo, record, messages)
