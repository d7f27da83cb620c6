"""JSON values that Python's defaults do not keep exactly, kept exactly.

- Integers of any size: CPython refuses to convert integers of more than 4,300 digits to or
  from text (``sys.set_int_max_str_digits``), because the conversion takes quadratic time.
  :func:`parse_int` reads a longer one as an :class:`ExactNumber` (linear time, exact,
  shown as written). :func:`exact_integers` lifts the limit for the duration of a comparison
  or a report on values a caller built, and puts the caller's limit back after, so a program
  that uses wiregate as a library keeps its own setting.
- Numbers beyond double range (``1e400``, ``1e-400``): a float would turn them into ``inf``
  or ``0.0``. :func:`parse_float` keeps them as an :class:`ExactNumber`, a
  :class:`~decimal.Decimal` (compared by mathematical value with ints and floats) that shows
  itself as written.
- Lone surrogates (``"\\ud800"``): valid in JSON text, impossible to encode as UTF-8.
  :func:`escape_surrogates` writes them as ``\\ud800``, as JSON itself does.

:func:`dumps` writes any of them as JSON; :func:`json_equal` compares two values as JSON
Schema does (a boolean is never a number; ``1`` and ``1.0`` are one number).
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Context, Decimal
from typing import Any

import orjson

__all__ = [
    "INT_DIGITS",
    "ExactNumber",
    "dumps",
    "escape_surrogates",
    "exact_integers",
    "json_equal",
    "lone_surrogate_at",
    "parse_float",
    "parse_int",
    "unique_members",
]

_SURROGATE = re.compile("[\ud800-\udfff]")


class _Lifted:
    """The blocks inside ``exact_integers`` now, in every thread: the limit is the process's,
    so the first block in lifts it and the last one out puts the caller's back (two threads
    each saving and restoring it could leave it lifted for good)."""

    lock = threading.Lock()
    blocks = 0
    before = 0


@contextmanager
def exact_integers() -> Iterator[None]:
    """Integers of any size convert to and from text inside the block (also a decorator)."""
    get = getattr(sys, "get_int_max_str_digits", None)
    if get is None:  # a Python without the limit
        yield
        return
    with _Lifted.lock:
        if not _Lifted.blocks:
            _Lifted.before = get()
            sys.set_int_max_str_digits(0)
        _Lifted.blocks += 1
    try:
        yield
    finally:
        with _Lifted.lock:
            _Lifted.blocks -= 1
            if not _Lifted.blocks:
                sys.set_int_max_str_digits(_Lifted.before)


class ExactNumber(Decimal):
    """A JSON number beyond double range, its value exact, shown as written."""

    text: str

    def __new__(cls, text: str) -> ExactNumber:
        number = super().__new__(cls, text)
        number.text = text
        return number

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return self.text

    def __format__(self, spec: str, context: Context | None = None, /) -> str:
        return self.text if not spec else super().__format__(spec, context)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.text,))

    def __deepcopy__(self, memo: object) -> ExactNumber:
        return self

    def __copy__(self) -> ExactNumber:
        return self


# Integers longer than this are read as ExactNumber: converting them to int and back to text
# would take quadratic time (seconds for a million digits).
INT_DIGITS = 4000


def parse_int(text: str) -> int | ExactNumber:
    """``json.loads``'s ``parse_int``: an int, or an :class:`ExactNumber` for one of more than
    :data:`INT_DIGITS` digits."""
    return int(text) if len(text) <= INT_DIGITS else ExactNumber(text)


def parse_float(text: str) -> float | ExactNumber:
    """``json.loads``'s ``parse_float``: a float when a double holds the value's magnitude,
    else the exact number (``1e400`` is not ``inf``; ``1e-400`` is not ``0``)."""
    value = float(text)
    if value in (float("inf"), float("-inf")) or (value == 0 and Decimal(text) != 0):
        return ExactNumber(text)
    return value


def lone_surrogate_at(value: Any) -> tuple[list[str], str, int] | None:
    """(the tokens of its JSON pointer, the text, the surrogate's index in it) of the first
    key or string of ``value`` that holds a lone surrogate, or None: what no UTF-8 file can
    hold as it is."""
    # Each entry: (its tokens, a value, or a key as a 1-tuple); taken in document order.
    stack: list[tuple[list[str], Any]] = [([], value)]
    while stack:
        tokens, node = stack.pop()
        text = node[0] if isinstance(node, tuple) else node
        if isinstance(text, str):
            if found := _SURROGATE.search(text):
                return tokens, text, found.start()
        elif isinstance(node, dict):
            for key, item in reversed(node.items()):
                stack += [([*tokens, key], item), ([*tokens, key], (key,))]
        elif isinstance(node, list):
            stack.extend(([*tokens, str(n)], item) for n, item in reversed(list(enumerate(node))))
    return None


def escape_surrogates(text: str) -> str:
    """``text`` with each lone surrogate written as its JSON escape (``\\ud800``)."""
    return _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def dumps(
    value: Any, *, indent: bool = False, sort_keys: bool = False, stdlib: bool = False
) -> str:
    """``value`` as JSON text: orjson's output when it can write it (unless ``stdlib``), else
    the standard library's, with integers of any size, :class:`ExactNumber` as written and
    lone surrogates escaped (the text always encodes as UTF-8)."""
    option = (orjson.OPT_INDENT_2 if indent else 0) | (orjson.OPT_SORT_KEYS if sort_keys else 0)
    try:
        if not stdlib:
            return orjson.dumps(value, option=option).decode()
    except TypeError:  # beyond orjson: a huge integer, a Decimal, a lone surrogate, deep nesting
        pass
    numbers: dict[str, str] = {}
    tag: list[str] = []  # random, so no string in the value can pass for a placeholder

    def placeholder(number: object) -> str:
        if not isinstance(number, Decimal):
            raise TypeError(f"{type(number).__name__} is not a JSON value")
        tag[:] = tag or [os.urandom(8).hex()]
        key = f"\x00{tag[0]}{len(numbers)}"
        numbers[key] = str(number)
        return key

    with exact_integers():
        text = json.dumps(
            value,
            indent=2 if indent else None,
            separators=None if indent else (",", ":"),
            sort_keys=sort_keys,
            ensure_ascii=False,
            default=placeholder,
        )
    for key, number in numbers.items():
        text = text.replace(json.dumps(key), number)
    return escape_surrogates(text)


def unique_members(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads``' ``object_pairs_hook`` that refuses a key written twice in one object
    (ValueError naming it): readers disagree on which of the two holds."""
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"the key {key!r} is written twice in one object")
            seen.add(key)
    return found


def json_equal(a: Any, b: Any) -> bool:
    """Are two JSON values (or schemas) the same value?"""
    if a is b:
        return True
    # Python's == tells numbers apart by value and treats 1 and 1.0 as equal, but wrongly
    # identifies booleans with the numbers 0 and 1; and it walks a subtree once per path to
    # it, so resolved schemas that share a ``$ref`` target many times over (a DAG) would cost
    # exponential time. One walk, each pair of containers once; iterative, so the depth of a
    # value costs no recursion.
    seen: set[tuple[int, int]] = set()
    pending = [(a, b)]
    while pending:
        x, y = pending.pop()
        if isinstance(x, dict):
            if not isinstance(y, dict) or len(x) != len(y) or x.keys() != y.keys():
                return False
            pairs: Any = ((value, y[key]) for key, value in x.items())
        elif isinstance(x, list):
            if not isinstance(y, list) or len(x) != len(y):
                return False
            pairs = zip(x, y, strict=True)
        elif not _scalar_equal(x, y):
            return False
        else:
            continue
        pair = (id(x), id(y))
        if pair in seen:
            continue
        seen.add(pair)
        # Scalars first (a shallow difference is found before any descent).
        for u, v in pairs:
            if u is v:
                continue
            kind = type(u)
            if kind is type(v) and kind in _SCALARS:
                if u != v:
                    return False
            elif isinstance(u, (dict, list)):
                pending.append((u, v))
            elif not _scalar_equal(u, v):
                return False
    return True


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _scalar_equal(x: Any, y: Any) -> bool:
    return (
        not isinstance(y, (dict, list))
        and isinstance(x, bool) is isinstance(y, bool)
        and bool(x == y)
    )
