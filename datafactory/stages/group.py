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

What is spilled is what the build stage needs (``SpillEntry``): the load stage has already
turned each record into its own output line (a branch's PPO record, a converted Layer 2
record) and checked its task against the eval items, so the build stage parses no input
again; it only ranks, pairs and applies G3 per rollout. Data moves forward only: a frame
holds the entries' bytes (output line, a branch's conversation and answer, the input line
for the rejects file) and then the entries, small facts with a ``ref`` into those bytes. The
build stage reads only the entries, so its memory follows the number of records of a
rollout times a few hundred bytes (a rollout of 300,000 branches fits in 300 MB), and the
bytes are read back by range when written out. Entries travel as ``marshal`` frames: the
fastest codec of the standard library for ints, strings and bytes, and the spill never
outlives the run that wrote it. Each process appends to files of its own
(``partition-<p>-<pid>.spill``), so no two writers share a file.

Output order is fixed by the data alone: by (CRC-32 of rollout_id, rollout_id), then record
kind, branch index and input position. The partition is the top k bits of the CRC, so
concatenating the partitions in order gives exactly that order whatever k is, and whatever
the order in which the input lines or the workers came.
"""

from __future__ import annotations

import hashlib
import marshal
import math
import os
import struct
import zlib
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import groupby
from typing import NamedTuple, cast

from datafactory.manifest import DUPLICATE_BRANCH, DUPLICATE_PAIR, Accounting
from datafactory.outputs import AtomicOutput, naming, reject_line
from datafactory.records import LossWeightTokens
from datafactory.repair import BRANCH, LAYER2_DPO, LAYER2_PPO
from datafactory.sources import InputSource

__all__ = [
    "KIND_BRANCH",
    "KIND_DPO",
    "KIND_PPO",
    "KIND_SFT",
    "OUTPUT",
    "Partitioning",
    "Ref",
    "SpillEntry",
    "SpillFiles",
    "SpillWriter",
    "Spilled",
    "answer_key",
    "duplicate_reason",
    "read_partition",
    "reject_duplicates",
    "remove_partition",
    "rollout_key",
    "spill_path",
    "split_rollout",
]

KIND_BRANCH, KIND_DPO, KIND_PPO, KIND_SFT = 0, 1, 2, 3  # KIND_SFT: an SFT input record
TARGET_PARTITION_BYTES = 8 * 1024 * 1024
MAX_BITS = 9  # at most 512 partitions (open files while spilling)
STDIN_BITS = 8  # unknown size: 256 partitions
GZIP_RATIO = 5  # guess at the decompressed size of a .gz input


class SpillEntry(NamedTuple):
    """What the build stage needs of one accepted record to rank and pair it: small facts,
    its bytes (output line, conversation, answer, input line) left in the spill file where
    ``ref`` finds them. (A named tuple: one is made per record on each side of the spill,
    and a frozen dataclass costs ten times as much.) Its fields in order are the output
    order (``(key, rollout_id, kind, branch_index, seq)`` is unique), so a list of them
    sorts without a key.

    Its branch fields make it a ``datafactory.rank.Ranked``."""

    key: int  # CRC-32 of the rollout_id
    rollout_id: str
    kind: int
    branch_index: int  # Layer 2: the record's branch (PPO) or chosen branch (DPO)
    seq: int  # the load chunk's index << 32 | line number inside the chunk: input order
    source_index: int
    g3_hit: str  # its task's (or prompt's) G3 candidates, newline-separated, or ""
    hashes: tuple[str, str]  # the task's (task_hash, n_gram_hash), for the provenance
    total: float  # branch: raw total score
    usable: bool  # branch: objective_status is not "unknown"
    final_answer: str  # branch: the answer, or a digest standing for a long one (answer_key)
    rank: int  # branch: as given (or computed)
    rank_given: bool  # branch: the input carried its rank
    loss_weight: LossWeightTokens  # branch: of its conversation
    writer: int  # the process that spilled it: its spill file is partition-<p>-<writer>
    ref: bytes  # where its bytes are in that file (``Ref``)

    @property
    def chunk(self) -> int:
        return self.seq >> 32

    @property
    def line(self) -> int:
        return self.seq & 0xFFFFFFFF

    @property
    def where(self) -> Ref:
        return Ref._make(_REF.unpack(self.ref))


class Ref(NamedTuple):
    """Offsets in a spill file: an entry's bytes start at ``at``; the others are relative."""

    at: int
    output_len: int  # its own output line (a branch's PPO record, a Layer 2 record's)
    messages_at: int  # the JSON of a branch's conversation (inside its PPO line, or after)
    messages_len: int
    answer_at: int  # a branch's final answer, UTF-8 (when DPO records are wanted)
    answer_len: int
    facts_at: int  # a branch's ``DPO_FACT_KEYS`` of its input line, JSON (DPO records wanted)
    facts_len: int
    raw_at: int  # the input line, for the rejects file should it be a duplicate
    raw_len: int


_REF = struct.Struct("<10Q")
#: (at, output_len) at the start of a ``ref``: ``OUTPUT.unpack_from(entry.ref)``.
OUTPUT = struct.Struct("<QQ")
#: Answers longer than this rank by a digest (the text stays in the spill file).
SHORT_ANSWER = 32


def answer_key(answer: str) -> str:
    """What ranking keeps of an answer: the answer, or (a long one with a word) a 33-letter
    digest that no answer of at most ``SHORT_ANSWER`` letters equals: equal texts, equal
    keys; an empty or blank answer stays what it is."""
    if len(answer) <= SHORT_ANSWER or not answer.strip():
        return answer
    digest = hashlib.blake2b(answer.encode("utf-8"), digest_size=16)
    return "#" + digest.hexdigest()


class Spilled(NamedTuple):
    """An entry to spill: its facts (``SpillEntry`` up to ``loss_weight``) and its bytes."""

    facts: tuple[object, ...]
    output: bytes
    messages: bytes  # b"": the conversation is inside ``output``, at ``messages_at``
    messages_at: int
    messages_len: int
    answer: bytes
    dpo_facts: bytes  # a branch's ``DPO_FACT_KEYS`` of its input, JSON (DPO records wanted)
    raw: bytes


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
        if any(s.is_stream for s in sources):
            return cls(STDIN_BITS)
        size = sum(os.path.getsize(s.path) * (GZIP_RATIO if s.compressed else 1) for s in sources)
        wanted = max(1, math.ceil(size / TARGET_PARTITION_BYTES))
        return cls(min(MAX_BITS, math.ceil(math.log2(wanted))))


_FRAME = struct.Struct("<QQ")  # bytes of the payload, then of the entries
_IOV_MAX = 1024  # buffers per writev


class SpillWriter:
    """Appends frames to this process's file of each partition (opened on first use, kept
    open: a worker writes to the same partitions chunk after chunk). A frame is the entries'
    bytes, then the entries (``marshal``), each with a ``ref`` into those bytes."""

    def __init__(self, directory: str, partitioning: Partitioning) -> None:
        self.directory = directory
        self.partitioning = partitioning
        self.pid = os.getpid()
        self._files: dict[int, tuple[int, int]] = {}  # partition -> (descriptor, size)

    def write(self, spilled: Iterable[Spilled]) -> set[int]:
        """Spill the entries; returns the partitions written to."""
        buckets: defaultdict[int, list[Spilled]] = defaultdict(list)
        for item in spilled:
            buckets[self.partitioning.of(cast(int, item.facts[0]))].append(item)
        for partition, items in buckets.items():
            if partition not in self._files:  # known at once: closed even if a write fails
                self._files[partition] = (self._open(partition), 0)
            fd, size = self._files[partition]
            at = size + _FRAME.size
            parts: list[bytes] = []
            entries = []
            pack, pid = _REF.pack, self.pid
            for item in items:
                output, messages, answer, raw = item.output, item.messages, item.answer, item.raw
                facts = item.dpo_facts
                messages_at = len(output) if messages else item.messages_at
                answer_at = len(output) + len(messages)
                facts_at = answer_at + len(answer)
                raw_at = facts_at + len(facts)
                ref = pack(
                    at, len(output), messages_at, item.messages_len, answer_at, len(answer),
                    facts_at, len(facts), raw_at, len(raw),
                )  # fmt: skip
                entries.append((*item.facts, pid, ref))
                parts += (output, messages, answer, facts, raw)
                at += raw_at + len(raw)
            payload = sum(map(len, parts))
            frame = marshal.dumps(entries)
            vectors = [_FRAME.pack(payload, len(frame)), *parts, frame]
            try:
                for start in range(0, len(vectors), _IOV_MAX):  # written in place, not joined
                    _write_all(fd, vectors[start : start + _IOV_MAX])
            except OSError as exc:
                raise naming(exc, spill_path(self.directory, partition, self.pid)) from None
            self._files[partition] = (fd, size + _FRAME.size + payload + len(frame))
        return set(buckets)

    def _open(self, partition: int) -> int:
        path = spill_path(self.directory, partition, self.pid)
        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)

    def close(self) -> None:
        for fd, _ in self._files.values():
            os.close(fd)
        self._files.clear()


def spill_path(directory: str, partition: int, writer: int) -> str:
    return os.path.join(directory, f"partition-{partition:04d}-{writer}.spill")


def _write_all(fd: int, parts: list[bytes]) -> None:
    """All parts, with one system call in the usual case (and no copy of them)."""
    written = os.writev(fd, parts)
    total = sum(map(len, parts))
    rest = memoryview(b"".join(parts))[written:] if written < total else None
    while rest:
        rest = rest[os.write(fd, rest) :]


def _partition_files(directory: str, partition: int) -> list[str]:
    prefix = f"partition-{partition:04d}-"
    return sorted(os.path.join(directory, n) for n in os.listdir(directory) if n.startswith(prefix))


def remove_partition(directory: str, partition: int) -> None:
    """Delete the partition's spill files, once built (in the worker: the run's end has less
    to delete, and no one waits for it)."""
    for path in _partition_files(directory, partition):
        os.unlink(path)


def read_partition(directory: str, partition: int) -> Iterator[tuple[str, list[SpillEntry]]]:
    """(rollout_id, its entries sorted) for every rollout of a partition, in output order.
    Only the entries are read; their bytes stay in the files (``SpillFiles``)."""
    entries: list[SpillEntry] = []
    for path in _partition_files(directory, partition):
        with open(path, "rb") as handle:
            while header := handle.read(_FRAME.size):
                payload, size = _FRAME.unpack(header)
                handle.seek(payload, os.SEEK_CUR)
                entries += map(SpillEntry._make, marshal.loads(handle.read(size)))
    entries.sort()  # the fields' order is the output order
    for (_, rollout_id), group in groupby(entries, key=_rollout):
        yield rollout_id, list(group)


def _rollout(entry: SpillEntry) -> tuple[int, str]:
    return entry.key, entry.rollout_id


class SpillFiles:
    """Reads an entry's bytes back from the spill files: a small file is read once, whole
    (the build stage reads nearly all of a partition's bytes, one range per record), while
    at most ``WHOLE_BYTES`` are held; a larger one by range (``os.pread``: no file
    position, one system call per range), so memory stays bounded whatever the partition's
    size (one rollout of 300,000 branches)."""

    WHOLE_BYTES = 32 * 1024 * 1024

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self._fds: dict[tuple[int, int], int] = {}
        self._whole: dict[tuple[int, int], bytes] = {}
        self._held = 0

    def read(self, partition: int, writer: int, at: int, length: int) -> bytes:
        key = (partition, writer)
        whole = self._whole.get(key)
        if whole is not None:
            if at + length > len(whole):
                raise OSError(f"spill file of partition {partition} is short")
            return whole[at : at + length]
        fd = self._fds.get(key)
        if fd is None:
            fd = self._fds[key] = os.open(
                spill_path(self.directory, partition, writer), os.O_RDONLY
            )
            size = os.fstat(fd).st_size
            if self._held + size <= self.WHOLE_BYTES:
                self._whole[key] = _pread_all(fd, size, 0, partition)
                self._held += size
                return self.read(partition, writer, at, length)
        return _pread_all(fd, length, at, partition)

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()
        self._whole.clear()
        self._held = 0


def _pread_all(fd: int, length: int, at: int, partition: int) -> bytes:
    data = os.pread(fd, length, at)
    while len(data) < length:  # a short read: go on from where it stopped
        more = os.pread(fd, length - len(data), at + len(data))
        if not more:
            raise OSError(f"spill file of partition {partition} is short")
        data += more
    return data


def split_rollout(
    entries: list[SpillEntry],
) -> tuple[list[SpillEntry], list[SpillEntry], list[tuple[SpillEntry, SpillEntry]]]:
    """(branches, Layer 2 records, duplicates) of one rollout's sorted entries; each duplicate
    is paired with the record kept in its place, and exports nothing.

    * One record per branch: of the branch records and Layer 2 PPO records with the same
      ``branch_index``, a branch record is kept (the plugin derived its records from the
      branches), else the first in input order.
    * SFT input records (``--target trl --format sft``) come last among the Layer 2
      records, in input order, and are never duplicates.
    * One DPO pair per rollout: of several Layer 2 DPO records, the first in input order is
      kept (first among the Layer 2 records returned); the build stage drops it too when the
      rollout's branch records give a pair.
    """
    branches: list[SpillEntry] = []
    layer2: list[SpillEntry] = []
    duplicates: list[tuple[SpillEntry, SpillEntry]] = []
    kept: dict[int, SpillEntry] = {}  # branch_index -> the record kept for that branch
    pairs: list[SpillEntry] = []  # Layer 2 DPO records
    sft: list[SpillEntry] = []  # SFT input records: each its own, never a duplicate
    for entry in entries:  # branches, then DPO, PPO, SFT records; each by branch index
        if entry.kind == KIND_DPO:
            pairs.append(entry)
            continue
        if entry.kind == KIND_SFT:
            sft.append(entry)
            continue
        first = kept.get(entry.branch_index)
        if first is not None:
            duplicates.append((first, entry))
            continue
        kept[entry.branch_index] = entry
        (branches if entry.kind == KIND_BRANCH else layer2).append(entry)
    if pairs:
        pairs.sort(key=lambda e: e.seq)  # input order
        duplicates.extend((pairs[0], pair) for pair in pairs[1:])
        layer2.insert(0, pairs[0])  # DPO before PPO, as sorted
    return branches, layer2 + sft, duplicates


def duplicate_reason(kept: SpillEntry, dropped: SpillEntry, where: str) -> tuple[str, str]:
    """(reject code, detail) of a record ``split_rollout`` (or the build stage) found to
    repeat ``kept``, which is at ``where``."""
    if dropped.kind == KIND_DPO:
        if kept.kind == KIND_BRANCH:
            return DUPLICATE_PAIR, (
                f"a DPO record for rollout {dropped.rollout_id!r}, whose branch records give "
                f"its pair (branch {kept.branch_index} at {where})"
            )
        return DUPLICATE_PAIR, (
            f"a second DPO record for rollout {dropped.rollout_id!r}; first seen at {where}"
        )
    key = f"(rollout_id, branch_index) = ({dropped.rollout_id!r}, {dropped.branch_index})"
    if kept.kind == KIND_BRANCH and dropped.kind == KIND_PPO:
        return (
            DUPLICATE_BRANCH,
            f"duplicate {key}; the branch record at {where} gives its PPO record",
        )
    return DUPLICATE_BRANCH, f"duplicate {key}; first seen at {where}"


def reject_duplicates(
    duplicates: list[tuple[int, SpillEntry, SpillEntry]],
    sources: list[InputSource],
    line_base: dict[int, int],
    acc: Accounting,
    rejects: AtomicOutput | None,
    files: SpillFiles,
) -> None:
    """Count each (partition, kept, dropped) duplicate as rejected, and write its input line
    (from the spill) to ``rejects``; ``line_base``: the lines before each load chunk."""
    for partition, kept, dropped in duplicates:
        where = f"{sources[kept.source_index].display}:{line_base[kept.chunk] + kept.line}"
        code, detail = duplicate_reason(kept, dropped, where)
        acc.rejected[code] += 1
        acc.by_type[_RECORD_TYPES[dropped.kind]] -= 1
        if rejects is not None:
            ref = dropped.where
            raw = files.read(partition, dropped.writer, ref.at + ref.raw_at, ref.raw_len)
            number = line_base[dropped.chunk] + dropped.line
            display = sources[dropped.source_index].display
            rejects.write(reject_line(display, number, code, detail, raw), 1)


_RECORD_TYPES = {KIND_BRANCH: BRANCH, KIND_DPO: LAYER2_DPO, KIND_PPO: LAYER2_PPO}
