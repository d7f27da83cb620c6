"""A reader that stops reading (``wiregate validate big.jsonl | head``) ends the command
quietly, as it ends any Unix tool: exit 141, the status a shell reports for a tool that
SIGPIPE ended, so ``set -o pipefail`` sees it. Python raises BrokenPipeError instead of
dying of SIGPIPE, and click turns that into exit 1 ("invalid", "G3 violation"); unhandled,
it read as an internal error. The exception unwinds the stack first, so temporary files
are removed as on any other exit."""

from __future__ import annotations

import os
import sys

__all__ = ["EXIT_CLOSED_STDOUT", "discard_stdout", "flush_stdout"]

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


def flush_stdout() -> bool:
    """Flush standard output before the interpreter does (its failure at exit would print
    "Exception ignored" and exit 120); False when the reader had gone (then discarded)."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        discard_stdout()
        return False
    except (OSError, ValueError):  # another failure is the interpreter's to report, as before
        pass
    return True
