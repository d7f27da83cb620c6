"""SIGINT and SIGTERM during a run: an exception at once, a clean-up that is never cut short.

While ``handled()`` is active (a run, the command), SIGINT raises ``KeyboardInterrupt`` and
SIGTERM raises ``Terminated`` in the main thread; the first signal makes later ones
ignored, so the clean-up it starts (temporary outputs, the spill directory, the workers)
runs to its end. Inside ``deferred()`` (creating or removing a temporary file, the renames of
the commit) a signal is held until the block ends, so no temporary file is created unseen or
left half removed. Once the outputs are committed (``finished()``), signals change nothing:
the run has done its work. For a command (``handled(command=True)``) that stays so until the
process exits: restored handlers would make a late signal exit 130 / 143 ("nothing written")
after the outputs were replaced, and during interpreter shutdown Python resets them to the
default action, which kills the process silently.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from wiregate.cli.signals import Terminated  # the one SIGTERM exception of every command

__all__ = ["Terminated", "deferred", "finished", "handled"]

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class _State:
    active = False
    depth = 0  # nested deferred() blocks
    pending: BaseException | None = None
    done = False


_STATE = _State()


def _handler(signum: int, frame: FrameType | None) -> None:
    for number in _SIGNALS:
        signal.signal(number, signal.SIG_IGN)  # the clean-up this starts must finish
    if _STATE.done:
        return
    exc: BaseException = KeyboardInterrupt() if signum == signal.SIGINT else Terminated()
    if _STATE.depth:
        _STATE.pending = exc
        return
    raise exc


@contextmanager
def handled(*, command: bool = False) -> Iterator[None]:
    """Signals raise for the length of the block (main thread only; nested blocks share
    the outermost one). ``command``: the block is the process's work; once it has
    ``finished()``, the signals stay ignored after the block, until the process exits."""
    if _STATE.active or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {number: signal.getsignal(number) for number in _SIGNALS}
    _STATE.active, _STATE.depth, _STATE.pending, _STATE.done = True, 0, None, False
    try:
        for number in _SIGNALS:
            signal.signal(number, _handler)
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, signal.SIG_IGN if command and _STATE.done else handler)
        _STATE.active, _STATE.pending = False, None


@contextmanager
def deferred() -> Iterator[None]:
    """A signal that arrives inside the block is raised when it ends."""
    _STATE.depth += 1
    try:
        yield
    finally:
        _STATE.depth -= 1
        if not _STATE.depth and _STATE.pending is not None:
            exc, _STATE.pending = _STATE.pending, None
            raise exc


def finished() -> None:
    """The outputs are in place: a signal from now on (or held until now) is ignored."""
    if _STATE.active:
        _STATE.done = True
        _STATE.pending = None
