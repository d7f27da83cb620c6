"""Group stage: bring every branch of a rollout together, in bounded memory.

Branches of one rollout may be anywhere in the input, across files. The method chosen is a
hash-partitioned spill: the load stage appends each accepted record to one of 2^k partition
files on disk, chosen by a CRC-32 of its ``rollout_id``; the build stage then reads one
partition at a time, sorts it, and walks its rollouts. Why this and not the alternatives:

* memory is bounded by the largest partition, and k is chosen from the input size so a
  partition holds about ``TARGET_PARTITION_BYTES`` (1,000,000 records, 1.4 GB: 256
  partitions of about 6 MB);
* each record is written once and read once, sequentially: an external sort would read and
  write the data log(n) times, and SQLite/DuckDB would add a B-tree or a column store we
  do not need (and a dependency) to answer one query, "all records of a rollout";
* partitions are independent units, so the build stage runs on every core.

Output order is fixed by the data alone: by (CRC-32 of rollout_id, rollout_id), then record
kind, branch index and input position. The partition is the top k bits of the CRC, so
concatenating the partitions in order gives exactly that order whatever k is, and whatever
the order in which the input lines or the workers came.
"""

from __future__ import annotations

import math
import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import groupby
from typing import IO, NamedTuple

import orjson

from datafactory.normalise import BRANCH, LAYER2_DPO, Normalised
from datafactory.sources import Chunk, InputSource

__all__ = [
    "KIND_BRANCH",
    "KIND_DPO",
    "KIND_PPO",
    "Partitioning",
    "SpillEntry",
    "SpillWriter",
    "read_partition",
    "split_rollout",
]

KIND_BRANCH, KIND_DPO, KIND_PPO = 0, 1, 2
TARGET_PARTITION_BYTES = 8 * 1024 * 1024
MAX_BITS = 9  # at most 512 partitions (open files while spilling)
STDIN_BITS = 8  # unknown size: 256 partitions
GZIP_RATIO = 5  # guess at the decompressed size of a .gz input


class SpillEntry(NamedTuple):
    """One accepted record in a partition file: where it came from and its canonical JSON.
    (A named tuple: one is made per record on each side of the spill, and a frozen dataclass
    costs ten times as much to build.)"""

    key: int  # CRC-32 of the rollout_id
    rollout_id: str
    kind: int
    branch_index: int
    chunk: int  # index of the load chunk, in input order
    line: int  # line number inside the chunk
    offset: int  # byte offset of the line in its (decompressed) source
    source_index: int
    rank_given: bool
    body: bytes

    @property
    def sort_key(self) -> tuple[int, str, int, int, int, int]:
        return (self.key, self.rollout_id, self.kind, self.branch_index, self.chunk, self.line)

    @classmethod
    def for_record(cls, record: Normalised, chunk: Chunk, line: int, offset: int) -> SpillEntry:
        data = record.data
        if record.record_type == BRANCH:
            rollout_id, kind, branch = data["rollout_id"], KIND_BRANCH, data["branch_index"]
        else:
            provenance = data["provenance"]
            rollout_id = provenance["rollout_id"]
            kind = KIND_DPO if record.record_type == LAYER2_DPO else KIND_PPO
            branch = provenance.get("branch_index", provenance.get("chosen_branch", 0))
        key = zlib.crc32(rollout_id.encode("utf-8"))
        return cls(
            key,
            rollout_id,
            kind,
            branch,
            chunk.index,
            line,
            offset,
            chunk.source_index,
            record.rank_given,
            b"",
        )

    def header(self) -> bytes:
        # orjson never writes a raw tab, so the first tab of a spill line ends the header.
        return orjson.dumps(
            [
                self.key,
                self.rollout_id,
                self.kind,
                self.branch_index,
                self.chunk,
                self.line,
                self.offset,
                self.source_index,
                self.rank_given,
            ]
        )


@dataclass(frozen=True)
class Partitioning:
    bits: int

    @property
    def count(self) -> int:
        return 1 << self.bits

    def of(self, key: int) -> int:
        return key >> (32 - self.bits) if self.bits else 0

    def encode(self, entry: SpillEntry, body: bytes) -> tuple[int, bytes]:
        """(partition, spill line) for a record whose canonical JSON is ``body``."""
        return self.of(entry.key), entry.header() + b"\t" + body + b"\n"

    @classmethod
    def for_inputs(cls, sources: list[InputSource]) -> Partitioning:
        if any(s.is_stdin for s in sources):
            return cls(STDIN_BITS)
        size = sum(os.path.getsize(s.path) * (GZIP_RATIO if s.compressed else 1) for s in sources)
        wanted = max(1, math.ceil(size / TARGET_PARTITION_BYTES))
        return cls(min(MAX_BITS, math.ceil(math.log2(wanted))))


def _path(directory: str, partition: int) -> str:
    return os.path.join(directory, f"partition-{partition:04d}.spill")


class SpillWriter:
    """Appends spill lines to the partition files (opened on first use)."""

    def __init__(self, directory: str, partitioning: Partitioning) -> None:
        self.directory = directory
        self.partitioning = partitioning
        self._files: dict[int, IO[bytes]] = {}

    def write(self, parts: dict[int, bytes]) -> None:
        for partition, data in parts.items():
            handle = self._files.get(partition)
            if handle is None:
                handle = self._files[partition] = open(  # noqa: SIM115
                    _path(self.directory, partition), "ab", buffering=256 * 1024
                )
            handle.write(data)

    def close(self) -> None:
        for handle in self._files.values():
            handle.close()

    def used(self) -> list[int]:
        return sorted(self._files)


def _parse(line: bytes) -> SpillEntry:
    header, _, body = line.partition(b"\t")
    key, rollout_id, kind, branch, chunk, number, offset, source, rank_given = orjson.loads(header)
    return SpillEntry(
        key, rollout_id, kind, branch, chunk, number, offset, source, rank_given, body[:-1]
    )


def read_partition(directory: str, partition: int) -> Iterator[tuple[str, list[SpillEntry]]]:
    """(rollout_id, its entries sorted) for every rollout of a partition, in output order."""
    with open(_path(directory, partition), "rb") as handle:
        entries = [_parse(line) for line in handle]
    entries.sort(key=lambda e: e.sort_key)
    for (_, rollout_id), group in groupby(entries, key=lambda e: (e.key, e.rollout_id)):
        yield rollout_id, list(group)


def split_rollout(
    entries: list[SpillEntry],
) -> tuple[list[SpillEntry], list[SpillEntry], list[tuple[SpillEntry, SpillEntry]]]:
    """(branches, Layer 2 records, duplicates) of one rollout. Of several branch records
    with the same ``branch_index``, the first in input order is kept; each later one is a
    duplicate, paired with the kept one."""
    branches: list[SpillEntry] = []
    layer2: list[SpillEntry] = []
    duplicates: list[tuple[SpillEntry, SpillEntry]] = []
    for entry in entries:
        if entry.kind != KIND_BRANCH:
            layer2.append(entry)
        elif branches and branches[-1].branch_index == entry.branch_index:
            duplicates.append((branches[-1], entry))
        else:
            branches.append(entry)
    return branches, layer2, duplicates
