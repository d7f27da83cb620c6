"""The load stage's typed fast path (a branch line msgspec accepts as the bundled contract's
type is taken without the JSON Schema validator) writes what the validating path writes, to
the byte: naming the same contract explicitly (``--contract``) turns the fast path off."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import Any

import msgspec
import orjson
import pytest

from contracts import BUNDLED_DIR
from datafactory.records import (
    BUILD_STATUS_ALIAS,
    CAMELCASE_BUILD,
    CAMELCASE_EVENTS,
    decode_branch,
    decode_branch_forms,
    decode_produced_branch,
)
from tests.datafactory.helpers import Run, RunCli, branch, write_jsonl

OUTPUTS = ("dpo.jsonl", "ppo.jsonl", "rejects.jsonl")


def _same_outputs(fast: Run, checked: Run) -> None:
    assert fast.exit_code == checked.exit_code == 0, fast.stderr + checked.stderr
    assert (fast.out / "ppo.jsonl").read_bytes().count(b"\n") > 5  # something to compare
    for name in OUTPUTS:
        assert (fast.out / name).read_bytes() == (checked.out / name).read_bytes(), name
    # The manifests differ only in where the outputs are.
    manifest = (checked.out / "manifest.json").read_text().replace(str(checked.out), "OUT")
    assert (fast.out / "manifest.json").read_text().replace(str(fast.out), "OUT") == manifest


def _records(seed: int) -> list[Any]:
    """Branches the fast path takes (calls and results in order or not, explicit nulls, odd
    outputs, clamped totals) and ones it defers (repairs, unknown keys, violations)."""
    rng = random.Random(seed)
    records: list[Any] = []
    for r in range(30):
        for b in range(rng.randint(1, 4)):
            events: list[dict[str, Any]] = []
            for c in range(rng.randint(0, 3)):
                call: dict[str, Any] = {"name": rng.choice(["run", ""])}
                if rng.random() < 0.8:
                    call["call_id"] = rng.choice([f"c{c}", ""])
                if rng.random() < 0.7:
                    call["args"] = {"n": c, "x": [1.5, None, "é"]}
                result: dict[str, Any] = rng.choice(
                    [
                        {"output": "ok"},
                        {"output": {"a": [1, 2e300]}},
                        {"error": "boom"},
                        {},
                        {"output": None, "error": None},
                        {"output": 0, "error": ""},
                        {"output": ""},
                    ]
                )
                if rng.random() < 0.5:
                    result["call_id"] = rng.choice([f"c{c}", "other"])
                events += [
                    {"event": "tool_call", "data": call},
                    {"event": "tool_result", "data": result},
                ]
            if rng.random() < 0.2:
                rng.shuffle(events)
            record = branch(
                f"roll-{r}",
                b,
                task=f"Task {r}: implement feature {rng.randint(0, 10**6)} in the module",
                final_answer=rng.choice(["", f"answer {r}.{b}", "same", "x" * 40 + str(b)]),
                objective_score=rng.randint(0, 1),
                total_score=rng.choice([rng.random(), 2, -0.5, 1.3]),
                rank=rng.randint(1, 4),
                tool_call_sequence=events,
            )
            roll = rng.random()
            if roll < 0.1:
                record["tool_call_sequence"] = [{"tool_name": "run", "args": {}, "result": 1}]
            elif roll < 0.2:
                del record["rank"]
            elif roll < 0.25:
                record["objective_status"] = "unknown"
            elif roll < 0.3:
                record["seed"] = None
            elif roll < 0.35:
                record["extra"] = 1  # an unknown key: the fast path defers
            elif roll < 0.4:
                record["branch_index"] = float(b)  # 1.0 for an integer: deferred, accepted
            elif roll < 0.6:  # the producer's camelCase events: read as produced (layer3)
                _camel_case(record, every=roll < 0.55)
            if rng.random() < 0.4:  # the producer's build results, and mixes that defer
                record["build_result"] = rng.choice(PRODUCER_BUILDS)
            records.append(record)
    records += [records[2], {"rollout_id": "r-x", "task": 5}, [1, 2]]
    return records


#: Build results as producers write them: repaired by their keys, statuses, both; with no
#: status (repaired from the exit code) or keys of both forms (the validating path's).
PRODUCER_BUILDS = [
    {"status": "success", "exitCode": 0, "ranAtMs": 1750000000000},
    {"status": "failed", "exitCode": 1, "stderr": "boom"},
    {"status": "pass", "ranAtMs": 0},
    {"status": "success"},
    {"status": "failed", "exit_code": 2, "stdout": ""},
    {"status": "skip", "exitCode": None},
    {"exitCode": 0},
    {"status": "failed", "exitCode": 1, "exit_code": 1},
]


def _camel_case(record: dict[str, Any], every: bool) -> None:
    """The producer's keys in each event's data (``every``), or in the first one only (a mix,
    which the fast path leaves to the validating path)."""
    for number, event in enumerate(record["tool_call_sequence"]):
        if every or number == 0:
            keys = {"name": "toolName", "call_id": "callId"}
            event["data"] = {keys.get(k, k): v for k, v in event["data"].items()}


def test_branch_forms_read_each_line_whichever_form_is_tried_first() -> None:
    """``decode_branch_forms`` (the load stage's one call) reads a line the same way (the
    same record, form and repairs) whatever form the line before had, takes a canonical line
    as ``decode_branch`` does and one with only the producer's tool events as
    ``decode_produced_branch`` does (a branch without tool events is canonical)."""
    lines = [orjson.dumps(record) for seed in (4, 5) for record in _records(seed)]
    assert any(b'"tool_call_sequence":[]' in line for line in lines)
    read = [decode_branch_forms(line) for line in lines]
    forms = sorted({form for _, form, _ in read})
    assert len(forms) == 6  # the contract's, and the producer's five
    for first in forms:  # a wider form may read a line: the same values, the same repairs
        assert [_values(decode_branch_forms(line, first)) for line in lines] == [
            _values(one) for one in read
        ]
    canonical = [decode_branch(line) for line in lines]
    assert [r for r, form, _ in read if r is not None and not form] == [
        c for c in canonical if c is not None
    ]
    events_only = [(r, line) for (r, _, repairs), line in zip(read, lines, strict=True)
                   if repairs == (CAMELCASE_EVENTS,)]  # fmt: skip
    assert [decode_produced_branch(line) for _, line in events_only] == [r for r, _ in events_only]
    assert Counter(repair for _, _, repairs in read for repair in repairs) == {
        CAMELCASE_EVENTS: 15, CAMELCASE_BUILD: 16, BUILD_STATUS_ALIAS: 23,
    }  # fmt: skip
    assert decode_branch_forms(b'{"a": ' + b"1" * 19 + b"}") == (None, 0, ())


def _values(read: tuple[Any, int, tuple[str, ...]]) -> tuple[Any, tuple[str, ...]]:
    return msgspec.to_builtins(read[0]), read[2]


def _ambiguous_lines() -> list[bytes]:
    """Branches both decoders read, with a producer's key elsewhere than in an event's data:
    canonical (the validating path repairs nothing)."""
    no_events = branch("r-a", 0, tool_call_sequence=[], final_answer="toolName")
    in_args = branch(
        "r-b", 0, tool_call_sequence=[{"event": "tool_call", "data": {"args": {"callId": 1}}}]
    )
    call = {"toolName": "ls", "args": {}, "callId": "c1"}
    produced = branch(
        "r-c",
        0,
        tool_call_sequence=[
            {"event": "tool_call", "data": call},
            {"event": "tool_result", "data": {"output": "ok", "callId": "c1"}},
        ],
    )
    return [orjson.dumps(record) for record in (produced, no_events, in_args)]


def test_a_producer_key_outside_the_event_data_is_no_repair_whatever_came_before() -> None:
    produced, *ambiguous = _ambiguous_lines()
    _, form, repairs = decode_branch_forms(produced)
    assert repairs == (CAMELCASE_EVENTS,) and decode_branch_forms(produced, form)[1:] == (
        form,
        repairs,
    )
    for line in ambiguous:
        read = decode_branch_forms(line, first=form)
        assert read == decode_branch_forms(line) == (decode_branch(line), 0, ())


@pytest.mark.parametrize("order", [(0, 1, 2), (1, 2, 0), (0, 2, 1)])
@pytest.mark.parametrize("workers", ["1", "2"])
def test_the_camelcase_repair_count_is_the_validating_paths(
    tmp_path: Path, run_cli: RunCli, order: tuple[int, ...], workers: str
) -> None:
    """One file per line, so with two workers a line of the producer's form and one that
    only looks like it may meet in one worker, in either order."""
    lines = _ambiguous_lines()
    files = []
    for number in order:
        files.append(tmp_path / f"in{number}.jsonl")
        files[-1].write_bytes(lines[number] + b"\n")
    fast = run_cli(*files, args=("--workers", workers))
    checked = run_cli(*files, args=("--workers", workers, "--contract", str(BUNDLED_DIR)))
    assert fast.manifest()["repaired"] == checked.manifest()["repaired"]
    assert fast.manifest()["repaired"] == {"tool_call:camelcase_data": 1}


@pytest.mark.parametrize("workers", ["1", "2"])
def test_call_ids_alone_in_the_producers_form_are_repaired_on_either_path(
    tmp_path: Path, run_cli: RunCli, workers: str
) -> None:
    """Results that carry only ``callId`` (the calls their ``name``) are the producer's form:
    both paths rename it and count the repair, and pair each result with its call by it."""
    events = [
        {"event": "tool_call", "data": {"name": "ls", "call_id": "a"}},
        {"event": "tool_call", "data": {"name": "cat", "call_id": "b"}},
        {"event": "tool_result", "data": {"output": "second", "callId": "b"}},
        {"event": "tool_result", "data": {"output": "first", "callId": "a"}},
    ]
    data = write_jsonl(
        tmp_path / "in.jsonl",
        [branch("r", 0, tool_call_sequence=events), branch("r", 1, objective_score=0)],
    )
    fast = run_cli(data, args=("--workers", workers))
    checked = run_cli(data, args=("--workers", workers, "--contract", str(BUNDLED_DIR)))
    assert (fast.dpo(), fast.ppo()) == (checked.dpo(), checked.ppo())
    assert fast.manifest()["repaired"] == checked.manifest()["repaired"]
    assert fast.manifest()["repaired"] == {"tool_call:camelcase_data": 1}
    tools = [m for m in fast.ppo()[0]["messages"] if m["role"] == "tool"]
    assert [(m["tool_call_id"], m["content"]) for m in tools] == [("a", "first"), ("b", "second")]


def test_a_branch_keeps_its_dpo_pair_with_a_deep_model_id_or_a_provenance_not_an_object(
    tmp_path: Path, run_cli: RunCli
) -> None:
    """Neither is read (``pairs.provenance`` takes a string ``model_id`` and an object
    ``provenance``), so neither keeps the branch from the outputs."""
    deep = "[" * 300 + "]" * 300
    first = orjson.dumps(branch("r-1", 0)).replace(b"}", b',"model_id":' + deep.encode() + b"}")
    second = orjson.dumps(
        branch("r-1", 1, objective_score=0, final_answer="no", provenance=[1], total_score=0.1)
    )
    data = tmp_path / "in.jsonl"
    data.write_bytes(first[: first.rindex(b"}") + 1] + b"\n" + second + b"\n")
    result = run_cli(data)
    assert result.exit_code == 0, result.stderr
    assert (len(result.dpo()), len(result.ppo()), result.rejects()) == (1, 2, [])
    provenance = result.dpo()[0]["provenance"]
    assert "model_id" not in provenance
    assert "upstream_provenance" not in provenance["rejected_facts"]


#: The trl target, its dataset card left out (it names the output directory).
TRL = ("--target", "trl", "--no-card")


@pytest.mark.parametrize("target", [(), TRL, (*TRL, "--tool-arguments", "object")])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_fast_path_writes_what_the_validating_path_writes(
    tmp_path: Path, run_cli: RunCli, seed: int, target: tuple[str, ...]
) -> None:
    data = write_jsonl(tmp_path / "in.jsonl", _records(seed))
    lines = data.read_bytes().splitlines()
    taken = sum(decode_branch(line) is not None for line in lines)
    assert 20 < taken < len(lines) - 10  # both paths are taken
    assert sum(decode_produced_branch(line) is not None for line in lines) >= 3
    fast = run_cli(data, args=target)
    checked = run_cli(data, args=(*target, "--contract", str(BUNDLED_DIR)))
    _same_outputs(fast, checked)
    manifest = orjson.loads((fast.out / "manifest.json").read_bytes())
    assert manifest["lines"]["accepted"] > 40


@pytest.mark.parametrize("target", [(), TRL])
def test_fast_path_on_the_corpus(
    corpus_dir: Path, run_cli: RunCli, target: tuple[str, ...]
) -> None:
    inputs = sorted((corpus_dir / "fixtures").rglob("*rollout*.jsonl"))
    assert inputs
    fast = run_cli(*inputs, args=target)
    checked = run_cli(*inputs, args=(*target, "--contract", str(BUNDLED_DIR)))
    _same_outputs(fast, checked)
