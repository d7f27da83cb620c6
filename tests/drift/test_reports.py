"""The drift reports on the real replayed checkouts: one entry per root change, messages in
the copy's terms, annotations on the right line, SARIF, JUnit and the step summary."""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from contracts import Contract
from tests.sarif_schema import check_sarif
from wiregate.cli import main
from wiregate.diff import Change
from wiregate.drift import run_drift
from wiregate.drift.findings import DriftFinding, field_path, make_finding
from wiregate.drift.result import DriftReport
from wiregate.pointer import split
from wiregate.positions import PositionIndex

from .conftest import SCHEMA_COPIES, SCHEMA_COPIES_OF, schema_copy_args

_ANNOTATION = re.compile(r"^::(error|warning) file=([^,]+),line=(\d+),col=(\d+),title=([^:]+)::")


# The schema copies: where a change is written in a code copy is not a line of its JSON (the
# code copies are judged in tests/extract).
def _report(contract: Contract, replayed: dict[str, Path], strict: bool = False) -> DriftReport:
    return run_drift(
        contract, dict(replayed), strict=strict, repositories=list(replayed), copies=SCHEMA_COPIES
    )


def _cli(repo_root: Path, replayed: dict[str, Path], *args: str, env: Any = None) -> Any:
    repos = [arg for name, path in replayed.items() for arg in ("--repo", f"{name}={path}")]
    repos += [arg for name in replayed for arg in schema_copy_args(name)]
    return CliRunner().invoke(
        main, ["--root", str(repo_root), "drift", *repos, *args], env=env or dict(os.environ)
    )


def _written_key(document: Any, pointer: str) -> str | None:
    """The last key of ``pointer`` the document holds as written (None: the root)."""
    node, key = document, None
    for token in split(pointer):
        if isinstance(node, dict) and token in node:
            node, key = node[token], token
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            break
    return key


def test_the_shared_tool_call_event_is_one_entry_for_three_record_types(
    contract: Contract, replayed: dict[str, Path]
) -> None:
    report = _report(contract, replayed)
    copy = next(
        r for r in report.results if (r.repository, r.copy_id) == ("wasmagent-js", "rollout-wire")
    )
    # 33 non-info changes, 17 root changes: the contract's ToolCallEvent (5 changes: three
    # properties and their required entries) is written out in the copy once per record type.
    assert sum(len(e.findings) for e in copy.entries) == 33
    assert len(copy.entries) == 17
    shared = [e for e in copy.entries if len(e.findings) == 15]
    assert [(e.record_types, e.rule_ids, e.breaking) for e in shared] == [
        (
            ("DpoRecord", "PpoRecord", "RolloutBranchRecord"),
            ("property-removed-from-open-model", "required-removed"),
            True,
        )
    ]


def test_text_prints_one_line_per_root_change_and_verbose_the_consequences(
    repo_root: Path, replayed: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo_root)
    plain = _cli(repo_root, {"trace-pipeline": replayed["trace-pipeline"]}).stdout.splitlines()
    verbose = _cli(
        repo_root, {"trace-pipeline": replayed["trace-pipeline"]}, "--verbose"
    ).stdout.splitlines()
    head = (
        "    error: trace-pipeline declares `DpoTrainingRecord.loss_weight_annotations`; the "
        "contract does not, and allows no undeclared key (property-added-to-closed-model): "
        "trace-pipeline may write records the contract rejects "
        "[1 change in DpoTrainingRecord; copy 190:5, contract 107:5]"
    )
    assert plain[13:15] == [
        "trace-pipeline dpo-training-record (producer, must be forward compatible) "
        "schemas/dpo-training-record.schema.json: breaking drift: the producer writes records "
        "the canonical contract rejects (30 info-level)",
        head,
    ]
    at = verbose.index(head)
    assert verbose[at + 1] == (
        "        error: property-added-to-closed-model at #/$defs/DpoTrainingRecord -> "
        "#/properties/loss_weight_annotations: property 'loss_weight_annotations' added to a "
        "closed model: old readers reject that key (backward: yes, forward: no)"
    )
    assert verbose[at + 2] == (
        '          witness (forward): {"chosen":"","messages":[],"provenance":{"source":""},'
        '"rejected":"","loss_weight_annotations":[]}'
    )
    assert plain[55] == (
        "    trace-pipeline dpo-training-record: 41 root changes (40 breaking) from 52 changes"
    )
    assert len(plain) == 100 and len(verbose) > len(plain)


def test_github_one_annotation_per_root_change_on_the_line_of_its_key(
    repo_root: Path, contract: Contract, replayed: dict[str, Path], tmp_path: Path
) -> None:
    summary = tmp_path / "summary.md"
    result = _cli(
        repo_root,
        replayed,
        "--format",
        "github",
        env={**os.environ, "GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert result.exit_code == 1
    annotations = result.stdout.splitlines()
    report = _report(contract, replayed)
    heads = [e.head for r in report.results for e in r.entries]
    # 188 before: one per change (the training record's two oneOf members each add a
    # one-of-overlap-added finding)
    assert len(annotations) == len(heads) == 17 + 38 + 10 + 41 + 39
    by_file: dict[str, tuple[list[str], Any]] = {}
    for annotation, head in zip(annotations, heads, strict=True):
        match = _ANNOTATION.match(annotation)
        assert match, annotation
        file, line = match.group(2), int(match.group(3))
        checkout = next(p for p in replayed.values() if (p / file).is_file())
        if file not in by_file:
            text = (checkout / file).read_text(encoding="utf-8")
            by_file[file] = (text.splitlines(), json.loads(text))
        lines, document = by_file[file]
        key = _written_key(document, head.change.new_pointer)
        assert key is None or json.dumps(key) in lines[line - 1], (annotation, key)
    assert Counter(a.split(" ", 1)[0] for a in annotations) == {"::error": 128, "::warning": 17}
    markdown = summary.read_text(encoding="utf-8")
    assert markdown.startswith("### wiregate drift\n")
    assert (
        "| Level | Rules | Contract | Copy | What goes wrong | Changes | Record types |" in markdown
    )
    assert " old " not in markdown and " new " not in markdown.replace("new_", "")


def test_strict_makes_every_drift_annotation_an_error(
    repo_root: Path, replayed: dict[str, Path]
) -> None:
    result = _cli(
        repo_root, {"trace-pipeline": replayed["trace-pipeline"]}, "--strict", "--format", "github"
    )
    assert {a.split(" ", 1)[0] for a in result.stdout.splitlines()} == {"::error"}


def test_sarif_validates_with_one_result_per_root_change(
    repo_root: Path, replayed: dict[str, Path]
) -> None:
    result = _cli(repo_root, replayed, "--format", "sarif")
    assert result.exit_code == 1
    log = json.loads(result.stdout)
    check_sarif(log)
    (run,) = log["runs"]
    results = run["results"]
    assert len(results) == 145
    first = results[0]
    assert first["ruleId"] == "property-removed-from-open-model"
    # Each path is relative to its repository's base id: the copy's checkout, the contract's.
    assert first["locations"][0]["physicalLocation"] == {
        "artifactLocation": {
            "uri": "packages/core/src/ranking/schemas/rollout-wire.schema.json",
            "uriBaseId": "WASMAGENT_JS",
        },
        "region": {"startLine": 134, "startColumn": 5},
    }
    assert first["relatedLocations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "contracts/rollout-wire.schema.json", "uriBaseId": "WIREGATE"},
        "region": {"startLine": 208, "startColumn": 9},
    }
    assert run["originalUriBaseIds"] == {
        "WIREGATE": {
            "uri": f"{repo_root.resolve().as_uri()}/",
            "description": {"text": "the contract's repository"},
        },
        "WASMAGENT_JS": {
            "uri": f"{replayed['wasmagent-js'].resolve().as_uri()}/",
            "description": {"text": "the checkout of wasmagent-js"},
        },
        "TRACE_PIPELINE": {
            "uri": f"{replayed['trace-pipeline'].resolve().as_uri()}/",
            "description": {"text": "the checkout of trace-pipeline"},
        },
    }
    bases = Counter(
        location["physicalLocation"]["artifactLocation"]["uriBaseId"]
        for r in results
        for location in (*r["locations"], *r["relatedLocations"])
    )
    assert bases == {"WIREGATE": 145, "WASMAGENT_JS": 55, "TRACE_PIPELINE": 90}
    assert len({r["partialFingerprints"]["wiregate/v1"] for r in results}) == len(results)
    rules = run["tool"]["driver"]["rules"]
    assert all(rule["shortDescription"]["text"] for rule in rules)


def test_junit_one_case_per_copy(repo_root: Path, replayed: dict[str, Path]) -> None:
    result = _cli(repo_root, {"trace-pipeline": replayed["trace-pipeline"]}, "--format", "junit")
    lines = result.stdout.splitlines()
    assert lines[:5] == [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<testsuites name="wiregate drift" tests="3" failures="2" errors="0">',
        '  <testsuite name="wiregate drift" tests="3" failures="2" errors="0" skipped="0">',
        '    <testcase classname="wiregate.drift.trace-pipeline" name="rollout-wire"/>',
        '    <testcase classname="wiregate.drift.trace-pipeline" name="dpo-training-record">',
    ]
    assert lines[5].startswith(
        '      <failure message="breaking drift: the producer writes records the canonical '
        'contract rejects">error: trace-pipeline'
    )
    assert lines[-2:] == ["  </testsuite>", "</testsuites>"]


CONTRACT_TURN = {
    "$defs": {
        "R": {"properties": {"turns": {"items": {"properties": {"turn": {"type": "integer"}}}}}}
    }
}
TURN = "#/$defs/R/properties/turns/items/properties/turn/type"


def _words(change: Change, role: str, contract: Any, copy: Any) -> str:
    index = PositionIndex.build(json.dumps(copy, indent=1))
    return make_finding(
        change,
        breaking=True,
        repository="wasmagent-js" if role == "producer" else "trace-pipeline",
        role=role,
        schema="s",
        canonical_at="#",
        contract=contract,
        copy=copy,
        copy_file="copy.json",
        copy_index=index,
        contract_file="contract.json",
        contract_index=index,
        fingerprint="0" * 16,
    ).message


def test_messages_name_the_contract_and_the_copy_in_the_roles_terms() -> None:
    as_string = {
        "$defs": {
            "R": {"properties": {"turns": {"items": {"properties": {"turn": {"type": "string"}}}}}}
        }
    }
    changed = Change("type-changed", "error", TURN, TURN, "type changed", False, False)
    assert _words(changed, "producer", CONTRACT_TURN, as_string) == (
        "wasmagent-js writes `R.turns[].turn` as string; the contract requires integer "
        "(type-changed): wasmagent-js may write records the contract rejects"
    )
    assert _words(changed, "consumer", CONTRACT_TURN, as_string) == (
        "the contract allows `R.turns[].turn` as integer; trace-pipeline reads string "
        "(type-changed): the contract allows records trace-pipeline rejects"
    )
    assert field_path("#/$defs/R/properties/a/additionalProperties/anyOf/0/properties/b") == "a.*.b"
    # A tuple's member, in either draft's spelling (findings point into a copy as written).
    assert field_path("#/$defs/R/properties/a/prefixItems/0/properties/b") == "a[].b"
    assert field_path("#/definitions/R/properties/a/items/0/properties/b/type") == "a[].b"


def test_the_check_step_carries_the_drift_report(
    contract: Contract, replayed: dict[str, Path]
) -> None:
    from wiregate.check.drift_step import check_drift
    from wiregate.check.model import CheckReport, StepStatus
    from wiregate.reporters.check import CHECK_REPORTERS
    from wiregate.reporters.drift import DRIFT_REPORTERS, report_to_json

    step = check_drift(
        contract,
        overrides={"trace-pipeline": replayed["trace-pipeline"]},
        copies=SCHEMA_COPIES_OF["trace-pipeline"],
    )
    assert step.status is StepStatus.FAILED
    assert step.drift is not None
    assert step.summary == "3 copies: 1 compatible drift, 2 breaking drift (strict)"
    drift_text = DRIFT_REPORTERS["text"](step.drift).splitlines()
    check_text = CHECK_REPORTERS["text"](CheckReport((step,))).splitlines()
    assert check_text[1:-1] == [f"    {line}" for line in drift_text[:-1]]
    annotations = DRIFT_REPORTERS["github"](step.drift).splitlines()
    github = CHECK_REPORTERS["github"](CheckReport((step,))).splitlines()
    assert github[: len(annotations)] == annotations
    assert github[len(annotations) :] == check_text
    document = json.loads(CHECK_REPORTERS["json"](CheckReport((step,))))
    assert document["steps"][0]["drift"] == json.loads(json.dumps(report_to_json(step.drift)))


def test_required_messages_name_the_names_of_their_own_rule() -> None:
    """A name the copy added to `required` is said as added, even when the same array also
    lost names the contract requires (another finding, with its own words)."""
    contract = {"$defs": {"R": {"required": ["a", "b"]}}}
    copy = {"$defs": {"R": {"required": ["a", "foo"]}}}
    at = "#/$defs/R/required"
    added = replace(Change("required-added", "error", at, at, "", False, True), subject="foo")
    removed = replace(Change("required-removed", "error", at, at, "", True, False), subject="b")
    assert _words(added, "consumer", contract, copy) == (
        "trace-pipeline requires foo in `R`; the contract does not (required-added): "
        "the contract allows records trace-pipeline rejects"
    )
    assert _words(added, "producer", contract, copy).startswith(
        "wasmagent-js always writes foo in `R`; the contract does not require it"
    )
    assert _words(removed, "producer", contract, copy) == (
        "wasmagent-js may omit b in `R`; the contract requires it (required-removed): "
        "wasmagent-js may write records the contract rejects"
    )
    assert _words(removed, "consumer", contract, copy).startswith(
        "trace-pipeline reads records without b in `R`; the contract requires it"
    )


def test_a_dependency_one_side_has_names_its_property() -> None:
    contract = {"$defs": {"R": {"dependentRequired": {"a": ["b"]}}}}
    copy: dict[str, Any] = {"$defs": {"R": {}}}
    removed = Change(
        "dependent-required-removed", "warning", "#/$defs/R/dependentRequired/a", "#/$defs/R",
        "", True, False,
    )  # fmt: skip
    assert _words(removed, "producer", contract, copy) == (
        'wasmagent-js has no dependentRequired for a in `R`; the contract requires ["b"] with '
        "it (dependent-required-removed): wasmagent-js may write records the contract rejects"
    )
    added = Change(
        "dependent-required-added", "error", "#/$defs/R", "#/$defs/R/dependentRequired/a",
        "", False, True,
    )  # fmt: skip
    assert _words(added, "consumer", copy, contract).startswith(
        'trace-pipeline has dependentRequired for a in `R` (requires ["b"] with it); the '
        "contract has none (dependent-required-added)"
    )


def _acme_finding(change: Change, contract: Any, copy: Any, canonical_at: str) -> DriftFinding:
    """The finding of a producer "acme" whose copy ``copy`` stands for ``canonical_at``."""
    return make_finding(
        change,
        breaking=not change.forward,
        repository="acme",
        role="producer",
        schema="s",
        canonical_at=canonical_at,
        contract=contract,
        copy=copy,
        copy_file=None,
        copy_index=None,
        contract_file=None,
        contract_index=None,
        fingerprint="0" * 16,
    )


def test_a_keyword_reached_through_a_ref_is_not_said_as_a_property_one_side_declares() -> None:
    """The contract reaches the property's schema through a ``$ref`` (``#/$defs/Hash``), the
    copy lays the record out inline: the engine's pointers end at the property on one side and
    at the ``$ref``'s target on the other. The property is on both sides; what one side has
    alone is the keyword, and a property only the copy declares is named at its place."""
    from wiregate.diff import diff

    contract = {
        "$defs": {
            "Hash": {"type": "string", "pattern": "^[0-9a-f]{16}$", "description": "A hash."},
            "Prov": {
                "type": "object",
                "additionalProperties": False,
                "properties": {"h": {"$ref": "#/$defs/Hash"}},
            },
            "R": {"type": "object", "properties": {"prov": {"$ref": "#/$defs/Prov"}}},
        }
    }
    inline = {"h": {"type": "string"}, "extra": {"type": "string"}}
    copy = {
        "type": "object",
        "properties": {
            "prov": {"type": "object", "additionalProperties": False, "properties": inline}
        },
    }
    said = {}
    for change in diff(contract, copy, mode="forward", old_at="#/$defs/R").changes:
        finding = _acme_finding(change, contract, copy, "#/$defs/R")
        said[(change.id, change.old_pointer, change.new_pointer)] = finding.message
    h, extra = "#/properties/prov/properties/h", "#/properties/prov/properties/extra"
    assert said == {
        ("pattern-removed", "#/$defs/Hash/pattern", h): (
            'acme has no pattern at `R.prov.h`; the contract has pattern "^[0-9a-f]{16}$" '
            "(pattern-removed): acme may write records the contract rejects"
        ),
        ("description-changed", "#/$defs/Hash/description", h): (
            'acme has no description at `R.prov.h`; the contract has description "A hash." '
            "(description-changed); not breaking: every record acme writes meets the contract"
        ),
        ("property-added-to-closed-model", "#/$defs/Prov", extra): (
            "acme declares `R.prov.extra`; the contract does not, and allows no undeclared "
            "key (property-added-to-closed-model): acme may write records the contract rejects"
        ),
    }


def test_a_required_edit_of_a_shared_definition_names_each_property_once() -> None:
    """The contract's two record types share one definition whose ``required`` the copy drops
    (written out inline in each record type): the four findings are one entry, naming the two
    properties once each, not once per record type."""
    from wiregate.diff import diff
    from wiregate.drift.findings import group_by_root

    event = {
        "type": "object",
        "required": ["data", "event"],
        "properties": {"data": {}, "event": {}},
    }
    inline = {"type": "object", "properties": {"data": {}, "event": {}}}

    def record(kind: str, items: Any) -> dict[str, Any]:
        properties = {"k": {"const": kind}, "s": {"type": "array", "items": items}}
        return {"type": "object", "required": ["k"], "properties": properties}

    members = [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}]
    shared = {"$ref": "#/$defs/Ev"}
    contract = {
        "$defs": {"Ev": event, "A": record("a", shared), "B": record("b", shared)},
        "oneOf": members,
    }
    copy = {"$defs": {"A": record("a", inline), "B": record("b", inline)}, "oneOf": members}
    findings = [
        _acme_finding(change, contract, copy, "#")
        for change in diff(contract, copy, mode="forward").changes
        if change.id == "required-removed"
    ]
    (entry,) = group_by_root(findings)
    assert (len(entry.findings), entry.record_types) == (4, ("A", "B"))
    assert entry.message == (
        "acme may omit data, event in `A.s[]`; the contract requires them (required-removed): "
        "acme may write records the contract rejects"
    )
