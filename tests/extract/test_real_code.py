"""The real producer's TypeScript types and the real consumer's Pydantic models, judged by the
drift gate at several historical commits: verdicts, findings, witnesses, --ref and history."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from contracts import Contract
from wiregate.drift import Verdict, run_drift, run_history
from wiregate.drift.code import CodeCopies
from wiregate.drift.config import load_mirrors
from wiregate.drift.copies import CodeRoot

from .conftest import TRACE, WASMAGENT, lay_out_trace, lay_out_wasmagent

TS_COPIES = ["dpo-record-type", "ppo-record-type"]
PY_COPIES = [
    "branch-record-model",
    "tree-record-model",
    "dpo-training-record-model",
    "ppo-training-record-model",
]


def _errors(changes: Any) -> list[tuple[str, str]]:
    return [(c.id, c.new_pointer) for c in changes if c.level == "error"]


def _extracted(contract: Contract, repository: str, copy_id: str, root: Path) -> Any:
    spec = load_mirrors(contract).repository(repository).copy(copy_id)
    path = next(p for p in spec.paths if (root / p).is_file())
    return CodeCopies(CodeRoot(root), [spec]).schema(spec, path)


def _canonical(contract: Contract, schema: str, name: str) -> dict[str, Any]:
    document = dict(contract.schemas[schema])
    return {**document, "$ref": f"#/$defs/{name}"}


def _valid(schema: dict[str, Any], instance: Any) -> bool:
    return jsonschema.validators.validator_for(schema)(schema).is_valid(instance)


@pytest.fixture(scope="module")
def producer_head(corpus_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return lay_out_wasmagent(corpus_dir, "6a62876", tmp_path_factory.mktemp("wasmagent-js"))


def test_the_producer_types_write_camel_case_annotations_the_contract_rejects(
    contract: Contract, producer_head: Path
) -> None:
    report = run_drift(
        contract, {"wasmagent-js": producer_head}, repositories=["wasmagent-js"], copies=TS_COPIES
    )
    dpo, ppo = report.results
    assert (dpo.kind, dpo.declared, dpo.path) == (
        "typescript",
        "DpoRecord",
        "packages/core/src/ranking/RolloutExporter.ts",
    )
    assert (dpo.verdict, dpo.failed, ppo.verdict, ppo.failed) == (
        Verdict.BREAKING,
        ("forward",),
        Verdict.BREAKING,
        ("forward",),
    )
    # TurnAnnotation (RolloutSFTAnnotator.ts, resolved across files) is camelCase; the
    # contract's LossWeightAnnotation is snake_case and closed.
    annotations = "#/properties/loss_weight_annotations/items"
    assert [e for e in _errors(dpo.changes) if e[1].startswith(annotations)] == [
        ("property-added-to-closed-model", f"{annotations}/properties/lossWeightTokens"),
        ("property-added-to-closed-model", f"{annotations}/properties/turnIndex"),
        ("required-removed", f"{annotations}/required"),
        ("required-removed", f"{annotations}/required"),
    ]
    # What TypeScript cannot say is a lens finding (info), never a break.
    provenance = "#/properties/provenance/properties"
    lensed = [(c.id, c.new_pointer) for c in dpo.changes if c.id.startswith("ts-")]
    assert ("ts-number-for-integer", f"{provenance}/chosen_branch/type") in lensed
    assert ("ts-no-string-constraints", f"{provenance}/n_gram_hash") in lensed
    assert {c.level for c in dpo.changes if c.id.startswith("ts-")} == {"info"}
    assert not [e for e in _errors(dpo.changes) if e[1].startswith(provenance)]
    assert report.exit_code == 1
    assert dpo.reproduce == (
        f"wiregate drift --repo wasmagent-js={producer_head} --copy dpo-record-type"
    )

    # The witness: a record the producer's type admits that the contract rejects.
    typed = _extracted(contract, "wasmagent-js", "dpo-record-type", producer_head)
    record = json.loads(
        (
            contract.directory / "fixtures/rollout-wire/DpoRecord/valid/with-annotations.json"
        ).read_text(encoding="utf-8")
    )
    canonical = _canonical(contract, "rollout-wire", "DpoRecord")
    assert _valid(canonical, record)
    record["tool_call_sequence"] = []
    record["loss_weight_annotations"] = [{"turnIndex": 0, "lossWeightTokens": "recovery"}]
    assert (_valid(typed, record), _valid(canonical, record)) == (True, False)


def test_the_consumer_model_rejected_event_shaped_tool_calls_until_692ee62(
    contract: Contract, corpus_dir: Path, tmp_path: Path
) -> None:
    def judge(commit: str) -> Any:
        root = lay_out_trace(corpus_dir, commit, tmp_path / commit)
        report = run_drift(
            contract, {"trace-pipeline": root}, repositories=["trace-pipeline"], copies=PY_COPIES
        )
        return root, {r.copy_id: r for r in report.results}

    root, before = judge("556ef10")
    branch = before["branch-record-model"]
    assert (branch.kind, branch.declared, branch.path, branch.verdict, branch.failed) == (
        "python",
        "evomerge.schemas.rollout:RolloutBranchRecord",
        "evomerge/schemas/rollout.py",
        Verdict.BREAKING,
        ("backward",),
    )
    assert _errors(branch.changes) == [
        ("property-added-to-open-model", "#/$defs/ToolCallEntry/properties/arguments"),
        ("property-added-to-open-model", "#/$defs/ToolCallEntry/properties/error"),
        ("property-added-to-open-model", "#/$defs/ToolCallEntry/properties/tool_name"),
        ("required-added", "#/$defs/ToolCallEntry/required"),
    ]
    # RolloutTreeRecord did not exist yet: one line, the copy is an error, not a traceback.
    assert before["tree-record-model"].verdict is Verdict.ERROR
    assert before["tree-record-model"].message == (
        f"{root}: evomerge.schemas.rollout:RolloutTreeRecord: "
        "evomerge.schemas.rollout has no 'RolloutTreeRecord'"
    )
    # The witness: a record the contract allows that the consumer's model (validation mode:
    # what it accepts) rejects, an event-shaped tool call.
    model = _extracted(contract, "trace-pipeline", "branch-record-model", root)
    record = json.loads(
        (
            contract.directory / "fixtures/rollout-wire/RolloutBranchRecord/valid/full.json"
        ).read_text(encoding="utf-8")
    )
    canonical = _canonical(contract, "rollout-wire", "RolloutBranchRecord")
    assert (_valid(canonical, record), _valid(model, record)) == (True, False)

    fixed, after = judge("692ee62")
    assert {copy: r.verdict for copy, r in after.items()} == {
        "branch-record-model": Verdict.COMPATIBLE,
        "tree-record-model": Verdict.COMPATIBLE,
        "dpo-training-record-model": Verdict.BREAKING,
        "ppo-training-record-model": Verdict.BREAKING,
    }
    assert _valid(_extracted(contract, "trace-pipeline", "branch-record-model", fixed), record)


def test_the_training_models_write_their_own_schema_version(
    contract: Contract, corpus_dir: Path, tmp_path: Path
) -> None:
    root = lay_out_trace(corpus_dir, "692ee62", tmp_path)
    report = run_drift(
        contract,
        {"trace-pipeline": root},
        repositories=["trace-pipeline"],
        copies=["ppo-training-record-model"],
    )
    (ppo,) = report.results
    assert (ppo.role, ppo.direction, ppo.verdict) == ("producer", "forward", Verdict.BREAKING)
    errors = _errors(ppo.changes)
    # Serialization mode (what the producer writes): "ppo/v1", never the contract's tag, and
    # "high_value" among the loss-weight tokens.
    assert ("const-changed", "#/properties/schema_version/const") in errors
    assert ("enum-extended", "#/properties/loss_weight_tokens/enum") in errors
    model = _extracted(contract, "trace-pipeline", "ppo-training-record-model", root)
    assert model["required"] == [
        "schema_version",
        "messages",
        "reward",
        "loss_weight_tokens",
        "loss_weight_annotations",
        "provenance",
    ]


def test_ref_and_history_read_the_committed_code(
    contract: Contract, code_repos: dict[str, Path]
) -> None:
    wasmagent = code_repos["wasmagent-js"]
    # At the first revision the provenance keys were camelCase too.
    report = run_drift(
        contract,
        {"wasmagent-js": wasmagent},
        ref="orig-711b817",
        repositories=["wasmagent-js"],
        copies=["dpo-record-type"],
    )
    (dpo,) = report.results
    assert (dpo.verdict, dpo.commit is not None) == (Verdict.BREAKING, True)
    assert ("property-added-to-closed-model", "#/properties/provenance/properties/rolloutId") in (
        _errors(dpo.changes)
    )
    assert dpo.reproduce == (
        f"wiregate drift --repo wasmagent-js={wasmagent} --copy dpo-record-type --ref {dpo.commit}"
    )

    # --new-since: the type's findings at the commit before are extracted from the files
    # committed there. 6a62876 added event kinds to AgentEvent (events.ts, a referenced
    # file): the union the contract does not allow changed, every other finding is old.
    (since,) = run_drift(
        contract,
        {"wasmagent-js": wasmagent},
        repositories=["wasmagent-js"],
        copies=["dpo-record-type"],
        new_since="orig-8c9cd5d",
    ).results
    new = [(c.id, c.new_pointer) for c, t in since.findings if t is not None and not t.old]
    assert new == [("any-of-added", "#/properties/tool_call_sequence/items/anyOf")]
    assert since.count("old") == len(since.findings) - 1 > 10
    (history,) = run_history(
        contract, "wasmagent-js", {"wasmagent-js": wasmagent}, "ppo-record-type"
    )
    # Every commit that touched RolloutExporter.ts, and those that changed only another file
    # the type is extracted from (8c9cd5d: "referenced").
    assert [(e.subject, e.status, e.verdict) for e in history.entries] == [
        ("orig 6a62876", "modified", Verdict.BREAKING),
        ("orig 8c9cd5d", "referenced", Verdict.BREAKING),
        ("orig 31af5ae", "modified", Verdict.BREAKING),
        ("orig b0d9e2d", "modified", Verdict.BREAKING),
        ("orig 1e83a05", "modified", Verdict.BREAKING),
        ("orig 842dfa5", "modified", Verdict.BREAKING),
        ("orig 711b817", "added", Verdict.BREAKING),
    ]
    assert history.since is not None and history.since.subject == "orig 711b817"
    # Sorting the imports changed no type: nothing since the revision before.
    assert history.entries[-3].since_previous == ()
    first_step = history.entries[-2]  # 842dfa5: provenance keys renamed to snake_case
    assert ("property-added-to-closed-model", "#/properties/provenance/properties/rollout_id") in (
        _errors(first_step.since_previous)
    )

    trace = code_repos["trace-pipeline"]
    (branch,) = run_history(
        contract, "trace-pipeline", {"trace-pipeline": trace}, "branch-record-model"
    )
    # 63fd741 changed training.py, which importing the package's rollout module imports too.
    assert [(e.subject, e.status, e.verdict) for e in branch.entries] == [
        ("orig 692ee62", "modified", Verdict.COMPATIBLE),
        ("orig 63fd741", "referenced", Verdict.BREAKING),
        ("orig 556ef10", "added", Verdict.BREAKING),
    ]
    assert branch.since is not None and branch.since.subject == "orig 692ee62"
    assert [e.path for e in branch.entries] == ["evomerge/schemas/rollout.py"] * 3
    assert branch.entries[1].since_previous == ()


def test_the_shipped_config_names_real_declarations(contract: Contract) -> None:
    config = load_mirrors(contract)
    declared = [
        (r.name, s.id, s.kind, s.type or s.model)
        for r in config.repositories
        for s in r.copies
        if s.code
    ]
    assert declared == [
        ("wasmagent-js", "dpo-record-type", "typescript", "DpoRecord"),
        ("wasmagent-js", "ppo-record-type", "typescript", "PpoRecord"),
        (
            "trace-pipeline",
            "branch-record-model",
            "python",
            "evomerge.schemas.rollout:RolloutBranchRecord",
        ),
        (
            "trace-pipeline",
            "tree-record-model",
            "python",
            "evomerge.schemas.rollout:RolloutTreeRecord",
        ),
        (
            "trace-pipeline",
            "dpo-training-record-model",
            "python",
            "evomerge.schemas.training:DpoTrainingRecord",
        ),
        (
            "trace-pipeline",
            "ppo-training-record-model",
            "python",
            "evomerge.schemas.training:PpoTrainingRecord",
        ),
    ]
    assert WASMAGENT[-1] == "6a62876" and TRACE[-1] == "692ee62"
