"""Where a JSON pointer's target is written in a JSON text: line and column, for annotations.

``PositionIndex.build(text)`` tokenises the text once (linear time, no recursion, so any
depth and size costs the same per byte) and records, for every value, the position of what
names it: the key of an object member (where an editor shows "the line of that property")
or the first character of an array item or of the root value. Lines and columns are 1-based;
columns count Unicode code points, as GitHub annotations and SARIF (``columnKind``
``unicodeCodePoints``) do.

A pointer the text does not hold (the key was removed, or the pointer names a position that
only exists after ``$ref`` inlining) falls back to its nearest written ancestor, so a finding
always gets a line in the file it is reported against.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from wiregate.pointer import split

__all__ = ["Position", "PositionIndex", "json_text"]


@dataclass(frozen=True)
class Position:
    line: int
    column: int


# Strings (escapes included), structural characters, and any other run (numbers, literals).
# Every alternative consumes at least one character and none can backtrack: linear time.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+', re.DOTALL)
_NEWLINE = re.compile(r"\r\n|\r|\n")


class PositionIndex:
    """JSON pointer (RFC 6901) -> where its value is named in the text.

    Values are numbered as they are read; each is stored under (its parent's number, its key
    or index), so memory stays linear in the size of the text at any depth."""

    def __init__(self, children: dict[tuple[int, str], tuple[int, Position]]) -> None:
        self._children = children

    @classmethod
    def build(cls, text: str) -> PositionIndex:
        line_starts = [0] + [m.end() for m in _NEWLINE.finditer(text)]
        children: dict[tuple[int, str], tuple[int, Position]] = {}
        # One frame per open container: [its number, is_object, next_index, pending_key]
        stack: list[list[Any]] = []
        expecting_key = False
        count = 1  # value 0 is the root
        line_index = 0

        def where(offset: int) -> Position:
            nonlocal line_index
            # Offsets only grow, so the line search moves forward with them.
            while line_index + 1 < len(line_starts) and line_starts[line_index + 1] <= offset:
                line_index += 1
            return Position(line_index + 1, offset - line_starts[line_index] + 1)

        def new_value(offset: int) -> int:
            """Number a value starting at ``offset`` and record where it is named."""
            nonlocal count
            if not stack:
                children.setdefault((-1, ""), (0, where(offset)))
                return 0
            frame = stack[-1]
            number = count
            count += 1
            if frame[1]:  # an object member: named by its key, recorded when read
                key = (frame[0], frame[3])
                # A text that is not JSON (read in the wrong encoding) may give no key: the
                # value names itself, so an index is still made, never an error.
                named = children.get(key)
                children[key] = (number, named[1] if named else where(offset))
            else:
                children[(frame[0], str(frame[2]))] = (number, where(offset))
                frame[2] += 1
            return number

        for match in _TOKEN.finditer(text):
            token = match.group()
            if expecting_key:
                expecting_key = False
                if token == "}":
                    stack.pop()
                elif token.startswith('"'):
                    frame = stack[-1]
                    frame[3] = _decode_key(token)
                    children.setdefault((frame[0], frame[3]), (-1, where(match.start())))
                continue
            if token == ",":
                expecting_key = bool(stack) and stack[-1][1]
            elif token in "}]":
                if stack:
                    stack.pop()
            elif token in "{[":
                stack.append([new_value(match.start()), token == "{", 0, ""])
                expecting_key = token == "{"
            elif token != ":":
                new_value(match.start())  # a scalar
        return cls(children)

    @classmethod
    def of_json(cls, data: bytes) -> PositionIndex:
        """The index of a JSON document's bytes, decoded as ``json.loads`` decodes them
        (UTF-16 and UTF-32 too); a UTF-8 byte order mark stays in the text, as a column."""
        return cls.build(json_text(data))

    def locate(self, pointer: str) -> Position | None:
        """The position for ``pointer`` (``#/a/b`` or ``/a/b``), or of its nearest written
        ancestor; None only for a text with no value at all."""
        found = self._children.get((-1, ""))
        if found is None:
            return None
        number, position = found
        for token in split(pointer):
            child = self._children.get((number, token))
            if child is None:
                break
            number, position = child
        return position


def _decode_key(token: str) -> str:
    try:
        key = json.loads(token)
    except ValueError:
        return token[1:-1]
    return key if isinstance(key, str) else token[1:-1]


def json_text(data: bytes) -> str:
    """A JSON document's bytes as text, decoded as ``json.loads`` decodes them (UTF-16 and
    UTF-32 too); a UTF-8 byte order mark stays in the text, as a column."""
    encoding = json.detect_encoding(data)
    return data.decode("utf-8" if encoding == "utf-8-sig" else encoding, "replace")
