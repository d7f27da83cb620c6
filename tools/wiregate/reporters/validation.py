"""Reporters for ``wiregate validate`` results."""

from __future__ import annotations

from collections.abc import Callable

import orjson

from wiregate.textlines import render_lines
from wiregate.validation import FileProblem, ValidationReport

__all__ = ["STREAMING_REPORTERS", "VALIDATION_REPORTERS", "problem_line", "render_summary"]


def _summary(report: ValidationReport) -> str:
    parts = [
        f"{report.records} records in {len(report.files)} files",
        f"{report.valid} valid",
        f"{report.invalid} invalid",
        f"{report.broken_lines} broken lines",
    ]
    if report.file_errors:
        parts.append(f"{len(report.file_errors)} file errors")
    text = ", ".join(parts)
    if report.picked:
        picked = ", ".join(f"{name} {count}" for name, count in sorted(report.picked.items()))
        text += f" (auto picked: {picked})"
    return text


def problem_line(p: FileProblem) -> str:
    where = f" [{p.record_type}]" if p.record_type else ""
    return f"{p.path}:{p.line}: {p.pointer}: {p.message}{where}"


def render_summary(report: ValidationReport) -> str:
    return _summary(report) + "\n"


def render_text(report: ValidationReport) -> str:
    lines = [problem_line(p) for p in report.problems]
    # File errors go to stderr, from the command, not here.
    lines.append(_summary(report))
    return render_lines(lines)


def render_json(report: ValidationReport) -> str:
    document = {
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
        "problems": [
            {
                "path": p.path,
                "line": p.line,
                "pointer": p.pointer,
                "message": p.message,
                "record_type": p.record_type,
            }
            for p in report.problems
        ],
        "file_errors": report.file_errors,
    }
    return orjson.dumps(document, option=orjson.OPT_INDENT_2).decode() + "\n"


VALIDATION_REPORTERS: dict[str, Callable[[ValidationReport], str]] = {
    "text": render_text,
    "json": render_json,
}

#: Formats that print each problem as soon as it is found, then the summary.
STREAMING_REPORTERS: dict[
    str, tuple[Callable[[FileProblem], str], Callable[[ValidationReport], str]]
] = {
    "text": (problem_line, render_summary),
}
