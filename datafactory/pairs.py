"""Pair stage: one rollout's branches (or one Layer 2 record) -> Layer 3 training records."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from datafactory.conversation import Conversation, build_messages
from datafactory.g3 import DEFAULT_NGRAM, cached_n_gram_hash
from datafactory.rank import rank_branches, reward, total_score
from datafactory.records import (
    DpoRecord,
    DpoTrainingRecord,
    PpoRecord,
    PpoTrainingRecord,
    Provenance,
    RolloutBranchRecord,
)

__all__ = [
    "SCHEMA_VERSION",
    "SKIP_EMPTY_CHOSEN",
    "SKIP_FEWER_THAN_TWO",
    "SKIP_IDENTICAL",
    "SKIP_NO_REJECTED_ANSWER",
    "SKIP_NO_SCORE_DIFFERENCE",
    "SOURCE",
    "DpoSkip",
    "dpo_from_layer2",
    "ppo_from_layer2",
    "task_hash",
    "to_dpo",
    "to_ppo",
]

SCHEMA_VERSION: Final = "training-record/v1"
SOURCE: Final = "wasmagent-rollout"

# Why a rollout yields no DPO pair (manifest keys), in the order they are checked.
SKIP_FEWER_THAN_TWO = "fewer_than_two_usable_branches"
SKIP_NO_REJECTED_ANSWER = "no_nonempty_rejected_answer"
SKIP_EMPTY_CHOSEN = "empty_chosen_answer"
SKIP_IDENTICAL = "identical_answers"
SKIP_NO_SCORE_DIFFERENCE = "no_score_difference"


@dataclass(frozen=True)
class DpoSkip:
    """A rollout that yields no pair, and why."""

    rollout_id: str
    reason: str


def task_hash(task: str) -> str:
    """sha256 of the task text (UTF-8), first 16 hex digits."""
    return hashlib.sha256(task.encode("utf-8")).hexdigest()[:16]


@functools.lru_cache(maxsize=4096)
def _cached_task_hash(task: str) -> str:
    return task_hash(task)  # the branches of a rollout repeat their task


def _provenance(
    rollout_id: str,
    task: str,
    ngram: int,
    *,
    branch_index: int | None = None,
    chosen_branch: int | None = None,
    rejected_branch: int | None = None,
) -> Provenance:
    return Provenance(
        source=SOURCE,
        rollout_id=rollout_id,
        task_hash=_cached_task_hash(task),
        n_gram_hash=cached_n_gram_hash(task, ngram),
        branch_index=branch_index,
        chosen_branch=chosen_branch,
        rejected_branch=rejected_branch,
    )


def conversation_of(branch: RolloutBranchRecord) -> Conversation:
    return build_messages(branch.task, branch.tool_call_sequence, branch.final_answer)


def to_dpo(
    branches: Sequence[RolloutBranchRecord],
    ngram: int = DEFAULT_NGRAM,
    conversations: dict[int, Conversation] | None = None,
) -> DpoTrainingRecord | DpoSkip:
    """The DPO pair of one rollout, or a ``DpoSkip``.

    chosen = the best branch, rejected = the worst branch with a non-empty answer, among the
    branches whose ``objective_status`` is not ``unknown`` (a branch without the field is
    usable: its ``objective_score`` is required and says pass or fail)."""
    rollout_id = branches[0].rollout_id
    usable = rank_branches([b for b in branches if b.objective_status != "unknown"])
    if len(usable) < 2:
        return DpoSkip(rollout_id, SKIP_FEWER_THAN_TWO)
    chosen = usable[0]
    answered = [b for b in usable[1:] if b.final_answer.strip()]
    if not answered:
        return DpoSkip(rollout_id, SKIP_NO_REJECTED_ANSWER)
    rejected = answered[-1]
    if not chosen.final_answer.strip():
        return DpoSkip(rollout_id, SKIP_EMPTY_CHOSEN)
    if chosen.final_answer == rejected.final_answer:
        return DpoSkip(rollout_id, SKIP_IDENTICAL)
    if total_score(chosen) == total_score(rejected):
        return DpoSkip(rollout_id, SKIP_NO_SCORE_DIFFERENCE)
    conversation = (conversations or {}).get(chosen.branch_index) or conversation_of(chosen)
    return DpoTrainingRecord(
        schema_version=SCHEMA_VERSION,
        messages=conversation.messages,
        prompt_messages=conversation.messages[:-1],
        chosen=chosen.final_answer,
        rejected=rejected.final_answer,
        loss_weight_tokens=conversation.loss_weight_tokens,
        provenance=_provenance(
            rollout_id,
            chosen.task,
            ngram,
            chosen_branch=chosen.branch_index,
            rejected_branch=rejected.branch_index,
        ),
    )


def to_ppo(
    branches: Sequence[RolloutBranchRecord],
    ngram: int = DEFAULT_NGRAM,
    conversations: dict[int, Conversation] | None = None,
) -> list[PpoTrainingRecord]:
    """One PPO record per branch, in ``branch_index`` order;
    reward = min(1, total_score / 1.3), clamped at 0."""
    records: list[PpoTrainingRecord] = []
    for branch in sorted(branches, key=lambda b: b.branch_index):
        conversation = (conversations or {}).get(branch.branch_index) or conversation_of(branch)
        records.append(
            PpoTrainingRecord(
                schema_version=SCHEMA_VERSION,
                messages=conversation.messages,
                reward=reward(total_score(branch)),
                loss_weight_tokens=conversation.loss_weight_tokens,
                provenance=_provenance(
                    branch.rollout_id, branch.task, ngram, branch_index=branch.branch_index
                ),
            )
        )
    return records


def dpo_from_layer2(record: DpoRecord, ngram: int = DEFAULT_NGRAM) -> DpoTrainingRecord:
    """A Layer 2 ``DpoRecord`` as a Layer 3 ``DpoTrainingRecord`` (the conversation is the
    prompt, the recorded tool calls and the chosen answer)."""
    conversation = build_messages(record.prompt, record.tool_call_sequence, record.chosen)
    provenance = record.provenance
    return DpoTrainingRecord(
        schema_version=SCHEMA_VERSION,
        messages=conversation.messages,
        prompt_messages=conversation.messages[:-1],
        chosen=record.chosen,
        rejected=record.rejected,
        loss_weight_tokens=conversation.loss_weight_tokens,
        provenance=_provenance(
            provenance.rollout_id,
            record.prompt,
            ngram,
            chosen_branch=provenance.chosen_branch,
            rejected_branch=provenance.rejected_branch,
        ),
    )


def ppo_from_layer2(record: PpoRecord, ngram: int = DEFAULT_NGRAM) -> PpoTrainingRecord:
    """A Layer 2 ``PpoRecord`` (raw total as reward) as a Layer 3 ``PpoTrainingRecord``."""
    conversation = build_messages(record.prompt, record.tool_call_sequence, record.completion)
    return PpoTrainingRecord(
        schema_version=SCHEMA_VERSION,
        messages=conversation.messages,
        reward=reward(float(record.reward)),
        loss_weight_tokens=conversation.loss_weight_tokens,
        provenance=_provenance(
            record.provenance.rollout_id,
            record.prompt,
            ngram,
            branch_index=record.provenance.branch_index,
        ),
    )
