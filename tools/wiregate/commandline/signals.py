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

__all__ = ["InterruptibleGroup", "Terminated"]

EXIT_INTERRUPTED = 128 + signal.SIGINT  # 130
EXIT_TERMINATED = 128 + signal.SIGTERM  # 143


class Terminated(BaseException):
    """Raised in the main thread when SIGTERM arrives."""


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated


@contextmanager
def _sigterm_raises() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set from the main thread (e.g. a test runner's)
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class InterruptibleGroup(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            with _sigterm_raises():
                return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo("wiregate: interrupted", err=True)
            sys.exit(EXIT_INTERRUPTED)
        except Terminated:
            click.echo("wiregate: terminated", err=True)
            sys.exit(EXIT_TERMINATED)
