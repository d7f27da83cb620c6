"""Worker processes that can always be stopped.

``multiprocessing.Pool`` keeps three threads in the parent, and ``terminate()`` joins them
while its result thread may wait forever on a queue whose lock a killed worker held (an
interrupted run hung). Here each worker is a forked process with one pipe of its own and no
thread in the parent: the parent sends a unit down the pipe of the least busy worker and reads
the results back in unit order; ``close()`` kills the workers (SIGKILL) and reaps them, which
cannot block. Workers ignore SIGINT (Ctrl-C reaches the whole process group; the parent
decides) and die at SIGTERM. A worker whose parent is gone sees its pipe close and exits.

Each worker makes its own state once, with the pool's initializer (called with arguments
the fork hands over, never pickled), and every unit is ``function(state, item)``: no module
globals. Workers are forked, so they share what the parent set up before the pool is made
(the eval index); make the pool before any thread of the parent starts, since a fork copies
only the calling thread. ``ordered`` without a pool runs the same functions here, on a state
the caller made with the same initializer.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from multiprocessing import get_context
from multiprocessing.connection import Connection
from typing import Any, TypeVar

__all__ = ["WorkerDied", "WorkerPool", "ordered"]

_S = TypeVar("_S")
_T = TypeVar("_T")
_R = TypeVar("_R")


class WorkerDied(Exception):
    """A worker process ended without answering (killed from outside, out of memory)."""


def _serve(
    connection: Connection,
    inherited: list[Connection],
    initializer: Callable[..., Any],
    initargs: tuple[Any, ...],
) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGQUIT, signal.SIG_IGN)  # the parent's to handle: no core dump here
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    for other in inherited:  # the parent's ends: so a dead parent closes our pipe
        other.close()
    state: Any = None
    failed: BaseException | None = None
    try:
        state = initializer(*initargs)
    except BaseException as exc:  # answered to every unit, so the parent raises it
        failed = exc
    # A thread takes units in as they come, so the parent never blocks sending one while
    # this process blocks sending a result back (both pipes full: a deadlock).
    inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()

    def receive() -> None:
        while True:
            try:
                inbox.put(connection.recv())
            except (EOFError, OSError):
                inbox.put(None)
                return

    threading.Thread(target=receive, daemon=True).start()
    while (unit := inbox.get()) is not None:
        function, item = unit
        try:
            if failed is not None:
                raise failed
            answer: tuple[bool, Any] = (True, function(state, item))
        except BaseException as exc:  # sent to the parent, which raises it
            answer = (False, exc)
        try:
            try:
                connection.send(answer)
            except OSError:
                raise
            except Exception as exc:  # e.g. an exception that cannot be pickled
                connection.send((False, RuntimeError(f"{type(exc).__name__}: {exc}")))
        except OSError:  # the parent is gone
            break
    os._exit(0)


class WorkerPool:
    """``count`` forked workers, each with the state ``initializer(*initargs)``."""

    def __init__(
        self, count: int, initializer: Callable[..., Any], initargs: tuple[Any, ...] = ()
    ) -> None:
        context = get_context("fork")
        self._workers: list[tuple[Any, Connection]] = []
        self._busy: list[int] = []
        try:
            for _ in range(count):
                mine, theirs = context.Pipe()
                parents = [c for _, c in self._workers] + [mine]
                process = context.Process(
                    target=_serve, args=(theirs, parents, initializer, initargs), daemon=True
                )
                process.start()
                theirs.close()
                self._workers.append((process, mine))
                self._busy.append(0)
        except BaseException:
            self.close()
            raise

    @property
    def size(self) -> int:
        return len(self._workers)

    def ordered(
        self, function: Callable[[Any, _T], _R], items: Iterable[_T], window: int
    ) -> Iterator[_R]:
        """``function(state, item)`` over ``items`` in the workers, results in item order, at
        most ``window`` in flight."""
        pending: deque[int] = deque()  # the worker of each unit in flight, in unit order
        for item in items:
            number = min(range(len(self._busy)), key=self._busy.__getitem__)
            try:
                self._workers[number][1].send((function, item))
            except OSError:  # its end of the pipe is closed: it died
                raise self._died(number) from None
            self._busy[number] += 1
            pending.append(number)
            if len(pending) >= window:
                yield self._result(pending.popleft())
        while pending:
            yield self._result(pending.popleft())

    def _result(self, number: int) -> Any:
        connection = self._workers[number][1]
        try:
            done, value = connection.recv()
        except (EOFError, OSError):
            raise self._died(number) from None
        self._busy[number] -= 1
        if not done:
            raise value
        return value

    def _died(self, number: int) -> WorkerDied:
        process = self._workers[number][0]
        process.join(1)
        return WorkerDied(
            f"a worker process ended without answering (exit status {process.exitcode})"
        )

    def close(self) -> None:
        """Kill and reap every worker; never blocks on them."""
        for process, connection in self._workers:
            with contextlib.suppress(OSError, ValueError):
                if process.pid is not None:
                    os.kill(process.pid, signal.SIGKILL)
            connection.close()
        for process, _ in self._workers:
            with contextlib.suppress(OSError, ValueError, AssertionError):
                process.join()
        self._workers = []


def ordered(
    pool: WorkerPool | None,
    state: _S,
    function: Callable[[_S, _T], _R],
    items: Iterable[_T],
    window: int,
) -> Iterator[_R]:
    """Results of ``function`` over ``items`` in item order: in the pool's workers (each on
    its own state), or here on ``state``."""
    if pool is None:
        return (function(state, item) for item in items)
    return pool.ordered(function, items, window)
