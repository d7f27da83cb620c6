"""Rank stage: RolloutRanker's scores and the order of the branches of one rollout."""

from __future__ import annotations

from collections.abc import Sequence

from datafactory.normalise import formula_total
from datafactory.records import RolloutBranchRecord

__all__ = ["MAX_TOTAL", "rank_branches", "rank_disagreements", "reward", "total_score"]

#: The highest raw total: objective 1 and judge 10 give 1.0 + 0.3.
MAX_TOTAL = 1.3


def total_score(branch: RolloutBranchRecord) -> float:
    """The record's ``total_score``; the RolloutRanker formula when it has none."""
    if branch.total_score is not None:
        return float(branch.total_score)
    return formula_total(branch.objective_score, branch.judge_score)


def rank_branches(branches: Sequence[RolloutBranchRecord]) -> list[RolloutBranchRecord]:
    """Best first: highest total score, ties to the lower ``branch_index``."""
    return sorted(branches, key=lambda b: (-total_score(b), b.branch_index))


def rank_disagreements(
    branches: Sequence[RolloutBranchRecord], rank_given: Sequence[bool] | None = None
) -> int:
    """How many branches carry a ``rank`` that their scores contradict (scores win)."""
    ranked = rank_branches(branches)
    position = {id(b): i for i, b in enumerate(ranked, start=1)}
    given = rank_given or [True] * len(branches)
    return sum(1 for b, g in zip(branches, given, strict=True) if g and b.rank != position[id(b)])


def reward(total: float) -> float:
    """PPO reward: the raw total normalised by MAX_TOTAL, clamped to [0, 1]."""
    return max(0.0, min(1.0, total / MAX_TOTAL))
