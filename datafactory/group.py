"""Group stage: bring every branch of a rollout together, in bounded memory.

Branches of one rollout may be anywhere in the input, across files. The method chosen is a
hash-partitioned spill: the load stage appends each accepted record to one of 2^k partitions
on disk, chosen by a CRC-32 of its ``rollout_id``; the build stage then reads one partition
at a time, sorts it, and walks its rollouts. Why this and not the alternatives:

* memory is bounded by the largest partition, and k is chosen from the input size so a
  partition holds about ``TARGET_PARTITION_BYTES`` of input (1,000,000 records, 1.5 GB: 256
  partitions of about 6 MB);
* each record is written once and read once, sequentially: an external sort would read and
  write the data log(n) times, and SQLite/DuckDB would add a B-tree or a column store we
  do not need (and a dependency) to answer one query, "all records of a rollout";
* partitions are independent units, so the build stage runs on every core.

What is spilled is not the input line but what the build stage needs of it (``SpillEntry``):
the load stage has already turned each record into its own output line (a branch's PPO
record, a converted Layer 2 record) and checked its task against the eval items, so the
build stage parses no input again; it only ranks, pairs and applies G3 per rollout. A
branch's entry is about as large as its input line. Entries travel as
``marshal`` frames (a length, then a list of plain tuples): the fastest codec of the standard
library for ints, strings and bytes, and the spill never outlives the run that wrote it.
Each process appends to files of its own (``partition-<p>-<pid>.spill``), so no two writers
share a file and nothing of the spill goes through the parent process.

Output order is fixed by the data alone: by (CRC-32 of rollout_id, rollout_id), then record
kind, branch index and input position. The partition is the top k bits of the CRC, so
concatenating the partitions in order gives exactly that order whatever k is, and whatever
the order in which the input lines or the workers came.
"""

from __future__ import annotations

import marshal
import math
import os
import struct
import zlib
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import groupby
from typing import NamedTuple

from datafactory.records import LossWeightTokens
from datafactory.sources import InputSource

__all__ = [
    "KIND_BRANCH",
    "KIND_DPO",
    "KIND_PPO",
    "Partitioning",
    "SpillEntry",
    "SpillWriter",
    "read_partition",
    "rollout_key",
    "split_rollout",
]

KIND_BRANCH, KIND_DPO, KIND_PPO = 0, 1, 2
TARGET_PARTITION_BYTES = 8 * 1024 * 1024
MAX_BITS = 9  # at most 512 partitions (open files while spilling)
STDIN_BITS = 8  # unknown size: 256 partitions
GZIP_RATIO = 5  # guess at the decompressed size of a .gz input


class SpillEntry(NamedTuple):
    """One accepted record, as the build stage needs it. (A named tuple: one is made per
    record on each side of the spill, and a frozen dataclass costs ten times as much.)

    Its branch fields make it a ``datafactory.rank.Ranked``."""

    key: int  # CRC-32 of the rollout_id
    rollout_id: str
    kind: int
    branch_index: int  # Layer 2: the record's branch (PPO) or chosen branch (DPO)
    chunk: int  # index of the load chunk, in input order
    line: int  # line number inside the chunk
    offset: int  # byte offset of the line in its (decompressed) source
    source_index: int
    g3_hit: str  # its task's (or prompt's) G3 candidates, newline-separated, or ""
    hashes: tuple[str, str]  # the task's (task_hash, n_gram_hash), for the provenance
    total: float  # branch: raw total score
    usable: bool  # branch: objective_status is not "unknown"
    final_answer: str  # branch
    rank: int  # branch: as given (or computed)
    rank_given: bool  # branch: the input carried its rank
    loss_weight: LossWeightTokens  # branch: of its conversation
    output: bytes  # this record's own output line (a branch's PPO record), or b""
    messages: bytes  # branch: JSON of its conversation when DPO records are wanted and it
    # has no PPO line (which holds the conversation already), else b""

    @property
    def sort_key(self) -> tuple[int, str, int, int, int, int]:
        return (self.key, self.rollout_id, self.kind, self.branch_index, self.chunk, self.line)


def rollout_key(rollout_id: str) -> int:
    return zlib.crc32(rollout_id.encode("utf-8"))


@dataclass(frozen=True)
class Partitioning:
    bits: int

    @property
    def count(self) -> int:
        return 1 << self.bits

    def of(self, key: int) -> int:
        return key >> (32 - self.bits) if self.bits else 0

    @classmethod
    def for_inputs(cls, sources: list[InputSource]) -> Partitioning:
        if any(s.is_stdin for s in sources):
            return cls(STDIN_BITS)
        size = sum(os.path.getsize(s.path) * (GZIP_RATIO if s.compressed else 1) for s in sources)
        wanted = max(1, math.ceil(size / TARGET_PARTITION_BYTES))
        return cls(min(MAX_BITS, math.ceil(math.log2(wanted))))


_FRAME = struct.Struct("<Q")


class SpillWriter:
    """Appends frames of entries to this process's files of each partition (opened on first
    use, kept open: a worker writes to the same partitions chunk after chunk)."""

    def __init__(self, directory: str, partitioning: Partitioning) -> None:
        self.directory = directory
        self.partitioning = partitioning
        self._files: dict[int, int] = {}  # partition -> file descriptor

    def write(self, entries: Iterable[SpillEntry]) -> set[int]:
        """Spill ``entries``; returns the partitions written to."""
        buckets: defaultdict[int, list[tuple[object, ...]]] = defaultdict(list)
        for entry in entries:
            buckets[self.partitioning.of(entry.key)].append(tuple(entry))
        for partition, items in buckets.items():
            fd = self._files.get(partition)
            if fd is None:
                path = os.path.join(
                    self.directory, f"partition-{partition:04d}-{os.getpid()}.spill"
                )
                fd = self._files[partition] = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
            frame = marshal.dumps(items)
            _write_all(fd, _FRAME.pack(len(frame)), frame)
        return set(buckets)

    def close(self) -> None:
        for fd in self._files.values():
            os.close(fd)
        self._files.clear()


def _write_all(fd: int, header: bytes, frame: bytes) -> None:
    """Both parts, with one system call in the usual case (and no copy of the frame)."""
    written = os.writev(fd, [header, frame])
    rest = memoryview(header + frame)[written:] if written < len(header) + len(frame) else None
    while rest:
        rest = rest[os.write(fd, rest) :]


def _partition_files(directory: str, partition: int) -> list[str]:
    prefix = f"partition-{partition:04d}-"
    return sorted(os.path.join(directory, n) for n in os.listdir(directory) if n.startswith(prefix))


def read_partition(directory: str, partition: int) -> Iterator[tuple[str, list[SpillEntry]]]:
    """(rollout_id, its entries sorted) for every rollout of a partition, in output order."""
    entries: list[SpillEntry] = []
    for path in _partition_files(directory, partition):
        with open(path, "rb") as handle:
            data = memoryview(handle.read())  # frames are read in place, not copied out
        at = 0
        while at < len(data):
            (size,) = _FRAME.unpack_from(data, at)
            at += _FRAME.size
            entries.extend(SpillEntry._make(t) for t in marshal.loads(data[at : at + size]))
            at += size
    entries.sort(key=lambda e: e.sort_key)
    for (_, rollout_id), group in groupby(entries, key=lambda e: (e.key, e.rollout_id)):
        yield rollout_id, list(group)


def split_rollout(
    entries: list[SpillEntry],
) -> tuple[list[SpillEntry], list[SpillEntry], list[tuple[SpillEntry, SpillEntry]]]:
    """(branches, Layer 2 records, duplicates) of one rollout's sorted entries; each duplicate
    is paired with the record kept in its place, and exports nothing.

    * One record per branch: of the branch records and Layer 2 PPO records with the same
      ``branch_index``, a branch record is kept (the plugin derived its records from the
      branches), else the first in input order.
    * One DPO pair per rollout: of several Layer 2 DPO records, the first in input order is
      kept (first among the Layer 2 records returned); the build stage drops it too when the
      rollout's branch records give a pair.
    """
    branches: list[SpillEntry] = []
    layer2: list[SpillEntry] = []
    duplicates: list[tuple[SpillEntry, SpillEntry]] = []
    kept: dict[int, SpillEntry] = {}  # branch_index -> the record kept for that branch
    pairs: list[SpillEntry] = []  # Layer 2 DPO records
    for entry in entries:  # branches first, then DPO, then PPO records; each by branch index
        if entry.kind == KIND_DPO:
            pairs.append(entry)
            continue
        first = kept.get(entry.branch_index)
        if first is not None:
            duplicates.append((first, entry))
            continue
        kept[entry.branch_index] = entry
        (branches if entry.kind == KIND_BRANCH else layer2).append(entry)
    if pairs:
        pairs.sort(key=lambda e: (e.chunk, e.line))  # input order
        duplicates.extend((pairs[0], pair) for pair in pairs[1:])
        layer2.insert(0, pairs[0])  # DPO before PPO, as sorted
    return branches, layer2, duplicates
