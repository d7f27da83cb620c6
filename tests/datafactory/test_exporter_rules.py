"""Unit tests of each rule: repairs, ranking, pairing, rewards, conversations, loss weights."""

from __future__ import annotations

from typing import Any

import pytest

from contracts import locate
from datafactory import DpoSkip, to_dpo, to_ppo
from datafactory.conversation import build_messages, loss_weight_tokens
from datafactory.pairs import task_hash
from datafactory.rank import BranchScore, rank_branches, rank_disagreements, reward, total_score
from datafactory.records import RolloutBranchRecord, from_wire, to_wire
from datafactory.repair import Reject, formula_total, normalise_value
from tests.datafactory.helpers import branch
from wiregate.record_validator import ValidatorSet

VALIDATORS = ValidatorSet(locate(None))


def typed(record: dict[str, Any]) -> Any:
    return from_wire(RolloutBranchRecord, normalise_value(record, VALIDATORS).data)


def normalised(record: dict[str, Any]) -> Any:
    return normalise_value(record, VALIDATORS).data


def score(record: dict[str, Any], rank_given: bool = True) -> BranchScore:
    return BranchScore.of(normalised(record), rank_given)


# --- repairs -----------------------------------------------------------------------------


def _repaired(**fields: Any) -> tuple[dict[str, Any], list[str]]:
    result = normalise_value(branch(**fields), VALIDATORS)
    return result.data, result.repairs


def test_canonical_envelope_needs_no_repair() -> None:
    sequence = [
        {"event": "tool_call", "data": {"name": "ls", "args": {}}},
        {"event": "tool_result", "data": {"output": "a"}},
    ]
    data, repairs = _repaired(tool_call_sequence=sequence)
    assert repairs == []
    assert data["tool_call_sequence"] == sequence


def test_camelcase_event_data_is_renamed() -> None:
    data, repairs = _repaired(
        tool_call_sequence=[
            {
                "channel": "tools",
                "event": "tool_call",
                "data": {"toolName": "ls", "args": {}, "callId": "c1"},
            },
            {"channel": "tools", "event": "tool_result", "data": {"output": "a", "callId": "c1"}},
        ]
    )
    assert repairs == ["tool_call:camelcase_data"]
    assert data["tool_call_sequence"][0]["data"] == {"name": "ls", "args": {}, "call_id": "c1"}
    assert data["tool_call_sequence"][1]["data"] == {"output": "a", "call_id": "c1"}


def test_flat_entry_with_arguments_and_error_becomes_two_events() -> None:
    data, repairs = _repaired(
        tool_call_sequence=[
            {"tool_name": "run", "arguments": {"cmd": "make"}, "result": None, "error": "boom"}
        ]
    )
    assert repairs == ["tool_call:flat_arguments"]
    assert data["tool_call_sequence"] == [
        {"event": "tool_call", "data": {"name": "run", "args": {"cmd": "make"}}},
        {"event": "tool_result", "data": {"output": None, "error": "boom"}},
    ]


@pytest.mark.parametrize(
    ("arguments", "args", "repairs"),
    [
        (
            '{"dir": "."}',
            {"dir": "."},
            ["tool_call:arguments_json_text", "tool_call:flat_arguments"],
        ),
        # Text that encodes no object (or a key twice, or NaN) stays text: the contract rejects it.
        ("ls -la", "ls -la", ["tool_call:flat_arguments"]),
        ("[1, 2]", "[1, 2]", ["tool_call:flat_arguments"]),
        ('{"a": 1, "a": 2}', '{"a": 1, "a": 2}', ["tool_call:flat_arguments"]),
        ('{"a": NaN}', '{"a": NaN}', ["tool_call:flat_arguments"]),
        # decoded, it was inf, which the outputs wrote as null
        ('{"x": 1e400}', '{"x": 1e400}', ["tool_call:flat_arguments"]),
    ],
)
def test_flat_arguments_as_json_text_are_decoded(
    arguments: str, args: Any, repairs: list[str]
) -> None:
    """OpenAI's form, ``"arguments": "{...}"``: the whole branch was rejected (args must be an
    object) and its rollout lost a branch."""
    sequence = [{"tool_name": "ls", "arguments": arguments, "result": "a b"}]
    if isinstance(args, dict):
        data, given = _repaired(tool_call_sequence=sequence)
        assert given == repairs
        call = {"event": "tool_call", "data": {"name": "ls", "args": args}}
        assert data["tool_call_sequence"][0] == call
        return
    with pytest.raises(Reject) as caught:
        normalise_value(branch(tool_call_sequence=sequence), VALIDATORS)
    assert caught.value.code == "contract-violation"
    assert caught.value.where is not None
    assert caught.value.where[0] == "/tool_call_sequence/0/data/args"


def test_flat_entry_with_args_keeps_its_other_keys() -> None:
    data, repairs = _repaired(
        tool_call_sequence=[
            {
                "tool_name": "x",
                "args": {"a": 1},
                "result": {"ok": True},
                "timestamp_ms": 5,
                "state_changing": False,
            }
        ]
    )
    assert repairs == ["tool_call:flat_args"]
    assert data["tool_call_sequence"] == [
        {
            "event": "tool_call",
            "data": {"name": "x", "args": {"a": 1}, "timestamp_ms": 5, "state_changing": False},
        },
        {"event": "tool_result", "data": {"output": {"ok": True}}},
    ]


@pytest.mark.parametrize(
    ("build_result", "expected", "repairs"),
    [
        (
            {"status": "success", "exitCode": 0, "ranAtMs": 7},
            {"status": "pass", "exit_code": 0, "ran_at_ms": 7},
            ["build_result:camelcase_keys", "build_result:status_alias"],
        ),
        ({"status": "failed"}, {"status": "fail"}, ["build_result:status_alias"]),
        (
            {"exit_code": 0, "stdout": "ok"},
            {"exit_code": 0, "stdout": "ok", "status": "pass"},
            ["build_result:status_from_exit_code"],
        ),
        (
            {"exit_code": 2},
            {"exit_code": 2, "status": "fail"},
            ["build_result:status_from_exit_code"],
        ),
        ({"status": "skip", "exit_code": None}, {"status": "skip", "exit_code": None}, []),
    ],
)
def test_build_result_repairs(
    build_result: dict[str, Any], expected: dict[str, Any], repairs: list[str]
) -> None:
    data, done = _repaired(build_result=build_result)
    assert data["build_result"] == expected
    assert done == repairs


def test_build_result_without_status_or_exit_code_is_rejected() -> None:
    with pytest.raises(Reject) as caught:
        normalise_value(branch(build_result={"stdout": "?"}), VALIDATORS)
    assert caught.value.code == "contract-violation"
    assert "/build_result" in caught.value.detail


def test_missing_total_score_and_rank_are_computed_and_counted() -> None:
    record = branch(objective_score=1, judge_score=8)
    del record["total_score"], record["rank"]
    result = normalise_value(record, VALIDATORS)
    assert result.repairs == ["total_score:computed", "rank:computed"]
    assert result.data["total_score"] == pytest.approx(1.24)
    assert result.rank_given is False


@pytest.mark.parametrize(
    ("record", "code", "detail"),
    [
        ([1, 2], "not-an-object", "a record is a JSON object, got list"),
        (
            {"question": "q"},
            "unsupported-record-type",
            "not a rollout-wire record; expected a Layer 1 or Layer 2 record",
        ),
        (
            {**branch(), "branch_index": "0"},
            "contract-violation",
            'RolloutBranchRecord /branch_index: expected type integer, got "0"',
        ),
        (
            branch(objective_score=2),
            "contract-violation",
            "RolloutBranchRecord /objective_score: 2 is not one of [0, 1]",
        ),
        (
            branch(task=""),
            "contract-violation",
            'RolloutBranchRecord /task: must be at least 1 characters long, got ""',
        ),
    ],
)
def test_contract_violations_are_rejected_with_the_field(
    record: Any, code: str, detail: str
) -> None:
    with pytest.raises(Reject) as caught:
        normalise_value(record, VALIDATORS)
    assert (caught.value.code, caught.value.detail) == (code, detail)


# --- ranking and rewards -----------------------------------------------------------------


def test_total_score_formula_with_and_without_judge() -> None:
    assert formula_total(1, 10) == pytest.approx(1.3)
    assert formula_total(0, None) == pytest.approx(0.15)  # judge 5 when absent
    with_judge = branch(objective_score=1, judge_score=10)
    del with_judge["total_score"]
    assert total_score(normalised(with_judge)) == pytest.approx(1.3)
    without = branch(objective_score=0)
    del without["total_score"]
    assert total_score(normalised(without)) == pytest.approx(0.15)
    given = branch(total_score=0.7, judge_score=1)
    assert total_score(normalised(given)) == 0.7  # a given total wins


def test_rank_highest_total_first_ties_to_lower_branch_index() -> None:
    branches = [
        score(branch(branch_index=2, total_score=0.5)),
        score(branch(branch_index=0, total_score=0.5)),
        score(branch(branch_index=1, total_score=0.9)),
    ]
    assert [b.branch_index for b in rank_branches(branches)] == [1, 0, 2]


def test_rank_disagreements_are_counted_scores_win() -> None:
    records = [
        branch(branch_index=0, total_score=0.0, rank=1),
        branch(branch_index=1, total_score=1.0, rank=2),
        branch(branch_index=2, total_score=0.5, rank=2),
    ]
    assert rank_disagreements([score(r) for r in records]) == 2
    # A computed rank (the input had none) cannot disagree.
    assert rank_disagreements([score(r, i > 0) for i, r in enumerate(records)]) == 1


@pytest.mark.parametrize(
    ("total", "expected"), [(1.3, 1.0), (2.0, 1.0), (0.65, 0.5), (0.0, 0.0), (-1.0, 0.0)]
)
def test_reward_is_normalised_and_clamped(total: float, expected: float) -> None:
    assert reward(total) == pytest.approx(expected)


def test_to_ppo_one_record_per_branch_in_branch_order() -> None:
    records = to_ppo(
        [
            typed(branch(branch_index=1, objective_score=0)),
            typed(branch(branch_index=0, judge_score=10, total_score=1.3)),
        ]
    )
    wire = [to_wire(r) for r in records]
    assert [w["provenance"]["branch_index"] for w in wire] == [0, 1]
    assert [w["reward"] for w in wire] == [1.0, 0.0]
    assert wire[0]["provenance"]["task_hash"] == task_hash("Add a hello world button to the page")


# --- DPO pairs ---------------------------------------------------------------------------


def _pair(*records: dict[str, Any]) -> Any:
    return to_dpo([typed(r) for r in records])


def test_dpo_chosen_best_rejected_worst() -> None:
    pair = to_wire(
        _pair(
            branch(branch_index=0, total_score=0.5, final_answer="mid"),
            branch(branch_index=1, total_score=1.2, final_answer="best"),
            branch(branch_index=2, total_score=0.1, final_answer="worst"),
        )
    )
    assert (pair["chosen"], pair["rejected"]) == ("best", "worst")
    assert (pair["provenance"]["chosen_branch"], pair["provenance"]["rejected_branch"]) == (1, 2)
    assert pair["prompt_messages"] == pair["messages"][:-1]
    assert pair["messages"][-1] == {"role": "assistant", "content": "best"}


def test_dpo_ignores_branches_with_unknown_objective_status() -> None:
    pair = to_wire(
        _pair(
            branch(branch_index=0, total_score=1.0, final_answer="a"),
            branch(branch_index=1, total_score=0.5, final_answer="b"),
            branch(branch_index=2, total_score=0.0, final_answer="c", objective_status="unknown"),
        )
    )
    assert pair["provenance"]["rejected_branch"] == 1


@pytest.mark.parametrize(
    ("records", "reason"),
    [
        ([branch(branch_index=0)], "fewer_than_two_usable_branches"),
        (
            [branch(branch_index=0), branch(branch_index=1, objective_status="unknown")],
            "fewer_than_two_usable_branches",
        ),
        (
            [
                branch(branch_index=0, total_score=1.0, final_answer="same"),
                branch(branch_index=1, total_score=0.0, final_answer="same"),
            ],
            "identical_answers",
        ),
        (
            [
                branch(branch_index=0, total_score=0.5, final_answer="a"),
                branch(branch_index=1, total_score=0.5, final_answer="b"),
            ],
            "no_score_difference",
        ),
        (
            [
                branch(branch_index=0, total_score=1.0, final_answer="a"),
                branch(branch_index=1, total_score=0.0, final_answer="  "),
            ],
            "no_nonempty_rejected_answer",
        ),
        (
            [
                branch(branch_index=0, total_score=1.0, final_answer=""),
                branch(branch_index=1, total_score=0.0, final_answer="b"),
            ],
            "empty_chosen_answer",
        ),
        (
            [
                branch(branch_index=0, total_score=1.0, task="Write a poem about cats"),
                branch(branch_index=1, total_score=0.0, task="Delete the production database"),
            ],
            "branches_disagree_on_task",  # was paired: the rejected answer to another task
        ),
    ],
)
def test_dpo_skips_are_counted_by_reason(records: list[dict[str, Any]], reason: str) -> None:
    result = _pair(*records)
    assert isinstance(result, DpoSkip)
    assert result.reason == reason


def test_to_dpo_keeps_branches_that_share_an_index() -> None:
    # The typed API ranks what it is given; the export run rejects such duplicates first.
    pair = to_wire(
        _pair(
            branch(branch_index=0, total_score=1.0, final_answer="good"),
            branch(branch_index=1, total_score=0.0, final_answer="bad"),
            branch(branch_index=0, total_score=0.0, final_answer="other"),
        )
    )
    assert (pair["chosen"], pair["rejected"]) == ("good", "bad")
    assert pair["messages"][-1] == {"role": "assistant", "content": "good"}


def test_dpo_rejected_is_the_worst_branch_with_an_answer() -> None:
    pair = to_wire(
        _pair(
            branch(branch_index=0, total_score=1.0, final_answer="best"),
            branch(branch_index=1, total_score=0.5, final_answer="ok"),
            branch(branch_index=2, total_score=0.0, final_answer=""),
        )
    )
    assert pair["provenance"]["rejected_branch"] == 1


# --- conversations and loss weights --------------------------------------------------------


def _conversation(*entries: Any) -> Any:
    return build_messages("task", list(entries), "final")


def test_messages_pair_results_by_call_id_then_in_order() -> None:
    conversation = _conversation(
        {"event": "tool_call", "data": {"name": "a", "args": {"x": 1}, "call_id": "A"}},
        {"event": "tool_call", "data": {"name": "b"}},
        {"event": "tool_result", "data": {"output": "for b", "call_id": "call_1"}},
        {"event": "tool_result", "data": {"output": {"k": [1]}, "call_id": "A"}},
    )
    assert conversation.messages == [
        {"role": "user", "content": "task"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "A", "type": "function", "function": {"name": "a", "arguments": '{"x":1}'}}
            ],
        },
        {"role": "tool", "content": '{"k":[1]}', "tool_call_id": "A"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "b", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "content": "for b", "tool_call_id": "call_1"},
        {"role": "assistant", "content": "final"},
    ]


def test_unanswered_call_gets_an_empty_tool_message_and_orphan_results_add_nothing() -> None:
    conversation = _conversation(
        {"event": "tool_result", "data": {"output": "orphan"}},
        {"event": "tool_call", "data": {"name": "a"}},
    )
    roles = [(m["role"], m["content"]) for m in conversation.messages]
    assert roles == [("user", "task"), ("assistant", None), ("tool", ""), ("assistant", "final")]


def test_loss_weight_default() -> None:
    conversation = _conversation(
        {"event": "tool_call", "data": {"name": "a"}},
        {"event": "tool_result", "data": {"output": "ok"}},
    )
    assert conversation.loss_weight_tokens == "default"


def test_loss_weight_recovery_after_an_error_result() -> None:
    conversation = _conversation(
        {"event": "tool_call", "data": {"name": "a"}},
        {"event": "tool_result", "data": {"error": "ENOENT"}},
    )
    assert conversation.messages[2]["content"] == "ENOENT"
    assert conversation.loss_weight_tokens == "recovery"


def test_loss_weight_state_summary_when_content_precedes_a_further_call() -> None:
    conversation = _conversation(
        {"event": "tool_call", "data": {"name": "a", "content": "Plan: read, then fix."}},
        {"event": "tool_result", "data": {"output": "ok"}},
        {"event": "tool_call", "data": {"name": "b"}},
        {"event": "tool_result", "data": {"output": "ok"}},
    )
    assert conversation.loss_weight_tokens == "state_summary"


def test_loss_weight_recovery_wins_over_state_summary() -> None:
    conversation = _conversation(
        {"event": "tool_call", "data": {"name": "a", "content": "Plan"}},
        {"event": "tool_result", "data": {"error": "failed"}},
        {"event": "tool_call", "data": {"name": "b"}},
    )
    assert conversation.loss_weight_tokens == "recovery"


def test_loss_weight_error_without_a_later_assistant_turn_is_not_recovery() -> None:
    messages = _conversation(
        {"event": "tool_call", "data": {"name": "a"}},
        {"event": "tool_result", "data": {"error": "failed"}},
    ).messages
    assert loss_weight_tokens(messages[:-1], frozenset({2})) == "default"


@pytest.mark.parametrize("rank", [0, -1, 1.5, True, "1"])
def test_a_rank_out_of_range_is_recomputed_never_rejected(rank: object) -> None:
    """0-based ranks (the wasmagent-js simple-coding-task fixture) and other ranks the contract
    rejects cost the branch nothing: the scores rank it."""
    result = normalise_value(branch(rank=rank), VALIDATORS)
    assert (result.repairs, result.data["rank"], result.rank_given) == (
        ["rank:out_of_range"],
        1,
        False,
    )


@pytest.mark.parametrize(
    ("total", "repairs"),
    [(1.3, []), (0, []), (1.31, ["reward:clamped"]), (-0.1, ["reward:clamped"])],
)
def test_a_total_beyond_the_reward_range_is_kept_and_its_clamping_counted(
    total: float, repairs: list[str]
) -> None:
    result = normalise_value(branch(total_score=total), VALIDATORS)
    assert (result.repairs, result.data["total_score"]) == (repairs, total)


def test_a_result_with_both_output_and_error_keeps_both() -> None:
    """What a command printed, then why it failed: the error alone lost the output."""
    events: list[Any] = [
        {"event": "tool_call", "data": {"name": "sh", "args": {"cmd": "make"}, "call_id": "c1"}},
        {"event": "tool_result", "data": {"call_id": "c1", "output": "OUT1", "error": "exit 2"}},
        {"event": "tool_call", "data": {"name": "sh", "args": {"cmd": "ls"}, "call_id": "c2"}},
        {"event": "tool_result", "data": {"call_id": "c2", "output": {"n": 1}, "error": "denied"}},
    ]
    conversation = build_messages("Build it", events, "done")
    tools = [m["content"] for m in conversation.messages if m["role"] == "tool"]
    assert tools == ["OUT1\nexit 2", '{"n":1}\ndenied']
    assert conversation.loss_weight_tokens == "recovery"
    [ppo] = to_ppo([from_wire(RolloutBranchRecord, branch(tool_call_sequence=events))])
    assert [m.content for m in ppo.messages if m.role == "tool"] == tools  # the typed path
