"""Rank stage: RolloutRanker's scores and the order of the branches of one rollout.

Ranking needs a few facts of each branch (``Ranked``): the export run reads them from its
spill entries, the Python API from ``BranchScore.of(branch)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, Protocol, TypeVar

from datafactory.records import BranchJson

__all__ = [
    "MAX_TOTAL",
    "BranchScore",
    "Ranked",
    "rank_branches",
    "rank_disagreements",
    "reward",
    "total_score",
]

#: The highest raw total: objective 1 and judge 10 give 1.0 + 0.3.
MAX_TOTAL = 1.3


class Ranked(Protocol):
    """What ranking and pairing need to know of a branch."""

    @property
    def branch_index(self) -> int: ...
    @property
    def total(self) -> float: ...  # the raw total score
    @property
    def usable(self) -> bool: ...  # its objective_status is not "unknown"
    @property
    def final_answer(self) -> str: ...
    @property
    def rank(self) -> int: ...
    @property
    def rank_given(self) -> bool: ...  # the input carried the rank (not computed)


class BranchScore(NamedTuple):
    branch_index: int
    total: float
    usable: bool
    final_answer: str
    rank: int
    rank_given: bool = True

    @classmethod
    def of(cls, branch: BranchJson, rank_given: bool = True) -> BranchScore:
        return cls(
            int(branch["branch_index"]),  # JSON Schema lets 1.0 be an integer
            total_score(branch),
            branch.get("objective_status") != "unknown",
            branch["final_answer"],
            int(branch["rank"]),
            rank_given,
        )


_R = TypeVar("_R", bound=Ranked)


def total_score(branch: BranchJson) -> float:
    """The record's ``total_score`` (the load stage computes the RolloutRanker formula for a
    record that has none)."""
    return float(branch["total_score"])


def rank_branches(branches: Sequence[_R]) -> list[_R]:
    """Best first: highest total score, ties to the lower ``branch_index``."""
    return sorted(branches, key=lambda b: (-b.total, b.branch_index))


def rank_disagreements(branches: Sequence[Ranked]) -> int:
    """How many branches carry a ``rank`` that their scores contradict (scores win)."""
    ranked = rank_branches(branches)
    return sum(
        1 for position, b in enumerate(ranked, start=1) if b.rank_given and b.rank != position
    )


def reward(total: float) -> float:
    """PPO reward: the raw total normalised by MAX_TOTAL, clamped to [0, 1]."""
    return max(0.0, min(1.0, total / MAX_TOTAL))
