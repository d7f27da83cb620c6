"""G3, the eval-contamination gate: no training task may share a word n-gram with an eval item.

Normalisation, by Unicode's rules (shared by both sides and by ``n_gram_hash``):

1. compatibility decomposition and full case folding: NFKD, ``str.casefold``, NFKD again
   (the decomposed form of NFKC + case folding, so "ﬁ" is "fi", "Straße" is "strasse");
2. every ``Default_Ignorable_Code_Point``, every format (Cf) character and every control
   (Cc) that is not whitespace is *invisible* (U+200B, U+00AD, U+FEFF, variation selectors,
   tag characters, bidi controls, the Hangul fillers, U+0080-U+009F, DEL, ...): removed;
3. combining marks (M*) are removed, so "café" is "cafe"; in a task they count as invisible
   characters (below): one put where a space was hides nothing (U+0345, which case folding
   would turn into the letter U+03B9, is taken out before step 1's folding);
4. every other character that is not a letter (L*) or a number (N*) is a word break:
   whitespace (the whitespace controls too), punctuation (``_ - . /`` separate words),
   symbols (U+2800); and every letter of a script written without spaces between words
   (Han, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar: ``_UNSPACED``) is a word of its own,
   so the n-grams of such a text are runs of N characters (as BERT's tokenizer splits
   Chinese characters): a sentence of them is not one long "word" that one character more
   makes different;
5. with the invisible characters out, NFC puts back together what step 1 took apart
   (Hangul syllables, also those an invisible character or a mark split), and the text is
   split into words.

ASCII text takes a fast path with the same result (NFKC changes nothing, case folding is
``lower()``, no ASCII character is a mark, the invisible ones are the controls that are not
whitespace, and the letters and numbers are ``[A-Za-z0-9]``).

The word n-grams of a text are its runs of N consecutive words, joined by one space; a text
shorter than N words has one n-gram, its whole normalised text (an empty text has none). Two
n-grams are the same when their letters are (the words joined without spaces).

A task shares an n-gram with an eval item when one of its n-grams is one of the item's, or
when the whole text of an eval item shorter than N words is a run of the task's words (an
eval question quoted inside a longer task is contamination all the same). A task shorter than
N words is compared whole: it matches an eval item of the same words. An invisible character
in a task may stand for nothing (inside a word) or for a space (between words), in any mix:
in a task that has one, every run of its pieces (split at breaks and at invisible
characters) is also looked up, up to ``MAX_SPAN_LETTERS`` letters and N words.

The check is one pass over each side, never a pairwise loop. The eval side is a set of
56-bit fingerprints of its n-grams (the top bits of Python's string hash of the n-gram's
letters: SipHash, keyed per process; worker processes are forked and share the key) held in
6 bytes each: 256 sorted ``bytes`` partitions of 4,096 buckets each, found through one array
of offsets, with a bitmap of the fingerprints' top bits in front (8 bits per n-gram: most
misses end there). Memory is about 7 bytes per distinct n-gram; repeats are merged
while the index is built. A fingerprint match is a candidate; every candidate is confirmed
exactly against the eval items' normalised text by a second pass over them (``confirm``),
run only when something matched: so an eval file must be a regular file (a pipe would be
empty the second time), and it must hold at least one item.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import re
import sys
import unicodedata
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import accumulate
from operator import methodcaller
from typing import Any

import orjson

from datafactory.gcpause import no_cyclic_gc
from datafactory.records import may_hold_wide_integer
from datafactory.sources import file_lines
from wiregate.errors import UserError
from wiregate.jsonl import DEFAULT_MAX_LINE_BYTES, too_long

__all__ = [
    "DEFAULT_NGRAM",
    "EVAL_ID_FIELDS",
    "EVAL_TEXT_FIELDS",
    "MAX_CANDIDATES",
    "MAX_SPAN_LETTERS",
    "Contamination",
    "EvalIndex",
    "EvalItem",
    "G3Report",
    "check_ngram",
    "hash_grams",
    "is_default_ignorable",
    "is_unspaced_letter",
    "n_gram_hash",
    "ngrams",
    "normalise_words",
    "read_eval_items",
    "task_grams",
    "task_words",
    "validate_g3",
    "word_grams",
]

DEFAULT_NGRAM = 8
#: Fields searched, in this order, for an eval item's text when --eval-field is not given:
#: the first one that holds a word.
EVAL_TEXT_FIELDS = ("question", "prompt", "task", "text", "input")
#: Fields searched, in this order, for an eval item's id when --eval-id-field is not given
#: (then the line number).
EVAL_ID_FIELDS = ("id", "key", "item_id")
#: Candidate n-grams kept per task: the first ones in task order (see ``candidates``).
MAX_CANDIDATES = 4
#: Longest run of a task's pieces looked up when the task holds invisible characters.
MAX_SPAN_LETTERS = 256


def check_ngram(
    n: int, name: str, error: Callable[[str], Exception] = ValueError, *, explain: bool = True
) -> None:
    """Refuse an n-gram length below 1 in the caller's words: ``name`` is its parameter or
    option, ``error`` what it raises. ``explain`` says what the number counts (an option
    leaves that to its --help)."""
    if n < 1:
        unit = " (words per n-gram)" if explain else ""
        raise error(f"{name} must be at least 1{unit}, got {n}")


# ---------------------------------------------------------------------------------------
# Normalisation

# Default_Ignorable_Code_Point, from Unicode's DerivedCoreProperties.txt (unchanged from
# Unicode 14 to 17; tests check it against the `regex` package's property, code point by
# code point). Python's unicodedata does not carry this property.
_DEFAULT_IGNORABLE = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
_DI_STARTS = [start for start, _ in _DEFAULT_IGNORABLE]


def is_default_ignorable(codepoint: int) -> bool:
    """Whether ``codepoint`` has Unicode's Default_Ignorable_Code_Point property."""
    i = bisect_right(_DI_STARTS, codepoint) - 1
    return i >= 0 and codepoint <= _DEFAULT_IGNORABLE[i][1]


# Letters of scripts written without spaces between words, by Unicode block (Han, Hiragana,
# Katakana, Thai, Lao, Khmer, Myanmar; the Kangxi radicals and halfwidth or circled kana
# reach the table already decomposed to these). Tests check every letter of those scripts,
# by the `regex` package's Script property, is in them, and nothing else but their own
# blocks' common letters (U+30FC).
_UNSPACED = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x1000, 0x109F),  # Myanmar
    (0x1780, 0x17FF),  # Khmer
    (0x3005, 0x3007),  # ideographic iteration and closing marks, ideographic zero
    (0x303B, 0x303C),  # vertical ideographic iteration mark, masu mark
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xA9E0, 0xA9FF),  # Myanmar extended B
    (0xAA60, 0xAA7F),  # Myanmar extended A
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF66, 0xFF9F),  # halfwidth Katakana
    (0x16FE3, 0x16FE3),  # old Chinese iteration mark
    (0x1AFF0, 0x1B16F),  # Kana extended B, Kana supplement, extended A, small Kana
    (0x20000, 0x3FFFF),  # CJK extensions B-I and compatibility supplement
)
_UNSPACED_STARTS = [start for start, _ in _UNSPACED]


def is_unspaced_letter(codepoint: int) -> bool:
    """Whether ``codepoint`` is in a block of ``_UNSPACED`` (callers check it is a letter)."""
    i = bisect_right(_UNSPACED_STARTS, codepoint) - 1
    return i >= 0 and codepoint <= _UNSPACED[i][1]


_INVISIBLE = "\x01"  # marks an invisible character (the input's own U+0001 is one)
_BREAK = ord(" ")


class _Table(dict[int, "int | str | None"]):
    """str.translate table of steps 2-4 (module docstring); filled lazily, one code point at
    a time, so start-up does not pay for scanning all of Unicode."""

    def __missing__(self, codepoint: int) -> int | str | None:
        category = unicodedata.category(chr(codepoint))
        value: int | str | None
        # A mark is dropped from the words as invisible characters are, and like them it may
        # stand where a space was ("capital\u20ddof"): the pieces on each side are looked up.
        # So is a control that is not whitespace (U+0080-U+009F, DEL): nothing shows it.
        if (
            category == "Cf"
            or category[0] == "M"
            or is_default_ignorable(codepoint)
            or (category == "Cc" and not chr(codepoint).isspace())
        ):
            value = ord(_INVISIBLE)
        elif category[0] == "L" and is_unspaced_letter(codepoint):
            value = f" {chr(codepoint)} "  # a word of its own
        elif category[0] in "LN":
            value = codepoint
        else:
            value = _BREAK
        self[codepoint] = value
        return value


_TABLE = _Table()
# One C loop for ASCII: letters and digits lowered, everything else a break.
_ASCII_TABLE = bytes(
    ord(chr(c).lower())
    if c < 128 and chr(c).isalnum()
    else ord(_INVISIBLE)
    if c < 128 and unicodedata.category(chr(c)) == "Cc" and not chr(c).isspace()
    else _BREAK
    for c in range(256)
)
_ASCII_WORD_CHAR = re.compile(r"[A-Za-z0-9]")


def _prepare(text: str) -> str:
    """``text`` after steps 1-4 (module docstring), words separated by spaces, each
    invisible character replaced by ``_INVISIBLE``; not composed yet (step 5, ``_composed``):
    letters an invisible character separates compose once it is out (Hangul jamo)."""
    if text.isascii():
        return text.encode("ascii").translate(_ASCII_TABLE).decode("ascii")
    return _folded(text).translate(_TABLE)


def _folded(text: str) -> str:
    """Step 1: NFKD, case folding, NFKD. U+0345 (from U+1FB3 too) is the one mark that case
    folding turns into a letter (U+03B9): it is made invisible first, as every mark is."""
    decomposed = unicodedata.normalize("NFKD", text)
    if "\u0345" in decomposed:
        decomposed = decomposed.replace("\u0345", "\u200b")
    return unicodedata.normalize("NFKD", decomposed.casefold())


def _composed(text: str) -> str:
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def _normalise_unicode(text: str) -> list[str]:
    """``normalise_words`` without the ASCII fast path (tests compare the two)."""
    kept = _folded(text).translate(_TABLE).replace(_INVISIBLE, "")
    return unicodedata.normalize("NFC", kept).split()


def normalise_words(text: str) -> list[str]:
    """The words of ``text`` (module docstring), invisible characters removed."""
    prepared = _prepare(text)
    if _INVISIBLE in prepared:
        prepared = prepared.replace(_INVISIBLE, "")
    return _composed(prepared).split()


def task_words(text: str) -> tuple[list[str], list[list[str]] | None]:
    """(``normalise_words(text)``, pieces): pieces is None when the text holds no invisible
    character, else its words split at them too, one list per run between breaks."""
    prepared = _prepare(text)
    if _INVISIBLE not in prepared:
        return _composed(prepared).split(), None
    # Pieces stay decomposed: a run of them is composed when it is looked up (``_runs``).
    pieces = [[p for p in run.split(_INVISIBLE) if p] for run in prepared.split()]
    return _composed(prepared.replace(_INVISIBLE, "")).split(), [run for run in pieces if run]


def _item_forms(text: str) -> list[list[str]]:
    """The words of an eval item's text: normalised (invisible characters removed), and when
    it holds any, also with each invisible character read as a word break, as a task's text
    is read both ways (``EvalIndex.candidates``): words joined by U+200B in the eval item are
    no way past the gate either."""
    words, pieces = task_words(text)
    if pieces is None:
        return [words]
    split = [_composed(piece) for run in pieces for piece in run]
    return [words, split] if split != words else [words]


def _has_word(text: str) -> bool:
    if text.isascii():
        return _ASCII_WORD_CHAR.search(text) is not None
    return bool(normalise_words(text))


def _grams(words: list[str], n: int) -> list[str]:
    if len(words) <= n:
        return [" ".join(words)] if words else []
    return [" ".join(words[i : i + n]) for i in range(len(words) - n + 1)]


def ngrams(text: str, n: int) -> list[str]:
    """The distinct word n-grams of ``text`` in first-seen order (see the module docstring)."""
    return list(dict.fromkeys(_grams(normalise_words(text), n)))


def task_grams(text: str, n: int) -> list[str]:
    """The word n-grams of ``text`` in order, repeats included (``ngrams`` drops repeats)."""
    return _grams(normalise_words(text), n)


def word_grams(words: list[str], n: int) -> list[str]:
    """``task_grams`` of a text whose ``normalise_words`` are at hand."""
    return _grams(words, n)


def n_gram_hash(text: str, n: int = DEFAULT_NGRAM) -> str:
    """Fingerprint of a task's n-gram set: sha256 over its distinct word n-grams (module
    docstring), sorted and joined with ``\\n``, encoded as UTF-8; the first 16 hex digits.
    Two tasks that differ only in case, punctuation, accents, invisible characters or
    Unicode form get the same value."""
    return hash_grams(task_grams(text, n))


def hash_grams(grams: Iterable[str]) -> str:
    """``n_gram_hash`` of a task whose n-grams (``task_grams``) are at hand."""
    joined = "\n".join(sorted(set(grams)))
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()[:16]


# ---------------------------------------------------------------------------------------
# The eval items


@dataclass(frozen=True)
class EvalItem:
    number: int  # line number in the eval file
    item_id: str
    text: str


def _item_text(value: dict[str, Any], field_name: str | None) -> str | None:
    """The first listed field that holds a word."""
    names = (field_name,) if field_name is not None else EVAL_TEXT_FIELDS
    for name in names:
        text = value.get(name)
        if isinstance(text, str) and _has_word(text):
            return text
    return None


def _item_id(value: dict[str, Any], id_field: str | None, number: int) -> str | None:
    """The item's id; None when ``id_field`` names a field the item lacks."""
    for name in (id_field,) if id_field is not None else EVAL_ID_FIELDS:
        item_id = value.get(name)
        if isinstance(item_id, bool) or not isinstance(item_id, (str, int, float)):
            continue  # null, an object or a list names nothing
        return str(item_id)
    return None if id_field is not None else f"line {number}"


def _check_field_names(field_name: str | None, id_field: str | None) -> None:
    if field_name == "":
        raise UserError(
            "the eval field name is empty: name the field that holds each eval item's text "
            f"(or leave it out to search {'/'.join(EVAL_TEXT_FIELDS)})"
        )
    if id_field == "":
        raise UserError(
            "the eval id field name is empty: name the field that holds each eval item's id "
            f"(or leave it out to use {'/'.join(EVAL_ID_FIELDS)} or the line number)"
        )


def read_eval_items(
    path: str,
    field_name: str | None = None,
    id_field: str | None = None,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    digest: Any = None,
) -> Iterator[EvalItem]:
    """Every eval item of a JSONL file. A line that is not an object with a text field
    holding a word (or with the id field ``id_field`` names) is an input error (exit 2): an
    eval set with holes would make the gate silently weaker. ``digest`` (a hashlib object)
    gets the file's bytes as they are read."""
    _check_field_names(field_name, id_field)
    repeats = _RepeatedKeys((field_name,) if field_name else EVAL_TEXT_FIELDS)
    number = 0
    for _, raw, length, over, count in file_lines(path, max_line_bytes, digest):
        number += count  # a run of blank lines is one step
        if over:  # bounded, as inputs are
            limit = too_long(length, max_line_bytes)
            raise UserError(f"{path}:{number}: eval item too long: {limit}")
        if not raw.strip():
            continue
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise UserError(f"{path}:{number}: eval item is not valid JSON: {exc}") from None
        if may_hold_wide_integer(raw):  # orjson read an id of 20 digits as a float: the G3
            try:  # report named an id in no eval item. (orjson has judged the JSON.)
                value = json.loads(raw)
            except RecursionError:
                raise UserError(f"{path}:{number}: eval item nested too deep to read") from None
        if not isinstance(value, dict):
            raise UserError(f"{path}:{number}: eval item is not a JSON object")
        try:
            repeated = repeats.find(raw)
        except UserError as exc:
            raise UserError(f"{path}:{number}: {exc}") from None
        if repeated is not None:  # JSON keeps the last: the first text would go unchecked
            raise UserError(f"{path}:{number}: eval item has the key {repeated!r} twice")
        text = _item_text(value, field_name)
        if text is None:
            wanted = repr(field_name) if field_name else "/".join(EVAL_TEXT_FIELDS)
            raise UserError(f"{path}:{number}: eval item has no word in {wanted}")
        item_id = _item_id(value, id_field, number)
        if item_id is None:
            raise UserError(f"{path}:{number}: eval item has no id field {id_field!r}")
        yield EvalItem(number, item_id, text)


_ASCII_ESCAPE = re.compile(rb"\\u00[2-7][0-9A-Fa-f]")
_ANY_ESCAPE = re.compile(rb"\\")


class _RepeatedKeys:
    """Finds the first of ``names`` that is a key of an eval item twice. A line is parsed
    again only when a name is written twice in it, or a key may be written with escapes
    (``"quest\\u0069on"`` is ``"question"``; a name with ``/``, ``"`` or ``\\`` has short
    escapes too). An item nested past the standard library's limit cannot be checked:
    ``UserError``."""

    def __init__(self, names: Iterable[str]) -> None:
        self.names = [(name, orjson.dumps(name)) for name in names]
        plain = all(c.isascii() and (c.isalnum() or c in "_- ") for n, _ in self.names for c in n)
        # A plain name escaped is \u0020-\u007f: not the escapes of text beyond ASCII, which
        # Python's json.dumps writes for every such letter (``caf\u00e9``).
        self.escaped = _ASCII_ESCAPE.search if plain else _ANY_ESCAPE.search

    def find(self, raw: bytes) -> str | None:
        escaped = self.escaped(raw) is not None
        wanted = [name for name, quoted in self.names if escaped or raw.count(quoted) > 1]
        if not wanted:
            return None
        keys: list[list[str]] = []  # of each object, innermost first: the item's is the last

        def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
            keys.append([key for key, _ in items])
            return dict(items)

        try:
            json.loads(raw, object_pairs_hook=pairs)
        except RecursionError:
            raise UserError("eval item nested too deep to check its keys") from None
        return next((name for name in wanted if keys[-1].count(name) > 1), None)


# ---------------------------------------------------------------------------------------
# The index

_MASK64 = (1 << 64) - 1
# A fingerprint is the top 56 bits of a 64-bit hash: the top 8 pick one of 256 partitions,
# the next 48 are stored (6 bytes), sorted; their top 12 bits pick one of 4,096 buckets, found
# through an array of offsets. Few large partitions rather than many small ones: large
# blocks grow in place and go back to the system when freed.
_ENTRY = 6
_PART_SHIFT = 56
_PARTS = 1 << (64 - _PART_SHIFT)
_STORED_SHIFT = _PART_SHIFT - 8 * _ENTRY
_BUCKET_BITS = 12
_BUCKETS = 1 << _BUCKET_BITS
_BUCKET_SHIFT = 8 * _ENTRY - _BUCKET_BITS
_STORED_MASK = (1 << (8 * _ENTRY)) - 1
_MERGE_MIN = 64 * 1024  # bytes a partition may grow before its repeats are first merged
_BLOCK = _ENTRY * 2730  # about 16 KiB
_TRIM_EVERY = 1024 * 1024  # bytes freed while freezing between two malloc_trim calls


_NO_SPACES = methodcaller("replace", " ", "")


def _fingerprint(letters: str) -> int:
    return hash(letters) & _MASK64


def _release_free_memory() -> None:
    """Give the C heap's free pages back to the system (glibc's ``malloc_trim``; elsewhere
    nothing): building the index frees large blocks that glibc would otherwise keep, and
    the peak RSS of a run is what counts."""
    try:
        libc = ctypes.CDLL(None)
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return
    trim(0)


class _Fingerprints:
    """A set of 64-bit hashes kept as 56-bit fingerprints in 6 bytes each (module
    docstring). ``add`` while building, ``freeze`` once, then ``__contains__``."""

    def __init__(self) -> None:
        # Each partition: the blocks set aside, and the one being filled. Fixed-size blocks
        # instead of one growing buffer: no spare capacity, no fragmented heap.
        self._blocks: list[list[bytes]] | None = [[] for _ in range(_PARTS)]
        self._open = [bytearray() for _ in range(_PARTS)]
        self._merged = [0] * _PARTS  # size of each partition when its repeats were merged
        self._parts: list[bytes] = []
        self._starts = array("I")
        self.bitmap = bytearray(1)
        self.size = 8  # bits in the bitmap
        self.count = 0

    def add(self, h: int) -> None:
        part = h >> _PART_SHIFT
        block = self._open[part]
        block += ((h >> _STORED_SHIFT) & _STORED_MASK).to_bytes(_ENTRY, "big")
        if len(block) >= _BLOCK:
            blocks = self._blocks
            assert blocks is not None, "add after freeze"
            blocks[part].append(bytes(block))
            block.clear()
            if len(blocks[part]) * _BLOCK > 2 * self._merged[part] + _MERGE_MIN:
                self._merge(blocks, part)

    def _merge(self, blocks: list[list[bytes]], part: int) -> None:
        """Merge the repeats of a partition that doubled since it was last merged, so memory
        follows the number of distinct fingerprints (amortised: each entry is sorted a
        bounded number of times)."""
        data = b"".join(blocks[part])
        blocks[part] = []
        entries = sorted({data[i : i + _ENTRY] for i in range(0, len(data), _ENTRY)})
        del data
        blocks[part] = [b"".join(entries)]
        self._merged[part] = len(blocks[part][0])

    def freeze(self) -> None:
        blocks = self._blocks
        assert blocks is not None, "frozen twice"
        self._blocks = None
        starts = array("I")
        empty = array("I", bytes(4 * (_BUCKETS + 1)))
        freed = 0
        for part in range(_PARTS):
            data = b"".join([*blocks[part], self._open[part]])
            blocks[part] = []
            self._open[part] = bytearray()
            if not data:
                starts.extend(empty)
                self._parts.append(b"")
                continue
            entries = sorted({data[i : i + _ENTRY] for i in range(0, len(data), _ENTRY)})
            del data
            if len(entries) < _BUCKETS:  # count them (fewer steps than a search per bucket)
                counts = [0] * _BUCKETS  # in bytes: the running sums are the starts
                for entry in entries:
                    counts[int.from_bytes(entry, "big") >> _BUCKET_SHIFT] += _ENTRY
                starts.extend(accumulate(counts, initial=0))
            else:
                starts.extend(
                    bisect_left(entries, (b << _BUCKET_SHIFT).to_bytes(_ENTRY, "big")) * _ENTRY
                    for b in range(_BUCKETS)
                )
                starts.append(len(entries) * _ENTRY)
            self._parts.append(b"".join(entries))
            self.count += len(entries)
            freed += len(entries) * _ENTRY
            del entries
            if freed > _TRIM_EVERY:  # the blocks freed: not kept beside their copies
                _release_free_memory()
                freed = 0
        self._starts = starts
        if freed:
            _release_free_memory()
        self._build_bitmap()

    def _build_bitmap(self) -> None:
        # 8 bits per fingerprint, picked by its top 32 bits scaled to the size: a miss ends
        # at one byte lookup but for about 1 - e^-1/8 (12%) of them.
        size = self.size = max(1 << 16, 8 * self.count)
        bitmap = bytearray(size // 8)
        for part, blob in enumerate(self._parts):
            high = part << _PART_SHIFT
            for i in range(0, len(blob), _ENTRY):
                h = high | (int.from_bytes(blob[i : i + _ENTRY], "big") << _STORED_SHIFT)
                top = ((h >> 32) * size) >> 32
                bitmap[top >> 3] |= 1 << (top & 7)
        self.bitmap = bitmap

    def __contains__(self, h: object) -> bool:
        assert isinstance(h, int)
        top = ((h >> 32) * self.size) >> 32
        return bool((self.bitmap[top >> 3] >> (top & 7)) & 1) and self.holds(h)

    def holds(self, h: int) -> bool:
        """``h in self``, the bitmap's test passed."""
        part = h >> _PART_SHIFT
        stored = (h >> _STORED_SHIFT) & _STORED_MASK
        at = part * (_BUCKETS + 1) + (stored >> _BUCKET_SHIFT)
        low, high = self._starts[at], self._starts[at + 1]
        blob = self._parts[part]
        needle = stored.to_bytes(_ENTRY, "big")
        found = blob.find(needle, low, high)
        while found >= 0 and (found - low) % _ENTRY:  # a match across two entries
            found = blob.find(needle, found + 1, high)
        return found >= 0


class EvalIndex:
    """The n-gram fingerprints of an eval set, built in one pass. ``candidates`` gives the
    first n-grams of a task whose fingerprints some eval item shares; ``confirm`` checks
    candidates exactly against the eval items (a second pass over them)."""

    def __init__(
        self,
        items: Iterable[EvalItem],
        n: int = DEFAULT_NGRAM,
        reread: Callable[[], Iterable[EvalItem]] | None = None,
    ) -> None:
        check_ngram(n, "n")
        self.n = n
        self.items = 0
        materialised: list[EvalItem] | None = None
        if reread is None:  # keep the items for the second pass
            materialised = list(items)
            items = materialised
        self._reread = reread or (lambda: materialised or [])
        keys = _Fingerprints()
        short: set[int] = set()
        lengths = bytearray(MAX_SPAN_LETTERS + 1)  # letter counts of the n-grams, up to the cap
        add = keys.add
        with no_cyclic_gc():
            for item in items:
                self.items += 1
                for words in _item_forms(item.text):
                    if 0 < len(words) < n:
                        short.add(len(words))
                    for gram in _grams(words, n):
                        letters = gram.replace(" ", "")
                        if len(letters) <= MAX_SPAN_LETTERS:
                            lengths[len(letters)] = 1
                        add(_fingerprint(letters))
            keys.freeze()
        self._keys = keys
        self._short_lengths = sorted(short)  # word counts of the eval items shorter than N
        self._lengths = bytes(lengths)

    @property
    def fingerprints(self) -> int:
        """The number of distinct n-gram fingerprints held."""
        return self._keys.count

    @classmethod
    def from_file(
        cls,
        path: str,
        n: int = DEFAULT_NGRAM,
        field_name: str | None = None,
        id_field: str | None = None,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        digest: Any = None,
    ) -> EvalIndex:
        """The index of an eval JSONL file (read twice: see the module docstring; the second
        time only when a task matched). Raises ``UserError`` for a file that is not regular
        or holds no item. ``digest`` (a hashlib object) gets the file's bytes as the first
        reading reads them."""
        _check_field_names(field_name, id_field)
        # Missing files and directories are named when opened, below.
        special = os.path.exists(path) and not os.path.isdir(path) and not os.path.isfile(path)
        if path == "-" or special:
            raise UserError(
                f"{path}: not a regular file: the eval items are read twice, "
                "and a pipe or device would be empty the second time"
            )
        index = cls(
            read_eval_items(path, field_name, id_field, max_line_bytes, digest),
            n,
            lambda: read_eval_items(path, field_name, id_field, max_line_bytes),
        )
        if not index.items:
            raise UserError(f"{path}: no eval items: the G3 gate would check nothing")
        return index

    def candidates(
        self,
        words: list[str],
        grams: list[str],
        pieces: list[list[str]] | None = None,
        limit: int | None = MAX_CANDIDATES,
    ) -> list[str]:
        """The letters (words joined without spaces) of the task's first ``limit`` distinct
        n-grams whose fingerprints some eval item holds, in task order: its n-grams, then
        runs as long as a short eval item, then (``pieces`` given: the task holds invisible
        characters) runs of its pieces. ``words``, ``grams``, ``pieces``: the task's
        ``task_words`` and ``word_grams``. Confirm them with ``confirm``."""
        found: dict[str, None] = {}
        limit = limit or sys.maxsize
        _ = (
            self._scan(map(_NO_SPACES, grams), found, limit)
            or self._scan(self._short_runs(words), found, limit)
            or (pieces is not None and self._scan(self._runs(pieces), found, limit))
        )
        return list(found)

    def _scan(self, lookups: Iterable[str], found: dict[str, None], limit: int) -> bool:
        """Add to ``found`` each of ``lookups`` whose fingerprint is held; True once
        ``found`` holds ``limit``. (The hot loop of the exporter: the bitmap test inline.)"""
        keys = self._keys
        bitmap, size = keys.bitmap, keys.size
        for letters in lookups:
            h = hash(letters) & _MASK64
            top = ((h >> 32) * size) >> 32
            if (bitmap[top >> 3] >> (top & 7)) & 1 and letters not in found and keys.holds(h):
                found[letters] = None
                if len(found) >= limit:
                    return True
        return False

    def _short_runs(self, words: list[str]) -> Iterator[str]:
        """The runs of the task's words as long as a short eval item."""
        for length in self._short_lengths:
            if length >= len(words):
                break  # a text this short is one n-gram, its whole self: looked up above
            for start in range(len(words) - length + 1):
                yield "".join(words[start : start + length])

    def _runs(self, pieces: list[list[str]]) -> Iterator[str]:
        """Each run of pieces that spans at most N words (runs between breaks) and at most
        ``MAX_SPAN_LETTERS`` letters, whose letter count some eval n-gram has, and that
        starts, ends or splits at an invisible character (the others are runs of whole
        words, which the n-grams cover)."""
        # (piece, its word: the run between breaks, whether an invisible character precedes it)
        flat = [
            (piece, word, i > 0) for word, run in enumerate(pieces) for i, piece in enumerate(run)
        ]
        lengths, n, end = self._lengths, self.n, len(flat)
        # The word of the nearest piece at or after each one that an invisible one precedes.
        next_split = [0] * (end + 1)
        upcoming = sys.maxsize
        for at in range(end, -1, -1):
            if at < end and flat[at][2]:
                upcoming = flat[at][1]
            next_split[at] = upcoming
        for start in range(end):
            first_word = flat[start][1]
            if next_split[start] - first_word > n:
                continue  # no invisible character within reach
            letters = ""
            split = flat[start][2]
            for at in range(start, end):
                piece, word, after_invisible = flat[at]
                if word - first_word >= n:
                    break
                letters += piece
                if len(letters) > MAX_SPAN_LETTERS:
                    break
                split = split or after_invisible
                ends_split = at + 1 < end and flat[at + 1][2]
                if split or ends_split:
                    run = _composed(letters)
                    if lengths[len(run)]:
                        yield run

    def confirm(self, candidates: Iterable[str]) -> dict[str, tuple[str, str]]:
        """Each candidate (``candidates``' letters) that some eval item really holds -> (the
        id of the first such item, that item's n-gram); a candidate no item holds (a
        fingerprint collision) is left out. A second pass over the items, when given any."""
        wanted = set(candidates)
        found: dict[str, tuple[str, str]] = {}
        if not wanted:
            return found
        for item in self._reread():
            for words in _item_forms(item.text):
                for gram in _grams(words, self.n):
                    letters = gram.replace(" ", "")
                    if letters in wanted and letters not in found:
                        found[letters] = (item.item_id, gram)
            if len(found) == len(wanted):
                break
        return found

    def hits(self, task: str) -> list[str]:
        """The eval n-grams a task shares (confirmed), in task order (``candidates``)."""
        words, pieces = task_words(task)
        found = self.candidates(words, _grams(words, self.n), pieces, limit=None)
        confirmed = self.confirm(found)
        return [confirmed[letters][1] for letters in found if letters in confirmed]


@dataclass(frozen=True)
class Contamination:
    """One contaminated rollout: the first shared n-gram and the eval item that holds it."""

    rollout_id: str
    eval_item_id: str
    ngram: str


@dataclass
class G3Report:
    ngram: int
    eval_items: int
    tasks_checked: int = 0
    contaminated: list[Contamination] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.contaminated


def first_confirmed(
    candidates: Iterable[str], confirmed: Mapping[str, tuple[str, str]]
) -> tuple[str, str] | None:
    """(eval item id, n-gram) of the first candidate ``confirm`` kept, or None."""
    return next((confirmed[c] for c in candidates if c in confirmed), None)


def validate_g3(
    tasks: Iterable[tuple[str, str]],
    eval_items: Iterable[EvalItem] | EvalIndex,
    n: int = DEFAULT_NGRAM,
) -> G3Report:
    """Check ``(rollout_id, task)`` pairs against an eval set (an ``EvalIndex`` or the
    items); one pass over each side. Each contaminated rollout is reported once. ``n`` (words
    per n-gram, at least 1) applies to items; an ``EvalIndex`` has its own."""
    check_ngram(n, "n")
    index = eval_items if isinstance(eval_items, EvalIndex) else EvalIndex(eval_items, n)
    report = G3Report(ngram=index.n, eval_items=index.items)
    found: dict[str, list[str]] = {}  # rollout -> candidates of its tasks, in order
    with no_cyclic_gc():
        for rollout_id, task in tasks:
            report.tasks_checked += 1
            words, pieces = task_words(task)
            candidates = index.candidates(words, _grams(words, index.n), pieces)
            if candidates:
                found.setdefault(rollout_id, []).extend(candidates)
    confirmed = index.confirm(c for candidates in found.values() for c in candidates)
    for rollout_id, candidates in found.items():
        first = first_confirmed(candidates, confirmed)
        if first is not None:
            report.contaminated.append(Contamination(rollout_id, *first))
    return report
