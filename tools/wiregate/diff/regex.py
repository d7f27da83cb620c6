"""Regular expressions from schemas, analysed without a backtracking engine.

A JSON Schema ``pattern`` (and a ``patternProperties`` key) is an ECMA-262 regular expression.
Python's ``re`` backtracks: ``^(a+)+$`` against ``"aaa...ab"`` runs for hours. Here a pattern
is parsed once by a small ECMA-262 parser (it never runs the pattern), and

- :func:`translate` turns the parse tree into RE2 syntax, run by ``google-re2`` in linear time
  (:meth:`Regex.search`). Constructs RE2 lacks (lookahead, lookbehind, backreferences) and
  anything RE2 refuses (a repetition count above 1000, a program beyond its memory budget)
  give ``None``: the question is undecidable here, callers answer conservatively.
- :func:`length_bounds`, :func:`matches_everything` read the parse tree;
- :func:`sample` and :func:`sample_not` build short strings from the parse tree and keep one
  only after RE2 confirms it.
- :func:`reference_validator` is ``jsonschema`` with ``pattern``, ``patternProperties`` and
  ``additionalProperties`` evaluated by RE2, for confirming values against whole documents
  that may hold hostile patterns.

ECMA-262 meanings are kept (the ``u`` flag's view of a string: one code point is one
character, as ``minLength`` counts): ``\\d`` and ``\\w`` are ASCII only, ``\\s`` is ECMA's
white space and line terminators, ``.`` matches anything but ``\\n``, ``\\r``, U+2028 and
U+2029, ``$`` matches only at the end of the string, ``[^]`` is any character and ``[]`` none.
Annex B leniencies that every engine reads the same way are accepted (``\\/``, a ``{`` or
``]`` that starts nothing, ``[\\d-z]``); other unknown escapes are a parse error (``None``).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import re2

__all__ = [
    "Regex",
    "UndecidableRegex",
    "length_bounds",
    "matches_everything",
    "never_both",
    "reference_validator",
    "sample",
    "sample_not",
    "translate",
]

MAX_CODE_POINT = 0x10FFFF
# Nesting beyond this is refused (a parse error): the parser and the tree walks recurse.
_MAX_DEPTH = 100
# RE2's own limit on the memory of one compiled program (its default, said explicitly).
_MAX_MEM = 8 << 20
_MAX_CANDIDATES = 32

Range = tuple[int, int]


# -- the parse tree -------------------------------------------------------------------------


@dataclass(frozen=True)
class Chars:
    """One character from a set: code point ranges plus RE2 property escapes (``\\p{Greek}``),
    complemented when ``negated``."""

    ranges: tuple[Range, ...]
    props: tuple[str, ...] = ()
    negated: bool = False


@dataclass(frozen=True)
class Seq:
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Alt:
    options: tuple[Node, ...]


@dataclass(frozen=True)
class Repeat:
    item: Node
    lo: int
    hi: int | None
    lazy: bool = False


@dataclass(frozen=True)
class Group:
    item: Node


@dataclass(frozen=True)
class Assert:
    """``^``, ``$``, ``b`` (word boundary) or ``B`` (not one)."""

    kind: str


@dataclass(frozen=True)
class Look:
    """Lookahead or lookbehind: zero width, beyond RE2."""

    item: Node


@dataclass(frozen=True)
class Backref:
    """A backreference: beyond RE2 (and beyond regular languages)."""


Node = Chars | Seq | Alt | Repeat | Group | Assert | Look | Backref


class _ParseError(Exception):
    pass


class _Untranslatable(Exception):
    pass


# -- character sets -------------------------------------------------------------------------

_DIGIT: tuple[Range, ...] = ((0x30, 0x39),)
_WORD: tuple[Range, ...] = ((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A))
# ECMA-262 WhiteSpace and LineTerminator (Zs as of Unicode 15).
_SPACE: tuple[Range, ...] = (
    (0x09, 0x0D),
    (0x20, 0x20),
    (0xA0, 0xA0),
    (0x1680, 0x1680),
    (0x2000, 0x200A),
    (0x2028, 0x2029),
    (0x202F, 0x202F),
    (0x205F, 0x205F),
    (0x3000, 0x3000),
    (0xFEFF, 0xFEFF),
)
_LINE_TERMINATORS: tuple[Range, ...] = ((0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029))


def _complement(ranges: Iterable[Range]) -> tuple[Range, ...]:
    out: list[Range] = []
    start = 0
    for lo, hi in sorted(ranges):
        if lo > start:
            out.append((start, lo - 1))
        start = max(start, hi + 1)
    if start <= MAX_CODE_POINT:
        out.append((start, MAX_CODE_POINT))
    return tuple(out)


_CLASS_ESCAPES: dict[str, tuple[Range, ...]] = {
    "d": _DIGIT,
    "D": _complement(_DIGIT),
    "w": _WORD,
    "W": _complement(_WORD),
    "s": _SPACE,
    "S": _complement(_SPACE),
}
_CONTROL_ESCAPES = {"t": 0x09, "n": 0x0A, "v": 0x0B, "f": 0x0C, "r": 0x0D}
_SYNTAX = frozenset("^$\\.*+?()[]{}|/-")
# Long General_Category names ECMA accepts and RE2 knows only by their short form.
_CATEGORIES = {
    "Letter": "L",
    "Cased_Letter": "LC",
    "Uppercase_Letter": "Lu",
    "Lowercase_Letter": "Ll",
    "Titlecase_Letter": "Lt",
    "Modifier_Letter": "Lm",
    "Other_Letter": "Lo",
    "Mark": "M",
    "Number": "N",
    "Decimal_Number": "Nd",
    "digit": "Nd",
    "Letter_Number": "Nl",
    "Other_Number": "No",
    "Punctuation": "P",
    "punct": "P",
    "Symbol": "S",
    "Separator": "Z",
    "Space_Separator": "Zs",
    "Other": "C",
    "Control": "Cc",
    "cntrl": "Cc",
    "Format": "Cf",
}


# -- the parser -----------------------------------------------------------------------------


class _Parser:
    def __init__(self, pattern: str) -> None:
        self.s = pattern
        self.i = 0
        self.depth = 0

    def peek(self, offset: int = 0) -> str:
        j = self.i + offset
        return self.s[j] if j < len(self.s) else ""

    def take(self) -> str:
        if self.i >= len(self.s):
            raise _ParseError("unexpected end of pattern")
        ch = self.s[self.i]
        self.i += 1
        return ch

    def parse(self) -> Node:
        node = self.alternation()
        if self.i != len(self.s):
            raise _ParseError(f"unmatched ')' at {self.i}")
        return node

    def alternation(self) -> Node:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise _ParseError("nested too deeply")
        options = [self.sequence()]
        while self.peek() == "|":
            self.i += 1
            options.append(self.sequence())
        self.depth -= 1
        return options[0] if len(options) == 1 else Alt(tuple(options))

    def sequence(self) -> Node:
        items: list[Node] = []
        while self.i < len(self.s) and self.peek() not in "|)":
            atom = self.atom()
            quantified = self.quantifier(atom)
            items.append(quantified)
        return items[0] if len(items) == 1 else Seq(tuple(items))

    def quantifier(self, atom: Node) -> Node:
        ch = self.peek()
        bounds: tuple[int, int | None] | None = None
        if ch == "*":
            self.i += 1
            bounds = (0, None)
        elif ch == "+":
            self.i += 1
            bounds = (1, None)
        elif ch == "?":
            self.i += 1
            bounds = (0, 1)
        elif ch == "{":
            bounds = self.braces()
        if bounds is None:
            return atom
        if isinstance(atom, Assert):
            raise _ParseError("nothing to repeat")
        lazy = self.peek() == "?"
        if lazy:
            self.i += 1
        if (self.peek() and self.peek() in "*+?") or (self.peek() == "{" and self._braces_ahead()):
            raise _ParseError("nothing to repeat")
        lo, hi = bounds
        if hi is not None and hi < lo:
            raise _ParseError("numbers out of order in {} quantifier")
        return Repeat(atom, lo, hi, lazy)

    def _braces_ahead(self) -> bool:
        start = self.i
        try:
            return self.braces() is not None
        finally:
            self.i = start

    def braces(self) -> tuple[int, int | None] | None:
        """``{n}``, ``{n,}``, ``{n,m}``; anything else leaves ``{`` a literal (Annex B)."""
        start = self.i
        j = start + 1
        lo_start = j
        while j < len(self.s) and self.s[j].isdigit() and self.s[j].isascii():
            j += 1
        if j == lo_start:
            return None
        lo = int(self.s[lo_start:j])
        hi: int | None = lo
        if j < len(self.s) and self.s[j] == ",":
            j += 1
            hi_start = j
            while j < len(self.s) and self.s[j].isdigit() and self.s[j].isascii():
                j += 1
            hi = int(self.s[hi_start:j]) if j > hi_start else None
        if j >= len(self.s) or self.s[j] != "}":
            return None
        self.i = j + 1
        return lo, hi

    def atom(self) -> Node:
        ch = self.take()
        if ch == ".":
            return Chars(_LINE_TERMINATORS, negated=True)
        if ch in "^$":
            return Assert(ch)
        if ch == "(":
            return self.group()
        if ch == "[":
            return self.char_class()
        if ch == "\\":
            return self.escape()
        if ch in "*+?":
            raise _ParseError("nothing to repeat")
        if ch == "{" and self._quantifier_at(self.i - 1):
            raise _ParseError("nothing to repeat")
        return _char(ord(ch))

    def _quantifier_at(self, position: int) -> bool:
        saved = self.i
        self.i = position
        try:
            return self.braces() is not None
        finally:
            self.i = saved

    def group(self) -> Node:
        if self.peek() == "?":
            kind = self.peek(1)
            if kind == ":":
                self.i += 2
                return Group(self._group_body())
            if kind in "=!":
                self.i += 2
                return Look(self._group_body())
            if kind == "<" and self.peek(2) in ("=", "!"):
                self.i += 3
                return Look(self._group_body())
            if kind == "<":
                self.i += 2
                end = self.s.find(">", self.i)
                name = self.s[self.i : end] if end > self.i else ""
                if not name.isidentifier():
                    raise _ParseError("invalid group name")
                self.i = end + 1
                return Group(self._group_body())
            raise _ParseError("invalid group")
        return Group(self._group_body())

    def _group_body(self) -> Node:
        node = self.alternation()
        if self.peek() != ")":
            raise _ParseError("missing )")
        self.i += 1
        return node

    def escape(self) -> Node:
        ch = self.take()
        if ch in "bB":
            return Assert(ch)
        if ch.isdigit() and ch != "0":
            return Backref()
        if ch == "k" and self.peek() == "<":
            end = self.s.find(">", self.i)
            if end < 0:
                raise _ParseError("invalid named reference")
            self.i = end + 1
            return Backref()
        return self.class_atom_escape(ch, in_class=False)

    def class_atom_escape(self, ch: str, *, in_class: bool) -> Chars:
        """The escape after ``\\`` (``ch`` already taken) that stands for a set of characters."""
        if ch in _CLASS_ESCAPES:
            return Chars(_CLASS_ESCAPES[ch])
        if ch in "pP":
            return self.property(negated=ch == "P")
        return _char(self.char_escape(ch, in_class=in_class))

    def char_escape(self, ch: str, *, in_class: bool) -> int:
        if ch in _CONTROL_ESCAPES:
            return _CONTROL_ESCAPES[ch]
        if ch == "0" and not self.peek().isdigit():
            return 0
        if ch == "b" and in_class:
            return 0x08
        if ch == "c" and self.peek().isascii() and self.peek().isalpha():
            return ord(self.take()) % 32
        if ch == "x":
            return self.hex_digits(2)
        if ch == "u":
            return self.unicode_escape()
        if ch in _SYNTAX or (ch.isascii() and not ch.isalnum() and ch != "_"):
            return ord(ch)  # identity escape (Annex B for non-syntax punctuation)
        raise _ParseError(f"invalid escape \\{ch}")

    def hex_digits(self, count: int) -> int:
        digits = self.s[self.i : self.i + count]
        if len(digits) != count or not all(c in "0123456789abcdefABCDEF" for c in digits):
            raise _ParseError("invalid hexadecimal escape")
        self.i += count
        return int(digits, 16)

    def unicode_escape(self) -> int:
        if self.peek() == "{":
            end = self.s.find("}", self.i)
            digits = self.s[self.i + 1 : end] if end > 0 else ""
            if not digits or not all(c in "0123456789abcdefABCDEF" for c in digits):
                raise _ParseError("invalid \\u{...} escape")
            value = int(digits, 16)
            if value > MAX_CODE_POINT:
                raise _ParseError("code point out of range")
            self.i = end + 1
            return value
        value = self.hex_digits(4)
        if 0xD800 <= value <= 0xDBFF and self.s.startswith("\\u", self.i):
            saved = self.i
            self.i += 2
            try:
                low = self.hex_digits(4)
            except _ParseError:
                low = -1
            if 0xDC00 <= low <= 0xDFFF:
                return 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
            self.i = saved
        return value

    def property(self, *, negated: bool) -> Chars:
        if self.peek() != "{":
            raise _ParseError("invalid property escape")
        end = self.s.find("}", self.i)
        if end < 0:
            raise _ParseError("invalid property escape")
        body = self.s[self.i + 1 : end]
        self.i = end + 1
        name, _, value = body.partition("=")
        if value:
            if name not in ("General_Category", "gc", "Script", "sc"):
                raise _ParseError(f"unsupported property {name}")
            body = value
        if body == "ASCII":
            return Chars(((0, 0x7F),), negated=negated)
        if body == "Any":
            return Chars(((0, MAX_CODE_POINT),), negated=negated)
        body = _CATEGORIES.get(body, body)
        if not body.replace("_", "").isalnum():
            raise _ParseError("invalid property name")
        return Chars((), (f"\\{'P' if negated else 'p'}{{{body}}}",))

    def char_class(self) -> Chars:
        negated = self.peek() == "^"
        if negated:
            self.i += 1
        ranges: list[Range] = []
        props: list[str] = []
        while True:
            if self.i >= len(self.s):
                raise _ParseError("missing ]")
            if self.peek() == "]":
                self.i += 1
                break
            first = self.class_atom()
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.i += 1
                second = self.class_atom()
                lo, hi = _single(first), _single(second)
                if lo is None or hi is None:  # ``[\d-z]``: Annex B reads a literal ``-``
                    for part in (first, _char(ord("-")), second):
                        ranges.extend(_ranges_of(part))
                        props.extend(part.props)
                    continue
                if lo > hi:
                    raise _ParseError("range out of order in character class")
                ranges.append((lo, hi))
                continue
            ranges.extend(_ranges_of(first))
            props.extend(first.props)
        return Chars(_merge(ranges), tuple(props), negated)

    def class_atom(self) -> Chars:
        ch = self.take()
        if ch != "\\":
            return _char(ord(ch))
        return self.class_atom_escape(self.take(), in_class=True)


def _char(code: int) -> Chars:
    return Chars(((code, code),))


def _single(chars: Chars) -> int | None:
    if not chars.props and not chars.negated and len(chars.ranges) == 1:
        lo, hi = chars.ranges[0]
        if lo == hi:
            return lo
    return None


def _ranges_of(chars: Chars) -> tuple[Range, ...]:
    return _complement(chars.ranges) if chars.negated else chars.ranges


def _merge(ranges: Iterable[Range]) -> tuple[Range, ...]:
    out: list[Range] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return tuple(out)


@functools.lru_cache(maxsize=1024)
def _parse(pattern: str) -> Node | None:
    try:
        return _Parser(pattern).parse()
    except _ParseError:
        return None


# -- RE2 ------------------------------------------------------------------------------------


def _options() -> re2.Options:
    options = re2.Options()
    options.log_errors = False  # a refused pattern is an answer (None), not a log line
    options.max_mem = _MAX_MEM
    options.never_capture = True
    return options


_OPTIONS = _options()


def _code(code: int) -> str:
    ch = chr(code)
    if ch.isascii() and ch.isalnum():
        return ch
    return f"\\x{{{code:x}}}"


def _emit(node: Node) -> str:
    if isinstance(node, Chars):
        single = _single(node)
        if single is not None:
            return _code(single)
        if not node.ranges and not node.props:
            return "[\\x00-\\x{10ffff}]" if node.negated else "[^\\x00-\\x{10ffff}]"
        parts = [_code(lo) if lo == hi else f"{_code(lo)}-{_code(hi)}" for lo, hi in node.ranges]
        return "[" + ("^" if node.negated else "") + "".join(parts) + "".join(node.props) + "]"
    if isinstance(node, Seq):
        return "".join(_emit(item) for item in node.items)
    if isinstance(node, Alt):
        return "(?:" + "|".join(_emit(option) for option in node.options) + ")"
    if isinstance(node, Group):
        return "(?:" + _emit(node.item) + ")"
    if isinstance(node, Repeat):
        inner = _emit(node.item)
        if not isinstance(node.item, (Chars, Group, Alt)):
            inner = f"(?:{inner})"
        if node.hi is None:
            quantifier = "*" if node.lo == 0 else "+" if node.lo == 1 else f"{{{node.lo},}}"
        elif node.lo == node.hi:
            quantifier = f"{{{node.lo}}}"
        else:
            quantifier = f"{{{node.lo},{node.hi}}}"
        return inner + quantifier + ("?" if node.lazy else "")
    if isinstance(node, Assert):
        # ECMA without the m flag: ``^``/``$`` at the very start/end only.
        return {"^": "\\A", "$": "\\z", "b": "\\b", "B": "\\B"}[node.kind]
    raise _Untranslatable


@dataclass(frozen=True, eq=False)
class Regex:
    """A pattern translated to RE2: ``source`` as written (ECMA-262), ``re2_source`` run."""

    source: str
    re2_source: str
    _compiled: re2._Regexp

    def search(self, text: str) -> bool:
        """Does the pattern match somewhere in ``text`` (JSON Schema's unanchored ``pattern``)?
        Linear time. A lone surrogate (no UTF-8 form) is read as U+FFFD."""
        try:
            return self._compiled.search(text) is not None
        except UnicodeEncodeError:
            cleaned = "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text)
            return self._compiled.search(cleaned) is not None


@functools.lru_cache(maxsize=1024)
def translate(pattern: str) -> Regex | None:
    """The ECMA-262 ``pattern`` as an RE2 program, or None when it cannot run there
    (lookaround, backreferences, a syntax error, a program RE2 refuses)."""
    tree = _parse(pattern)
    if tree is None:
        return None
    return _compile(tree, pattern)


def _compile(tree: Node, source: str) -> Regex | None:
    try:
        text = _emit(tree)
        compiled = re2.compile(text, _OPTIONS)
    except (_Untranslatable, re2.error):
        return None
    return Regex(source, text, compiled)


# -- analysis of the tree -------------------------------------------------------------------


def _width(node: Node) -> tuple[int, int | None]:
    """Minimum and maximum number of characters a match of ``node`` consumes."""
    if isinstance(node, Chars):
        return 1, 1
    if isinstance(node, (Assert, Look)):
        return 0, 0
    if isinstance(node, Backref):
        return 0, None
    if isinstance(node, Group):
        return _width(node.item)
    if isinstance(node, Seq):
        lo, hi = 0, 0
        unbounded = False
        for item in node.items:
            item_lo, item_hi = _width(item)
            lo += item_lo
            if item_hi is None:
                unbounded = True
            else:
                hi += item_hi
        return lo, None if unbounded else hi
    if isinstance(node, Alt):
        widths = [_width(option) for option in node.options]
        highs = [w[1] for w in widths]
        return min(w[0] for w in widths), None if None in highs else max(h or 0 for h in highs)
    item_lo, item_hi = _width(node.item)
    if item_hi == 0:
        return 0, 0
    if item_hi is None or node.hi is None:
        return node.lo * item_lo, None
    return node.lo * item_lo, node.hi * item_hi


def _anchored(node: Node, kind: str) -> bool:
    """Does every match of ``node`` start (``^``) or end (``$``) at that end of the string?"""
    if isinstance(node, Assert):
        return node.kind == kind
    if isinstance(node, Group):
        return _anchored(node.item, kind)
    if isinstance(node, Alt):
        return all(_anchored(option, kind) for option in node.options)
    if isinstance(node, Repeat):
        return node.lo >= 1 and _anchored(node.item, kind)
    if isinstance(node, Seq):
        items = node.items if kind == "^" else tuple(reversed(node.items))
        for item in items:
            if _anchored(item, kind):
                return True
            if _width(item) != (0, 0):
                return False
        return False
    return False


def _empty_at_start(node: Node) -> bool:
    """Does ``node`` match the empty string at the start of every string?"""
    if isinstance(node, Assert):
        return node.kind == "^"
    if isinstance(node, Group):
        return _empty_at_start(node.item)
    if isinstance(node, Seq):
        return all(_empty_at_start(item) for item in node.items)
    if isinstance(node, Alt):
        return any(_empty_at_start(option) for option in node.options)
    if isinstance(node, Repeat):
        return node.lo == 0 or _empty_at_start(node.item)
    return False  # a character, a lookaround, a backreference: not for every string


def length_bounds(pattern: str) -> tuple[int, int | None] | None:
    """Bounds on the length (in code points) of every string ``pattern`` accepts: the minimum
    width of a match, and, when the pattern is anchored at both ends (``^...$``), the maximum
    width (None: unbounded). None when the pattern does not parse."""
    tree = _parse(pattern)
    if tree is None:
        return None
    lo, hi = _width(tree)
    if _anchored(tree, "^") and _anchored(tree, "$"):
        return lo, hi
    return lo, None


def matches_everything(pattern: str) -> bool:
    """Does ``pattern`` accept every string (``a*``, ``^``, ``.*``), like no pattern at all?
    Decided on the parse tree; False when not certain."""
    tree = _parse(pattern)
    return tree is not None and _empty_at_start(tree)


def includes(wide: str, narrow: str) -> bool:
    """Does ``wide`` accept every string ``narrow`` accepts? True only when proven: both run
    under RE2 and parse to the same shape, with each character set and repeat count of
    ``wide`` holding ``narrow``'s (``^[a-z]+$`` holds ``^[a-z]{2,8}$``). A match of ``narrow``
    then aligns with one of ``wide`` at the same positions of the same string, so assertions
    (``^``, ``$``, ``\\b``) see the same text. False means "not proven", never "not held"."""
    if translate(wide) is None or translate(narrow) is None:
        return False
    wide_tree, narrow_tree = _parse(wide), _parse(narrow)
    return wide_tree is not None and narrow_tree is not None and _holds(wide_tree, narrow_tree)


def never_both(a: str, b: str) -> bool:
    """Is no string matched by both ``a`` and ``b``? True only when proven on the parse trees:
    both anchored at the start (``^``) with a leading character that no character of the
    other's can be at the same position (``^x-`` and ``^a``), the same at the end (``$``),
    or both anchored at both ends with match lengths that cannot meet. False means "not
    proven", never "they overlap" (a pattern beyond RE2 is never proven apart)."""
    if translate(a) is None or translate(b) is None:
        return False
    a_tree, b_tree = _parse(a), _parse(b)
    if a_tree is None or b_tree is None:
        return False
    for kind in ("^", "$"):
        a_fixed, b_fixed = _fixed_end(a_tree, kind), _fixed_end(b_tree, kind)
        if a_fixed is not None and b_fixed is not None:
            for a_chars, b_chars in zip(a_fixed, b_fixed, strict=False):
                if _chars_apart(a_chars, b_chars):
                    return True
    a_len, b_len = length_bounds(a), length_bounds(b)
    if (
        a_len is not None
        and b_len is not None
        and _anchored(a_tree, "^")
        and _anchored(a_tree, "$")
        and _anchored(b_tree, "^")
        and _anchored(b_tree, "$")
    ):
        (a_lo, a_hi), (b_lo, b_hi) = a_len, b_len
        if (a_hi is not None and a_hi < b_lo) or (b_hi is not None and b_hi < a_lo):
            return True
    return False


def _fixed_end(node: Node, kind: str) -> list[Chars] | None:
    """For a pattern anchored at one end (``^``: the start, ``$``: the end), the character
    sets of its first (last) characters, read outward from that end up to the first item
    that is not one plain character; None when the pattern is not anchored there that way."""
    while isinstance(node, Group):
        node = node.item
    items = list(node.items) if isinstance(node, Seq) else [node]
    if kind == "$":
        items.reverse()
    flat: list[Node] = []
    for item in items:
        while isinstance(item, Group):
            item = item.item
        if isinstance(item, Seq):
            return None  # a nested sequence: not read (stay with what is certain)
        flat.append(item)
    if not flat or flat[0] != Assert(kind):
        return None
    out: list[Chars] = []
    for item in flat[1:]:
        if not isinstance(item, Chars):
            break
        out.append(item)
    return out


def _chars_apart(a: Chars, b: Chars) -> bool:
    """No character is in both sets (property escapes are not read: not apart)."""
    if a.props or b.props:
        return False
    merged = _merge(_ranges_of(b))
    return not any(
        lo <= b_hi and b_lo <= hi for lo, hi in _merge(_ranges_of(a)) for b_lo, b_hi in merged
    )


def _holds(wide: Node, narrow: Node) -> bool:
    if isinstance(wide, Group):
        return _holds(wide.item, narrow)
    if isinstance(narrow, Group):
        return _holds(wide, narrow.item)
    if isinstance(wide, Chars) and isinstance(narrow, Chars):
        return _chars_hold(wide, narrow)
    if isinstance(wide, Seq) and isinstance(narrow, Seq):
        return len(wide.items) == len(narrow.items) and all(
            _holds(w, n) for w, n in zip(wide.items, narrow.items, strict=True)
        )
    if isinstance(narrow, Alt):
        options = wide.options if isinstance(wide, Alt) else (wide,)
        return all(any(_holds(w, n) for w in options) for n in narrow.options)
    if isinstance(wide, Alt):
        return any(_holds(w, narrow) for w in wide.options)
    if isinstance(wide, Repeat) and isinstance(narrow, Repeat):
        wider_count = wide.lo <= narrow.lo and (
            wide.hi is None or (narrow.hi is not None and narrow.hi <= wide.hi)
        )
        return wider_count and _holds(wide.item, narrow.item)
    if isinstance(wide, Assert) and isinstance(narrow, Assert):
        return wide.kind == narrow.kind
    return False  # other shapes, lookaround, backreferences: not proven


def _chars_hold(wide: Chars, narrow: Chars) -> bool:
    """Every character of ``narrow`` is one of ``wide``'s (property escapes compared by name)."""
    if wide.props or narrow.props:
        return (
            not wide.negated
            and not narrow.negated
            and set(narrow.props) <= set(wide.props)
            and _ranges_hold(wide.ranges, narrow.ranges)
        )
    return _ranges_hold(_ranges_of(wide), _ranges_of(narrow))


def _ranges_hold(wide: Iterable[Range], narrow: Iterable[Range]) -> bool:
    merged = _merge(wide)
    return all(any(lo <= n_lo and n_hi <= hi for lo, hi in merged) for n_lo, n_hi in narrow)


# -- samples --------------------------------------------------------------------------------

# Characters tried first: plain ASCII reads well and every engine agrees on it.
_PREFERRED = "ab0A_- .!~xyzZ9\t\n\u00e9\u03a9\u4e2d\u00a0\u2028\U0001f600"


@functools.lru_cache(maxsize=4096)
def _member_test(chars: Chars) -> re2._Regexp:
    return re2.compile("\\A" + _emit(chars) + "\\z", _OPTIONS)


@functools.lru_cache(maxsize=4096)
def _chars_in(chars: Chars, *, inside: bool, limit: int = 2) -> tuple[str, ...]:
    """Up to ``limit`` characters inside (or outside) the set, preferred ones first."""
    test = _member_test(chars)
    ranges = _ranges_of(chars) if not chars.props else chars.ranges
    edges = [lo for lo, _ in ranges] + [hi + 1 for _, hi in ranges if hi < MAX_CODE_POINT]
    candidates = itertools.chain(
        _PREFERRED, (chr(c) for c in edges if not 0xD800 <= c <= 0xDFFF), ("\x00",)
    )
    found: list[str] = []
    for ch in candidates:
        if ch not in found and (test.search(ch) is not None) == inside:
            found.append(ch)
            if len(found) == limit:
                break
    return tuple(found)


def _candidates(node: Node) -> list[str]:
    """A few short strings ``node`` might match (to be checked: assertions are ignored)."""
    if isinstance(node, Chars):
        return list(_chars_in(node, inside=True))
    if isinstance(node, (Assert, Look, Backref)):
        return [""]
    if isinstance(node, Group):
        return _candidates(node.item)
    if isinstance(node, Alt):
        return [c for option in node.options for c in _candidates(option)][:_MAX_CANDIDATES]
    if isinstance(node, Seq):
        return _product([_candidates(item) for item in node.items])
    counts = [node.lo] if node.hi == node.lo else [node.lo, node.lo + 1]
    inner = _candidates(node.item)
    # The same choice repeated, then mixed choices (cheap for counts in the hundreds).
    out = [candidate * count for count in counts for candidate in inner]
    if counts[0] > 1 and len(inner) > 1:
        out += _product([inner] * counts[0])
    return list(dict.fromkeys(out))[:_MAX_CANDIDATES]


def _product(parts: list[list[str]]) -> list[str]:
    out = [""]
    for part in parts:
        out = list(itertools.islice((a + b for a in out for b in part), _MAX_CANDIDATES))
        if not out:
            break
    return out


def _classes(node: Node) -> Iterator[Chars]:
    if isinstance(node, Chars):
        yield node
    elif isinstance(node, Seq):
        for item in node.items:
            yield from _classes(item)
    elif isinstance(node, Alt):
        for option in node.options:
            yield from _classes(option)
    elif isinstance(node, (Group, Repeat, Look)):
        yield from _classes(node.item)


def sample(pattern: str) -> str | None:
    """A short string ``pattern`` accepts (checked with RE2), or None when none was found or
    the pattern does not run under RE2."""
    regex = translate(pattern)
    tree = _parse(pattern)
    if regex is None or tree is None:
        return None
    for candidate in sorted(_candidates(tree), key=len):
        if regex.search(candidate):
            return candidate
    return None


def sample_not(pattern: str) -> str | None:
    """A short string ``pattern`` rejects (checked with RE2), or None when none was found or
    the pattern does not run under RE2."""
    regex = translate(pattern)
    tree = _parse(pattern)
    if regex is None or tree is None:
        return None
    # Short strings first; strings built around an accepted one only when those fail.
    outside = [
        ch
        for chars in itertools.islice(_classes(tree), 32)
        for ch in _chars_in(chars, inside=False, limit=1)
    ]
    short: list[str] = ["", *_PREFERRED[:12], "aa", "\n", *outside, *(ch * 2 for ch in outside)]
    for candidate in sorted(dict.fromkeys(short), key=len):
        if not regex.search(candidate):
            return candidate
    accepted = sample(pattern) or ""
    for ch in outside:
        for candidate in (accepted + ch, ch + accepted):
            if not regex.search(candidate):
                return candidate
    return None


# -- the reference validator, with its regexes on RE2 -----------------------------------------


class UndecidableRegex(Exception):
    """A pattern the reference validator would have to run with a backtracking engine (one
    :func:`translate` refuses): the instance is neither confirmed valid nor invalid."""


def _search(pattern: str, text: str) -> bool:
    regex = translate(pattern)
    if regex is None:
        raise UndecidableRegex(pattern)
    return regex.search(text)


def reference_validator(schema: Any) -> Any:
    """A ``jsonschema`` validator for ``schema`` (its draft from ``$schema``, 2020-12 when
    absent) that evaluates ``pattern``, ``patternProperties`` and ``additionalProperties`` with
    RE2 instead of Python's ``re``, so a hostile pattern cannot hang a validation. Validating
    raises :class:`UndecidableRegex` where a pattern would need lookaround or backreferences
    (and for ``unevaluatedProperties`` in a document with ``patternProperties``, which
    ``jsonschema`` evaluates with ``re`` internally)."""
    from jsonschema import validators
    from jsonschema.exceptions import ValidationError

    base = validators.validator_for(schema, default=validators.Draft202012Validator)

    def pattern(validator: Any, patrn: str, instance: Any, _schema: Any) -> Iterator[Any]:
        if validator.is_type(instance, "string") and not _search(patrn, instance):
            yield ValidationError(f"{instance!r} does not match {patrn!r}")

    def pattern_properties(validator: Any, value: Any, instance: Any, _schema: Any) -> Any:
        if not validator.is_type(instance, "object"):
            return
        for patrn, subschema in value.items():
            for key, item in instance.items():
                if _search(patrn, key):
                    yield from validator.descend(item, subschema, path=key, schema_path=patrn)

    def additional_properties(validator: Any, value: Any, instance: Any, node: Any) -> Any:
        if not validator.is_type(instance, "object"):
            return
        declared = node.get("properties", {})
        patterns = list(node.get("patternProperties", {}))
        extras = sorted(
            (key for key in instance if key not in declared)
            if not patterns
            else (
                key
                for key in instance
                if key not in declared and not any(_search(p, key) for p in patterns)
            ),
            key=str,
        )
        if validator.is_type(value, "object"):
            for extra in extras:
                yield from validator.descend(instance[extra], value, path=extra)
        elif not value and extras:
            listed = ", ".join(repr(extra) for extra in extras)
            yield ValidationError(f"additional properties are not allowed ({listed})")

    overrides: dict[str, Any] = {
        "pattern": pattern,
        "patternProperties": pattern_properties,
        "additionalProperties": additional_properties,
    }
    original = base.VALIDATORS.get("unevaluatedProperties")
    if original is not None and _mentions(schema, "patternProperties"):

        def unevaluated(validator: Any, value: Any, instance: Any, node: Any) -> Any:
            if validator.is_type(instance, "object") and instance:
                raise UndecidableRegex("unevaluatedProperties beside patternProperties")
            yield from original(validator, value, instance, node)

        overrides["unevaluatedProperties"] = unevaluated
    return validators.extend(base, overrides)(schema)  # type: ignore[no-untyped-call]


def _mentions(document: Any, keyword: str) -> bool:
    pending = [document]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            if keyword in node:
                return True
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)
    return False
