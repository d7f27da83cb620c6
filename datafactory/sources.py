"""Where input lines come from: the one reader of the exporter's inputs and its eval file.

Inputs are files (``.jsonl``, ``.jsonl.gz``), directories (their ``*.jsonl`` and
``*.jsonl.gz`` files, sorted by name), ``-`` (stdin) and records given in memory (the Python
API). The work is cut into chunks of whole lines: a plain file is cut by byte range, so a
worker process reads its chunk itself; a stream (gzip, stdin, records) is read by the parent
and its lines are handed over as bytes. A stream that is no file (stdin, records) is hashed
as it is read; every line goes forward once, never read again. A UTF-8 byte-order mark is
accepted at the start of each input, and only there (``lines``, ``file_lines``).

Memory is bounded whatever the lines: everything is read in blocks, and a line longer than
``max_line_bytes`` is never held whole (``wiregate.jsonl.read_lines``): only its first
bytes and its length travel on, to be rejected as ``line-too-long``.
"""

from __future__ import annotations

import errno
import gzip
import hashlib
import json
import math
import os
import stat
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson

from datafactory.records import to_wire
from wiregate.errors import UserError
from wiregate.exactjson import exact_integers
from wiregate.jsonl import (
    BLOCK_BYTES,
    BOM,
    DEFAULT_MAX_LINE_BYTES,
    LINE_HEAD_BYTES,
    READ_ERRORS,
    RawLine,
    after_blank_lines,
    open_binary,
    read_lines,
)

__all__ = [
    "READ_ERRORS",
    "Chunk",
    "InputHashes",
    "InputSource",
    "RawLine",
    "Watched",
    "changed",
    "expand_inputs",
    "file_lines",
    "is_input_name",
    "iter_chunks",
    "lines",
    "read_error",
    "records_source",
]

CHUNK_BYTES = 8 * 1024 * 1024
# A chunk ends after this many lines even when it holds fewer bytes: what a worker keeps per
# line until the chunk is done (a reject, a spill entry) stays bounded when lines are tiny
# (8 MiB of "[]" lines is 2.8 million rejects).
CHUNK_LINES = 65_536

# What reading a damaged gzip stream raises: a truncated stream (EOFError), a bad header or
# CRC (BadGzipFile, an OSError), damaged deflate data (zlib.error).
_GZIP_ERRORS = (EOFError, gzip.BadGzipFile, zlib.error)


def read_error(display: str, exc: Exception) -> UserError:
    """The one-line input error for a failed read of ``display`` (a file, ``-``)."""
    if isinstance(exc, _GZIP_ERRORS):
        return UserError(f"{display}: cannot read: corrupt gzip data ({exc})")
    if isinstance(exc, OSError) and exc.strerror:
        return UserError(f"{display}: cannot read: {exc.strerror}")
    return UserError(f"{display}: cannot read: {exc}")


@dataclass(frozen=True)
class InputSource:
    """One input file as the user named it (``display``) and how to open it."""

    display: str
    path: str  # "-" for stdin, "" for records
    compressed: bool
    # Records given in memory (dicts or generated records), read once, in order.
    records: Iterable[Any] | None = field(default=None, compare=False, repr=False)

    @property
    def is_stdin(self) -> bool:
        return self.display == "-"

    @property
    def is_stream(self) -> bool:
        """No file to stat, hash or cut into ranges: stdin or records."""
        return self.is_stdin or self.records is not None


def records_source(display: str, records: Iterable[Any]) -> InputSource:
    """Records in memory (dicts, the generated records of ``datafactory.records``, or JSON
    text as ``orjson.Fragment``, written as it is) as an input named ``display``: encoded as
    JSON Lines as they are read, in memory."""
    return InputSource(display, "", False, records)


#: ``--input store:DIR``: the accepted records of an ingest store (``datafactory serve``).
STORE_PREFIX = "store:"


def _store_source(given: str) -> InputSource:
    """The records of an ingest store, read from one snapshot as the run reads them; a store
    that cannot be read is an input error (exit 2), at once or when it is read."""
    from datafactory.ingest.store import StoreError, check, iter_accepted

    directory = given[len(STORE_PREFIX) :]
    try:
        check(directory)  # there, and a store: or the error is one line now
    except StoreError as exc:
        raise UserError(f"{STORE_PREFIX}{exc}") from None

    def records() -> Iterator[orjson.Fragment]:
        try:  # each record's JSON text as stored, written as it is (never parsed here)
            yield from map(orjson.Fragment, iter_accepted(directory))
        except StoreError as exc:
            raise UserError(f"{STORE_PREFIX}{exc}") from None

    return records_source(given, records())


def _source(path: str) -> InputSource:
    gzipped = path.endswith(".gz")
    if not gzipped and _starts_like_gzip(path):  # every line would be rejected, exit 0
        raise UserError(f"{path}: gzip data in a file whose name does not end in .gz")
    return InputSource(path, path, gzipped)


def _starts_like_gzip(path: str) -> bool:
    """Does the file open with gzip's magic bytes (never the start of a JSON text)? Opened
    without blocking: a FIFO put in its place since it was looked at never holds the run."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return False  # the reading itself says what is wrong
    try:
        return os.read(descriptor, 2) == b"\x1f\x8b"
    except OSError:
        return False
    finally:
        os.close(descriptor)


def _missing(path: Path) -> str:
    """What a path that names nothing readable is: a loop or a link to nothing says so."""
    if path.is_symlink():
        try:
            path.stat()
        except OSError as exc:
            return _unreachable(path, exc)
    return "no such file"


def _unreachable(path: Path, error: OSError) -> str:
    """Why ``path``, which ``stat`` refused with ``error``, cannot be read."""
    if error.errno == errno.ELOOP:
        return "a symlink loop"
    return "a dangling symlink" if path.is_symlink() else "cannot read"


def expand_inputs(paths: Sequence[str | InputSource]) -> list[InputSource]:
    """Files in the order given; a directory contributes its JSONL files sorted by name. An
    ``InputSource`` is taken as it is (a staged file shown under another name)."""
    sources: list[InputSource] = []
    for given in paths:
        if isinstance(given, InputSource):
            sources.append(given)
            continue
        if given == "-":
            sources.append(InputSource("-", "-", False))
            continue
        if given.startswith(STORE_PREFIX):
            sources.append(_store_source(given))
            continue
        path = Path(given)
        if path.is_dir():
            found = sorted(p for p in map(_directory_entry, path.iterdir()) if p is not None)
            if not found:
                raise UserError(f"{given}: directory holds no *.jsonl or *.jsonl.gz file")
            sources.extend(_source(str(p)) for p in found)
        elif path.is_file():
            if not os.access(path, os.R_OK):
                raise UserError(f"{given}: cannot read: permission denied")
            sources.append(_source(given))
        elif path.exists():
            raise UserError(f"{given}: not a regular file")
        else:
            raise UserError(f"{given}: {_missing(path)}")
    if sum(s.is_stdin for s in sources) > 1:
        raise UserError("-: stdin can be given only once")
    return sources


def is_input_name(name: str) -> bool:
    """Whether a file of that name in an input directory is an input."""
    return name.endswith((".jsonl", ".jsonl.gz"))


def _directory_entry(path: Path) -> Path | None:
    """``path`` if it is a ``*.jsonl[.gz]`` regular file (a symlink to one will do); None for
    a regular file or directory by another name (a README, a subfolder: not inputs).
    Anything else is an input error naming it, not a silent skip: a dangling symlink, a
    link loop, a FIFO, a device, a socket, an unreadable or non-regular ``*.jsonl``."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        reason = _unreachable(path, exc)
        raise UserError(f"{path}: {reason} in an input directory ({exc.strerror})") from None
    is_input = is_input_name(path.name)
    if not is_input and (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        return None
    if not stat.S_ISREG(mode):
        raise UserError(f"{path}: not a regular file, in an input directory")
    if not os.access(path, os.R_OK):
        raise UserError(f"{path}: cannot read: permission denied")
    return path


@dataclass(frozen=True)
class Chunk:
    """Whole lines of one source: a byte range of a plain file, or the bytes themselves.

    ``offset`` is where the chunk starts in the (decompressed) source, so a line's position
    is ``offset`` plus its position inside the chunk."""

    index: int
    source_index: int
    offset: int
    end: int  # exclusive; equal to offset + len(data) for a stream chunk
    data: bytes | None = None
    # A stream's line over the limit, alone in its chunk: its length (newline not counted);
    # ``data`` holds its first bytes only.
    long_line: int = 0


def _plain_chunks(
    source_index: int, source: InputSource, first: int, chunk_bytes: int
) -> Iterator[Chunk]:
    size = os.path.getsize(source.path)
    start, index = 0, first
    with open(source.path, "rb") as handle:
        while start < size:
            if start + chunk_bytes < size:
                end = min(_next_line_start(handle, start + chunk_bytes - 1), size)
            else:
                end = size
            end = _after_lines(handle, start, end)
            yield Chunk(index, source_index, start, end)
            start, index = end, index + 1


def _after_lines(handle: IO[bytes], start: int, end: int) -> int:
    """``end``, or where the line after the ``CHUNK_LINES``-th from ``start`` starts when
    that is sooner; counted reading blocks."""
    handle.seek(start)
    position, left = start, CHUNK_LINES
    while position < end and (block := handle.read(min(BLOCK_BYTES, end - position))):
        count = block.count(b"\n")
        if count >= left:
            return position + _after_newlines(block, 0, len(block), left)
        left -= count
        position += len(block)
    return end


def _after_newlines(data: bytes, start: int, stop: int, n: int) -> int:
    """Where the line after the ``n``-th newline of ``data[start:stop]`` starts, or ``stop``
    when it holds fewer. Counted in windows of as many bytes as newlines are left to find (a
    window cannot hold more): a run of blank lines costs one count, not a step a line."""
    at = start
    while n > _FIND_EACH and at < stop:
        end = min(at + n, stop)
        n -= data.count(b"\n", at, end)
        at = end
    at -= 1
    for _ in range(n):
        at = data.find(b"\n", at + 1, stop)
        if at < 0:
            return stop
    return at + 1


#: Newlines left that ``_after_newlines`` finds one by one (windows would shrink to bytes).
_FIND_EACH = 64


def _next_line_start(handle: IO[bytes], position: int) -> int:
    """Where the line after the one holding ``position`` starts (or the end of the file);
    found reading blocks, so a long line is never held."""
    handle.seek(position)
    while block := handle.read(BLOCK_BYTES):
        newline = block.find(b"\n")
        if newline >= 0:
            return position + newline + 1
        position += len(block)
    return position


_JSON_TYPES = (Mapping, list, tuple, str, int, float, type(None), orjson.Fragment)


class _Encoded:
    """Records as a byte stream of JSON Lines, encoded as they are asked for."""

    def __init__(self, display: str, records: Iterable[Any]) -> None:
        self.display = display
        self.records = iter(records)
        self.number = 0
        self.pending = b""

    def read(self, size: int) -> bytes:
        parts, have = [self.pending], len(self.pending)
        for record in self.records:
            self.number += 1
            try:  # a generated record as its JSON; JSON values (a dict, ...) as they are
                value = record if isinstance(record, _JSON_TYPES) else to_wire(record)
                line = _json_line(value)
            except (TypeError, ValueError, RecursionError) as exc:
                raise UserError(f"{self.display}:{self.number}: not a JSON value: {exc}") from None
            parts.append(line)
            have += len(line)
            if have >= size:
                break
        data = b"".join(parts)
        self.pending = data[size:]
        return data[:size]


# What orjson will not write but JSON can say: written by the standard library instead.
_JSON_CAN_SAY = (
    "Integer exceeds 64-bit range",
    "Recursion limit reached",
    "str is not valid UTF-8",
)


def _json_line(value: Any) -> bytes:
    """``value`` as the line a file would hold. What orjson will not write but JSON can say (an
    integer past 64 bits, nesting past 254 levels, a lone surrogate, escaped) is written by the
    standard library, so the run judges that line as the command judges it in a file (a
    reject, not an error that stops the run); so is a NaN or an infinity, which orjson writes
    as null, and the standard library as the ``NaN`` that a file would hold (rejected as
    invalid JSON there too). What is no JSON value (a set, bytes, a key that is not a string,
    a value that contains itself) raises, and so does nesting past the standard library's own
    limit."""
    try:
        line = orjson.dumps(value)
    except orjson.JSONEncodeError as exc:
        if not str(exc).startswith(_JSON_CAN_SAY):
            raise
        _inspect(value)  # before the standard library: see ``_inspect``
    else:
        # A null in the line may stand for a NaN: read back, the line differs from the value
        # only then (or for a tuple, read back as a list), and only then is the value walked.
        if b"null" not in line or orjson.loads(line) == value or not _inspect(value):
            return line + b"\n"
    with exact_integers():  # an integer past Python's 4,300 digits: the file a reject too
        return json.dumps(value).encode() + b"\n"


#: The longest integer written as its digits (about 0.2 s of CPU; the conversion takes
#: quadratic time): a longer one is no JSON this run can write.
_MAX_INT_BITS = 332_000  # about 100,000 digits


def _inspect(value: Any) -> bool:
    """Whether ``value`` holds a NaN or an infinity. Raises what the standard library would
    not: TypeError for a key that is not a string (it would write 1 as "1" without a word),
    ValueError for a value that contains itself (orjson stops at its depth limit, and this
    walk would go round for ever) or an integer of more than about 100,000 digits."""
    non_finite = False
    path: set[int] = set()  # the containers from the root to the one being walked
    todo: list[tuple[Any, bool]] = [(value, False)]
    while todo:
        item, done = todo.pop()
        if done:
            path.discard(id(item))
            continue
        if isinstance(item, float):
            non_finite = non_finite or not math.isfinite(item)
            continue
        if isinstance(item, int) and item.bit_length() > _MAX_INT_BITS:
            raise ValueError("an integer of more than 100,000 digits")
        if not isinstance(item, (Mapping, list, tuple)):
            continue
        if id(item) in path:
            raise ValueError("it contains itself")
        path.add(id(item))
        todo.append((item, True))
        if isinstance(item, Mapping):
            if not all(isinstance(key, str) for key in item):
                raise TypeError("Dict key must be str")
            todo.extend((child, False) for child in item.values())
        else:
            todo.extend((child, False) for child in item)
    return non_finite


def _stream_chunks(
    source_index: int,
    source: InputSource,
    first: int,
    chunk_bytes: int,
    digest: Any,
    max_line_bytes: int,
) -> Iterator[Chunk]:
    offset, index = 0, first
    with _open_stream(source) as handle:

        def read(size: int) -> bytes:
            data: bytes = handle.read(size)  # bounded: a gzip stream inflates at most this
            if digest is not None:
                digest.update(data)
            return data

        try:
            pending = b""  # the start of a line whose end is not read yet
            while block := read(chunk_bytes):
                data = pending + block
                cut = data.rfind(b"\n") + 1
                pending = data[cut:]
                many, at = data.count(b"\n", 0, cut) > CHUNK_LINES, 0
                while at < cut:  # at most CHUNK_LINES lines a chunk
                    end = _after_newlines(data, at, cut, CHUNK_LINES) if many else cut
                    yield Chunk(index, source_index, offset, offset + end - at, data[at:end])
                    offset, index, at = offset + end - at, index + 1, end
                del data
                if len(pending) > max_line_bytes:  # read past it, holding only its head
                    length, rest = _skip_line(read, len(pending))
                    end = offset + length + (1 if rest is not None else 0)
                    head = pending[:LINE_HEAD_BYTES]
                    yield Chunk(index, source_index, offset, end, head, long_line=length)
                    offset, index, pending = end, index + 1, rest or b""
            if pending:
                yield Chunk(index, source_index, offset, offset + len(pending), pending)
        except READ_ERRORS as exc:
            raise read_error(source.display, exc) from None


def _skip_line(read: Callable[[int], bytes], length: int) -> tuple[int, bytes | None]:
    """Read to the end of a line of which ``length`` bytes are read: (its length, newline
    not counted; what follows its newline, or None at the end of the input)."""
    while block := read(BLOCK_BYTES):
        newline = block.find(b"\n")
        if newline >= 0:
            return length + newline, block[newline + 1 :]
        length += len(block)
    return length, None


@contextmanager
def _open_stream(source: InputSource) -> Iterator[Any]:
    if source.records is not None:
        yield _Encoded(source.display, source.records)
        return
    with open_binary("-" if source.is_stdin else source.path) as handle:
        yield handle


def iter_chunks(
    sources: list[InputSource],
    chunk_bytes: int | None = None,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    digests: dict[int, Any] | None = None,
) -> Iterator[Chunk]:
    """Every chunk of every source, in input order. A stream with no file (stdin, records)
    is hashed as read: its sha256 object goes into ``digests`` under its source's index."""
    size = chunk_bytes or CHUNK_BYTES
    index = 0
    for source_index, source in enumerate(sources):
        if source.compressed or source.is_stream:
            digest = None
            if source.is_stream and digests is not None:
                digest = digests[source_index] = hashlib.sha256()
            chunks = _stream_chunks(source_index, source, index, size, digest, max_line_bytes)
        else:
            chunks = _plain_chunks(source_index, source, index, size)
        for chunk in chunks:
            yield chunk
            index += 1


def lines(
    chunk: Chunk, source: InputSource, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
) -> Iterator[RawLine]:
    """Every line of a chunk: its offset in the source, its bytes without the newline (and
    without a byte-order mark that opens the input), its length (the mark counted, the
    newline not), whether it is over ``max_line_bytes`` (then only its head is there), how
    many lines it stands for (a run of blank lines is one, ``b""``, found in one step)."""
    if chunk.long_line:
        yield RawLine(chunk.offset, chunk.data or b"", chunk.long_line, True)
        return
    if chunk.data is None:
        yield from _file_lines(chunk, source, max_line_bytes)
        return
    data = chunk.data
    position, size = 0, len(data)
    while position < size:
        newline = data.find(b"\n", position)
        run = after_blank_lines(data, position, max_line_bytes) if newline >= 0 else None
        if run is not None and run[1] > 1:  # blank lines: the run of them at once
            yield RawLine(chunk.offset + position, b"", 0, False, run[1])
            position = run[0]
            continue
        end = size if newline < 0 else newline
        length = end - position
        if length > max_line_bytes:
            head = data[position : position + LINE_HEAD_BYTES]
            yield RawLine(chunk.offset + position, head, length, True)
        elif chunk.offset + position == 0 and data.startswith(BOM):
            yield RawLine(0, data[len(BOM) : end], length, False)
        else:
            yield RawLine(chunk.offset + position, data[position:end], length, False)
        position = end + 1


def _stripped(line: RawLine) -> RawLine:
    """A line of ``read_lines`` as ``lines`` gives it: no newline, no opening mark."""
    if line.over:
        return line
    if line.lines > 1:
        return line._replace(data=b"")
    data = line.data
    if data[-1:] == b"\n":
        data = data[:-1]
    if line.offset == 0 and data.startswith(BOM):
        data = data[len(BOM) :]
    return RawLine(line.offset, data, line.length, False)


#: A plain file's chunk up to this size is read in one piece and split in place (a larger
#: one, a long line in it, in blocks: never held whole).
WHOLE_CHUNK_BYTES = 2 * CHUNK_BYTES


def _file_lines(chunk: Chunk, source: InputSource, max_line_bytes: int) -> Iterator[RawLine]:
    """``lines`` of a byte range of a plain file."""
    try:
        with open(source.path, "rb") as handle:
            handle.seek(chunk.offset)
            remaining = chunk.end - chunk.offset
            if remaining <= WHOLE_CHUNK_BYTES:
                data = handle.read(remaining)
                yield from lines(
                    Chunk(chunk.index, chunk.source_index, chunk.offset, chunk.end, data),
                    source,
                    max_line_bytes,
                )
                return

            def read(size: int) -> bytes:
                nonlocal remaining
                data = handle.read(min(size, remaining))
                remaining -= len(data)
                return data

            yield from map(_stripped, read_lines(read, max_line_bytes, chunk.offset))
    except OSError as exc:
        raise read_error(source.display, exc) from None


def file_lines(
    path: str, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES, digest: Any = None
) -> Iterator[RawLine]:
    """Every line of a file (``.gz`` decompressed), as ``lines`` gives them, read in blocks;
    a damaged file is a ``UserError`` naming it. ``digest`` (a hashlib object) gets the
    file's bytes (compressed or not, as stored) as they are read."""
    with _open_hashed(path, digest) as handle:
        try:
            yield from map(_stripped, read_lines(handle.read, max_line_bytes))
        except READ_ERRORS as exc:
            raise read_error(path, exc) from None


class _Hashing:
    """A file's reads, each block also given to a digest."""

    def __init__(self, handle: IO[bytes], digest: Any) -> None:
        self.handle = handle
        self.digest = digest

    def read(self, size: int = -1) -> bytes:
        data = self.handle.read(size)
        self.digest.update(data)
        return data


@contextmanager
def _open_hashed(path: str, digest: Any) -> Iterator[Any]:
    if digest is None or path == "-":
        with open_binary(path) as handle:
            yield handle
        return
    with open_binary(path) as check:  # the same refusals (a device, a directory, ...)
        check.close()
    with open(path, "rb") as raw:
        hashing: Any = _Hashing(raw, digest)
        yield gzip.GzipFile(fileobj=hashing, mode="rb") if path.endswith(".gz") else hashing


class Watched:
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
                raise changed(display)

    def unchanged(self, path: str, facts: os.stat_result) -> bool:
        return all(before == self.identity(facts) for _, p, before in self.files if p == path)


def changed(display: str) -> UserError:
    return UserError(
        f"{display}: changed while it was read (replaced, truncated or rewritten during the "
        "run); nothing written"
    )


class InputHashes:
    """sha256 of every input file, computed in a thread while the run goes on (hashlib
    releases the GIL, so this costs no worker time; start it after the workers fork). A file
    is hashed only if it is still the file the run began with (``Watched``), and the run
    checks again at its end, so the digest is of the bytes the run read. A stream with no
    file is hashed as it is read (``iter_chunks``)."""

    def __init__(self, sources: list[InputSource], watched: Watched) -> None:
        self.sources = sources
        self.watched = watched
        self.values: dict[int, str] = {}
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        for index, source in enumerate(self.sources):
            if source.is_stream:
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

    def result(self, streams: dict[int, Any]) -> list[str]:
        """Every input's digest; ``streams``: the digests ``iter_chunks`` made."""
        self._thread.join()
        digests = []
        for index, source in enumerate(self.sources):
            if source.is_stream:
                digests.append(streams[index].hexdigest())
            elif index in self.values:
                digests.append(self.values[index])
            else:
                raise changed(source.display)
        return digests
