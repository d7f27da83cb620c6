"""Step 2 of ``wiregate check``: the generated models are fresh against the contract."""

from __future__ import annotations

from codegen.errors import CodegenError
from codegen.run import check
from contracts import Contract
from wiregate.check.model import StepResult, StepStatus

STEP = "codegen"


def check_codegen(contract: Contract) -> StepResult:
    if contract.bundled:
        return StepResult(STEP, StepStatus.SKIPPED, "bundled contract: no generated code to check")
    try:
        result = check(contract.directory.parent)
    except CodegenError as exc:
        return StepResult(STEP, StepStatus.ERROR, str(exc))
    if result.fresh:
        return StepResult(STEP, StepStatus.PASSED, "generated code is fresh")
    return StepResult(
        STEP,
        StepStatus.FAILED,
        "generated code is stale: run `wiregate codegen` and commit datafactory/wire/",
        tuple(result.diff.splitlines()),
    )
