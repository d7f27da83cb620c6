"""wiregate.pointer: the one JSON-pointer implementation (RFC 6901, URI fragments too)."""

from __future__ import annotations

import pytest

from wiregate.pointer import PointerError, escape, fragment, join, resolve, split, unescape

DOCUMENT = {"$defs": {"a b": 1, "a~b": 2, "a/b": 3, "50%": 4, "x": [10, 11]}, "": {"": 5}}


@pytest.mark.parametrize(
    ("pointer", "tokens"),
    [
        ("", []),
        ("#", []),
        ("/a/b", ["a", "b"]),
        ("#/a/b", ["a", "b"]),
        ("#/$defs/a%20b", ["$defs", "a b"]),
        ("/$defs/a%20b", ["$defs", "a%20b"]),  # a plain pointer is not percent-decoded
        ("#/a~0b/c~1d", ["a~b", "c/d"]),
        ("#/a~01", ["a~1"]),  # ~0 then 1, not ~ then ~1
        ("#/%7E1", ["/"]),  # percent-decoding comes first, then ~1
        ("#/a%2Fb", ["a", "b"]),  # a decoded / separates tokens (RFC 6901 section 6)
        ("/", [""]),
        ("#/%ED%A0%80", ["\ud800"]),
    ],
)
def test_split(pointer: str, tokens: list[str]) -> None:
    assert split(pointer) == tokens


@pytest.mark.parametrize(
    ("pointer", "message"),
    [
        ("#/a~2", "'#/a~2' is malformed: holds a ~ that is neither ~0 nor ~1"),
        ("/a~", "'/a~' is malformed: holds a ~ that is neither ~0 nor ~1"),
        ("a/b", "'a/b' is not a JSON pointer (it must start with / or #/)"),
        ("#a", "'#a' is not a JSON pointer (it must start with / or #/)"),
        ("#/%FF", "'#/%FF' is not a valid percent-encoded fragment"),
        ("#/$defs/nope", "'#/$defs/nope' points to nothing"),
        ("#/$defs/x/2", "'#/$defs/x/2' points to nothing"),
        ("#/$defs/x/01", "'#/$defs/x/01' points to nothing"),
    ],
)
def test_errors_are_one_line(pointer: str, message: str) -> None:
    with pytest.raises(PointerError) as caught:
        resolve(DOCUMENT, pointer)
    assert str(caught.value) == message
    assert isinstance(caught.value, LookupError)


@pytest.mark.parametrize(
    ("pointer", "value"),
    [
        ("#/$defs/a%20b", 1),
        ("#/$defs/a~0b", 2),
        ("#/$defs/a~1b", 3),
        ("/$defs/50%", 4),
        ("#/$defs/50%25", 4),
        ("#/$defs/x/1", 11),
        ("//", 5),
    ],
)
def test_resolve(pointer: str, value: object) -> None:
    assert resolve(DOCUMENT, pointer) == value


def test_escape_join_and_fragment_round_trip() -> None:
    assert escape("a~/b") == "a~0~1b"
    assert unescape("a~0~1b") == "a~/b"
    assert join("#", "$defs", "a/b", 0) == "#/$defs/a~1b/0"
    assert join("") == ""
    tokens = ["$defs", "a b%", "x/y~", "\ud800", "ok-name_1"]
    assert fragment(*tokens) == "#/$defs/a%20b%25/x~1y~0/%ED%A0%80/ok-name_1"
    assert split(fragment(*tokens)) == tokens
    assert split(join("#", *tokens), percent_encoded=False) == tokens
