"""The TRL target's records, rule by rule (exact records; no trainer packages needed)."""

from __future__ import annotations

from typing import Any, cast

import pytest

from datafactory.pairs import DpoSkip
from datafactory.records import BranchJson
from datafactory.targets import (
    TrlOptions,
    arguments_as_objects,
    branch_turns,
    dpo_record,
    kto_records,
    passed,
    prompt_records,
    sft_records,
    tool_catalogue,
)
from tests.datafactory.helpers import branch

TASK = "Add a hello world button to the page"


def _calls(*calls: tuple[str, dict[str, Any] | None, str]) -> list[dict[str, Any]]:
    """tool_call_sequence of (name, args, output) calls, each answered at once."""
    events: list[dict[str, Any]] = []
    for name, args, output in calls:
        data: dict[str, Any] = {"name": name}
        if args is not None:
            data["args"] = args
        events += [
            {"event": "tool_call", "data": data},
            {"event": "tool_result", "data": {"output": output}},
        ]
    return events


def _branch(index: int, objective: int, **fields: Any) -> BranchJson:
    return cast(BranchJson, branch("r-1", index, objective_score=objective, **fields))


GOOD = _branch(
    0,
    1,
    tool_call_sequence=_calls(("write_file", {"path": "a.tsx", "content": "ok"}, "written")),
    final_answer="Added the button.",
    judge_score=9,
    total_score=1.27,
    seed=7,
)
BAD = _branch(
    1,
    0,
    tool_call_sequence=_calls(("read_file", {"path": "a.tsx"}, "nothing"), ("grep", None, "")),
    final_answer="Could not find the page.",
    total_score=0.15,
    temperature=1.0,
)

ROLLOUT_COLUMNS = {
    "rollout_id": "r-1",
    "task_hash": "a8fb558cfae2e1e3",
    "source": "wasmagent-rollout",
    "model_id": None,
    "upstream_provenance": None,
}
GOOD_TURNS = [
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "call00000",
                "type": "function",
                "function": {"name": "write_file", "arguments": '{"path":"a.tsx","content":"ok"}'},
            }
        ],
    },
    {"role": "tool", "content": "written", "tool_call_id": "call00000"},
    {"role": "assistant", "content": "Added the button."},
]
BAD_TURNS = [
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "call00000",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path":"a.tsx"}'},
            }
        ],
    },
    {"role": "tool", "content": "nothing", "tool_call_id": "call00000"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "call00001", "type": "function", "function": {"name": "grep", "arguments": "{}"}}
        ],
    },
    {"role": "tool", "content": "", "tool_call_id": "call00001"},
    {"role": "assistant", "content": "Could not find the page."},
]


def test_dpo_record_has_an_explicit_prompt_and_each_branch_its_own_trajectory() -> None:
    assert dpo_record([BAD, GOOD]) == {
        "prompt": [{"role": "user", "content": TASK}],
        "chosen": GOOD_TURNS,
        "rejected": BAD_TURNS,
        "tools": None,
        **ROLLOUT_COLUMNS,
        "chosen_branch": 0,
        "chosen_temperature": 0.7,
        "chosen_seed": 7,
        "chosen_objective_score": 1,
        "chosen_objective_status": "pass",
        "chosen_judge_score": 9.0,
        "chosen_total_score": 1.27,
        "rejected_branch": 1,
        "rejected_temperature": 1.0,
        "rejected_seed": None,
        "rejected_objective_score": 0,
        "rejected_objective_status": "fail",
        "rejected_judge_score": None,
        "rejected_total_score": 0.15,
    }


@pytest.mark.parametrize(
    ("good_rank", "bad_rank"),
    [(0, 1), (1, 0), (2, 1), (0, 0)],
    ids=["zero-based", "zero-on-the-failing-branch", "rank-contradicts-scores", "both-zero"],
)
def test_dpo_pair_comes_from_the_scores_whatever_the_ranks(good_rank: int, bad_rank: int) -> None:
    # The wasmagent-js simple-coding-task fixture ranks from 0; a golden fixture gives rank 1
    # to the failing branch. The load stage's contract check still rejects rank 0 today.
    good = cast(BranchJson, {**GOOD, "rank": good_rank})
    bad = cast(BranchJson, {**BAD, "rank": bad_rank})
    record = dpo_record([bad, good])
    assert not isinstance(record, DpoSkip)
    assert (record["chosen_branch"], record["rejected_branch"]) == (0, 1)


def test_dpo_skips_say_why() -> None:
    assert dpo_record([GOOD]) == DpoSkip("r-1", "fewer_than_two_usable_branches")
    assert dpo_record([]) == DpoSkip("", "fewer_than_two_usable_branches")
    unknown = cast(BranchJson, {**BAD, "objective_status": "unknown"})
    assert dpo_record([GOOD, unknown]) == DpoSkip("r-1", "fewer_than_two_usable_branches")
    blank = cast(BranchJson, {**BAD, "final_answer": "  "})
    assert dpo_record([GOOD, blank]) == DpoSkip("r-1", "no_nonempty_rejected_answer")


def test_prompt_records_carry_reward_scores_and_upstream_provenance() -> None:
    upstream = {"source": "bscode-smoke", "model_id": "claude-sonnet-4-6", "runtime_version": "1"}
    over = cast(BranchJson, {**GOOD, "total_score": 1.5, "provenance": upstream})
    assert prompt_records([BAD, over]) == [
        {
            "prompt": [{"role": "user", "content": TASK}],
            "completion": GOOD_TURNS,
            "reward": 1.0,  # clamped; total_score keeps the raw 1.5
            "tools": None,
            **ROLLOUT_COLUMNS,
            "source": "bscode-smoke",
            "model_id": "claude-sonnet-4-6",
            "upstream_provenance": (
                '{"source":"bscode-smoke","model_id":"claude-sonnet-4-6","runtime_version":"1"}'
            ),
            "branch_index": 0,
            "temperature": 0.7,
            "seed": 7,
            "objective_score": 1,
            "objective_status": "pass",
            "judge_score": 9.0,
            "total_score": 1.5,
        },
        {
            "prompt": [{"role": "user", "content": TASK}],
            "completion": BAD_TURNS,
            "reward": 0.15 / 1.3,
            "tools": None,
            **ROLLOUT_COLUMNS,
            "branch_index": 1,
            "temperature": 1.0,
            "seed": None,
            "objective_score": 0,
            "objective_status": "fail",
            "judge_score": None,
            "total_score": 0.15,
        },
    ]


def test_kto_records_label_from_the_objective_of_usable_answered_branches() -> None:
    no_status = cast(BranchJson, {**BAD, "branch_index": 2})
    del cast(dict[str, Any], no_status)["objective_status"]
    passing_no_status = cast(BranchJson, {**GOOD, "branch_index": 3})
    del cast(dict[str, Any], passing_no_status)["objective_status"]
    unknown = cast(BranchJson, {**GOOD, "branch_index": 4, "objective_status": "unknown"})
    blank = cast(BranchJson, {**BAD, "branch_index": 5, "final_answer": ""})
    records = kto_records([unknown, blank, passing_no_status, no_status, BAD, GOOD])
    assert [(r["branch_index"], r["label"]) for r in records] == [
        (0, True),
        (1, False),
        (2, False),
        (3, True),
    ]
    assert set(records[0]) == {
        "prompt",
        "completion",
        "label",
        "tools",
        *ROLLOUT_COLUMNS,
        "branch_index",
        "temperature",
        "seed",
        "objective_score",
        "objective_status",
        "judge_score",
        "total_score",
    }


def test_sft_records_are_the_passing_conversations() -> None:
    blank = cast(BranchJson, {**GOOD, "branch_index": 2, "final_answer": " "})
    (record,) = sft_records([BAD, GOOD, blank])
    assert record["messages"] == [{"role": "user", "content": TASK}, *GOOD_TURNS]
    assert (record["branch_index"], record["tools"]) == (0, None)
    assert [passed(b) for b in (GOOD, BAD)] == [True, False]


def test_object_arguments_given_ids_and_a_system_turn() -> None:
    sequence = [
        {"event": "tool_call", "data": {"name": "run", "args": {"n": 1}, "call_id": "abc"}},
        {"event": "tool_call", "data": {"name": "echo", "call_id": "def", "content": "Let me"}},
        {"event": "tool_result", "data": {"call_id": "def", "error": "boom"}},
        {"event": "tool_result", "data": {"call_id": "abc", "output": {"ok": True}}},
    ]
    given = cast(BranchJson, {**GOOD, "tool_call_sequence": sequence})
    options = TrlOptions(tool_arguments="object", tool_call_ids="given", system="Be brief.")
    turns = branch_turns(given, options)
    assert turns.prompt == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": TASK},
    ]
    assert turns.completion == [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "abc",
                    "type": "function",
                    "function": {"name": "run", "arguments": {"n": 1}},
                }
            ],
        },
        {"role": "tool", "content": '{"ok":true}', "tool_call_id": "abc"},
        {
            "role": "assistant",
            "content": "Let me",
            "tool_calls": [
                {"id": "def", "type": "function", "function": {"name": "echo", "arguments": {}}}
            ],
        },
        {"role": "tool", "content": "boom", "tool_call_id": "def"},
        {"role": "assistant", "content": "Added the button."},
    ]
    assert turns.tool_names == ("run", "echo")
    short = branch_turns(given)
    assert [m.get("tool_call_id") for m in short.completion] == [
        None,
        "call00000",
        None,
        "call00001",
        None,
    ]


def test_tools_column_is_the_whole_catalogue_for_every_record() -> None:
    """The tools the agent had, in the catalogue's order: the called ones only, first call
    first, told the prompt the answer's tool sequence, and a record that called none had no
    tool block at all (a difference that predicts the label)."""
    catalogue = tool_catalogue(
        [
            {"type": "function", "function": {"name": "grep", "description": "Search."}},
            {"name": "read_file", "parameters": {"type": "object", "required": ["path"]}},
        ]
    )
    assert catalogue == {
        "grep": {
            "type": "function",
            "function": {
                "name": "grep",
                "description": "Search.",
                "parameters": {"type": "object", "properties": {}},
            },
        },
        "read_file": {
            "type": "function",
            "function": {
                "name": "read_file",
                "description": "",
                "parameters": {"type": "object", "required": ["path"], "properties": {}},
            },
        },
    }
    record = dpo_record([GOOD, BAD], TrlOptions(tools=catalogue))
    assert not isinstance(record, DpoSkip)
    whole = (
        '[{"type":"function","function":{"name":"grep","description":"Search.","parameters":'
        '{"type":"object","properties":{}}}},{"type":"function","function":{"name":"read_file",'
        '"parameters":{"type":"object","required":["path"],"properties":{}},"description":""}}]'
    )
    assert record["tools"] == whole
    (sft,) = sft_records([GOOD], TrlOptions(tools=catalogue))
    assert sft["tools"] == whole  # it called none of the known tools
    kto = kto_records([GOOD, BAD], TrlOptions(tools=catalogue))
    assert [r["tools"] for r in kto] == [whole, whole]
    assert sft_records([GOOD], TrlOptions(tools={}))[0]["tools"] is None
    with pytest.raises(ValueError, match="tool spec 1: no function name"):
        tool_catalogue([{"name": "a"}, {"type": "function", "function": {}}])


def test_options_are_checked() -> None:
    with pytest.raises(ValueError, match="tool_arguments: 'string' or 'object', got 'dict'"):
        TrlOptions(tool_arguments=cast(Any, "dict"))
    with pytest.raises(ValueError, match="tool_call_ids: 'short' or 'given', got 'long'"):
        TrlOptions(tool_call_ids=cast(Any, "long"))


def test_arguments_as_objects_decodes_arguments_and_tools_and_drops_nulls() -> None:
    loaded = {
        "prompt": [{"role": "user", "content": TASK, "tool_calls": None, "tool_call_id": None}],
        "completion": [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "call00000",
                        "type": "function",
                        "function": {"name": "a", "arguments": '{"x":1}'},
                    },
                    {
                        "id": "call00001",
                        "type": "function",
                        "function": {"name": "b", "arguments": "not json"},
                    },
                    {
                        "id": "call00002",
                        "type": "function",
                        "function": {"name": "c", "arguments": "[1]"},
                    },
                ],
                "tool_call_id": None,
            }
        ],
        "tools": '[{"type":"function","function":{"name":"a"}}]',
        "reward": 0.5,
    }
    assert arguments_as_objects(loaded) == {
        "prompt": [{"role": "user", "content": TASK}],
        "completion": [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "call00000",
                        "type": "function",
                        "function": {"name": "a", "arguments": {"x": 1}},
                    },
                    {
                        "id": "call00001",
                        "type": "function",
                        "function": {"name": "b", "arguments": "not json"},
                    },
                    {
                        "id": "call00002",
                        "type": "function",
                        "function": {"name": "c", "arguments": "[1]"},
                    },
                ],
            }
        ],
        "tools": [{"type": "function", "function": {"name": "a"}}],
        "reward": 0.5,
    }
    assert loaded["tools"] == '[{"type":"function","function":{"name":"a"}}]'  # not mutated


@pytest.mark.parametrize(
    ("specs", "message"),
    [
        (
            [{"name": "read_file", "parameters": "notobj"}],
            "tool spec 0 (read_file): parameters must be a JSON object (a JSON Schema), got str",
        ),
        (
            [{"name": "grep", "parameters": {"type": "object", "properties": 5}}],
            "tool spec 0 (grep): parameters.properties must be a JSON object, got int",
        ),
        (
            [{"name": "grep", "description": ["Search."]}],
            "tool spec 0 (grep): description must be a string, got list",
        ),
        (
            [{"name": "grep"}, {"type": "function", "function": {"name": "grep"}}],
            "tool spec 1: 'grep' again (first: tool spec 0)",
        ),
    ],
)
def test_a_tool_spec_is_never_changed_or_dropped_silently(
    specs: list[dict[str, Any]], message: str
) -> None:
    with pytest.raises(ValueError) as caught:
        tool_catalogue(specs)
    assert str(caught.value) == message


def test_null_description_and_parameters_are_absent_ones() -> None:
    assert tool_catalogue([{"name": "grep", "description": None, "parameters": None}]) == {
        "grep": {
            "type": "function",
            "function": {
                "name": "grep",
                "description": "",
                "parameters": {"type": "object", "properties": {}},
            },
        }
    }


def test_null_properties_are_absent_ones() -> None:
    spec = {"name": "grep", "parameters": {"type": "object", "properties": None}}
    assert tool_catalogue([spec])["grep"]["function"]["parameters"] == {
        "type": "object",
        "properties": {},
    }
