"""The gate on throwaway checkouts laid out like the real ones: verdicts per role, exit codes,
--strict, repository selection and the environment variables."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from contracts import Contract
from wiregate.cli import main
from wiregate.drift import Verdict, expected_copy, load_mirrors, run_drift

from .conftest import SCHEMA_COPIES, SCHEMA_COPIES_OF

Edit = Callable[[dict[str, Any]], None]


@pytest.fixture
def checkouts(contract: Contract, tmp_path: Path) -> dict[str, Path]:
    """Every configured schema copy, at its first candidate path, agreeing exactly with the
    contract."""
    places = {}
    for repository in load_mirrors(contract).repositories:
        root = tmp_path / repository.name
        root.mkdir()
        for spec in (s for s in repository.copies if not s.code):
            target = root / spec.paths[0]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(expected_copy(contract, spec), indent=2), encoding="utf-8")
        places[repository.name] = root
    return places


def _edit(checkouts: dict[str, Path], repository: str, path: str, change: Edit) -> None:
    target = checkouts[repository] / path
    document = json.loads(target.read_text(encoding="utf-8"))
    change(document)
    target.write_text(json.dumps(document), encoding="utf-8")


PRODUCER_COPY = "packages/core/src/ranking/schemas/rollout-wire.schema.json"
CONSUMER_COPY = "schemas/rollout-wire.schema.json"
MIRROR_COPY = "schemas/compliance/rollout-wire.schema.json"


def test_copies_that_agree_with_the_contract(
    contract: Contract, checkouts: dict[str, Path]
) -> None:
    report = run_drift(contract, dict(checkouts), strict=True, copies=SCHEMA_COPIES)
    assert [(r.repository, r.copy_id, r.verdict) for r in report.results] == [
        ("wasmagent-js", "rollout-wire", Verdict.IDENTICAL),
        ("wasmagent-js", "training-record", Verdict.IDENTICAL),
        ("trace-pipeline", "rollout-wire", Verdict.IDENTICAL),
        ("trace-pipeline", "dpo-training-record", Verdict.IDENTICAL),
        ("trace-pipeline", "ppo-training-record", Verdict.IDENTICAL),
        ("wasmagent-protocol", "rollout-wire", Verdict.IDENTICAL),
        ("wasmagent-protocol", "training-record", Verdict.IDENTICAL),
    ]
    assert report.exit_code == 0


def test_annotations_only_are_equivalent_even_when_strict(
    contract: Contract, checkouts: dict[str, Path]
) -> None:
    def reword(document: dict[str, Any]) -> None:
        document["description"] = "Branch record, as our exporter reads it."
        document["title"] = "RolloutBranchRecord"

    _edit(checkouts, "trace-pipeline", CONSUMER_COPY, reword)
    report = run_drift(
        contract,
        dict(checkouts),
        strict=True,
        repositories=["trace-pipeline"],
        copies=SCHEMA_COPIES_OF["trace-pipeline"],
    )
    consumer = report.results[0]
    assert consumer.verdict is Verdict.EQUIVALENT
    assert [(c.id, c.new_pointer) for c in consumer.changes] == [
        ("title-changed", "#/title"),
        ("description-changed", "#/description"),
    ]
    assert report.exit_code == 0


def test_compatible_drift_fails_only_when_strict(
    contract: Contract, checkouts: dict[str, Path]
) -> None:
    def add_typed_key(document: dict[str, Any]) -> None:
        properties = document["$defs"]["RolloutBranchRecord"]["properties"]
        properties["latency_ms"] = {"type": "integer", "minimum": 0}

    _edit(checkouts, "wasmagent-js", PRODUCER_COPY, add_typed_key)
    overrides = dict(checkouts)
    wasmagent = SCHEMA_COPIES_OF["wasmagent-js"]
    report = run_drift(contract, overrides, repositories=["wasmagent-js"], copies=wasmagent)
    producer = report.results[0]
    assert (producer.verdict, producer.failed) == (Verdict.COMPATIBLE, ())
    assert [(c.id, c.new_pointer, c.backward, c.forward) for c in producer.changes] == [
        (
            "property-added-to-open-model",
            "#/$defs/RolloutBranchRecord/properties/latency_ms",
            False,
            True,
        ),
    ]
    assert report.exit_code == 0
    strict = run_drift(
        contract, overrides, strict=True, repositories=["wasmagent-js"], copies=wasmagent
    )
    assert strict.exit_code == 1


def test_each_role_fails_in_its_own_direction(
    contract: Contract, checkouts: dict[str, Path]
) -> None:
    def require_seed(document: dict[str, Any]) -> None:
        document["required"].append("seed")

    def narrow_status(document: dict[str, Any]) -> None:
        document["$defs"]["ObjectiveStatus"]["enum"] = ["pass", "fail"]

    def widen_status(document: dict[str, Any]) -> None:
        document["$defs"]["ObjectiveStatus"]["enum"].append("error")

    # A consumer that requires more rejects records the contract allows; a producer that
    # requires more only writes a subset of them: fine.
    _edit(checkouts, "trace-pipeline", CONSUMER_COPY, require_seed)
    _edit(checkouts, "wasmagent-js", PRODUCER_COPY, narrow_status)
    _edit(checkouts, "wasmagent-protocol", MIRROR_COPY, widen_status)
    report = run_drift(contract, dict(checkouts), copies=SCHEMA_COPIES)
    results = {(r.repository, r.copy_id): r for r in report.results}

    consumer = results["trace-pipeline", "rollout-wire"]
    assert (consumer.verdict, consumer.failed) == (Verdict.BREAKING, ("backward",))
    assert [(c.id, c.new_pointer) for c in consumer.changes] == [("required-added", "#/required")]
    assert consumer.breaks == ("the consumer rejects records the canonical contract allows",)

    producer = results["wasmagent-js", "rollout-wire"]
    assert (producer.verdict, producer.failed) == (Verdict.COMPATIBLE, ())

    mirror = results["wasmagent-protocol", "rollout-wire"]
    assert (mirror.verdict, mirror.failed) == (Verdict.BREAKING, ("forward",))
    assert [(c.id, c.new_pointer) for c in mirror.changes] == [
        ("enum-extended", "#/$defs/ObjectiveStatus/enum")
    ]
    assert mirror.breaks == (
        "the mirror accepts records the canonical contract rejects: producers that follow it "
        "break the contract's consumers",
    )
    assert report.exit_code == 1


def test_cli_repo_selects_and_environment_locates(
    repo_root: Path, checkouts: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The schema copies (the code copies are judged in test_code_copies.py).
    def drift(*args: str, copies: list[str] = SCHEMA_COPIES) -> list[str]:
        selected = [arg for copy in copies for arg in ("--copy", copy)]
        result = CliRunner().invoke(main, ["--root", str(repo_root), "drift", *args, *selected])
        assert result.exit_code == 0, result.output
        return result.stdout.splitlines()

    # Inside one governed repository (the pre-commit hook): only that repository is checked.
    wasmagent = SCHEMA_COPIES_OF["wasmagent-js"]
    assert drift("--repo", f"wasmagent-js={checkouts['wasmagent-js']}", copies=wasmagent) == [
        f"wasmagent-js rollout-wire (producer, must be forward compatible) {PRODUCER_COPY}: "
        "identical",
        "wasmagent-js training-record (producer, must be forward compatible) "
        "packages/core/src/ranking/schemas/training-record.schema.json: identical",
        "2 copies: 2 identical (strict)",
    ]
    # Without --repo every configured repository is checked, found through the environment.
    monkeypatch.setenv("WIREGATE_REPO_WASMAGENT_JS", str(checkouts["wasmagent-js"]))
    monkeypatch.setenv("WIREGATE_REPO_TRACE_PIPELINE", str(checkouts["trace-pipeline"]))
    monkeypatch.setenv("WIREGATE_REPO_WASMAGENT_PROTOCOL", str(checkouts["wasmagent-protocol"]))
    assert drift("--strict")[-1] == "7 copies: 7 identical (strict)"
    # --repo NAME alone selects a repository and keeps its configured (here: environment) place.
    trace = SCHEMA_COPIES_OF["trace-pipeline"]
    assert drift("--repo", "trace-pipeline", copies=trace)[-1] == "3 copies: 3 identical (strict)"


def test_the_policy_comes_from_the_config(
    contract: Contract, checkouts: dict[str, Path], tmp_path: Path
) -> None:
    def add_typed_key(document: dict[str, Any]) -> None:
        document["properties"]["latency_ms"] = {"type": "integer"}

    _edit(checkouts, "trace-pipeline", CONSUMER_COPY, add_typed_key)
    shipped = (contract.directory / "mirrors.toml").read_text(encoding="utf-8")
    lenient = tmp_path / "mirrors.toml"
    lenient.write_text(shipped.replace('policy = "strict"', 'policy = "lenient"'), encoding="utf-8")

    def consumer(config_path: Path | None) -> tuple[Verdict, str, list[tuple[str, str | None]]]:
        config = load_mirrors(contract, config_path)
        (result, *_) = run_drift(
            contract, dict(checkouts), repositories=["trace-pipeline"], config=config
        ).results
        return result.verdict, result.policy, [(c.id, c.tolerated_by) for c in result.changes]

    # Strictly, the old open model accepted any value under the new key: a consumer that now
    # requires an integer there rejects records the contract allows.
    assert consumer(None) == (
        Verdict.BREAKING,
        "strict",
        [("property-added-to-open-model", None)],
    )
    assert consumer(lenient) == (
        Verdict.COMPATIBLE,
        "lenient",
        [("property-added-to-open-model", "lenient")],
    )


def test_one_error_line_per_problem(repo_root: Path, checkouts: dict[str, Path]) -> None:
    # The four wasmagent-js copies are hidden by the same problem: it is reported once.
    result = CliRunner().invoke(
        main,
        [
            "--root",
            str(repo_root),
            "drift",
            "--ref",
            "HEAD",
            "--repo",
            f"wasmagent-js={checkouts['wasmagent-js']}",
        ],
    )
    assert result.exit_code == 2
    assert result.stderr == (
        f"wiregate: error: {checkouts['wasmagent-js']}: not a git repository\n"
    )
    assert result.stdout.count("not a git repository") == 4


def test_the_protocol_copys_items_object_is_one_entry(
    repo_root: Path, checkouts: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The published package's copy with ``tool_call_sequence.items: {"type": "object"}`` in
    each of the three record types that hold ToolCallEvent: one root change (15 changes), one
    annotation on the line of the first ``items``, not 15 lines per record type."""

    def items_object(document: dict[str, Any]) -> None:
        for record in ("RolloutBranchRecord", "DpoRecord", "PpoRecord"):
            properties = document["$defs"][record]["properties"]
            properties["tool_call_sequence"]["items"] = {"type": "object"}

    protocol = checkouts["wasmagent-protocol"]
    target = protocol / MIRROR_COPY
    document = json.loads(target.read_text(encoding="utf-8"))
    items_object(document)
    target.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    monkeypatch.chdir(repo_root)
    args = ["drift", "--repo", f"wasmagent-protocol={protocol}"]
    text = CliRunner().invoke(main, args)
    assert text.exit_code == 1
    assert text.stdout.splitlines() == [
        f"wasmagent-protocol rollout-wire (mirror, must be fully compatible) {MIRROR_COPY}: "
        "breaking drift: the mirror accepts records the canonical contract rejects: producers "
        "that follow it break the contract's consumers (3 info-level)",
        "    error: wasmagent-protocol's copy differs from the contract at "
        "`DpoRecord.tool_call_sequence[]` (property-removed-from-open-model): "
        "wasmagent-protocol may write records the contract rejects [15 changes in DpoRecord, "
        "PpoRecord, RolloutBranchRecord; copy 445:11, contract 47:9]",
        f"    reproduce: wiregate diff contracts/rollout-wire.schema.json {target} "
        "--mode full --policy strict",
        "wasmagent-protocol training-record (mirror, must be fully compatible) "
        "schemas/compliance/training-record.schema.json: identical",
        "2 copies: 1 identical, 1 breaking drift (strict)",
    ]
    github = CliRunner().invoke(main, [*args, "--format", "github"]).stdout.splitlines()
    assert [line.split("::", 2)[1] for line in github] == [
        f"error file={MIRROR_COPY},line=445,col=11,title=wiregate drift wasmagent-protocol "
        "rollout-wire%3A property-removed-from-open-model%2C required-removed"
    ]
    lines = target.read_text(encoding="utf-8").splitlines()
    assert lines[444].strip() == '"items": {'


def test_a_name_from_a_copy_is_shown_not_sent(
    repo_root: Path, checkouts: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A property name in a copy with a newline, a forged workflow command and a terminal
    escape stays inside its line, escaped, in text and github output."""
    evil = "evil\n::error file=README.md,line=1::pwned\x1b[2J"

    def add_evil(document: dict[str, Any]) -> None:
        document["properties"][evil] = {"type": "string"}  # a single-record copy
        document["required"].append(evil)

    _edit(checkouts, "trace-pipeline", CONSUMER_COPY, add_evil)
    monkeypatch.chdir(repo_root)
    args = ["drift", "--repo", f"trace-pipeline={checkouts['trace-pipeline']}"]
    args += ["--copy", "rollout-wire"]
    for output_format in ("text", "github"):
        result = CliRunner().invoke(main, [*args, "--format", output_format])
        assert result.exit_code == 1
        assert "\x1b" not in result.stdout
        assert not any(
            line.startswith("::error file=README.md") for line in result.stdout.splitlines()
        )
        assert "evil\\u000a::error" in result.stdout or "evil%0A::error" in result.stdout
