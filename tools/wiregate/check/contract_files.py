"""Step 1 of ``wiregate check``: the contract files are valid against the draft 2020-12
metaschema, and every fixture passes or fails as its folder labels it."""

from __future__ import annotations

from pathlib import Path

import orjson

from contracts import SCHEMA_FILES, Contract, ContractError
from wiregate.check.model import Problem, StepResult, StepStatus
from wiregate.metaschema import violation
from wiregate.record_validator import ValidatorSet

STEP = "contract"


def relative_file(contract: Contract, path: Path) -> str | None:
    """``path`` relative to the checkout's root, as annotations name files; None when the
    contract is the bundled copy (no checkout to point into)."""
    if contract.bundled:
        return None
    try:
        return path.relative_to(contract.directory.parent).as_posix()
    except ValueError:
        return None


def check_contract_files(contract: Contract) -> StepResult:
    # Each schema on its own first, so one broken file does not hide the other.
    unloadable = []
    for name in SCHEMA_FILES:
        try:
            contract.load_schema(name)
        except ContractError as exc:
            unloadable.append(
                Problem(str(exc), relative_file(contract, contract.schema_path(name)))
            )
    if unloadable:
        count = len(unloadable)
        return StepResult(
            STEP,
            StepStatus.ERROR,
            "a contract schema cannot be loaded"
            if count == 1
            else f"{count} contract schemas cannot be loaded",
            tuple(problem.message for problem in unloadable),
            problems=tuple(unloadable),
            blocking=True,
        )
    try:
        schemas = contract.schemas
        _ = contract.definitions
    except ContractError as exc:
        return StepResult(
            STEP, StepStatus.ERROR, str(exc), problems=(Problem(str(exc)),), blocking=True
        )
    problems: list[Problem] = []
    for name, schema in schemas.items():
        broken = violation(schema, "2020-12")
        if broken is not None:
            path = contract.schema_path(name)
            problems.append(
                Problem(
                    f"{path}: {broken.pointer or '/'}: {broken.message}",
                    relative_file(contract, path),
                )
            )
    if problems:
        return StepResult(
            STEP,
            StepStatus.FAILED,
            "schema breaks the metaschema",
            tuple(problem.message for problem in problems),
            problems=tuple(problems),
            blocking=True,
        )

    validators = ValidatorSet(contract)
    count = 0
    details: list[str] = []
    for _schema_name, definition, expected_valid, path in contract.fixtures():
        count += 1
        relative = relative_file(contract, path)
        shown = relative or str(path)  # relative to the repository, as a maintainer opens it
        try:
            record = orjson.loads(path.read_bytes())
            validator = validators.get(definition)
            is_valid = validator.is_valid(record)
        except (orjson.JSONDecodeError, ContractError) as exc:
            problems.append(Problem(f"{shown}: {exc}", relative))
            details.append(f"{shown}: {exc}")
            continue
        if is_valid != expected_valid:
            if expected_valid:
                # Why the validator rejects it: each problem's pointer and message.
                found = validator.problems(record)
                why = "; ".join(f"{p.pointer}: {p.message}" for p in found)
                message = f"{shown}: labelled valid but is invalid as {definition}: {why}"
                details.append(f"{shown}: labelled valid but is invalid as {definition}:")
                details.extend(f"    {p.pointer}: {p.message}" for p in found)
            else:
                message = (
                    f"{shown}: labelled invalid but is valid as {definition}: the validator "
                    "finds no problem in it"
                )
                details.append(message)
            problems.append(Problem(message, relative))
    if problems:
        return StepResult(
            STEP,
            StepStatus.FAILED,
            f"{len(problems)} of {count} fixtures mislabelled",
            tuple(details),
            problems=tuple(problems),
        )
    return StepResult(
        STEP,
        StepStatus.PASSED,
        f"{len(schemas)} schemas valid, {count} fixtures as labelled",
    )
