"""Reporters for ``wiregate drift``, ``drift history`` and ``drift --discover``.

Per-change formatting is the diff command's (``wiregate.reporters.diff``); this module only
adds what drift knows on top: the repository, the copy, its role and the verdict.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from wiregate.diff import Change
from wiregate.drift.discovery import PROPOSE_THRESHOLD, RepositoryCandidates
from wiregate.drift.result import (
    FIRST_VISIBLE,
    CopyResult,
    DriftReport,
    HistoryEntry,
    HistoryReport,
    Verdict,
    is_breaking,
)
from wiregate.exactjson import dumps
from wiregate.reporters.diff import (
    change_to_json,
    change_to_text,
    github_annotation,
    markdown_table,
)
from wiregate.reporters.github import workflow_command

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


def _summary(report: DriftReport) -> str:
    counts = [
        f"{report.count(verdict)} {_verdict_text(verdict)}"
        for verdict in Verdict
        if report.count(verdict)
    ]
    return f"{len(report.results)} copies: " + ", ".join(counts) + policy_note(report.results)


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


def render_text(report: DriftReport) -> str:
    lines = []
    for result in report.results:
        heading = _copy_heading(result)
        if result.breaks:
            heading += ": " + "; ".join(result.breaks)
        lines.append(heading)
        if result.message:
            lines.append(f"    {result.message}")
        if result.verdict.drifted or result.verdict is Verdict.EQUIVALENT:
            lines.extend(_change_lines(result.changes))
        if result.reproduce:
            lines.append(f"    reproduce: {result.reproduce}")
    lines.append(_summary(report))
    return "\n".join(lines) + "\n"


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
    }


def copy_to_json(result: CopyResult) -> dict[str, Any]:
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
        "optional": result.optional,
        "changes": [_change_json(change, result.failed) for change in result.changes],
        "reproduce": result.reproduce,
    }


def render_json(report: DriftReport) -> str:
    return _dumps(
        {
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
            "copies": [copy_to_json(result) for result in report.results],
        }
    )


def render_github(report: DriftReport) -> str:
    """Workflow annotations; file paths are relative to the governed repository's checkout."""
    lines = []
    for result in report.results:
        title = f"wiregate drift {result.repository} {result.copy_id}"
        message = result.message or ""
        if result.verdict is Verdict.ERROR:
            lines.append(workflow_command("error", message, title=title))
        elif result.verdict in (Verdict.SKIPPED, Verdict.NOT_FOUND):
            level = "error" if report.strict or result.fails else "warning"
            lines.append(workflow_command(level, message, title=title))
        elif result.verdict.drifted:
            lines.extend(
                github_annotation(change, file=result.path, title_prefix=f"{title}: ")
                for change in result.changes
                if change.level != "info"
            )
    return "".join(line + "\n" for line in lines)


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
            f"| {f'`{result.path}`' if result.path else '-'} | {_verdict_text(result.verdict)} |"
        )
    for result in report.results:
        if result.message:
            lines += ["", f"**{result.repository} {result.copy_id}**: {result.message}"]
        if result.verdict.drifted:
            breaks = f": {'; '.join(result.breaks)}" if result.breaks else ""
            lines += [
                "",
                f"#### {result.repository} {result.copy_id}: {_verdict_text(result.verdict)}"
                f"{breaks}",
                "",
                markdown_table(c for c in result.changes if c.level != "info").rstrip("\n"),
            ]
    lines += ["", _summary(report)]
    return "\n".join(lines) + "\n"


DRIFT_REPORTERS: dict[str, Callable[[DriftReport], str]] = {
    "text": render_text,
    "json": render_json,
    "github": render_github,
    "markdown": render_markdown,
}


# --- history -------------------------------------------------------------------------------


_STATUS_TEXT = {FIRST_VISIBLE: "first visible commit (shallow clone: history is cut here)"}


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
    return "\n".join(lines) + "\n"


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
            lines.append(
                f"  {candidate.path}: {candidate.schema} {candidate.canonical_at}, {note} "
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
    return "\n".join(lines[:-1]) + "\n" if lines else ""


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
