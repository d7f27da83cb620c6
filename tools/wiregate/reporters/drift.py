"""Reporters for ``wiregate drift``, ``drift history`` and ``drift --discover``.

Per-change formatting is the diff command's (``wiregate.reporters.diff``); this module only
adds what drift knows on top: the repository, the copy, its role and the verdict.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from wiregate.diff import Change
from wiregate.drift.baseline import PRUNE_COMMAND, BaselineEntry
from wiregate.drift.discovery import PROPOSE_THRESHOLD, RepositoryCandidates
from wiregate.drift.findings import DriftFinding, Location, RootEntry
from wiregate.drift.generated import STALE_RULE
from wiregate.drift.result import (
    FIRST_VISIBLE,
    CopyResult,
    DriftReport,
    HistoryEntry,
    HistoryReport,
    Triage,
    Verdict,
    is_breaking,
)
from wiregate.exactjson import dumps
from wiregate.reporters.diff import (
    change_to_json,
    change_to_text,
    markdown_cell,
    markdown_code,
    witness_line,
)
from wiregate.reporters.github import workflow_command
from wiregate.reporters.junit import JUnitCase, render_junit
from wiregate.reporters.sarif import SarifBase, SarifLocation, SarifResult, render_sarif
from wiregate.textlines import render_lines

__all__ = [
    "DISCOVERY_REPORTERS",
    "DRIFT_REPORTERS",
    "HISTORY_REPORTERS",
    "REPORT_VERSION",
    "shallow_warning",
]

#: Bumped only when a field of the JSON reports changes meaning or disappears.
REPORT_VERSION = 1

# Verdicts of a revision in a copy's history, never of a copy in the gate.
HISTORY_ONLY = frozenset({Verdict.DELETED, Verdict.RENAMED_AWAY})

_REQUIRED = {
    "forward": "must be forward compatible",
    "backward": "must be backward compatible",
    "full": "must be fully compatible",
}


def _dumps(document: Any) -> str:
    return dumps(document, indent=True) + "\n"


def _verdict_text(verdict: Verdict) -> str:
    return verdict.value.replace("-", " ")


def _change_json(change: Change, failed: tuple[str, ...]) -> dict[str, Any]:
    document = change_to_json(change)
    document["breaking"] = is_breaking(change, failed)
    return document


def _gate_change_json(
    change: Change,
    triage: Triage | None,
    result: CopyResult,
    report: DriftReport,
    finding: DriftFinding | None = None,
) -> dict[str, Any]:
    """A change of the gate: the diff's fields, ``breaking``, the maintainer's wording and
    where it is written (``finding``), and what the baseline and --new-since make of it."""
    document = _change_json(change, result.failed)
    document["drift_message"] = finding.message if finding else None
    document["record_type"] = finding.record_type if finding else None
    document["copy_location"] = _location_json(finding.copy_location if finding else None)
    document["contract_location"] = _location_json(finding.contract_location if finding else None)
    entry = triage.accepted if triage is not None else None
    document["fingerprint"] = triage.fingerprint if triage is not None else None
    document["accepted"] = (
        None
        if entry is None or triage is None
        else {
            "reason": entry.reason,
            "expires": entry.expires.isoformat() if entry.expires else None,
            "expired": triage.expired,
        }
    )
    judged = report.new_since is not None and change.level != "info"  # info never fails
    document["present_at_ref"] = triage.old if judged and triage is not None else None
    document["blocking"] = document["breaking"] and not (triage is not None and triage.waived)
    return document


def entry_to_json(entry: BaselineEntry) -> dict[str, Any]:
    return {
        "entry": entry.where,
        "repository": entry.repository,
        "copy": entry.copy,
        "rule": entry.rule,
        "canonical_pointer": entry.canonical_pointer,
        "copy_pointer": entry.copy_pointer,
        "fingerprint": entry.fingerprint,
        "reason": entry.reason,
        "expires": entry.expires.isoformat() if entry.expires else None,
    }


def _change_lines(changes: tuple[Change, ...], indent: str = "    ") -> list[str]:
    """The changes that matter (errors break the required direction, warnings would break the
    other one), then a count of the info-level ones (annotations, defaults, definitions)."""
    lines = [indent + change_to_text(c) for c in changes if c.level != "info"]
    info = sum(1 for c in changes if c.level == "info")
    if info:
        lines.append(
            f"{indent}and {info} info-level changes (annotations; --format json lists them)"
        )
    return lines


# --- drift ---------------------------------------------------------------------------------


def _finding_counts(results: Sequence[CopyResult], report: DriftReport) -> str:
    """``2 new, 31 accepted, 1 expired, 4 present at HEAD``: only when a baseline entry or
    --new-since applies, so a plain run reads as before."""
    counts = {what: sum(r.count(what) for r in results) for what in ("accepted", "expired", "old")}
    if not any(counts.values()) and report.new_since is None:
        return ""
    new = sum(r.count("new") for r in results)
    parts = [f"{new} new"] if new or report.new_since is not None else []
    parts += [f"{counts['accepted']} accepted"] if counts["accepted"] else []
    parts += [f"{counts['expired']} expired"] if counts["expired"] else []
    if report.new_since is not None:
        parts.append(f"{counts['old']} present at {report.new_since}")
    return ", ".join(parts)


def _summary(report: DriftReport) -> str:
    counts = [
        f"{report.count(verdict)} {_verdict_text(verdict)}"
        for verdict in Verdict
        if report.count(verdict)
    ]
    count = len(report.results)
    line = (
        f"{count} cop{'y' if count == 1 else 'ies'}: "
        + ", ".join(counts)
        + policy_note(report.results)
    )
    findings = _finding_counts(report.results, report)
    if findings:
        line += f"; findings: {findings}"
    if report.stale:
        line += f"; {_stale_count(len(report.stale))}"
    return line


def _stale_count(count: int) -> str:
    return f"{count} stale baseline {'entry' if count == 1 else 'entries'}"


def _mark(triage: Triage | None, report: DriftReport) -> str:
    """What the baseline or --new-since says of a finding, after its line."""
    if triage is None:
        return ""
    entry = triage.accepted
    if triage.old:
        return f"  [present at {report.new_since}]"
    if entry is not None and triage.expired:
        return f"  [acceptance expired {entry.expires}: {entry.reason}]"
    if entry is not None:
        until = f" until {entry.expires}" if entry.expires else ""
        return f"  [accepted{until}: {entry.reason}]"
    return ""


def _entry_text(entry: BaselineEntry) -> str:
    where = (
        entry.copy_pointer
        if entry.canonical_pointer == entry.copy_pointer
        else f"{entry.canonical_pointer} -> {entry.copy_pointer}"
    )
    return (
        f"{entry.where}: {entry.repository} {entry.copy} {entry.rule} at {where} "
        f"({entry.fingerprint}): {entry.reason}"
    )


def policy_note(results: Sequence[CopyResult]) -> str:
    """`` (strict)`` or `` (lenient)``: the diff policy that judged, stated in every summary;
    with repositories of both, which ones each."""
    by_policy: dict[str, list[str]] = {}
    for result in results:
        names = by_policy.setdefault(result.policy, [])
        if result.repository not in names:
            names.append(result.repository)
    if len(by_policy) == 1:
        return f" ({next(iter(by_policy))})"
    return " (" + "; ".join(f"{p}: {', '.join(n)}" for p, n in sorted(by_policy.items())) + ")"


def _copy_heading(result: CopyResult) -> str:
    where = ""
    if result.path:
        where = f" {result.path}" + (f" at {result.commit[:7]}" if result.commit else "")
    return (
        f"{result.repository} {result.copy_id} ({result.role}, {_REQUIRED[result.direction]})"
        f"{where}: {_verdict_text(result.verdict)}"
        + (" (optional)" if result.optional and result.verdict is Verdict.NOT_FOUND else "")
    )


def _at(location: Location | None) -> str:
    return f"{location.line}:{location.column}" if location else "?"


def _entry_line(entry: RootEntry, copy_file: str | None = None) -> str:
    """One root change: its level, what goes wrong, how many changes it causes and in which
    record types, and where it is written in the copy and in the contract (the file too when
    it is not ``copy_file``: a code copy's type may be declared in another file)."""
    head = entry.head
    count = len(entry.findings)
    changes = f"{count} change{'s' if count != 1 else ''}"
    at = head.copy_location
    copy = f"{at.file}:{_at(at)}" if at and copy_file and at.file != copy_file else _at(at)
    where = f"copy {copy}, contract {_at(head.contract_location)}"
    if head.change.id == STALE_RULE:  # a generated file has no place in the contract
        where = f"copy {copy}"
    return (
        f"{head.change.level}: {entry.message} "
        f"[{changes} in {', '.join(entry.record_types)}; {where}]"
    )


def _info_count(result: CopyResult) -> int:
    return sum(1 for change in result.changes if change.level == "info")


def _copy_counts(result: CopyResult, report: DriftReport) -> str:
    """``1 new, 33 accepted, 36 info-level``: what the copy's heading counts after its
    verdict (the info-level changes are annotations; ``--format json`` lists them)."""
    counts = _finding_counts([result], report) if result.verdict.drifted else ""
    info = _info_count(result)
    if info:
        counts += (", " if counts else "") + f"{info} info-level"
    return counts


def _copy_summary(result: CopyResult) -> str | None:
    """``3 root changes (2 breaking) from 9 changes``: said when a copy has more than one
    root change shown (one is its own line)."""
    entries = result.entries
    if len(entries) < 2:
        return None
    breaking = sum(1 for entry in entries if entry.breaking)
    shown = sum(len(entry.findings) for entry in entries)
    return (
        f"{result.repository} {result.copy_id}: {len(entries)} root changes "
        f"({breaking} breaking) from {shown} change{'s' if shown != 1 else ''}"
    )


def _entry_lines(
    result: CopyResult, entry: RootEntry, report: DriftReport, verbose: bool
) -> list[str]:
    """A root change's line, marked with what the baseline or --new-since says of it, and
    (``verbose``) each change it causes."""
    lines = [f"    {_entry_line(entry, result.path)}{_mark(result.triage_of(entry.head), report)}"]
    if verbose:
        for finding in entry.findings:
            lines.extend(_finding_lines(finding, "        "))
    return lines


def _finding_lines(finding: DriftFinding, indent: str) -> list[str]:
    lines = [indent + change_to_text(finding.change)]
    witness = witness_line(finding.change)
    if witness is not None:
        lines.append(indent + witness)
    return lines


def drift_summary(report: DriftReport) -> str:
    """The last line of the text report: the copies counted by verdict, with the policy."""
    return _summary(report)


def render_text(report: DriftReport, *, verbose: bool = False) -> str:
    """Per copy: its verdict, one line per root change (``verbose``: each change it causes,
    with its witness), a summary line and the reproducing command. Findings the baseline
    accepts or that were there at --new-since are counted on the copy's first line, listed
    only with ``verbose``."""
    return render_lines([*body_lines(report, verbose=verbose), _summary(report)])


def body_lines(report: DriftReport, *, verbose: bool = False) -> list[str]:
    """The text report without its summary line (``wiregate check`` shows it as details).

    A copy with nothing to act on is one line, and a repository's copies with nothing to act
    on share one (``verbose``: a line each); the reproducing command is shown where a root
    change is (always with ``verbose``); copies skipped for the same reason in one repository
    (its checkout is absent) share one line."""
    lines = []
    skipped = _skipped_together(report.results)
    quiet = {} if verbose else _quiet_together(report.results)
    for result in report.results:
        group = skipped.get(id(result))
        if group is not None:
            if group[0] is result:
                lines.append(_skipped_line(group))
            continue
        group = quiet.get(id(result))
        if group is not None:
            if group[0] is result:
                lines.append(_quiet_line(group, report))
            continue
        heading = _copy_heading(result)
        if result.breaks:
            heading += ": " + "; ".join(result.breaks)
        counts = _copy_counts(result, report)
        lines.append(heading + (f" ({counts})" if counts else ""))
        if result.message:
            lines.append(f"    {result.message}")
        if result.verdict.drifted or result.verdict is Verdict.EQUIVALENT:
            for entry in result.entries:
                lines.extend(_entry_lines(result, entry, report, verbose))
            if verbose:
                for entry in result.waived_entries:
                    lines.extend(_entry_lines(result, entry, report, verbose))
            summary = _copy_summary(result)
            if summary is not None:
                lines.append(f"    {summary}")
        if result.reproduce and (verbose or result.entries):
            lines.append(f"    reproduce: {result.reproduce}")
    for stale in report.stale:
        lines.append(f"stale baseline entry {_entry_text(stale)}: matches no finding")
    if report.stale:
        lines.append(f"{_stale_count(len(report.stale))}: remove with {PRUNE_COMMAND}")
    return lines


def _skipped_together(results: Sequence[CopyResult]) -> dict[int, list[CopyResult]]:
    """Skipped copies of one repository with the same message, when there are several."""
    groups: dict[tuple[str, str], list[CopyResult]] = {}
    for result in results:
        if result.verdict is Verdict.SKIPPED:
            groups.setdefault((result.repository, result.message or ""), []).append(result)
    return {id(r): group for group in groups.values() if len(group) > 1 for r in group}


def _quiet_together(results: Sequence[CopyResult]) -> dict[int, list[CopyResult]]:
    """A repository's drifted copies that list nothing (every finding accepted or there at
    --new-since: no root change to act on), when there are several. Identical and equivalent
    copies keep a line each, with the path that was read."""
    groups: dict[str, list[CopyResult]] = {}
    for result in results:
        if result.verdict.drifted and not result.entries and not result.message:
            groups.setdefault(result.repository, []).append(result)
    return {id(r): group for group in groups.values() if len(group) > 1 for r in group}


def _quiet_line(group: list[CopyResult], report: DriftReport) -> str:
    """``trace-pipeline: 3 copies with nothing to act on: rollout-wire compatible drift (12
    accepted, 34 info-level); ...``."""
    parts = []
    for result in group:
        counts = _copy_counts(result, report)
        parts.append(
            f"{result.copy_id} {_verdict_text(result.verdict)}" + (f" ({counts})" if counts else "")
        )
    return (
        f"{group[0].repository}: {len(group)} copies with nothing to act on "
        f"(--verbose lists each): {'; '.join(parts)}"
    )


def _skipped_line(group: list[CopyResult]) -> str:
    first = group[0]
    copies = ", ".join(result.copy_id for result in group)
    return f"{first.repository} {copies} ({first.role}): skipped: {first.message}"


def _identity_json(about: CopyResult | HistoryReport) -> dict[str, Any]:
    """Which copy a result or a history is about (the fields of ``copy_identity``)."""
    return {
        "repository": about.repository,
        "checkout": about.checkout,
        "copy": about.copy_id,
        "role": about.role,
        "required": about.direction,
        "policy": about.policy,
        "schema": about.schema,
        "canonical_at": about.canonical_at,
        "kind": about.kind,
        "declared": about.declared,
    }


def copy_to_json(result: CopyResult, report: DriftReport | None = None) -> dict[str, Any]:
    report = report or DriftReport(results=(result,))
    return {
        **_identity_json(result),
        "copy_at": result.copy_at,
        "verdict": result.verdict.value,
        "path": result.path,
        "tried": list(result.tried),
        "commit": result.commit,
        "failed": list(result.failed),
        "breaks": list(result.breaks),
        "message": result.message,
        "error_location": None
        if result.error_file is None
        else {"file": result.error_file, "line": result.error_line, "column": result.error_column},
        "optional": result.optional,
        "contract_file": result.contract_file,
        "changes": [
            _gate_change_json(change, triage, result, report, finding)
            for (change, triage), finding in zip(result.triaged, _judged(result), strict=True)
        ],
        "entries": [
            *(_entry_json_doc(entry, waived=False) for entry in result.entries),
            *(_entry_json_doc(entry, waived=True) for entry in result.waived_entries),
        ],
        "reproduce": result.reproduce,
        "fails": report.fails(result),
        "findings": {
            what: result.count(key)
            for what, key in (
                ("new", "new"),
                ("accepted", "accepted"),
                ("expired", "expired"),
                ("present_at_ref", "old"),
            )
        },
        "new_since_commit": result.new_since_commit,
    }


def _location_json(location: Location | None) -> dict[str, Any] | None:
    if location is None:
        return None
    return {"file": location.file, "line": location.line, "column": location.column}


def _judged(result: CopyResult) -> list[DriftFinding | None]:
    """``result.judged`` beside its changes (None for a result built without them)."""
    judged: list[DriftFinding | None] = [*result.judged]
    return judged + [None] * (len(result.changes) - len(judged))


def _entry_json_doc(entry: RootEntry, *, waived: bool) -> dict[str, Any]:
    head = entry.head
    return {
        "root": {"contract_pointer": head.root[0], "copy_pointer": head.root[1]},
        "level": entry.level,
        "breaking": entry.breaking,
        "waived": waived,
        "message": entry.message,
        "rules": list(entry.rule_ids),
        "record_types": list(entry.record_types),
        "copy_location": _location_json(head.copy_location),
        "contract_location": _location_json(head.contract_location),
        "changes": [finding.fingerprint for finding in entry.findings],
    }


def render_json(report: DriftReport) -> str:
    return _dumps(report_to_json(report))


def report_to_json(report: DriftReport) -> dict[str, Any]:
    return {
        "version": REPORT_VERSION,
        "ok": report.exit_code == 0,
        "exit_code": report.exit_code,
        "ref": report.ref,
        "strict": report.strict,
        "summary": {
            verdict.value: report.count(verdict)
            for verdict in Verdict
            if verdict not in HISTORY_ONLY
        },
        "copies": [copy_to_json(result, report) for result in report.results],
        "new_since": report.new_since,
        "baseline": str(report.baseline) if report.baseline else None,
        "expired": [entry_to_json(entry) for entry in report.expired],
        "stale": [entry_to_json(entry) for entry in report.stale],
        "prune": PRUNE_COMMAND if report.stale else None,
    }


def _entry_title(result: CopyResult, entry: RootEntry) -> str:
    return f"wiregate drift {result.repository} {result.copy_id}: {', '.join(entry.rule_ids)}"


def _entry_message(entry: RootEntry) -> str:
    count = len(entry.findings)
    return (
        f"{entry.message} ({count} change{'s' if count != 1 else ''} in "
        f"{', '.join(entry.record_types)})"
    )


def render_github(report: DriftReport) -> str:
    """Workflow annotations: one per root change, on the line of the copy where it is
    written (paths relative to the governed repository's checkout), and one per copy that
    cannot be judged (one for a repository's copies skipped together); the level is the
    result's (``DriftReport.annotation_level``)."""
    lines = []
    skipped = _skipped_together(report.results)
    for result in report.results:
        title = f"wiregate drift {result.repository} {result.copy_id}"
        group = skipped.get(id(result))
        if group is not None:
            if group[0] is result:
                title = f"wiregate drift {result.repository} ({len(group)} copies)"
                level = report.annotation_level(result)
                lines.append(workflow_command(level, result.message or "", title=title))
            continue
        if result.verdict in (Verdict.ERROR, Verdict.SKIPPED, Verdict.NOT_FOUND):
            level = report.annotation_level(result)
            lines.append(
                workflow_command(
                    level,
                    result.message or "",
                    title=title,
                    file=result.error_file,
                    line=result.error_line,
                    col=result.error_column,
                )
            )
        elif result.verdict.drifted:
            for entry in result.entries:
                at = entry.head.copy_location
                # What the baseline says of it (an acceptance that expired, and why it was
                # accepted): the reviewer on GitHub sees only this line.
                mark = _mark(result.triage_of(entry.head), report).strip()
                lines.append(
                    workflow_command(
                        report.annotation_level(result, entry.breaking),
                        f"{_entry_message(entry)} {mark}" if mark else _entry_message(entry),
                        title=_entry_title(result, entry),
                        file=at.file if at else result.path,
                        line=at.line if at else None,
                        col=at.column if at else None,
                    )
                )
    if report.stale:
        message = f"{_stale_count(len(report.stale))}: remove with {PRUNE_COMMAND}"
        lines.append(workflow_command("notice", message, title="wiregate drift baseline"))
    return render_lines(lines)


_MARKDOWN_HEAD = "| Level | Rules | Contract | Copy | What goes wrong | Changes | Record types |"


def _place(pointer: str, location: Location | None) -> str:
    line = f" (line {location.line})" if location else ""
    return f"{markdown_code(pointer)}{line}"


def render_markdown(report: DriftReport) -> str:
    lines = [
        "### wiregate drift",
        "",
        "| Repository | Copy | Role | Required | Path | Verdict |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for result in report.results:
        lines.append(
            f"| {result.repository} | {result.copy_id} | {result.role} | {result.direction} "
            f"| {markdown_code(result.path) if result.path else '-'} "
            f"| {_verdict_text(result.verdict)} |"
        )
    for result in report.results:
        if result.message:
            lines += [
                "",
                f"**{result.repository} {result.copy_id}**: {markdown_cell(result.message)}",
            ]
        if result.verdict.drifted:
            breaks = f": {'; '.join(result.breaks)}" if result.breaks else ""
            lines += [
                "",
                f"#### {result.repository} {result.copy_id}: {_verdict_text(result.verdict)}"
                f"{breaks}",
            ]
            if result.entries:
                lines += [
                    "",
                    _MARKDOWN_HEAD,
                    "| --- | --- | --- | --- | --- | --- | --- |",
                ]
            for entry in result.entries:
                head = entry.head
                rules = ", ".join(f"`{rule}`" for rule in entry.rule_ids)
                lines.append(
                    f"| {entry.level} | {rules} "
                    f"| {_place(head.change.old_pointer, head.contract_location)} "
                    f"| {_place(head.change.new_pointer, head.copy_location)} "
                    f"| {markdown_cell(entry.message)} | {len(entry.findings)} "
                    f"| {', '.join(entry.record_types)} |"
                )
            summary = _copy_summary(result)
            lines += ["", summary] if summary is not None else []
            info = _info_count(result)
            if info:
                lines += ["", f"And {info} info-level changes (`--format json` lists them)."]
            waived = _finding_counts([result], report)
            if waived:
                lines += ["", f"Findings: {waived} (accepted ones: `--format json` lists them)."]
    lines += ["", _summary(report)]
    return render_lines(lines)


#: The SARIF base id of the contract's repository (its files: ``contract_file``).
CONTRACT_BASE = "WIREGATE"

#: SARIF rules of copies that fail or stop the gate without a finding of the diff engine.
COPY_RULES = {
    "copy-not-found": "A configured copy of the contract is at none of its paths in its "
    "repository's checkout (contracts/mirrors.toml: the copy's paths; optional = true allows "
    "it to be absent). Located at its first configured path.",
    "copy-skipped": "The repository's checkout is absent: its copy was not judged, which "
    "fails the gate with --strict. Located at the copy's first configured path.",
    "copy-unreadable": "The copy, or its repository at the ref, cannot be read or compared: "
    "the gate cannot judge it (exit 2). Located in the copy when a file was read, at the line "
    "and column the error names when it knows them.",
}
_COPY_RULE = {
    Verdict.NOT_FOUND: "copy-not-found",
    Verdict.SKIPPED: "copy-skipped",
    Verdict.ERROR: "copy-unreadable",
}


def _base_id(repository: str) -> str:
    return re.sub(r"[^A-Z0-9]+", "_", repository.upper()).strip("_") or "REPOSITORY"


def _folder_uri(path: str | None) -> str | None:
    return None if path is None else Path(os.path.abspath(path)).as_uri().rstrip("/") + "/"


def _sarif_base_ids(report: DriftReport) -> dict[str, str]:
    """Each repository's SARIF base id (its name in capitals, ``_`` for the rest; a number
    after it when two names would give the same)."""
    ids: dict[str, str] = {}
    used = {CONTRACT_BASE}
    for result in report.results:
        if result.repository in ids:
            continue
        base = candidate = _base_id(result.repository)
        number = 2
        while candidate in used:
            candidate, number = f"{base}_{number}", number + 1
        used.add(candidate)
        ids[result.repository] = candidate
    return ids


def sarif_bases(report: DriftReport) -> list[SarifBase]:
    """The roots of the gate's SARIF locations: the contract's repository, then each
    repository's checkout (``file://`` URIs ending in ``/``)."""
    bases = [
        SarifBase(CONTRACT_BASE, _folder_uri(report.contract_root), "the contract's repository")
    ]
    checkouts = {result.repository: result.checkout for result in report.results}
    for repository, base in _sarif_base_ids(report).items():
        description = f"the checkout of {repository}"
        bases.append(SarifBase(base, _folder_uri(checkouts[repository]), description))
    return bases


def sarif_notifications(report: DriftReport) -> list[str]:
    """Why the run is not complete: one line per copy that cannot be read."""
    return [
        f"wiregate drift {result.repository} {result.copy_id}: {result.message or 'error'}"
        for result in report.errors
    ]


def _copy_sarif_result(report: DriftReport, result: CopyResult, base: str) -> SarifResult | None:
    """The result of a copy not judged: unreadable, not found, or skipped when that fails the
    gate (--strict); located in the copy that was read, else at its first configured path
    (code scanning takes no result without a location)."""
    rule_id = _COPY_RULE[result.verdict]
    level = report.annotation_level(result)
    if result.verdict is Verdict.SKIPPED and level != "error":
        return None  # no checkout: nothing to point at, and the gate passes
    location = None
    if result.error_file is not None:
        location = SarifLocation(
            result.error_file, result.error_line, result.error_column, "the copy", base
        )
    elif result.tried:
        where = "where the copy is expected (its first configured path)"
        location = SarifLocation(result.tried[0], None, None, where, base)
    key = "\x1f".join((rule_id, result.repository, result.copy_id))
    return SarifResult(
        rule_id=rule_id,
        level=level,
        message=f"{result.repository} {result.copy_id}: {_verdict_text(result.verdict)}"
        + (f": {result.message}" if result.message else ""),
        location=location,
        fingerprint=hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:16],
        properties={
            "repository": result.repository,
            "copy": result.copy_id,
            "role": result.role,
            "verdict": result.verdict.value,
            "tried": list(result.tried),
        },
    )


def _entry_sarif_result(
    report: DriftReport, result: CopyResult, entry: RootEntry, base: str
) -> SarifResult:
    """A root change's result: located in the copy, the contract as a related location."""
    head = entry.head
    copy = head.copy_location
    contract = head.contract_location
    related: tuple[SarifLocation, ...] = ()
    if contract is not None:
        related = (
            SarifLocation(
                contract.file, contract.line, contract.column, "the contract", CONTRACT_BASE
            ),
        )
    return SarifResult(
        rule_id=head.change.id,
        level=report.annotation_level(result, entry.breaking) if entry.level != "info" else "info",
        message=_entry_message(entry),
        location=None
        if copy is None
        else SarifLocation(copy.file, copy.line, copy.column, "the copy", base),
        fingerprint=head.fingerprint,
        related=related,
        properties={
            "repository": result.repository,
            "copy": result.copy_id,
            "role": result.role,
            "breaking": entry.breaking,
            "changes": len(entry.findings),
            "record_types": list(entry.record_types),
        },
    )


def sarif_results(report: DriftReport) -> list[SarifResult]:
    """The SARIF results of the gate (``wiregate check`` adds them to its own)."""
    results = []
    bases = _sarif_base_ids(report)
    for result in report.results:
        base = bases[result.repository]
        if result.verdict in _COPY_RULE:
            copy_result = _copy_sarif_result(report, result, base)
            results += [copy_result] if copy_result is not None else []
        elif result.verdict.drifted:
            results += [_entry_sarif_result(report, result, e, base) for e in result.entries]
    return results


def render_drift_sarif(report: DriftReport) -> str:
    """SARIF 2.1.0: one result per root change, located in the copy (the contract as a
    related location), one per copy that cannot be judged (``COPY_RULES``); each location
    relative to its repository's base id."""
    return render_sarif(
        sarif_results(report),
        invocation_ok=not report.errors,
        bases=sarif_bases(report),
        rules=COPY_RULES,
        notifications=sarif_notifications(report),
    )


def render_drift_junit(report: DriftReport) -> str:
    """JUnit XML: one test case per copy; a failure per copy that fails the gate."""
    return render_junit("wiregate drift", junit_cases(report))


def junit_cases(report: DriftReport) -> list[JUnitCase]:
    """One JUnit test case per copy (``wiregate check`` adds them to its own)."""
    cases = []
    for result in report.results:
        verdict = _verdict_text(result.verdict)
        if result.verdict is Verdict.ERROR:
            outcome = "error"
        elif report.fails(result):
            outcome = "failure" if result.verdict is not Verdict.SKIPPED else "skipped"
        elif result.verdict is Verdict.SKIPPED or result.verdict is Verdict.NOT_FOUND:
            outcome = "skipped"
        else:
            outcome = "passed"
        details = [result.message] if result.message else []
        details += [_entry_line(entry, result.path) for entry in result.entries]
        if result.reproduce:
            details.append(f"reproduce: {result.reproduce}")
        message = verdict + (": " + "; ".join(result.breaks) if result.breaks else "")
        cases.append(
            JUnitCase(
                classname=f"wiregate.drift.{result.repository}",
                name=result.copy_id,
                outcome=outcome,
                message=message,
                text="\n".join(details),
            )
        )
    return cases


DRIFT_REPORTERS: dict[str, Callable[[DriftReport], str]] = {
    "text": render_text,
    "json": render_json,
    "github": render_github,
    "markdown": render_markdown,
    "sarif": render_drift_sarif,
    "junit": render_drift_junit,
}


# --- history -------------------------------------------------------------------------------


_STATUS_TEXT = {
    FIRST_VISIBLE: "first visible commit (shallow clone: history is cut here)",
    # A code copy: another file its type is extracted from changed, not the declaring file.
    "referenced": "a file it reads changed; declared in",
}


def _entry_heading(entry: HistoryEntry) -> str:
    path = f"{entry.old_path} -> {entry.path}" if entry.old_path else entry.path
    status = _STATUS_TEXT.get(entry.status, entry.status)
    return f"{entry.commit[:7]} {entry.date[:10]} {status} {path}: {entry.subject}"


def shallow_warning(report: HistoryReport) -> str | None:
    """One line saying a shallow clone hides the history before the cut, if it does."""
    cut = report.cut
    if cut is None:
        return None
    return (
        f"{report.checkout}: shallow clone, history before {cut.commit[:7]} is not available; "
        "fetch with --unshallow or fetch-depth: 0"
    )


def _history_text(report: HistoryReport) -> list[str]:
    lines = [
        f"{report.repository} {report.copy_id} ({report.role}, {_REQUIRED[report.direction]} "
        f"with {report.schema}{report.canonical_at.removeprefix('#')}) at {report.ref}"
    ]
    since = report.since
    current = report.current
    judged = report.judged
    cut = report.cut
    if current is None:
        lines.append("    never committed at any of its paths")
        return lines
    # The newest revision may be unreadable: the verdict is the newest one that was judged.
    now = "now" if judged is current else "last readable revision"
    if judged is not None and since is not None:
        lines.append(
            f"    {now} {_verdict_text(judged.verdict)} since {since.commit[:7]} "
            f"{since.date[:10]}: {since.subject}"
        )
    elif judged is not None and cut is not None:  # the run reaches the cut: no claim past it
        lines.append(
            f"    {now} {_verdict_text(judged.verdict)} at least since {cut.commit[:7]} "
            f"{cut.date[:10]}: {cut.subject} (shallow clone: history before it is not available)"
        )
    skipped = report.unreadable_in_run
    if skipped:
        lines.append(
            "    skipped unreadable revisions in that run: "
            + ", ".join(entry.commit[:7] for entry in skipped)
        )
    for entry in report.entries:
        lines.append(f"  {_entry_heading(entry)}")
        verdict = f"      vs contract: {_verdict_text(entry.verdict)}"
        if entry.verdict.drifted:
            breaking = sum(1 for c in entry.changes if is_breaking(c, entry.failed))
            verdict += f" ({len(entry.changes)} changes, {breaking} breaking"
            verdict += f" {'+'.join(entry.failed)})" if entry.failed else ")"
        lines.append(verdict)
        if entry.message:
            lines.append(f"      {entry.message}")
        if entry.previous is not None:
            if not entry.since_previous:
                step = "identical"
            elif entry.previous_failed:
                step = "breaks " + "+".join(entry.previous_failed)
            else:
                step = "compatible"
            count = len(entry.since_previous)
            lines.append(f"      vs previous ({entry.previous[:7]}): {count} changes, {step}")
            lines.extend(_change_lines(entry.since_previous, indent="        "))
    return lines


def render_history_text(reports: Sequence[HistoryReport]) -> str:
    lines: list[str] = []
    for report in reports:
        if lines:
            lines.append("")
        lines.extend(_history_text(report))
    return render_lines(lines)


def _entry_json(entry: HistoryEntry) -> dict[str, Any]:
    return {
        "commit": entry.commit,
        "date": entry.date,
        "subject": entry.subject,
        "status": entry.status,
        "path": entry.path,
        "old_path": entry.old_path,
        "verdict": entry.verdict.value,
        "failed": list(entry.failed),
        "message": entry.message,
        "changes": [_change_json(change, entry.failed) for change in entry.changes],
        "since_previous": {
            "commit": entry.previous,
            "failed": list(entry.previous_failed),
            "changes": [
                _change_json(change, entry.previous_failed) for change in entry.since_previous
            ],
        },
    }


def history_to_json(report: HistoryReport) -> dict[str, Any]:
    since = report.since
    return {
        **_identity_json(report),
        "ref": report.ref,
        "verdict": report.current.verdict.value if report.current else None,
        "judged_verdict": report.judged.verdict.value if report.judged else None,
        "since": since.commit if since else None,
        "unreadable_in_run": [entry.commit for entry in report.unreadable_in_run],
        "shallow_cut": report.cut.commit if report.cut else None,
        "revisions": [_entry_json(entry) for entry in report.entries],
    }


def render_history_json(reports: Sequence[HistoryReport]) -> str:
    return _dumps({"version": REPORT_VERSION, "histories": [history_to_json(r) for r in reports]})


HISTORY_REPORTERS: dict[str, Callable[[Sequence[HistoryReport]], str]] = {
    "text": render_history_text,
    "json": render_history_json,
}


# --- discovery -----------------------------------------------------------------------------


def _percent(score: float) -> str:
    return f"{int(score * 100)}%"  # floor: 49.9% is not shown as the 50% threshold


def render_discovery_text(found: Sequence[RepositoryCandidates]) -> str:
    lines = []
    for repository in found:
        proposed = sum(1 for c in repository.candidates if c.proposed)
        at = f" at {repository.ref}" if repository.ref else ""
        lines.append(
            f"{repository.repository} ({repository.checkout}){at}: "
            f"{len(repository.candidates)} candidates, {proposed} proposed"
        )
        for candidate in repository.candidates:
            if candidate.error:
                note = "cannot be read, not proposed"
            elif candidate.proposed:
                note = f"covers {_percent(candidate.score)}"
            else:
                note = (
                    f"covers {_percent(candidate.score)}, below the "
                    f"{_percent(PROPOSE_THRESHOLD)} threshold: not proposed"
                )
            place = candidate.path
            if candidate.kind != "schema":
                place += f":{candidate.line} ({candidate.kind} {candidate.declared})"
            lines.append(
                f"  {place}: {candidate.schema} {candidate.canonical_at}, {note} "
                f"(matched: {'; '.join(candidate.reasons)})"
            )
            if candidate.error:
                lines.append(f"    {candidate.error}")
        for skipped in repository.skipped:
            lines.append(f"  skipped {skipped.path}: {skipped.reason}")
        blocks = repository.proposals
        if blocks:
            lines.append(
                f"  ready to paste under the [[repository]] entry of {repository.repository} "
                "in contracts/mirrors.toml:"
            )
            for block in blocks:
                lines.append("")
                lines.extend(block.toml().splitlines())
        lines.append("")
    return render_lines(lines[:-1])


def render_discovery_json(found: Sequence[RepositoryCandidates]) -> str:
    return _dumps(
        {
            "version": REPORT_VERSION,
            "threshold": PROPOSE_THRESHOLD,
            "repositories": [
                {
                    "repository": repository.repository,
                    "checkout": repository.checkout,
                    "ref": repository.ref,
                    "candidates": [
                        {
                            "path": c.path,
                            "kind": c.kind,
                            "declared": c.declared,
                            "line": c.line,
                            "schema": c.schema,
                            "canonical_at": c.canonical_at,
                            "score": round(c.score, 4),
                            "proposed": c.proposed,
                            "reasons": list(c.reasons),
                            "shared_defs": list(c.shared_defs),
                            "error": c.error,
                        }
                        for c in repository.candidates
                    ],
                    "skipped": [{"path": k.path, "reason": k.reason} for k in repository.skipped],
                    "toml": "\n".join(block.toml() for block in repository.proposals),
                }
                for repository in found
            ],
        }
    )


DISCOVERY_REPORTERS: dict[str, Callable[[Sequence[RepositoryCandidates]], str]] = {
    "text": render_discovery_text,
    "json": render_discovery_json,
}
