"""``dumps_spliced`` must give exactly the bytes ``orjson.dumps`` gives for the whole record."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import given
from hypothesis import strategies as st

from datafactory.output import dumps_spliced

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)


@given(
    before=st.dictionaries(st.text(max_size=6).filter(lambda k: k != "messages"), JSON, max_size=3),
    value=JSON,
    after=st.dictionaries(st.text(max_size=6).filter(lambda k: k != "messages"), JSON, max_size=3),
)
def test_splice_is_byte_identical_to_dumping_the_whole_record(
    before: dict[str, Any], value: Any, after: dict[str, Any]
) -> None:
    record = {**before, "messages": value, **{k: v for k, v in after.items() if k not in before}}
    assert dumps_spliced(record, "messages", orjson.dumps(value)) == orjson.dumps(record)


def test_splice_at_each_position() -> None:
    for record in ({"messages": [1]}, {"a": 1, "messages": [1]}, {"messages": [], "b": {"c": 2}}):
        assert dumps_spliced(record, "messages", orjson.dumps(record["messages"])) == orjson.dumps(
            record
        )
