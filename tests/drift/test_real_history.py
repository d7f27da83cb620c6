"""The gate on the real histories of wasmagent-js (producer) and trace-pipeline (consumer),
replayed commit by commit from ../shared/corpus/schemas at their original paths."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import git
import pytest
from click.testing import CliRunner

from contracts import Contract
from wiregate.cli import main
from wiregate.drift import CopyResult, HistoryReport, Verdict, run_drift, run_history
from wiregate.drift.result import is_breaking

from .conftest import SCHEMA_COPIES, schema_copy_args

SUBJECT_692 = "fix: resolve schema compatibility issues with wasmagent-js v1.11.0"
SUBJECT_B17 = "fix: add tool_call_sequence to schema required array for upstream parity"
SUBJECT_194 = "fix: nightly parity check tolerates const-default fields (#13)"
SUBJECT_755 = "chore: rename repo telleroutlook/evomerge-framework \u2192 WasmAgent/trace-pipeline"
SUBJECT_867 = (
    "feat: JSON Schema export, technical report draft, recipe16 full-loop demo, schema CI check"
)

BOTH = ["wasmagent-js", "trace-pipeline"]


def _breaking(result: CopyResult) -> list[tuple[str, str, str, bool, bool]]:
    return [
        (c.id, c.old_pointer, c.new_pointer, c.backward, c.forward)
        for c in result.changes
        if is_breaking(c, result.failed)
    ]


def _by_copy(results: tuple[CopyResult, ...]) -> dict[tuple[str, str], CopyResult]:
    return {(r.repository, r.copy_id): r for r in results}


def test_the_real_2026_07_state_breaks_the_producer_forward_and_the_consumer_reads_it_all(
    contract: Contract, replayed: dict[str, Path]
) -> None:
    report = run_drift(contract, dict(replayed), repositories=BOTH, copies=SCHEMA_COPIES)
    assert [
        (r.repository, r.copy_id, r.role, r.verdict, r.failed, r.path) for r in report.results
    ] == [
        (
            "wasmagent-js",
            "rollout-wire",
            "producer",
            Verdict.BREAKING,
            ("forward",),
            "packages/core/src/ranking/schemas/rollout-wire.schema.json",
        ),
        (
            "wasmagent-js",
            "training-record",
            "producer",
            Verdict.BREAKING,
            ("forward",),
            "packages/core/src/ranking/schemas/training-record.schema.json",
        ),
        (
            "trace-pipeline",
            "rollout-wire",
            "consumer",
            Verdict.COMPATIBLE,
            (),
            "schemas/rollout-wire.schema.json",
        ),
        (
            "trace-pipeline",
            "dpo-training-record",
            "producer",
            Verdict.BREAKING,
            ("forward",),
            "schemas/dpo-training-record.schema.json",
        ),
        (
            "trace-pipeline",
            "ppo-training-record",
            "producer",
            Verdict.BREAKING,
            ("forward",),
            "schemas/ppo-training-record.schema.json",
        ),
    ]
    assert report.exit_code == 1
    copies = _by_copy(report.results)

    # The consumer reads branch records with its own Pydantic schema, which accepts every
    # record the contract allows. Its tool_call_sequence entries are typed
    # anyOf [ToolCallEntry, any object]: the second member takes the event envelope the
    # producer writes, so the union reads it (backward) though it also takes more (forward):
    # one items-widened finding.
    consumer = copies["trace-pipeline", "rollout-wire"]
    assert consumer.breaks == ()
    assert len(consumer.changes) == 46  # $schema is not compared: the draft is chosen from it
    assert _breaking(consumer) == []
    assert [
        (c.level, c.old_pointer, c.new_pointer, c.backward, c.forward)
        for c in consumer.changes
        if c.id in ("any-of-added", "items-widened")
    ] == [
        (
            "warning",
            "#/$defs/RolloutBranchRecord/properties/tool_call_sequence/items",
            "#/properties/tool_call_sequence/items",
            True,
            False,
        )
    ]
    # Its looser constraints are fine for reading (backward compatible), so only warnings.
    warnings = [c for c in consumer.changes if c.level == "warning"]
    assert (len(warnings), all(c.backward and not c.forward for c in warnings)) == (12, True)

    # The producer writes branch records with looser constraints than the contract states.
    producer = copies["wasmagent-js", "rollout-wire"]
    assert producer.breaks == ("the producer writes records the canonical contract rejects",)
    assert len(producer.changes) == 69
    assert sorted(Counter(c[0] for c in _breaking(producer)).items()) == [
        ("minimum-loosened", 1),
        ("minimum-removed", 2),
        ("property-names-removed", 1),
        ("property-removed-from-open-model", 19),
        ("required-removed", 10),
    ]
    record = "#/$defs/RolloutBranchRecord"
    assert (
        "minimum-loosened",
        f"{record}/properties/rank/minimum",
        f"{record}/properties/rank/minimum",
        True,
        False,
    ) in _breaking(producer)
    assert [c[2] for c in _breaking(producer) if c[0] == "required-removed"][:3] == [
        f"{record}/properties/build_result",
        f"{record}/required",
        f"{record}/required",
    ]
    # Each training-record copy drops the contract's four dependentRequired entries (v2 adds
    # chosen_facts / rejected_facts): one dependent-required-removed per trigger property (a
    # loosening: backward yes, forward no, so a break for a producer).
    assert [len(_breaking(copies[key])) for key in copies] == [33, 37, 0, 51, 48]
    provenance = "#/$defs/Provenance"
    assert [
        c
        for c in _breaking(copies["trace-pipeline", "dpo-training-record"])
        if c[0] == "dependent-required-removed"
    ] == [
        (
            "dependent-required-removed",
            f"{provenance}/dependentRequired/{key}",
            provenance,
            True,
            False,
        )
        for key in ("chosen_branch", "chosen_facts", "rejected_branch", "rejected_facts")
    ]


def test_ref_reads_an_older_state_without_touching_the_work_tree(
    contract: Contract, replayed: dict[str, Path]
) -> None:
    checkout = replayed["trace-pipeline"]
    repo = git.Repo(checkout)
    before = repo.head.commit.hexsha
    report = run_drift(contract, {"trace-pipeline": checkout}, ref="orig-755234b")
    consumer = _by_copy(report.results)["trace-pipeline", "rollout-wire"]
    assert consumer.commit == repo.commit("orig-755234b").hexsha
    assert (consumer.verdict, consumer.failed, len(_breaking(consumer))) == (
        Verdict.BREAKING,
        ("backward",),
        4,
    )
    assert repo.head.commit.hexsha == before and not repo.is_dirty()


def _history(
    contract: Contract, replayed: dict[str, Path], name: str, copy_id: str
) -> HistoryReport:
    (report,) = run_history(contract, name, {name: replayed[name]}, copy_id)
    return report


def _steps(report: HistoryReport) -> list[tuple[object, ...]]:
    return [
        (
            entry.subject,
            entry.status,
            entry.verdict,
            entry.failed,
            sum(1 for c in entry.changes if is_breaking(c, entry.failed)),
            entry.previous_failed,
            [(c.id, c.new_pointer) for c in entry.since_previous if c.level != "info"],
        )
        for entry in report.entries
    ]


def test_consumer_history_and_the_commit_that_required_tool_call_sequence(
    contract: Contract, replayed: dict[str, Path]
) -> None:
    report = _history(contract, replayed, "trace-pipeline", "rollout-wire")
    tool_calls = "#/properties/tool_call_sequence/items"
    # Since 692ee62 every revision reads all records the contract allows (compatible drift);
    # the two before it typed the entries as ToolCallEntry alone, which requires tool_name.
    assert _steps(report) == [
        (SUBJECT_194, "modified", Verdict.COMPATIBLE, (), 0, (), []),
        (
            SUBJECT_B17,
            "modified",
            Verdict.COMPATIBLE,
            (),
            0,
            ("backward",),
            [("required-added", "#/required")],
        ),
        (
            SUBJECT_692,
            "modified",
            Verdict.COMPATIBLE,
            (),
            0,
            ("backward",),
            [
                ("property-added-to-open-model", "#/properties/seed"),
                ("items-widened", tool_calls),
            ],
        ),
        (SUBJECT_755, "modified", Verdict.BREAKING, ("backward",), 4, (), []),
        (SUBJECT_867, "added", Verdict.BREAKING, ("backward",), 4, (), []),
    ]
    assert report.since is not None and report.since.subject == SUBJECT_692

    # 692ee62 widened the entries to anyOf [ToolCallEntry, any object] (reads every old entry)
    # but typed `seed`, which old records could hold with any value: that is what broke.
    (widened,) = [entry for entry in report.entries if entry.subject == SUBJECT_692]
    assert [
        (c.id, c.new_pointer, c.backward, c.forward)
        for c in widened.since_previous
        if c.id in ("property-added-to-open-model", "items-widened")
    ] == [
        ("property-added-to-open-model", "#/properties/seed", False, True),
        ("items-widened", tool_calls, True, False),
    ]

    # The one step that made tool_call_sequence required: old records without it are rejected.
    (step,) = [
        entry
        for entry in report.entries
        for change in entry.since_previous
        if change.id == "required-added" and "'tool_call_sequence'" in change.message
    ]
    assert step.subject == SUBJECT_B17
    assert step.commit == git.Repo(replayed["trace-pipeline"]).commit("orig-b1750b5").hexsha
    assert step.previous == git.Repo(replayed["trace-pipeline"]).commit("orig-692ee62").hexsha
    (change,) = step.since_previous
    assert (change.old_pointer, change.backward, change.forward) == ("#/required", False, True)
    assert step.previous_failed == ("backward",)


def test_producer_history(contract: Contract, replayed: dict[str, Path]) -> None:
    report = _history(contract, replayed, "wasmagent-js", "rollout-wire")
    assert [
        (
            e.subject.split(":")[0],
            e.verdict,
            e.previous_failed,
            [c.id for c in e.since_previous if c.level != "info"],
        )
        for e in report.entries
    ] == [
        # RolloutTreeRecord joins the root oneOf: the producer writes a record type more.
        ("feat", Verdict.BREAKING, ("forward",), ["one-of-member-added"]),
        ("style", Verdict.BREAKING, (), []),
        # The root oneOf narrows what the root accepts: forward compatible.
        ("chore(p0)", Verdict.BREAKING, (), ["one-of-added"]),
        # objective_status added to an open model: forward compatible.
        ("feat", Verdict.BREAKING, (), ["property-added-to-open-model"]),
        ("chore", Verdict.BREAKING, (), []),  # biome reformatting only
        ("fix+feat", Verdict.BREAKING, (), []),
    ]
    assert [sum(1 for c in e.changes if is_breaking(c, e.failed)) for e in report.entries] == [
        33,
        31,
        31,
        1,
        1,
        1,
    ]


def test_an_unparsable_revision_is_reported_and_skipped(
    contract: Contract, replayed: dict[str, Path]
) -> None:
    report = _history(contract, replayed, "wasmagent-js", "training-record")
    entries = report.entries
    assert [(e.subject.split(":")[0], e.verdict) for e in entries] == [
        ("fix", Verdict.BREAKING),
        ("feat", Verdict.ERROR),
        ("chore", Verdict.BREAKING),
        ("fix+feat", Verdict.BREAKING),
    ]
    broken = entries[1]
    assert broken.message is not None
    assert broken.message.endswith(
        "packages/core/src/ranking/schemas/training-record.schema.json: "
        "not valid JSON: Extra data: line 65 column 5 (char 2828)"
    )
    # The repair is compared with the last readable revision, not with the broken one.
    assert entries[0].previous == entries[2].commit
    assert [(c.id, c.new_pointer) for c in entries[0].since_previous] == [
        ("required-removed", "#/$defs/Provenance/required"),
        ("property-added-to-open-model", "#/$defs/DpoTrainingRecord/properties/prompt_messages"),
        ("property-added-to-open-model", "#/$defs/Provenance/properties/task_hash"),
    ]
    # The run of breaking revisions started at 842dfa5 ("fix+feat"): the unreadable revision
    # in between is listed and skipped, it does not restart the run at the repair.
    assert report.since is not None and report.since.commit == entries[3].commit
    assert report.unreadable_in_run == (entries[1],)


def test_a_copy_moved_then_dropped_for_the_published_package(
    contract: Contract, replayed_copy: Callable[[str], git.Repo]
) -> None:
    repo = replayed_copy("trace-pipeline")
    checkout = Path(repo.working_dir)
    (checkout / "src" / "datafactory").mkdir(parents=True)
    repo.index.move(
        ["schemas/rollout-wire.schema.json", "src/datafactory/rollout-wire.schema.json"]
    )
    repo.index.commit("move the schema beside the exporter", author_date="2026-07-20T10:00:00")
    repo.index.remove(["src/datafactory/rollout-wire.schema.json"], working_tree=True)
    repo.index.commit("consume wasmagent-protocol instead", author_date="2026-07-21T10:00:00")

    (report,) = run_history(
        contract, "trace-pipeline", {"trace-pipeline": checkout}, "rollout-wire"
    )
    assert [(e.subject, e.status, e.path, e.old_path, e.verdict) for e in report.entries[:3]] == [
        (
            "consume wasmagent-protocol instead",
            "deleted",
            "src/datafactory/rollout-wire.schema.json",
            None,
            Verdict.DELETED,
        ),
        (
            "move the schema beside the exporter",
            "renamed",
            "src/datafactory/rollout-wire.schema.json",
            "schemas/rollout-wire.schema.json",
            Verdict.COMPATIBLE,
        ),
        (SUBJECT_194, "modified", "schemas/rollout-wire.schema.json", None, Verdict.COMPATIBLE),
    ]
    assert len(report.entries) == 7
    assert report.entries[1].since_previous == ()  # a pure move changes nothing
    assert report.since is report.entries[0]

    now = _by_copy(run_drift(contract, {"trace-pipeline": checkout}).results)
    assert now["trace-pipeline", "rollout-wire"].verdict is Verdict.NOT_FOUND
    before = _by_copy(run_drift(contract, {"trace-pipeline": checkout}, ref="HEAD~1").results)
    moved = before["trace-pipeline", "rollout-wire"]
    assert (moved.verdict, moved.failed, moved.path) == (
        Verdict.COMPATIBLE,
        (),
        "src/datafactory/rollout-wire.schema.json",
    )


def test_cli_formats_on_the_real_state(
    repo_root: Path, replayed: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo_root)

    def drift(*args: str) -> tuple[int, str]:
        result = CliRunner().invoke(
            main,
            [
                "--root",
                str(repo_root),
                "drift",
                "--repo",
                f"trace-pipeline={replayed['trace-pipeline']}",
                *schema_copy_args("trace-pipeline"),
                *args,
            ],
        )
        return result.exit_code, result.stdout

    code, text = drift()
    assert code == 1
    lines = text.splitlines()
    assert lines[0] == (
        "trace-pipeline rollout-wire (consumer, must be backward compatible) "
        "schemas/rollout-wire.schema.json: compatible drift (34 info-level)"
    )
    # One line per root change: the consumer's 12 warnings are 10 root changes (the three
    # properties no longer required are one edit of `required`); the 9th is the
    # tool_call_sequence union. Then the copy's summary line.
    items = "/properties/tool_call_sequence/items"
    widened = (
        "trace-pipeline's items at `RolloutBranchRecord.tool_call_sequence[]` accept every "
        "item the contract's do, and more (items-widened); not breaking: "
        "trace-pipeline reads every record the contract allows"
    )
    assert lines[9] == (
        f"    warning: {widened} [1 change in RolloutBranchRecord; copy 110:7, contract 88:50]"
    )
    assert lines[10] == (
        "    warning: trace-pipeline reads records without objective_score, rank, total_score in "
        "`RolloutBranchRecord`; the contract requires them (required-removed); not breaking: "
        "trace-pipeline reads every record the contract allows "
        "[3 changes in RolloutBranchRecord; copy 181:3, contract 67:7]"
    )
    assert lines[11] == (
        "    trace-pipeline rollout-wire: 10 root changes (0 breaking) from 12 changes"
    )
    assert lines[12] == (
        "    reproduce: wiregate diff "
        "'contracts/rollout-wire.schema.json#/$defs/RolloutBranchRecord' "
        f"{replayed['trace-pipeline']}/schemas/rollout-wire.schema.json "
        "--mode backward --policy strict"
    )
    assert lines[13].startswith("trace-pipeline dpo-training-record (producer, ")
    assert lines[-1] == "3 copies: 1 compatible drift, 2 breaking drift (strict)"
    assert len(lines) == 100

    code, github = drift("--format", "github")
    annotations = github.splitlines()
    assert code == 1
    assert annotations[8] == (
        "::warning file=schemas/rollout-wire.schema.json,line=110,col=7,"
        "title=wiregate drift trace-pipeline rollout-wire%3A items-widened::"
        f"{widened} (1 change in RolloutBranchRecord)"
    )
    # One annotation per root change, each on its line of the copy: breaking ones are
    # errors, the others warnings (consumer: 0 + 10; the two training-record copies: 40 + 1
    # and 38 + 1).
    assert Counter(a.split(" ", 1)[0] for a in annotations) == {
        "::error": 40 + 38,
        "::warning": 10 + 1 + 1,
    }
    assert all(",line=" in a and ",col=" in a for a in annotations)

    code, markdown = drift("--format", "markdown")
    assert markdown.splitlines()[:5] == [
        "### wiregate drift",
        "",
        "| Repository | Copy | Role | Required | Path | Verdict |",
        "| --- | --- | --- | --- | --- | --- |",
        "| trace-pipeline | rollout-wire | consumer | backward "
        "| `schemas/rollout-wire.schema.json` | compatible drift |",
    ]

    code, as_json = drift("--format", "json")
    document = json.loads(as_json)
    assert (document["version"], document["ok"], document["exit_code"]) == (1, False, 1)
    assert document["summary"] == {
        "identical": 0,
        "equivalent": 0,
        "compatible-drift": 1,
        "breaking-drift": 2,
        "not-found": 0,
        "skipped": 0,
        "error": 0,
    }
    first = document["copies"][0]
    assert (first["verdict"], first["failed"], first["breaks"]) == ("compatible-drift", [], [])
    assert list(first) == [
        "repository",
        "checkout",
        "copy",
        "role",
        "required",
        "policy",
        "schema",
        "canonical_at",
        "kind",
        "declared",
        "copy_at",
        "verdict",
        "path",
        "tried",
        "commit",
        "failed",
        "breaks",
        "message",
        "error_location",
        "optional",
        "contract_file",
        "changes",
        "entries",
        "reproduce",
        "fails",
        "findings",
        "new_since_commit",
    ]
    assert (first["fails"], first["findings"], first["new_since_commit"]) == (
        False,
        {"new": 12, "accepted": 0, "expired": 0, "present_at_ref": 0},
        None,
    )
    fingerprint = first["changes"][8].pop("fingerprint")
    assert len(fingerprint) == 16 and set(fingerprint) <= set("0123456789abcdef")
    assert first["changes"][8] == {
        "id": "items-widened",
        "level": "warning",
        "old_pointer": f"#/$defs/RolloutBranchRecord{items}",
        "new_pointer": f"#{items}",
        "message": "items widened from ToolCallEvent to anyOf [ToolCallEntry, any object], "
        "which accepts every value the old one did",
        "backward": True,
        "forward": False,
        "tolerated_by": None,
        "root": {"old_pointer": f"#/$defs/RolloutBranchRecord{items}", "new_pointer": f"#{items}"},
        "witness": None,
        "breaking": False,
        "drift_message": widened,
        "record_type": "RolloutBranchRecord",
        "copy_location": {"file": "schemas/rollout-wire.schema.json", "line": 110, "column": 7},
        "contract_location": {
            "file": "contracts/rollout-wire.schema.json",
            "line": 88,
            "column": 50,
        },
        "accepted": None,
        "present_at_ref": None,
        "blocking": False,
    }
    assert len(first["entries"]) == 10


def test_each_line_says_what_the_copy_and_the_contract_each_have(
    repo_root: Path, replayed: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The two documents lay records out differently (a ``$defs`` entry in the contract, inline
    in a copy; a ``$ref`` in one, the schema itself in the other), and a line still names the
    property or keyword only one side has, with its value; the engine's own words stand where
    no such words exist, and an entry whose consequences differ is said of its root."""
    monkeypatch.chdir(repo_root)
    lines: list[str] = []
    for name in ("wasmagent-js", "trace-pipeline"):
        result = CliRunner().invoke(
            main,
            [
                "--root",
                str(repo_root),
                "drift",
                "--repo",
                f"{name}={replayed[name]}",
                *schema_copy_args(name),
            ],
        )
        assert result.exit_code == 1
        lines += [line.strip() for line in result.stdout.splitlines()]
    expected = [
        (
            "error: wasmagent-js does not declare `DpoRecord.loss_weight_annotations`, so "
            "any value may be there; the contract declares it "
            "(property-removed-from-open-model): wasmagent-js may write records the "
            "contract rejects [1 change in DpoRecord; copy 134:5, contract 208:9]"
        ),
        (
            "error: wasmagent-js has no minimum at "
            "`RolloutTreeRecord.branches[].temperature`; the contract has minimum 0 "
            "(minimum-removed): wasmagent-js may write records the contract rejects [1 "
            "change in RolloutTreeRecord; copy 63:15, contract 113:44]"
        ),
        (
            "error: wasmagent-js's copy differs from the contract at "
            "`DpoRecord.tool_call_sequence[]` (property-removed-from-open-model): "
            "wasmagent-js may write records the contract rejects [15 changes in DpoRecord, "
            "PpoRecord, RolloutBranchRecord; copy 143:50, contract 47:9]"
        ),
        (
            "error: wasmagent-js declares `Message.final_answer`; the contract does not, "
            "and allows no undeclared key (property-added-to-closed-model): wasmagent-js "
            "may write records the contract rejects [1 change in Message; copy 17:9, "
            "contract 50:5]"
        ),
        (
            "error: wasmagent-js allows undeclared keys at `Message.*`; the contract does "
            "not (additional-properties-opened): wasmagent-js may write records the "
            "contract rejects [1 change in Message; copy 8:5, contract 54:7]"
        ),
        (
            "error: wasmagent-js has no pattern at `Provenance.task_hash`; the contract has "
            'pattern "^[0-9a-f]{16}$" (pattern-removed): wasmagent-js may write records the '
            "contract rejects [1 change in Provenance; copy 27:9, contract 95:9]"
        ),
        (
            "warning: wasmagent-js's copy differs from the contract at `training-record`: "
            "oneOf member DpoTrainingRecord may now overlap another member: a value "
            "matching both is rejected (one-of-overlap-added); not breaking: every record "
            "wasmagent-js writes meets the contract [1 change in training-record; copy "
            "6:13, contract 7:5]"
        ),
        (
            "error: trace-pipeline allows null at `Provenance.task_hash`; the contract does "
            "not (nullable-added): trace-pipeline may write records the contract rejects [1 "
            "change in Provenance; copy 97:9, contract 95:9]"
        ),
        (
            "error: trace-pipeline's copy differs from the contract at "
            "`Message.tool_calls[]` (additional-properties-opened): trace-pipeline may "
            "write records the contract rejects [7 changes in Message; copy 22:15, contract "
            "43:7]"
        ),
    ]
    assert [line for line in expected if line not in lines] == []
    # Only where neither the pointers nor the rule say more: the oneOf members, and entries
    # whose consequences differ.
    assert sum("copy differs from the contract at" in line for line in lines) == 6
