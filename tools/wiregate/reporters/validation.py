"""Reporters for ``wiregate validate`` results."""

from __future__ import annotations

from collections.abc import Callable

import orjson

from wiregate.textlines import render_lines
from wiregate.validation import FileProblem, ValidationReport

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

    def __init__(self) -> None:
        self.count = 0

    def problem(self, p: FileProblem) -> str:
        item = {
            "path": p.path,
            "line": p.line,
            "pointer": p.pointer,
            "message": p.message,
            "record_type": p.record_type,
        }
        text = orjson.dumps(item, option=orjson.OPT_INDENT_2).decode().replace("\n", "\n    ")
        head = '{\n  "problems": [\n    ' if not self.count else ",\n    "
        self.count += 1
        return head + text

    def end(self, report: ValidationReport) -> str:
        rest = {
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
        body = orjson.dumps(rest, option=orjson.OPT_INDENT_2).decode()[1:]  # after its "{"
        head = '{\n  "problems": [],' if not self.count else "\n  ],"
        return head + body + "\n"


def render_json(report: ValidationReport) -> str:
    stream = JsonStream()
    return "".join(stream.problem(p) for p in report.problems) + stream.end(report)


class _TextStream:
    def problem(self, p: FileProblem) -> str:
        return render_lines([problem_line(p)])  # a record's value made visible, on one line

    def end(self, report: ValidationReport) -> str:
        return render_summary(report)


VALIDATION_REPORTERS: dict[str, Callable[[ValidationReport], str]] = {
    "text": render_text,
    "json": render_json,
}

#: Every format prints each problem as soon as it is found, then the rest: ``make()`` gives a
#: writer with ``problem(p) -> str`` and ``end(report) -> str``.
STREAMING_REPORTERS: dict[str, Callable[[], JsonStream | _TextStream]] = {
    "text": _TextStream,
    "json": JsonStream,
}
