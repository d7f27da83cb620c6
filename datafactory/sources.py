"""Load stage, part 1: where input lines come from.

Inputs are files (``.jsonl``, ``.jsonl.gz``), directories (their ``*.jsonl`` and
``*.jsonl.gz`` files, sorted by name) and ``-`` (stdin). The work is cut into chunks of whole
lines: a plain file is cut by byte range, so a worker process reads its chunk itself; a
stream (gzip, stdin) is read by the parent and its lines are handed over as bytes. stdin is
also spooled to a temporary file so a line can be read again later (a rejected duplicate is
written verbatim).

Memory is bounded whatever the lines: everything is read in blocks, and a line longer than
``max_line_bytes`` is never held whole (``wiregate.jsonl.read_lines``): only its first
bytes and its length travel on, to be rejected as ``line-too-long``.
"""

from __future__ import annotations

import errno
import gzip
import os
import stat
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from wiregate.errors import UserError
from wiregate.jsonl import (
    BLOCK_BYTES,
    DEFAULT_MAX_LINE_BYTES,
    LINE_HEAD_BYTES,
    READ_ERRORS,
    RawLine,
    open_binary,
    read_lines,
)

__all__ = [
    "READ_ERRORS",
    "Chunk",
    "InputSource",
    "RawLine",
    "chunk_lines",
    "expand_inputs",
    "iter_chunks",
    "read_error",
    "read_line_at",
]

CHUNK_BYTES = 8 * 1024 * 1024

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
    path: str  # "-" for stdin; replaced by the spool file once stdin has been read
    compressed: bool

    @property
    def is_stdin(self) -> bool:
        return self.display == "-"


def _source(path: str) -> InputSource:
    return InputSource(path, path, path.endswith(".gz"))


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
            raise UserError(f"{given}: no such file")
    if sum(s.is_stdin for s in sources) > 1:
        raise UserError("-: stdin can be given only once")
    return sources


def _directory_entry(path: Path) -> Path | None:
    """``path`` if it is a ``*.jsonl[.gz]`` regular file (a symlink to one will do); None for
    a regular file or directory by another name (a README, a subfolder: not inputs).
    Anything else is an input error naming it, not a silent skip: a dangling symlink, a
    link loop, a FIFO, a device, a socket, an unreadable or non-regular ``*.jsonl``."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            reason = "a symlink loop"
        else:
            reason = "a dangling symlink" if path.is_symlink() else "cannot read"
        raise UserError(f"{path}: {reason} in an input directory ({exc.strerror})") from None
    is_input = path.name.endswith((".jsonl", ".jsonl.gz"))
    if stat.S_ISREG(mode) or (stat.S_ISDIR(mode) and not is_input):
        if not is_input or stat.S_ISDIR(mode):
            return None
        if not os.access(path, os.R_OK):
            raise UserError(f"{path}: cannot read: permission denied")
        return path
    raise UserError(f"{path}: not a regular file, in an input directory")


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
            yield Chunk(index, source_index, start, end)
            start, index = end, index + 1


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


def _stream_chunks(
    source_index: int,
    source: InputSource,
    first: int,
    chunk_bytes: int,
    spool: IO[bytes] | None,
    max_line_bytes: int,
) -> Iterator[Chunk]:
    offset, index = 0, first
    with open_binary("-" if source.is_stdin else source.path) as handle:

        def read(size: int) -> bytes:
            data = handle.read(size)  # bounded: a gzip stream inflates at most this much
            if spool is not None:
                spool.write(data)
            return data

        try:
            pending = b""  # the start of a line whose end is not read yet
            while block := read(chunk_bytes):
                data = pending + block
                cut = data.rfind(b"\n") + 1
                pending = data[cut:]
                if cut:
                    yield Chunk(index, source_index, offset, offset + cut, data[:cut])
                    offset, index = offset + cut, index + 1
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


def iter_chunks(
    sources: list[InputSource],
    spool: IO[bytes] | None = None,
    chunk_bytes: int | None = None,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> Iterator[Chunk]:
    """Every chunk of every source, in input order; stdin is copied into ``spool``."""
    size = chunk_bytes or CHUNK_BYTES
    index = 0
    for source_index, source in enumerate(sources):
        if source.compressed or source.is_stdin:
            stream_spool = spool if source.is_stdin else None
            chunks = _stream_chunks(source_index, source, index, size, stream_spool, max_line_bytes)
        else:
            chunks = _plain_chunks(source_index, source, index, size)
        for chunk in chunks:
            yield chunk
            index += 1


def chunk_lines(
    chunk: Chunk, source: InputSource, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
) -> Iterator[RawLine]:
    """Every line of a chunk (its offset in the source, the raw line with its newline, ...);
    a line over ``max_line_bytes`` comes as its head and length only."""
    if chunk.long_line:
        yield RawLine(chunk.offset, chunk.data or b"", chunk.long_line, True)
        return
    if chunk.data is not None:
        data = chunk.data
        position, size = 0, len(data)
        while position < size:
            newline = data.find(b"\n", position)
            end = size if newline < 0 else newline + 1
            length = end - position - (newline >= 0)
            if length > max_line_bytes:
                yield RawLine(
                    chunk.offset + position,
                    data[position : position + LINE_HEAD_BYTES],
                    length,
                    True,
                )
            else:
                yield RawLine(chunk.offset + position, data[position:end], length, False)
            position = end
        return
    try:
        with open(source.path, "rb") as handle:
            handle.seek(chunk.offset)
            remaining = chunk.end - chunk.offset

            def read(size: int) -> bytes:
                nonlocal remaining
                data = handle.read(min(size, remaining))
                remaining -= len(data)
                return data

            yield from read_lines(read, max_line_bytes, chunk.offset)
    except OSError as exc:
        raise read_error(source.display, exc) from None


def read_line_at(
    source: InputSource, offset: int, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
) -> bytes:
    """The line that starts at ``offset`` of a source (a seekable file or stdin's spool), at
    most ``max_line_bytes`` and its newline (it was read once within the limit; a file
    changed since is caught by the run's check of it)."""
    opener = gzip.open if source.compressed else open
    with opener(source.path, "rb") as handle:
        handle.seek(offset)
        return handle.readline(max_line_bytes + 1)
