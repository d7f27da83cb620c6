"""A code copy's findings point at the line and column where the TypeScript property or the
Python field is declared (in the file that declares it), in every report format, at a ref as
in the work tree; their witnesses are records the code admits and the contract rejects (or
the reverse for a consumer)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from contracts import Contract
from wiregate.drift import CopyResult, run_drift
from wiregate.drift.code import CodeCopies
from wiregate.drift.config import load_mirrors
from wiregate.drift.copies import CodeRoot
from wiregate.drift.findings import Location
from wiregate.reporters.drift import render_drift_sarif, render_github, render_text

from .conftest import lay_out_trace, lay_out_wasmagent

EXPORTER = "packages/core/src/ranking/RolloutExporter.ts"
ANNOTATOR = "packages/core/src/ranking/RolloutSFTAnnotator.ts"
EVENTS = "packages/core/src/types/events.ts"
ROLLOUT = "evomerge/schemas/rollout.py"


def _extracted(contract: Contract, repository: str, copy_id: str, root: Path) -> Any:
    spec = load_mirrors(contract).repository(repository).copy(copy_id)
    path = next(p for p in spec.paths if (root / p).is_file())
    return CodeCopies(CodeRoot(root), [spec]).schema(spec, path)


def _valid(schema: Any, instance: Any) -> bool:
    return jsonschema.validators.validator_for(schema)(schema).is_valid(instance)


def _canonical(contract: Contract, schema: str, name: str) -> dict[str, Any]:
    return {**contract.schemas[schema], "$ref": f"#/$defs/{name}"}


def _entries(result: CopyResult) -> list[tuple[str, Location | None]]:
    return [(e.head.change.id, e.head.copy_location) for e in result.entries]


@pytest.fixture(scope="module")
def producer_head(corpus_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return lay_out_wasmagent(corpus_dir, "6a62876", tmp_path_factory.mktemp("wasmagent-js"))


def test_typescript_findings_point_at_the_property_in_the_file_declaring_it(
    contract: Contract, producer_head: Path
) -> None:
    report = run_drift(
        contract,
        {"wasmagent-js": producer_head},
        repositories=["wasmagent-js"],
        copies=["dpo-record-type"],
    )
    (dpo,) = report.results
    # TurnAnnotation's camelCase keys are declared in RolloutSFTAnnotator.ts, the event union
    # in events.ts; the closed object is the interface itself.
    assert _entries(dpo) == [
        ("property-added-to-closed-model", Location(ANNOTATOR, 6, 3)),
        ("any-of-added", Location(EVENTS, 41, 13)),
        ("additional-properties-closed", Location(EXPORTER, 17, 18)),
    ]
    located = {(f.change.id, f.change.new_pointer): f.copy_location for f in dpo.judged}
    provenance = "#/properties/provenance/properties"
    # A lens finding too; a name in `required` is placed at its property.
    assert located["ts-number-for-integer", f"{provenance}/chosen_branch/type"] == Location(
        EXPORTER, 26, 5
    )
    required = [
        (f.change.subject, f.copy_location) for f in dpo.judged if f.change.id == "required-added"
    ]
    assert required == [
        ("lossWeightTokens", Location(ANNOTATOR, 6, 3)),
        ("turnIndex", Location(ANNOTATOR, 5, 3)),
    ]

    github = render_github(report).splitlines()
    assert [line.split("::")[1].split(",title=")[0] for line in github[:3]] == [
        f"error file={ANNOTATOR},line=6,col=3",
        f"error file={EVENTS},line=41,col=13",
        f"warning file={EXPORTER},line=17,col=18",
    ]
    sarif = json.loads(render_drift_sarif(report))
    places = [
        (
            r["ruleId"],
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["locations"][0]["physicalLocation"]["region"],
        )
        for r in sarif["runs"][0]["results"]
    ]
    assert places == [
        ("property-added-to-closed-model", ANNOTATOR, {"startLine": 6, "startColumn": 3}),
        ("any-of-added", EVENTS, {"startLine": 41, "startColumn": 13}),
        ("additional-properties-closed", EXPORTER, {"startLine": 17, "startColumn": 18}),
    ]
    # The text names the file when it is not the one declaring the copy's type.
    text = render_text(report).splitlines()
    assert text[1].endswith(f"[8 changes in DpoRecord; copy {ANNOTATOR}:6:3, contract 187:5]")
    assert text[3].endswith("[1 change in DpoRecord; copy 17:18, contract 197:5]")

    # The witness: a record the producer's type admits that the contract rejects.
    witness = dpo.entries[0].head.change.witness
    assert witness is not None and witness.direction == "forward"
    typed = _extracted(contract, "wasmagent-js", "dpo-record-type", producer_head)
    canonical = _canonical(contract, "rollout-wire", "DpoRecord")
    assert (_valid(typed, witness.instance), _valid(canonical, witness.instance)) == (True, False)


def test_python_findings_point_at_the_field(
    contract: Contract, corpus_dir: Path, tmp_path: Path
) -> None:
    root = lay_out_trace(corpus_dir, "556ef10", tmp_path)
    report = run_drift(
        contract,
        {"trace-pipeline": root},
        repositories=["trace-pipeline"],
        copies=["branch-record-model"],
    )
    (branch,) = report.results
    entries = _entries(branch)
    # ToolCallEntry (line 9) declares tool_name (10), arguments (11), error (13); the
    # record's fields from line 30 on; a property the model lacks is placed at its class.
    assert entries[:5] == [
        ("property-added-to-open-model", Location(ROLLOUT, 11, 5)),
        ("minimum-removed", Location(ROLLOUT, 32, 5)),
        ("property-removed-from-open-model", Location(ROLLOUT, 37, 5)),  # build_result
        ("property-removed-from-open-model", Location(ROLLOUT, 37, 5)),
        ("property-removed-from-open-model", Location(ROLLOUT, 22, 1)),  # the record
    ]
    required = {
        f.change.subject: f.copy_location
        for f in branch.judged
        if f.change.id == "required-added" and f.change.new_pointer.startswith("#/$defs/")
    }
    assert required == {"tool_name": Location(ROLLOUT, 10, 5)}
    github = render_github(report).splitlines()
    assert github[0] == (
        f"::error file={ROLLOUT},line=11,col=5,title=wiregate drift trace-pipeline "
        "branch-record-model%3A property-added-to-open-model%2C required-added%2C "
        "property-removed-from-open-model%2C required-removed::trace-pipeline's copy differs "
        "from the contract at `ToolCallEntry.arguments` (property-added-to-open-model): the "
        "contract allows records trace-pipeline rejects (9 changes in ToolCallEntry, "
        "ToolCallEvent)"
    )
    # The witness: a record the contract allows that the model (what it accepts) rejects.
    witness = branch.entries[0].head.change.witness
    assert witness is not None and witness.direction == "backward"
    model = _extracted(contract, "trace-pipeline", "branch-record-model", root)
    canonical = _canonical(contract, "rollout-wire", "RolloutBranchRecord")
    assert (_valid(canonical, witness.instance), _valid(model, witness.instance)) == (True, False)
    assert witness.instance["tool_call_sequence"] == [{"data": {}, "event": "tool_call"}]


def test_positions_at_a_ref_and_the_temporary_folder_is_removed(
    contract: Contract, code_repos: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("WIREGATE_CACHE_DIR", str(tmp_path / "cache"))  # extracted afresh
    wasmagent = code_repos["wasmagent-js"]
    (dpo,) = run_drift(
        contract,
        {"wasmagent-js": wasmagent},
        ref="orig-711b817",
        repositories=["wasmagent-js"],
        copies=["dpo-record-type"],
    ).results
    located = {f.change.new_pointer: f.copy_location for f in dpo.judged}
    # The first revision wrote the provenance keys in camelCase, on these lines.
    assert located["#/properties/provenance/properties/rolloutId"] == Location(EXPORTER, 14, 5)
    (since,) = run_drift(
        contract,
        {"wasmagent-js": wasmagent},
        repositories=["wasmagent-js"],
        copies=["dpo-record-type"],
        new_since="orig-8c9cd5d",
    ).results
    # Only the new finding is an entry (the others were there at the ref), on its line.
    assert _entries(since) == [("any-of-added", Location(EVENTS, 41, 13))]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache"]


def test_sigterm_during_an_extraction_at_a_ref_leaves_no_folder(
    code_repos: dict[str, Path], repo_root: Path, tmp_path: Path
) -> None:
    """The extraction at a ref runs in a temporary folder: SIGTERM ends the run with 143 and
    the folder (and the extraction) goes with it."""
    node = tmp_path / "node"
    started = tmp_path / "started"
    node.write_text(f"#!/bin/sh\ntouch {started}\nexec sleep 30\n", encoding="utf-8")
    node.chmod(0o755)
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    env = {
        **os.environ,
        "TMPDIR": str(temporary),
        "WIREGATE_NODE": str(node),
        "WIREGATE_CACHE_DIR": str(tmp_path / "cache"),
    }
    command = [
        *(str(Path(sys.executable).with_name("wiregate")), "--root", str(repo_root), "drift"),
        *("--repo", f"wasmagent-js={code_repos['wasmagent-js']}", "--copy", "dpo-record-type"),
        *("--ref", "orig-711b817"),
    ]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [p.name[:13] for p in temporary.iterdir()] == ["wiregate-ref-"]
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
    finally:
        process.kill()
        process.wait()
    assert (process.returncode, stderr.decode()) == (143, "wiregate: terminated\n")
    assert list(temporary.iterdir()) == []
