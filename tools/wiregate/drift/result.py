"""Drift results as plain data: one verdict per configured copy, and the report around them."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property
from pathlib import Path

from wiregate.diff import Change
from wiregate.drift.baseline import BaselineEntry
from wiregate.drift.findings import DriftFinding, RootEntry, group_by_root

__all__ = [
    "BREAKS",
    "FIRST_VISIBLE",
    "CopyResult",
    "DriftReport",
    "HistoryEntry",
    "HistoryReport",
    "Triage",
    "Verdict",
    "is_breaking",
]


class Verdict(str, Enum):
    """What a copy is, compared with the canonical contract. The values are stable (JSON)."""

    IDENTICAL = "identical"  # no difference at all after normalisation
    EQUIVALENT = "equivalent"  # same records accepted: annotations, defaults, unused $defs differ
    COMPATIBLE = "compatible-drift"  # differs, but passes the direction its role requires
    BREAKING = "breaking-drift"  # fails the direction its role requires
    NOT_FOUND = "not-found"  # the checkout is there, none of the copy's paths is
    SKIPPED = "skipped"  # the checkout is absent
    DELETED = "deleted"  # history only: the revision removed the copy
    RENAMED_AWAY = "renamed-away"  # history only: the revision moved it off the configured paths
    ERROR = "error"  # the copy or its repository cannot be read

    @property
    def drifted(self) -> bool:
        return self in (Verdict.COMPATIBLE, Verdict.BREAKING)


#: What breaks, by (role, required direction that fails).
BREAKS = {
    ("producer", "forward"): "the producer writes records the canonical contract rejects",
    ("consumer", "backward"): "the consumer rejects records the canonical contract allows",
    ("mirror", "forward"): "the mirror accepts records the canonical contract rejects: "
    "producers that follow it break the contract's consumers",
    ("mirror", "backward"): "the mirror rejects records the canonical contract allows: "
    "consumers that follow it break on the contract's producers",
}


def is_breaking(change: Change, failed: tuple[str, ...]) -> bool:
    """Whether ``change`` is incompatible in one of the ``failed`` required directions."""
    return ("forward" in failed and not change.forward) or (
        "backward" in failed and not change.backward
    )


@dataclass(frozen=True)
class Triage:
    """What the gate makes of one finding beyond its verdict: its fingerprint, the baseline
    entry that accepts it, and whether it was already there at ``--new-since REF``."""

    fingerprint: str
    accepted: BaselineEntry | None = None  # the matching entry, expired or not
    expired: bool = False  # the entry's date has come: it accepts the finding no more
    old: bool = False  # present at the --new-since ref

    @property
    def waived(self) -> bool:
        """Whether the finding does not fail the gate: accepted (and not expired), or already
        there at the --new-since ref."""
        return self.old or (self.accepted is not None and not self.expired)


@dataclass(frozen=True)
class CopyResult:
    """The verdict on one copy in one repository."""

    repository: str
    checkout: str
    copy_id: str
    role: str
    direction: str  # the diff mode the role requires: forward, backward or full
    policy: str  # the diff policy: strict or lenient
    schema: str  # canonical schema name
    canonical_at: str
    copy_at: str
    verdict: Verdict
    tried: tuple[str, ...] = ()  # candidate paths, in order
    path: str | None = None  # the path that was read, relative to the checkout
    commit: str | None = None  # the commit it was read at (with --ref)
    changes: tuple[Change, ...] = ()
    failed: tuple[str, ...] = ()  # required directions that fail: "forward" and/or "backward"
    message: str | None = None  # why it was skipped, not found or unreadable
    reproduce: str | None = None  # the `wiregate diff` command that gives the same changes
    optional: bool = False  # mirrors.toml allows it to be absent
    kind: str = "schema"  # schema, typescript, python or generated
    declared: str | None = None  # a code copy's TypeScript type or Python MODULE:CLASS
    triage: tuple[Triage, ...] = ()  # one per change, in the same order
    new_since_commit: str | None = None  # the commit --new-since compared with, if any
    # Each change judged for the copy's role and placed in both files (same order as changes).
    judged: tuple[DriftFinding, ...] = ()
    contract_file: str | None = None  # the canonical schema, relative to the contract's repo
    # A copy that cannot be read (verdict error): its file relative to the checkout (None when
    # no file was reached) and, when the load error knows them, the line and column.
    error_file: str | None = None
    error_line: int | None = None
    error_column: int | None = None

    @property
    def triaged(self) -> tuple[tuple[Change, Triage | None], ...]:
        """Every change with its triage (None for a result built without one)."""
        triage: list[Triage | None] = [*self.triage]
        triage += [None] * (len(self.changes) - len(triage))
        return tuple(zip(self.changes, triage, strict=True))

    @property
    def findings(self) -> tuple[tuple[Change, Triage | None], ...]:
        """The changes that are findings (every level but info), with their triage."""
        return tuple((c, t) for c, t in self.triaged if c.level != "info")

    @property
    def blocking(self) -> tuple[Change, ...]:
        """The breaking changes that fail the gate: neither accepted nor already there at the
        --new-since ref (an expired acceptance accepts nothing)."""
        return tuple(
            c
            for c, t in self.triaged
            if is_breaking(c, self.failed) and not (t is not None and t.waived)
        )

    def count(self, what: str) -> int:
        """How many findings are ``accepted``, ``expired`` (accepted until a day that has
        come), ``old`` (present at the --new-since ref) or ``new`` (none of these)."""

        def test(t: Triage) -> bool:
            if what == "accepted":
                return t.accepted is not None and not t.expired and not t.old
            if what == "expired":
                return t.expired and not t.old
            if what == "old":
                return t.old
            return t.accepted is None and not t.old  # new: neither accepted nor old

        return sum(1 for _, t in self.findings if t is not None and test(t))

    def _judged_findings(self, waived: bool) -> list[DriftFinding]:
        """The judged findings (not info) that are waived, or that are not."""
        triage: list[Triage | None] = [*self.triage]
        triage += [None] * (len(self.judged) - len(triage))
        return [
            f
            for f, t in zip(self.judged, triage, strict=True)
            if f.change.level != "info" and (t is not None and t.waived) == waived
        ]

    @property
    def entries(self) -> tuple[RootEntry, ...]:
        """The findings that are not waived (accepted, or already there at --new-since), one
        entry per root change: what the reports show and annotate."""
        return group_by_root(self._judged_findings(waived=False))

    @property
    def waived_entries(self) -> tuple[RootEntry, ...]:
        """The waived findings, one entry per root change (shown with --verbose)."""
        return group_by_root(self._judged_findings(waived=True))

    @cached_property
    def _triage_by_finding(self) -> dict[int, Triage | None]:
        return {
            id(judged): triage
            for judged, (_, triage) in zip(self.judged, self.triaged, strict=False)
        }

    def triage_of(self, finding: DriftFinding) -> Triage | None:
        """The triage of one of ``judged`` (looked up, not searched: the text report asks once
        per root change, and a copy may have thousands)."""
        return self._triage_by_finding.get(id(finding))

    @property
    def fails(self) -> bool:
        """Whether this copy fails the gate without --strict: breaking drift with a breaking
        finding that is not waived (accepted, or already there at --new-since), or a copy that
        is not found in a checkout that is present (unless it is optional)."""
        return (self.verdict is Verdict.BREAKING and bool(self.blocking)) or (
            self.verdict is Verdict.NOT_FOUND and not self.optional
        )

    @property
    def fails_strict(self) -> bool:
        """Whether it fails with --strict: also any drift with a finding not waived, and a copy
        skipped or not found (even optional)."""
        if self.fails or self.verdict in (Verdict.SKIPPED, Verdict.NOT_FOUND):
            return True
        return self.verdict.drifted and any(t is None or not t.waived for _, t in self.findings)

    @property
    def breaks(self) -> tuple[str, ...]:
        """Plain-language statements of which side breaks."""
        if self.kind == "generated" and self.failed:
            command = f"wiregate codegen --target {self.declared}"
            return (f"the generated file is not what `{command}` writes from the contract",)
        return tuple(BREAKS[self.role, direction] for direction in self.failed)


@dataclass(frozen=True)
class DriftReport:
    results: tuple[CopyResult, ...]
    ref: str | None = None
    strict: bool = False
    new_since: str | None = None  # --new-since REF
    baseline: Path | None = None  # the baseline file consulted (None: none was)
    # Baseline entries that match no current finding of a copy that was judged (or name a
    # copy mirrors.toml does not have): `wiregate drift baseline --prune` removes them.
    stale: tuple[BaselineEntry, ...] = ()
    # The folder contract files (``CopyResult.contract_file``) are relative to.
    contract_root: str | None = None

    @property
    def expired(self) -> tuple[BaselineEntry, ...]:
        """Baseline entries whose date has come while their finding is still there."""
        found = {
            t.accepted.key: t.accepted
            for r in self.results
            for _, t in r.findings
            if t is not None and t.accepted is not None and t.expired and not t.old
        }
        return tuple(found.values())

    def fails(self, result: CopyResult) -> bool:
        """Whether ``result`` fails this gate: ``fails_strict`` with --strict, else ``fails``."""
        return result.fails_strict if self.strict else result.fails

    def annotation_level(self, result: CopyResult, breaking: bool = True) -> str:
        """The workflow level of what is reported about ``result``: ``error`` when it fails
        the gate (a breaking finding, a missing copy; with strict, any drift or absence),
        else ``warning``."""
        if result.verdict is Verdict.ERROR:
            return "error"
        if result.verdict in (Verdict.SKIPPED, Verdict.NOT_FOUND):
            return "error" if self.strict or result.fails else "warning"
        return "error" if (breaking and result.fails) or self.strict else "warning"

    @property
    def judged_nothing(self) -> bool:
        """Every copy was skipped (no checkout present): nothing was judged."""
        return bool(self.results) and all(r.verdict is Verdict.SKIPPED for r in self.results)

    @property
    def errors(self) -> tuple[CopyResult, ...]:
        return tuple(r for r in self.results if r.verdict is Verdict.ERROR)

    def count(self, verdict: Verdict) -> int:
        return sum(1 for r in self.results if r.verdict is verdict)

    @property
    def exit_code(self) -> int:
        """2 a copy cannot be read; 1 breaking drift with a finding that is neither accepted
        nor (with --new-since) already there, or a copy not found in a checkout that is
        present, unless optional (with strict: any drift with such a finding, or a copy that
        was skipped or not found); 0 otherwise."""
        if any(r.verdict is Verdict.ERROR for r in self.results):
            return 2
        if any(self.fails(r) for r in self.results):
            return 1
        return 0


#: The status of a revision at a shallow clone's boundary: git shows the copy "added" there
#: because the commits before it are missing, not because it was added.
FIRST_VISIBLE = "first-visible"


@dataclass(frozen=True)
class HistoryEntry:
    """One revision of a copy: its verdict against the canonical contract and what changed
    since the previous revision."""

    commit: str
    date: str
    subject: str
    status: str  # added, modified, renamed, deleted, ..., or FIRST_VISIBLE
    path: str  # relative to the repository root
    old_path: str | None
    verdict: Verdict
    changes: tuple[Change, ...] = ()  # against the canonical contract
    failed: tuple[str, ...] = ()
    previous: str | None = None  # the revision compared with: the last readable one before
    since_previous: tuple[Change, ...] = ()  # against ``previous``
    previous_failed: tuple[str, ...] = ()  # directions the step from ``previous`` broke
    message: str | None = None  # why the revision cannot be judged (invalid JSON ...)


@dataclass(frozen=True)
class HistoryReport:
    repository: str
    checkout: str
    copy_id: str
    role: str
    direction: str
    policy: str
    schema: str
    canonical_at: str
    ref: str
    entries: tuple[HistoryEntry, ...] = field(default_factory=tuple)  # newest first
    kind: str = "schema"
    declared: str | None = None

    @property
    def current(self) -> HistoryEntry | None:
        return self.entries[0] if self.entries else None

    @property
    def cut(self) -> HistoryEntry | None:
        """The newest revision at which a shallow clone cuts the history: what came before it
        is not available. None when the history is complete."""
        return next((e for e in self.entries if e.status == FIRST_VISIBLE), None)

    @property
    def judged(self) -> HistoryEntry | None:
        """The newest revision that could be read and judged."""
        return next((e for e in self.entries if e.verdict is not Verdict.ERROR), None)

    def _run(self) -> list[HistoryEntry]:
        """The newest unbroken run of revisions sharing the newest judged verdict, newest
        first, with the unreadable revisions inside it (they neither end nor start a run)."""
        judged = self.judged
        if judged is None:
            return []
        run: list[HistoryEntry] = []
        for entry in self.entries:
            if entry.verdict is Verdict.ERROR:
                run.append(entry)
                continue
            if entry.verdict is not judged.verdict:
                break
            run.append(entry)
            if entry.status == FIRST_VISIBLE:
                break
        while run and run[-1].verdict is Verdict.ERROR:
            run.pop()  # unreadable revisions before the run's first commit are not in it
        return run

    @property
    def since(self) -> HistoryEntry | None:
        """The first commit of the newest unbroken run of revisions sharing the current
        verdict: "breaking since commit X". Unreadable revisions are skipped: they never end
        a run. None when nothing could be judged, or when the run reaches the shallow-clone
        cut: the verdict may have started before it, so nothing is claimed."""
        run = self._run()
        if not run:
            return None
        oldest = run[-1]
        return None if oldest.status == FIRST_VISIBLE else oldest

    @property
    def unreadable_in_run(self) -> tuple[HistoryEntry, ...]:
        """The unreadable revisions skipped inside the current run (newest first)."""
        return tuple(e for e in self._run() if e.verdict is Verdict.ERROR)
