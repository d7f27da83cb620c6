"""Run the steps of ``wiregate check`` in order: contract files, generated code, breaking
changes against the previous committed contract, drift of the mirrors."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from codegen.errors import CodegenError
from contracts import Contract, ContractError
from wiregate.check.breaking import check_breaking
from wiregate.check.codegen_step import check_codegen
from wiregate.check.contract_files import check_contract_files
from wiregate.check.drift_step import check_drift
from wiregate.check.model import CheckReport, Problem, StepResult, StepStatus
from wiregate.errors import UserError
from wiregate.policy import DEFAULT_POLICY


@dataclass(frozen=True)
class CheckOptions:
    against: str | None = None  # None: HEAD, and no previous version is no error
    allow_breaking: str | None = None  # the reason a breaking change is allowed
    policy: str = DEFAULT_POLICY
    repos: Mapping[str, Path | None] = field(default_factory=dict)
    copies: tuple[str, ...] | None = None  # drift step: copy ids (default: all)
    ref: str | None = None
    strict: bool = False
    new_since: str | None = None  # drift step: fail only on findings new since this ref
    baseline: Path | None = None  # drift step: accepted findings (default: beside the contract)


def run_check(contract: Contract, options: CheckOptions) -> CheckReport:
    steps: list[tuple[str, Callable[[], StepResult]]] = [
        ("contract", lambda: check_contract_files(contract)),
        ("codegen", lambda: check_codegen(contract)),
        (
            "breaking",
            lambda: check_breaking(
                contract,
                against=options.against,
                allow_breaking=options.allow_breaking,
                policy=options.policy,
            ),
        ),
        (
            "drift",
            lambda: check_drift(
                contract,
                overrides=options.repos,
                copies=options.copies,
                ref=options.ref,
                strict=options.strict,
                new_since=options.new_since,
                baseline=options.baseline,
            ),
        ),
    ]
    results: list[StepResult] = []
    blocked_by: str | None = None
    for name, step in steps:
        if blocked_by is not None:
            results.append(StepResult(name, StepStatus.SKIPPED, f"not run: {blocked_by}"))
            continue
        try:
            result = step()
        except (UserError, ContractError, CodegenError) as exc:
            # One step's load error must not hide the others' results.
            result = StepResult(name, StepStatus.ERROR, str(exc), problems=(Problem(str(exc)),))
        results.append(result)
        if result.blocking:
            outcome = "could not run" if result.status is StepStatus.ERROR else "failed"
            blocked_by = f"the {name} step {outcome}"
    return CheckReport(steps=tuple(results))
