"""Problems a team has accepted for now, each with a reason and optionally an expiry date: the
pieces the drift baseline (``wiregate.drift.baseline``) and the validate baseline
(``wiregate.validation_baseline``) share.

Both are TOML files of ``[[accepted]]`` entries, read with
:func:`wiregate.configfile.load_config_toml` (TOML dates read as text first:
:func:`dates_as_text`), matched by a fingerprint, written whole and atomically under a
regenerated header (:func:`write_accepted`), updated the same way (:func:`merge_entries`: new
entries added with the given reason, those already listed kept as they are, stale ones
removed on request), and judged against one "today" (:func:`today`, ``WIREGATE_TODAY``): an
entry holds until the day before its ``expires``.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, time
from pathlib import Path
from typing import Any, Generic, TypeVar

from wiregate.atomic import refusal, write_atomically
from wiregate.errors import UserError

__all__ = [
    "TODAY_VARIABLE",
    "Update",
    "check_reason",
    "dates_as_text",
    "expired",
    "has_words",
    "merge_entries",
    "parse_date",
    "today",
    "toml_string",
    "update_options",
    "write_accepted",
]

#: The environment variable that sets "today" (YYYY-MM-DD) for expiry dates: tests, replays.
TODAY_VARIABLE = "WIREGATE_TODAY"


def has_words(text: str) -> bool:
    """``text`` holds a letter, number, punctuation mark or symbol: not only spaces and
    invisible characters (zero-width, bidi controls, no-break spaces)."""
    return any(unicodedata.category(char)[0] in "LNPS" for char in text)


_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def parse_date(value: str, what: str) -> date:
    """A ``YYYY-MM-DD`` date; anything else is a one-line UserError naming ``what``."""
    try:
        if not _DATE.fullmatch(value):  # fromisoformat takes week dates too: 2027-W01-1
            raise ValueError
        return date.fromisoformat(value)
    except ValueError:
        raise UserError(f"{what}: {value!r} is not a date (YYYY-MM-DD)") from None


def today(environ: Mapping[str, str] | None = None) -> date:
    """Today, or the date in ``WIREGATE_TODAY`` when it is set."""
    value = (os.environ if environ is None else environ).get(TODAY_VARIABLE)
    return parse_date(value, TODAY_VARIABLE) if value else date.today()


def expired(expires: date | None, on: date) -> bool:
    """Whether an acceptance until ``expires`` no longer holds ``on`` that day: it holds until
    the day before ``expires``."""
    return expires is not None and on >= expires


def update_options(
    reason: str | None, expires: str | None, prune: bool, what: str
) -> tuple[date, date | None]:
    """Today and the parsed ``--expires`` of a command that accepts the current ``what``
    (``findings``, ``problems``) with ``--reason`` or removes stale entries with ``--prune``;
    a missing or contradictory option is a one-line UserError."""
    if reason is None and not prune:
        raise UserError(f"give --reason TEXT to accept the current {what}, or --prune")
    if expires is not None and reason is None:
        raise UserError("--expires dates the entries --reason adds: give --reason too")
    on = today()
    until = parse_date(expires, "--expires") if expires is not None else None
    if until is not None and until <= on:
        raise UserError(f"--expires {until}: not after today ({on})")
    check_reason(reason, what)
    return on, until


def check_reason(reason: str | None, what: str) -> None:
    """A ``--reason`` given must hold a word: else a one-line UserError."""
    if reason is not None and not has_words(reason):
        raise UserError(f"--reason: give the reason the {what} are accepted (in words)")


# --- the file ------------------------------------------------------------------------------


def dates_as_text(data: Any, path: Path) -> Any:
    """A ``load_config_toml`` precheck: TOML dates of ``[[accepted]]`` entries (``expires =
    2026-12-31``) as the text the schema checks; a date with a time of day becomes text that
    fails it, naming the key."""
    entries = data.get("accepted") if isinstance(data, dict) else None
    for entry in entries if isinstance(entries, list) else ():
        if isinstance(entry, dict):
            for key, value in entry.items():
                if isinstance(value, (date, time)):  # datetime is a date
                    entry[key] = value.isoformat()
    return data


_INVISIBLE = frozenset({"Cf", "Zl", "Zp"})


def toml_string(value: str) -> str:
    """``value`` as a TOML basic string."""
    out = ['"']
    for char in value:
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif code < 0x20 or code == 0x7F or unicodedata.category(char) in _INVISIBLE:
            # Control, format (bidi overrides, zero-width) and line-separator characters are
            # written escaped, so a reviewed baseline file reads as what it holds.
            out.append(f"\\u{code:04X}" if code <= 0xFFFF else f"\\U{code:08X}")
        elif 0xD800 <= code <= 0xDFFF:  # TOML has no lone surrogates; the pointer is a label
            out.append("\\uFFFD")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def write_accepted(path: Path, text: str) -> None:
    """Write a baseline file as ``wiregate codegen --out`` writes its output: atomically (a
    reader or an interrupted run never sees half a file), keeping the permission bits of the
    file it replaces (a new one: ``0666`` less the umask); a symbolic link, a read-only file
    or anything but a regular file is a one-line UserError and is left untouched."""
    why = refusal(path)
    if why is not None:
        raise UserError(f"{path}: cannot write: {why}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, text.encode("utf-8"))
    except OSError as exc:
        raise UserError(f"{path}: cannot write: {exc.strerror or exc}") from None


# --- updating it ---------------------------------------------------------------------------

E = TypeVar("E")


@dataclass(frozen=True)
class Update(Generic[E]):
    """What a ``baseline`` command does to the file."""

    path: Path
    entries: tuple[E, ...]  # the file's entries afterwards
    added: tuple[E, ...] = field(default_factory=tuple)
    pruned: tuple[E, ...] = field(default_factory=tuple)

    @property
    def kept(self) -> int:
        """Entries that were there and stay."""
        return len(self.entries) - len(self.added)

    @property
    def changed(self) -> bool:
        return bool(self.added or self.pruned)


def merge_entries(
    path: Path,
    existing: Sequence[E],
    current: Iterable[E],
    *,
    key: Callable[[E], Hashable],
    sort_key: Callable[[E], Any],
    stale: Collection[Hashable] = (),
) -> Update[E]:
    """``existing`` with each entry of ``current`` whose key it does not list yet added (the
    first of a key wins), and those whose key is in ``stale`` removed. Entries already listed
    are kept as they are: their reason and date do not change."""
    listed = {key(entry) for entry in existing}
    added: dict[Hashable, E] = {}
    for entry in current:
        k = key(entry)
        if k not in listed and k not in added:
            added[k] = entry
    kept = tuple(entry for entry in existing if key(entry) not in stale)
    pruned = tuple(entry for entry in existing if key(entry) in stale)
    return Update(
        path=path,
        entries=kept + tuple(added.values()),
        added=tuple(sorted(added.values(), key=sort_key)),
        pruned=pruned,
    )
