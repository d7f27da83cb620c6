"""Step 4 of ``wiregate check``: the drift gate over the mirrors in ``contracts/mirrors.toml``."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path

from contracts import Contract
from wiregate.check.model import Problem, StepResult, StepStatus
from wiregate.drift import run_drift
from wiregate.drift.baseline import load_baseline
from wiregate.errors import UserError
from wiregate.reporters.drift import drift_summary

STEP = "drift"
_STATUS = {0: StepStatus.PASSED, 1: StepStatus.FAILED, 2: StepStatus.ERROR}


def check_drift(
    contract: Contract,
    *,
    overrides: Mapping[str, Path | None] | None = None,
    copies: Collection[str] | None = None,
    ref: str | None = None,
    strict: bool = False,
    environ: Mapping[str, str] | None = None,
    new_since: str | None = None,
    baseline: Path | None = None,
) -> StepResult:
    try:
        # Naming repositories (--repo) also selects them, as `wiregate drift` does.
        selected = list(overrides) if overrides else None
        report = run_drift(
            contract,
            overrides,
            ref=ref,
            strict=strict,
            repositories=selected,
            copies=copies,
            environ=environ,
            baseline=load_baseline(contract, baseline, must_exist=True),
            new_since=new_since,
        )
    except UserError as exc:
        return StepResult(STEP, StepStatus.ERROR, str(exc), problems=(Problem(str(exc)),))
    status = _STATUS[report.exit_code]
    if status is StepStatus.PASSED and report.judged_nothing:
        status = StepStatus.SKIPPED  # nothing was judged: say so rather than "passed"
    # One problem per distinct error: a missing checkout is one, however many copies it holds.
    errors = dict.fromkeys(r.message or r.verdict.value for r in report.errors)
    return StepResult(
        STEP,
        status,
        drift_summary(report),
        problems=tuple(Problem(message) for message in errors),
        drift=report,
    )
