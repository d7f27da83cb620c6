"""The exporter judges records by the contract its generated types came from (bundled, its
hash checked against the generated code), not by a checkout around the current directory;
another contract only when named."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from contracts import BUNDLED_DIR, SCHEMA_FILES, ContractError, locate
from datafactory import contract as exporter
from tests.datafactory.helpers import RunCli, branch, write_jsonl


@pytest.fixture
def other_checkout(tmp_path: Path) -> Path:
    """A wiregate checkout whose contract requires one more field of a branch record."""
    root = tmp_path / "checkout"
    (root / "contracts").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "wiregate"\n')
    for name in SCHEMA_FILES.values():
        shutil.copy(BUNDLED_DIR / name, root / "contracts" / name)
    path = root / "contracts" / "rollout-wire.schema.json"
    schema = json.loads(path.read_bytes())
    schema["$defs"]["RolloutBranchRecord"]["required"].append("reviewer")
    path.write_text(json.dumps(schema))
    return root


def test_a_checkout_in_the_working_directory_is_not_the_judge(
    tmp_path: Path, run_cli: RunCli, other_checkout: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rollouts = write_jsonl(tmp_path / "in.jsonl", [branch("r", 0), branch("r", 1)])
    monkeypatch.chdir(other_checkout)
    assert locate().directory == other_checkout / "contracts"  # what the exporter used to take
    result = run_cli(rollouts)
    assert result.exit_code == 0, result.stderr
    assert result.manifest()["lines"] == {"read": 2, "accepted": 2, "rejected": 0, "blank": 0}


@pytest.mark.parametrize("given", ["root", "contracts"])
def test_a_contract_named_explicitly_is_the_judge(
    tmp_path: Path, run_cli: RunCli, other_checkout: Path, given: str
) -> None:
    rollouts = write_jsonl(tmp_path / "in.jsonl", [branch("r", 0), branch("r", 1)])
    directory = other_checkout if given == "root" else other_checkout / "contracts"
    result = run_cli(rollouts, args=("--contract", str(directory)))
    assert result.exit_code == 0, result.stderr
    assert result.manifest()["rejected"] == {"contract-violation": 2}
    assert {r["detail"] for r in result.rejects()} == {
        "RolloutBranchRecord /reviewer: required property is missing"
    }


@pytest.mark.parametrize(
    ("loosen", "finding"),
    [
        # A task of any type reached the G3 normaliser: AttributeError, exit 1
        (
            lambda record: record["properties"].update(task={}),
            "min-length-removed at #/$defs/RolloutBranchRecord/properties/task: minLength 1 "
            "removed",
        ),
        # A record without its branch index: KeyError in the load stage, exit 1
        (
            lambda record: record.update(required=["rollout_id"]),
            "required-removed at #/$defs/RolloutBranchRecord/required: property "
            "'branch_index' is no longer required: new records may omit it",
        ),
    ],
)
def test_a_named_contract_may_narrow_what_is_read_not_widen_it(
    tmp_path: Path, run_cli: RunCli, other_checkout: Path, loosen: Any, finding: str
) -> None:
    path = other_checkout / "contracts" / "rollout-wire.schema.json"
    schema = json.loads(path.read_bytes())
    loosen(schema["$defs"]["RolloutBranchRecord"])
    path.write_text(json.dumps(schema))
    rollouts = write_jsonl(tmp_path / "in.jsonl", [branch("r", 0)])
    result = run_cli(rollouts, args=("--contract", str(other_checkout)))
    assert (result.exit_code, result.stderr) == (
        2,
        f"datafactory: error: {other_checkout}: its RolloutBranchRecord accepts records the "
        f"exporter's own contract does not, which its types cannot read ({finding}); a "
        "contract named here may narrow what is read, not widen it\n",
    )
    assert list(result.out.iterdir()) == []


def test_a_named_contract_defines_every_record_type_read(
    tmp_path: Path, run_cli: RunCli, other_checkout: Path
) -> None:
    """A record of the type it lacks stopped the run halfway ("unknown record type")."""
    path = other_checkout / "contracts" / "rollout-wire.schema.json"
    schema = json.loads(path.read_bytes())
    del schema["$defs"]["RolloutTreeRecord"]
    schema["oneOf"] = [m for m in schema["oneOf"] if "RolloutTreeRecord" not in m["$ref"]]
    path.write_text(json.dumps(schema))
    rollouts = write_jsonl(tmp_path / "in.jsonl", [branch("r", 0)])
    result = run_cli(rollouts, args=("--contract", str(other_checkout)))
    assert (result.exit_code, result.stderr) == (
        2,
        f"datafactory: error: {other_checkout}: defines no RolloutTreeRecord, a record type "
        "the exporter reads\n",
    )


def test_a_contract_directory_without_one(tmp_path: Path, run_cli: RunCli) -> None:
    rollouts = write_jsonl(tmp_path / "in.jsonl", [branch("r", 0)])
    result = run_cli(rollouts, args=("--contract", str(tmp_path / "none")))
    assert (result.exit_code, result.stderr) == (
        2,
        f"datafactory: error: {tmp_path / 'none'}: no contract there (neither "
        "rollout-wire.schema.json nor contracts/rollout-wire.schema.json)\n",
    )
    assert list(result.out.iterdir()) == []


def test_bundled_contract_matches_the_generated_code() -> None:
    found = exporter.exporter_contract()
    assert (found.directory, found.bundled) == (BUNDLED_DIR, True)


def test_bundled_contract_that_differs_from_the_generated_code_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = exporter.GENERATED_HEADER.read_text()
    stale = tmp_path / "__init__.py"  # as if the schema changed with no regeneration
    stale.write_text(
        re.sub(r"(rollout-wire\.schema\.json sha256=)[0-9a-f]{64}", r"\g<1>" + "0" * 64, text)
    )
    monkeypatch.setattr(exporter, "GENERATED_HEADER", stale)
    exporter._bundled.cache_clear()
    try:
        with pytest.raises(ContractError) as error:
            exporter.exporter_contract()
    finally:
        exporter._bundled.cache_clear()
    assert str(error.value) == (
        f"{BUNDLED_DIR / 'rollout-wire.schema.json'}: the bundled schema is not the one the "
        f"generated types in {tmp_path} came from (its sha256 differs from their header)"
    )
