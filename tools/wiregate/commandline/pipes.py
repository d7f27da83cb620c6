"""A reader that stops reading (``wiregate validate big.jsonl | head``) ends the command
quietly, as it ends any Unix tool: exit 141, the status a shell reports for a tool that
SIGPIPE ended, so ``set -o pipefail`` sees it. Python raises BrokenPipeError instead of
dying of SIGPIPE, and click turns that into exit 1 ("invalid", "G3 violation"); unhandled,
it read as an internal error. The exception unwinds the stack first, so temporary files
are removed as on any other exit.

``standard_streams`` makes sure the exception comes: a standard output that was closed
from the start is one whose reader left before the first line, and under
``PYTHONUNBUFFERED`` (common in CI and containers) standard output has no buffered layer,
whose retry of a short write is what meets EPIPE: without it, a write that a leaving
reader cuts short loses the rest without a word, and the command exits as if all was read.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys

__all__ = ["EXIT_CLOSED_STDOUT", "discard_stdout", "flush_stdout", "standard_streams"]

EXIT_CLOSED_STDOUT = 141  # 128 + SIGPIPE


def discard_stdout() -> None:
    """Point standard output at /dev/null: what is still buffered, flushed at exit, goes
    nowhere instead of failing again (Python would print "Exception ignored" for it)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no descriptor to replace (a replaced sys.stdout)
        pass


def flush_stdout() -> OSError | None:
    """Flush standard output before the interpreter does (its failure at exit would print
    "Exception ignored" and exit 120): None when all went out, else the error
    (BrokenPipeError: the reader had gone; ENOSPC: a full disk), standard output then
    discarded, as nothing more can go out."""
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except OSError as exc:
        discard_stdout()
        return exc
    except ValueError:  # closed already: nothing was waiting
        pass
    return None


def standard_streams() -> None:
    """Standard output as a command expects it (module docstring); a standard error closed
    or failing (full) loses its messages, never the exit code."""
    stdout = sys.stdout
    if stdout is None:  # first: descriptor 1 is the lowest free one
        sys.stdout = _text(_pipe_without_reader())
    elif isinstance(stdout, io.TextIOWrapper) and isinstance(stdout.buffer, io.RawIOBase):
        stdout.flush()
        sys.stdout = io.TextIOWrapper(
            io.BufferedWriter(stdout.buffer),
            encoding=stdout.encoding,
            errors=stdout.errors,
            line_buffering=True,  # unbuffered was asked for: each line goes out at once
        )
    stderr = sys.stderr
    if stderr is None:
        sys.stderr = _text(os.open(os.devnull, os.O_WRONLY), line_buffering=True)
    elif isinstance(stderr, io.TextIOWrapper):
        stderr.flush()
        binary = stderr.buffer  # raw under PYTHONUNBUFFERED
        sys.stderr = _Messages(
            binary if isinstance(binary, io.BufferedWriter) else io.BufferedWriter(binary),
            encoding=stderr.encoding, errors="backslashreplace", line_buffering=True,
        )  # fmt: skip


class _Messages(io.TextIOWrapper):
    """Standard error whose failure to write (``2>/dev/full``) loses the message, not the
    exit code: click would turn the OSError into exit 1, which means "invalid"."""

    def write(self, text: str) -> int:
        try:
            return super().write(text)
        except OSError:
            return len(text)

    def flush(self) -> None:
        with contextlib.suppress(OSError):
            super().flush()


def _pipe_without_reader() -> int:
    """Descriptor 1, the write end of a pipe whose read end is closed (descriptor 1 was
    free, so the pipe took it or lies above it)."""
    read, write = os.pipe()
    if write != 1:
        os.dup2(write, 1)  # closes the read end if the pipe had taken descriptor 1 for it
        os.close(write)
    if read != 1:
        os.close(read)
    return 1


def _text(fd: int, line_buffering: bool = False) -> io.TextIOWrapper:
    return io.TextIOWrapper(
        io.BufferedWriter(io.FileIO(fd, "w", closefd=False)),
        encoding="utf-8",
        errors="backslashreplace",
        line_buffering=line_buffering,
    )
