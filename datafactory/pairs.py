"""Pair stage: one rollout's branches (or one Layer 2 record) -> Layer 3 training records.

The rules work on the records' JSON shapes (``...Json``), as the export run does; ``to_dpo``
and ``to_ppo`` are the same rules for the typed records of the Python API.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeVar, cast

import orjson

from datafactory.contamination import DEFAULT_NGRAM, check_ngram, hash_grams, task_grams
from datafactory.conversation import Conversation, build_messages, prompt_text
from datafactory.rank import BranchScore, Ranked, rank_branches, reward, total_score
from datafactory.records import (
    BranchFactsJson,
    BranchJson,
    DpoRecordJson,
    DpoTrainingJson,
    DpoTrainingRecord,
    LossWeightTokens,
    MessageJson,
    PpoRecordJson,
    PpoTrainingJson,
    PpoTrainingRecord,
    ProvenanceJson,
    RolloutBranchRecord,
    from_wire,
    to_wire,
)

__all__ = [
    "DPO_FACT_KEYS",
    "SCHEMA_VERSION",
    "SKIP_EMPTY_CHOSEN",
    "SKIP_FEWER_THAN_TWO",
    "SKIP_IDENTICAL",
    "SKIP_NO_REJECTED_ANSWER",
    "SKIP_NO_SCORE_DIFFERENCE",
    "SKIP_TASKS_DIFFER",
    "SOURCE",
    "DpoSkip",
    "branch_facts",
    "choose_pair",
    "conversation_of",
    "dpo_fact_fields",
    "dpo_from_layer2",
    "dpo_record",
    "ppo_from_layer2",
    "ppo_record",
    "provenance",
    "task_hash",
    "task_hashes",
    "to_dpo",
    "to_ppo",
]

SCHEMA_VERSION: Final = "training-record/v2"
SOURCE: Final = "wasmagent-rollout"

# Why a rollout yields no DPO pair (manifest keys), in the order they are checked.
SKIP_FEWER_THAN_TWO = "fewer_than_two_usable_branches"
SKIP_NO_REJECTED_ANSWER = "no_nonempty_rejected_answer"
SKIP_EMPTY_CHOSEN = "empty_chosen_answer"
SKIP_IDENTICAL = "identical_answers"
SKIP_NO_SCORE_DIFFERENCE = "no_score_difference"
# Checked first: a pair of branches made for two different tasks is no preference.
SKIP_TASKS_DIFFER = "branches_disagree_on_task"

_R = TypeVar("_R", bound=Ranked)


@dataclass(frozen=True)
class DpoSkip:
    """A rollout that yields no pair, and why."""

    rollout_id: str
    reason: str


def task_hash(task: str) -> str:
    """sha256 of the task text (UTF-8), first 16 hex digits."""
    return hashlib.sha256(task.encode("utf-8")).hexdigest()[:16]


def task_hashes(task: str, ngram: int, grams: Sequence[str] | None = None) -> tuple[str, str]:
    """(task_hash, task_ngram_fingerprint) of a task; ``grams``: its ``task_grams`` when at
    hand."""
    return task_hash(task), hash_grams(task_grams(task, ngram) if grams is None else grams)


def provenance(
    rollout_id: str, hashes: tuple[str, str], branch: BranchJson | None = None
) -> ProvenanceJson:
    """The provenance common to every training record; ``hashes`` from ``task_hashes``.
    ``branch``: the (chosen) branch record, whose upstream ``source`` and ``model_id`` win
    over ``wasmagent-rollout`` and nothing."""
    record: ProvenanceJson = {
        "source": SOURCE,
        "rollout_id": rollout_id,
        "task_hash": hashes[0],
        "task_ngram_fingerprint": hashes[1],
    }
    if branch is not None:
        upstream = _upstream(branch)
        source = upstream.get("source")
        if isinstance(source, str) and source:
            record["source"] = source
        model_id = upstream.get("model_id", cast(_Object, branch).get("model_id"))
        if isinstance(model_id, str) and model_id:
            record["model_id"] = model_id
    return record


# Types named once: a subscripted type costs a look-up at each call, on the hot path.
_Object = Mapping[str, Any]
_ZeroOrOne = Literal[0, 1]
_NOTHING: _Object = {}


def _upstream(branch: BranchJson) -> Mapping[str, Any]:
    """The branch record's own ``provenance`` object (a key the contract leaves open)."""
    given = cast(_Object, branch).get("provenance")
    return cast(_Object, given) if isinstance(given, dict) else _NOTHING


def branch_facts(branch: BranchJson, total: float | None = None) -> BranchFactsJson:
    """What the branch record says of itself, as the input gave it (``BranchFacts``);
    ``total``: its total score when known (the load stage computes a missing one)."""
    facts: BranchFactsJson = {"temperature": branch["temperature"]}
    # JSON Schema lets 1.0 be an integer: the output says 1 (as for branch_index).
    if "seed" in branch:
        seed = branch["seed"]
        facts["seed"] = None if seed is None else int(seed)
    facts["objective_score"] = _integer(branch["objective_score"])
    if "objective_status" in branch:
        facts["objective_status"] = branch["objective_status"]
    if "judge_score" in branch:
        facts["judge_score"] = branch["judge_score"]
    facts["total_score"] = total_score(branch) if total is None else total
    upstream = _upstream(branch)
    if upstream:
        # JSON text: producers' objects differ in keys and value types (one Arrow type).
        facts["upstream_provenance"] = orjson.dumps(upstream).decode("utf-8")
    return facts


#: What ``provenance`` and ``branch_facts`` read of a branch besides its scores: all a DPO
#: record needs of its chosen and rejected branches' input lines (``dpo_fact_fields``).
DPO_FACT_KEYS = frozenset(
    ("temperature", "seed", "objective_score", "objective_status", "judge_score", "provenance",
     "model_id")
)  # fmt: skip


def dpo_fact_fields(branch: Mapping[str, Any]) -> dict[str, Any]:
    """The ``DPO_FACT_KEYS`` of a branch, in its order, but a ``model_id`` that is not a
    string or a ``provenance`` that is not an object (both ignored, so never written):
    ``provenance`` and ``branch_facts`` of them equal those of the whole branch."""
    fields = {key: value for key, value in branch.items() if key in DPO_FACT_KEYS}
    if "model_id" in fields and not isinstance(fields["model_id"], str):
        del fields["model_id"]
    if "provenance" in fields and not isinstance(fields["provenance"], dict):
        del fields["provenance"]
    return fields


def _integer(score: float) -> Literal[0, 1]:
    """An objective score (0 or 1, perhaps written 1.0) as the integer the output says."""
    return cast(_ZeroOrOne, int(score))


def conversation_of(branch: BranchJson) -> Conversation:
    return build_messages(branch["task"], branch["tool_call_sequence"], branch["final_answer"])


def choose_pair(branches: Sequence[_R], *, tasks: Iterable[str]) -> tuple[_R, _R] | str:
    """(chosen, rejected) of one rollout, or the reason it yields no pair (``SKIP_*``).

    ``tasks``: what identifies each branch's task (its text or its hash). Branches of one
    rollout that were given different tasks yield no pair: the prompt is the chosen branch's
    task, so the rejected answer would be to another question.

    chosen = the best branch, rejected = the worst branch with a non-empty answer, among the
    branches whose ``objective_status`` is not ``unknown`` (a branch without the field is
    usable: its ``objective_score`` is required and says pass or fail)."""
    if len(set(tasks)) > 1:
        return SKIP_TASKS_DIFFER
    usable = rank_branches([b for b in branches if b.usable])
    if len(usable) < 2:
        return SKIP_FEWER_THAN_TWO
    chosen = usable[0]
    answered = [b for b in usable[1:] if b.final_answer.strip()]
    if not answered:
        return SKIP_NO_REJECTED_ANSWER
    rejected = answered[-1]
    if not chosen.final_answer.strip():
        return SKIP_EMPTY_CHOSEN
    if chosen.final_answer == rejected.final_answer:
        return SKIP_IDENTICAL
    if chosen.total == rejected.total:
        return SKIP_NO_SCORE_DIFFERENCE
    return chosen, rejected


def dpo_record(
    base: ProvenanceJson,
    messages: list[MessageJson],
    loss_weight: LossWeightTokens,
    chosen: Ranked,
    rejected: Ranked,
    facts: tuple[BranchFactsJson, BranchFactsJson] | None = None,
) -> DpoTrainingJson:
    """The DPO record of a chosen pair: ``messages`` is the chosen branch's conversation,
    ``base`` the provenance of its rollout (``provenance``), ``facts`` the chosen and the
    rejected branch's (``branch_facts``)."""
    pair_provenance: ProvenanceJson = {
        **base,
        "chosen_branch": chosen.branch_index,
        "rejected_branch": rejected.branch_index,
    }
    if facts is not None:
        pair_provenance["chosen_facts"], pair_provenance["rejected_facts"] = facts
    return {
        "schema_version": SCHEMA_VERSION,
        "prompt": prompt_text(messages),
        "messages": messages,
        "prompt_messages": messages[:-1],
        "chosen": chosen.final_answer,
        "rejected": rejected.final_answer,
        "loss_weight_tokens": loss_weight,
        "provenance": pair_provenance,
    }


def ppo_record(
    branch: BranchJson, conversation: Conversation, hashes: tuple[str, str]
) -> PpoTrainingJson:
    """The PPO record of one branch: reward = min(1, total_score / 1.3), clamped at 0;
    ``hashes`` are its task's (``task_hashes``)."""
    base = provenance(branch["rollout_id"], hashes, branch)
    base["branch_index"] = int(branch["branch_index"])  # JSON Schema lets 1.0 be an integer
    base["branch_facts"] = branch_facts(branch)
    return {
        "schema_version": SCHEMA_VERSION,
        "prompt": branch["task"],
        "messages": conversation.messages,
        "reward": reward(total_score(branch)),
        "loss_weight_tokens": conversation.loss_weight_tokens,
        "provenance": base,
    }


def dpo_from_layer2(record: DpoRecordJson, hashes: tuple[str, str]) -> DpoTrainingJson:
    """A Layer 2 ``DpoRecord`` as a Layer 3 DPO record (the conversation is the prompt, the
    recorded tool calls and the chosen answer); ``hashes`` are its prompt's (``task_hashes``)."""
    conversation = build_messages(record["prompt"], record["tool_call_sequence"], record["chosen"])
    given = record["provenance"]
    record_provenance = provenance(given["rollout_id"], hashes)
    record_provenance["exported_at_ms"] = int(given["exported_at_ms"])
    record_provenance["chosen_branch"] = int(given["chosen_branch"])
    record_provenance["rejected_branch"] = int(given["rejected_branch"])
    scores = given["objective_score"]
    record_provenance["chosen_facts"] = {"objective_score": _integer(scores["chosen"])}
    record_provenance["rejected_facts"] = {"objective_score": _integer(scores["rejected"])}
    messages = conversation.messages
    return {
        "schema_version": SCHEMA_VERSION,
        "prompt": record["prompt"],
        "messages": messages,
        "prompt_messages": messages[:-1],
        "chosen": record["chosen"],
        "rejected": record["rejected"],
        "loss_weight_tokens": conversation.loss_weight_tokens,
        "provenance": record_provenance,
    }


def ppo_from_layer2(record: PpoRecordJson, hashes: tuple[str, str]) -> PpoTrainingJson:
    """A Layer 2 ``PpoRecord`` (raw total as reward) as a Layer 3 PPO record; ``hashes`` are
    its prompt's (``task_hashes``)."""
    conversation = build_messages(
        record["prompt"], record["tool_call_sequence"], record["completion"]
    )
    given = record["provenance"]
    record_provenance = provenance(given["rollout_id"], hashes)
    record_provenance["exported_at_ms"] = int(given["exported_at_ms"])
    record_provenance["branch_index"] = int(given["branch_index"])
    record_provenance["branch_facts"] = {
        "objective_score": _integer(given["objective_score"]),
        "total_score": record["reward"],
    }
    return {
        "schema_version": SCHEMA_VERSION,
        "prompt": record["prompt"],
        "messages": conversation.messages,
        "reward": reward(float(record["reward"])),
        "loss_weight_tokens": conversation.loss_weight_tokens,
        "provenance": record_provenance,
    }


# The typed face of the rules, for the Python API.


def _branch_json(branch: RolloutBranchRecord) -> BranchJson:
    # to_wire of a record is its JSON, which is what the TypedDict describes.
    return cast(BranchJson, to_wire(branch))


def to_dpo(
    branches: Sequence[RolloutBranchRecord], ngram: int = DEFAULT_NGRAM
) -> DpoTrainingRecord | DpoSkip:
    """The DPO pair of one rollout's typed branches, or a ``DpoSkip`` (see ``choose_pair``;
    no branches at all is ``fewer_than_two_usable_branches``, with an empty rollout id).
    ``ngram`` (words per n-gram, at least 1) is for the provenance's
    ``task_ngram_fingerprint``."""
    check_ngram(ngram, "ngram")
    scored = [(BranchScore.of(wire), wire) for wire in map(_branch_json, branches)]
    pair = choose_pair([score for score, _ in scored], tasks=(b.task for b in branches))
    if isinstance(pair, str):
        return DpoSkip(branches[0].rollout_id if branches else "", pair)
    chosen, rejected = pair
    branch = next(wire for score, wire in scored if score is chosen)
    other = next(wire for score, wire in scored if score is rejected)
    conversation = conversation_of(branch)
    record = dpo_record(
        provenance(branch["rollout_id"], task_hashes(branch["task"], ngram), branch),
        conversation.messages,
        conversation.loss_weight_tokens,
        chosen,
        rejected,
        (branch_facts(branch), branch_facts(other)),
    )
    return from_wire(DpoTrainingRecord, dict(record))


def to_ppo(
    branches: Sequence[RolloutBranchRecord], ngram: int = DEFAULT_NGRAM
) -> list[PpoTrainingRecord]:
    """One PPO record per typed branch, in ``branch_index`` order; ``ngram`` as for
    ``to_dpo``."""
    check_ngram(ngram, "ngram")
    records = []
    for branch in sorted(branches, key=lambda b: b.branch_index):
        wire = _branch_json(branch)
        record = ppo_record(wire, conversation_of(wire), task_hashes(wire["task"], ngram))
        records.append(from_wire(PpoTrainingRecord, dict(record)))
    return records
