"""Ctrl-C exits 130 and SIGTERM 143, with one line and no traceback, for every command.

click turns KeyboardInterrupt into "Aborted!" and exit 1, which reads as "breaking drift".
SIGTERM would kill the process without running ``finally`` blocks, leaving temporary files.
So SIGTERM raises :class:`Terminated`, a BaseException (no ``except Exception`` swallows it),
and both unwind the stack (closing git's helper processes, removing temporary files) before
the group turns them into their exit codes.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

import click

from wiregate.commandline.startup import (
    EXIT_INTERRUPTED,
    EXIT_TERMINATED,
    handle_unless_ignored,
)

__all__ = ["EXIT_INTERRUPTED", "EXIT_TERMINATED", "InterruptibleGroup", "Terminated"]


class Terminated(BaseException):
    """Raised in the main thread when SIGTERM arrives."""


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated


@contextmanager
def _signals_raise() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt and SIGTERM ``Terminated`` inside the block (the
    start-up guard's handlers, ``wiregate.commandline.startup``, are replaced; a signal the
    process was started with ignored stays ignored)."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set from the main thread (e.g. a test runner's)
        return
    previous = {
        signal.SIGINT: handle_unless_ignored(signal.SIGINT, signal.default_int_handler),
        signal.SIGTERM: handle_unless_ignored(signal.SIGTERM, _raise_terminated),
    }
    try:
        yield
    finally:
        for signum, before in previous.items():
            signal.signal(signum, before)


class InterruptibleGroup(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            with _signals_raise():
                return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo("wiregate: interrupted", err=True)
            sys.exit(EXIT_INTERRUPTED)
        except Terminated:
            click.echo("wiregate: terminated", err=True)
            sys.exit(EXIT_TERMINATED)
