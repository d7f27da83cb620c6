"""The steps of `wiregate check`, each on a throwaway wiregate repository."""

from __future__ import annotations

import json
from typing import Any

import git

from contracts import locate
from wiregate.check.breaking import check_breaking, is_version_bump, version_marks
from wiregate.check.codegen_step import check_codegen
from wiregate.check.contract_files import check_contract_files
from wiregate.check.model import StepStatus

from .helpers import add_optional_field, add_required_field, edit_wire, root_of


def test_unchanged_contract_passes_every_step(wiregate_repo: git.Repo) -> None:
    contract = locate(root_of(wiregate_repo))
    assert check_contract_files(contract).status is StepStatus.PASSED
    assert check_codegen(contract).status is StepStatus.PASSED
    result = check_breaking(contract)
    assert (result.status, result.summary, result.details) == (
        StepStatus.PASSED,
        "no breaking change since HEAD (strict)",
        (),
    )


def test_required_field_without_version_bump_fails(wiregate_repo: git.Repo) -> None:
    edit_wire(wiregate_repo, add_required_field)
    result = check_breaking(locate(root_of(wiregate_repo)), policy="lenient")
    assert result.status is StepStatus.FAILED
    assert result.summary == "breaking change without a version bump since HEAD (lenient)"
    assert result.details == (
        "contracts/rollout-wire.schema.json: 1 breaking change since HEAD without a version "
        "bump of $id or schema_version",
        "  required-added at #/$defs/RolloutBranchRecord/required: property 'policy_digest' "
        "became required: old records without it are rejected",
    )


def test_required_field_with_id_bump_passes(wiregate_repo: git.Repo) -> None:
    def bump(schema: dict[str, Any]) -> None:
        add_required_field(schema)
        schema["$id"] = "https://wiregate.dev/schemas/rollout-wire/v2"

    edit_wire(wiregate_repo, bump)
    result = check_breaking(locate(root_of(wiregate_repo)), policy="lenient")
    assert (result.status, result.summary) == (
        StepStatus.PASSED,
        "1 breaking change since HEAD, with a version bump (lenient)",
    )
    assert result.details == (
        "contracts/rollout-wire.schema.json: 1 breaking change with a version bump "
        "(https://wiregate.dev/schemas/rollout-wire/v1 -> https://wiregate.dev/schemas/rollout-wire/v2)",
    )


def test_the_summary_of_a_bumped_change_counts_the_breaking_changes(
    wiregate_repo: git.Repo,
) -> None:
    """A version bump excuses breaking changes; the summary must still say they are there."""

    def bump(schema: dict[str, Any]) -> None:
        add_required_field(schema)
        branch = schema["$defs"]["RolloutBranchRecord"]["properties"]
        branch["temperature"]["maximum"] = 2
        branch["task"]["maxLength"] = 10000
        schema["$id"] = "https://wiregate.dev/schemas/rollout-wire/v2"

    edit_wire(wiregate_repo, bump)
    result = check_breaking(locate(root_of(wiregate_repo)), policy="lenient")
    assert (result.status, result.summary) == (
        StepStatus.PASSED,
        "3 breaking changes since HEAD, with a version bump (lenient)",
    )
    assert result.details == (
        "contracts/rollout-wire.schema.json: 3 breaking changes with a version bump "
        "(https://wiregate.dev/schemas/rollout-wire/v1 -> https://wiregate.dev/schemas/rollout-wire/v2)",
    )


def test_allow_breaking_says_so(wiregate_repo: git.Repo) -> None:
    edit_wire(wiregate_repo, add_required_field)
    result = check_breaking(
        locate(root_of(wiregate_repo)), allow_breaking="readers updated", policy="lenient"
    )
    assert result.status is StepStatus.PASSED
    assert (
        result.summary
        == "1 breaking change since HEAD allowed by --allow-breaking: readers updated (lenient)"
    )
    assert result.details[0].endswith(
        "without a version bump, allowed by --allow-breaking: readers updated"
    )


def test_optional_field_in_open_record_is_breaking_only_under_strict(
    wiregate_repo: git.Repo,
) -> None:
    """check judges with the same default policy as diff and drift (strict), and says so."""
    edit_wire(wiregate_repo, add_optional_field)
    strict = check_breaking(locate(root_of(wiregate_repo)))
    assert (strict.status, strict.summary) == (
        StepStatus.FAILED,
        "breaking change without a version bump since HEAD (strict)",
    )
    lenient = check_breaking(locate(root_of(wiregate_repo)), policy="lenient")
    assert (lenient.status, lenient.summary) == (
        StepStatus.PASSED,
        "no breaking change since HEAD (lenient)",
    )


def test_unknown_against_ref_is_an_error(wiregate_repo: git.Repo) -> None:
    result = check_breaking(locate(root_of(wiregate_repo)), against="v9")
    assert result.status is StepStatus.ERROR
    assert result.summary == f"{wiregate_repo.working_dir}: unknown git ref 'v9'"


def test_stale_generated_code_fails_with_the_diff(wiregate_repo: git.Repo) -> None:
    edit_wire(wiregate_repo, add_required_field)
    result = check_codegen(locate(root_of(wiregate_repo)))
    assert result.status is StepStatus.FAILED
    assert (
        result.summary
        == "generated code is stale: run `wiregate codegen` and commit datafactory/wire/"
    )
    assert "+    policy_digest: str" in result.details


def test_mislabelled_fixture_fails(wiregate_repo: git.Repo) -> None:
    root = root_of(wiregate_repo)
    valid = root / "contracts/fixtures/rollout-wire/DpoRecord/valid/producer.json"
    (valid.parent.parent / "invalid" / "producer.json").write_bytes(valid.read_bytes())
    result = check_contract_files(locate(root))
    assert result.status is StepStatus.FAILED
    assert result.details == (
        "contracts/fixtures/rollout-wire/DpoRecord/invalid/producer.json: "
        "labelled invalid but is valid as DpoRecord: the validator finds no problem in it",
    )


def test_version_marks() -> None:
    schema = {"$id": "x/v1", "$defs": {"A": {"properties": {"schema_version": {"const": "a/v1"}}}}}
    assert version_marks(schema) == ("x/v1", ("a/v1",))
    # data is no mark: an example holding {"schema_version": {"const": ...}} excused a break
    data = {"$id": "x/v1", "examples": [{"schema_version": {"const": "x/v2"}}]}
    assert version_marks({**data, "default": data["examples"][0]}) == ("x/v1", ())
    definition = {"$defs": {"SchemaVersion": {"const": "x/v3"}, "B": {"enum": [{"const": 1}]}}}
    assert version_marks(definition) == (None, ("x/v3",))


def test_a_version_bump_must_raise_the_version() -> None:
    v1 = ("https://wiregate.dev/schemas/rollout-wire/v1", ("rollout-wire/v1",))
    v2 = ("https://wiregate.dev/schemas/rollout-wire/v2", ("rollout-wire/v2",))
    assert is_version_bump(v1, v2)
    assert not is_version_bump(v2, v1)  # going back is no bump
    assert not is_version_bump(v1, v1)
    assert is_version_bump(v1, (v1[0], ("rollout-wire/v1.1",)))
    assert is_version_bump(("x", ()), ("y", ()))  # no numbers: any change counts
    assert is_version_bump(("x", ()), ("x/v1", ()))  # a first number
    assert not is_version_bump(v1, ("https://wiregate.dev/schemas/rollout-wire/latest", ()))
    # numbers of any length (int() stops at 4,300 digits: an internal error)
    long = "https://wiregate.dev/schemas/rollout-wire/v" + "9" * 5000
    assert is_version_bump(v1, (long, ()))
    assert not is_version_bump((long, ()), (long[:-1], ()))
    assert is_version_bump((long[:-1], ()), (long[:-1] + ".1", ()))
    assert not is_version_bump(("x/v010", ()), ("x/v9", ()))  # 10 > 9, leading zeros aside


def test_a_downgraded_id_does_not_excuse_a_breaking_change(wiregate_repo: git.Repo) -> None:
    def downgrade(schema: dict[str, Any]) -> None:
        add_required_field(schema)
        schema["$id"] = "https://wiregate.dev/schemas/rollout-wire/v0"

    edit_wire(wiregate_repo, downgrade)
    assert check_breaking(locate(root_of(wiregate_repo))).status is StepStatus.FAILED


def test_bumped_and_allowed_changes_are_both_in_the_summary(wiregate_repo: git.Repo) -> None:
    def bump(schema: dict[str, Any]) -> None:
        add_required_field(schema)
        schema["$id"] = "https://wiregate.dev/schemas/rollout-wire/v2"

    edit_wire(wiregate_repo, bump)
    training = root_of(wiregate_repo) / "contracts/training-record.schema.json"
    schema = json.loads(training.read_text())
    record = schema["$defs"]["DpoTrainingRecord"]
    record["properties"]["policy_digest"] = {"type": "string"}
    record["required"].append("policy_digest")
    training.write_text(json.dumps(schema, indent=2) + "\n")

    result = check_breaking(
        locate(root_of(wiregate_repo)), allow_breaking="readers updated", policy="lenient"
    )
    assert (result.status, result.summary) == (
        StepStatus.PASSED,
        "1 breaking change since HEAD, with a version bump; "
        "2 breaking changes since HEAD allowed by --allow-breaking: readers updated (lenient)",
    )
    assert result.details[1:] == (
        "contracts/training-record.schema.json: 2 breaking changes without a version bump, "
        "allowed by --allow-breaking: readers updated",
        "  property-added-to-closed-model at #/$defs/DpoTrainingRecord/properties/policy_digest: "
        "property 'policy_digest' added to a closed model: old readers reject that key",
        "  required-added at #/$defs/DpoTrainingRecord/required: property 'policy_digest' "
        "became required: old records without it are rejected",
    )


def test_a_fixture_labelled_valid_shows_why_it_is_invalid(wiregate_repo: git.Repo) -> None:
    """The validator's problems (pointer and message), under a path relative to the repository."""
    root = root_of(wiregate_repo)
    invalid = root / "contracts/fixtures/rollout-wire/DpoRecord/invalid/missing-provenance.json"
    (invalid.parent.parent / "valid" / "missing-provenance.json").write_bytes(invalid.read_bytes())
    result = check_contract_files(locate(root))
    assert (result.status, result.summary) == (StepStatus.FAILED, "1 of 102 fixtures mislabelled")
    assert result.details == (
        "contracts/fixtures/rollout-wire/DpoRecord/valid/missing-provenance.json: "
        "labelled valid but is invalid as DpoRecord:",
        "    /provenance: required property is missing",
    )
    assert [(p.message, p.file) for p in result.problems] == [
        (
            "contracts/fixtures/rollout-wire/DpoRecord/valid/missing-provenance.json: "
            "labelled valid but is invalid as DpoRecord: /provenance: required property is missing",
            "contracts/fixtures/rollout-wire/DpoRecord/valid/missing-provenance.json",
        )
    ]
