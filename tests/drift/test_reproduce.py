"""The drift gate prints, for each copy with changes, the ``wiregate diff`` command that
reproduces them; running that command gives the same changes."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from contracts import Contract
from wiregate.cli import main
from wiregate.drift import expected_copy, load_mirrors

from .conftest import schema_copy_args

CONSUMER_COPY = "schemas/rollout-wire.schema.json"  # RolloutBranchRecord, as a whole file
PRODUCER_COPY = "schemas/dpo-training-record.schema.json"  # DpoTrainingRecord


@pytest.fixture
def checkout(contract: Contract, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """trace-pipeline's three copies, two of them drifted, committed to git, in a folder whose
    name needs quoting in a shell."""
    monkeypatch.chdir(tmp_path)
    for name in ("WASMAGENT_JS", "TRACE_PIPELINE", "WASMAGENT_PROTOCOL"):
        monkeypatch.delenv(f"WIREGATE_REPO_{name}", raising=False)
    root = tmp_path / "trace pipeline"
    repository = load_mirrors(contract).repository("trace-pipeline")
    for spec in (s for s in repository.copies if not s.code):
        document = expected_copy(contract, spec)
        if spec.paths[0] == CONSUMER_COPY:
            document["required"] = [*document["required"], "tag"]
        if spec.paths[0] == PRODUCER_COPY:
            document["additionalProperties"] = True
            document.pop("required")
        target = root / spec.paths[0]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(document, indent=2), encoding="utf-8")
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-q", "-m", "copies"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
            cwd=root,
            check=True,
            capture_output=True,
        )
    return root


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout


def _changes(document: dict[str, Any]) -> list[dict[str, Any]]:
    # the diff's own fields: drift adds its judgement, its words, the places in each file and
    # what the baseline makes of it
    drift_only = {
        "breaking",
        "drift_message",
        "record_type",
        "copy_location",
        "contract_location",
        "fingerprint",
        "accepted",
        "present_at_ref",
        "blocking",
    }
    return [{k: v for k, v in c.items() if k not in drift_only} for c in document["changes"]]


@pytest.mark.parametrize("ref", [None, "HEAD"])
def test_the_reproduce_command_gives_the_same_changes(
    repo_root: Path, checkout: Path, ref: str | None
) -> None:
    at_ref = ["--ref", ref] if ref else []
    code, out = _invoke(
        "--root", str(repo_root), "drift", "--repo", f"trace-pipeline={checkout}", *at_ref,
        "--format", "json", *schema_copy_args("trace-pipeline"),
    )  # fmt: skip
    assert code == 1, out
    copies = json.loads(out)["copies"]
    assert [(c["copy"], c["verdict"]) for c in copies] == [
        ("rollout-wire", "breaking-drift"),
        ("dpo-training-record", "breaking-drift"),
        ("ppo-training-record", "identical"),
    ]
    assert copies[2]["reproduce"] is None
    copy_file = f"{checkout.name}/{PRODUCER_COPY}"  # relative to the working directory
    if ref:
        copy_file = f"{checkout.name}@{copies[1]['commit']}:{PRODUCER_COPY}"
    assert copies[1]["reproduce"] == (
        f"wiregate diff '{repo_root}/contracts/training-record.schema.json#/$defs/DpoTrainingRecord' "
        f"{shlex.quote(copy_file)} --mode forward --policy strict"
    )
    for copy in copies[:2]:
        command = shlex.split(copy["reproduce"])
        assert command[:2] == ["wiregate", "diff"]
        code, diffed = _invoke(*command[1:], "--format", "json")
        assert code == 1, diffed
        assert json.loads(diffed)["changes"] == _changes(copy)
        assert len(copy["changes"]) >= 1


def test_the_text_report_ends_each_drifted_copy_with_it(repo_root: Path, checkout: Path) -> None:
    code, out = _invoke(
        "--root",
        str(repo_root),
        "drift",
        "--repo",
        f"trace-pipeline={checkout}",
        *schema_copy_args("trace-pipeline"),
    )
    assert code == 1
    reproduce = [line for line in out.splitlines() if line.startswith("    reproduce: ")]
    assert reproduce == [
        "    reproduce: wiregate diff "
        f"'{repo_root}/contracts/rollout-wire.schema.json#/$defs/RolloutBranchRecord' "
        f"'{checkout.name}/{CONSUMER_COPY}' --mode backward --policy strict",
        "    reproduce: wiregate diff "
        f"'{repo_root}/contracts/training-record.schema.json#/$defs/DpoTrainingRecord' "
        f"'{checkout.name}/{PRODUCER_COPY}' --mode forward --policy strict",
    ]
