"""Step 2 of ``wiregate check``: the generated models are fresh against the contract."""

from __future__ import annotations

from codegen.errors import CodegenError
from codegen.run import check
from contracts import Contract
from wiregate.check.model import Problem, StepResult, StepStatus

STEP = "codegen"


def check_codegen(contract: Contract) -> StepResult:
    if contract.bundled:
        return StepResult(STEP, StepStatus.SKIPPED, "bundled contract: no generated code to check")
    try:
        result = check(contract.directory.parent)
    except CodegenError as exc:
        return StepResult(STEP, StepStatus.ERROR, str(exc), problems=(Problem(str(exc)),))
    if result.fresh:
        return StepResult(STEP, StepStatus.PASSED, "generated code is fresh")
    summary = "generated code is stale: run `wiregate codegen` and commit datafactory/wire/"
    return StepResult(
        STEP,
        StepStatus.FAILED,
        summary,
        tuple(result.diff.splitlines()),
        problems=tuple(Problem(f"{path}: {_STALE}", path) for path in result.stale),
    )


_STALE = "stale or edited: run `wiregate codegen` and commit it"
