"""Reporters for ``wiregate check``: one summary at the end, whatever the format."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from wiregate.check.model import CheckReport, Problem, StepResult, StepStatus
from wiregate.exactjson import dumps
from wiregate.reporters.github import workflow_command

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
    return "\n".join(lines) + "\n"


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
    return "".join(line + "\n" for line in lines) + render_text(report)


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


CHECK_REPORTERS: dict[str, Callable[[CheckReport], str]] = {
    "text": render_text,
    "json": render_json,
    "github": render_github,
}
