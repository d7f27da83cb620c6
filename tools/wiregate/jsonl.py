"""Reading records from JSON and JSONL files (also gzip-compressed, also stdin) line by line."""

from __future__ import annotations

import gzip
import io
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

import orjson

from wiregate.errors import UserError

__all__ = ["Line", "open_binary", "read_lines"]

_GZIP_MAGIC = b"\x1f\x8b"


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


def _parse(number: int, raw: bytes) -> Line:
    try:
        return Line(number, raw, orjson.loads(raw))
    except orjson.JSONDecodeError as exc:
        reason = str(exc)
        if "utf-8" in reason.lower() or "surrogates" in reason.lower():
            return Line(number, raw, error="not valid UTF-8")
        return Line(number, raw, error=f"not valid JSON: {reason}")


def read_lines(path: str) -> Iterator[Line]:
    """Yield every line of a JSONL file, parsed. I/O errors become a UserError naming the file."""
    with open_binary(path) as handle:
        try:
            for number, raw in enumerate(handle, start=1):
                yield _parse(number, raw)
        except (OSError, EOFError, gzip.BadGzipFile) as exc:
            raise UserError(f"{path}: cannot read: {exc}") from None


def is_json_document(path: str) -> bool:
    """A ``.json`` file holds one document (a record or an array of records), not JSON lines."""
    name = Path(path).name
    return name.endswith(".json") or name.endswith(".json.gz")
