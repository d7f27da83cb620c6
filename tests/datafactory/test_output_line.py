"""An output line made with the conversation JSON made earlier is the same bytes as one made
from the record alone (the PPO line reuses the JSON made for the DPO pair)."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import given
from hypothesis import strategies as st

from contracts import locate
from datafactory.stages.load import OutputCheck as _OutputCheck
from wiregate.record_validator import ValidatorSet

CHECK = _OutputCheck(ValidatorSet(locate(None)))
TEXT = st.text(max_size=12)
MESSAGE = st.one_of(
    st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]), "content": TEXT}),
    st.fixed_dictionaries(
        {"role": st.just("tool"), "content": TEXT, "tool_call_id": st.text(min_size=1, max_size=4)}
    ),
)


@given(
    messages=st.lists(MESSAGE, min_size=1, max_size=4),
    reward=st.floats(0, 1),
    index=st.integers(0, 9),
)
def test_reused_messages_json_gives_identical_bytes(
    messages: list[dict[str, Any]], reward: float, index: int
) -> None:
    record = {
        "schema_version": "training-record/v2",
        "prompt": "Fix the failing test",
        "messages": messages,
        "reward": reward,
        "loss_weight_tokens": "default",
        "provenance": {
            "source": "wasmagent-rollout",
            "rollout_id": "r",
            "task_hash": "0123456789abcdef",
            "task_ngram_fingerprint": "0123456789abcdef",
            "branch_index": index,
        },
    }
    plain = CHECK.line(CHECK.ppo, record)
    assert plain == orjson.dumps(record) + b"\n"
    assert CHECK.line(CHECK.ppo, record, orjson.dumps(messages)) == plain
