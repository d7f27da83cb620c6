"""``contracts/drift-baseline.toml``: drift findings a team has accepted, each with a reason
and optionally an expiry date, so the gate fails only on what is new.

A finding is matched by its fingerprint (:func:`fingerprint`): the rule id, the repository
and copy, the canonical and copy pointers, and the finding's arguments (the keyword values
at those pointers in each normalised document; a whole schema object counts as absent).
Line numbers and message wording are not part of it, so reformatting a copy or rewording a
message keeps the match; a change of the values makes a new finding. The file is validated
against ``contracts/drift-baseline.schema.json`` with the
same machinery as ``mirrors.toml``.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, time
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contracts import Contract
from wiregate.atomic import refusal, write_atomically
from wiregate.diff import Change
from wiregate.diff.fingerprint import DRIFT_SCHEME, change_fingerprints
from wiregate.drift.config import load_config_toml
from wiregate.errors import UserError
from wiregate.files import not_a_regular_file

if TYPE_CHECKING:
    from wiregate.drift.result import DriftReport

__all__ = [
    "BASELINE_FILE",
    "PRUNE_COMMAND",
    "TODAY_VARIABLE",
    "Baseline",
    "BaselineEntry",
    "BaselineUpdate",
    "finding_fingerprints",
    "load_baseline",
    "parse_date",
    "render_baseline",
    "today",
    "update_baseline",
    "write_baseline",
]

BASELINE_FILE = "drift-baseline.toml"
BASELINE_SCHEMA_FILE = "drift-baseline.schema.json"
#: The environment variable that sets "today" (YYYY-MM-DD) for expiry dates: tests, replays.
TODAY_VARIABLE = "WIREGATE_TODAY"
PRUNE_COMMAND = "wiregate drift baseline --prune"


@dataclass(frozen=True)
class BaselineEntry:
    """One accepted finding. ``rule`` and the pointers say what it is; ``fingerprint`` is
    what matches it."""

    repository: str
    copy: str
    rule: str
    canonical_pointer: str
    copy_pointer: str
    fingerprint: str
    reason: str
    expires: date | None = None
    where: str = ""  # its key in the file, "accepted[3]" (empty for an entry not yet written)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.repository, self.copy, self.fingerprint)

    def expired(self, on: date) -> bool:
        """Whether the acceptance no longer holds ``on`` that day: it holds until the day
        before ``expires``."""
        return self.expires is not None and on >= self.expires

    def sort_key(self) -> tuple[str, ...]:
        return (
            self.repository,
            self.copy,
            self.canonical_pointer,
            self.copy_pointer,
            self.rule,
            self.fingerprint,
        )


@dataclass(frozen=True)
class Baseline:
    """The accepted findings of one baseline file (none when the file does not exist)."""

    path: Path
    entries: tuple[BaselineEntry, ...] = ()

    @cached_property
    def _by_key(self) -> dict[tuple[str, str, str], BaselineEntry]:
        return {entry.key: entry for entry in self.entries}

    def find(self, repository: str, copy: str, fingerprint: str) -> BaselineEntry | None:
        return self._by_key.get((repository, copy, fingerprint))


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


# --- fingerprints --------------------------------------------------------------------------


def finding_fingerprints(
    changes: Sequence[Change],
    canonical: Mapping[str, Any],
    copy: Mapping[str, Any],
    repository: str,
    copy_id: str,
) -> tuple[str, ...]:
    """The fingerprint of each of ``changes`` (found between ``canonical`` and ``copy``), in
    order: the diff's change fingerprint scoped to the repository and the copy."""
    return change_fingerprints(
        changes, canonical, copy, scheme=DRIFT_SCHEME, scope=(repository, copy_id)
    )


# --- the file ------------------------------------------------------------------------------


def _as_text(data: Any, path: Path) -> Any:
    """TOML dates (``expires = 2026-12-31``) as the text the schema checks; a date with a time
    of day becomes text that fails it, naming the key."""
    entries = data.get("accepted") if isinstance(data, dict) else None
    for entry in entries if isinstance(entries, list) else ():
        if isinstance(entry, dict):
            for key, value in entry.items():
                if isinstance(value, (date, time)):  # datetime is a date
                    entry[key] = value.isoformat()
    return data


def load_baseline(
    contract: Contract, path: Path | None = None, *, must_exist: bool = False
) -> Baseline:
    """The baseline beside ``contract`` (or at ``path``), validated. A file that does not
    exist accepts nothing (``must_exist``: a file named by the user to read from must be
    there); every mistake in one that does is a one-line UserError."""
    problem = not_a_regular_file(path) if must_exist and path is not None else None
    if problem is not None:
        raise UserError(f"{path}: {problem}")
    path = path or contract.directory / BASELINE_FILE
    if not path.exists():
        return Baseline(path)
    data = load_config_toml(path, BASELINE_SCHEMA_FILE, _as_text)
    entries: list[BaselineEntry] = []
    seen: dict[tuple[str, str, str], str] = {}
    for index, raw in enumerate(data.get("accepted", [])):
        where = f"accepted[{index}]"
        expires = raw.get("expires")
        entry = BaselineEntry(
            repository=raw["repository"],
            copy=raw["copy"],
            rule=raw["rule"],
            canonical_pointer=raw["canonical_pointer"],
            copy_pointer=raw["copy_pointer"],
            fingerprint=raw["fingerprint"],
            reason=raw["reason"],
            expires=parse_date(expires, f"{path}: {where}.expires") if expires else None,
            where=where,
        )
        if not has_words(entry.reason):
            raise UserError(f"{path}: {where}.reason: holds no visible word")
        if entry.key in seen:
            raise UserError(
                f"{path}: {where}.fingerprint: {entry.fingerprint} is accepted twice for "
                f"{entry.repository} {entry.copy} (also {seen[entry.key]})"
            )
        seen[entry.key] = where
        entries.append(entry)
    return Baseline(path, tuple(entries))


_HEADER = """\
# Drift findings accepted for now: `wiregate drift` reports each one as accepted instead of
# failing on it, and fails on findings that are not listed here and on expired entries.
#
# Written by `wiregate drift baseline --reason TEXT [--expires YYYY-MM-DD]`, which adds every
# current finding not yet listed (entries already here keep their reason and date);
# `wiregate drift baseline --prune` removes the entries that no longer match a finding.
# Validated against contracts/drift-baseline.schema.json.
#
# Each [[accepted]] entry: the repository and copy (ids from mirrors.toml), the finding's rule
# id and pointers (in the canonical contract and in the copy), its fingerprint (what matches
# it; see docs/drift-report.md), why it is accepted (reason) and optionally the date from
# which it fails the gate again (expires). The command rewrites this file: keep the "why" in
# each entry's reason, not in comments.
version = 1
"""


_INVISIBLE = frozenset({"Cf", "Zl", "Zp"})


def _toml_string(value: str) -> str:
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


def render_baseline(entries: Iterable[BaselineEntry]) -> str:
    """The file's text: a header, then the entries in a stable order."""
    lines = [_HEADER.rstrip("\n")]
    for entry in sorted(entries, key=BaselineEntry.sort_key):
        lines += [
            "",
            "[[accepted]]",
            f"repository = {_toml_string(entry.repository)}",
            f"copy = {_toml_string(entry.copy)}",
            f"rule = {_toml_string(entry.rule)}",
            f"canonical_pointer = {_toml_string(entry.canonical_pointer)}",
            f"copy_pointer = {_toml_string(entry.copy_pointer)}",
            f"fingerprint = {_toml_string(entry.fingerprint)}",
            f"reason = {_toml_string(entry.reason)}",
        ]
        if entry.expires is not None:
            lines.append(f"expires = {entry.expires.isoformat()}")
    return "\n".join(lines) + "\n"


def write_baseline(path: Path, entries: Iterable[BaselineEntry]) -> None:
    """Write the file as ``wiregate codegen --out`` writes its output: atomically (a reader or
    an interrupted run never sees half a file), keeping the permission bits of the file it
    replaces (a new one: ``0666`` less the umask); a symbolic link, a read-only file or
    anything but a regular file is a one-line UserError and is left untouched."""
    why = refusal(path)
    if why is not None:
        raise UserError(f"{path}: cannot write: {why}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, render_baseline(entries).encode("utf-8"))
    except OSError as exc:
        raise UserError(f"{path}: cannot write: {exc.strerror or exc}") from None


# --- updating it ---------------------------------------------------------------------------


@dataclass(frozen=True)
class BaselineUpdate:
    """What ``wiregate drift baseline`` does to the file."""

    path: Path
    entries: tuple[BaselineEntry, ...]  # the file's entries afterwards
    added: tuple[BaselineEntry, ...] = field(default_factory=tuple)
    pruned: tuple[BaselineEntry, ...] = field(default_factory=tuple)

    @property
    def kept(self) -> int:
        """Entries that were there and stay."""
        return len(self.entries) - len(self.added)

    @property
    def changed(self) -> bool:
        return bool(self.added or self.pruned)


def update_baseline(
    baseline: Baseline,
    report: DriftReport,
    *,
    reason: str | None,
    expires: date | None = None,
    prune: bool = False,
) -> BaselineUpdate:
    """Accept every finding of ``report`` that the baseline does not list yet (when a
    ``reason`` is given) and, with ``prune``, drop the entries the report found stale.
    Entries already listed are kept as they are: their reason and date do not change."""
    if reason is not None and not has_words(reason):
        raise UserError("--reason: give the reason the findings are accepted (in words)")
    existing = {entry.key for entry in baseline.entries}
    added: dict[tuple[str, str, str], BaselineEntry] = {}
    if reason is not None:
        for result in report.results:
            for change, triage in result.findings:
                if triage is None:
                    continue
                key = (result.repository, result.copy_id, triage.fingerprint)
                if key in existing or key in added:
                    continue
                added[key] = BaselineEntry(
                    repository=result.repository,
                    copy=result.copy_id,
                    rule=change.id,
                    canonical_pointer=change.old_pointer,
                    copy_pointer=change.new_pointer,
                    fingerprint=triage.fingerprint,
                    reason=reason.strip(),
                    expires=expires,
                )
    stale = {entry.key for entry in report.stale} if prune else set()
    kept = tuple(entry for entry in baseline.entries if entry.key not in stale)
    pruned = tuple(entry for entry in baseline.entries if entry.key in stale)
    return BaselineUpdate(
        path=baseline.path,
        entries=kept + tuple(added.values()),
        added=tuple(sorted(added.values(), key=BaselineEntry.sort_key)),
        pruned=pruned,
    )
