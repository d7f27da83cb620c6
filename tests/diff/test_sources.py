"""wiregate.sources.parse_document: the one parser of schema documents (diff and drift)."""

from __future__ import annotations

import pytest

from wiregate.errors import UserError
from wiregate.sources import parse_document


def test_integers_of_any_size_stay_exact() -> None:
    document = parse_document(b'{"maximum": 18446744073709551617}', "s.json")
    assert document == {"maximum": 2**64 + 1}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"{not json", "s.json: not valid JSON: Expecting property name enclosed in double quotes"),
        (b'{"a": 1} x', "s.json: not valid JSON: Extra data: line 1 column 10 (char 9)"),
        (b'{"maximum": NaN}', "s.json: not valid JSON: NaN is not a JSON value"),
        (b'{"a": Infinity}', "s.json: not valid JSON: Infinity is not a JSON value"),
        (b"[1, 2]", "s.json: a schema document must be a JSON object"),
        (b'"text"', "s.json: a schema document must be a JSON object"),
        (b'{"a": "\xff"}', "s.json: not UTF-8 text"),
    ],
)
def test_anything_else_is_one_line_naming_the_source(data: bytes, message: str) -> None:
    with pytest.raises(UserError) as caught:
        parse_document(data, "s.json")
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)
