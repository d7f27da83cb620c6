"""The contract files themselves: metaschema, naming rules, fixtures as labelled, engines agree."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from contracts import SCHEMA_FILES, Contract, ContractError, locate
from wiregate.record_validator import RecordValidator, ValidatorSet

CONTRACT = locate(Path(__file__).resolve().parents[2])
FIXTURES = list(CONTRACT.fixtures())


@pytest.mark.parametrize("name", sorted(SCHEMA_FILES))
def test_schema_is_valid_draft_2020_12(name: str) -> None:
    schema = CONTRACT.load_schema(name)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    version = {"rollout-wire": "v1", "training-record": "v2", "trl-record": "v1"}[name]
    assert schema["$id"] == f"https://wiregate.dev/schemas/{name}/{version}"


def _objects_outside_defs(node: Any, path: str) -> list[str]:
    """Pointers of inline object schemas that declare properties (they must be named $defs)."""
    found: list[str] = []
    if isinstance(node, dict):
        if "properties" in node and path.count("/") != 2:
            found.append(path)
        for key, value in node.items():
            found.extend(_objects_outside_defs(value, f"{path}/{key}"))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found.extend(_objects_outside_defs(value, f"{path}/{index}"))
    return found


@pytest.mark.parametrize("name", sorted(SCHEMA_FILES))
def test_every_object_type_is_a_named_definition(name: str) -> None:
    schema = CONTRACT.load_schema(name)
    assert _objects_outside_defs(schema["$defs"], "#/$defs") == []
    assert "properties" not in schema


def test_record_types_are_the_root_one_of_members() -> None:
    assert CONTRACT.record_types == {
        "RolloutBranchRecord": "rollout-wire",
        "RolloutTreeRecord": "rollout-wire",
        "DpoRecord": "rollout-wire",
        "PpoRecord": "rollout-wire",
        "DpoTrainingRecord": "training-record",
        "PpoTrainingRecord": "training-record",
        "SftTrainingRecord": "training-record",
        "TrlPreferenceRecord": "trl-record",
        "TrlPromptRecord": "trl-record",
        "TrlKtoRecord": "trl-record",
        "TrlSftRecord": "trl-record",
    }


def test_branch_record_requires_what_the_pipeline_documents() -> None:
    branch = CONTRACT.schemas["rollout-wire"]["$defs"]["RolloutBranchRecord"]
    assert branch["required"] == [
        "rollout_id", "task", "branch_index", "temperature", "session_id",
        "tool_call_sequence", "final_answer", "objective_score", "rank", "total_score",
    ]  # fmt: skip
    assert branch["additionalProperties"] is True


def test_provenance_objects_are_closed() -> None:
    defs = {
        **CONTRACT.schemas["rollout-wire"]["$defs"],
        **CONTRACT.schemas["training-record"]["$defs"],
    }
    for name in ("DpoProvenance", "PpoProvenance", "DpoObjectiveScore", "Provenance"):
        assert defs[name]["additionalProperties"] is False, name


def test_each_record_type_has_three_valid_and_three_invalid_fixtures() -> None:
    counts: dict[tuple[str, bool], int] = {}
    for _schema, definition, expected_valid, _path in FIXTURES:
        counts[definition, expected_valid] = counts.get((definition, expected_valid), 0) + 1
    for record_type in CONTRACT.record_types:
        assert counts.get((record_type, True), 0) >= 3, record_type
        assert counts.get((record_type, False), 0) >= 3, record_type


@pytest.mark.parametrize(
    ("schema_name", "definition", "expected_valid", "path"),
    FIXTURES,
    ids=[f"{d}/{'valid' if v else 'invalid'}/{p.stem}" for _s, d, v, p in FIXTURES],
)
def test_fixture_is_labelled_correctly(
    schema_name: str, definition: str, expected_valid: bool, path: Path
) -> None:
    assert CONTRACT.definitions[definition] == schema_name
    record = json.loads(path.read_text())
    validator = RecordValidator(definition, CONTRACT.schemas[schema_name])
    reference = jsonschema.Draft202012Validator(
        {"$defs": CONTRACT.schemas[schema_name]["$defs"], "$ref": f"#/$defs/{definition}"}
    )
    # The fast engine and the reference engine agree on every fixture.
    assert validator.is_valid(record) is reference.is_valid(record) is expected_valid
    problems = validator.explain(record)
    if expected_valid:
        assert problems == []
    else:
        # Each invalid fixture breaks exactly one rule, at one place.
        assert len(problems) == 1, problems


def test_whole_document_accepts_each_valid_fixture_as_exactly_one_record_type() -> None:
    for schema_name, _definition, expected_valid, path in FIXTURES:
        record = json.loads(path.read_text())
        if expected_valid:
            jsonschema.validate(record, CONTRACT.schemas[schema_name])


def test_locate_uses_the_enclosing_repository(
    monkeypatch: pytest.MonkeyPatch, repo_root: Path
) -> None:
    monkeypatch.chdir(repo_root / "contracts" / "fixtures")
    found = locate()
    assert found == Contract(repo_root / "contracts", bundled=False)


def test_locate_falls_back_to_the_bundled_copy_outside_a_wiregate_repo(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "contracts").mkdir()  # another repository's contracts/ folder is not ours
    monkeypatch.chdir(tmp_path)
    found = locate()
    assert found.bundled
    assert found.schema_path("rollout-wire").is_file()


def test_locate_with_a_root_that_is_not_a_wiregate_repo(tmp_path: Path) -> None:
    with pytest.raises(ContractError, match="not a wiregate repository"):
        locate(tmp_path)


def test_unknown_record_type_is_named() -> None:
    with pytest.raises(ContractError, match="unknown record type 'Nope'"):
        ValidatorSet(CONTRACT).get("Nope")


def test_broken_schema_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "contracts").mkdir()
    (tmp_path / "contracts" / "rollout-wire.schema.json").write_text("{not json")
    (tmp_path / "contracts" / "training-record.schema.json").write_text("{}")
    (tmp_path / "contracts" / "trl-record.schema.json").write_text("{}")
    with pytest.raises(ContractError, match=r"rollout-wire\.schema\.json: not valid JSON"):
        _ = locate(tmp_path).schemas


def test_locate_finds_wiregate_in_a_subfolder_of_a_larger_repository(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, repo_root: Path
) -> None:
    (tmp_path / ".git").mkdir()
    inner = tmp_path / "tools" / "wiregate"
    (inner / "contracts").mkdir(parents=True)
    for name in SCHEMA_FILES.values():
        (inner / "contracts" / name).write_bytes((repo_root / "contracts" / name).read_bytes())
    (inner / "pyproject.toml").write_text('[project]\nname = "wiregate"\n')
    (inner / "docs").mkdir()
    monkeypatch.chdir(inner / "docs")
    assert locate() == Contract(inner / "contracts", bundled=False)


def test_a_schema_that_breaks_the_metaschema_is_named_with_its_place(tmp_path: Path) -> None:
    (tmp_path / "contracts").mkdir()
    schema = CONTRACT.load_schema("rollout-wire")
    schema["$defs"]["RolloutBranchRecord"]["properties"]["rank"]["type"] = "integr"
    (tmp_path / "contracts" / "rollout-wire.schema.json").write_text(json.dumps(schema))
    (tmp_path / "contracts" / "training-record.schema.json").write_text("{}")
    (tmp_path / "contracts" / "trl-record.schema.json").write_text("{}")
    with pytest.raises(ContractError) as raised:
        ValidatorSet(locate(tmp_path)).get("RolloutBranchRecord")
    assert str(raised.value) == (
        "contracts/rollout-wire.schema.json: /$defs/RolloutBranchRecord/properties/rank/type: "
        "\"integr\" is not valid under any of the schemas listed in the 'anyOf' keyword"
    )


def test_a_remote_ref_in_the_contract_is_never_fetched(tmp_path: Path) -> None:
    (tmp_path / "contracts").mkdir()
    schema = CONTRACT.load_schema("rollout-wire")
    schema["$defs"]["DpoRecord"]["properties"]["provenance"] = {
        "$ref": "https://example.com/p.json"
    }
    (tmp_path / "contracts" / "rollout-wire.schema.json").write_text(json.dumps(schema))
    (tmp_path / "contracts" / "training-record.schema.json").write_text("{}")
    (tmp_path / "contracts" / "trl-record.schema.json").write_text("{}")
    with pytest.raises(
        ContractError, match=r"^contracts/rollout-wire\.schema\.json: .*Retrieval is disabled"
    ):
        ValidatorSet(locate(tmp_path)).get("DpoRecord")


def test_both_engines_explain_every_invalid_fixture_alike() -> None:
    """The compiled engine's errors are worded as the reference engine's (its fast path)."""
    validators = ValidatorSet(CONTRACT)
    compared = 0
    for _schema, definition, expected_valid, path in FIXTURES:
        if expected_valid:
            continue
        record = json.loads(path.read_text())
        validator = validators.get(definition)
        assert validator.explain(record) == validator.explain_reference(record), path
        compared += 1
    assert compared == 64
