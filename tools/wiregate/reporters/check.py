"""Reporters for ``wiregate check``: one summary at the end, whatever the format."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from wiregate.check.model import CheckReport, Problem, StepResult, StepStatus
from wiregate.exactjson import dumps
from wiregate.reporters.github import workflow_command
from wiregate.reporters.junit import JUnitCase
from wiregate.reporters.junit import render_junit as render_junit_log
from wiregate.reporters.sarif import SarifBase, SarifLocation, SarifResult
from wiregate.reporters.sarif import render_sarif as render_sarif_log
from wiregate.textlines import render_lines

__all__ = ["CHECK_REPORTERS"]

_VERDICT = {0: "check passed", 1: "check failed", 2: "check could not run"}


def _summary(report: CheckReport) -> str:
    counts = {status: 0 for status in StepStatus}
    for step in report.steps:
        counts[step.status] += 1
    parts = [f"{counts[s]} {s.value}" for s in StepStatus if counts[s]]
    return f"{_VERDICT[report.exit_code]}: {', '.join(parts)}"


def _details(step: StepResult) -> list[str]:
    """What a maintainer reads to fix the step: the drift step's own report rendered by the
    drift reporter, else the step's details."""
    if step.drift is not None:
        from wiregate.reporters.drift import body_lines

        return [*step.details, *body_lines(step.drift)]
    return list(step.details)


def render_text(report: CheckReport) -> str:
    width = max((len(step.name) for step in report.steps), default=0)
    lines = []
    for step in report.steps:
        lines.append(f"{step.name:<{width}}  {step.status.value:<7}  {step.summary}")
        lines.extend(f"    {detail}" for detail in _details(step))
    lines.append(_summary(report))
    return render_lines(lines)


def render_github(report: CheckReport) -> str:
    """Workflow annotations for failed steps (the drift gate's own, else one per problem,
    pointing at its file), then the text summary."""
    lines: list[str] = []
    for step in report.steps:
        annotations = list(step.annotations)
        if step.drift is not None:
            from wiregate.reporters.drift import render_github as drift_annotations

            annotations += drift_annotations(step.drift).splitlines()
        lines.extend(annotations)
        if step.status not in (StepStatus.FAILED, StepStatus.ERROR) or annotations:
            continue
        title = f"wiregate check: {step.name}"
        for problem in step.problems or (Problem(step.summary),):
            lines.append(workflow_command("error", problem.message, title=title, file=problem.file))
    return render_lines(lines) + render_text(report)


def _step_json(step: StepResult) -> dict[str, Any]:
    document: dict[str, Any] = {
        "name": step.name,
        "status": step.status.value,
        "summary": step.summary,
        "details": _details(step),
        "problems": [
            {"message": problem.message, "file": problem.file} for problem in step.problems
        ],
    }
    if step.drift is not None:
        from wiregate.reporters.drift import report_to_json

        document["drift"] = report_to_json(step.drift)
    return document


def render_json(report: CheckReport) -> str:
    document = {
        "exit_code": report.exit_code,
        "steps": [_step_json(step) for step in report.steps],
        "summary": _summary(report),
    }
    return dumps(document, indent=True) + "\n"


def _problem_results(step: StepResult) -> list[SarifResult]:
    """A failed step other than drift: one result per problem, on its file (first line: the
    step judges whole files), fingerprinted by the step, the file and the message."""
    results = []
    for problem in step.problems or (Problem(step.summary),):
        key = "\x1f".join((step.name, problem.file or "", problem.message))
        results.append(
            SarifResult(
                rule_id=f"check-{step.name}",
                level="error",
                message=problem.message,
                location=SarifLocation(problem.file, 1, 1, base=_CONTRACT_BASE)
                if problem.file
                else None,
                fingerprint=hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:16],
            )
        )
    return results


_CONTRACT_BASE = "WIREGATE"  # the other steps' files are relative to the contract's repository


def render_sarif(report: CheckReport) -> str:
    """SARIF 2.1.0: the drift gate's results (one per root change, located in the copy, and
    one per copy it cannot judge) and, for each other step that failed or could not run, one
    result per problem; the drift gate's base ids (the contract's repository, each checkout)."""
    from wiregate.reporters.drift import (
        COPY_RULES,
        sarif_bases,
        sarif_notifications,
        sarif_results,
    )

    results: list[SarifResult] = []
    bases = [SarifBase(_CONTRACT_BASE, None, "the contract's repository")]
    notifications: list[str] = []
    for step in report.steps:
        if step.drift is not None:
            results += sarif_results(step.drift)
            bases = sarif_bases(step.drift)
            notifications += sarif_notifications(step.drift)
        elif step.status in (StepStatus.FAILED, StepStatus.ERROR):
            results += _problem_results(step)
            if step.status is StepStatus.ERROR:
                notifications += [f"wiregate check {step.name}: {step.summary}"]
    return render_sarif_log(
        results,
        invocation_ok=report.exit_code != 2,
        bases=bases,
        rules=COPY_RULES,
        notifications=notifications,
    )


_OUTCOME = {
    StepStatus.PASSED: "passed",
    StepStatus.FAILED: "failure",
    StepStatus.ERROR: "error",
    StepStatus.SKIPPED: "skipped",
}


def render_junit(report: CheckReport) -> str:
    """JUnit XML: one test case per step, then the drift gate's, one per copy. A failure is
    counted once: when the drift gate's copies carry its failures and errors, the drift
    step's own case passes, its summary and details as its output."""
    from wiregate.reporters.drift import junit_cases

    cases: list[JUnitCase] = []
    copies: list[JUnitCase] = []
    for step in report.steps:
        outcome = _OUTCOME[step.status]
        own = junit_cases(step.drift) if step.drift is not None else []
        copies += own
        if outcome in ("failure", "error") and any(c.outcome == outcome for c in own):
            summary = "\n".join([step.summary, *_details(step)])
            cases.append(JUnitCase("wiregate.check", step.name, "passed", output=summary))
            continue
        cases.append(
            JUnitCase(
                classname="wiregate.check",
                name=step.name,
                outcome=outcome,
                message=step.summary,
                text="\n".join(_details(step)),
            )
        )
    return render_junit_log("wiregate check", cases + copies)


CHECK_REPORTERS: dict[str, Callable[[CheckReport], str]] = {
    "text": render_text,
    "json": render_json,
    "github": render_github,
    "sarif": render_sarif,
    "junit": render_junit,
}
