"""The budget of one diff: schema nodes visited and wall-clock time.

Resolving references and comparing two schemas can grow exponentially in the size of the
documents (definitions that reference each other, ``anyOf`` over shared definitions compared
member by member): a few KB can take hours. Every stage that walks schema nodes spends from
one :class:`Budget` per diff; beyond it the diff is refused (the engine raises a load error
naming both documents), never a hang.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

__all__ = [
    "NODE_BUDGET",
    "TIME_LIMIT",
    "Budget",
    "BudgetExceeded",
    "charge",
    "check_time",
    "memo",
]

# Schema nodes one diff may visit: each node inlined while resolving references, each compared
# pair of nodes, each ``subsumes`` probe, each finding (a probe over a wide schema emits one per
# property) and each node a helper walk looks at. Two 200 KB documents need about 4,000, so
# documents of about a megabyte each fit; hostile ones grow exponentially and stop here within
# about a second (a unit costs up to some tens of microseconds).
NODE_BUDGET = 50_000
TIME_LIMIT = 10.0  # seconds of wall clock per diff
_CLOCK_EVERY = 1_000  # nodes between two looks at the clock


class BudgetExceeded(Exception):
    """A diff took more schema nodes or more time than its :class:`Budget` allows; ``limit``
    says which (the engine turns it into a load error naming the documents)."""

    def __init__(self, limit: str) -> None:
        super().__init__(limit)
        self.limit = limit


class Budget:
    """Schema nodes and wall-clock time that one diff may spend (shared by its stages, its
    comparisons and their probes). ``time_limit`` None: no clock."""

    def __init__(self, nodes: int = NODE_BUDGET, time_limit: float | None = TIME_LIMIT) -> None:
        self.nodes = nodes
        self.time_limit = time_limit
        self.used = 0
        # Per-diff memos of helper walks, by name: id(node) -> (node, answer). Holding the node
        # keeps its id from being reused by a later temporary schema while the diff runs.
        self.memos: dict[str, dict[int, tuple[Any, Any]]] = {}
        self._deadline = None if time_limit is None else time.monotonic() + time_limit

    def spend(self) -> None:
        self.used += 1
        if self.used > self.nodes:
            raise BudgetExceeded(f"its budget of {self.nodes:,} schema nodes")
        if (
            self._deadline is not None
            and self.used % _CLOCK_EVERY == 0
            and time.monotonic() > self._deadline
        ):
            raise BudgetExceeded(f"its time limit of {self.time_limit:g} s")

    def check_time(self) -> None:
        """Look at the clock without spending a node (a long loop over values)."""
        if self._deadline is not None and time.monotonic() > self._deadline:
            raise BudgetExceeded(f"its time limit of {self.time_limit:g} s")

    @contextmanager
    def active(self) -> Iterator[Budget]:
        """Make this the budget that :func:`charge` spends from."""
        token = _ACTIVE.set(self)
        try:
            yield self
        finally:
            _ACTIVE.reset(token)


_ACTIVE: ContextVar[Budget | None] = ContextVar("wiregate_diff_budget", default=None)


def charge() -> None:
    """Count one schema node visited (by reference resolution or a helper walk such as
    ``effective_types``) against the running diff's budget; outside a diff, nothing."""
    budget = _ACTIVE.get()
    if budget is not None:
        budget.spend()


def check_time() -> None:
    """Look at the running diff's clock (every some thousand values of a loop over an enum's
    values, which spends no schema nodes); outside a diff, nothing."""
    budget = _ACTIVE.get()
    if budget is not None:
        budget.check_time()


def memo(name: str) -> dict[int, tuple[Any, Any]] | None:
    """The running diff's memo called ``name`` (created empty), None outside a diff: a helper
    walk that answers the same question for a node shared by many paths (a ``$ref`` target)
    answers it once."""
    budget = _ACTIVE.get()
    return None if budget is None else budget.memos.setdefault(name, {})
