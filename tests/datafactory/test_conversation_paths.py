"""The fast path of a conversation whose events alternate call, result gives the messages the
general pairing rules give."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from datafactory.conversation import _alternating, _conversation, _paired

IDS = st.one_of(st.none(), st.sampled_from(["", "a", "b", "c"]))
CALL = st.builds(
    lambda i, name, args, content: {
        "event": "tool_call",
        "data": {"call_id": i, "name": name, "args": args, "content": content},
    },
    IDS,
    st.sampled_from(["run", "", None]),
    st.one_of(st.none(), st.dictionaries(st.text(max_size=2), st.integers(-9, 9), max_size=2)),
    st.one_of(st.none(), st.text(max_size=3)),
)
RESULT = st.builds(
    lambda i, output, error: {
        "event": "tool_result",
        "data": {"call_id": i, "output": output, "error": error},
    },
    IDS,
    st.one_of(st.none(), st.text(max_size=3), st.lists(st.integers(-9, 9), max_size=2)),
    st.one_of(st.none(), st.sampled_from(["", "boom"])),
)


@given(st.lists(st.tuples(CALL, RESULT), max_size=6))
def test_alternating_events_pair_as_the_general_rules_do(
    pairs: list[tuple[dict[str, Any], dict[str, Any]]],
) -> None:
    events: Any = [event for pair in pairs for event in pair]
    alternating = _alternating(events)
    assert alternating is not None
    fast = _conversation("task", alternating, "answer")
    general = _conversation("task", _paired(events), "answer")
    assert (fast.messages, fast.error_turns, fast.loss_weight_tokens) == (
        general.messages,
        general.error_turns,
        general.loss_weight_tokens,
    )
