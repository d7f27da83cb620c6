"""Three-repo smoke test: producer data through the exporter, and the contract's copies in the
producer (wasmagent-js) and consumer (trace-pipeline) checkouts judged by the drift gate.

No LLM calls. Runs under pytest and on its own: ``python tests/test_three_repo_smoke.py``.

The checkouts come from ``WIREGATE_REPO_WASMAGENT_JS`` and ``WIREGATE_REPO_TRACE_PIPELINE``
when set; a real drift there is then a real failure, reported with its findings. Otherwise the
test lays out throwaway git checkouts like the real ones holding the canonical contract, so
the cross-repo step always runs, and a second case swaps one copy for a real drifted revision
from ``../shared/corpus/schemas`` (or, without the corpus, a drifted copy it makes).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

if __name__ == "__main__":
    # Run as a script, sys.path[0] is tests/, whose folders would shadow the packages under test.
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import git
import orjson
import pytest

from contracts import Contract, locate
from datafactory import export, load_rollouts
from datafactory.wire import BuildResult, RolloutBranchRecord
from wiregate.drift import run_drift
from wiregate.drift.config import load_mirrors
from wiregate.drift.expected import expected_copy
from wiregate.drift.result import DriftReport, Verdict
from wiregate.record_validator import ValidatorSet

REPO_ROOT = Path(__file__).resolve().parents[1]
CORPUS = (REPO_ROOT / ".." / "shared" / "corpus").resolve()
GOVERNED = {
    "wasmagent-js": "WIREGATE_REPO_WASMAGENT_JS",
    "trace-pipeline": "WIREGATE_REPO_TRACE_PIPELINE",
}
TASK = "Add a hello world button to the page"


@pytest.fixture(scope="module")
def contract() -> Contract:
    return locate(REPO_ROOT)


def branch(index: int, passes: bool) -> dict[str, Any]:
    """A Layer 1 branch record as RolloutForkRunner writes it (no LLM: fixed answers)."""
    return {
        "schema_version": "rollout-wire/v1",
        "rollout_id": "smoke-rollout-001",
        "task": TASK,
        "branch_index": index,
        "temperature": 0.2 if passes else 0.9,
        "session_id": "smoke-session-001",
        "tool_call_sequence": [
            {
                "event": "tool_call",
                "data": {
                    "name": "write_file",
                    "args": {"path": "src/Button.tsx"},
                    "call_id": f"c{index}",
                },
            },
            {"event": "tool_result", "data": {"output": "ok", "call_id": f"c{index}"}},
        ],
        "final_answer": "Added HelloButton to src/Button.tsx" if passes else "Left a TODO",
        "build_result": {"status": "pass" if passes else "fail", "exit_code": 0 if passes else 1},
        "objective_score": 1 if passes else 0,
        "objective_status": "pass" if passes else "fail",
        "rank": 1 if passes else 2,
        "total_score": 1.15 if passes else 0.15,
    }


def test_layer1_through_the_exporter(tmp_path: Path, contract: Contract) -> None:
    rollouts = tmp_path / "rollout-branches.jsonl"
    rollouts.write_bytes(
        b"".join(orjson.dumps(r) + b"\n" for r in (branch(0, True), branch(1, False)))
    )

    records = list(load_rollouts(str(rollouts)))
    assert [type(r) for r in records] == [RolloutBranchRecord, RolloutBranchRecord]
    first = records[0]
    assert isinstance(first, RolloutBranchRecord)
    assert (first.rollout_id, first.task, first.branch_index, first.temperature) == (
        "smoke-rollout-001",
        TASK,
        0,
        0.2,
    )
    assert (first.objective_score, first.objective_status, first.rank) == (1, "pass", 1)
    assert isinstance(first.build_result, BuildResult) and first.build_result.status == "pass"
    assert [event.event for event in first.tool_call_sequence] == ["tool_call", "tool_result"]

    dpo_path, ppo_path = tmp_path / "dpo.jsonl", tmp_path / "ppo.jsonl"
    export(records, str(dpo_path), str(ppo_path), allow_missing_g3=True)
    dpo = [json.loads(line) for line in dpo_path.read_text().splitlines()]
    ppo = [json.loads(line) for line in ppo_path.read_text().splitlines()]
    assert (len(dpo), len(ppo)) == (1, 2)

    validators = ValidatorSet(contract)
    for record, name in [(dpo[0], "DpoTrainingRecord"), *((r, "PpoTrainingRecord") for r in ppo)]:
        assert validators.get(name).problems(record) == []
        required = contract.schemas["training-record"]["$defs"][name]["required"]
        assert all(record.get(key) not in (None, "", []) for key in required), record
    pair = dpo[0]
    assert pair["chosen"] == "Added HelloButton to src/Button.tsx"
    assert pair["rejected"] == "Left a TODO"
    assert (pair["provenance"]["chosen_branch"], pair["provenance"]["rejected_branch"]) == (0, 1)
    assert pair["prompt_messages"] == pair["messages"][:-1]
    rewards = {r["provenance"]["branch_index"]: r["reward"] for r in ppo}
    assert rewards[0] > rewards[1]
    assert all(0 <= reward <= 1 for reward in rewards.values())


# --- the cross-repo step -------------------------------------------------------------------


def lay_out_checkout(contract: Contract, name: str, root: Path) -> git.Repo:
    """A git checkout laid out like the real repository, holding the canonical contract."""
    repo = git.Repo.init(root, initial_branch="main")
    with repo.config_writer() as config:
        config.set_value("user", "name", "smoke test")
        config.set_value("user", "email", "smoke@wiregate.invalid")
    for spec in (s for s in load_mirrors(contract).repository(name).copies if not s.code):
        path = root / spec.paths[0]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(expected_copy(contract, spec), indent=2) + "\n")
    repo.git.add("--all")
    repo.index.commit(f"{name}: vendor the rollout-wire contract")
    return repo


def gate(contract: Contract, checkouts: dict[str, Path]) -> DriftReport:
    """The schema copies (code copies are judged in tests/drift/test_code_copies.py)."""
    config = load_mirrors(contract)
    schema_copies = {s.id for r in config.repositories for s in r.copies if not s.code}
    return run_drift(contract, dict(checkouts), repositories=list(checkouts), copies=schema_copies)


def findings(report: DriftReport) -> str:
    lines = []
    for result in report.results:
        lines.append(
            f"{result.repository} {result.copy_id}: {result.verdict.value} {result.message}"
        )
        lines.extend(f"    {c.id} at {c.new_pointer}: {c.message}" for c in result.changes)
    return "\n".join(lines)


def real_checkouts() -> dict[str, Path]:
    return {name: Path(os.environ[var]) for name, var in GOVERNED.items() if os.environ.get(var)}


def checkouts_for(contract: Contract, tmp_path: Path) -> dict[str, Path]:
    """The real checkouts named in the environment; a throwaway one for each that is not."""
    checkouts = real_checkouts()
    for name in GOVERNED:
        if name not in checkouts:
            checkouts[name] = tmp_path / name
            lay_out_checkout(contract, name, checkouts[name])
    return checkouts


def test_governed_checkouts_agree_with_the_contract(tmp_path: Path, contract: Contract) -> None:
    report = gate(contract, checkouts_for(contract, tmp_path))
    assert report.exit_code == 0, findings(report)
    # Every repository's rollout-wire copy is found and judged (a checkout without one fails).
    wire = {r.repository: r.verdict for r in report.results if r.copy_id == "rollout-wire"}
    assert set(wire) == set(GOVERNED)
    assert not {Verdict.NOT_FOUND, Verdict.SKIPPED} & set(wire.values()), findings(report)
    throwaway = [r for r in report.results if r.repository not in real_checkouts()]
    # Throwaway checkouts hold every copy exactly: each one is found and identical.
    assert {r.verdict for r in throwaway} <= {Verdict.IDENTICAL}


def test_a_drifted_producer_copy_fails_the_step_and_names_the_finding(
    tmp_path: Path, contract: Contract
) -> None:
    if real_checkouts():
        pytest.skip("real checkouts given: their actual drift is judged above")
    checkouts = {name: tmp_path / name for name in GOVERNED}
    repos = {name: lay_out_checkout(contract, name, root) for name, root in checkouts.items()}
    copy_path = (
        checkouts["wasmagent-js"] / "packages/core/src/ranking/schemas/rollout-wire.schema.json"
    )
    real = CORPUS / "schemas" / "wasmagent-js" / "2026-07-10-8c9cd5d-rollout-wire.schema.json"
    if real.is_file():
        # The producer's real copy of 2026-07-10: among other drift, it lets `rank` be 0.
        copy_path.write_bytes(real.read_bytes())
    else:
        drifted = json.loads(copy_path.read_text())
        drifted["$defs"]["RolloutBranchRecord"]["properties"]["rank"]["minimum"] = 0
        copy_path.write_text(json.dumps(drifted, indent=2) + "\n")
    repos["wasmagent-js"].git.add("--all")
    repos["wasmagent-js"].index.commit("hand-edit the vendored schema")

    report = gate(contract, checkouts)
    assert report.exit_code == 1
    broken = [r for r in report.results if r.verdict is Verdict.BREAKING]
    assert [(r.repository, r.copy_id, r.failed) for r in broken] == [
        ("wasmagent-js", "rollout-wire", ("forward",))
    ]
    failing = {(c.id, c.new_pointer) for c in broken[0].changes if not c.forward}
    assert ("minimum-loosened", "#/$defs/RolloutBranchRecord/properties/rank/minimum") in failing
    assert "minimum-loosened at #/$defs/RolloutBranchRecord/properties/rank/minimum" in findings(
        report
    )


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
