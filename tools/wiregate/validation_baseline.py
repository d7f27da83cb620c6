"""``wiregate validate --baseline FILE``: contract violations of record files a team has
accepted for now, each with a reason and optionally an expiry date, so a hook or a CI job
fails only on what is new.

A problem is matched by its record file (relative to the baseline's directory) and its
**fingerprint** (:func:`problem_key`): a hash of the record type it was judged as, a content hash of
the record (its canonical JSON: keys sorted, no whitespace, ``1.0`` as ``1``), the JSON
pointer of the problem inside the record, the keyword it breaks (``enum``, ``required``, ...)
and the canonical JSON of the offending value (the value at the pointer; a missing property
counts as absent). Line numbers, the record's place in its file and the message's wording are
not in it: reformatting a file, reordering its keys, moving or reordering its records keep the
match; any change of the record (its offending value included) makes its problems new. An
entry whose file is gone matches its fingerprint in any file: the file was moved, and
``update_validation_baseline`` writes the new path, reason and date kept.
The file is validated against ``contracts/validate-baseline.schema.json`` with the machinery
of ``mirrors.toml`` and the drift baseline (``wiregate.configfile``, ``wiregate.acceptance``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from wiregate.acceptance import (
    Update,
    check_reason,
    dates_as_text,
    expired,
    has_words,
    merge_entries,
    parse_date,
    today,
    toml_string,
    write_accepted,
)
from wiregate.configfile import load_config_toml
from wiregate.errors import UserError
from wiregate.files import not_a_regular_file
from wiregate.pointer import PointerError, resolve

if TYPE_CHECKING:
    from wiregate.validation import ValidationReport

__all__ = [
    "PRUNE_COMMAND",
    "AcceptedProblem",
    "ProblemKey",
    "ValidationBaseline",
    "load_validation_baseline",
    "problem_key",
    "prune_command",
    "render_validation_baseline",
    "update_validation_baseline",
    "write_validation_baseline",
]

BASELINE_SCHEMA_FILE = "validate-baseline.schema.json"
#: Part of every fingerprint: bumped if what goes into one ever changes.
SCHEME = "wiregate-validate-problem/2"
PRUNE_COMMAND = "wiregate validate baseline --prune"
_VALUE_CHARS = 60


@dataclass(frozen=True)
class ProblemKey:
    """What the baseline matches a problem by (``fingerprint``, in ``file``), with the labels
    an entry shows beside it."""

    file: str
    record_type: str | None
    pointer: str  # inside the record
    rule: str
    value: str  # the offending value, shortened: a label
    fingerprint: str


@dataclass(frozen=True)
class AcceptedProblem:
    """One accepted problem: ``file`` and ``fingerprint`` match it, the rest says what it is."""

    file: str
    record_type: str | None
    pointer: str
    rule: str
    value: str
    fingerprint: str
    reason: str
    expires: date | None = None
    where: str = ""  # its key in the file, "accepted[3]" (empty for an entry not yet written)

    @property
    def key(self) -> tuple[str, str]:
        return (self.file, self.fingerprint)

    def expired(self, on: date) -> bool:
        return expired(self.expires, on)

    def sort_key(self) -> tuple[str, ...]:
        return (
            self.file,
            self.pointer,
            self.rule,
            self.record_type or "",
            self.value,
            self.fingerprint,
        )


@dataclass(frozen=True)
class ValidationBaseline:
    """The accepted problems of one baseline file (none when it does not exist yet), judged
    on the day ``on``."""

    path: Path
    entries: tuple[AcceptedProblem, ...] = ()
    on: date = date.min

    @cached_property
    def _by_key(self) -> dict[tuple[str, str], AcceptedProblem]:
        return {entry.key: entry for entry in self.entries}

    @cached_property
    def _moved_away(self) -> dict[str, list[AcceptedProblem]]:
        """Fingerprint -> the entries, of entries whose file is gone: the record file was moved
        (or renamed), and its problems are found under the new path."""
        gone: dict[str, list[AcceptedProblem]] = {}
        for entry in self.entries:
            if self.gone(entry.file):
                gone.setdefault(entry.fingerprint, []).append(entry)
        return gone

    def find(self, key: ProblemKey) -> AcceptedProblem | None:
        """The entry that accepts the problem: the one of its file, else one whose file is gone
        that names the same problem (the same record, pointer, rule and value): the file was
        moved. Its ``file`` then differs from the key's. When the same problem was accepted in
        several files now gone, the one of the same file name is taken, and if that does not
        tell them apart, none (which reason holds is not known). Standard input is no file a
        file was moved to: its problems are accepted by its own entries only."""
        found = self._by_key.get((key.file, key.fingerprint))
        if found is not None or key.file == "-":
            return found
        candidates = self._moved_away.get(key.fingerprint, [])
        if len(candidates) > 1:
            name = key.file.rsplit("/", 1)[-1]
            candidates = [e for e in candidates if e.file.rsplit("/", 1)[-1] == name]
        return candidates[0] if len(candidates) == 1 else None

    def file_key(self, path: str) -> str:
        """``path`` (as given on the command line) relative to the baseline's directory,
        with ``/`` between folders: how the baseline names a record file."""
        if path == "-":
            return path
        relative = os.path.relpath(os.path.abspath(path), os.path.abspath(self.path.parent))
        return relative.replace(os.sep, "/")

    def file_path(self, file: str) -> str:
        """The path of a file the baseline names, as the command line would give it."""
        return file if file == "-" else os.path.normpath(self.path.parent / file)

    def gone(self, file: str) -> bool:
        """Whether a file the baseline names no longer exists (standard input never is)."""
        return file != "-" and not os.path.lexists(self.file_path(file))

    def files_present(self) -> list[str]:
        """The regular files the entries name that exist, in order: what is read when no
        file is given (a FIFO an entry names would wait for a writer, a device never end)."""
        files = dict.fromkeys(entry.file for entry in self.entries if entry.file != "-")
        return [path for path in map(self.file_path, files) if os.path.isfile(path)]

    def stale(
        self, matched: Iterable[tuple[str, str]], judged: Iterable[str]
    ) -> tuple[AcceptedProblem, ...]:
        """Entries that match no problem of a file read whole in this run (``judged``), or
        name a file that does not exist; entries of other files are left alone."""
        found, read = set(matched), set(judged)
        return tuple(
            entry
            for entry in self.entries
            if entry.key not in found and (entry.file in read or self.gone(entry.file))
        )


# --- fingerprints --------------------------------------------------------------------------


def _scalar(value: Any) -> bytes:
    if value is None or isinstance(value, bool):
        return json.dumps(value).encode("ascii")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=True).encode("ascii")
    return str(value).encode("ascii") if isinstance(value, int) else repr(value).encode("ascii")


def canonical_digest(value: Any) -> str:
    """sha256 of ``value``'s canonical JSON (keys sorted, no whitespace, an integral number
    as an integer), computed without recursion: a record may be nested 1,024 levels deep."""
    digest = hashlib.sha256()
    pending: list[tuple[bool, Any]] = [(False, value)]  # (is literal text, item)
    while pending:
        literal, node = pending.pop()
        if literal:
            digest.update(node)
            continue
        if isinstance(node, dict):
            parts: list[tuple[bool, Any]] = [(True, b"{")]
            for index, name in enumerate(sorted(node)):
                parts += [
                    (True, (b"," if index else b"") + _scalar(name) + b":"),
                    (False, node[name]),
                ]
            parts.append((True, b"}"))
        elif isinstance(node, list):
            parts = [(True, b"[")]
            for index, item in enumerate(node):
                parts += [(True, b",")] if index else []
                parts.append((False, item))
            parts.append((True, b"]"))
        else:
            digest.update(_scalar(node))
            continue
        pending.extend(reversed(parts))
    return digest.hexdigest()


_ABSENT = "(absent)"


def _value_label(value: Any) -> str:
    try:
        text = orjson.dumps(value).decode()
    except (orjson.JSONEncodeError, TypeError):  # nested beyond orjson's 254 levels
        return "(nested too deep to show)"
    return text if len(text) <= _VALUE_CHARS else text[: _VALUE_CHARS - 3] + "..."


def problem_key(
    file: str, record_type: str | None, record: Any, pointer: str, rule: str
) -> ProblemKey:
    """The key of a problem at ``pointer`` (inside ``record``, ``/`` for the record itself)
    breaking ``rule``, in the record file the baseline calls ``file``."""
    try:
        value: Any = record if pointer == "/" else resolve(record, pointer)
        present = True
    except PointerError:  # a missing property
        value, present = None, False
    text = json.dumps(
        [
            SCHEME,
            record_type or "",
            canonical_digest(record),
            pointer,
            rule,
            canonical_digest(value) if present else None,
        ],
        ensure_ascii=True,
    )
    return ProblemKey(
        file=file,
        record_type=record_type,
        pointer=pointer,
        rule=rule,
        value=_value_label(value) if present else _ABSENT,
        fingerprint=hashlib.sha256(text.encode("ascii")).hexdigest()[:16],
    )


def prune_command(baseline: Path, record: str, files: Sequence[str]) -> str:
    """The command that removes the stale entries of ``files`` (and of files gone)."""
    words = [PRUNE_COMMAND, "--baseline", shlex.quote(str(baseline))]
    if record != "auto":
        words += ["--record", shlex.quote(record)]
    return " ".join(words + [shlex.quote(path) for path in files])


# --- the file ------------------------------------------------------------------------------


def load_validation_baseline(
    path: Path, *, must_exist: bool = False, environ: Mapping[str, str] | None = None
) -> ValidationBaseline:
    """The baseline at ``path``, validated, judged today (``WIREGATE_TODAY``). A file that does
    not exist accepts nothing, unless ``must_exist`` (a file named to be read from); every
    mistake in one that does is a one-line UserError naming the key."""
    on = today(environ)
    problem = not_a_regular_file(path) if must_exist else None
    if problem is not None:
        raise UserError(f"{path}: {problem}")
    if not path.exists():
        return ValidationBaseline(path, on=on)
    data = load_config_toml(path, BASELINE_SCHEMA_FILE, dates_as_text)
    entries: list[AcceptedProblem] = []
    seen: dict[tuple[str, str], str] = {}
    for index, raw in enumerate(data.get("accepted", [])):
        where = f"accepted[{index}]"
        expires = raw.get("expires")
        entry = AcceptedProblem(
            file=raw["file"],
            record_type=raw.get("record_type"),
            pointer=raw["pointer"],
            rule=raw["rule"],
            value=raw.get("value", ""),
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
                f"{entry.file} (also {seen[entry.key]})"
            )
        seen[entry.key] = where
        entries.append(entry)
    return ValidationBaseline(path, tuple(entries), on)


_HEADER = """\
# Contract violations of record files accepted for now: `wiregate validate --baseline FILE`
# reports each one as accepted instead of failing on it, and fails on violations that are not
# listed here and on expired entries.
#
# Written by `wiregate validate baseline --baseline FILE --reason TEXT [--expires YYYY-MM-DD]
# FILE...`, which adds every current violation of those files not yet listed (entries already
# here keep their reason and date); `wiregate validate baseline --prune --baseline FILE`
# removes the entries that no longer match a violation.
# Validated against contracts/validate-baseline.schema.json of wiregate.
#
# Each [[accepted]] entry: the record file (relative to this file's folder), the record type,
# the JSON pointer inside the record, the JSON Schema keyword broken (rule), the offending
# value (shortened, for reading), its fingerprint (what matches it, with the file: a hash of
# the record's content, the pointer, the rule and the value), why it is accepted (reason) and
# optionally the date from which it fails again (expires). The command rewrites this file:
# keep the "why" in each entry's reason, not in comments.
version = 1
"""


def render_validation_baseline(entries: Iterable[AcceptedProblem]) -> str:
    """The file's text: a header, then the entries in a stable order."""
    lines = [_HEADER.rstrip("\n")]
    for entry in sorted(entries, key=AcceptedProblem.sort_key):
        lines += ["", "[[accepted]]", f"file = {toml_string(entry.file)}"]
        if entry.record_type is not None:
            lines.append(f"record_type = {toml_string(entry.record_type)}")
        lines += [
            f"pointer = {toml_string(entry.pointer)}",
            f"rule = {toml_string(entry.rule)}",
            f"value = {toml_string(entry.value)}",
            f"fingerprint = {toml_string(entry.fingerprint)}",
            f"reason = {toml_string(entry.reason)}",
        ]
        if entry.expires is not None:
            lines.append(f"expires = {entry.expires.isoformat()}")
    return "\n".join(lines) + "\n"


def write_validation_baseline(path: Path, entries: Iterable[AcceptedProblem]) -> None:
    """Atomically, as the drift baseline is written (a symbolic link or a read-only file is
    refused, left untouched)."""
    write_accepted(path, render_validation_baseline(entries))


def update_validation_baseline(
    baseline: ValidationBaseline,
    report: ValidationReport,
    *,
    reason: str | None,
    expires: date | None = None,
    prune: bool = False,
) -> Update[AcceptedProblem]:
    """Accept every problem of ``report`` (which kept its problems) that the baseline does not
    list yet, when a ``reason`` is given, and with ``prune`` drop the entries the report found
    stale. Entries already listed are kept as they are."""
    check_reason(reason, "problems")
    # The entries of a moved file first, under the new path (their reason and date kept), then
    # with a reason the problems no entry lists: the first of a key wins.
    current: list[AcceptedProblem] = []
    moved: set[tuple[str, str]] = set()  # the old keys of entries whose file was moved
    for problem in report.problems:
        entry, key = problem.accepted, problem.key
        if entry is not None and key is not None and entry.file != key.file:
            current.append(replace(entry, file=key.file, where=""))
            moved.add(entry.key)
    for key in (p.key for p in report.problems if p.key is not None and reason is not None):
        if not _is_utf8(key.file):  # its entry would name another file: it never matches
            raise UserError(
                f"{key.file.encode('utf-8', 'surrogateescape')!r}: a file name that is not "
                "UTF-8 cannot be named in the baseline (TOML holds text): rename the file"
            )
        current.append(
            AcceptedProblem(
                file=key.file,
                record_type=key.record_type,
                pointer=key.pointer,
                rule=key.rule,
                value=key.value,
                fingerprint=key.fingerprint,
                reason=str(reason).strip(),
                expires=expires,
            )
        )
    return merge_entries(
        baseline.path,
        baseline.entries,
        current,
        key=lambda entry: entry.key,
        sort_key=AcceptedProblem.sort_key,
        stale=({entry.key for entry in report.stale} if prune else set()) | moved,
    )


def _is_utf8(name: str) -> bool:
    """Whether a file name (bytes that are not UTF-8 are lone surrogates in it) is text."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
