"""Standard output and error as a command line tool's users expect them.

* A reader that stops reading (``wiregate validate big.jsonl | head``) ends the command
  quietly, as it ends any Unix tool: exit 141, the status a shell reports for a tool that
  SIGPIPE ended, so ``set -o pipefail`` sees it. Python raises BrokenPipeError instead of
  dying of SIGPIPE; click turned it into exit 1 ("invalid", "G3 violation"), and unhandled
  it read as an internal error. A standard output closed from the start (``>&-``) is such a
  reader, gone before the first line.
* A standard output that cannot be written otherwise (a full disk) is an I/O error: exit 2,
  one line. Its writes raise :class:`StandardOutputError`, so it is told from a failure of
  any other file, whatever the size of the write.
* A standard error that cannot be written loses the message, never the exit code.

The exceptions unwind the stack first, so temporary files are removed as on any other exit.
Under ``PYTHONUNBUFFERED`` (common in CI and containers) standard output has no buffered
layer, whose retry of a short write is what meets EPIPE: without it, a write that a leaving
reader cuts short loses the rest without a word. ``standard_streams`` puts one back.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Callable
from typing import NoReturn

__all__ = [
    "EXIT_CLOSED_STDOUT",
    "StandardOutputError",
    "discard_stdout",
    "flush_stdout",
    "output_failed",
    "reader_left",
    "run_command",
    "standard_streams",
]

EXIT_CLOSED_STDOUT = 141  # 128 + SIGPIPE
EXIT_IO_ERROR = 2


class StandardOutputError(OSError):
    """A write to standard output failed, not because its reader left (a full disk)."""


def run_command(main: Callable[..., object], program: str) -> None:
    """``main(prog_name=program)``, then what is still buffered goes out: a reader that
    left is exit 141, another failure exit 2 with one line."""
    try:
        main(prog_name=program)
    finally:
        failed = flush_stdout()
        if isinstance(failed, BrokenPipeError):
            reader_left()
        if failed is not None:
            output_failed(program, failed)


def reader_left() -> NoReturn:
    """End the command whose standard output's reader left: quietly, exit 141."""
    discard_stdout()
    sys.exit(EXIT_CLOSED_STDOUT)


def output_failed(program: str, error: OSError) -> NoReturn:
    """End the command for a standard output that cannot be written (not a leaving reader)."""
    discard_stdout()
    sys.stderr.write(f"{program}: error: standard output: {error.strerror}\n")
    sys.exit(EXIT_IO_ERROR)


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
    (BrokenPipeError: the reader had gone), standard output then discarded."""
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
    """The standard streams as the module docstring says: standard output buffered, its
    failures told apart; standard error, closed or failing, losing its messages only."""
    stdout = sys.stdout
    if stdout is None:  # first: descriptor 1 is the lowest free one
        sys.stdout = _report(_pipe_without_reader(), "utf-8", "backslashreplace", False)
    elif isinstance(stdout, io.TextIOWrapper):
        stdout.flush()
        sys.stdout = _report(
            stdout.fileno(),
            stdout.encoding,
            stdout.errors or "strict",
            stdout.line_buffering or isinstance(stdout.buffer, io.RawIOBase),  # unbuffered
        )
    stderr = sys.stderr
    if stderr is None:
        sys.stderr = _Messages(
            io.BufferedWriter(io.FileIO(os.open(os.devnull, os.O_WRONLY), "w")),
            encoding="utf-8",
            errors="backslashreplace",
            line_buffering=True,
        )
    elif isinstance(stderr, io.TextIOWrapper):
        stderr.flush()
        sys.stderr = _Messages(
            io.BufferedWriter(io.FileIO(stderr.fileno(), "w", closefd=False)),
            encoding=stderr.encoding,
            errors="backslashreplace",
            line_buffering=True,
        )


def _report(fd: int, encoding: str, errors: str, line_buffering: bool) -> io.TextIOWrapper:
    return io.TextIOWrapper(
        _ReportBuffer(io.FileIO(fd, "w", closefd=False)),
        encoding=encoding,
        errors=errors,
        line_buffering=line_buffering,
    )


class _ReportBuffer(io.BufferedWriter):
    """Standard output's bytes: a failure that is not a leaving reader is a
    :class:`StandardOutputError` (text written through ``sys.stdout`` comes here too)."""

    def write(self, data: object) -> int:
        try:
            return super().write(data)  # type: ignore[arg-type]
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise StandardOutputError(exc.errno, exc.strerror) from None

    def flush(self) -> None:
        try:
            super().flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise StandardOutputError(exc.errno, exc.strerror) from None


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
