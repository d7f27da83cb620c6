"""Run the steps of ``wiregate check`` in order: contract files, generated code, breaking
changes against the previous committed contract, drift of the mirrors."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from contracts import Contract
from wiregate.check.breaking import check_breaking
from wiregate.check.codegen_step import check_codegen
from wiregate.check.contract_files import check_contract_files
from wiregate.check.drift_step import check_drift
from wiregate.check.model import CheckReport


@dataclass(frozen=True)
class CheckOptions:
    against: str = "HEAD"
    allow_breaking: bool = False
    policy: str = "lenient"
    repos: Mapping[str, Path | None] = field(default_factory=dict)
    ref: str | None = None
    strict: bool = False


def run_check(contract: Contract, options: CheckOptions) -> CheckReport:
    return CheckReport(
        steps=(
            check_contract_files(contract),
            check_codegen(contract),
            check_breaking(
                contract,
                against=options.against,
                allow_breaking=options.allow_breaking,
                policy=options.policy,
            ),
            check_drift(contract, overrides=options.repos, ref=options.ref, strict=options.strict),
        )
    )
