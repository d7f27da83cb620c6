"""Validate JSON and JSONL record files against the contract, record by record.

Results are plain data; reporters turn them into text or JSON.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from wiregate.errors import UserError
from wiregate.jsonl import RecordInput, open_records
from wiregate.record_validator import Problem, ValidatorSet, guess_record_type, pointer
from wiregate.validation_baseline import (
    AcceptedProblem,
    ProblemKey,
    ValidationBaseline,
    problem_key,
    prune_command,
)

__all__ = ["AUTO", "FileProblem", "ValidationReport", "validate_files"]

AUTO = "auto"
#: The rule of a record no record type fits (``--record auto``), for the baseline.
RECORD_TYPE_RULE = "record-type"
STDIN_TWICE = "two FILES cannot both be stdin"


@dataclass(frozen=True)
class FileProblem:
    """A problem at ``path:line`` and a JSON pointer inside that line's record. With a
    baseline: its ``key`` (None for a broken line, which no entry accepts), the entry that
    accepts it and whether that entry has expired."""

    path: str
    line: int
    pointer: str
    message: str
    record_type: str | None = None
    key: ProblemKey | None = None
    accepted: AcceptedProblem | None = None
    expired: bool = False

    @property
    def waived(self) -> bool:
        """Accepted by an entry that has not expired: it does not fail the run."""
        return self.accepted is not None and not self.expired


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
    #: The accepted problems the run is judged with (``--baseline``), and what it found of them:
    #: records whose every problem is accepted, problems accepted and expired, the entries
    #: that matched, the files read whole (by the baseline's name for them, with the path as
    #: given) and the entries that matched nothing.
    baseline: ValidationBaseline | None = field(default=None, repr=False)
    accepted: int = 0
    accepted_problems: int = 0
    expired_problems: int = 0
    matched: set[tuple[str, str]] = field(default_factory=set, repr=False)
    judged: dict[str, str] = field(default_factory=dict, repr=False)
    stale: tuple[AcceptedProblem, ...] = ()
    #: With a baseline: the record types each file's records were judged as (None: no type
    #: fits), by the path as given.
    judged_as: dict[str, set[str | None]] = field(default_factory=dict, repr=False)
    #: Problems accepted by an entry of a file that is gone (the file was moved), and the
    #: files they were found in (the baseline's name -> the path as given).
    moved_problems: int = 0
    moved: dict[str, str] = field(default_factory=dict, repr=False)

    def add(self, problem: FileProblem) -> None:
        self.problem_count += 1
        if self.on_problem is not None:
            self.on_problem(problem)
        else:
            self.problems.append(problem)

    def prune_command(self) -> str | None:
        """The command that removes the stale entries, or None when there are none."""
        if self.baseline is None or not self.stale:
            return None
        files = {entry.file for entry in self.stale}
        given = [path for file, path in self.judged.items() if file in files]
        return prune_command(self.baseline.path, self.record_option, given)

    def record_moves_command(self) -> str | None:
        """The command that writes the new paths of moved files' entries (their reasons and
        dates kept), or None when no problem was accepted by such an entry."""
        if self.baseline is None or not self.moved:
            return None
        return prune_command(self.baseline.path, self.record_option, list(self.moved.values()))

    def stale_of_other_types(self) -> tuple[AcceptedProblem, ...]:
        """The stale entries of files read in this run whose record type this run judged no
        record as: written with another ``--record`` than this run's (a record's type is part
        of its fingerprint), so no run like this one can match them."""
        return tuple(
            entry
            for entry in self.stale
            if entry.file in self.judged
            and entry.record_type not in self.judged_as.get(self.judged[entry.file], ())
        )

    @property
    def exit_code(self) -> int:
        if self.file_errors:
            return 2
        return 1 if self.invalid or self.broken_lines else 0


def _judge(
    report: ValidationReport,
    path: str,
    line: int,
    record: Any,
    prefix: tuple[str | int, ...],
    record_type: str | None,
    problem: Problem,
) -> FileProblem:
    """``problem`` of a record as reported: at its place in the file and, with a baseline,
    with the entry that accepts it."""
    inner = problem.pointer if problem.pointer != "/" else ""
    full = (pointer(prefix) if prefix else "") + inner or "/"
    found = FileProblem(path, line, full, problem.message, record_type)
    baseline = report.baseline
    if baseline is None:
        return found
    file = baseline.file_key(path)
    key = problem_key(file, record_type, record, problem.pointer, problem.keyword)
    entry = baseline.find(key)
    if entry is None:
        return replace(found, key=key)
    report.matched.add(entry.key)
    if entry.file != file:  # found under the path its file was moved to
        report.moved_problems += 1
        report.moved.setdefault(file, path)
    is_expired = entry.expired(baseline.on)
    if is_expired:
        report.expired_problems += 1
    else:
        report.accepted_problems += 1
    return replace(found, key=key, accepted=entry, expired=is_expired)


def _check_record(
    report: ValidationReport,
    validators: ValidatorSet,
    path: str,
    line: int,
    record: Any,
    prefix: tuple[str | int, ...] = (),
) -> None:
    report.records += 1
    name: str | None = report.record_option
    if name == AUTO:
        name = guess_record_type(record)
        if name is not None:
            report.picked[name] += 1
    if report.baseline is not None:
        report.judged_as.setdefault(path, set()).add(name)
    if name is None:
        what = "a JSON object" if isinstance(record, dict) else "not a JSON object"
        problems = [Problem("/", f"cannot tell the record type ({what})", RECORD_TYPE_RULE)]
    else:
        problems = validators.get(name).problems(record)
    if not problems:
        report.valid += 1
        return
    judged = [_judge(report, path, line, record, prefix, name, p) for p in problems]
    if report.baseline is not None and all(problem.waived for problem in judged):
        report.accepted += 1
    else:
        report.invalid += 1
    for problem in judged:
        report.add(problem)


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
    baseline: ValidationBaseline | None = None,
) -> ValidationReport:
    """Validate every record of every file. A missing or unreadable file is a file error;
    stdin given twice or an unknown record type is a UserError before any file is read.

    With ``on_problem``, each problem is handed over as soon as it is found and not kept, so
    memory does not grow with the number of problems. With a ``baseline``, a record whose
    every problem it accepts (an entry that has not expired) is counted as accepted, not
    invalid, and its entries that match nothing are the report's ``stale``."""
    if paths.count("-") > 1:
        raise UserError(STDIN_TWICE)
    if record != AUTO:
        validators.get(record)  # unknown names fail before any file is read
    report = ValidationReport(record_option=record, on_problem=on_problem, baseline=baseline)
    for path in paths:
        report.files.append(path)
        errors = len(report.file_errors)
        # A file that cannot be read is a file error; the other files are still validated.
        try:
            with open_records(path) as source:
                if source.is_document:
                    _validate_document(report, validators, source)
                else:
                    _validate_lines(report, validators, source)
        except UserError as exc:
            report.file_errors.append(str(exc))
        if baseline is not None and len(report.file_errors) == errors:
            report.judged.setdefault(baseline.file_key(path), path)
    if baseline is not None:
        report.stale = baseline.stale(report.matched, report.judged)
    return report
