"""``contracts/drift-baseline.toml``: drift findings a team has accepted, each with a reason
and optionally an expiry date, so the gate fails only on what is new.

A finding is matched by its fingerprint (:func:`fingerprint`): the rule id, the repository
and copy, the canonical and copy pointers, and the finding's arguments (the keyword values
at those pointers in each normalised document; a whole schema object counts as absent).
Line numbers and message wording are not part of it, so reformatting a copy or rewording a
message keeps the match; a change of the values makes a new finding. The file is validated
against ``contracts/drift-baseline.schema.json`` with the
same machinery as ``mirrors.toml``; dates, writing and updating are
``wiregate.acceptance``'s, shared with the validate baseline.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contracts import Contract
from wiregate.acceptance import (
    TODAY_VARIABLE,
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
from wiregate.diff import Change
from wiregate.diff.fingerprint import DRIFT_SCHEME, change_fingerprints
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
        return expired(self.expires, on)

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
    data = load_config_toml(path, BASELINE_SCHEMA_FILE, dates_as_text)
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


def render_baseline(entries: Iterable[BaselineEntry]) -> str:
    """The file's text: a header, then the entries in a stable order."""
    lines = [_HEADER.rstrip("\n")]
    for entry in sorted(entries, key=BaselineEntry.sort_key):
        lines += [
            "",
            "[[accepted]]",
            f"repository = {toml_string(entry.repository)}",
            f"copy = {toml_string(entry.copy)}",
            f"rule = {toml_string(entry.rule)}",
            f"canonical_pointer = {toml_string(entry.canonical_pointer)}",
            f"copy_pointer = {toml_string(entry.copy_pointer)}",
            f"fingerprint = {toml_string(entry.fingerprint)}",
            f"reason = {toml_string(entry.reason)}",
        ]
        if entry.expires is not None:
            lines.append(f"expires = {entry.expires.isoformat()}")
    return "\n".join(lines) + "\n"


def write_baseline(path: Path, entries: Iterable[BaselineEntry]) -> None:
    """Write the file as ``wiregate codegen --out`` writes its output: atomically (a reader or
    an interrupted run never sees half a file), keeping the permission bits of the file it
    replaces (a new one: ``0666`` less the umask); a symbolic link, a read-only file or
    anything but a regular file is a one-line UserError and is left untouched."""
    write_accepted(path, render_baseline(entries))


# --- updating it ---------------------------------------------------------------------------


#: What ``wiregate drift baseline`` does to the file.
BaselineUpdate = Update[BaselineEntry]


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
    check_reason(reason, "findings")
    current = []
    if reason is not None:
        for result in report.results:
            for change, triage in result.findings:
                if triage is None:
                    continue
                current.append(
                    BaselineEntry(
                        repository=result.repository,
                        copy=result.copy_id,
                        rule=change.id,
                        canonical_pointer=change.old_pointer,
                        copy_pointer=change.new_pointer,
                        fingerprint=triage.fingerprint,
                        reason=reason.strip(),
                        expires=expires,
                    )
                )
    return merge_entries(
        baseline.path,
        baseline.entries,
        current,
        key=lambda entry: entry.key,
        sort_key=BaselineEntry.sort_key,
        stale={entry.key for entry in report.stale} if prune else (),
    )
