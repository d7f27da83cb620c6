"""Load stage, part 1: where input lines come from.

Inputs are files (``.jsonl``, ``.jsonl.gz``), directories (their ``*.jsonl`` and
``*.jsonl.gz`` files, sorted by name) and ``-`` (stdin). The work is cut into chunks of whole
lines: a plain file is cut by byte range, so a worker process reads its chunk itself; a
stream (gzip, stdin) is read by the parent and its lines are handed over as bytes. stdin is
also spooled to a temporary file so a line can be read again later (a rejected duplicate is
written verbatim).
"""

from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from wiregate.errors import UserError
from wiregate.jsonl import READ_ERRORS, open_binary

__all__ = [
    "READ_ERRORS",
    "Chunk",
    "InputSource",
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
            found = sorted(
                p
                for p in path.iterdir()
                if p.is_file() and p.name.endswith((".jsonl", ".jsonl.gz"))
            )
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


def _plain_chunks(
    source_index: int, source: InputSource, first: int, chunk_bytes: int
) -> Iterator[Chunk]:
    size = os.path.getsize(source.path)
    start, index = 0, first
    with open(source.path, "rb") as handle:
        while start < size:
            if start + chunk_bytes < size:
                handle.seek(start + chunk_bytes - 1)
                handle.readline()  # end on a line boundary
                end = min(handle.tell(), size)
            else:
                end = size
            yield Chunk(index, source_index, start, end)
            start, index = end, index + 1


def _stream_chunks(
    source_index: int, source: InputSource, first: int, chunk_bytes: int, spool: IO[bytes] | None
) -> Iterator[Chunk]:
    offset, index = 0, first
    with open_binary("-" if source.is_stdin else source.path) as handle:
        try:
            while True:
                data = handle.read(chunk_bytes)
                if not data:
                    break
                if not data.endswith(b"\n"):
                    data += handle.readline()
                if spool is not None:
                    spool.write(data)
                yield Chunk(index, source_index, offset, offset + len(data), data)
                offset, index = offset + len(data), index + 1
        except READ_ERRORS as exc:
            raise read_error(source.display, exc) from None


def iter_chunks(
    sources: list[InputSource], spool: IO[bytes] | None = None, chunk_bytes: int | None = None
) -> Iterator[Chunk]:
    """Every chunk of every source, in input order; stdin is copied into ``spool``."""
    size = chunk_bytes or CHUNK_BYTES
    index = 0
    for source_index, source in enumerate(sources):
        if source.compressed or source.is_stdin:
            stream_spool = spool if source.is_stdin else None
            chunks = _stream_chunks(source_index, source, index, size, stream_spool)
        else:
            chunks = _plain_chunks(source_index, source, index, size)
        for chunk in chunks:
            yield chunk
            index += 1


def chunk_lines(chunk: Chunk, source: InputSource) -> Iterator[tuple[int, bytes]]:
    """(offset in the source, raw line including its newline) for every line of a chunk."""
    if chunk.data is not None:
        data = chunk.data
    else:
        try:
            with open(source.path, "rb") as handle:
                handle.seek(chunk.offset)
                data = handle.read(chunk.end - chunk.offset)
        except OSError as exc:
            raise read_error(source.display, exc) from None
    position = 0
    size = len(data)
    while position < size:
        newline = data.find(b"\n", position)
        end = size if newline < 0 else newline + 1
        yield chunk.offset + position, data[position:end]
        position = end


def read_line_at(source: InputSource, offset: int) -> bytes:
    """The line that starts at ``offset`` of a source (a seekable file or stdin's spool)."""
    opener = gzip.open if source.compressed else open
    with opener(source.path, "rb") as handle:
        handle.seek(offset)
        return handle.readline()
