"""Step 1 of ``wiregate check``: the contract files are valid against the draft 2020-12
metaschema, and every fixture passes or fails as its folder labels it."""

from __future__ import annotations

import orjson
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from contracts import Contract, ContractError
from wiregate.check.model import StepResult, StepStatus
from wiregate.record_validator import ValidatorSet

STEP = "contract"


def check_contract_files(contract: Contract) -> StepResult:
    problems: list[str] = []
    try:
        schemas = contract.schemas
        _ = contract.definitions
    except ContractError as exc:
        return StepResult(STEP, StepStatus.ERROR, str(exc), blocking=True)
    for name, schema in schemas.items():
        try:
            Draft202012Validator.check_schema(schema)
        except SchemaError as exc:
            where = "/" + "/".join(str(p) for p in exc.absolute_path)
            problems.append(f"{contract.schema_path(name)}: {where}: {exc.message}")
    if problems:
        return StepResult(
            STEP, StepStatus.FAILED, "schema breaks the metaschema", tuple(problems), blocking=True
        )

    validators = ValidatorSet(contract)
    count = 0
    for _schema_name, definition, expected_valid, path in contract.fixtures():
        count += 1
        try:
            record = orjson.loads(path.read_bytes())
            is_valid = validators.get(definition).is_valid(record)
        except (orjson.JSONDecodeError, ContractError) as exc:
            problems.append(f"{path}: {exc}")
            continue
        if is_valid != expected_valid:
            expected = "valid" if expected_valid else "invalid"
            actual = "valid" if is_valid else "invalid"
            problems.append(f"{path}: labelled {expected} but is {actual} as {definition}")
    if problems:
        return StepResult(
            STEP,
            StepStatus.FAILED,
            f"{len(problems)} of {count} fixtures mislabelled",
            tuple(problems),
        )
    return StepResult(
        STEP,
        StepStatus.PASSED,
        f"{len(schemas)} schemas valid, {count} fixtures as labelled",
    )
