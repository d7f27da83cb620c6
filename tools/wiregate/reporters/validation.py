"""Reporters for ``wiregate validate`` results."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from wiregate.textlines import render_lines
from wiregate.validation import FileProblem, ValidationReport
from wiregate.validation_baseline import AcceptedProblem

__all__ = [
    "STREAMING_REPORTERS",
    "VALIDATION_REPORTERS",
    "JsonStream",
    "problem_line",
    "render_summary",
]


def _summary(report: ValidationReport) -> str:
    parts = [
        f"{report.records} records in {len(report.files)} files",
        f"{report.valid} valid",
        f"{report.invalid} invalid",
    ]
    if report.baseline is not None:
        parts.append(f"{report.accepted} accepted")
    parts.append(f"{report.broken_lines} broken lines")
    if report.file_errors:
        parts.append(f"{len(report.file_errors)} file errors")
    text = ", ".join(parts)
    if report.picked:
        picked = ", ".join(f"{name} {count}" for name, count in sorted(report.picked.items()))
        text += f" (auto picked: {picked})"
    if report.baseline is not None:
        text += (
            f"; baseline: {_count(report.accepted_problems, 'problem')} accepted, "
            f"{report.expired_problems} expired, {_count(len(report.stale), 'stale entry')}"
        )
    return text


def _count(number: int, what: str) -> str:
    plural = what[:-1] + "ies" if what.endswith("y") else what + "s"
    return f"{number} {what if number == 1 else plural}"


def _mark(p: FileProblem) -> str:
    """What the baseline says of a problem, after its line."""
    entry = p.accepted
    if entry is None:
        return ""
    # Listed under a file that is gone: the record file was moved.
    moved = f"; listed for {entry.file}, moved" if p.key and p.key.file != entry.file else ""
    if p.expired:
        return f"  [acceptance expired {entry.expires}: {entry.reason}{moved}]"
    until = f" until {entry.expires}" if entry.expires else ""
    return f"  [accepted{until}: {entry.reason}{moved}]"


def problem_line(p: FileProblem) -> str:
    where = f" [{p.record_type}]" if p.record_type else ""
    return f"{p.path}:{p.line}: {p.pointer}: {p.message}{where}{_mark(p)}"


def _entry_text(entry: AcceptedProblem) -> str:
    value = f" {entry.value}" if entry.value else ""
    what = f" [{entry.record_type}]" if entry.record_type else ""
    return (
        f"{entry.where}: {entry.file} {entry.pointer} {entry.rule}{value}{what} "
        f"({entry.fingerprint}): {entry.reason}"
    )


def _stale_lines(report: ValidationReport) -> list[str]:
    lines = [f"stale baseline entry {_entry_text(e)}: matches no problem" for e in report.stale]
    command = report.prune_command()
    if command is not None:
        count = _count(len(report.stale), "stale baseline entry")
        lines.append(f"{count}: remove with {command}")
    moves = report.record_moves_command()
    if moves is not None:
        count = _count(report.moved_problems, "accepted problem")
        lines.append(
            f"{count} listed for a file that is gone (moved): record the new paths, reasons and "
            f"dates kept, with {moves}"
        )
    other = report.stale_of_other_types()
    if other:
        types = ", ".join(sorted({entry.record_type or "no record type" for entry in other}))
        lines.append(
            f"note: {len(other)} of them name {types}, which this run judged no record of "
            f"their files as (--record {report.record_option}): a record's type is part of "
            "its fingerprint; if the baseline was written with another --record, run with "
            "that one (or write the baseline again with this one) rather than pruning"
        )
    return lines


def entry_to_json(entry: AcceptedProblem) -> dict[str, Any]:
    return {
        "entry": entry.where,
        "file": entry.file,
        "record_type": entry.record_type,
        "pointer": entry.pointer,
        "rule": entry.rule,
        "value": entry.value,
        "fingerprint": entry.fingerprint,
        "reason": entry.reason,
        "expires": entry.expires.isoformat() if entry.expires else None,
    }


def render_summary(report: ValidationReport) -> str:
    return render_lines([_summary(report)])


def render_text(report: ValidationReport) -> str:
    # File errors go to stderr, from the command, not here.
    stream = _TextStream()
    return "".join(stream.problem(p) for p in report.problems) + stream.end(report)


class JsonStream:
    """The JSON report written as problems are found, so memory does not grow with their
    number: ``{"problems": [...], "valid": ..., "record": ..., "summary": ...,
    "file_errors": [...]}``, indented by two spaces. ``problem`` gives each problem's text,
    ``end`` the rest once the report is complete."""

    def __init__(self, baseline: bool = False) -> None:
        self.count = 0
        self.baseline = baseline  # a baseline judges the run: say what it says of each problem

    def problem(self, p: FileProblem) -> str:
        item: dict[str, Any] = {
            "path": p.path,
            "line": p.line,
            "pointer": p.pointer,
            "message": p.message,
            "record_type": p.record_type,
        }
        if self.baseline:
            item["fingerprint"] = p.key.fingerprint if p.key is not None else None
            item["accepted"] = entry_to_json(p.accepted) if p.accepted is not None else None
            item["expired"] = p.expired
        text = orjson.dumps(item, option=orjson.OPT_INDENT_2).decode().replace("\n", "\n    ")
        head = '{\n  "problems": [\n    ' if not self.count else ",\n    "
        self.count += 1
        return head + text

    def end(self, report: ValidationReport) -> str:
        rest: dict[str, Any] = {
            "valid": report.exit_code == 0,
            "record": report.record_option,
            "summary": {
                "files": len(report.files),
                "records": report.records,
                "valid": report.valid,
                "invalid": report.invalid,
                "broken_lines": report.broken_lines,
                "blank_lines": report.blank_lines,
                "file_errors": len(report.file_errors),
                "picked": dict(sorted(report.picked.items())),
            },
            "file_errors": report.file_errors,
        }
        if report.baseline is not None:
            rest["summary"].update(
                accepted=report.accepted,
                accepted_problems=report.accepted_problems,
                expired_problems=report.expired_problems,
                stale_entries=len(report.stale),
                moved_problems=report.moved_problems,
            )
            rest["baseline"] = str(report.baseline.path)
            rest["stale"] = [entry_to_json(entry) for entry in report.stale]
            rest["prune"] = report.prune_command()
            rest["record_moves"] = report.record_moves_command()
        body = orjson.dumps(rest, option=orjson.OPT_INDENT_2).decode()[1:]  # after its "{"
        head = '{\n  "problems": [],' if not self.count else "\n  ],"
        return head + body + "\n"


def render_json(report: ValidationReport) -> str:
    stream = JsonStream(report.baseline is not None)
    return "".join(stream.problem(p) for p in report.problems) + stream.end(report)


class _TextStream:
    def __init__(self, baseline: bool = False) -> None:
        pass  # every line says what the baseline says of it

    def problem(self, p: FileProblem) -> str:
        return render_lines([problem_line(p)])  # a record's value made visible, on one line

    def end(self, report: ValidationReport) -> str:
        return render_lines(_stale_lines(report)) + render_summary(report)


VALIDATION_REPORTERS: dict[str, Callable[[ValidationReport], str]] = {
    "text": render_text,
    "json": render_json,
}

#: Every format prints each problem as soon as it is found, then the rest: ``make(baseline)``
#: (whether a baseline judges the run) gives a writer with ``problem(p) -> str`` and
#: ``end(report) -> str``.
STREAMING_REPORTERS: dict[str, Callable[[bool], JsonStream | _TextStream]] = {
    "text": _TextStream,
    "json": JsonStream,
}
