"""Reading records from JSON and JSONL files (also gzip-compressed, also stdin).

A file's name says how it is laid out: ``.json`` (``.json.gz``) holds one document, any other
name JSON Lines. Stdin has no name, so its first lines say (:func:`_stdin_is_document`); JSON
Lines are streamed line by line either way. A UTF-8 byte-order mark is accepted at the start of
an input, and only there (as Python's ``json.loads`` does for bytes).
"""

from __future__ import annotations

import gzip
import io
import sys
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import IO, Any, cast

import orjson

from wiregate.errors import UserError

__all__ = [
    "BOM",
    "READ_ERRORS",
    "Line",
    "RecordInput",
    "is_json_document",
    "open_binary",
    "open_records",
]

_GZIP_MAGIC = b"\x1f\x8b"
BOM = b"\xef\xbb\xbf"

#: What reading a possibly compressed stream raises on damaged input: a truncated gzip member
#: ends in EOFError, corrupt deflate data in zlib.error, a bad header or CRC in an OSError.
READ_ERRORS = (OSError, EOFError, zlib.error)


@dataclass(frozen=True)
class Line:
    """One line of input: either a parsed value or the reason it could not be parsed."""

    number: int
    raw: bytes
    value: Any = None
    error: str | None = None

    @property
    def blank(self) -> bool:
        return not self.raw.strip()


def _open(path: str) -> IO[bytes]:
    if path.endswith(".gz"):
        return cast(IO[bytes], gzip.GzipFile(path, "rb"))
    return open(path, "rb")  # the context manager below closes it


@contextmanager
def open_binary(path: str) -> Iterator[IO[bytes]]:
    """Open a file for binary reading; ``-`` is stdin; ``.gz`` is decompressed."""
    if path == "-":
        raw = sys.stdin.buffer
        stdin = raw if isinstance(raw, io.BufferedReader) else io.BufferedReader(cast(Any, raw))
        # A compressed stream has no name to tell by: look at its first bytes.
        if stdin.peek(2)[:2] == _GZIP_MAGIC:
            yield cast(IO[bytes], gzip.GzipFile(fileobj=stdin, mode="rb"))
        else:
            yield stdin
        return
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


def _why_not_json(data: bytes, exc: orjson.JSONDecodeError) -> str:
    """Why ``data`` did not parse, said truthfully."""
    if data.startswith(BOM):
        return "starts with a UTF-8 byte-order mark (accepted only at the start of the input)"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "not valid UTF-8"
    return f"not valid JSON: {exc}"


def _parse(number: int, raw: bytes) -> Line:
    try:
        return Line(number, raw, orjson.loads(raw))
    except orjson.JSONDecodeError as exc:
        return Line(number, raw, error=_why_not_json(raw, exc))


class _Reader:
    """A byte stream read by lines or whole: a byte-order mark at its very start is dropped,
    and damage (a truncated or corrupt ``.gz``) becomes a UserError naming the input."""

    def __init__(self, path: str, handle: IO[bytes]) -> None:
        self.path = path
        self._handle = handle
        self._started = False

    def _failed(self, exc: BaseException) -> UserError:
        return UserError(f"{self.path}: cannot read: {exc}")

    def _first(self, data: bytes) -> bytes:
        if self._started:
            return data
        self._started = True
        return data[len(BOM) :] if data.startswith(BOM) else data

    def readline(self) -> bytes:
        try:
            return self._first(self._handle.readline())
        except READ_ERRORS as exc:
            raise self._failed(exc) from None

    def read(self) -> bytes:
        try:
            return self._first(self._handle.read())
        except READ_ERRORS as exc:
            raise self._failed(exc) from None

    def lines(self) -> Iterator[bytes]:
        if not self._started:
            first = self.readline()
            if not first:
                return
            yield first
        try:
            yield from self._handle
        except READ_ERRORS as exc:
            raise self._failed(exc) from None


def _parses(raw: bytes) -> bool:
    try:
        orjson.loads(raw)
    except orjson.JSONDecodeError:
        return False
    return True


def _stdin_is_document(reader: _Reader, head: list[bytes]) -> bool:
    """Whether stdin holds one JSON document (as a ``.json`` file does) rather than JSON Lines,
    told from its first non-blank lines, which are kept in ``head`` to be read again.

    One document: a single JSON value alone (a one-line array is then a list of records, as in
    a ``.json`` file), or a first line that is not a whole JSON value and is a lone ``{`` or
    ``[`` or is followed by a line that is not one either (pretty-printed JSON). Anything else
    is JSON Lines: whole values line by line, or a cut-short first record before whole ones.
    """

    def next_content_line() -> bytes | None:
        while raw := reader.readline():
            head.append(raw)
            if raw.strip():
                return raw
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
    _head: list[bytes]

    def lines(self) -> Iterator[Line]:
        """Every line, parsed (JSON Lines)."""
        for number, raw in enumerate(chain(self._head, self._reader.lines()), start=1):
            yield _parse(number, raw)

    def document(self) -> Any:
        """The whole input as one JSON value; unreadable or unparsable input is a UserError."""
        data = b"".join(self._head) + self._reader.read()
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise UserError(f"{self.path}: {_why_not_json(data, exc)}") from None


@contextmanager
def open_records(path: str) -> Iterator[RecordInput]:
    """Open a record input (a file, ``.gz`` or not, or ``-`` for stdin) and tell its layout."""
    with open_binary(path) as handle:
        reader = _Reader(path, handle)
        head: list[bytes] = []
        document = _stdin_is_document(reader, head) if path == "-" else is_json_document(path)
        yield RecordInput(path, document, reader, head)


def is_json_document(path: str) -> bool:
    """A ``.json`` file holds one document (a record or an array of records), not JSON lines."""
    name = Path(path).name
    return name.endswith(".json") or name.endswith(".json.gz")
