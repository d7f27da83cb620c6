"""Reading records from JSON and JSONL files (also gzip-compressed, also stdin).

A file's name says how it is laid out: ``.json`` (``.json.gz``) holds one document, any other
name JSON Lines. Stdin has no name, so its first lines say (:func:`_stdin_is_document`); JSON
Lines are streamed line by line either way. A UTF-8 byte-order mark is accepted at the start of
an input, and only there (as Python's ``json.loads`` does for bytes).

Memory is bounded whatever the input: lines are read in blocks (``read_lines``), and a line
longer than the limit is never held whole, only its first ``LINE_HEAD_BYTES`` and its length;
a one-document input is read up to ``MAX_DOCUMENT_BYTES``; a device (``/dev/zero``) is
refused. ``datafactory`` reads its inputs and eval items with the same ``read_lines``.
Time is bounded too: a run of blank lines is found with one regular-expression match and
handed on as one ``RawLine`` (``lines`` of them), not a Python step a line.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import stat
import sys
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import IO, Any, NamedTuple, cast

import orjson

from wiregate.errors import UserError

__all__ = [
    "BOM",
    "DEFAULT_MAX_LINE_BYTES",
    "LINE_HEAD_BYTES",
    "MAX_DOCUMENT_BYTES",
    "READ_ERRORS",
    "Line",
    "RawLine",
    "RecordInput",
    "after_blank_lines",
    "is_json_document",
    "open_binary",
    "open_records",
    "read_lines",
    "too_long",
]

_GZIP_MAGIC = b"\x1f\x8b"
BOM = b"\xef\xbb\xbf"

#: What reading a possibly compressed stream raises on damaged input: a truncated gzip member
#: ends in EOFError, corrupt deflate data in zlib.error, a bad header or CRC in an OSError.
READ_ERRORS = (OSError, EOFError, zlib.error)

#: Longer lines are not read whole: only their head and length are kept.
DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024
#: How much of an over-long line is kept (in a rejects file, an error message).
LINE_HEAD_BYTES = 1024
#: The most a one-document input (``.json``) may hold.
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
BLOCK_BYTES = 1024 * 1024


class RawLine(NamedTuple):
    """One line as read: whole (with its newline, if it had one), or only its head; or a run
    of blank lines (``lines`` of them, ``length`` 0, ``data`` only their bytes)."""

    offset: int  # of its first byte in the stream
    data: bytes  # the line, or its first LINE_HEAD_BYTES when over the limit
    length: int  # bytes in the line, its newline not counted
    over: bool  # longer than the limit: ``data`` is only its head
    lines: int = 1  # lines it stands for: more than one only for a run of blank lines


# Empty lines, with or without the carriage return of a CRLF line end.
# What ``bytes.strip`` empties: the bytes of a blank line.
_BLANK_BYTES = frozenset(b" \t\r\x0b\x0c\n")
_BLANK_RUNS: dict[int, re.Pattern[bytes]] = {}  # max_line_bytes -> a run of blank lines


def after_blank_lines(data: bytes, position: int, max_line_bytes: int) -> tuple[int, int] | None:
    """Where the run of blank lines (empty, or only spaces, tabs and carriage returns: what
    ``bytes.strip`` empties; each within ``max_line_bytes``) that starts at ``position`` (a
    line's start) ends in ``data``, and how many lines it holds; None when the line there is
    not blank. Found in one step, so a billion blank lines cost no Python step each, whichever
    line ends or spaces they have; a blank line over the limit ends the run (it is too long)."""
    if data[position] not in _BLANK_BYTES:  # a record's line: one look
        return None
    pattern = _BLANK_RUNS.get(max_line_bytes)
    if pattern is None:  # no backtracking: the newline is not among the repeated bytes
        pattern = re.compile(rb"(?:[ \t\r\x0b\x0c]{0,%d}\n)+" % max_line_bytes)
        _BLANK_RUNS[max_line_bytes] = pattern
    run = pattern.match(data, position)
    if run is None:
        return None
    return run.end(), data.count(b"\n", position, run.end())


def too_long(length: int, limit: int) -> str:
    """What is wrong with a line of ``length`` bytes over ``limit``."""
    return f"{length} bytes, more than the limit of {limit}"


def read_lines(
    read: Callable[[int], bytes], max_line_bytes: int, offset: int = 0, block: int = BLOCK_BYTES
) -> Iterator[RawLine]:
    """The lines of a stream read by ``read(block)``; memory stays within ``max_line_bytes``
    plus a block whatever the line lengths. ``offset``: where the stream starts."""
    pieces: list[bytes] = []  # of the line being read, while within the limit
    head = b""  # of the line being read, once over the limit
    length = 0  # of the line being read so far, its newline included
    start = offset
    while data := read(block):
        position, size = 0, len(data)
        while position < size:
            newline = data.find(b"\n", position)
            end = size if newline < 0 else newline + 1
            if not length and newline >= 0 and end - position - 1 <= max_line_bytes:
                run = after_blank_lines(data, position, max_line_bytes)
                if run is not None and run[1] > 1:  # blank lines: the run of them at once
                    end = run[0]
                    yield RawLine(start, data[position:end], 0, False, run[1])
                else:
                    yield RawLine(start, data[position:end], end - position - 1, False)
                start += end - position
                position = end
                continue
            piece = data[position:end]
            length += len(piece)
            if not head:  # once over the limit, the rest of the line is only counted
                pieces.append(piece)
                if length - (newline >= 0) > max_line_bytes:
                    head = b"".join(pieces)[:LINE_HEAD_BYTES]
                    pieces = []
            position = end
            if newline >= 0:
                yield _line(start, pieces, head, length - 1)
                start += length
                pieces, head, length = [], b"", 0
    if length:
        yield _line(start, pieces, head, length)


def _line(start: int, pieces: list[bytes], head: bytes, length: int) -> RawLine:
    if head:
        return RawLine(start, head, length, True)
    return RawLine(start, b"".join(pieces), length, False)


@dataclass(frozen=True)
class Line:
    """One line of input: either a parsed value or the reason it could not be parsed; or a
    run of ``lines`` blank lines from ``number`` on (nothing parsed)."""

    number: int
    raw: bytes
    value: Any = None
    error: str | None = None
    lines: int = 1

    @property
    def blank(self) -> bool:
        return not self.raw.strip()


def _open(path: str) -> IO[bytes]:
    if path.endswith(".gz"):
        return cast(IO[bytes], gzip.GzipFile(path, "rb"))
    return open(path, "rb")  # the context manager below closes it


def _is_device(stream: Any) -> bool:
    try:
        number = stream.fileno()
        return stat.S_ISCHR(os.fstat(number).st_mode) and not os.isatty(number)
    except (AttributeError, OSError, ValueError):  # no descriptor (a test's in-memory stdin)
        return False


@contextmanager
def open_binary(path: str) -> Iterator[IO[bytes]]:
    """Open a file for binary reading; ``-`` is stdin; ``.gz`` is decompressed."""
    if path == "-":
        raw = sys.stdin.buffer
        if _is_device(raw):  # < /dev/zero: endless, never one line; a terminal is fine
            raise UserError("-: stdin is a device, not a file or a pipe")
        stdin = raw if isinstance(raw, io.BufferedReader) else io.BufferedReader(cast(Any, raw))
        # A compressed stream has no name to tell by: look at its first bytes.
        if stdin.peek(2)[:2] == _GZIP_MAGIC:
            yield cast(IO[bytes], gzip.GzipFile(fileobj=stdin, mode="rb"))
        else:
            yield stdin
        return
    try:
        kind = os.stat(path).st_mode
    except OSError:
        kind = stat.S_IFREG  # said by the open below
    if stat.S_ISCHR(kind) or stat.S_ISBLK(kind) or stat.S_ISSOCK(kind):
        raise UserError(f"{path}: not a regular file (a device or socket)")
    try:
        handle = _open(path)
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UserError(f"{path}: is a directory, not a file") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        yield handle
    finally:
        handle.close()


# What orjson says when the JSON is valid but past what it reads: a number whose magnitude a
# 64-bit float cannot hold (1e400, an integer of 400 digits), nesting past its depth limit.
_LONE = "a lone surrogate, which no UTF-8 text holds"
_BEYOND = {
    "number is infinity when parsed as double": "a number beyond the range of a 64-bit float",
    "depth limit exceeded": "nested deeper than 1,024 levels",
    # A lone surrogate escape ("\\ud800"): valid JSON text, but no character of UTF-8
    "no low surrogate in string": _LONE,
    "invalid high surrogate in string": _LONE,
    "invalid low surrogate in string": _LONE,
}


# Nesting the standard library's parser is allowed to follow when it confirms such a line.
_CONFIRM_DEPTH = 3_000


#: The end of ``beyond_reach``'s reason when the standard library could not confirm validity.
UNCHECKED = ", too deep to check that it is valid JSON"


def beyond_reach(data: bytes, exc: orjson.JSONDecodeError) -> str | None:
    """Why ``data``, which orjson refused, is JSON that cannot be read (said plainly), or
    None when it is not valid JSON (orjson stops at the first problem it meets, so the rest of
    the line is checked by the standard library's parser, which reads any number). Nesting
    too deep for that parser too is not called valid: the reason says it is not checked."""
    reason = _BEYOND.get(str(exc).split(":", 1)[0])
    if reason is None:
        return None
    valid = _valid_json(data)
    if valid is None:
        return reason + UNCHECKED
    return reason if valid else None


def _valid_json(data: bytes) -> bool | None:
    """Whether ``data`` is valid JSON; None: nested too deep to tell."""

    def refuse(constant: str) -> None:
        raise ValueError(constant)

    def parse() -> None:
        json.loads(data, parse_int=len, parse_float=len, parse_constant=refuse)

    try:
        parse()
    except RecursionError:
        if data.count(b"[") + data.count(b"{") > _CONFIRM_DEPTH:
            return None  # too deep to confirm here: never said to be valid
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(limit + _CONFIRM_DEPTH)
        try:
            parse()
        except (ValueError, RecursionError):
            return False
        finally:
            sys.setrecursionlimit(limit)
    except ValueError:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return False
    return True


def _why_not_json(data: bytes, exc: orjson.JSONDecodeError) -> str:
    """Why ``data`` did not parse, said truthfully."""
    if data.startswith(BOM):
        return "starts with a UTF-8 byte-order mark (accepted only at the start of the input)"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "not valid UTF-8"
    beyond = beyond_reach(data, exc)
    if beyond is not None:
        said = "cannot be read" if beyond.endswith(UNCHECKED) else "valid JSON that cannot be read"
        return f"{said} exactly: {beyond} ({exc.msg} at char {exc.pos})"
    return f"not valid JSON: {exc}"


def _parse(number: int, raw: bytes) -> Line:
    try:
        return Line(number, raw, orjson.loads(raw))
    except orjson.JSONDecodeError as exc:
        return Line(number, raw, error=_why_not_json(raw, exc))


class _Reader:
    """A byte stream read by lines or whole, in bounded memory: a byte-order mark at its very
    start is dropped, and damage (a truncated or corrupt ``.gz``) becomes a UserError naming
    the input."""

    def __init__(self, path: str, handle: IO[bytes], max_line_bytes: int) -> None:
        self.path = path
        self._handle = handle
        self._started = False
        self._by_lines = False
        # Blocks of the size the stdlib's line iteration reads: a damaged .gz yields the
        # same lines before its error.
        self._lines = read_lines(self._read, max_line_bytes, block=io.DEFAULT_BUFFER_SIZE)

    def _failed(self, exc: BaseException) -> UserError:
        return UserError(f"{self.path}: cannot read: {exc}")

    def _read(self, size: int) -> bytes:
        # read1: what a damaged .gz yields before the damage comes out first
        handle = cast(io.BufferedIOBase, self._handle)
        try:
            data: bytes = handle.read1(size)
            if not self._started and len(data) < len(BOM) and BOM.startswith(data):
                data += handle.read(len(BOM) - len(data))  # a mark split across reads
        except READ_ERRORS as exc:
            raise self._failed(exc) from None
        if self._started:
            return data
        self._started = True
        return data[len(BOM) :] if data.startswith(BOM) else data

    def readline(self) -> RawLine | None:
        self._by_lines = True
        return next(self._lines, None)

    def read(self, limit: int, already: int = 0) -> bytes:
        """The rest of the stream; more than ``limit`` bytes with the ``already`` read before
        it is a UserError."""
        blocks: list[bytes] = []
        size = already
        if self._by_lines:  # what the line reader holds comes first
            more: Iterator[bytes] = (line.data if not line.over else b"" for line in self._lines)
        else:
            more = iter(lambda: self._read(BLOCK_BYTES), b"")
        for block in more:
            blocks.append(block)
            size += len(block) or limit + 1  # b"": a line over the line limit
            if size > limit:
                raise UserError(f"{self.path}: larger than the limit of {limit} bytes")
        return b"".join(blocks)

    def lines(self) -> Iterator[RawLine]:
        return self._lines


def _parses(raw: bytes) -> bool:
    try:
        orjson.loads(raw)
    except orjson.JSONDecodeError:
        return False
    return True


def _stdin_is_document(reader: _Reader, head: list[RawLine]) -> bool:
    """Whether stdin holds one JSON document (as a ``.json`` file does) rather than JSON Lines,
    told from its first non-blank lines, which are kept in ``head`` to be read again.

    One document: a single JSON value alone (a one-line array is then a list of records, as in
    a ``.json`` file), or a first line that is not a whole JSON value and is a lone ``{`` or
    ``[`` or is followed by a line that is not one either (pretty-printed JSON). Anything else
    is JSON Lines: whole values line by line, or a cut-short first record before whole ones.
    """

    def next_content_line() -> bytes | None:
        while (line := reader.readline()) is not None:
            if line.lines > 1 and head and head[-1].lines > 1:  # one run, however many blocks
                run = head.pop()  # kept as one newline: whitespace to a document's reader
                line = RawLine(run.offset, b"\n", 0, False, run.lines + line.lines)
            head.append(line)
            if line.data.strip():
                return line.data
        return None

    first = next_content_line()
    if first is None:
        return False  # empty: no records either way
    if _parses(first):
        return next_content_line() is None
    if first.strip() in (b"{", b"["):
        return True
    second = next_content_line()
    return second is not None and not _parses(second)


@dataclass
class RecordInput:
    """An open input: one JSON document, or JSON Lines read as a stream."""

    path: str
    is_document: bool
    _reader: _Reader
    _head: list[RawLine]
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES

    def lines(self) -> Iterator[Line]:
        """Every line, parsed (JSON Lines); one over the limit is an error, its head kept."""
        number = 0
        for raw in chain(self._head, self._reader.lines()):
            number += raw.lines
            if raw.lines > 1:
                yield Line(number - raw.lines + 1, raw.data, lines=raw.lines)
            elif raw.over:
                error = f"line too long: {too_long(raw.length, self.max_line_bytes)}"
                yield Line(number, raw.data, error=error)
            else:
                yield _parse(number, raw.data)

    def document(self) -> Any:
        """The whole input as one JSON value; unreadable or unparsable input is a UserError."""
        if any(line.over for line in self._head):
            raise UserError(f"{self.path}: larger than the limit of {MAX_DOCUMENT_BYTES} bytes")
        held = b"".join(line.data for line in self._head)
        data = held + self._reader.read(MAX_DOCUMENT_BYTES, already=len(held))
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise UserError(f"{self.path}: {_why_not_json(data, exc)}") from None


@contextmanager
def open_records(path: str, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> Iterator[RecordInput]:
    """Open a record input (a file, ``.gz`` or not, or ``-`` for stdin) and tell its layout."""
    with open_binary(path) as handle:
        reader = _Reader(path, handle, max_line_bytes)
        head: list[RawLine] = []
        document = _stdin_is_document(reader, head) if path == "-" else is_json_document(path)
        yield RecordInput(path, document, reader, head, max_line_bytes)


def is_json_document(path: str) -> bool:
    """A ``.json`` file holds one document (a record or an array of records), not JSON lines."""
    name = Path(path).name
    return name.endswith(".json") or name.endswith(".json.gz")
