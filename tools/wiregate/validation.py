"""Validate JSON and JSONL record files against the contract, record by record.

Results are plain data; reporters turn them into text or JSON.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from wiregate.errors import UserError
from wiregate.jsonl import RecordInput, open_records
from wiregate.record_validator import ValidatorSet, guess_record_type, pointer

__all__ = ["AUTO", "FileProblem", "ValidationReport", "validate_files"]

AUTO = "auto"
STDIN_TWICE = "two FILES cannot both be stdin"


@dataclass(frozen=True)
class FileProblem:
    """A problem at ``path:line`` and a JSON pointer inside that line's record."""

    path: str
    line: int
    pointer: str
    message: str
    record_type: str | None = None


@dataclass
class ValidationReport:
    record_option: str
    files: list[str] = field(default_factory=list)
    records: int = 0
    valid: int = 0
    invalid: int = 0
    broken_lines: int = 0
    blank_lines: int = 0
    picked: Counter[str] = field(default_factory=Counter)
    problems: list[FileProblem] = field(default_factory=list)
    file_errors: list[str] = field(default_factory=list)
    #: When set, problems are handed to it as they are found instead of being kept (streaming).
    on_problem: Callable[[FileProblem], None] | None = field(default=None, repr=False)
    problem_count: int = 0

    def add(self, problem: FileProblem) -> None:
        self.problem_count += 1
        if self.on_problem is not None:
            self.on_problem(problem)
        else:
            self.problems.append(problem)

    @property
    def exit_code(self) -> int:
        if self.file_errors:
            return 2
        return 1 if self.invalid or self.broken_lines else 0


def _check_record(
    report: ValidationReport,
    validators: ValidatorSet,
    path: str,
    line: int,
    record: Any,
    prefix: tuple[str | int, ...] = (),
) -> None:
    report.records += 1
    name = report.record_option
    if name == AUTO:
        guessed = guess_record_type(record)
        if guessed is None:
            report.invalid += 1
            what = "a JSON object" if isinstance(record, dict) else "not a JSON object"
            report.add(
                FileProblem(path, line, pointer(prefix), f"cannot tell the record type ({what})")
            )
            return
        name = guessed
        report.picked[name] += 1
    problems = validators.get(name).problems(record)
    if not problems:
        report.valid += 1
        return
    report.invalid += 1
    for problem in problems:
        inner = problem.pointer if problem.pointer != "/" else ""
        full = (pointer(prefix) if prefix else "") + inner or "/"
        report.add(FileProblem(path, line, full, problem.message, name))


def _validate_lines(
    report: ValidationReport, validators: ValidatorSet, source: RecordInput
) -> None:
    # "Not JSON at all" (exit 2) is a file in which no line parses and none even starts like
    # a JSON record; a file of truncated records is broken lines (exit 1).
    path = source.path
    looks_like_json = False
    broken = 0
    for line in source.lines():
        if line.blank:
            report.blank_lines += line.lines
            continue
        if line.error is not None:
            broken += 1
            looks_like_json = looks_like_json or line.raw.lstrip()[:1] in (b"{", b"[")
            report.broken_lines += 1
            report.add(FileProblem(path, line.number, "/", line.error))
            continue
        looks_like_json = True
        _check_record(report, validators, path, line.number, line.value)
    if broken and not looks_like_json:
        report.file_errors.append(f"{path}: not JSON or JSON Lines (no line parses)")


def _validate_document(
    report: ValidationReport, validators: ValidatorSet, source: RecordInput
) -> None:
    document = source.document()
    if isinstance(document, list):
        for index, record in enumerate(document):
            _check_record(report, validators, source.path, 1, record, (index,))
    else:
        _check_record(report, validators, source.path, 1, document)


def validate_files(
    paths: list[str],
    record: str,
    validators: ValidatorSet,
    on_problem: Callable[[FileProblem], None] | None = None,
) -> ValidationReport:
    """Validate every record of every file. A missing or unreadable file is a file error;
    stdin given twice or an unknown record type is a UserError before any file is read.

    With ``on_problem``, each problem is handed over as soon as it is found and not kept, so
    memory does not grow with the number of problems."""
    if paths.count("-") > 1:
        raise UserError(STDIN_TWICE)
    if record != AUTO:
        validators.get(record)  # unknown names fail before any file is read
    report = ValidationReport(record_option=record, on_problem=on_problem)
    for path in paths:
        report.files.append(path)
        # A file that cannot be read is a file error; the other files are still validated.
        try:
            with open_records(path) as source:
                if source.is_document:
                    _validate_document(report, validators, source)
                else:
                    _validate_lines(report, validators, source)
        except UserError as exc:
            report.file_errors.append(str(exc))
    return report
