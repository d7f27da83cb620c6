"""The reporters of `wiregate check` on hand-made reports: GitHub annotations and JSON."""

from __future__ import annotations

import json

from wiregate.check import CheckReport, Problem, StepResult, StepStatus
from wiregate.reporters.check import render_github, render_json
from wiregate.reporters.github import workflow_command


def test_a_step_summary_is_escaped_when_it_is_the_annotation() -> None:
    report = CheckReport(
        steps=(
            StepResult("codegen", StepStatus.ERROR, "50% done\r\nthen: stopped, badly"),
            StepResult("drift", StepStatus.PASSED, "1 copy: 1 identical"),
        )
    )
    assert render_github(report).splitlines()[0] == (
        "::error title=wiregate check%3A codegen::50%25 done%0D%0Athen: stopped, badly"
    )


def test_one_annotation_per_problem_at_its_file() -> None:
    step = StepResult(
        "contract",
        StepStatus.FAILED,
        "2 of 9 fixtures mislabelled",
        problems=(
            Problem("first: labelled valid", "contracts/fixtures/a,b.json"),
            Problem("second: no file"),
        ),
    )
    report = CheckReport(steps=(step,))
    assert render_github(report).splitlines()[:2] == [
        "::error file=contracts/fixtures/a%2Cb.json,title=wiregate check%3A contract::"
        "first: labelled valid",
        "::error title=wiregate check%3A contract::second: no file",
    ]
    assert json.loads(render_json(report))["steps"][0]["problems"] == [
        {"message": "first: labelled valid", "file": "contracts/fixtures/a,b.json"},
        {"message": "second: no file", "file": None},
    ]


def test_passed_and_skipped_steps_are_not_annotated() -> None:
    report = CheckReport(
        steps=(
            StepResult("contract", StepStatus.PASSED, "ok", problems=(Problem("x", "f"),)),
            StepResult("drift", StepStatus.SKIPPED, "7 copies: 7 skipped"),
        )
    )
    assert render_github(report) == (
        "contract  passed   ok\ndrift     skipped  7 copies: 7 skipped\n"
        "check passed: 1 passed, 1 skipped\n"
    )


def test_workflow_command() -> None:
    assert workflow_command("notice", "plain") == "::notice::plain"
    assert workflow_command("warning", "a:b", title="t,1", file="dir/x:y.json") == (
        "::warning file=dir/x%3Ay.json,title=t%2C1::a:b"
    )
