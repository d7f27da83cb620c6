"""SIGINT, SIGTERM, SIGHUP and SIGQUIT during a run: an exception at once, a clean-up that is
never cut short.

While ``handled()`` is active (a run, the command), SIGINT raises ``KeyboardInterrupt``,
SIGTERM ``Terminated``, SIGHUP ``HungUp`` (a closed terminal; ignored as ``nohup`` sets it)
and SIGQUIT ``Quit`` (Ctrl-\\: its default, a core dump, would leave the temporary outputs
and the spill behind) in the main thread; the first signal makes later ones
ignored, so the clean-up it starts (temporary outputs, the spill directory, the workers)
runs to its end. Inside ``deferred()`` (creating or removing a temporary file, the renames of
the commit) a signal is held until the block ends, so no temporary file is created unseen or
left half removed. Once the outputs are committed (``finished()``), signals change nothing:
the run has done its work. When the command is the process (``own_process()``, called by
its entry point), a signal after that ends it at once with the run's exit code, and
``exiting()`` ignores signals while the interpreter shuts down: restored handlers would make
a late signal exit 130 / 143 ("nothing written") after the outputs were replaced, and
during shutdown Python resets its handlers to the default action, which kills the process
without a word. A caller of the library (a test runner, ``export()``) gets its own handlers
back as they were.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from wiregate.commandline.pipes import flush_stdout
from wiregate.commandline.signals import Terminated  # the one SIGTERM exception of every command
from wiregate.commandline.startup import handle_unless_ignored

__all__ = [
    "HungUp",
    "Quit",
    "Terminated",
    "deferred",
    "exiting",
    "finished",
    "handled",
    "own_process",
]

_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


class HungUp(Terminated):
    """Raised in the main thread when SIGHUP arrives (the terminal closed): cleaned up as
    SIGTERM is; the command exits 129."""


class Quit(Terminated):
    """Raised in the main thread when SIGQUIT arrives (Ctrl-\\): cleaned up as SIGTERM is,
    no core dump; the command exits 131."""


class _State:
    process = False  # the command is the whole process (its entry point said so)
    exit_code = 0  # the run's, once done
    active = False
    depth = 0  # nested deferred() blocks
    pending: BaseException | None = None
    done = False


_STATE = _State()


def _handler(signum: int, frame: FrameType | None) -> None:
    if _STATE.done and _STATE.process:
        _done(signum, frame)
    for number in _SIGNALS:
        signal.signal(number, signal.SIG_IGN)  # the clean-up this starts must finish
    if _STATE.done:
        return
    raised: dict[int, type[BaseException]] = {
        signal.SIGINT: KeyboardInterrupt, signal.SIGHUP: HungUp, signal.SIGQUIT: Quit
    }  # fmt: skip
    exc = raised.get(signum, Terminated)()
    if _STATE.depth:
        _STATE.pending = exc
        return
    raise exc


def own_process() -> None:
    """The command is the process: after its outputs are in place, a signal ends it with the
    run's exit code."""
    _STATE.process = True


def _done(signum: int, frame: FrameType | None) -> None:
    """The outputs are in place: nothing to undo. What was printed goes out if it can (a
    summary still to print is cut short), then the process ends with the run's exit code."""
    _flush_printed()
    os._exit(_STATE.exit_code)


def _flush_printed() -> None:
    flush_stdout()  # a reader that left changes nothing: the outputs are in place
    with contextlib.suppress(Exception):  # a closed pipe, a write a signal interrupted
        sys.stderr.flush()


@contextmanager
def handled() -> Iterator[None]:
    """Signals raise for the length of the block (main thread only; nested blocks share
    the outermost one)."""
    if _STATE.active or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {number: signal.getsignal(number) for number in _SIGNALS}
    _STATE.active, _STATE.depth, _STATE.pending, _STATE.done = True, 0, None, False
    try:
        for number in _SIGNALS:
            handle_unless_ignored(number, _handler)
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, _done if _STATE.process and _STATE.done else handler)
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


def exiting() -> None:
    """The command's last step, when it is the process: what it printed goes out (a signal
    while a full pipe blocks that still ends it, with the run's exit code), then signals are
    ignored while the interpreter shuts down."""
    if not (_STATE.process and _STATE.done):
        return
    _flush_printed()
    for number in _SIGNALS:
        signal.signal(number, signal.SIG_IGN)


def finished(exit_code: int = 0) -> None:
    """The outputs are in place: a signal from now on (or held until now) is ignored, or ends
    the command's own process with ``exit_code``, the run's (1: the G3 report alone)."""
    if _STATE.active:
        _STATE.done = True
        _STATE.pending = None
        _STATE.exit_code = exit_code
