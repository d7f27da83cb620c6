"""Group commit: one thread owns the store's write connection; requests hand it their
records and wait for the commit that holds them. Whatever arrived while a commit was on disk
goes into the next transaction together, so concurrent requests share one fsync.
"""

from __future__ import annotations

import queue
import sqlite3
import threading
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

from datafactory.ingest.store import Accepted, Quarantined, StoreError, connect, write_batch

__all__ = ["Batch", "GroupCommitter", "ShuttingDown"]

#: The most batches one transaction takes (bounds a transaction under a flood).
MAX_BATCHES_PER_COMMIT = 512
_SHUTTING_DOWN = "the server is shutting down: nothing of the request is stored"


@dataclass
class Batch:
    """One request's records; ``done`` gets, per accepted record, what became of it
    (``store.write_batch``), once the transaction holding them has committed (or the store's
    error)."""

    accepted: list[Accepted]
    quarantined: list[Quarantined]
    arrived_ms: int
    request_id: str
    address: str
    done: Future[list[str]] = field(default_factory=Future)


class ShuttingDown(Exception):
    """A batch refused by the server's shutdown before a commit took it: nothing of it is
    stored."""


class GroupCommitter:
    """The store's single writer (a daemon thread). ``submit`` returns the batch's future;
    ``refuse_queued`` fails what no commit has taken yet; ``close`` commits what is queued and
    stops."""

    def __init__(self, directory: str | Path) -> None:
        self._connection = connect(directory)
        #: The last commit's error, None once one succeeds (``/healthz`` reports it).
        self.failing: str | None = None
        self._queue: queue.Queue[Batch | None] = queue.Queue()
        self._refusing = False
        self._thread = threading.Thread(target=self._run, name="ingest-writer", daemon=True)
        self._thread.start()

    def submit(self, batch: Batch) -> Future[list[str]]:
        if self._refusing:
            batch.done.set_exception(ShuttingDown(_SHUTTING_DOWN))
        else:
            self._queue.put(batch)
        return batch.done

    def refuse_queued(self) -> None:
        """Fail every batch no commit has taken, and every one submitted from now on, with
        ``ShuttingDown`` (call it on the thread that submits). A commit under way goes on: its
        batches get what became of them."""
        self._refusing = True
        while True:
            try:
                batch = self._queue.get_nowait()
            except queue.Empty:
                return
            if batch is None:  # closing already: the writer must still see it
                self._queue.put(None)
                return
            batch.done.set_exception(ShuttingDown(_SHUTTING_DOWN))

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join()
        self._connection.close()

    def _run(self) -> None:
        stopping = False
        while not stopping:
            first = self._queue.get()
            if first is None:
                break
            batches = [first]
            while len(batches) < MAX_BATCHES_PER_COMMIT:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    stopping = True
                    break
                batches.append(more)
            self._commit(batches)

    def _commit(self, batches: list[Batch]) -> None:
        # A batch whose request was cancelled meanwhile is not written: nobody waits for it.
        batches = [b for b in batches if b.done.set_running_or_notify_cancel()]
        if not batches:
            return
        accepted = [
            (record, b.arrived_ms, b.request_id, b.address)
            for b in batches
            for record in b.accepted
        ]
        quarantined = [
            (record, b.arrived_ms, b.request_id, b.address)
            for b in batches
            for record in b.quarantined
        ]
        try:
            new = write_batch(self._connection, accepted, quarantined)
        except sqlite3.Error as exc:
            error = StoreError(f"the store cannot write: {exc}")
            self.failing = str(error)
            for batch in batches:
                batch.done.set_exception(error)
            return
        self.failing = None
        at = 0
        for batch in batches:
            batch.done.set_result(new[at : at + len(batch.accepted)])
            at += len(batch.accepted)
