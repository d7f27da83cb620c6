"""G3, the eval-contamination gate: no training task may share a word n-gram with an eval item.

Text normalisation (shared by both sides and by ``n_gram_hash``): Unicode NFKC, then case
folding, then every punctuation character (Unicode category P*) is removed, then the text is
split on whitespace into words. The word n-grams of a text are its runs of N consecutive
words, joined by one space; a text shorter than N words has one n-gram, its whole normalised
text (an empty text has none).

A task shares an n-gram with an eval item when one of its n-grams is one of the item's, or
when the whole text of an eval item shorter than N words is a run of the task's words (an
eval question quoted inside a longer task is contamination all the same). A task shorter than
N words is compared whole: it matches an eval item of the same words.

The check is one pass over each side: the eval items' n-grams go into a set of 128-bit keys,
then each task's n-grams (and its runs as long as a short eval item) are looked up in it;
never a pairwise loop. A key is two 64-bit
SipHashes (Python's string hash of the n-gram, and of the n-gram with a suffix), so a
collision is not a practical concern (about 2^-100 per run at 10^13 n-gram pairs). The keys
are only compared inside one process tree: worker processes are forked and share the
interpreter's hash secret. The eval item that holds a shared n-gram is found by a second
pass over the eval items, run only when something is contaminated; so an eval file must be a
regular file (a pipe would be empty the second time), and it must hold at least one item
with words (an empty eval set would make the gate check nothing).
"""

from __future__ import annotations

import hashlib
import os
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from datafactory.gcpause import no_cyclic_gc
from datafactory.sources import READ_ERRORS, read_error
from wiregate.errors import UserError
from wiregate.jsonl import DEFAULT_MAX_LINE_BYTES, open_binary, read_lines, too_long

__all__ = [
    "DEFAULT_NGRAM",
    "EVAL_TEXT_FIELDS",
    "Contamination",
    "EvalIndex",
    "EvalItem",
    "G3Report",
    "check_ngram",
    "hash_grams",
    "n_gram_hash",
    "name_contaminations",
    "ngrams",
    "normalise_words",
    "task_grams",
    "validate_g3",
    "word_grams",
]

DEFAULT_NGRAM = 8
#: Fields searched, in this order, for an eval item's text when --eval-field is not given.
EVAL_TEXT_FIELDS = ("question", "prompt", "task", "text", "input")


def check_ngram(
    n: int, name: str, error: Callable[[str], Exception] = ValueError, *, explain: bool = True
) -> None:
    """Refuse an n-gram length below 1 in the caller's words: ``name`` is its parameter or
    option, ``error`` what it raises. ``explain`` says what the number counts (an option
    leaves that to its --help)."""
    if n < 1:
        unit = " (words per n-gram)" if explain else ""
        raise error(f"{name} must be at least 1{unit}, got {n}")


class _PunctuationTable(dict[int, "int | None"]):
    """str.translate table deleting Unicode punctuation; filled lazily, one code point at a
    time, so start-up does not pay for scanning all of Unicode."""

    def __missing__(self, codepoint: int) -> int | None:
        value = None if unicodedata.category(chr(codepoint)).startswith("P") else codepoint
        self[codepoint] = value
        return value


_PUNCTUATION = _PunctuationTable()


# bytes.translate deletes in one C loop; str.translate looks each character up in a dict.
_ASCII_PUNCTUATION = bytes(c for c in range(128) if unicodedata.category(chr(c)).startswith("P"))


def normalise_words(text: str) -> list[str]:
    """NFKC, case folding, punctuation removed, split on whitespace."""
    if text.isascii():  # NFKC changes nothing and casefold is lower() on ASCII
        return text.lower().encode("ascii").translate(None, _ASCII_PUNCTUATION).decode().split()
    return unicodedata.normalize("NFKC", text).casefold().translate(_PUNCTUATION).split()


def _grams(words: list[str], n: int) -> list[str]:
    if len(words) <= n:
        return [" ".join(words)] if words else []
    return [" ".join(words[i : i + n]) for i in range(len(words) - n + 1)]


def ngrams(text: str, n: int) -> list[str]:
    """The distinct word n-grams of ``text`` in first-seen order (see the module docstring)."""
    return list(dict.fromkeys(_grams(normalise_words(text), n)))


def _key(gram: str) -> int:
    return (hash(gram) << 64) ^ hash(gram + "\x00")


def task_grams(text: str, n: int) -> list[str]:
    """The word n-grams of ``text`` in order, repeats included (``ngrams`` drops repeats)."""
    return _grams(normalise_words(text), n)


def word_grams(words: list[str], n: int) -> list[str]:
    """``task_grams`` of a text whose ``normalise_words`` are at hand."""
    return _grams(words, n)


def n_gram_hash(text: str, n: int = DEFAULT_NGRAM) -> str:
    """Fingerprint of a task's n-gram set: sha256 over its distinct word n-grams (module
    docstring), sorted and joined with ``\\n``, encoded as UTF-8; the first 16 hex digits.
    Two tasks that differ only in case, punctuation or Unicode form get the same value."""
    return hash_grams(task_grams(text, n))


def hash_grams(grams: Iterable[str]) -> str:
    """``n_gram_hash`` of a task whose n-grams (``task_grams``) are at hand."""
    joined = "\n".join(sorted(set(grams)))
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class EvalItem:
    number: int  # line number in the eval file
    item_id: str
    text: str


def _item_text(value: Any, field_name: str | None) -> str | None:
    if not isinstance(value, dict):
        return None
    names = (field_name,) if field_name is not None else EVAL_TEXT_FIELDS
    for name in names:
        text = value.get(name)
        if isinstance(text, str):
            return text
    return None


def read_eval_items(path: str, field_name: str | None = None) -> Iterator[EvalItem]:
    """Every eval item of a JSONL file. A line that is not an object with a text field is an
    input error (exit 2): an eval set with holes would make the gate silently weaker."""
    if field_name == "":
        raise UserError(
            "the eval field name is empty: name the field that holds each eval item's text "
            f"(or leave it out to search {'/'.join(EVAL_TEXT_FIELDS)})"
        )
    with open_binary(path) as handle:
        try:
            lines = read_lines(handle.read, DEFAULT_MAX_LINE_BYTES)  # bounded, as inputs are
            for number, (_, raw, length, over) in enumerate(lines, start=1):
                if over:
                    limit = too_long(length, DEFAULT_MAX_LINE_BYTES)
                    raise UserError(f"{path}:{number}: eval item too long: {limit}")
                if not raw.strip():
                    continue
                try:
                    value = orjson.loads(raw)
                except orjson.JSONDecodeError as exc:
                    raise UserError(
                        f"{path}:{number}: eval item is not valid JSON: {exc}"
                    ) from None
                text = _item_text(value, field_name)
                if text is None:
                    wanted = repr(field_name) if field_name else "/".join(EVAL_TEXT_FIELDS)
                    raise UserError(f"{path}:{number}: eval item has no text field {wanted}")
                item_id = value.get("id", value.get("item_id"))
                yield EvalItem(
                    number, str(item_id) if item_id is not None else f"line {number}", text
                )
        except READ_ERRORS as exc:  # also a damaged .gz file
            raise read_error(path, exc) from None


class EvalIndex:
    """The hashed n-grams of an eval set, built in one pass. ``hits(task)`` gives the task's
    n-grams that some eval item shares; ``item_ids`` names, for each, the first eval item
    that holds it (a second pass over the items, run only when something matched)."""

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
        keys: set[int] = set()
        short: set[int] = set()
        with no_cyclic_gc():
            for item in items:
                self.items += 1
                words = normalise_words(item.text)
                if 0 < len(words) < n:
                    short.add(len(words))
                keys.update(_key(gram) for gram in _grams(words, n))
        self._keys = frozenset(keys)
        self._short_lengths = sorted(short)  # word counts of the eval items shorter than N

    @classmethod
    def from_file(
        cls, path: str, n: int = DEFAULT_NGRAM, field_name: str | None = None
    ) -> EvalIndex:
        """The index of an eval JSONL file (read twice: see the module docstring). Raises
        ``UserError`` for a file that is not regular or holds nothing to compare."""
        # Missing files and directories are named when opened, below.
        special = os.path.exists(path) and not os.path.isdir(path) and not os.path.isfile(path)
        if path == "-" or special:
            raise UserError(
                f"{path}: not a regular file: the eval items are read twice, "
                "and a pipe or device would be empty the second time"
            )
        index = cls(read_eval_items(path, field_name), n, lambda: read_eval_items(path, field_name))
        if not index.items:
            raise UserError(f"{path}: no eval items: the G3 gate would check nothing")
        if not index._keys:
            raise UserError(f"{path}: no eval item has any words: the G3 gate would check nothing")
        return index

    def hits(self, task: str) -> list[str]:
        """The task's n-grams that some eval item shares, in order (repeats possible), then
        the short eval items found inside it, shortest first."""
        words = normalise_words(task)
        return list(self._shared(words, _grams(words, self.n)))

    def first_shared(self, words: list[str], grams: Iterable[str]) -> str:
        """The first n-gram a task shares with some eval item (in ``hits`` order), or "";
        ``words``: the task's ``normalise_words``, ``grams``: its ``task_grams``."""
        return next(self._shared(words, grams), "")

    def _shared(self, words: list[str], grams: Iterable[str]) -> Iterator[str]:
        keys = self._keys
        yield from (gram for gram in grams if _key(gram) in keys)
        for length in self._short_lengths:
            if length >= len(words):
                break  # a text this short is one n-gram, its whole self: looked up above
            for start in range(len(words) - length + 1):
                run = " ".join(words[start : start + length])
                if _key(run) in keys:
                    yield run

    def item_ids(self, grams: Iterable[str]) -> dict[str, str]:
        """Each n-gram -> the id of the first eval item that holds it."""
        wanted = set(grams)
        found: dict[str, str] = {}
        if not wanted:
            return found
        for item in self._reread():
            for gram in ngrams(item.text, self.n):
                if gram in wanted and gram not in found:
                    found[gram] = item.item_id
            if len(found) == len(wanted):
                break
        return found


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


def name_contaminations(index: EvalIndex, found: list[tuple[str, str]]) -> list[Contamination]:
    """(rollout_id, first shared n-gram) pairs -> contaminations naming the eval item."""
    ids = index.item_ids(gram for _, gram in found)
    return [Contamination(rollout_id, ids.get(gram, "?"), gram) for rollout_id, gram in found]


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
    found: list[tuple[str, str]] = []
    seen: set[str] = set()
    with no_cyclic_gc():
        for rollout_id, task in tasks:
            report.tasks_checked += 1
            if rollout_id in seen:
                continue
            grams = index.hits(task)
            if grams:
                seen.add(rollout_id)
                found.append((rollout_id, grams[0]))
    report.contaminated = name_contaminations(index, found)
    return report
