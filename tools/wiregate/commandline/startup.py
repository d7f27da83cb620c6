"""Ctrl-C and SIGTERM while a command starts up: one line and exit 130 / 143, not an import
traceback. A command's imports take a few tenths of a second (longer on a loaded machine);
nothing is made yet, so the process just ends. Entry points call ``guard`` before importing
anything heavy; the command's own handling replaces it when it runs. This module imports
nothing but the standard library's ``os`` and ``signal``, so the guard is up at once.

A signal the process was started with ignored (a background job of a shell script ignores
SIGINT) stays ignored, as Python itself leaves it.
"""

from __future__ import annotations

import os
import signal

TYPE_CHECKING = False  # not ``typing.TYPE_CHECKING``: importing ``typing`` takes 10 ms
if TYPE_CHECKING:
    from types import FrameType
    from typing import Any

__all__ = ["EXIT_INTERRUPTED", "EXIT_TERMINATED", "guard", "handle_unless_ignored"]

EXIT_INTERRUPTED = 128 + signal.SIGINT  # 130
EXIT_TERMINATED = 128 + signal.SIGTERM  # 143
_WORDS = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}
_program = ""


def guard(program: str) -> None:
    """Until the command replaces them, SIGINT and SIGTERM end the process with
    ``<program>: interrupted`` (130) or ``<program>: terminated`` (143)."""
    global _program
    _program = program
    for signum in _WORDS:
        handle_unless_ignored(signum, _starting)


def handle_unless_ignored(signum: int, handler: Any) -> Any:
    """Set ``handler`` for ``signum`` unless the signal is ignored (the process was started
    so); returns the handler before, to put back."""
    previous = signal.getsignal(signum)
    if previous is not signal.SIG_IGN:
        signal.signal(signum, handler)
    return previous


def _starting(signum: int, frame: FrameType | None) -> None:
    os.write(2, f"{_program}: {_WORDS[signal.Signals(signum)]}\n".encode())
    os._exit(128 + signum)
